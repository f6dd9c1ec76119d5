"""Codex's MCP format (agents/codex/mcp.py): `[mcp_servers.NAME]` of config.toml, read into agentcfg's model and
written from it, the rest of the file (the user's comments, keys and servers) as it was."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings

from agentcfg import edit
from agentcfg.agents import codex
from agentcfg.agents.base import AgentFile
from agentcfg.agents.codex import mcp as codex_mcp
from agentcfg.errors import AgentcfgError, ParseError
from agentcfg.mcp.model import McpServer
from tests.agents import mcp_servers

CONFIG = AgentFile(Path("/home/u/.codex/config.toml"), "toml")
ENVIRON = {"HOME": "/home/u"}
USER = """\
# Codex config
model = "gpt-5.5"  # the default model

[mcp_servers.github]  # GitHub's server
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env_vars = ["GITHUB_TOKEN", { name = "SSH_AUTH_SOCK", source = "remote" }]
cwd = "/home/u/src"
enabled = false
disabled_tools = ["delete_repo"]

[mcp_servers.github.env]
LOG_LEVEL = "debug"
HOME_DIR = "${HOME}"  # Codex does not expand it: not agentcfg's to write

[mcp_servers.github.tools.create_issue]
approval_mode = "approve"

[mcp_servers.docs]
url = "https://developers.openai.com/mcp"
startup_timeout_ms = 20000

[features]
web_search = true
"""
STDIO = McpServer(
    name="fs",
    command=("/usr/bin/python3", "/opt/fs.py", "--root", "/tmp"),
    env=(("LEVEL", "info"),),
    secrets=("FS_TOKEN",),
    startup_timeout=12.5,
    tool_timeout=30.0,
    tools=("read", "write"),
)
HTTP = McpServer(
    name="web",
    url="http://127.0.0.1:8931/mcp",
    transport="http",
    headers=(("X-Team", "blue"),),
    bearer="WEB_TOKEN",
    secret_headers=(("X-Api-Key", "WEB_KEY"),),
    tool_timeout=45.0,
)


def written(servers: dict, text: str = USER) -> tuple[str, tuple[str, ...]]:
    edits = codex_mcp.mcp_edits(servers, {CONFIG: text})
    notes = tuple(n for e in edits for n in e.notes)
    for e in edits:
        text = edit.apply("toml", text, e.assignments, path=str(CONFIG.path))
    return text, notes


def read(text: str) -> dict:
    return {f.server.name: f for f in codex_mcp.mcp_read({CONFIG: text}, ENVIRON)}


def test_the_agent_module_offers_them_without_loading_them_at_start():
    assert codex.mcp_files({"HOME": "/home/u"}) == [AgentFile(Path("/home/u/.codex/config.toml"), "toml")]
    assert [f.server.name for f in codex.mcp_read({CONFIG: USER}, ENVIRON)] == ["github", "docs"]
    assert codex.mcp_edits({"docs": None}, {CONFIG: USER})[0].assignments == [(("mcp_servers", "docs"), edit.REMOVE)]


def test_the_users_servers_read_with_what_the_model_does_not_hold_named():
    found = read(USER)
    github = found["github"]
    assert github.where == "~/.codex/config.toml: mcp_servers.github"
    assert github.server == McpServer(
        name="github",
        command=("npx", "-y", "@modelcontextprotocol/server-github"),
        env=(("LOG_LEVEL", "debug"),),
        secrets=("GITHUB_TOKEN",),
    )
    assert github.unmodelled == ("cwd", "enabled", "disabled_tools", "tools", "env.HOME_DIR", "env_vars.SSH_AUTH_SOCK")
    docs = found["docs"].server
    assert (docs.transport, docs.url, docs.startup_timeout) == ("http", "https://developers.openai.com/mcp", 20.0)


def test_new_servers_go_in_and_the_rest_of_the_file_stays_byte_for_byte():
    text, notes = written({"fs": STDIO, "web": HTTP})
    assert notes == ()
    head, tail = USER.split("[features]")
    assert text.startswith(head) and text.endswith("[features]" + tail)  # the user's text untouched around them
    assert 'env_vars = ["FS_TOKEN"]' in text and 'bearer_token_env_var = "WEB_TOKEN"' in text
    assert read(text)["fs"].server == STDIO and read(text)["web"].server == HTTP
    assert written({"fs": STDIO, "web": HTTP}, text)[0] == text  # a second sync changes nothing


def test_an_edit_sets_the_modelled_keys_and_keeps_the_users_own():
    server = McpServer(name="github", command=("gh-mcp",), secrets=("GH_TOKEN",), tool_timeout=60.0)
    text, _ = written({"github": server})
    found = read(text)["github"]
    assert found.server == server
    assert found.unmodelled == ("cwd", "enabled", "disabled_tools", "tools", "env.HOME_DIR", "env_vars.SSH_AUTH_SOCK")
    assert "# GitHub's server" in text and 'approval_mode = "approve"' in text and "LOG_LEVEL" not in text
    assert 'env_vars = [{ name = "SSH_AUTH_SOCK", source = "remote" }, "GH_TOKEN"]' in text
    assert "args" not in text.split("[mcp_servers.docs]")[0]
    assert written({"github": server}, text)[0] == text


def test_a_new_startup_timeout_replaces_the_older_milliseconds():
    server = McpServer(name="docs", url="https://developers.openai.com/mcp", transport="http", startup_timeout=5.0)
    text, _ = written({"docs": server})
    assert "startup_timeout_ms" not in text and "startup_timeout_sec = 5\n" in text
    assert read(text)["docs"].server == server
    unset, _ = written({"docs": McpServer(name="docs", url="https://developers.openai.com/mcp", transport="http")})
    assert "startup_timeout" not in unset


def test_a_server_that_changes_kind_loses_the_other_kinds_keys():
    text, _ = written({"github": replace(HTTP, name="github")})
    section = text.split("[mcp_servers.github]")[1].split("[mcp_servers.docs]")[0]
    for key in ("command", "args", "env_vars", "cwd", "LOG_LEVEL", "HOME_DIR"):
        assert key not in section  # Codex refuses a stdio key on a URL server
    assert "enabled = false" in section and "disabled_tools" in section


def test_removing_a_server_takes_its_tables_and_leaves_the_others():
    text, _ = written({"github": None, "absent": None})
    assert "github" not in text and "[mcp_servers.docs]" in text and "[features]" in text
    assert written({"absent": None}) == (USER, ())


def test_codex_takes_no_sse_server_and_says_so():
    sse = McpServer(name="old", url="http://127.0.0.1:9/sse", transport="sse")
    text, notes = written({"old": sse})
    assert text == USER and notes == ("codex: takes no SSE server (only streamable HTTP): 'old' left out",)


def test_literal_secrets_are_read_as_secrets_with_their_values_as_plaintext():
    text = """\
