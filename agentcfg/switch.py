"""`agentcfg switch`: which agents, how they get the key, what a switch would write, and the one path that
writes it (run: lock, read, plan, commit; a dry run plans the same and writes nothing)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field

from agentcfg import env, fixes, fsutil, keystore, profiles, switchplan, versions
from agentcfg.agents import AGENTS, unknown_agent
from agentcfg.agents.base import Agent, FileEdit, KeySource, Texts
from agentcfg.apply import Journal
from agentcfg.current import read_current, runs_helper
from agentcfg.errors import AgentcfgError, Exit
from agentcfg.invocation import self_command
from agentcfg.journal import sha256_of
from agentcfg.lazyclass import dataclass
from agentcfg.plan import FileChange, Plan
from agentcfg.profiles import Profile, is_placeholder
from agentcfg.switchplan import AgentReading


def select(
    names: tuple[str, ...], every: bool, environ: env.Environ, profile: str | None = None
) -> tuple[list[Agent], dict[str, str]]:
    """The agents to switch, and why the others are left alone (with `profile`: the complete command that
    sets one up anyway).

    Default: every agent that is installed (on PATH) or already has a config file.
    """
    for name in names:
        if name not in AGENTS:
            raise unknown_agent(name)
    if names or every:
        return [AGENTS[n] for n in AGENTS if every or n in names], {}
    chosen, skipped = [], {}
    for agent in AGENTS.values():
        if env.which(agent.TRAITS.binary, environ) or any(f.path.exists() for f in agent.files(environ)):
            chosen.append(agent)
        else:
            anyway = f"`{fixes.switch(profile, agent.TRAITS.name)}`" if profile else f"--agent {agent.TRAITS.name}"
            skipped[agent.TRAITS.name] = (
                f"not installed (no `{agent.TRAITS.binary}` on PATH) and no config file; {anyway} sets it up anyway"
            )
    return chosen, skipped


def _they(names: list[str], one: str, many: str) -> str:
    return f"{', '.join(names)} {one if len(names) == 1 else many}"


def variable_note(profile: Profile, names: list[str]) -> str:
    """What starts agents that read the key from the profile's variable (they cannot fetch it themselves)."""
    starts = ", ".join(f"`{fixes.exec_agent(profile.name, AGENTS[n].TRAITS.binary)}`" for n in names)
    return (
        f"{_they(names, 'reads', 'read')} the key from {profile.key_env}: start "
        f"{'it' if len(names) == 1 else 'them'} with {starts} "
        f'(or once per shell: `eval "$(agentcfg env {profile.name})"`)'
    )


def key_source(
    profile: Profile, agents: list[Agent], environ: env.Environ, *, store_in_files: bool = False
) -> tuple[KeySource, list[str]]:
    """How the agents will get a keyed profile's key, and what the user should know about it."""
    notes: list[str]
    if not profile.key_env:
        notes = [f"profile {profile.name!r} needs no key: nothing to store"] if store_in_files else []
        for agent in agents:
            # qwen reads OPENAI_API_KEY, and the shell's value beats the placeholder switch writes in its .env.
            if not (over := agent.TRAITS.shell_key_over_placeholder) or agent.unsupported(profile) is not None:
                continue
            variable, where = over
            if (exported := environ.get(variable)) and not is_placeholder(exported):
                notes.append(
                    f"{variable} is set in this shell: {agent.TRAITS.title} sends it, not the placeholder in its "
                    f"{where}, to {profile.base_url}, which needs no key; start {agent.TRAITS.binary} with "
                    f"`env -u {variable} {agent.TRAITS.binary}`"
                )
        return KeySource(), notes
    notes = []
    if store_in_files:
        resolved = keystore.resolve(profile, environ)
        assert resolved is not None
        # Written literally into the agents' files: a key an agent would expand never goes there,
        # whether it came from the keyring (stored before this check) or the shell.
        if reason := keystore.template_problem(resolved.value):
            raise AgentcfgError(
                f"not writing the key of profile {profile.name!r} (from {resolved.source}) into the agents' files: "
                f"{reason}",
                hint=f"Store the real key with `agentcfg key set {profile.name}`"
                + (f" (it is used before {profile.key_env})." if resolved.source == "environment" else "."),
            )
        notes += [resolved.note] if resolved.note else []
        notes.append("the key is in the agents' files now (mode 0600), as asked; `agentcfg status` flags them")
        return KeySource(literal=resolved.value), notes
    agents = [a for a in agents if a.unsupported(profile) is None]
    helpers = frozenset(a.TRAITS.name for a in agents if runs_helper(a, environ))
    keys = KeySource(helper=(*self_command(), "key", "get", profile.name), runs_helper=helpers)
    readers = [a.TRAITS.name for a in agents if a.TRAITS.name not in helpers]
    if readers and not keystore.reads_environment(profile, environ):
        raise _unapproved_readers(profile, readers, [a.TRAITS.name for a in agents if a.TRAITS.name in helpers])
    if helpers:
        names = [a.TRAITS.name for a in agents if a.TRAITS.name in helpers]
        notes.append(
            f"{_they(names, 'fetches', 'fetch')} the key from the keyring by itself (`agentcfg key get {profile.name}`)"
        )
    if by_env := [a.TRAITS.name for a in agents if a.TRAITS.name not in helpers and a.TRAITS.reads_key_variable]:
        notes.append(variable_note(profile, by_env))
    for agent in agents:
        for variable in agent.TRAITS.shell_keys_over_helper if agent.TRAITS.name in helpers else ():
            if environ.get(variable):
                url = profile.anthropic_base_url if agent.TRAITS.protocol == "messages" else profile.base_url
                notes.append(
                    f"{variable} is set in this shell: {agent.TRAITS.title} prefers it to the keyring's key and would "
                    f"send it to {url}; run `unset {variable}` before running {agent.TRAITS.binary}"
                )
    return keys, notes


