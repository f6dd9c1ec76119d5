"""Codex's MCP servers: the `[mcp_servers.NAME]` tables of `$CODEX_HOME/config.toml` (as seen in codex 0.171.0:
`codex mcp add/list --json/get NAME --json`, and the config schema in its binary).

- stdio: `command` (a string), `args`, `env` (a table of strings, passed as they are), `env_vars` (variables
  passed through from Codex's own environment: a name, or `{name, source = "local"|"remote"}`), `cwd`.
- streamable HTTP: `url`, `bearer_token_env_var` (the variable sent as `Authorization: Bearer`), `http_headers`
  (as they are), `env_http_headers` (header -> the variable holding its value). A literal `bearer_token` makes
  Codex refuse the file.
- both: `startup_timeout_sec` (seconds, a float; the older `startup_timeout_ms` counts where `_sec` is absent),
  `tool_timeout_sec`, `enabled_tools` (`[]` enables none: not agentcfg's "all"), and the user's own: `enabled`,
  `disabled_tools`, `tools.NAME.approval_mode`, `oauth`, `scopes`, ...
- Codex expands nothing in these values: a secret reaches a stdio server through `env_vars`, a bearer through
  `bearer_token_env_var`, a secret header through `env_http_headers`; `agentcfg exec` puts the values in Codex's
  environment.
- No SSE: a `url` is always streamable HTTP (a `transport` or `type` key is ignored). An SSE server is not written
  (a note says so): Codex could not talk to it.
- A stdio key on a URL server (or the reverse) makes Codex refuse the whole file: an edit that changes a server's
  kind removes the other kind's keys, the user's own among them.

An entry that is not a table, or has neither `command` nor `url` (Codex refuses both), or whose name agentcfg's
model does not hold, is not read (nothing could write it back); an edit of that name replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcfg import env
from agentcfg.agents import mcpkit
from agentcfg.agents.base import FileEdit, Texts
from agentcfg.edit import MISSING, REMOVE, Assignment
from agentcfg.mcp.model import Found, McpServer

AGENT = "codex"
ROOT = "mcp_servers"
STDIO_KEYS = ("command", "args", "env", "env_vars", "cwd")
REMOTE_KEYS = ("url", "bearer_token_env_var", "bearer_token", "http_headers", "env_http_headers")
COMMON = ("startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec", "enabled_tools")
MODELLED = {
    "stdio": frozenset({"command", "args", "env", "env_vars", *COMMON}),
    "http": frozenset({"url", "bearer_token_env_var", "http_headers", "env_http_headers", *COMMON}),
}


def _env_var(item: object) -> str | None:
    """The variable an `env_vars` entry passes from Codex's environment (None: one the model does not hold)."""
    if isinstance(item, dict):
        if item.get("source", "local") != "local" or set(item) - {"name", "source"}:
            return None
        item = item.get("name")
    return item if isinstance(item, str) and mcpkit.variable(item) else None


def _stdio(reading: mcpkit.Reading, entry: dict) -> None:
    command, args = entry.get("command"), entry.get("args", [])
    words = mcpkit.strings(args)
    if not mcpkit.value(command) or not str(command).strip():
        reading.unmodelled.append("command")
    if words is None:
        reading.unmodelled.append("args")
    if mcpkit.value(command) and str(command).strip() and words is not None:
        reading.command = (str(command), *words)
    variables = entry.get("env", {})
    if not isinstance(variables, dict):
        reading.unmodelled.append("env")
    for name, text in (variables if isinstance(variables, dict) else {}).items():
        if mcpkit.variable(name) and mcpkit.value(text):
            reading.literal_env(name, text)
        else:
            reading.unmodelled.append(f"env.{name}")
    passed = entry.get("env_vars", [])
    if not isinstance(passed, list):
        reading.unmodelled.append("env_vars")
    for index, item in enumerate(passed if isinstance(passed, list) else []):
        if name := _env_var(item):
            reading.secret(name)
        else:
            label = item.get("name") if isinstance(item, dict) else item
            reading.unmodelled.append(f"env_vars.{label if isinstance(label, str) else index}")


def _remote(reading: mcpkit.Reading, entry: dict) -> None:
    mcpkit.read_url(reading, entry)
    bearer = entry.get("bearer_token_env_var")
    if mcpkit.variable(bearer):
        reading.bearer = bearer
    elif bearer is not None:
        reading.unmodelled.append("bearer_token_env_var")
    secret = entry.get("env_http_headers", {})
    for name, variable in (secret if isinstance(secret, dict) else {}).items():
        if mcpkit.header(name) and mcpkit.variable(variable):
            reading.secret_headers[name] = variable
        else:
            reading.unmodelled.append(f"env_http_headers.{name}")
    if not isinstance(secret, dict):
        reading.unmodelled.append("env_http_headers")
    plain = entry.get("http_headers", {})
    for name, text in (plain if isinstance(plain, dict) else {}).items():
        if mcpkit.header(name) and mcpkit.value(text):
            reading.literal_header(name, text, f"http_headers.{name}")
        else:
            reading.unmodelled.append(f"http_headers.{name}")
    if not isinstance(plain, dict):
        reading.unmodelled.append("http_headers")


