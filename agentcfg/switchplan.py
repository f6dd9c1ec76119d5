"""The pure core of a switch: from what was read (switch.read_agents) to every file change, no I/O.

Everything it needs is handed in as plain values (the agents' texts, the key source, the environment's
variables), so it is tested with plain data and a dry run is the same computation as the real run."""

from __future__ import annotations

from urllib.parse import urlsplit

from agentcfg import budget, edit, env
from agentcfg.agents.base import Agent, FileEdit, KeySource, Texts, header_lines, is_credential
from agentcfg.errors import AgentcfgError
from agentcfg.keystore import origin
from agentcfg.lazyclass import dataclass
from agentcfg.plan import FileChange, Plan
from agentcfg.profiles import Profile


@dataclass(frozen=True)
class AgentReading:
    """One agent as read before planning: its files' texts, or why it is left alone or refused."""

    agent: Agent
    current: Texts
    skipped: str | None = None  # it cannot use the profile (Agent.unsupported): left alone, with this reason
    refusal: AgentcfgError | None = None  # a file in a format agentcfg does not write: the switch is refused
    # The other files its switch keeps (Traits.profile_files_since), each with its text now.
    extra: tuple[tuple[FileEdit, str | None], ...] = ()


def plan(profile: Profile, readings: list[AgentReading], keys: KeySource, environ: env.Environ) -> Plan:
    """Every file change a switch makes, computed (and checked to parse) before anything is written.
    `environ`: only to show paths and to see the shell's variables an agent would also send."""
    result = Plan(profile)
    for reading in readings:
        agent, current = reading.agent, reading.current
        if reading.skipped is not None:
            result.skipped[agent.TRAITS.name] = reading.skipped
            continue
        if reading.refusal is not None:
            raise reading.refusal
        after_texts = dict(current)
        for file_edit in agent.edits(profile, current, keys):
            after_texts[file_edit.file] = plan_edit(
                result, agent.TRAITS.name, file_edit, current[file_edit.file], keys, environ
            )
        for file_edit, before in reading.extra:
            plan_edit(result, agent.TRAITS.name, file_edit, before, keys, environ)
        result.notes.extend(header_notes(agent, current, after_texts, environ))
        if warning := budget.warning(
            profile,
            agent.TRAITS.name,
            agent.TRAITS.prompt_tokens,
            bounds_output=agent.TRAITS.bounds_output,
            compacts_every_turn=agent.TRAITS.compacts_every_turn,
        ):
            result.notes.append(warning)
    edit.forget()  # the files' parsed data: the commit needs only their texts
    bounded = {r.agent.TRAITS.name for r in readings if r.agent.TRAITS.bounds_output}
    if profile.context_window is None and any(c.agent in bounded for c in result.changes):
        result.notes.append(window_note(profile))
    return result


def window_note(profile: Profile) -> str:
    """A profile without its window: the output bound switch gives the agents, and how to set the window."""
    return (
        f"profile {profile.name!r} does not say its context window; agents' output is bounded to "
        f"{budget.output_tokens(profile, 0):,} tokens. "
        + (
            f"`agentcfg profile set {profile.name} --detect` reads it from the vLLM server; for another server "
            f"set context_window to the model's window in tokens with agentcfg profile set {profile.name}."
            if profile.is_local  # one command to paste: the one that needs no number
            else f"Set it: `agentcfg profile set {profile.name} context_window=` followed by the window in tokens."
        )
    )


def plan_edit(
    plan: Plan, agent: str, file_edit: FileEdit, before: str | None, keys: KeySource, environ: env.Environ
) -> str:
    """Add one file's change to `plan`; its text afterwards."""
    shown = env.display(file_edit.file.path, environ)
    start = file_edit.file.seed if before is None else before
    after = edit.apply(file_edit.file.format, start, file_edit.assignments, path=shown)
    private = bool(keys.literal and keys.literal in after)
    plan.changes.append(FileChange(agent, file_edit.file, before, after, tuple(file_edit.assignments), private))
    plan.notes.extend(file_edit.notes)
    return after


def header_notes(agent: Agent, before: Texts, after: Texts, environ: env.Environ) -> list[str]:
    """Credential headers of the user's that stay in an agent's file while its endpoint moves to another host.

    agentcfg does not own these headers (a gateway's token in ANTHROPIC_CUSTOM_HEADERS, Codex's
    http_headers): the switch keeps them, so the agent would send them to the new host. Only the
    header's name is shown, never its value.
    """
    name = agent.TRAITS.name
    try:
        old, new = agent.read(before), agent.read(after)
    except AgentcfgError:
        return []
    if not new.base_url or (old.base_url and origin(old.base_url) == origin(new.base_url)):
        return []
    host = urlsplit(new.base_url).hostname or new.base_url
    shown = ", ".join(env.display(f.path, environ) for f in after)
    notes = []
    variable = agent.TRAITS.shell_headers
    if variable and environ.get(variable):  # the shell's go along too
        notes += [
            f"{variable} in this shell has the header {header.name}, which looks like a credential: "
            f"{agent.TRAITS.title} will now send it to {host}; unset it (or drop that line) before running "
            f"{agent.TRAITS.binary} if it is not meant for {host}"
            for header in header_lines(environ[variable], variable)
            if is_credential(header, environ)
        ]
    return notes + [
        f"{name}: {shown} keeps your header {header.name} ({header.where}), which looks like a credential: "
        f"{name} will now send it to {host}. If it is not meant for {host}, remove it from {header.where} "
        "(`agentcfg rollback` undoes this switch)."
        for header in new.headers
        if is_credential(header, environ)
    ]