[mcp_servers.lit]
command = "srv"
env = { API_KEY = "sk-abcdef1234567890", MODE = "fast" }

[mcp_servers.remote-1]
url = "https://mcp.example.com/mcp"
http_headers = { Authorization = "Bearer abc123", "X-Api-Key" = "q8Xv72LmPz0RtY5nWb3K", "X-Mode" = "${MODE}" }
env_http_headers = { "X-Org" = "ORG_ID" }
"""
    found = read(text)
    assert found["lit"].server.secrets == ("API_KEY",) and found["lit"].server.env == (("MODE", "fast"),)
    assert found["lit"].plaintext == (("API_KEY", "sk-abcdef1234567890"),)
    web = found["remote-1"]
    assert web.server.bearer == "REMOTE_1_TOKEN"
    assert web.server.secret_headers == (("X-Api-Key", "REMOTE_1_X_API_KEY"), ("X-Org", "ORG_ID"))
    assert web.plaintext == (("REMOTE_1_TOKEN", "abc123"), ("REMOTE_1_X_API_KEY", "q8Xv72LmPz0RtY5nWb3K"))
    assert web.unmodelled == ("http_headers.X-Mode",)
    # import: writing the model back moves the plaintext out of the file
    moved, _ = written({"remote-1": web.server, "lit": found["lit"].server}, text)
    assert "abc123" not in moved and "sk-abcdef" not in moved and "q8Xv" not in moved and "${MODE}" in moved
    assert read(moved)["remote-1"].server == web.server and read(moved)["lit"].server == found["lit"].server


@pytest.mark.parametrize(
    "text",
    [
        "[mcp_servers]\nx = 1\ny = []\n",
        '[mcp_servers."a.b"]\ncommand = "x"\n',
        "[mcp_servers.z]\nenabled = true\n",
        '[mcp_servers.s]\ncommand = 3\nargs = "x"\nenv = [1]\nenv_vars = "A"\nstartup_timeout_sec = "5"\n',
        "[mcp_servers.h]\nurl = 5\nhttp_headers = []\nenv_http_headers = 1\nbearer_token_env_var = 2\n",
        '[mcp_servers.t]\ncommand = "x"\ntool_timeout_sec = 0\nenabled_tools = []\nenv_vars = [{ name = 1 }]\n',
    ],
)
def test_odd_shapes_are_read_without_raising_and_edited(text):
    found = read(text)
    for f in found.values():
        assert f.unmodelled or f.server.command
    new, _ = written({"s": replace(STDIO, name="s")}, text)
    assert read(new)["s"].server.command == STDIO.command


def test_a_servers_table_that_is_not_one_is_read_as_none_and_left_as_it_is():
    assert read("mcp_servers = 3\n") == {}
    with pytest.raises(AgentcfgError, match="needs a table"):
        written({"s": STDIO}, "mcp_servers = 3\n")


def test_a_file_that_does_not_parse_raises_as_a_load_does():
    with pytest.raises(ParseError):
        read("[mcp_servers.x\n")


def in_order(old: str, new: str) -> bool:
    """Every line of `old` is in `new`, in the same order (what an edit added sits between them)."""
    lines = iter(new.splitlines())
    return all(line in lines for line in old.splitlines())


def test_every_corpus_file_reads_and_writes_its_own_servers_back_unchanged():
    for path in sorted(Path(__file__).parents[1].joinpath("corpus", "codex").glob("*.toml")):
        text = path.read_text()
        try:
            found = read(text)
        except ParseError:
            continue  # a file Codex refuses too (013: a table declared twice)
        clean = {n: f.server for n, f in found.items() if not f.plaintext}
        assert written(clean, text)[0] == text, path.name
        added, _ = written({"agentcfg-new": replace(STDIO, name="agentcfg-new")}, text)
        assert in_order(text, added) and read(added)["agentcfg-new"].server == replace(STDIO, name="agentcfg-new")
        assert written({"agentcfg-new": None}, added)[0].strip() == text.strip(), path.name


@settings(max_examples=150, deadline=None)
@given(server=mcp_servers.stdio() | mcp_servers.remote())
def test_what_is_written_reads_back_the_same(server):
    text, notes = written({server.name: server})
    assert notes == ()
    (found,) = [f for f in codex_mcp.mcp_read({CONFIG: text}, ENVIRON) if f.server.name == server.name]
    assert found.server == server and found.plaintext == () and found.unmodelled == ()
    assert written({server.name: server}, text)[0] == text
