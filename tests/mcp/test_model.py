"""agentcfg.mcp.model: what agentcfg writes for an MCP server is checked before anything is written."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcfg.errors import AgentcfgError
from agentcfg.mcp import model
from agentcfg.mcp.model import McpServer


def stdio(**kw) -> McpServer:
    return McpServer("fs", **{"command": ("npx", "-y", "server"), **kw})


def remote(**kw) -> McpServer:
    return McpServer("docs", **{"url": "https://mcp.example.com/mcp", "transport": "http", **kw})


@pytest.mark.parametrize(
    "value",
    [
        "${GITHUB_TOKEN}",  # Claude Code
        "$HOME/x",  # qwen-code, Gemini CLI
        "{env:OPENAI_API_KEY}",  # opencode
        "{file:~/.ssh/id_rsa}",  # opencode
        "{ENV:X}",
        "$(cat ~/.ssh/id_rsa)",  # Crush runs a shell
        "`cat ~/.ssh/id_rsa`",
        "a\nb",
        "bidi\u202etext",
    ],
)
def test_a_value_an_agent_would_expand_or_run_is_refused_wherever_it_goes(value):
    for server in (
        stdio(command=("npx", value)),
        stdio(env=(("A", value),)),
        remote(headers=(("X-Team", value),)),
        remote(url=f"https://mcp.example.com/{value}"),
        stdio(tools=(value,)),
    ):
        with pytest.raises(AgentcfgError):
            model.check(server)


def test_plain_values_pass():
    assert model.check(stdio(env=(("LOG", "debug $ 5"),), secrets=("TOKEN",))).name == "fs"
    assert model.check(remote(headers=(("X-Team", "a"),), bearer="DOCS_TOKEN")).remote


@pytest.mark.parametrize(
    "server",
    [
        McpServer("bad name", command=("x",)),
        McpServer("-x", command=("x",)),
        McpServer("x" * 65, command=("x",)),
        McpServer("x"),  # neither command nor URL
        McpServer("x", command=("x",), url="https://a.example/"),  # both
        McpServer("x", url="ftp://a.example/", transport="http"),
        McpServer("x", url="https://user:pw@a.example/", transport="http"),  # a credential in the URL
        McpServer("x", url="https://a.example/", transport="websocket"),
        McpServer("x", command=("x",), transport="http"),
        remote(env=(("A", "b"),)),  # a remote server takes no variables
        stdio(headers=(("A", "b"),)),  # a stdio server takes no headers
        stdio(secrets=("PATH",)),  # a variable the system sets
        stdio(secrets=("1X",)),
        stdio(env=(("A", "b"),), secrets=("A",)),  # both plain and secret
        remote(secret_headers=(("Bad Header", "X"),)),
        stdio(startup_timeout=0),
        stdio(tool_timeout=4000),
        McpServer("x", command=(" ",)),
    ],
)
def test_what_agentcfg_does_not_write_is_refused_with_one_message(server):
    with pytest.raises(AgentcfgError) as caught:
        model.check(server)
    assert caught.value.message and "\n" not in caught.value.message


def test_variables_are_every_secret_once_in_order():
    server = remote(bearer="B", secret_headers=(("X-Key", "K"), ("X-Other", "B")))
    assert server.variables() == ("B", "K")
    assert stdio(secrets=("A", "C")).variables() == ("A", "C")


def test_differences_name_fields_never_values():
    a = stdio(env=(("A", "secret-one"),))
    b = stdio(env=(("A", "secret-two"),), agents=("codex",))
    assert model.differences(a, b) == ["env"]
    assert model.differences(a, a) == []


@pytest.mark.parametrize(
    ("value", "prefix", "suffix", "expected"),
    [
        ("${TOKEN}", "${", "}", "TOKEN"),
        ("{env:TOKEN}", "{env:", "}", "TOKEN"),
        ("$TOKEN", "$", "", "TOKEN"),
        ("Bearer ${T}", "Bearer ${", "}", "T"),
        ("${TOKEN:-x}", "${", "}", None),
        ("${}", "${", "}", None),
        ("x${TOKEN}", "${", "}", None),
        ("$TOKEN/x", "$", "", None),
    ],
)
def test_reference_variable(value, prefix, suffix, expected):
    assert model.reference_variable(value, prefix, suffix) == expected


names = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,10}", fullmatch=True)
variables = st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True).filter(lambda v: not model.fields.reserved(v))
words = st.text(st.characters(min_codepoint=32, max_codepoint=126, exclude_characters="$`{"), min_size=1, max_size=12)


@given(
    name=names,
    command=st.lists(words, min_size=1, max_size=4),
    env=st.dictionaries(variables, words, max_size=3),
    secret=st.lists(variables, max_size=2, unique=True),
    timeout=st.none() | st.floats(0.5, 600),
    tools=st.lists(names, max_size=2),
)
def test_a_stdio_server_survives_the_set_file_and_json(name, command, env, secret, timeout, tools):
    server = McpServer(
        name,
        command=tuple(command),
        env=model.pairs(env),
        secrets=tuple(sorted(set(secret) - set(env))),
        startup_timeout=timeout,
        tools=tuple(tools),
    )
    if not command[0].strip():
        return
    model.check(server)
    assert model.from_dict(name, model.to_dict(server), "test") == server


@given(
    name=names,
    bearer=st.none() | variables,
    headers=st.dictionaries(st.from_regex(r"X-[A-Za-z]{1,6}", fullmatch=True), words, max_size=2),
)
def test_a_remote_server_survives_the_set_file(name, bearer, headers):
    server = McpServer(
        name, url="http://127.0.0.1:3001/mcp", transport="sse", headers=model.pairs(headers), bearer=bearer
    )
    assert model.from_dict(name, model.to_dict(server), "test") == model.check(server)


def test_from_dict_refuses_what_it_does_not_know():
    with pytest.raises(AgentcfgError, match="unknown key 'cmd'"):
        model.from_dict("x", {"cmd": ["a"]}, "mcp.toml")
    with pytest.raises(AgentcfgError, match="list of strings"):
        model.from_dict("x", {"command": "npx server"}, "mcp.toml")
    with pytest.raises(AgentcfgError, match="seconds"):
        model.from_dict("x", {"command": ["a"], "startup_timeout": "10"}, "mcp.toml")
