"""The I/O of `profile import` and `init`: read every agent's files, write the imported profiles, move
plaintext keys into the keyring, and point the files that held them at the keyring instead (one
journal entry, so `agentcfg rollback` puts the plaintext back)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field, replace

from agentcfg import edit, env, fields, fixes, fsutil, keystore, profiles, switch
from agentcfg.agents import AGENTS
from agentcfg.agents.base import Binding, Texts
from agentcfg.current import read_current, runs_helper
from agentcfg.errors import AgentcfgError, Exit
from agentcfg.importer import Candidate, candidates, claude_model, name_for
from agentcfg.lazyclass import dataclass
from agentcfg.plan import FileChange
from agentcfg.profiles import Profile, is_placeholder
from agentcfg.switch import key_source, variable_note


@dataclass
class Imported:
    """What `init` imported: the candidates, the profiles written and the keys moved."""

    candidates: list[Candidate]
    created: list[str] = field(default_factory=list)  # profile files written
    moved: list[str] = field(default_factory=list)  # profiles whose plaintext key went into the keyring
    notes: list[str] = field(default_factory=list)

    @property
    def holding_keys(self) -> set[str]:
        """Agents whose files still hold a plaintext key that was not moved into the keyring."""
        return {a for c in self.candidates if c.key and c.name not in self.moved for a in c.found_in if a in AGENTS}


@dataclass
class Unmodelled:
    """An endpoint an agent uses whose files name no model (Claude Code with no ANTHROPIC_MODEL, no slot and
    no `model` setting): a profile needs one, so it is imported only once the user says which."""

    where: str  # the agent (or "environment")
    base_url: str
    name: str  # the profile it would become
    files: str  # where it was found, for messages
    key: bool  # a plaintext key sits beside it


@dataclass
class Survey:
    """What the machine has, read without writing anything: the endpoints (as candidate profiles, the ones
    already known marked so), the endpoints still missing a model, and what could not be read."""

    candidates: list[Candidate]
    unmodelled: list[Unmodelled] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def new(self) -> dict[str, Profile]:
        """The profiles an import would add, by name."""
        return {c.name: c.profile() for c in self.candidates if not c.known_as}

    @property
    def with_keys(self) -> list[Candidate]:
        """The candidates with a plaintext key beside them: the ones a move into the keyring is about."""
        return [c for c in self.candidates if c.key]


def bindings(environ: env.Environ) -> tuple[dict[str, Binding], list[str]]:
    """What each configured agent points at now (agents whose files do not parse are named, not read).
    Claude Code's model also comes from its model slots and `model` setting (importer.claude_model)."""
    found, notes = {}, []
    for agent in AGENTS.values():
        try:
            current = read_current(agent, environ)
            if any(text is not None for text in current.values()):
                binding = agent.read(current)
                if agent.TRAITS.model_in_slots and not binding.model:
                    binding = replace(binding, model=_slot_model(current))
                found[agent.TRAITS.name] = binding
        except AgentcfgError as exc:
            notes.append(f"{agent.TRAITS.name}: not imported, its file does not parse ({exc.message})")
    return found, notes


def _slot_model(current: Texts) -> str | None:
    """The model a settings file's env block and `model` setting name (Traits.model_in_slots)."""
    ((file, text),) = current.items()
    settings = edit.load("json", text or "", path=str(file.path))
    if not isinstance(settings, dict):
        return None
    variables = settings.get("env")
    return claude_model(variables if isinstance(variables, dict) else {}, settings.get("model"))


def _found_where(candidate: Candidate, environ: env.Environ) -> str:
    """The files (or "the environment") an endpoint was read from, for a note."""
    return found_where(candidate.found_in, environ)


def found_where(places: list[str], environ: env.Environ) -> str:
    shown = []
    for where in places:
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


