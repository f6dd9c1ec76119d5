"""What the agents' MCP formats share (agents/*/mcp.py): which values of a server's entry agentcfg's model holds,
the variable a secret written in plaintext moves to, and the edits that keep what it does not hold.

An agent's entry is read into a `Reading`: the model's fields, the plaintext secrets found (import moves them to
the keyring) and the names of what the model does not hold (`env.FOO`, `cwd`): an edit keeps each of those.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import field
from typing import Any

from agentcfg import edit, env, fields
from agentcfg.agents.base import AgentFile, Header, Texts, is_credential
from agentcfg.edit import MISSING, REMOVE, Assignment
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.mcp import model
from agentcfg.mcp.model import Found, McpServer
from agentcfg.patterns import lazy

_VARIABLE = lazy(model.VARIABLE_PATTERN)
_HEADER = lazy(model.HEADER_PATTERN)
_NAME = lazy(model.NAME_PATTERN)


def server_name(name: object) -> bool:
    """A name agentcfg's model holds (others are left out of what is read: nothing could write them back)."""
    return isinstance(name, str) and bool(_NAME.fullmatch(name))


def variable(name: object) -> bool:
    """A variable name agentcfg gives a server (not PATH, HOME or another the system sets)."""
    return isinstance(name, str) and bool(_VARIABLE.fullmatch(name)) and not fields.reserved(name)


def header(name: object) -> bool:
    return isinstance(name, str) and bool(_HEADER.fullmatch(name))


def value(text: object) -> bool:
    """A string agentcfg would write as it is (no template, no shell, no control character)."""
    return isinstance(text, str) and not model.refuses(text)


def url(text: object) -> bool:
    """An http(s) URL agentcfg writes (model.check's own rule)."""
    if not isinstance(text, str):
        return False
    try:
        model.check(McpServer(name="x", url=text, transport="http"))
    except AgentcfgError:
        return False
    return True


def read_url(reading: Reading, entry: Mapping[str, Any]) -> None:
    """A remote entry's `url` into the reading, or named as not modelled."""
    address = entry.get("url")
    if url(address):
        reading.url = address
    else:
        reading.unmodelled.append("url")


def seconds(number: object, per_second: int = 1) -> float | None:
    """A timeout in the model's seconds (per_second: the file's units in a second, 1000 for milliseconds); None: not
    one it holds."""
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        return None
    result = number / per_second  # not * 0.001: 7137 ms is 7.137 s, as written back
    return float(result) if 0 < result <= 3600 else None


def whole(number: float) -> int | float:
    """A number as written: 30, not 30.0 (both mean the same to the agents)."""
    return int(number) if float(number).is_integer() else number


def credential(name: str, text: str) -> bool:
    """A literal variable or header the user wrote that is a secret by its name or its look."""
    return is_credential(Header(name, "", value=text))