def _unapproved_readers(profile: Profile, readers: list[str], fetchers: list[str]) -> AgentcfgError:
    """A project profile's variable you have not approved: an agent that reads the key from a variable would take
    it from the shell that starts it, so no agent file names that variable (nothing is written)."""
    from agentcfg import trust  # lazy: ~3 ms a switch needs only for a project profile's unapproved variable

    only = f"switch only the agents that fetch it themselves (`{fixes.switch(profile.name, agents=fetchers)}`), or "
    return AgentcfgError(
        f"not switching {', '.join(readers)} to {profile.name}: {_they(readers, 'reads', 'read')} the key from "
        f"{profile.key_env} in the shell that starts {'it' if len(readers) == 1 else 'them'}, a variable of the "
        f"project's choice that you have not approved for {profile.name} (its key would go to "
        f"{trust.sent_to(profile)})",
        hint=f"If {profile.key_env} holds that key, approve it: `{trust.approve_command(profile)}`. Otherwise store "
        f"the key (`{fixes.key_set(profile.name)}`) and {only if fetchers else ''}start "
        f"{readers[0]} with `{fixes.exec_agent(profile.name, AGENTS[readers[0]].TRAITS.binary)}`.",
    )


@dataclass(frozen=True)
class MissingKey:
    """A keyed profile whose key an agent will not find: neither stored on this machine nor exported."""

    profile: str
    key_env: str
    fix: str  # the complete command that stores it
    no_keyring: bool = False  # this machine has no usable keyring: `key set` cannot store it either
    approve: str | None = None  # a project profile's variable, not approved: the command that approves it

    @property
    def note(self) -> str:
        if self.approve:
            return (
                f"agentcfg has stored no key for {self.profile} on this machine, and {self.key_env} is not read for "
                f"it (you have not approved that variable of the project's): the agents fail until you run "
                f"`{self.fix}` (or approve it: `{self.approve}`)"
            )
        if self.no_keyring:
            return (
                f"agentcfg has stored no key for {self.profile} on this machine and {self.key_env} is not exported, "
                f"and there is no usable keyring to store it in: the agents fail until {self.key_env} is exported "
                f"in the shell that starts them (`agentcfg key set {self.profile}` shows the ways to get a keyring)"
            )
        return (
            f"agentcfg has stored no key for {self.profile} on this machine and {self.key_env} is not exported: "
            f"the agents fail until you run `{self.fix}`"
        )

    def as_dict(self) -> dict[str, str]:
        return {"profile": self.profile, "key_env": self.key_env, "fix": self.fix}


def missing_key(profile: Profile, environ: env.Environ) -> MissingKey | None:
    """Whether `profile` needs a key no agent will find: not exported in its key_env, not in the keyring.

    agentcfg's record of the keys it stored (keystore.remembered) answers without importing keyring
    (~200 ms). Only a key missing from that record is looked up in the keyring itself: one stored there
    another way is then recorded, and exit status 4 never says "missing" of a key the keyring holds.
    """
    if not profile.key_env or keystore.exported(profile, environ):
        return None
    if profile.name in keystore.remembered(environ):
        return None
    fix = fixes.key_set(profile.name)
    approve = None
    if not keystore.reads_environment(profile, environ):
        from agentcfg import trust  # lazy: ~3 ms a switch needs only for a project profile's unapproved variable

        approve = trust.approve_command(profile)
    try:
        found = keystore.KeyStore(environ, profile).get(profile.name)
    except keystore.KeyringProblem as problem:
        if problem.kind != "no-backend":
            return None  # locked or refused: the key may well be there, and the agent asks the keyring itself
        return MissingKey(profile.name, profile.key_env, fix, no_keyring=True, approve=approve)
    return None if found else MissingKey(profile.name, profile.key_env, fix, approve=approve)