def survey(environ: env.Environ, models: Mapping[str, str] | None = None) -> Survey:
    """Every endpoint the agents and the environment use, as candidate profiles; writes nothing.
    `models`: the model the user gave (by agent) for an endpoint whose files name none."""
    existing = profiles.load_all(environ)
    found, notes = bindings(environ)
    models = models or {}
    for where, model in models.items():
        if where in found and not found[where].model and model:
            found[where] = replace(found[where], model=model)
    result = Survey(_safe(candidates(found, environ, existing), environ, notes), notes=notes)
    taken = set(existing) | {c.name for c in result.candidates}
    for where, binding in found.items():
        slots = where in AGENTS and AGENTS[where].TRAITS.model_in_slots
        if binding.base_url and not binding.model and slots and fields.splittable(binding.base_url):
            name = name_for(binding.base_url.rstrip("/") + "/v1", taken)
            taken.add(name)
            key = bool(binding.key_value) and not is_placeholder(str(binding.key_value))
            result.unmodelled.append(Unmodelled(where, binding.base_url, name, found_where([where], environ), key))
    return result


def unmodelled_note(item: Unmodelled) -> str:
    """Why an endpoint without a model was not imported, and how to import it (no command can: only the user
    knows the model id)."""
    return (
        f"not imported: {item.files} points at {item.base_url} but names no model (no ANTHROPIC_MODEL, "
        "ANTHROPIC_DEFAULT_*_MODEL or `model` setting); run `agentcfg profile import` on a terminal to be asked "
        "for the model id, or set ANTHROPIC_MODEL in its env block and import again"
    )


def needs_key(profile: Profile, environ: env.Environ) -> bool:
    """A keyed profile whose key agentcfg has not stored on this machine and the shell does not export where the
    profile may read it (keystore.exported: a project profile's variable only once approved at `trust`)."""
    return (
        bool(profile.key_env)
        and profile.name not in keystore.remembered(environ)
        and not keystore.exported(profile, environ)
    )


def keyring_problem(environ: env.Environ, profile: Profile | None = None) -> AgentcfgError | None:
    """The one check of the keyring: None when a key can be stored, else why not (with the ways out)."""
    try:
        keystore.KeyStore(environ, profile).backend  # noqa: B018 - opening it is the check
    except keystore.KeyringProblem as problem:
        return problem
    return None


def unknown_profile(name: str, known: Mapping[str, object]) -> AgentcfgError:
    """`--profile NAME` that is neither a profile nor one the import would add: refused before anything."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1)
    return AgentcfgError(
        f"unknown profile {name!r}"
        + (f" (did you mean {close[0]!r}?)" if close else "")
        + f"; known, with the ones this import would add: {', '.join(sorted(known))}",
        hint="Nothing was written. Run it again with one of them, e.g. "
        + f"`{fixes.command('agentcfg', 'init', '--profile', close[0] if close else 'local')}`.",
    )


def choose(name: str, known: Mapping[str, Profile]) -> Profile:
    if name not in known:
        raise unknown_profile(name, known)
    return known[name]


@dataclass
class KeyPlan:
    """What init does about the chosen profile's key: "not needed", "already" (stored or exported), "read"
    (from --key-stdin or a hidden prompt, then stored) or "missing" (ends Exit.NO_KEY)."""

    state: str
    refusal: AgentcfgError | None = None  # set: stop before asking or writing anything


def plan_key(
    profile: Profile, *, needs: bool, key_stdin: bool, interactive: bool, keyring: AgentcfgError | None
) -> KeyPlan:
    """Decided from plain values: `needs` (needs_key), and the one keyring check's result."""
    if not profile.key_env:
        return KeyPlan("not needed")
    if not needs:
        return KeyPlan("already")
    if not (key_stdin or interactive):
        return KeyPlan("missing")
    if keyring is not None and not key_stdin:  # nowhere to keep a typed key: not asked for; switch, then exit 4
        return KeyPlan("missing")
    if keyring is not None:  # the piped key would be read, then lost: refuse before it is read
        return KeyPlan(
            "missing",
            AgentcfgError(
                f"cannot store the key for {profile.name}: {keyring.message}",
                hint="Nothing was written and no key was read. " + (keyring.hint or ""),
            ),
        )
    return KeyPlan("read")


def moves_offered(found: Survey, *, keep: bool, keyring: AgentcfgError | None) -> list[Candidate]:
    """The plaintext keys a move into the keyring can be offered for: none with --keep-keys or no keyring
    (import_profiles then notes, for each, that it stays in its file)."""
    return [] if keep or keyring is not None else found.with_keys


