"""The MCP format of the agents that keep their servers in a JSON `mcpServers` object (Claude Code, qwen-code,
Gemini CLI, Copilot CLI, Factory Droid, Cline CLI), pure: each agent's module gives a `Spec` of its dialect.

Every dialect is `mcpServers.NAME = {command, args, env}` or `{url, headers}`; they differ in how the transport is
told (a `type` and its values, or `httpUrl` against `url`), how a variable is referenced (`${VAR}`; cline expands
nothing), which timeouts they take and in what unit, and how tools are enabled. A server is read into
agentcfg's model (`read`) and written from it (`edits`), keeping every key of an entry the model does not hold.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentcfg import edit, env
from agentcfg.agents import mcpkit
from agentcfg.agents.base import AgentFile, FileEdit, Texts
from agentcfg.edit import MISSING, REMOVE, Assignment
from agentcfg.lazyclass import dataclass
from agentcfg.mcp.model import VARIABLE_PATTERN, Found, McpServer, pairs, reference_variable, refuses

ROOT = "mcpServers"
_VARIABLE = re.compile(VARIABLE_PATTERN)


@dataclass(frozen=True)
class Timeout:
    """A per-server timeout an agent takes: its key, how many of its units make a second (1000: milliseconds),
    and the seconds it honours (outside them a note says so; the value is still written)."""

    key: str
    per_second: int = 1000
    low: float = 0.0
    high: float = 3600.0


@dataclass(frozen=True)
class Spec:
    """One agent's dialect of `mcpServers`."""

    agent: str  # TRAITS.name
    display: str  # the agent's name in notes ("Claude Code")
    type_key: str | None = "type"  # where the transport is told; None: by the URL's key alone
    types: tuple[tuple[str, str | None], ...] = (("stdio", "stdio"), ("http", "http"), ("sse", "sse"))  # written
    type_aliases: tuple[tuple[str, str], ...] = ()  # more values it reads: (value, transport)
    url_keys: tuple[tuple[str, str], ...] = (("http", "url"), ("sse", "url"))  # transport -> the key of its URL
    untyped_url: str = "http"  # the transport of a `url` with no type
    type_keys_read: tuple[str, ...] = ()  # more keys it reads the type from (cline's transportType): removed
    # A key whose object holds the transport's keys in a newer shape (cline's `{"transport": {...}}`): read, and
    # edited in place where an entry has it.
    nested: str | None = None
    legacy_urls: tuple[tuple[str, str], ...] = ()  # (key, transport) it still reads (Gemini's httpUrl): removed
    # How a variable is referenced, (prefix, suffix); the first is written, all are read. (): it expands nothing.
    references: tuple[tuple[str, str], ...] = (("${", "}"),)
    tool_timeout: Timeout | None = None
    startup_timeout: Timeout | None = None
    tools_key: str | None = None  # the tools enabled (a list); None: it takes no such list
    all_tools: tuple[str, ...] | None = None  # what tools_key holds for "all of them" (None: the key is left out)
    # (key, value) it writes by itself that say nothing (droid's `disabled: false`): not named as unmodelled
    quiet: tuple[tuple[str, Any], ...] = ()
    file_name: str = ""  # the name of its MCP file among `current`'s (the first JSON file when none matches)

    def written_type(self, transport: str) -> str | None:
        return dict(self.types).get(transport)

    def transport_of(self, value: object) -> str | None:
        if not isinstance(value, str):
            return None
        for transport, written in self.types:
            if written == value:
                return transport
        return dict(self.type_aliases).get(value)

    def url_key(self, transport: str) -> str:
        return dict(self.url_keys).get(transport, "url")

    def url_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(["url", *dict(self.url_keys).values(), *dict(self.legacy_urls)]))

    def reference(self, variable: str) -> str:
        prefix, suffix = self.references[0]
        return f"{prefix}{variable}{suffix}"

    def referenced(self, value: str, before: str = "") -> str | None:
        """The variable `value` is exactly a reference to (after `before`, e.g. "Bearer "), in any syntax it reads."""
        for prefix, suffix in self.references:
            if name := reference_variable(value, before + prefix, suffix):
                return name
        return None

    def modelled(self) -> tuple[str, ...]:
        """Every key of an entry that the model holds in this dialect: what an edit sets or removes."""
        keys = [self.type_key, *self.type_keys_read, "command", "args", "env", *self.url_names(), "headers",
                *(t.key for t in (self.tool_timeout, self.startup_timeout) if t), self.tools_key]  # fmt: skip
        return tuple(dict.fromkeys(k for k in keys if k))


