"""Each real agent's own view of its MCP servers, for the e2e tier: the command that lists them, how to read
whether it shows a server (and, where the listing connects to it, whether it connected), and each agent's
config written by hand for a server, the way the agent's own `mcp add` writes it (what agentcfg's writers are
checked against).

What each listing prints, seen with the pinned releases (tests/e2e/agents.py PINNED) and server-everything:

    codex mcp list --json    a JSON list of {name, enabled, transport: {type: stdio|streamable_http, command,
                             args, url, ...}}; it starts nothing (no connection status)
    claude mcp list          "NAME: COMMAND ARGS - ✔ Connected", "NAME: URL (HTTP) - ✔ Connected"
                             ("✘ Failed to connect — ..." when it cannot)
    opencode mcp list        "●  ✓ NAME connected" then the command or URL ("✗ NAME failed" and the error)
    qwen mcp list            "✓ NAME: COMMAND ARGS (stdio) - Connected", "✓ NAME: URL (http) - Connected"
                             ("✗ ... - Disconnected")
    gemini mcp list          as qwen's (its fork)
    droid mcp list           "  NAME  stdio  connected  [user]", "  NAME  http  connected  [user]"
                             ("failed: Failed to connect to MCP server")
    copilot mcp list --json  {"mcpServers": {NAME: {type: local|http, command, args, url, source, enabled}}};
                             it starts nothing
    cline                    no listing command (3.0.65 `cline mcp` has add, a wizard, and remove only);
                             its file is ~/.cline/data/settings/cline_mcp_settings.json ($CLINE_MCP_SETTINGS_PATH)
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import AGENTCFG
from tests.e2e import agents

# The agents with a listing command, each with the argv that lists and whether that listing connects.
LISTED = ("codex", "claude", "opencode", "qwen", "gemini", "droid", "copilot")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@functools.cache
def has_mcp_add() -> bool:
    """Whether this build has `agentcfg mcp add` (issue 32's command; the tests that drive it wait for it)."""
    found = subprocess.run([AGENTCFG, "mcp", "add", "--help"], capture_output=True, text=True, timeout=60)
    return found.returncode == 0


def require_mcp_add() -> None:
    """Skip the calling test until this build has `agentcfg mcp add` (asked when the test runs, not at import)."""
    if not has_mcp_add():
        pytest.skip("`agentcfg mcp add` is not in this build yet (issue 32)")


@dataclass(frozen=True)
class Server:
    """A server as a test gives it to an agent: stdio (`command`) or streamable HTTP (`url`), and the variable
    whose value is a secret (given to a stdio server as that variable, to an HTTP one as its bearer token)."""

    name: str
    command: tuple[str, ...] = ()
    url: str | None = None
    secret: str | None = None

    @property
    def remote(self) -> bool:
        return self.url is not None


@dataclass(frozen=True)
class Listing:
    """An agent's listing command; `sees(result, server)` whether the output lists the server, connected where
    the listing connects (`connects`)."""

    argv: tuple[str, ...]
    connects: bool
    shows: Callable[[str, Server], bool]
    json: bool = False  # JSON on stdout; else text, on stdout or stderr (Gemini CLI prints its list on stderr)

    def sees(self, result: agents.Run, server: Server) -> bool:
        """Whether the listing `result` shows `server` (connected, where it connects)."""
        return self.shows(result.stdout if self.json else result.output, server)


def plain(output: str) -> str:
    """The output without colours (qwen and opencode colour theirs even with TERM=dumb)."""
    return _ANSI.sub("", output)


def _codex(output: str, server: Server) -> bool:
    rows = {row.get("name"): row for row in _json(output, [])}
    transport = rows.get(server.name, {}).get("transport") or {}
    if server.remote:
        return transport.get("type") == "streamable_http" and transport.get("url") == server.url
    return transport.get("type") == "stdio" and [transport.get("command"), *transport.get("args", [])] == list(
        server.command
    )


def _copilot(output: str, server: Server) -> bool:
    found = (_json(output, {}).get("mcpServers") or {}).get(server.name) or {}
    if server.remote:
        return found.get("type") == "http" and found.get("url") == server.url
    return found.get("type") in ("local", "stdio") and [found.get("command"), *found.get("args", [])] == list(
        server.command
    )


def _json(output: str, empty: object) -> object:
    try:
        return json.loads(output)
    except ValueError:
        return empty


def _line(pattern: Callable[[Server], str]) -> Callable[[str, Server], bool]:
    return lambda output, server: re.search(pattern(server), plain(output), re.MULTILINE) is not None


def _where(server: Server) -> str:
    """How claude, qwen and gemini show a server after its name: the URL, or the command line."""
    return re.escape(server.url if server.url else " ".join(server.command))


LISTINGS: dict[str, Listing] = {
    "codex": Listing(("codex", "mcp", "list", "--json"), False, _codex, json=True),
    "claude": Listing(
        ("claude", "mcp", "list"),
        True,
        _line(lambda s: rf"^{re.escape(s.name)}: {_where(s)}{' [(]HTTP[)]' if s.remote else ''} - ✔ Connected$"),
    ),
    "opencode": Listing(("opencode", "mcp", "list"), True, _line(lambda s: rf"✓ {re.escape(s.name)} connected$")),
    "qwen": Listing(
        ("qwen", "mcp", "list"),
        True,
        _line(lambda s: rf"^✓ {re.escape(s.name)}: {_where(s)} [(]{'http' if s.remote else 'stdio'}[)] - Connected$"),
    ),
    "gemini": Listing(
        ("gemini", "mcp", "list"),
        True,
        _line(lambda s: rf"^✓ {re.escape(s.name)}: {_where(s)} [(]{'http' if s.remote else 'stdio'}[)] - Connected$"),
    ),
    "droid": Listing(
        ("droid", "mcp", "list"),
        True,
        _line(lambda s: rf"^\s+{re.escape(s.name)}\s+{'http' if s.remote else 'stdio'}\s+connected\b"),
    ),
    "copilot": Listing(("copilot", "mcp", "list", "--json"), False, _copilot, json=True),
}


def hand_write(home: Path, servers: list[Server]) -> dict[str, Path]:
    """Write `servers` into every agent's own user file under `home` (fresh files: a test HOME), in the shape the
    agent's own `mcp add` writes (Cline CLI's: the shape its settings file takes, streamable HTTP as
    "streamableHttp"); a secret as the agent's reference to its variable where the agent expands one (Codex
    `env_vars` / `bearer_token_env_var`, Claude Code `${VAR}`, opencode `{env:VAR}`, qwen-code and Gemini CLI
    `$VAR`), left out for Copilot CLI, Droid and Cline CLI. Returns each agent's file."""
    files = {
        "codex": home / ".codex" / "config.toml",
        "claude": home / ".claude.json",
        "opencode": home / ".config" / "opencode" / "opencode.json",
        "qwen": home / ".qwen" / "settings.json",
        "gemini": home / ".gemini" / "settings.json",
        "droid": home / ".factory" / "mcp.json",
        "copilot": home / ".copilot" / "mcp-config.json",
        "cline": home / ".cline" / "data" / "settings" / "cline_mcp_settings.json",
    }
    texts = {
        "codex": "".join(_codex_toml(s) for s in servers),
        "claude": _dump({"mcpServers": {s.name: _claude(s) for s in servers}}),
        "opencode": _dump({"mcp": {s.name: _opencode(s) for s in servers}}),
        "qwen": _dump({"mcpServers": {s.name: _qwen(s) for s in servers}}),
        "gemini": _dump({"mcpServers": {s.name: _qwen(s) for s in servers}}),
        "droid": _dump({"mcpServers": {s.name: _droid(s) for s in servers}}),
        "copilot": _dump({"mcpServers": {s.name: _copilot_entry(s) for s in servers}}),
        "cline": _dump({"mcpServers": {s.name: _cline(s) for s in servers}}),
    }
    for agent, path in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(texts[agent])
    return files


def _dump(data: object) -> str:
    return json.dumps(data, indent=2) + "\n"


def _codex_toml(s: Server) -> str:
    lines = [f"[mcp_servers.{s.name}]"]
    if s.remote:
        lines.append(f"url = {json.dumps(s.url)}")
        if s.secret:
            lines.append(f"bearer_token_env_var = {json.dumps(s.secret)}")
    else:
        lines += [f"command = {json.dumps(s.command[0])}", f"args = {json.dumps(list(s.command[1:]))}"]
        if s.secret:
            lines.append(f"env_vars = [{json.dumps(s.secret)}]")
    return "\n".join(lines) + "\n\n"


def _stdio(s: Server, env: dict[str, str]) -> dict[str, object]:
    return {"command": s.command[0], "args": list(s.command[1:]), **({"env": env} if env else {})}


def _claude(s: Server) -> dict[str, object]:
    if s.remote:
        return {
            "type": "http",
            "url": s.url,
            **({"headers": {"Authorization": f"Bearer ${{{s.secret}}}"}} if s.secret else {}),
        }
    return {"type": "stdio", **_stdio(s, {s.secret: f"${{{s.secret}}}"} if s.secret else {})}


def _opencode(s: Server) -> dict[str, object]:
    if s.remote:
        auth = {"headers": {"Authorization": f"Bearer {{env:{s.secret}}}"}} if s.secret else {}
        return {"type": "remote", "url": s.url, **auth}
    env = {"environment": {s.secret: f"{{env:{s.secret}}}"}} if s.secret else {}
    return {"type": "local", "command": list(s.command), **env}


def _qwen(s: Server) -> dict[str, object]:
    if s.remote:  # httpUrl: streamable HTTP (url alone would be SSE)
        return {"httpUrl": s.url, **({"headers": {"Authorization": f"Bearer ${s.secret}"}} if s.secret else {})}
    return _stdio(s, {s.secret: f"${s.secret}"} if s.secret else {})


def _droid(s: Server) -> dict[str, object]:
    return {"type": "http", "url": s.url} if s.remote else {"type": "stdio", **_stdio(s, {})}


def _copilot_entry(s: Server) -> dict[str, object]:
    return {**_droid(s), **({} if s.remote else {"type": "local"}), "tools": ["*"]}


def _cline(s: Server) -> dict[str, object]:
    return {"type": "streamableHttp", "url": s.url} if s.remote else _stdio(s, {})
