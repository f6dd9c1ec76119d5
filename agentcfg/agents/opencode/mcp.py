"""opencode's MCP servers: `mcp.NAME` of the config file agentcfg edits (opencode.json/.jsonc in its config
directory, or OPENCODE_CONFIG), as opencode 1.18.33's config schema and MCP client have them.

- local: `{"type": "local", "command": [program, args...], "environment": {...}, "cwd", "enabled", "timeout"}`;
  it runs the command with its own environment plus `environment`.
- remote: `{"type": "remote", "url", "headers": {...}, "oauth", "enabled", "timeout"}`; opencode tries streamable
  HTTP first, then SSE, on the same URL: an SSE server is written as a remote one, and reads back as "http".
- `timeout` (milliseconds; 30000 when absent) bounds every request to the server: connecting (initialize), the
  tool list, and each tool call (`experimental.mcp_timeout` is its default). It is the model's tool timeout;
  opencode takes no separate startup timeout (a note says it is left out), nor a list of enabled tools.
- `{env:VAR}` is replaced by VAR's value in the raw text before it is parsed: a secret is written as `{env:VAR}`
  (`"Authorization": "Bearer {env:VAR}"` for a bearer). A variable given another's value
  (`"GITHUB_TOKEN": "{env:GH}"`) is not agentcfg's: it is kept as the user's own.
- `{"enabled": false}` without a type turns off a server defined elsewhere: not a server, not read.

An entry that is not an object, has no type opencode knows, or whose name agentcfg's model does not hold, is not
read (nothing could write it back); an edit of that name sets what agentcfg writes over it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcfg import env
from agentcfg.agents import mcpkit
from agentcfg.agents.base import FileEdit, Texts
from agentcfg.edit import MISSING, REMOVE, Assignment
from agentcfg.mcp.model import Found, McpServer, reference_variable

AGENT = "opencode"
ROOT = "mcp"
LOCAL_KEYS = ("command", "environment", "cwd")
REMOTE_KEYS = ("url", "headers", "oauth")
MODELLED = {
    "local": frozenset({"type", "command", "environment", "timeout"}),
    "remote": frozenset({"type", "url", "headers", "timeout"}),
}


def _reference(text: str, prefix: str = "") -> str | None:
    return reference_variable(text, prefix + "{env:", "}")


def _local(reading: mcpkit.Reading, entry: dict) -> None:
    command = mcpkit.strings(entry.get("command"))
    if command and command[0].strip():
        reading.command = command
    else:
        reading.unmodelled.append("command")
    variables = entry.get("environment", {})
    if not isinstance(variables, dict):
        reading.unmodelled.append("environment")
    for name, text in (variables if isinstance(variables, dict) else {}).items():
        if mcpkit.variable(name) and isinstance(text, str) and _reference(text) == name:
            reading.secret(name)
        elif mcpkit.variable(name) and mcpkit.value(text):
            reading.literal_env(name, text)
        else:
            reading.unmodelled.append(f"environment.{name}")


def _remote(reading: mcpkit.Reading, entry: dict) -> None:
    mcpkit.read_url(reading, entry)
    headers = entry.get("headers", {})
    if not isinstance(headers, dict):
        reading.unmodelled.append("headers")
    for name, text in (headers if isinstance(headers, dict) else {}).items():
        where = f"headers.{name}"
        if not mcpkit.header(name) or not isinstance(text, str):
            reading.unmodelled.append(where)
        elif name.lower() == "authorization" and (bearer := _reference(text, "Bearer ")) and reading.bearer is None:
            reading.bearer = bearer
        elif variable := _reference(text):
            reading.secret_headers[name] = variable
        elif mcpkit.value(text):
            reading.literal_header(name, text, where)
        else:
            reading.unmodelled.append(where)


def _read(name: str, entry: dict) -> mcpkit.Reading | None:
    kind = entry.get("type")
    if kind not in MODELLED:
        return None
    reading = mcpkit.Reading(name)
    reading.unmodelled.extend(key for key in mcpkit.entry_keys(entry) if key not in MODELLED[kind])
    (_local if kind == "local" else _remote)(reading, entry)
    if "timeout" in entry:
        reading.tool_timeout = mcpkit.seconds(entry["timeout"], 1000)
        if reading.tool_timeout is None or not isinstance(entry["timeout"], int):
            reading.tool_timeout = None
            reading.unmodelled.append("timeout")
    return reading


def mcp_read(current: Texts, environ: env.Environ) -> list[Found]:
    found = []
    for name, entry, where in mcpkit.entries(current, environ, ROOT):
        if reading := _read(name, entry):
            found.append(reading.found(AGENT, "stdio" if entry["type"] == "local" else "http", where))
    return found


def _headers(server: McpServer) -> dict[str, str]:
    """What the `headers` of a remote server hold: its plain headers, its secrets as `{env:VAR}`."""
    headers = dict(server.headers)
    headers.update((name, f"{{env:{variable}}}") for name, variable in server.secret_headers)
    if server.bearer:
        headers["Authorization"] = f"Bearer {{env:{server.bearer}}}"
    return headers


def _server_edits(server: McpServer, entry: dict) -> list[Assignment]:
    path = (ROOT, server.name)
    kind = "remote" if server.remote else "local"
    reading = _read(server.name, entry) if entry.get("type") == kind else None
    unmodelled = reading.unmodelled if reading else []
    out: list[Assignment] = [
        ((*path, key), REMOVE) for key in (REMOTE_KEYS if kind == "local" else LOCAL_KEYS) if key in entry
    ]
    out.append(((*path, "type"), kind))
    if kind == "local":
        if server.command:  # () only in what was read from a command the model does not hold: kept
            out.append(((*path, "command"), list(server.command)))
        key = "environment"
        target = {**dict(server.env), **{name: f"{{env:{name}}}" for name in server.secrets}}
    else:
        if server.url:  # None only in what was read from a URL the model does not hold: kept
            out.append(((*path, "url"), server.url))
        key, target = "headers", _headers(server)
    there = entry.get(key, MISSING)
    kept = [k for k in there if f"{key}.{k}" in unmodelled] if isinstance(there, dict) else []
    if isinstance(there, dict) or key not in unmodelled or target:
        out.extend(mcpkit.table_edits((*path, key), there, target, kept))
    timeout = None if server.tool_timeout is None else max(1, round(server.tool_timeout * 1000))  # a whole ms, > 0
    out.extend(mcpkit.key_edit(path, entry, "timeout", timeout, unmodelled))
    return out


def _notes(server: McpServer) -> list[str]:
    notes = []
    if server.startup_timeout is not None:
        notes.append(
            f"opencode: takes no startup timeout of its own (its `timeout` bounds every request, the start among "
            f"them; agentcfg writes the tool timeout there): left out for {server.name!r}"
        )
    if server.tools:
        notes.append(f"opencode: takes no list of a server's enabled tools: left out for {server.name!r}")
    return notes


def mcp_edits(servers: Mapping[str, McpServer | None], current: Texts) -> list[FileEdit]:
    ((config_file, text),) = current.items()
    there = mcpkit.servers_table(config_file, text, ROOT)
    assignments: list[Assignment] = []
    notes: list[str] = []
    for name, server in servers.items():
        entry: Any = there.get(name, MISSING)
        if server is None:
            assignments += [((ROOT, name), REMOVE)] if entry is not MISSING else []
        elif entry is not MISSING and not isinstance(entry, dict):
            fresh = _server_edits(server, {})
            assignments.append(((ROOT, name), {keypath[-1]: value for keypath, value in fresh}))
            notes += _notes(server)
        else:
            assignments += _server_edits(server, entry if isinstance(entry, dict) else {})
            notes += _notes(server)
    left = set(there) - {name for name, server in servers.items() if server is None}
    if there and not left and all(server is None for server in servers.values()):
        assignments = [((ROOT,), REMOVE)]  # no `"mcp": {}` left behind by removing the last server
    return [FileEdit(config_file, assignments, tuple(notes))] if assignments or notes else []