def mcp_file(spec: Spec, current: Texts) -> AgentFile | None:
    """The file of `current` that holds the servers."""
    candidates = [f for f in current if f.format == "json"]
    named = [f for f in candidates if f.path.name == spec.file_name]
    found = named or candidates
    return found[0] if found else None


# -- reading ------------------------------------------------------------------------------------------------


def read(spec: Spec, current: Texts, environ: env.Environ) -> list[Found]:
    """Every server of the file (a file that does not parse raises what edit.load raises)."""
    file = mcp_file(spec, current)
    text = current.get(file) if file else None
    if file is None or text is None:
        return []
    data = edit.load("json", text, path=str(file.path), keep=(ROOT,))
    servers = data.get(ROOT) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return []
    shown = env.display(file.path, environ)
    return [
        read_entry(spec, str(name), entry, f"{shown}: {ROOT}.{name}")
        for name, entry in servers.items()
        if isinstance(entry, dict)
    ]


def read_entry(spec: Spec, name: str, entry: Mapping[str, Any], where: str) -> Found:
    """One `mcpServers` entry in agentcfg's model: what it cannot hold is named in `unmodelled`, left out."""
    unmodelled: list[str] = []
    plaintext: list[tuple[str, str]] = []
    fields: dict[str, Any] = {}
    if spec.nested and isinstance(entry.get(spec.nested), dict):
        entry = {**{k: v for k, v in entry.items() if k != spec.nested}, **entry[spec.nested]}

    transport = _transport(spec, entry, unmodelled)
    if transport == "stdio":
        fields["command"] = _command(entry, unmodelled)
    else:
        key = next((k for k, t in spec.legacy_urls if t == transport and k in entry), spec.url_key(transport))
        url = entry.get(key)
        if isinstance(url, str) and not refuses(url):
            fields["url"] = url
        else:
            unmodelled.append(key)
    fields["transport"] = transport

    env_table = entry.get("env")
    if env_table is not None:
        if transport != "stdio" or not isinstance(env_table, dict):
            unmodelled.append("env")
        else:
            fields.update(_env(spec, env_table, unmodelled, plaintext))
    headers = entry.get("headers")
    if headers is not None:
        if transport == "stdio" or not isinstance(headers, dict):
            unmodelled.append("headers")
        else:
            fields.update(_headers(spec, name, headers, where, unmodelled, plaintext))

    for field_name, timeout in (("tool_timeout", spec.tool_timeout), ("startup_timeout", spec.startup_timeout)):
        if timeout and timeout.key in entry:
            value = entry[timeout.key]
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                seconds = value / timeout.per_second
                fields[field_name] = int(seconds) if seconds == int(seconds) else seconds
            else:
                unmodelled.append(timeout.key)
    if spec.tools_key and spec.tools_key in entry:
        tools = entry[spec.tools_key]
        # An empty list enables none (the model's () is all of them): unmodelled.
        if isinstance(tools, list) and tools and all(isinstance(t, str) and not refuses(t) for t in tools):
            fields["tools"] = () if spec.all_tools is not None and tuple(tools) == spec.all_tools else tuple(tools)
        else:
            unmodelled.append(spec.tools_key)

    modelled = set(spec.modelled())
    quiet = dict(spec.quiet)
    for key, value in entry.items():
        if key not in modelled and not (key in quiet and value == quiet[key] and type(value) is type(quiet[key])):
            unmodelled.append(str(key))
    server = McpServer(name=name, **fields)
    return Found(spec.agent, server, where, tuple(plaintext), tuple(dict.fromkeys(unmodelled)))


