"""One MCP server as agentcfg keeps it, pure: what each agent's format is written from and read back into.

A server's secrets are never in it: only the names of the variables that hold them. Their values live in the
keyring (`secret_name`), and reach a server through its agent's environment: each agent's file references the
variable in the agent's own syntax (Claude Code `${VAR}`, opencode `{env:VAR}`, qwen-code `${VAR}`, Codex
`env_vars`/`bearer_token_env_var`), and `agentcfg exec` puts the value there.

Everything agentcfg writes is checked first (`check`): no control character, and nothing an agent would
expand (each agent's syntax, and Crush's `$(...)` and backticks, which run a shell): a value is written as it
is, a secret only ever as agentcfg's own reference to its variable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any

from agentcfg import fields
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.patterns import lazy

TRANSPORTS = ("stdio", "http", "sse")  # http: streamable HTTP
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}"  # a bare key in every format (TOML, JSON), a CLI word
VARIABLE_PATTERN = r"[A-Za-z_][A-Za-z0-9_]{0,127}"
HEADER_PATTERN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}"  # an HTTP token
SECRET_PREFIX = "mcp:"  # keyring names: never a profile's (profile names have no colon)
# What an agent expands in what agentcfg writes (fields.TEMPLATE_PATTERN: opencode, qwen-code, Claude Code,
# Gemini CLI) and what runs a shell (Crush: `$(...)` in headers; a backtick too).
_EXPANDED = lazy(rf"{fields.TEMPLATE_PATTERN}|\$\(|`")
_CONTROL = lazy(fields.CONTROL_CLASS)
_NAME = lazy(NAME_PATTERN)
_VARIABLE = lazy(VARIABLE_PATTERN)
_HEADER = lazy(HEADER_PATTERN)
_URL = lazy(fields.URL_PATTERN)


@dataclass(frozen=True)
class McpServer:
    """One MCP server: a command (stdio) or a URL (streamable HTTP, SSE), what it is given, and each agent's
    options where they take them. Equal servers are the same definition, whichever agent they were read from."""

    name: str
    command: tuple[str, ...] = ()  # stdio: the program and its arguments
    url: str | None = None  # http / sse
    transport: str = "stdio"
    env: tuple[tuple[str, str], ...] = ()  # plain variables of a stdio server, sorted
    secrets: tuple[str, ...] = ()  # variables of a stdio server whose values are secrets (keyring), sorted
    headers: tuple[tuple[str, str], ...] = ()  # plain headers of a remote server, sorted
    bearer: str | None = None  # a remote server's token: the variable sent as `Authorization: Bearer`
    secret_headers: tuple[tuple[str, str], ...] = ()  # (header, variable): a header whose whole value is a secret
    startup_timeout: float | None = None  # seconds the agent waits for it to start (where an agent takes one)
    tool_timeout: float | None = None  # seconds a tool call may take (where an agent takes one)
    tools: tuple[str, ...] = ()  # the tools enabled; (): all of them
    agents: tuple[str, ...] = ()  # the agents it is written to; (): every installed one (agentcfg's set only)

    @property
    def remote(self) -> bool:
        return self.transport != "stdio"

    def variables(self) -> tuple[str, ...]:
        """Every variable whose value is a secret, in order: what the keyring holds for it."""
        found = [*self.secrets, *([self.bearer] if self.bearer else []), *(v for _, v in self.secret_headers)]
        return tuple(dict.fromkeys(found))

    def comparable(self) -> McpServer:
        """The definition without the agents it is limited to (what two agents' copies are compared by)."""
        from dataclasses import replace

        return replace(self, agents=())


@dataclass(frozen=True)
class Found:
    """A server as one agent's file has it, read into the model."""

    agent: str
    server: McpServer
    where: str  # the file and key path, as shown ("~/.codex/config.toml: mcp_servers.github")
    # (variable or header, value) written in the file as they are, which the model holds as secrets: import moves
    # them to the keyring. Never shown.
    plaintext: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    # What it has that agentcfg's model does not hold (its own keys, a value agentcfg would not write): kept
    # as it is by an edit, named by `mcp list`.
    unmodelled: tuple[str, ...] = ()


def secret_name(variable: str) -> str:
    """The keyring name of a secret variable's value (one per variable: an agent's environment holds one)."""
    return SECRET_PREFIX + variable


def pairs(mapping: Mapping[str, str] | Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """A mapping as the model holds one: sorted pairs."""
    items = mapping.items() if isinstance(mapping, Mapping) else mapping
    return tuple(sorted((str(k), str(v)) for k, v in items))


def _value(what: str, value: str, where: str) -> None:
    if found := _CONTROL.search(value):
        raise AgentcfgError(
            f"{what} contains the control character U+{ord(found.group()):04X}",
            where=where,
            hint="Remove it: agentcfg never writes a control character into an agent's file.",
        )
    if found := _EXPANDED.search(value):
        snippet = value[found.start() : found.start() + 12]
        raise AgentcfgError(
            f"{what} contains {snippet!r}: an agent expands that ($VAR, ${{VAR}}, {{env:VAR}}, {{file:PATH}}) "
            "or runs it in a shell ($(...), backticks), so a value could become a secret or a command",
            where=where,
            hint="Write the value literally. A secret goes in with --secret VAR (kept in the keyring; each agent is "
            "given its own reference to VAR).",
        )


def check(server: McpServer, where: str = "mcp server") -> McpServer:
    """The server when agentcfg may write it (else an AgentcfgError saying what and where)."""
    where = f"{where} {server.name!r}" if server.name else where
    if not _NAME.fullmatch(server.name):
        raise AgentcfgError(
            f"{server.name!r} is not a name agentcfg writes for an MCP server",
            where=where,
            hint="Use letters, digits, '-' and '_' (at most 64, starting with a letter or digit).",
        )
    if server.transport not in TRANSPORTS:
        raise AgentcfgError(f"transport {server.transport!r} is not one of {', '.join(TRANSPORTS)}", where=where)
    if server.remote == (not server.url) or (not server.remote) == (not server.command):
        raise AgentcfgError(
            "a server is either a command (stdio) or a URL (http, sse)",
            where=where,
            hint="`agentcfg mcp add NAME -- COMMAND ARGS...` or `agentcfg mcp add NAME --url URL`.",
        )
    if server.url is not None and not (_URL.fullmatch(server.url) and "@" not in server.url.split("/")[2]):
        raise AgentcfgError(
            f"{server.url!r} is not an http(s) URL agentcfg writes",
            where=where,
            hint="Give http(s)://host[:port]/path, without user:password@ (a token goes in with --secret VAR).",
        )
    if server.remote and (server.env or server.secrets):
        raise AgentcfgError("a remote server takes no variables", where=where, hint="Use --header or --secret.")
    if not server.remote and (server.headers or server.bearer or server.secret_headers):
        raise AgentcfgError("a stdio server takes no headers", where=where, hint="Use --env or --secret.")
    for word in (*server.command, server.url or "", *server.tools):
        _value("a value", word, where)
    if server.command and not server.command[0].strip():
        raise AgentcfgError("the command is empty", where=where)
    for variable, value in server.env:
        _variable(variable, where)
        _value(f"--env {variable}", value, where)
    for variable in (*server.secrets, *([server.bearer] if server.bearer else [])):
        _variable(variable, where)
    for header, value in server.headers:
        _header(header, where)
        _value(f"header {header}", value, where)
    for header, variable in server.secret_headers:
        _header(header, where)
        _variable(variable, where)
    clash = {v for v, _ in server.env} & set(server.secrets)
    if clash:
        raise AgentcfgError(f"{sorted(clash)[0]} is both a plain variable and a secret", where=where)
    for what, seconds in (("startup timeout", server.startup_timeout), ("tool timeout", server.tool_timeout)):
        if seconds is not None and not 0 < seconds <= 3600:
            raise AgentcfgError(f"the {what} must be more than 0 and at most 3600 seconds, not {seconds}", where=where)
    return server


def _variable(name: str, where: str) -> None:
    if not _VARIABLE.fullmatch(name) or fields.reserved(name):
        raise AgentcfgError(
            f"{name!r} is not a variable agentcfg gives an MCP server",
            where=where,
            hint="Name it with letters, digits and '_' (not starting with a digit), and not PATH, HOME or another "
            "variable the system sets.",
        )


def _header(name: str, where: str) -> None:
    if not _HEADER.fullmatch(name):
        raise AgentcfgError(f"{name!r} is not a header name", where=where)


def from_dict(name: str, data: Mapping[str, Any], where: str) -> McpServer:
    """A server from agentcfg's own set file (store) or --json: the inverse of `to_dict`."""

    def strings(key: str) -> tuple[str, ...]:
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise AgentcfgError(f"{key!r} must be a list of strings", where=f"{where}: {name}")
        return tuple(value)

    def table(key: str) -> tuple[tuple[str, str], ...]:
        value = data.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise AgentcfgError(f"{key!r} must be a table of strings", where=f"{where}: {name}")
        return pairs(value)

    def seconds(key: str) -> float | None:
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise AgentcfgError(f"{key!r} must be a number of seconds", where=f"{where}: {name}")
        return value

    def text(key: str) -> str | None:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise AgentcfgError(f"{key!r} must be a string", where=f"{where}: {name}")
        return value

    known = {"command", "url", "transport", "env", "secrets", "headers", "bearer", "secret_headers",
             "startup_timeout", "tool_timeout", "tools", "agents"}  # fmt: skip
    if unknown := sorted(set(data) - known):
        raise AgentcfgError(
            f"unknown key {unknown[0]!r}", where=f"{where}: {name}", hint=f"Known: {', '.join(sorted(known))}."
        )
    url = text("url")
    server = McpServer(
        name=name,
        command=strings("command"),
        url=url,
        transport=text("transport") or ("http" if url else "stdio"),
        env=table("env"),
        secrets=tuple(sorted(strings("secrets"))),
        headers=table("headers"),
        bearer=text("bearer"),
        secret_headers=table("secret_headers"),
        startup_timeout=seconds("startup_timeout"),
        tool_timeout=seconds("tool_timeout"),
        tools=strings("tools"),
        agents=strings("agents"),
    )
    return check(server, where)


def to_dict(server: McpServer) -> dict[str, Any]:
    """The server as agentcfg's set file and --json hold it: only what is set (never a secret's value)."""
    data: dict[str, Any] = {}
    if server.command:
        data["command"] = list(server.command)
    if server.url:
        data["url"] = server.url
        data["transport"] = server.transport
    for key, value in (("env", server.env), ("headers", server.headers), ("secret_headers", server.secret_headers)):
        if value:
            data[key] = dict(value)
    for key, items in (("secrets", server.secrets), ("tools", server.tools), ("agents", server.agents)):
        if items:
            data[key] = list(items)
    for key, item in (("bearer", server.bearer), ("startup_timeout", server.startup_timeout),
                      ("tool_timeout", server.tool_timeout)):  # fmt: skip
        if item is not None:
            data[key] = item
    return data


def differences(a: McpServer, b: McpServer) -> list[str]:
    """The fields in which two copies of a server differ (by name, never by value: a value may be a secret)."""
    first, second = to_dict(a.comparable()), to_dict(b.comparable())
    return sorted(k for k in set(first) | set(second) if first.get(k) != second.get(k))


def refuses(value: str) -> bool:
    """Whether a value is one agentcfg would not write (template syntax, a shell, a control character)."""
    return bool(_EXPANDED.search(value) or _CONTROL.search(value))


def reference_variable(value: str, prefix: str, suffix: str = "") -> str | None:
    """The variable a value is exactly a reference to, in one agent's syntax (Claude Code: prefix "${", suffix
    "}"; opencode "{env:", "}"; qwen-code "$"; a bearer header "Bearer ${", "}"); None: it is something else."""
    if not (value.startswith(prefix) and value.endswith(suffix) and len(value) > len(prefix) + len(suffix)):
        return None
    name = value[len(prefix) : len(value) - len(suffix)]
    return name if _VARIABLE.fullmatch(name) else None