def outcome(plan: Plan, missing: MissingKey | None) -> Exit:
    """The exit status of a switch (the same for its --dry-run): 3 when no agent points at the profile
    afterwards, 4 when some do but the key they need is missing, else 0 (also when nothing changed)."""
    if not plan.changes:
        return Exit.NOTHING
    return Exit.NO_KEY if missing else Exit.OK


def plan_switch(
    profile: Profile,
    agents: list[Agent],
    environ: env.Environ,
    keys: KeySource | None = None,
    codex_profiles: list[Profile] | None = None,
) -> Plan:
    """Every file change a switch makes: what it needs read first (read_agents), then planned (switchplan.plan).

    `codex_profiles`: the other profiles whose Codex profile files the switch keeps current (see
    profile_file_edits); by default the ones that already have a file."""
    keys = keys or KeySource()
    return switchplan.plan(profile, read_agents(profile, agents, environ, keys, codex_profiles), keys, environ)


def read_agents(
    profile: Profile,
    agents: list[Agent],
    environ: env.Environ,
    keys: KeySource,
    others: list[Profile] | None = None,
) -> list[AgentReading]:
    """What planning a switch to `profile` needs from the machine: each agent's texts, the version that decides
    a refusal's message or its profile files, and those files' texts. The one place a switch reads."""
    readings = []
    for agent in agents:
        if reason := agent.unsupported(profile):
            readings.append(AgentReading(agent, {}, skipped=reason))
            continue
        current = read_current(agent, environ)
        refusal = foreign_format_refusal(agent, current, environ, profile, [a.TRAITS.name for a in agents])
        extra: list[tuple[FileEdit, str | None]] = []
        if refusal is None:  # profile_file_edits: none for an agent without profile files
            for file_edit in profile_file_edits(agent, profile, others, environ, keys):
                extra.append(
                    (file_edit, fsutil.read_text(file_edit.file.path, env.display(file_edit.file.path, environ)))
                )
        readings.append(AgentReading(agent, current, refusal=refusal, extra=tuple(extra)))
        if refusal is not None:
            break  # planning stops there: nothing after it is read
    return readings


def foreign_format_refusal(
    agent: Agent, current: Texts, environ: env.Environ, profile: Profile, chosen: list[str]
) -> AgentcfgError | None:
    """A file in a format agentcfg does not write (opencode's V2 config) is refused whole, never half-edited."""
    found = agent.foreign_format(current)
    if not found:
        return None
    file, what = found
    version = versions.installed(agent.TRAITS.binary, environ)
    installed = (
        f"{agent.TRAITS.binary} {'.'.join(map(str, version))} is installed" if version else "it is not installed"
    )
    others = [name for name in chosen if name != agent.TRAITS.name]
    return AgentcfgError(
        f"this is the {what}, which agentcfg does not write ({installed}); nothing was changed",
        where=env.display(file.path, environ),
        hint=(f"Switch the others without it: `{fixes.switch(profile.name, agents=others)}`; or " if others else "")
        + f"move the file aside and switch again: agentcfg writes {agent.TRAITS.name}'s config in the format it "
        "supports.",
    )


def profile_file_edits(
    agent: Agent, profile: Profile, others: list[Profile] | None, environ: env.Environ, keys: KeySource
) -> list[FileEdit]:
    """The profile files a switch keeps (Codex 0.134+, or Codex not installed yet): one for the profile
    switched to, and one for each of `others` (default: the profiles that already have one), so that
    `codex --profile agentcfg-NAME` runs on NAME whatever config.toml points at. Another profile's file
    names its own `agentcfg key get NAME`; a key itself is written only into the switched profile's."""
    since = agent.TRAITS.profile_files_since
    if since is None:
        return []
    version = versions.installed(agent.TRAITS.binary, environ)
    if version is not None and version < since:
        return []
    if others is None:
        kept = set(agent.profile_file_names(environ))
        others = [p for p in profiles.load_all(environ).values() if p.name in kept]
    edits = [agent.profile_file_edit(profile, environ, keys)]
    # Another profile's key is fetched as the installed Codex can, never as the switched profile's is: a keyless
    # or --store-key-in-files switch runs no helper, and would turn every other file's `key get` into an env_key.
    fetches = frozenset({agent.TRAITS.name}) if runs_helper(agent, environ) else frozenset()
    for other in others:
        # A project profile whose variable you have not approved gets no file that would read it from the shell.
        if other.name != profile.name and (fetches or not other.key_env or keystore.reads_environment(other, environ)):
            own = KeySource(helper=(*self_command(), "key", "get", other.name), runs_helper=fetches)
            edits.append(agent.profile_file_edit(other, environ, own))
    return [e for e in edits if e is not None]


