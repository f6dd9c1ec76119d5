"""What `agentcfg mcp add`, `rm`, `sync`, `import` and `list` do, between the CLI (which asks and prints) and
the edges (ops: the agents' files and the journal; store: agentcfg's set; secrets: the keyring).

Every command that writes plans first (its `--dry-run` is the same plan, masked diff included), then writes all
the agents' files as one journal entry that `agentcfg rollback` undoes, agentcfg's set with it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, replace
from typing import Any

from agentcfg import env
from agentcfg.errors import AgentcfgError, Exit
from agentcfg.lazyclass import dataclass
from agentcfg.mcp import ops, secrets, store
from agentcfg.mcp.model import Found, McpServer, check, differences, pairs, to_dict
from agentcfg.plan import Plan


@dataclass
class Outcome:
    """What a command that writes did (a dry run: would do)."""

    plan: Plan  # its notes and skipped agents (why each was left alone) included
    entry: str | None
    code: Exit
    servers: list[str]  # the servers it acted on


def _finish(
    done: ops.Committed, skipped: dict[str, str], servers: list[str], notes: list[str], *, agents: bool = True
) -> Outcome:
    """The outcome of a planned (and perhaps written) change; `agents`: some agent was chosen to act on (else
    exit status 3, as a switch with no agent)."""
    plan = done.plan
    plan.skipped = {**skipped, **plan.skipped}
    plan.notes = [*done.notes, *notes, *plan.notes]
    code = Exit.OK if agents else Exit.NOTHING
    return Outcome(plan, done.entry, code, servers)


# -- add ------------------------------------------------------------------------------------------------------


def _pairs(given: tuple[str, ...], option: str) -> tuple[tuple[str, str], ...]:
    found = {}
    for item in given:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise AgentcfgError(f"{option} {item!r} is not NAME=VALUE", hint=f"Give it as {option} NAME=VALUE.")
        found[name] = value
    return pairs(found)


def server_from_options(
    name: str,
    command: tuple[str, ...],
    *,
    url: str | None,
    transport: str | None,
    env: tuple[str, ...],
    secrets: tuple[str, ...],
    headers: tuple[str, ...],
    secret_headers: tuple[str, ...],
    startup_timeout: float | None,
    tool_timeout: float | None,
    tools: tuple[str, ...],
    agents: tuple[str, ...],
) -> McpServer:
    """`mcp add`'s options as a server, checked. A remote server's one --secret is its bearer token."""
    remote = url is not None
    if remote and len(secrets) > 1:
        raise AgentcfgError(
            "a remote server sends one --secret, as its bearer token",
            hint="Send the others as headers: --secret-header NAME=VAR.",
        )
    server = McpServer(
        name=name,
        command=command,
        url=url,
        transport=(transport or "http") if remote else "stdio",
        env=_pairs(env, "--env"),
        secrets=() if remote else tuple(sorted(set(secrets))),
        headers=_pairs(headers, "--header"),
        bearer=secrets[0] if remote and secrets else None,
        secret_headers=_pairs(secret_headers, "--secret-header"),
        startup_timeout=startup_timeout,
        tool_timeout=tool_timeout,
        tools=tools,
        agents=tuple(sorted(set(agents))),
    )
    return check(server, "agentcfg mcp add")


def add(server: McpServer, values: Mapping[str, str], environ: env.Environ, *, dry_run: bool = False) -> Outcome:
    """Keep `server` in agentcfg's set and write it to every chosen agent (its `agents`, else every installed
    one). `values`: the secrets' values given now (the others are already in the keyring)."""
    servers = store.load(environ)
    after = {**servers, server.name: server}
    agents, skipped = ops.choose(server.agents, environ)
    readings = ops.read(agents, environ)
    notes = []
    if not agents:
        notes.append(
            f"no agent to write {server.name} to: it is kept in agentcfg's set, and `agentcfg mcp sync` writes it "
            "once an agent is installed"
        )
    for variable, value in values.items():
        secrets.check_value(variable, value)
    if not dry_run:
        secrets.store(values, after, environ)
    done = ops.commit({server.name: server}, readings, environ, label=f"mcp add {server.name}",
                      servers_after=after, dry_run=dry_run)  # fmt: skip
    return _finish(done, skipped, [server.name], notes, agents=bool(agents))


def missing_secrets(server: McpServer, environ: env.Environ, given: Mapping[str, str]) -> list[str]:
    """The variables of `server` with no value given now, none stored, or one stored for other hosts than the
    server's (that one must be given again to go there)."""
    wanted = [v for v in server.variables() if v not in given]
    found = secrets.stored(wanted, environ)
    servers = {**store.load(environ), server.name: server}
    return [v for v in wanted if v not in found or secrets.unbound(v, servers, found[v][1])]