def _transport(spec: Spec, entry: Mapping[str, Any], unmodelled: list[str]) -> str:
    told = next((entry[k] for k in (spec.type_key, *spec.type_keys_read) if k and k in entry), None)
    transport = spec.transport_of(told)
    local = "command" in entry or not _has_url(spec, entry)
    if transport is not None and (transport == "stdio") == local:
        return transport
    if told is not None:  # a type it does not take, or one its other keys contradict
        unmodelled.append(str(spec.type_key))
    if local:
        return "stdio"
    for key, candidate in spec.legacy_urls:
        if key in entry:
            return candidate
    for candidate, key in spec.url_keys:  # no type: the URL's own key says (qwen-code's httpUrl and url)
        if key != "url" and key in entry:
            return candidate
    return spec.untyped_url


def _has_url(spec: Spec, entry: Mapping[str, Any]) -> bool:
    return any(key in entry for key in spec.url_names())


def _command(entry: Mapping[str, Any], unmodelled: list[str]) -> tuple[str, ...]:
    command = entry.get("command")
    if not isinstance(command, str) or refuses(command) or not command.strip():
        unmodelled.append("command")
        return ()
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) and not refuses(a) for a in args):
        unmodelled.append("args")
        return (command,)
    return (command, *args)


def _env(spec: Spec, table: dict, unmodelled: list[str], plaintext: list[tuple[str, str]]) -> dict[str, Any]:
    plain: list[tuple[str, str]] = []
    secrets: list[str] = []
    for variable, value in table.items():
        if not isinstance(value, str) or not _VARIABLE.fullmatch(variable):
            unmodelled.append(f"env.{variable}")
        elif spec.referenced(value) == variable:  # the model has no renaming: a reference to itself only
            secrets.append(variable)
        elif refuses(value):
            unmodelled.append(f"env.{variable}")
        elif mcpkit.credential(variable, value):  # by its name or its look, as for Codex and opencode
            secrets.append(variable)
            plaintext.append((variable, value))
        else:
            plain.append((variable, value))
    return {"env": pairs(plain), "secrets": tuple(sorted(secrets))}


def _headers(
    spec: Spec, name: str, table: dict, where: str, unmodelled: list[str], plaintext: list[tuple[str, str]]
) -> dict[str, Any]:
    plain: list[tuple[str, str]] = []
    secret: list[tuple[str, str]] = []
    bearer: str | None = None
    for header, value in table.items():
        header = str(header)
        if not isinstance(value, str):
            unmodelled.append(f"headers.{header}")
            continue
        authorization = header.lower() == "authorization" and bearer is None
        if authorization and (variable := spec.referenced(value, "Bearer ")):
            bearer = variable
        elif variable := spec.referenced(value):
            secret.append((header, variable))
        elif refuses(value):
            unmodelled.append(f"headers.{header}")
        elif authorization and value.startswith("Bearer ") and value[7:].strip():
            bearer = mcpkit.invented(name, "TOKEN")
            plaintext.append((bearer, value[7:].strip()))
        elif mcpkit.credential(header, value):
            variable = mcpkit.invented(name, header)
            secret.append((header, variable))
            plaintext.append((variable, value))
        else:
            plain.append((header, value))
    return {"headers": pairs(plain), "secret_headers": pairs(secret), "bearer": bearer}


# -- writing ------------------------------------------------------------------------------------------------


