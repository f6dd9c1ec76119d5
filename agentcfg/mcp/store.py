"""agentcfg's set of MCP servers: `mcp.toml` in its config dir, what `agentcfg mcp sync` gives every agent.

The file is agentcfg's own, written whole (atomically) by `mcp add`, `mcp import` and `mcp rm`; a user may edit
it (every server is checked as it is read, as a profile is). It never holds a secret: only the names of the
variables whose values the keyring holds (model.secret_name).

    [servers.github]
    command = ["npx", "-y", "@modelcontextprotocol/server-github"]
    secrets = ["GITHUB_PERSONAL_ACCESS_TOKEN"]
"""

from __future__ import annotations

from pathlib import Path

from agentcfg import edit, env, fsutil
from agentcfg.errors import AgentcfgError
from agentcfg.mcp.model import McpServer, from_dict, to_dict

NAME = "mcp.toml"
HEADER = (
    "# agentcfg's MCP servers: `agentcfg mcp sync` writes each into every agent's own file.\n"
    "# Secrets are not here: `secrets`, `bearer` and `secret_headers` name variables whose values the keyring holds.\n"
)


def path(environ: env.Environ) -> Path:
    return env.config_dir(environ) / NAME


def read_text(environ: env.Environ) -> str | None:
    where = path(environ)
    return fsutil.read_text(where, env.display(where, environ))


def parse(text: str | None, shown: str) -> dict[str, McpServer]:
    """The servers of a set file's text (None: no file, no servers), each checked as anything agentcfg writes."""
    if not text:
        return {}
    data = edit.load("toml", text, path=shown)
    servers = data.get("servers", {})
    if not isinstance(servers, dict) or set(data) - {"servers"}:
        raise AgentcfgError(
            "holds something other than [servers.NAME] tables",
            where=shown,
            hint="Fix it by hand (each server is a [servers.NAME] table), or move it aside and `agentcfg mcp import`.",
        )
    found = {}
    for name, table in servers.items():
        if not isinstance(table, dict):
            raise AgentcfgError(f"servers.{name} is not a table", where=shown)
        found[name] = from_dict(name, table, shown)
    return found


def load(environ: env.Environ) -> dict[str, McpServer]:
    where = path(environ)
    return parse(read_text(environ), env.display(where, environ))


def render(servers: dict[str, McpServer]) -> str:
    """The set file's text: the header, then each server's table in name order (pure)."""
    from agentcfg.edit import toml  # lazy: the TOML renderer, for the commands that write the set

    blocks = [HEADER]
    for name in sorted(servers):
        lines = [f"[servers.{name}]"]
        lines += [f"{key} = {toml.render(value)}" for key, value in to_dict(servers[name]).items()]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def save(environ: env.Environ, text: str) -> None:
    """Write the set file (atomically, owner-only like agentcfg's other files)."""
    where = path(environ)
    where.parent.mkdir(parents=True, exist_ok=True)
    fsutil.atomic_write(where, text, 0o600)


def remove(environ: env.Environ) -> None:
    path(environ).unlink(missing_ok=True)
