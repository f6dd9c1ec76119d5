"""Reading the agents' MCP servers and writing a change to them through the one writer (apply.Journal), with
agentcfg's set (store) kept beside the journal entry so that `agentcfg rollback` restores both.

`plan` is pure (the readings in, a Plan out); `read`, `choose` and `commit` are the edges."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcfg import env, fsutil
from agentcfg.agents import AGENTS, unknown_agent
from agentcfg.agents.base import Agent, KeySource, Texts
from agentcfg.errors import AgentcfgError
from agentcfg.journal import sha256_of
from agentcfg.lazyclass import dataclass
from agentcfg.mcp import store
from agentcfg.mcp.model import Found, McpServer
from agentcfg.plan import Plan

KIND = "mcp"  # the journal entry's kind (manifest.KINDS)


@dataclass(frozen=True)
class Reading:
    """One agent's MCP files as read, and the servers in them; `problem`: they cannot be read (a file that does
    not parse): `list` reports it, a write is refused."""

    agent: Agent
    current: Texts
    found: tuple[Found, ...] = ()
    problem: AgentcfgError | None = None

    @property
    def name(self) -> str:
        return self.agent.TRAITS.name

    def servers(self) -> dict[str, Found]:
        return {f.server.name: f for f in self.found}


def choose(names: tuple[str, ...], environ: env.Environ) -> tuple[list[Agent], dict[str, str]]:
    """The agents an MCP command acts on, and why the others are left alone. Default: every agent whose MCP
    servers agentcfg writes that is installed (on PATH) or already has one of its MCP files."""
    for name in names:
        if name not in AGENTS:
            raise unknown_agent(name)
    chosen, skipped = [], {}
    for agent in AGENTS.values():
        name = agent.TRAITS.name
        if names and name not in names:
            continue
        try:
            files = agent.mcp_files(environ)
        except AgentcfgError as exc:  # Codex's CODEX_HOME that is not a directory
            skipped[name] = exc.message
            continue
        if not files:
            skipped[name] = "agentcfg does not write its MCP servers yet"
        elif names or env.which(agent.TRAITS.binary, environ) or any(f.path.exists() for f in files):
            chosen.append(agent)
        else:
            skipped[name] = (
                f"not installed (no `{agent.TRAITS.binary}` on PATH) and no MCP file; --agent {name} writes it anyway"
            )
    return chosen, skipped


def read_one(agent: Agent, environ: env.Environ) -> Reading:
    try:
        current = {f: fsutil.read_text(f.path, env.display(f.path, environ)) for f in agent.mcp_files(environ)}
        return Reading(agent, current, tuple(agent.mcp_read(current, environ)))
    except AgentcfgError as exc:
        return Reading(agent, {}, problem=exc)


def read(agents: list[Agent], environ: env.Environ) -> list[Reading]:
    return [read_one(agent, environ) for agent in agents]


def wanted(changes: Mapping[str, McpServer | None], reading: Reading) -> dict[str, McpServer | None]:
    """What of `changes` one agent gets: a server limited to other agents is not its; a removal only where it
    has the server (removing what is not there would still create its file)."""
    have = reading.servers()
    return {
        name: server
        for name, server in changes.items()
        if (server is None and name in have)
        or (server is not None and (not server.agents or reading.name in server.agents))
    }


def plan(changes: Mapping[str, McpServer | None], readings: list[Reading], environ: env.Environ) -> Plan:
    """Every file change that sets (or, for None, removes) the named servers in the agents read: pure."""
    from agentcfg.switchplan import plan_edit  # lazy: the switch's planning, for the commands that write

    result = Plan(None)
    for reading in readings:
        mine = wanted(changes, reading)
        if not mine:
            continue
        if reading.problem is not None:
            raise reading.problem
        for file_edit in reading.agent.mcp_edits(mine, reading.current):
            plan_edit(result, reading.name, file_edit, reading.current[file_edit.file], KeySource(), environ)
    return result


def _unchanged(readings: list[Reading]) -> bool:
    try:
        return all(
            fsutil.digest_with_fingerprint(file.path)[0] == sha256_of(text)
            for reading in readings
            for file, text in reading.current.items()
        )
    except OSError:
        return False


@dataclass(frozen=True)
class Committed:
    """What a write did: its plan (made again under the lock if a file changed since), its journal entry, and
    what recovery said."""

    plan: Plan
    entry: str | None
    notes: tuple[str, ...]


def commit(
    changes: Mapping[str, McpServer | None],
    readings: list[Reading],
    environ: env.Environ,
    *,
    label: str,
    servers_after: Mapping[str, McpServer] | None = None,
    dry_run: bool = False,
) -> Committed:
    """Plan the change, then (unless a dry run) write it as one journal entry and, beside it, agentcfg's set as
    `servers_after` (None: the set stays as it is). The entry records the set file's text before, so that
    `agentcfg rollback` gives it back too (restore_set)."""
    from agentcfg.apply import Journal  # lazy: the writer, for the commands that write

    planned = plan(changes, readings, environ)
    if dry_run:
        return Committed(planned, None, ())
    journal = Journal(environ)
    before = store.read_text(environ)
    after = None if servers_after is None else store.render(dict(servers_after))
    with journal.locked() as recovered:
        if recovered or not _unchanged(readings):
            readings = read([r.agent for r in readings], environ)
            planned = plan(changes, readings, environ)
        meta: dict[str, Any] = {"kind": KIND, "label": label}
        if after is not None and after != before:
            meta["mcp_set"] = {"before": before, "after_sha256": sha256_of(after)}
        entry = journal.commit(planned.changes, meta)
        if after is not None and after != before:
            store.save(environ, after)
    return Committed(planned, entry.id if entry else None, tuple(recovered) + tuple(journal.warnings()))


def restore_set(manifest: Mapping[str, Any], environ: env.Environ, *, dry_run: bool) -> str | None:
    """What rolling back an `mcp` entry does to agentcfg's set: give back the text it had before, unless the
    set was changed since (then it is left as it is, and said)."""
    recorded = manifest.get("mcp_set")
    if manifest.get("kind") != KIND or not isinstance(recorded, dict):
        return None
    before, after_sha = recorded.get("before"), recorded.get("after_sha256")
    shown = env.display(store.path(environ), environ)
    if not (before is None or isinstance(before, str)) or not isinstance(after_sha, str):
        return f"{shown} was not restored: the journal entry's record of it is damaged"
    if sha256_of(store.read_text(environ)) != after_sha:
        return f"{shown} was changed since: left as it is (`agentcfg mcp list` shows what it holds)"
    store.parse(before, shown)  # a record that is no set is refused before anything is written
    if not dry_run:
        if before is None:
            store.remove(environ)
        else:
            store.save(environ, before)
    return f"{shown} {'would be' if dry_run else 'was'} restored to agentcfg's set before that change"
