"""The shared `mcpServers` dialect (agents/mcpservers.py): reading into the model, edits that keep the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcfg import edit
from agentcfg.agents import mcpservers
from agentcfg.agents.base import AgentFile
from agentcfg.agents.mcpservers import Spec, Timeout
from agentcfg.errors import AgentcfgError
from agentcfg.mcp.model import McpServer

HOME = Path("/home/u")
ENVIRON = {"HOME": str(HOME)}
FILE = AgentFile(HOME / "cfg.json", "json")
TYPED = Spec(agent="typed", display="Typed", tool_timeout=Timeout("timeout"), tools_key="tools", file_name="cfg.json")
UNTYPED = Spec(  # qwen-code's way: the URL's key says the transport, `$VAR` read as well
    agent="untyped",
    display="Untyped",
    type_key=None,
    url_keys=(("http", "httpUrl"), ("sse", "url")),
    untyped_url="sse",
    references=(("${", "}"), ("$", "")),
    startup_timeout=Timeout("start", 1, high=300),
)
PLAIN = Spec(agent="plain", display="Plain", references=(), quiet=(("disabled", False),))


def read(spec: Spec, data: object) -> list:
    return mcpservers.read(spec, {FILE: json.dumps(data)}, ENVIRON)


def one(spec: Spec, entry: dict, name: str = "s") -> object:
    [found] = read(spec, {"mcpServers": {name: entry}})
    return found


def written(spec: Spec, servers: dict, text: str | None = None) -> str:
    [file_edit] = mcpservers.edits(spec, servers, {FILE: text})
    return edit.apply("json", text or "", file_edit.assignments, path=str(FILE.path))


# -- reading ------------------------------------------------------------------------------------------------


def test_a_stdio_server_with_its_variables_and_secrets() -> None:
    entry = {"type": "stdio", "command": "npx", "args": ["-y", "pkg"], "env": {"MODE": "fast", "TOKEN": "${TOKEN}"}}
    found = one(TYPED, {**entry, "timeout": 90000, "tools": ["a", "b"]})
    assert found.agent == "typed" and found.where == "~/cfg.json: mcpServers.s"
    assert found.server == McpServer("s", command=("npx", "-y", "pkg"), env=(("MODE", "fast"),), secrets=("TOKEN",),
                                     tool_timeout=90, tools=("a", "b"))  # fmt: skip
    assert found.unmodelled == () and found.plaintext == ()


def test_a_literal_credential_is_a_secret_whose_value_is_plaintext() -> None:
    found = one(TYPED, {"command": "srv", "env": {"GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123"}})
    assert found.server.secrets == ("GITHUB_TOKEN",) and found.server.env == ()
    assert found.plaintext == (("GITHUB_TOKEN", "ghp_abcdefghijklmnopqrstuvwxyz0123"),)
    assert "ghp_" not in repr(found)


def test_what_the_model_cannot_hold_is_named_and_left_out() -> None:
    found = one(TYPED, {"command": "srv", "env": {"A": "${B}", "C": "${C:-x}", "D": 1, "E": "pre-$E", "F": "ok"},
                        "cwd": "/w", "trust": True, "timeout": "soon", "tools": "all"})  # fmt: skip
    assert found.server.env == (("F", "ok"),) and found.server.secrets == ()
    assert found.server.tool_timeout is None and found.server.tools == ()
    assert set(found.unmodelled) == {"env.A", "env.C", "env.D", "env.E", "cwd", "trust", "timeout", "tools"}


def test_headers_bearer_and_secret_headers() -> None:
    found = one(TYPED, {"type": "http", "url": "https://h.example/mcp", "headers": {
        "Authorization": "Bearer ${GH}", "X-Api-Key": "${KEY}", "X-Team": "core", "X-Odd": "a${B}"}})  # fmt: skip
    server = found.server
    assert (server.transport, server.url, server.bearer) == ("http", "https://h.example/mcp", "GH")
    assert server.secret_headers == (("X-Api-Key", "KEY"),) and server.headers == (("X-Team", "core"),)
    assert found.unmodelled == ("headers.X-Odd",)


def test_literal_tokens_get_variables_of_their_own() -> None:
    found = one(TYPED, {"type": "sse", "url": "https://h.example/sse",
                        "headers": {"Authorization": "Bearer sk-live-123", "X-Api-Key": "k1"}}, "my-srv")  # fmt: skip
    assert found.server.transport == "sse"
    assert found.server.bearer == "MY_SRV_TOKEN" and found.server.secret_headers == (("X-Api-Key", "MY_SRV_X_API_KEY"),)
    assert dict(found.plaintext) == {"MY_SRV_TOKEN": "sk-live-123", "MY_SRV_X_API_KEY": "k1"}


def test_the_url_key_tells_the_transport_where_there_is_no_type() -> None:
    assert one(UNTYPED, {"httpUrl": "http://127.0.0.1:1/mcp"}).server.transport == "http"
    assert one(UNTYPED, {"url": "http://127.0.0.1:1/sse"}).server.transport == "sse"
    assert one(UNTYPED, {"command": "x", "env": {"K": "$K"}}).server.secrets == ("K",)
    assert one(TYPED, {"url": "http://127.0.0.1:1/mcp"}).server.transport == "http"  # untyped_url


def test_a_type_it_does_not_take_or_that_contradicts_is_unmodelled() -> None:
    found = one(TYPED, {"type": "ws", "url": "http://127.0.0.1:1/x"})
    assert found.server.transport == "http" and found.unmodelled == ("type",)
    found = one(TYPED, {"type": "http", "command": "srv"})
    assert found.server.command == ("srv",) and "type" in found.unmodelled


@pytest.mark.parametrize(
    "data",
    [{}, {"mcpServers": []}, {"mcpServers": {"a": "x", "b": None, "c": [1]}}, {"mcpServers": {"s": {}}}],
)
def test_odd_shapes_never_raise(data: object) -> None:
    for found in read(TYPED, data):  # an empty entry reads as a stdio server without a command
        assert found.unmodelled == ("command",)


def test_odd_values_never_raise() -> None:
    found = one(TYPED, {"command": ["a"], "args": "b", "env": [], "headers": {"H": 1}, "url": 5, "tools": [1]})
    assert "command" in found.unmodelled and "tools" in found.unmodelled and "env" in found.unmodelled
    found = one(TYPED, {"type": "http", "url": "http://127.0.0.1:1/", "env": {"A": "b"}, "headers": "x"})
    assert set(found.unmodelled) >= {"env", "headers"}


def test_no_file_reads_nothing_and_a_broken_one_raises() -> None:
    assert mcpservers.read(TYPED, {FILE: None}, ENVIRON) == []
    for broken in ('{"mcpServers": {', "[]"):  # what edit.load raises: a top-level value not an object too
        with pytest.raises(AgentcfgError):
            mcpservers.read(TYPED, {FILE: broken}, ENVIRON)


def test_quiet_defaults_are_not_unmodelled() -> None:
    assert one(PLAIN, {"command": "x", "disabled": False}).unmodelled == ()
    assert one(PLAIN, {"command": "x", "disabled": True}).unmodelled == ("disabled",)


# -- writing ------------------------------------------------------------------------------------------------

USER_FILE = """{
  // the user's own
  "theme": "dark",
  "mcpServers": {
    "other": {"command": "keep-me"},
    "s": {
      "command": "old",
      "args": ["x"],
      "cwd": "/work", // theirs
      "trust": true,
      "timeout": 5000
    }
  }
}
"""


def test_an_edit_sets_the_modelled_keys_and_keeps_everything_else() -> None:
    server = McpServer("s", command=("new", "--flag"), env=(("A", "1"),), secrets=("TOK",))
    text = written(TYPED, {"s": server}, USER_FILE)
    assert "// the user's own" in text and "// theirs" in text
    data = edit.load("json", text)
    assert data["theme"] == "dark" and data["mcpServers"]["other"] == {"command": "keep-me"}
    assert data["mcpServers"]["s"] == {"type": "stdio", "command": "new", "args": ["--flag"], "cwd": "/work",
                                       "trust": True, "env": {"A": "1", "TOK": "${TOK}"}}  # fmt: skip
    assert written(TYPED, {"s": server}, text) == text  # a second edit changes nothing


def test_none_removes_the_whole_entry_and_nothing_else() -> None:
    text = written(TYPED, {"s": None, "absent": None}, USER_FILE)
    assert edit.load("json", text)["mcpServers"] == {"other": {"command": "keep-me"}}
    assert mcpservers.edits(TYPED, {"absent": None}, {FILE: text}) == []


def test_a_new_file_and_a_new_entry() -> None:
    server = McpServer("web", url="http://127.0.0.1:8/mcp", transport="http", bearer="T", headers=(("X-A", "1"),))
    text = written(TYPED, {"web": server}, None)
    headers = {"X-A": "1", "Authorization": "Bearer ${T}"}
    entry = json.loads(text)["mcpServers"]["web"]
    assert entry == {"type": "http", "url": "http://127.0.0.1:8/mcp", "headers": headers}


def test_empty_args_and_a_type_the_agent_reads_alike_are_left() -> None:
    gemini_like = Spec(agent="g", display="G", types=(("stdio", None), ("http", "http"), ("sse", "sse")),
                       type_aliases=(("stdio", "stdio"),))  # fmt: skip
    text = '{"mcpServers": {"s": {"type": "stdio", "command": "x", "args": [], "env": {}}}}'
    assert written(gemini_like, {"s": McpServer("s", command=("x",))}, text) == text


def test_the_url_moves_to_the_key_of_its_transport() -> None:
    text = '{"mcpServers": {"s": {"url": "http://127.0.0.1:1/sse", "trust": true}}}'
    server = McpServer("s", url="http://127.0.0.1:1/mcp", transport="http")
    data = edit.load("json", written(UNTYPED, {"s": server}, text))
    assert data["mcpServers"]["s"] == {"httpUrl": "http://127.0.0.1:1/mcp", "trust": True}


def test_what_the_agent_cannot_take_is_a_note() -> None:
    server = McpServer("s", command=("x",), secrets=("TOK",), startup_timeout=500, tool_timeout=3, tools=("a",))
    [file_edit] = mcpservers.edits(PLAIN, {"s": server}, {FILE: None})
    notes = " ".join(file_edit.notes)
    assert "expands no variable" in notes and "TOK" in notes and "tool timeout" in notes and "enabled tools" in notes
    assert "${TOK}" not in json.dumps(file_edit.assignments)
    [file_edit] = mcpservers.edits(UNTYPED, {"s": server}, {FILE: None})
    assert any("300" in note for note in file_edit.notes)  # beyond what it honours: said, and written


def test_a_timeout_in_milliseconds_is_an_integer() -> None:
    text = written(TYPED, {"s": McpServer("s", command=("x",), tool_timeout=1.5)})
    assert json.loads(text)["mcpServers"]["s"]["timeout"] == 1500
    assert one(TYPED, json.loads(text)["mcpServers"]["s"]).server.tool_timeout == 1.5


def test_mcp_servers_of_the_wrong_type_refuse_an_edit() -> None:
    with pytest.raises(AgentcfgError):
        written(TYPED, {"s": McpServer("s", command=("x",))}, '{"mcpServers": []}')


# -- round trip ---------------------------------------------------------------------------------------------

_names = st.from_regex(r"[A-Z][A-Z0-9_]{0,6}", fullmatch=True).filter(lambda v: v not in {"PATH", "HOME", "USER"})
_words = st.from_regex(r"[a-z0-9./-]{1,10}", fullmatch=True)
_headers = st.from_regex(r"X-[A-Za-z]{1,6}", fullmatch=True)
_seconds = st.none() | st.integers(1, 3600) | st.sampled_from([1.5, 0.25, 12.125])


@st.composite
def servers(draw: st.DrawFn, spec: Spec) -> McpServer:
    name = draw(st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True))
    transport = draw(st.sampled_from(["stdio", "http", "sse"]))
    tool = draw(_seconds) if spec.tool_timeout else None
    start = draw(_seconds) if spec.startup_timeout else None
    tools = tuple(draw(st.lists(_words, max_size=3, unique=True))) if spec.tools_key else ()
    if transport == "stdio":
        env = draw(st.dictionaries(_names, _words, max_size=3))
        secrets = draw(st.lists(_names.filter(lambda v: v not in env), max_size=2, unique=True))
        command = (draw(_words), *draw(st.lists(_words, max_size=3)))
        server = McpServer(name, command=command, env=tuple(sorted(env.items())), secrets=tuple(sorted(secrets)))
    else:
        headers = draw(st.dictionaries(_headers, _words, max_size=2))
        secret = draw(st.dictionaries(st.from_regex(r"X-S[a-z]{1,4}", fullmatch=True), _names, max_size=2))
        server = McpServer(name, url=f"http://127.0.0.1:9/{draw(_words)}", transport=transport,
                           headers=tuple(sorted(headers.items())), bearer=draw(st.none() | _names),
                           secret_headers=tuple(sorted(secret.items())))  # fmt: skip
    from dataclasses import replace

    return replace(server, tool_timeout=tool, startup_timeout=start, tools=tools)


@pytest.mark.parametrize("spec", [TYPED, UNTYPED], ids=lambda s: s.agent)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_round_trip(spec: Spec, data: st.DataObject) -> None:
    server = data.draw(servers(spec))
    text = written(spec, {server.name: server}, USER_FILE)
    found = [f for f in mcpservers.read(spec, {FILE: text}, ENVIRON) if f.server.name == server.name]
    assert [f.server for f in found] == [server]
    assert written(spec, {server.name: server}, text) == text
