"""The I/O of `profile import` and `init`: read every agent's files, write the imported profiles, move
plaintext keys into the keyring, and point the files that held them at the keyring instead (one
journal entry, so `agentcfg rollback` puts the plaintext back)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from agentcfg import edit, env, fields, fsutil, profiles
from agentcfg.agents import AGENTS
from agentcfg.agents.base import Binding
from agentcfg.errors import AgentcfgError
from agentcfg.importer import Candidate, candidates
from agentcfg.plan import FileChange


@dataclass
class Imported:
    candidates: list[Candidate]
    created: list[str] = field(default_factory=list)  # profile files written
    moved: list[str] = field(default_factory=list)  # profiles whose plaintext key went into the keyring
    notes: list[str] = field(default_factory=list)

    @property
    def holding_keys(self) -> set[str]:
        """Agents whose files still hold a plaintext key that was not moved into the keyring."""
        return {a for c in self.candidates if c.key and c.name not in self.moved for a in c.found_in if a in AGENTS}


def bindings(environ: env.Environ) -> tuple[dict[str, Binding], list[str]]:
    """What each configured agent points at now (agents whose files do not parse are named, not read)."""
    from agentcfg.switch import read_current

    found, notes = {}, []
    for agent in AGENTS.values():
        try:
            current = read_current(agent, environ)
            if any(text is not None for text in current.values()):
                found[agent.NAME] = agent.read(current)
        except AgentcfgError as exc:
            notes.append(f"{agent.NAME}: not imported, its file does not parse ({exc.message})")
    return found, notes


def _found_where(candidate: Candidate, environ: env.Environ) -> str:
    """The files (or "the environment") an endpoint was read from, for a note."""
    shown = []
    for where in candidate.found_in:
        agent = AGENTS.get(where)
        files = [env.display(f.path, environ) for f in agent.files(environ) if f.path.exists()] if agent else []
        shown.append(f"{where} ({', '.join(files)})" if files else where)
    return ", ".join(shown)


def _safe(found: list[Candidate], environ: env.Environ, notes: list[str]) -> list[Candidate]:
    """The endpoints that can become profiles: one whose URL holds credentials or whose model or URL
    holds template syntax an agent expands is skipped with a note naming its files (fields.check)."""
    kept = []
    for candidate in found:
        try:
            fields.check(candidate.profile().fields(), candidate.name, name=candidate.name)
        except AgentcfgError as problem:
            notes.append(
                f"not imported: the endpoint in {_found_where(candidate, environ)}: {problem.message}"
                " (fix or remove it there; agentcfg did not change the file)"
            )
            continue
        kept.append(candidate)
    return kept


def import_profiles(environ: env.Environ, *, move_keys: Callable[[Candidate], bool]) -> Imported:
    """Write a profile for every new endpoint; move each plaintext key the user agrees to move."""
    existing = profiles.load_all(environ)
    found, notes = bindings(environ)
    result = Imported(_safe(candidates(found, environ, existing), environ, notes), notes=notes)
    directory = profiles.profiles_dir(environ)
    for candidate in result.candidates:
        if candidate.known_as:
            continue
        fsutil.private_dir(directory)
        path = directory / f"{candidate.name}.toml"
        fsutil.atomic_write(path, profiles.to_toml(candidate.profile()).encode("utf-8"), 0o644)
        result.created.append(candidate.name)
    current = profiles.load_all(environ)
    for candidate in result.candidates:
        if candidate.key and move_keys(candidate):
            _move_key(current[candidate.name], candidate, environ, result)
    return result


def _move_key(profile: profiles.Profile, candidate: Candidate, environ: env.Environ, result: Imported) -> None:
    from agentcfg import keystore
    from agentcfg.apply import Journal
    from agentcfg.switch import key_source, plan_switch

    if not profile.key_env:
        result.notes.append(f"{profile.name}: a key was found, but the profile reads none; it was left in place")
        return
    if reason := keystore.check_value(str(candidate.key)):  # an agent file is someone else's input too
        result.notes.append(
            f"{profile.name}: the key in {', '.join(candidate.found_in)} was not moved into the keyring: {reason}"
        )
        return
    store = keystore.KeyStore(environ, profile)
    try:
        stored = store.get(profile.name)
        if stored is not None and stored != candidate.key:
            result.notes.append(
                f"{profile.name}: the keyring already holds a different key; the one in "
                f"{', '.join(candidate.found_in)} was left where it is"
            )
            return
        store.store(profile, str(candidate.key))  # bound to the hosts the agent used it for
    except keystore.KeyringProblem as problem:  # never a silent downgrade: the key stays where it was
        result.notes.append(f"{profile.name}: the key stays in its file: {problem.message}")
        return
    agents = [AGENTS[name] for name in candidate.found_in if name in AGENTS]
    keys, _ = key_source(profile, agents, environ)
    journal = Journal(environ)
    with journal.locked():
        plan = plan_switch(profile, agents, environ, keys)
        plan.changes = [_forget_key(change, str(candidate.key), profile.key_env, environ) for change in plan.changes]
        journal.commit(plan.changes, {"kind": "switch", "profile": profile.name, "label": f"move key {profile.name}"})
    result.moved.append(profile.name)
    result.notes += [note for note in plan.notes if "plaintext" in note]  # what happened to the old copies


def _forget_key(change: FileChange, key: str, key_env: str, environ: env.Environ) -> FileChange:
    """The user's own provider entries that held the key now name its variable (Codex, opencode)."""
    agent = AGENTS[change.agent]
    if not hasattr(agent, "key_references") or change.after is None:
        return change
    after = change.after
    for file_edit in agent.key_references({change.file: after}, key, key_env):
        after = edit.apply(change.file.format, after, file_edit.assignments, path=env.display(change.path, environ))
    return replace(change, after=after)
