"""`agentcfg mcp`: MCP servers once for every agent (agentcfg.mcp.commands does the work; this parses, asks and
prints)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from agentcfg.cli import base
from agentcfg.errors import AgentcfgError, Exit

if TYPE_CHECKING:
    from agentcfg.mcp.commands import Outcome
    from agentcfg.mcp.model import McpServer


@click.group()
def mcp() -> None:
    """MCP servers, once for every agent: each is written into every installed agent's own file (Codex
    config.toml, Claude Code ~/.claude.json, opencode.json, qwen-code and Gemini CLI settings.json, ...), its
    secrets kept in the keyring. Every write is one journal entry: `agentcfg rollback` undoes it.

    agentcfg's own set of servers is mcp.toml in its config dir; `mcp sync` makes every agent match it.
    """


def _secret_value(variable: str, environ: dict[str, str]) -> str:
    """A secret's value: exported in this shell, else typed at a hidden prompt on a terminal."""
    value = environ.get(variable)
    if not value:
        if not sys.stdin.isatty():
            raise AgentcfgError(
                f"no value for the secret {variable}: it is not in the keyring, not exported, and there is no "
                "terminal to ask on",
                hint=f"Export it for this command (`{variable}=... agentcfg mcp ...`), or run on a terminal.",
            )
        value = click.prompt(f"Value of {variable} (input hidden)", hide_input=True, prompt_suffix=": ", err=True)
    return value


def _render(done: Outcome, environ: dict[str, str], *, dry_run: bool, as_json: bool, title: str, **extra: Any) -> None:
    from agentcfg import report

    plan = done.plan
    if as_json:
        data = report.plan_dict(plan, environ, dry_run=dry_run, entry=done.entry)
        data.pop("profile")
        data["servers"] = done.servers
        base.print_json({**data, **extra})
    else:
        click.echo(report.plan_text(plan, environ, dry_run=dry_run, colour=report.use_colour(environ), title=title))
        base.emit_notes(plan.notes)
        if done.entry:
            click.echo("Undo with: agentcfg rollback")
    base.finish(done.code)


_AGENT = click.option("--agent", "agents", multiple=True, type=base.AgentChoice(), help="Only this agent (repeatable).")
_DRY_RUN = click.option("--dry-run", is_flag=True, help="Show the plan and diff (secrets masked); write nothing.")


@mcp.command()
@click.argument("name")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--url", help="A remote server's URL (streamable HTTP unless --transport sse).")
@click.option("--transport", type=click.Choice(["http", "sse"]), help="A remote server's transport [default: http].")
@click.option("--env", "env", multiple=True, metavar="VAR=VALUE", help="A plain variable (repeatable).")
@click.option(
    "--secret",
    "secrets",
    multiple=True,
    metavar="VAR",
    help="A secret variable, its value kept in the keyring (taken from this shell's VAR, else asked); a remote "
    "server sends it as `Authorization: Bearer` (repeatable).",
)
@click.option("--header", "headers", multiple=True, metavar="NAME=VALUE", help="A plain header (remote; repeatable).")
@click.option(
    "--secret-header", "secret_headers", multiple=True, metavar="NAME=VAR",
    help="A header whose value is the secret VAR (remote; repeatable).",
)  # fmt: skip
@click.option("--startup-timeout", type=base.Float(0.1, 3600), metavar="SECONDS", help="Where an agent takes one.")
@click.option("--tool-timeout", type=base.Float(0.1, 3600), metavar="SECONDS", help="Where an agent takes one.")
@click.option("--tool", "tools", multiple=True, metavar="TOOL", help="Enable only this tool (repeatable; default all).")
@_AGENT
@_DRY_RUN
@base.json_option("Print the plan and result as JSON (never a secret's value).")
def add(
    name: str, command: tuple[str, ...], agents: tuple[str, ...], dry_run: bool, as_json: bool, **options: Any
) -> None:
    """Add MCP server NAME to every installed agent.

    `agentcfg mcp add NAME -- COMMAND [ARGS...]` (stdio), or `agentcfg mcp add NAME --url URL` (streamable HTTP,
    or SSE with --transport sse).

    A secret never goes into a file: `--secret VAR` keeps VAR's value in the keyring and gives each agent its own
    reference to VAR (Claude Code `${VAR}`, opencode `{env:VAR}`, qwen-code `${VAR}`, Codex `env_vars` and
    `bearer_token_env_var`); `agentcfg exec PROFILE -- AGENT` starts an agent with it. A value an agent would
    expand (`$VAR`, `${VAR}`, `{env:...}`) or run (`$(...)`, backticks) is refused. Running it again with the same
    server changes nothing; `agentcfg rollback` undoes it.

    \b
    Examples:
      agentcfg mcp add fs -- npx -y @modelcontextprotocol/server-filesystem ~/src
      agentcfg mcp add github --secret GITHUB_PERSONAL_ACCESS_TOKEN -- npx -y @modelcontextprotocol/server-github
      agentcfg mcp add docs --url https://mcp.example.com/mcp --secret DOCS_TOKEN
    """
    from agentcfg.mcp import commands, model

    words = command[1:] if command[:1] == ("--",) else command
    server = commands.server_from_options(name, words, agents=agents, **options)
    environ = base.environ()
    given = {v: environ[v] for v in server.variables() if environ.get(v)}
    for variable in commands.missing_secrets(server, environ, given):
        given[variable] = _secret_value(variable, environ)
    done = commands.add(server, given, environ, dry_run=dry_run)
    verb = "Would add" if dry_run else "Added"
    title = f"{verb} MCP server {name} ({_what(server)})"
    if done.plan.changes and not done.plan.pending and not dry_run:
        title = f"MCP server {name} is already there as given: nothing to change"
    _render(done, environ, dry_run=dry_run, as_json=as_json, title=title, server=model.to_dict(server))