def variable_readers(candidate: Candidate, environ: env.Environ) -> list[str]:
    """The agents beside a plaintext key that cannot fetch it from the keyring (qwen-code, opencode, Codex
    before 0.119): once it is moved, they read it from the profile's variable, which only `agentcfg exec`
    and `agentcfg env` set, so plain `qwen` fails with "Missing API key"."""
    return [
        name
        for name in candidate.found_in
        if name in AGENTS and not runs_helper(AGENTS[name], environ) and AGENTS[name].TRAITS.reads_key_variable
    ]


def move_question(candidate: Candidate, environ: env.Environ) -> str:
    """The terminal's question before a key moves: what the profile is, where the key is, and, for agents that
    cannot fetch it from the keyring, what starts them afterwards (no keeps it where they read it)."""
    question = (
        f"{candidate.name} is {candidate.model} at {candidate.base_url}; its key is in plaintext in "
        f"{found_where(candidate.found_in, environ)}."
    )
    if readers := variable_readers(candidate, environ):
        one, plain = len(readers) == 1, AGENTS[readers[0]].TRAITS.binary
        them, files = ("it", f"{readers[0]}'s file") if one else ("them", "their files")
        starts = ", ".join(f"`{fixes.exec_agent(candidate.name, AGENTS[n].TRAITS.binary)}`" for n in readers)
        question += (
            f" {' and '.join(readers)} cannot fetch a key from the keyring: after a move, start {them} with "
            f'{starts} (or run `eval "$(agentcfg env {candidate.name})"` once per shell); n keeps it in {files}, '
            f"where plain `{plain}` reads it."
        )
    return question + " Move the key into the keyring?"


def exit_status(*, switched: list[str], key: str) -> int:
    """init's status: nothing switched is NOTHING; switched to a profile whose key is missing is NO_KEY."""
    if not switched:
        return Exit.NOTHING
    if key == "missing":
        return Exit.NO_KEY
    return Exit.OK


def import_profiles(
    environ: env.Environ,
    *,
    move_keys: Callable[[Candidate], bool],
    found: Survey | None = None,
    keyring: AgentcfgError | None = None,
) -> Imported:
    """Write a profile for every new endpoint; move each plaintext key the user agrees to move (none when
    `keyring`, the one check's problem, says no key can be stored)."""
    found = found or survey(environ)
    result = Imported(found.candidates, notes=list(found.notes))
    directory = profiles.profiles_dir(environ)
    for candidate in result.candidates:
        if candidate.known_as:
            continue
        path = directory / f"{candidate.name}.toml"
        fsutil.save(path, profiles.to_toml(candidate.profile()).encode("utf-8"), 0o644, env.display(path, environ))
        result.created.append(candidate.name)
    current = profiles.load_all(environ)
    for candidate in result.candidates:
        if not candidate.key:
            continue
        if keyring is not None:
            result.notes.append(f"{candidate.name}: the key stays in its file: {keyring.message}")
        elif move_keys(candidate):
            _move_key(current[candidate.name], candidate, environ, result)
    return result


def _move_key(profile: profiles.Profile, candidate: Candidate, environ: env.Environ, result: Imported) -> None:
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
    readers = variable_readers(candidate, environ)
    if readers:  # plain `qwen` has no key from now on: say what starts it (an agent that reads no variable: its note)
        result.notes.append(variable_note(profile, readers))
    key, key_env = str(candidate.key), profile.key_env
    plan = switch.run(
        profile,
        agents,
        environ,
        keys,
        label=f"move key {profile.name}",
        rewrite=lambda change: _forget_key(change, key, key_env, environ),
    ).plan
    result.moved.append(profile.name)
    result.notes += [note for note in plan.notes if "plaintext" in note]  # what happened to the old copies


def _forget_key(change: FileChange, key: str, key_env: str, environ: env.Environ) -> FileChange:
    """The user's own provider entries that held the key now name its variable (Codex, opencode)."""
    agent = AGENTS[change.agent]
    if change.after is None:
        return change
    after = change.after
    for file_edit in agent.key_references({change.file: after}, key, key_env):
        after = edit.apply(change.file.format, after, file_edit.assignments, path=env.display(change.path, environ))
    return replace(change, after=after)