# -- rm -------------------------------------------------------------------------------------------------------


def remove(name: str, agent_names: tuple[str, ...], environ: env.Environ, *, dry_run: bool = False) -> Outcome:
    """Take `name` out of agentcfg's set (unless limited to some agents) and out of every agent that has it."""
    servers = store.load(environ)
    agents, skipped = ops.choose(agent_names, environ)
    readings = ops.read(agents, environ)
    having = [r.name for r in readings if name in r.servers()]
    after = servers if agent_names else {n: s for n, s in servers.items() if n != name}
    if not having and name not in servers:
        raise AgentcfgError(
            f"no MCP server {name!r} in agentcfg's set or in any agent's file",
            hint="`agentcfg mcp list` shows the servers there are.",
            exit_code=Exit.NOTHING,
        )
    notes = []
    if server := servers.get(name):
        kept = [v for v in server.variables() if not any(v in s.variables() for n, s in after.items() if n != name)]
        if kept and not agent_names:
            notes.append(
                f"its secrets stay in the keyring ({', '.join(kept)}): `agentcfg mcp secret VAR --rm` removes one"
            )
    done = ops.commit({name: None}, readings, environ, label=f"mcp rm {name}", servers_after=after, dry_run=dry_run)
    return _finish(done, skipped, [name], notes)


# -- sync -----------------------------------------------------------------------------------------------------


def sync(agent_names: tuple[str, ...], environ: env.Environ, *, dry_run: bool) -> Outcome:
    """Make every chosen agent have each server of agentcfg's set as the set has it; the agents' own other
    servers stay (named in the notes)."""
    servers = store.load(environ)
    if not servers:
        raise AgentcfgError(
            "agentcfg's set of MCP servers is empty: nothing to sync",
            hint="Add one with `agentcfg mcp add NAME -- COMMAND`, or take in the agents' with `agentcfg mcp import`.",
            exit_code=Exit.NOTHING,
        )
    agents, skipped = ops.choose(agent_names, environ)
    readings = ops.read(agents, environ)
    others = sorted({f"{n} ({r.name})" for r in readings for n in r.servers() if n not in servers})
    notes = [f"left as they are, not in agentcfg's set: {', '.join(others)} (`agentcfg mcp import` takes them in)"]
    done = ops.commit(servers, readings, environ, label="mcp sync", dry_run=dry_run)
    return _finish(done, skipped, sorted(servers), notes if others else [], agents=bool(agents))


# -- list -----------------------------------------------------------------------------------------------------


def listing(readings: list[ops.Reading], servers: Mapping[str, McpServer], environ: env.Environ) -> dict[str, Any]:
    """Per server: agentcfg's definition (the set's, else the first agent's), which agents have it and where, and
    how each copy differs from that (field names only: a value may be a secret). Pure."""
    names = sorted({*servers, *(n for r in readings for n in r.servers())})
    rows = []
    for name in names:
        copies = [(r.name, r.servers()[name]) for r in readings if name in r.servers()]
        reference = servers.get(name) or copies[0][1].server
        rows.append(
            {
                "name": name,
                "in_set": name in servers,
                "definition": to_dict(reference),
                "agents": [_copy(agent, found, reference) for agent, found in copies],
                "missing": [
                    r.name
                    for r in readings
                    if r.problem is None
                    and name not in r.servers()
                    and (name not in servers or not servers[name].agents or r.name in servers[name].agents)
                ],
            }
        )
    return {
        "set_file": env.display(store.path(environ), environ),
        "servers": rows,
        "agents": [
            {
                "agent": r.name,
                "files": [env.display(f.path, environ) for f in r.current],
                "error": str(r.problem) if r.problem else None,
            }
            for r in readings
        ],
    }


def _copy(agent: str, found: Found, reference: McpServer) -> dict[str, Any]:
    return {
        "agent": agent,
        "where": found.where,
        "differs": differences(found.server, reference),
        "plaintext_secrets": [variable for variable, _ in found.plaintext],
        "unmodelled": list(found.unmodelled),
    }


# -- import ---------------------------------------------------------------------------------------------------