def invented(server: str, suffix: str) -> str:
    """The variable a plaintext secret of `server` moves to: `<SERVER>_<SUFFIX>`, upper-case, '_' for the rest."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", f"{server}_{suffix}").upper()
    return name if _VARIABLE.fullmatch(name) and not fields.reserved(name) else f"MCP_{name}"


@dataclass
class Reading:
    """One server's entry as it is read: what goes into the model, and what does not."""

    name: str
    command: tuple[str, ...] = ()
    url: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    bearer: str | None = None
    secret_headers: dict[str, str] = field(default_factory=dict)
    startup_timeout: float | None = None
    tool_timeout: float | None = None
    tools: tuple[str, ...] = ()
    plaintext: list[tuple[str, str]] = field(default_factory=list)
    unmodelled: list[str] = field(default_factory=list)

    def literal_env(self, name: str, text: str) -> None:
        """A variable written as it is: plain, or a secret (its value to the keyring) when it is a credential."""
        if credential(name, text):
            self.secret(name)
            self.plaintext.append((name, text))
        else:
            self.env[name] = text

    def secret(self, name: str) -> None:
        if name not in self.secrets:
            self.secrets.append(name)

    def literal_header(self, name: str, text: str, where: str) -> None:
        """A header written as it is: `Authorization: Bearer TOKEN` a bearer, a credential a secret header (each
        moved to a variable of its own), any other a plain header."""
        scheme, _, token = text.partition(" ")
        if name.lower() == "authorization" and scheme.lower() == "bearer" and token.strip() and self.bearer is None:
            self.bearer = invented(self.name, "TOKEN")
            self.plaintext.append((self.bearer, token.strip()))
        elif credential(name, text):
            moved = invented(self.name, name)
            self.secret_headers[name] = moved
            self.plaintext.append((moved, text))
        elif name in self.headers or name in self.secret_headers:
            self.unmodelled.append(where)
        else:
            self.headers[name] = text

    def found(self, agent: str, transport: str, where: str) -> Found:
        clash = sorted(set(self.env) & set(self.secrets))  # a plain value and a secret of one variable
        for name in clash:
            del self.env[name]
        server = McpServer(
            name=self.name,
            command=self.command,
            url=self.url,
            transport=transport,
            env=model.pairs(self.env),
            secrets=tuple(sorted(self.secrets)),
            headers=model.pairs(self.headers),
            bearer=self.bearer,
            secret_headers=model.pairs(self.secret_headers),
            startup_timeout=self.startup_timeout,
            tool_timeout=self.tool_timeout,
            tools=self.tools,
        )
        return Found(
            agent=agent,
            server=server,
            where=where,
            plaintext=tuple(dict.fromkeys(self.plaintext)),
            unmodelled=tuple(dict.fromkeys(self.unmodelled)),
        )


def strings(items: object) -> tuple[str, ...] | None:
    """A list of strings agentcfg writes as they are; None: something else."""
    if not isinstance(items, list) or not all(value(item) for item in items):
        return None
    return tuple(items)


def table_edits(
    path: tuple[str, ...], current: Any, target: Mapping[str, str], kept: Iterable[str]
) -> list[Assignment]:
    """What makes the table at `path` hold `target`, keeping the entries `kept` (the user's own, which the model
    does not hold) and removing the rest. A value there that is not a table is replaced only when there is
    something to write."""
    if not isinstance(current, dict):
        if target:
            return [(path, dict(target))]
        return []  # absent, or the user's own (named as not modelled): kept
    keep = set(kept) - set(target)
    if not target and not keep:
        return [(path, REMOVE)]
    out: list[Assignment] = [((*path, key), REMOVE) for key in current if key not in keep and key not in target]
    return out + [((*path, key), text) for key, text in target.items()]


def key_edit(
    path: tuple[str, ...], current: Mapping[str, Any], key: str, wanted: Any, unmodelled: Iterable[str]
) -> list[Assignment]:
    """Set one modelled key of an entry (None: removed, unless what is there is the user's own, not modelled)."""
    there = current.get(key, MISSING)
    if _number(there) and _number(wanted) and there == wanted:
        return []  # 30.0 where agentcfg writes 30: the same to the agent, left as the user wrote it
    if wanted is not None:
        return [((*path, key), wanted)]
    if there is MISSING or key in set(unmodelled):
        return []
    return [((*path, key), REMOVE)]


def _number(item: object) -> bool:
    return isinstance(item, (int, float)) and not isinstance(item, bool)


def servers_table(file: AgentFile, text: str | None, root: str) -> dict:
    """The table of servers at the top-level key `root` of an agent's file ({}: none there, or not a table)."""
    data = edit.load(file.format, text or "", path=str(file.path), keep={root})
    servers = data.get(root) if isinstance(data, dict) else None
    return servers if isinstance(servers, dict) else {}


def entries(current: Texts, environ: env.Environ, root: str) -> Iterator[tuple[str, dict, str]]:
    """Each server entry of the files read, as (name, entry, where it is shown): a name the model holds, an entry
    that is a table (others are left out of what is read: nothing could write them back)."""
    for file, text in current.items():
        shown = env.display(file.path, environ)
        for name, entry in servers_table(file, text, root).items():
            if server_name(name) and isinstance(entry, dict):
                yield name, entry, f"{shown}: {root}.{name}"


def entry_keys(entry: object) -> list[str]:
    """The keys of an entry, as names for `unmodelled`."""
    return [str(key) for key in entry] if isinstance(entry, dict) else []