def _common(reading: mcpkit.Reading, entry: dict) -> None:
    if "startup_timeout_sec" in entry:
        reading.startup_timeout = mcpkit.seconds(entry["startup_timeout_sec"])
        if reading.startup_timeout is None:
            reading.unmodelled.append("startup_timeout_sec")
        elif "startup_timeout_ms" in entry and mcpkit.seconds(entry["startup_timeout_ms"], 1000) is None:
            reading.unmodelled.append("startup_timeout_ms")  # shadowed, and not one agentcfg would write
    elif "startup_timeout_ms" in entry:
        reading.startup_timeout = mcpkit.seconds(entry["startup_timeout_ms"], 1000)
        if reading.startup_timeout is None:
            reading.unmodelled.append("startup_timeout_ms")
    if "tool_timeout_sec" in entry:
        reading.tool_timeout = mcpkit.seconds(entry["tool_timeout_sec"])
        if reading.tool_timeout is None:
            reading.unmodelled.append("tool_timeout_sec")
    if "enabled_tools" in entry:
        tools = mcpkit.strings(entry["enabled_tools"])
        if tools:
            reading.tools = tools
        else:
            reading.unmodelled.append("enabled_tools")


def _kind(entry: dict) -> str | None:
    """stdio or http as Codex takes the entry (with both keys it refuses the file; agentcfg reads the command)."""
    return "stdio" if "command" in entry else "http" if "url" in entry else None


def _read(name: str, entry: dict) -> tuple[mcpkit.Reading, str] | None:
    kind = _kind(entry)
    if kind is None:
        return None
    reading = mcpkit.Reading(name)
    reading.unmodelled.extend(key for key in mcpkit.entry_keys(entry) if key not in MODELLED[kind])
    (_stdio if kind == "stdio" else _remote)(reading, entry)
    _common(reading, entry)
    return reading, kind


def mcp_read(current: Texts, environ: env.Environ) -> list[Found]:
    found = []
    for name, entry, where in mcpkit.entries(current, environ, ROOT):
        if read := _read(name, entry):
            found.append(read[0].found(AGENT, read[1], where))
    return found


def _env_vars(current: Any, secrets: tuple[str, ...], unmodelled: list[str]) -> list[Any] | None:
    """`env_vars` holding `secrets`: the entries there kept in place (the user's own too), the new ones after."""
    if not isinstance(current, list):
        return list(secrets) if secrets or "env_vars" not in unmodelled else None
    kept = [item for item in current if _env_var(item) in secrets or _env_var(item) is None]
    there = {_env_var(item) for item in kept}
    return kept + [name for name in secrets if name not in there]


def _server_edits(server: McpServer, entry: Any) -> list[Assignment]:
    path = (ROOT, server.name)
    kind = "http" if server.remote else "stdio"
    entry = entry if isinstance(entry, dict) else {}
    read = _read(server.name, entry) if entry else None
    unmodelled = read[0].unmodelled if read and read[1] == kind else []
    out: list[Assignment] = [
        ((*path, key), REMOVE) for key in (REMOTE_KEYS if kind == "stdio" else STDIO_KEYS) if key in entry
    ]

    def table(key: str, target: Mapping[str, str]) -> None:
        there = entry.get(key, MISSING)
        kept = [k for k in there if f"{key}.{k}" in unmodelled] if isinstance(there, dict) else []
        if isinstance(there, dict) or key not in unmodelled or target:
            out.extend(mcpkit.table_edits((*path, key), there, target, kept))

    def scalar(key: str, wanted: Any) -> None:
        out.extend(mcpkit.key_edit(path, entry, key, wanted, unmodelled))

    if kind == "stdio":
        if server.command:  # () only in what was read from a command the model does not hold: kept
            scalar("command", server.command[0])
        # the user's args go with the command it replaces (odd ones too); `args = []` means none as well: kept
        if server.command and (server.command[1:] or entry.get("args", []) != []):
            out.append(((*path, "args"), list(server.command[1:]) or REMOVE))
        table("env", dict(server.env))
        passed = _env_vars(entry.get("env_vars", MISSING), server.secrets, unmodelled)
        if passed is not None:
            scalar("env_vars", passed or None)
    else:
        if server.url:  # None only in what was read from a URL the model does not hold: kept
            scalar("url", server.url)
        scalar("bearer_token_env_var", server.bearer)
        table("http_headers", dict(server.headers))
        table("env_http_headers", dict(server.secret_headers))
    startup = server.startup_timeout
    scalar("startup_timeout_sec", None if startup is None else mcpkit.whole(startup))
    if startup is not None and "startup_timeout_ms" in entry:
        out.append(((*path, "startup_timeout_ms"), REMOVE))  # else it would be read instead of a later _sec
    else:
        scalar("startup_timeout_ms", None)
    scalar("tool_timeout_sec", None if server.tool_timeout is None else mcpkit.whole(server.tool_timeout))
    scalar("enabled_tools", list(server.tools) or None)
    return out


def mcp_edits(servers: Mapping[str, McpServer | None], current: Texts) -> list[FileEdit]:
    ((config_file, text),) = current.items()
    there = mcpkit.servers_table(config_file, text, ROOT)
    assignments: list[Assignment] = []
    notes = []
    for name, server in servers.items():
        entry = there.get(name, MISSING)
        if server is None:
            assignments += [((ROOT, name), REMOVE)] if entry is not MISSING else []
        elif server.transport == "sse":
            notes.append(f"codex: takes no SSE server (only streamable HTTP): {name!r} left out")
        elif entry is not MISSING and not isinstance(entry, dict):
            assignments.append(((ROOT, name), _fresh(server)))  # the user's non-table is not a server: replaced
        else:
            assignments += _server_edits(server, entry)
    return [FileEdit(config_file, assignments, tuple(notes))] if assignments or notes else []


def _fresh(server: McpServer) -> dict:
    """A whole new entry (where a leaf-by-leaf edit cannot go)."""
    return {keypath[-1]: value for keypath, value in _server_edits(server, {}) if value is not REMOVE}
