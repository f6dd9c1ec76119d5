"""The use cases behind `key list` and `exec`, as data: which profiles have a key where, and how one process is
given a profile (its variables, an agent's arguments, the files that hold its key for that run). The CLI reads
the key, renders the table and replaces itself with the command."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentcfg import env, fields, fixes, keystore, launch, profiles, redact, trust
from agentcfg.errors import AgentcfgError
from agentcfg.profile_model import Profile


@dataclass(frozen=True)
class KeyTable:
    """`key list`: the keyring's label (None: unavailable, and why), one row per profile, the notes after it."""

    label: str | None
    backend_class: str | None
    unavailable: str | None
    rows: list[dict[str, object]]
    first_keyed: str | None  # a profile with a key_env: the way out of a missing keyring names it
    notes: list[str]

    def as_json(self) -> dict[str, object]:
        return {
            "backend": self.label,
            "backend_class": self.backend_class,
            "available": self.label is not None,
            "reason": self.unavailable,
            "profiles": self.rows,
        }


def key_table(environ: env.Environ) -> KeyTable:
    """Every profile: its variable, whether the keyring holds its key (a masked tail), whether it is exported and
    the hosts its key is bound to. Without a usable keyring the profiles are still listed."""
    known = sorted(profiles.load_all(environ).items())
    store = keystore.KeyStore(environ)
    try:
        label: str | None = store.label
        values = {name: store.get(name) if found.key_env else None for name, found in known}
        origins = {name: store.origins(name) for name, value in values.items() if value}
        unavailable = None
    except keystore.KeyringProblem as problem:
        if problem.kind not in ("no-backend", "locked", "denied"):
            raise
        label, values, origins, unavailable = None, {}, {}, problem.message
    rows: list[dict[str, object]] = []
    for name, found in known:
        value = values.get(name)
        rows.append(
            {
                "profile": name,
                "key_env": found.key_env,
                "stored": None if unavailable or not found.key_env else bool(value),
                "tail": redact.tail(value) if value else None,
                "in_environment": keystore.exported(found, environ) is not None,
                "bound_to": origins.get(name),  # None also for a key stored before binding
            }
        )
    backend_class = keystore.backend_name(store.backend) if label else None
    keyed = next((name for name, found in known if found.key_env), None)
    return KeyTable(label, backend_class, unavailable, rows, keyed, unapproved_notes([f for _, f in known], environ))


def unapproved_notes(known: Sequence[Profile], environ: env.Environ) -> list[str]:
    """A project profile's variable that is set but not read (you have not approved it), and how to approve it."""
    return [
        f"{found.key_env} is set in this shell but not read for {found.name}: it is the project's choice of "
        f"variable, and you have not approved it; if it holds {found.name}'s key, approve it with "
        f"`{trust.approve_command(found)}`"
        for found in known
        if found.key_env and environ.get(found.key_env) and not keystore.reads_environment(found, environ)
    ]


def refuse_runtime_variable(found: Profile) -> None:
    """Never put a key into a variable that steers programs (PATH, LD_PRELOAD, NODE_OPTIONS, ...). fields.py
    refuses such a key_env when a profile is written or loaded; this is the last check before one is set."""
    variable = str(found.key_env)
    if variable.upper() in fields.RUNTIME_VARIABLES or variable.upper().startswith(fields.RUNTIME_PREFIXES):
        raise AgentcfgError(
            f"profile {found.name!r} names {variable} as its key variable, a variable that steers programs (not "
            "one that holds a key): agentcfg sets no key into it",
            where=str(found.source),
            hint=f"Give the profile a variable of its own: "
            f"`{fixes.profile_set(found.name, key_env=found.name.upper().replace('-', '_') + '_API_KEY')}`.",
        )


@dataclass(frozen=True)
class Run:
    """What `exec` runs: the command line, the variables added to the environment, the files that hold the key
    for this run (removed once it ended) and the notes to print before."""

    argv: tuple[str, ...]
    variables: dict[str, str]
    key_files: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()


def exec_run(found: Profile, command: Sequence[str], variables: dict[str, str], environ: env.Environ) -> Run:
    """`exec PROFILE -- COMMAND` with the profile's `variables` (its key among them): an agent runs on the profile
    for this process alone (launch.prepare), any other command gets the variables only."""
    agent = launch.agent_for(command[0])
    if agent is None:
        return Run(tuple(command), variables)
    key = variables.get(found.key_env) if found.key_env else None
    prepared = launch.prepare(found, agent, tuple(command), environ, key)
    if key is not None and found.key_env and not prepared.launch.key_in_env:
        del variables[found.key_env]  # the agent gets it otherwise; its commands never see the keyring's
    variables.update(prepared.launch.env)
    return Run(tuple(prepared.argv), variables, prepared.key_files, tuple(prepared.launch.notes))