@dataclass
class Switched:
    """What one run of the switch path did (a dry run: would do)."""

    plan: Plan
    entry: str | None  # the journal entry it committed; None: a dry run, or nothing changed
    recovered: list[str]  # what recovery did under the lock before the switch
    journal: Journal = field(repr=False)


def run(
    profile: Profile,
    agents: list[Agent],
    environ: env.Environ,
    keys: KeySource,
    *,
    label: str,
    dry_run: bool = False,
    others: list[Profile] | None = None,
    rewrite: Callable[[FileChange], FileChange] | None = None,
) -> Switched:
    """The one switch path (`switch`, `init`, import's key move): read and plan, then lock, check and commit. A
    dry run reads and plans the same way and takes no lock, recovers nothing and writes nothing. `rewrite`: a last
    change to each planned file before it is committed (import's key move names the key's variable where the key
    was).

    Planning (the parse of every file, which a big one makes long) runs before the lock, so that other agentcfg
    commands need not wait for it; under the lock the files are read again, and planned again from what is there
    now if recovery or another run changed any of them since."""
    journal = Journal(environ)
    readings = read_agents(profile, agents, environ, keys, others)
    plan = switchplan.plan(profile, readings, keys, environ)
    if dry_run:
        return Switched(plan, None, [], journal)
    with journal.locked() as recovered:
        if recovered or not _unchanged(readings, environ):
            plan = plan_switch(profile, agents, environ, keys, others)
        if rewrite is not None:
            plan.changes = [rewrite(change) for change in plan.changes]
        entry = journal.commit(plan.changes, {"kind": "switch", "profile": profile.name, "label": label})
    return Switched(plan, entry.id if entry else None, list(recovered), journal)


def _unchanged(readings: list[AgentReading], environ: env.Environ) -> bool:
    """Every file the readings hold still has the text they hold (its digest, read a chunk at a time: cheap beside
    the parse, and no second copy of a big file)."""
    texts = [(file.path, text) for r in readings if r.skipped is None for file, text in r.current.items()]
    texts += [(file_edit.file.path, text) for r in readings for file_edit, text in r.extra]
    if any(set(r.agent.files(environ)) != set(r.current) for r in readings if r.skipped is None):
        return False
    try:
        return all(fsutil.digest_with_fingerprint(path)[0] == sha256_of(text) for path, text in texts)
    except OSError:
        return False


RouteCheck = Callable[[Profile, env.Environ], list[str]]


@dataclass
class Request:
    """`agentcfg switch PROFILE` as parsed."""

    profile: str
    agents: tuple[str, ...] = ()
    every: bool = False
    dry_run: bool = False
    store_key_in_files: bool = False
    all_profile_files: bool = False  # --codex-profile-files all
    notes: list[str] = field(default_factory=list)  # said first (what environ() made of relative locations)


@dataclass
class Outcome:
    """What `agentcfg switch` reports: the plan with every note in order, and its exit status."""

    profile: Profile
    plan: Plan
    code: Exit
    missing: MissingKey | None
    entry: str | None
    selected: bool  # some agent was chosen (nothing_to_switch says why not otherwise)


def switch(request: Request, environ: env.Environ, route_check: RouteCheck | None = None) -> Outcome:
    """`agentcfg switch`: choose the agents, decide how they get the key, then the switch path (run).
    `route_check`: for a route profile, refuses a route that cannot run, and says what to know of its router
    (the caller's: the router's modules sit above this one)."""
    chosen = profiles.get(request.profile, environ)
    route_notes = route_check(chosen, environ) if chosen.route and route_check else []
    selected, skipped = select(request.agents, request.every, environ, chosen.name)
    keys, key_notes = key_source(chosen, selected, environ, store_in_files=request.store_key_in_files)
    # --store-key-in-files has just refused a missing key (it has nothing to write): only the fetched key can be.
    missing = None if request.store_key_in_files else missing_key(chosen, environ)
    others = list(profiles.load_all(environ).values()) if request.all_profile_files else None
    label = f"switch {request.profile}"
    done = run(chosen, selected, environ, keys, label=label, dry_run=request.dry_run, others=others)
    plan = done.plan
    # Where relative variables led, what recovery did, and the journal entries it cannot use: before the plan's.
    recovered = request.notes + done.recovered + done.journal.warnings()
    plan.skipped = {**skipped, **plan.skipped}
    code = outcome(plan, missing)
    if code == Exit.NOTHING:
        missing = None  # no agent points at the profile: its key is nobody's problem yet
    # The missing key first among the key's notes: it is what to do before the others (which start the agents).
    plan.notes = recovered + plan.notes + ([missing.note] if missing else []) + key_notes + route_notes
    return Outcome(chosen, plan, code, missing, done.entry, bool(selected))
