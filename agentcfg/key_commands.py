"""The use cases behind `key list` and `exec`, as data: which profiles have a key where, and how one process is
given a profile (its variables, an agent's arguments, the files that hold its key for that run). The CLI reads
the key, renders the table and replaces itself with the command."""

from __future__ import annotations

from collections.abc import Sequence

from agentcfg import env, profiles, redact
from agentcfg.lazyclass import dataclass
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
    from agentcfg import keystore  # lazy: exec's start-up (only `key list` reads the keyring's table)

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
    from agentcfg import keystore, trust  # lazy: exec's start-up (only `key list` reviews the projects)

    return [
        f"{found.key_env} is set in this shell but not read for {found.name}: it is the project's choice of "
        f"variable, and you have not approved it; if it holds {found.name}'s key, approve it with "
        f"`{trust.approve_command(found)}`"
        for found in known
        if found.key_env and environ.get(found.key_env) and not keystore.reads_environment(found, environ)
    ]