def _what(server: McpServer) -> str:
    import shlex

    return f"{server.transport} {server.url}" if server.url else shlex.join(server.command)


@mcp.command("rm")
@click.argument("name")
@_AGENT
@_DRY_RUN
@base.json_option("Print the plan and result as JSON.")
def rm(name: str, agents: tuple[str, ...], dry_run: bool, as_json: bool) -> None:
    """Remove MCP server NAME from every agent and from agentcfg's set.

    With --agent: from those agents only, the set kept. Its secrets stay in the keyring (`agentcfg mcp secret VAR
    --rm` removes one)."""
    from agentcfg.mcp import commands

    environ = base.environ()
    done = commands.remove(name, agents, environ, dry_run=dry_run)
    title = f"{'Would remove' if dry_run else 'Removed'} MCP server {name}"
    _render(done, environ, dry_run=dry_run, as_json=as_json, title=title)


@mcp.command()
@_AGENT
@_DRY_RUN
@click.option("--yes", "-y", is_flag=True, help="Write without asking (needed without a terminal).")
@base.json_option("Print the plan and result as JSON.")
def sync(agents: tuple[str, ...], dry_run: bool, yes: bool, as_json: bool) -> None:
    """Make every agent match agentcfg's set, showing the plan first.

    Each installed agent gets every server of the set as the set has it. The agents' other servers stay as they
    are (`agentcfg mcp import` takes them into the set)."""
    from agentcfg.mcp import commands

    environ = base.environ()
    planned = commands.sync(agents, environ, dry_run=True)
    if dry_run or not planned.plan.pending:
        title = "Would sync" if planned.plan.pending else "Every agent has agentcfg's MCP servers: nothing to change"
        _render(planned, environ, dry_run=True, as_json=as_json, title=title)
        return
    if not yes:
        if as_json or not sys.stdin.isatty():
            raise AgentcfgError(
                f"mcp sync would change {len(planned.plan.pending)} file(s): pass --yes to write them without asking",
                hint="See what it writes first: `agentcfg mcp sync --dry-run`.",
            )
        from agentcfg import report

        click.echo(report.plan_text(planned.plan, environ, dry_run=True, colour=report.use_colour(environ),
                                    title="mcp sync would write:"))  # fmt: skip
        if not click.confirm("Write these changes?", default=False, err=True):
            raise AgentcfgError("nothing written", exit_code=Exit.NOTHING)
    done = commands.sync(agents, environ, dry_run=False)
    _render(done, environ, dry_run=False, as_json=as_json, title="Synced agentcfg's MCP servers")


@mcp.command("list")
@_AGENT
@base.json_option("Print every server, the agents that have it and how their copies differ, as JSON.")
def list_command(agents: tuple[str, ...], as_json: bool) -> None:
    """Every MCP server, which agents have it, and where they differ.

    Each server in agentcfg's set or in an agent's file: which agents have it, where, and how their copies differ
    from agentcfg's (by field: a value may be a secret)."""
    from agentcfg.mcp import commands, ops, store

    environ = base.environ()
    chosen, skipped = ops.choose(agents, environ)
    data = commands.listing(ops.read(chosen, environ), store.load(environ), environ)
    data["skipped"] = skipped
    if as_json:
        base.print_json(data)
        return
    click.echo(_listing_text(data))