@dataclass
class Gathered:
    """The union of the agents' servers, as import would take it in."""

    servers: dict[str, McpServer]  # name -> the definition taken
    source: dict[str, str]  # name -> the agent it was taken from (a project's: its file and key)
    conflicts: dict[str, dict[str, list[str]]]  # name -> agent -> the fields in which its copy differs from others
    plaintext: dict[str, str] = field(default_factory=dict, repr=False)  # variable -> a value found in plain text
    notes: list[str] = field(default_factory=list)


def gather(
    readings: list[ops.Reading],
    known: Mapping[str, McpServer],
    prefer: tuple[str, ...] = (),
    project: list[Found] | None = None,
) -> Gathered:
    """Each server the agents have that agentcfg's set does not, from one agent: the one copy there is, or where
    copies differ, the first agent of `prefer` that has it (else a conflict). Then a trusted project's servers
    (`project`: agentcfg.mcp.project's importable ones) of a name nobody else has. Pure."""
    found: dict[str, list[Found]] = {}
    for reading in readings:
        for item in reading.found:
            found.setdefault(item.server.name, []).append(item)
    result = Gathered({}, {}, {})
    for name, copies in sorted(found.items()):
        if name in known:
            if differing := [c.agent for c in copies if differences(c.server, known[name])]:
                result.notes.append(
                    f"{name}: {', '.join(differing)} {'has' if len(differing) == 1 else 'have'} another definition than"
                    " agentcfg's set: `agentcfg mcp sync` makes them match the set"
                )
            continue
        kinds = {c.server.comparable() for c in copies}
        chosen = copies[0]
        if len(kinds) > 1:
            chosen = next((c for agent in prefer for c in copies if c.agent == agent), None)  # type: ignore[assignment]
            if chosen is None:
                result.conflicts[name] = {c.agent: differences(c.server, copies[0].server) for c in copies}
                continue
        result.servers[name] = replace(chosen.server, agents=())
        result.source[name] = chosen.agent
        for copy in copies:
            if copy.unmodelled:
                result.notes.append(
                    f"{name} in {copy.agent} has what agentcfg does not write ({', '.join(copy.unmodelled)}): "
                    "left as it is there, not taken in"
                )
        for variable, value in (
            p for c in copies if c.server.comparable() == chosen.server.comparable() for p in c.plaintext
        ):
            if result.plaintext.setdefault(variable, value) != value:
                raise AgentcfgError(
                    f"{variable} holds two different values in the agents' files (for {name} and another server)",
                    hint="Make them one value in the agents' files (or rename one), then `agentcfg mcp import` again.",
                )
    for item in project or []:
        name = item.server.name
        if name in known or name in found or name in result.servers:
            result.notes.append(f"{name} in {item.where} is left out: a server of that name is there already")
            continue
        result.servers[name] = replace(item.server, agents=())
        result.source[name] = item.where
    return result


def import_(
    readings: list[ops.Reading], gathered: Gathered, skipped: dict[str, str], environ: env.Environ, *, dry_run: bool
) -> Outcome:
    """Take the gathered servers into agentcfg's set; the secrets found in plain text go to the keyring, and the
    files that held them get a reference to their variable instead (as `init` does with a key)."""
    from agentcfg import redact  # lazy: the masking of what is printed, for the command that moves secrets

    for value in gathered.plaintext.values():
        redact.register(value)  # the plan's diff removes it from a file: it is masked there, as every key
    servers = store.load(environ)
    after = {**servers, **gathered.servers}
    # Only the copies that hold a taken server's secret in plain text are written (the copy taken, or one equal to
    # it: another copy keeps its own): each gets the reference to the variable instead.
    holders: dict[str, list[str]] = {}
    for reading in readings:
        for copy in reading.found:
            taken = gathered.servers.get(copy.server.name)
            if copy.plaintext and taken is not None and copy.server.comparable() == taken.comparable():
                holders.setdefault(copy.server.name, []).append(reading.name)
    targeted = [replace(gathered.servers[name], agents=tuple(agents)) for name, agents in sorted(holders.items())]
    if not dry_run:
        secrets.store(gathered.plaintext, after, environ)
    done = ops.commit({s.name: s for s in targeted}, readings, environ, label="mcp import",
                      servers_after=after, dry_run=dry_run)  # fmt: skip
    notes = [*gathered.notes]
    if gathered.plaintext:
        moved = ", ".join(sorted(gathered.plaintext))
        notes.append(
            f"{'would move' if dry_run else 'moved'} secrets written in plain text to the keyring: {moved}; the agents "
            "read them from their variables: start them with `agentcfg exec PROFILE -- AGENT`"
        )
    return _finish(done, skipped, sorted(gathered.servers), notes, agents=bool(readings))