def entry(spec: Spec, server: McpServer) -> tuple[dict[str, Any], list[str]]:
    """The keys the model sets in this dialect (None: not set) and what the agent cannot take of the server."""
    notes: list[str] = []
    keys: dict[str, Any] = dict.fromkeys(spec.modelled())
    if spec.type_key:
        keys[spec.type_key] = spec.written_type(server.transport)
    expands = bool(spec.references)
    if server.remote:
        keys[spec.url_key(server.transport)] = server.url
        headers = dict(server.headers)
        if expands:
            headers.update({h: spec.reference(v) for h, v in server.secret_headers})
            if server.bearer:
                headers["Authorization"] = "Bearer " + spec.reference(server.bearer)
        keys["headers"] = headers or None
    else:
        keys["command"] = server.command[0]
        keys["args"] = list(server.command[1:]) or None
        variables = dict(server.env)
        if expands:
            variables.update({v: spec.reference(v) for v in server.secrets})
        keys["env"] = variables or None
    if server.variables() and not expands:
        secrets = ", ".join(server.variables())
        notes.append(
            f"{spec.display} expands no variable in its MCP settings, so {server.name!r} is written without "
            + (
                f"its secret headers ({secrets}): it sends only what the file holds."
                if server.remote
                else f"its secrets ({secrets}): it gives a server its own environment, so they reach it only when "
                f"set where {spec.display} runs (agentcfg exec)."
            )
        )
    for what, seconds, timeout in (("tool", server.tool_timeout, spec.tool_timeout),
                                   ("startup", server.startup_timeout, spec.startup_timeout)):  # fmt: skip
        if seconds is None:
            continue
        if timeout is None:
            notes.append(f"{spec.display} takes no per-server {what} timeout: {server.name!r} is written without one.")
            continue
        value = seconds * timeout.per_second
        keys[timeout.key] = max(1, round(value)) if timeout.per_second != 1 or value == int(value) else value
        if not timeout.low <= seconds <= timeout.high:
            notes.append(
                f"{spec.display} honours a {what} timeout of {timeout.low:g} to {timeout.high:g} seconds only, "
                f"not {seconds:g} ({server.name!r})."
            )
    if spec.tools_key:
        keys[spec.tools_key] = list(server.tools) if server.tools else _maybe_list(spec.all_tools)
    elif server.tools:
        notes.append(f"{spec.display} takes no list of enabled tools: {server.name!r} is written with all of them.")
    return keys, notes


def _maybe_list(items: tuple[str, ...] | None) -> list[str] | None:
    return None if items is None else list(items)


def _empty(value: Any) -> bool:
    return value == [] or value == {}


def edits(spec: Spec, servers: Mapping[str, McpServer | None], current: Texts) -> list[FileEdit]:
    """Assignments that set each named server (None: remove its entry), keeping every other key of its entry,
    the other servers and the rest of the file as they are; one FileEdit, with what the agent cannot take."""
    file = mcp_file(spec, current)
    if file is None or not servers:
        return []
    text = current.get(file)
    existing = edit.get("json", text, (ROOT,), path=str(file.path)) if text and text.strip() else MISSING
    existing = existing if isinstance(existing, dict) else {}
    assignments: list[Assignment] = []
    notes: list[str] = []
    for name, server in servers.items():
        if server is None:
            if name in existing:
                assignments.append(((ROOT, name), REMOVE))
            continue
        keys, said = entry(spec, server)
        notes += said
        now = existing.get(name)
        if not isinstance(now, dict):  # new (or not an object): the whole entry at once, in the dialect's order
            assignments.append(((ROOT, name), {k: v for k, v in keys.items() if v is not None}))
            continue
        if spec.nested and isinstance(now.get(spec.nested), dict):  # the transport's keys where they are
            inner = dict(now[spec.nested])
            for key in (spec.type_key, *spec.type_keys_read, "command", "args", "env", *spec.url_names(), "headers"):
                value = keys.pop(key, None) if key else None
                if value is None:
                    inner.pop(key or "", None)
                else:
                    inner[key or ""] = value
            assignments.append(((ROOT, name, spec.nested), inner))
        for key, value in keys.items():
            if value is None:
                same_type = key == spec.type_key and spec.transport_of(now.get(key)) == server.transport
                if key in now and not same_type and not (_empty(now[key]) and key in ("args", "env", "headers")):
                    assignments.append(((ROOT, name, key), REMOVE))
            else:
                assignments.append(((ROOT, name, key), value))
    return [FileEdit(file, assignments, tuple(dict.fromkeys(notes)))] if assignments or notes else []
