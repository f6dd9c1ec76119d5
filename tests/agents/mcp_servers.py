"""Hypothesis strategies for MCP servers (agentcfg.mcp.model), shared by the agents' MCP format tests.

What is drawn is what agentcfg writes (model.check passes) and reads back as the same: plain variables and
headers that do not look like credentials (a literal credential is read as a secret, by design), and no
Authorization header besides the bearer.
"""

from __future__ import annotations

from hypothesis import strategies as st

from agentcfg import fields
from agentcfg.agents.base import Header, is_credential
from agentcfg.mcp import model
from agentcfg.mcp.model import McpServer

NAMES = st.from_regex(rf"\A{model.NAME_PATTERN}\Z")
WORDS = st.from_regex(r"\A[A-Za-z0-9./:=,@+_ -]{1,24}\Z").filter(lambda w: not model.refuses(w))
PROGRAMS = st.from_regex(r"\A[A-Za-z0-9./_-]{1,24}\Z").filter(lambda w: w.strip() != "")
VARIABLES = st.from_regex(r"\A[A-Z_][A-Z0-9_]{0,20}\Z").filter(lambda v: not fields.reserved(v))
HEADERS = st.from_regex(r"\A[A-Za-z][A-Za-z0-9-]{0,20}\Z").filter(lambda h: h.lower() != "authorization")
SECONDS = st.integers(min_value=1, max_value=3_600_000).map(lambda ms: ms / 1000)


def _plain(name: str, value: str) -> bool:
    return not is_credential(Header(name, "", value=value))


@st.composite
def stdio(draw: st.DrawFn, *, startup: bool = True, tools: bool = True) -> McpServer:
    """A stdio server: a command, plain variables, secrets, timeouts (startup: where the agent takes one), tools."""
    names = draw(st.lists(VARIABLES, unique=True, max_size=6))
    cut = draw(st.integers(min_value=0, max_value=len(names)))
    env = [(n, draw(WORDS)) for n in names[:cut]]
    server = McpServer(
        name=draw(NAMES),
        command=(draw(PROGRAMS), *draw(st.lists(WORDS, max_size=4))),
        env=model.pairs((n, v) for n, v in env if _plain(n, v)),
        secrets=tuple(sorted(names[cut:])),
        startup_timeout=draw(st.none() | SECONDS) if startup else None,
        tool_timeout=draw(st.none() | SECONDS),
        tools=tuple(draw(st.lists(st.from_regex(r"\A[a-z_]{1,12}\Z"), unique=True, max_size=3))) if tools else (),
    )
    return model.check(server)


@st.composite
def remote(draw: st.DrawFn, *, startup: bool = True, tools: bool = True) -> McpServer:
    """A streamable HTTP server: plain headers, a bearer, secret headers, timeouts, tools."""
    names = draw(st.lists(HEADERS, unique_by=str.lower, max_size=5))
    cut = draw(st.integers(min_value=0, max_value=len(names)))
    headers = [(n, draw(WORDS)) for n in names[:cut]]
    path = draw(st.from_regex(r"\A(/[a-z0-9_.-]{1,10}){0,3}\Z"))
    server = McpServer(
        name=draw(NAMES),
        url=f"http://127.0.0.1:{draw(st.integers(1, 65535))}{path}",
        transport="http",
        headers=model.pairs((n, v) for n, v in headers if _plain(n, v)),
        bearer=draw(st.none() | VARIABLES),
        secret_headers=model.pairs((n, draw(VARIABLES)) for n in names[cut:]),
        startup_timeout=draw(st.none() | SECONDS) if startup else None,
        tool_timeout=draw(st.none() | SECONDS),
        tools=tuple(draw(st.lists(st.from_regex(r"\A[a-z_]{1,12}\Z"), unique=True, max_size=3))) if tools else (),
    )
    return model.check(server)