def _listing_text(data: dict[str, Any]) -> str:
    import shlex

    lines = [f"agentcfg's set: {data['set_file']}"]
    if not data["servers"]:
        lines.append("  no MCP servers (add one: agentcfg mcp add NAME -- COMMAND)")
    for row in data["servers"]:
        definition = row["definition"]
        what = definition.get("url") or shlex.join(definition.get("command", []))
        lines.append(f"{row['name']}  {what}{'' if row['in_set'] else '  (not in agentcfg set)'}")
        width = max([len(c["agent"]) for c in row["agents"]] + [len(a) for a in row["missing"]] + [5])
        for copy in row["agents"]:
            state = f"differs: {', '.join(copy['differs'])}" if copy["differs"] else "same"
            if copy["plaintext_secrets"]:
                state += f"; secret in plain text: {', '.join(copy['plaintext_secrets'])}"
            lines.append(f"  {copy['agent']:<{width}}  {state}  ({copy['where']})")
        for agent in row["missing"]:
            lines.append(f"  {agent:<{width}}  missing{' (agentcfg mcp sync writes it)' if row['in_set'] else ''}")
    for agent in data["agents"]:
        if agent["error"]:
            lines.append(f"{agent['agent']}: cannot read its MCP servers: {agent['error']}")
    return "\n".join(lines)


@mcp.command("import")
@_AGENT
@click.option(
    "--prefer",
    multiple=True,
    type=base.AgentChoice(),
    help="Where agents' copies of a server differ, take this agent's (repeatable, first wins).",
)
@_DRY_RUN
@base.json_option("Print the plan and result as JSON.")
def import_command(agents: tuple[str, ...], prefer: tuple[str, ...], dry_run: bool, as_json: bool) -> None:
    """Take the agents' MCP servers into agentcfg's set.

    Their union; a conflict (copies that differ) is resolved by --prefer or asked on a terminal. Secrets written
    in plain text go to the keyring, and those files get a reference to the variable instead; `agentcfg mcp sync`
    then gives every agent every server."""
    from agentcfg.mcp import commands, ops, store

    environ = base.environ()
    chosen, skipped = ops.choose(agents, environ)
    readings = ops.read(chosen, environ)
    for reading in readings:
        if reading.problem is not None:
            raise reading.problem
    trusted, project_notes = _project_servers(environ)
    gathered = commands.gather(readings, store.load(environ), prefer, trusted)
    gathered.notes[:0] = project_notes
    while gathered.conflicts:
        name, copies = next(iter(gathered.conflicts.items()))
        shown = "; ".join(f"{agent}: {', '.join(fields) or 'as the first'}" for agent, fields in copies.items())
        if as_json or not sys.stdin.isatty():
            raise AgentcfgError(
                f"the agents' copies of {name} differ ({shown}), and {len(gathered.conflicts)} server(s) in all",
                hint="Choose whose to take: `agentcfg mcp import --prefer AGENT` (`agentcfg mcp list` shows them).",
            )
        pick = click.prompt(f"{name} differs ({shown}); take whose", type=click.Choice(list(copies)), err=True)
        prefer = (pick, *prefer)
        gathered = commands.gather(readings, store.load(environ), prefer, trusted)
        gathered.notes[:0] = project_notes
    done = commands.import_(readings, gathered, skipped, environ, dry_run=dry_run)
    verb = "Would take" if dry_run else "Took"
    names = ", ".join(done.servers) or "no server (agentcfg's set has them all)"
    sources = {name: gathered.source[name] for name in done.servers}
    _render(done, environ, dry_run=dry_run, as_json=as_json, title=f"{verb} in {names}", sources=sources)


def _project_servers(environ: dict[str, str]) -> tuple[list[Any], list[str]]:
    """This project's MCP servers that import may take (none until `agentcfg trust`), and what to say of it."""
    from agentcfg.mcp import project

    root = project.find_root(environ)
    if root is None:
        return [], []
    found = project.project_servers(root, environ)
    return found.importable(), found.problems()


@mcp.command()
@click.argument("variable")
@click.option("--rm", "remove", is_flag=True, help="Remove its value from the keyring instead.")
@base.json_option("Print the result as JSON (never the value).")
def secret(variable: str, remove: bool, as_json: bool) -> None:
    """Store the value of an MCP server's secret VARIABLE in the keyring.

    The value comes from this shell's VARIABLE, else is asked on a terminal, else is one line of stdin. It is
    bound to the hosts of agentcfg's remote servers that send it. --rm removes it."""
    from agentcfg.mcp import model, secrets, store

    model.check(model.McpServer("secret", command=("x",), secrets=(variable,)), "agentcfg mcp secret")
    environ = base.environ()
    origins: list[str] = []
    if remove:
        if not secrets.forget(variable, environ):
            raise AgentcfgError(f"no value of {variable} in the keyring", exit_code=Exit.NOTHING)
    else:
        value = environ.get(variable) or (
            _secret_value(variable, environ) if sys.stdin.isatty() else sys.stdin.readline().rstrip("\r\n")
        )
        secrets.check_value(variable, value)
        servers = store.load(environ)
        secrets.store({variable: value}, servers, environ)
        origins = secrets.origins_of(variable, servers)
    if as_json:
        base.print_json({"variable": variable, "stored": not remove, "removed": remove, "origins": origins})
        return
    what = "removed from" if remove else "stored in"
    click.echo(f"{variable} {what} the keyring" + (f" (sent only to {', '.join(origins)})" if origins else ""))
