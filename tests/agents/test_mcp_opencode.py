"""opencode's MCP format (agents/opencode/mcp.py): `mcp.NAME` of opencode.json(c), read into agentcfg's model and
written from it, the rest of the file (the user's comments, keys and servers) as it was."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings

from agentcfg import edit
from agentcfg.agents import opencode
from agentcfg.agents.base import AgentFile
from agentcfg.agents.opencode import mcp as opencode_mcp
from agentcfg.errors import AgentcfgError, ParseError
from agentcfg.mcp.model import McpServer
from tests.agents import mcp_servers

CONFIG = AgentFile(Path("/home/u/.config/opencode/opencode.jsonc"), "json", opencode.SEED)
ENVIRON = {"HOME": "/home/u"}
USER = """\
{
  // my opencode config
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    "context7": {
      "type": "remote",
      "url": "https://mcp.context7.com/mcp",
      "headers": {
        "CONTEXT7_API_KEY": "{env:CONTEXT7_API_KEY}", // the key from my shell
        "X-Client": "opencode"
      },
      "oauth": false,
      "enabled": true
    },
    "zai": {
      "type": "local",
      "command": ["npx", "-y", "@z_ai/mcp-server"],
      "environment": { "Z_AI_API_KEY": "{env:ANTHROPIC_AUTH_TOKEN}", "Z_AI_MODE": "ZAI" },
      "cwd": "/home/u/src",
      "timeout": 10000
    },
    "off": { "enabled": false }
  },
  "provider": {}
}
"""
STDIO = McpServer(
    name="fs",
    command=("/usr/bin/python3", "/opt/fs.py", "--root", "/tmp"),
    env=(("LEVEL", "info"),),
    secrets=("FS_TOKEN",),
    tool_timeout=30.0,
)
HTTP = McpServer(
    name="web",
    url="http://127.0.0.1:8931/mcp",
    transport="http",
    headers=(("X-Team", "blue"),),
    bearer="WEB_TOKEN",
    secret_headers=(("X-Api-Key", "WEB_KEY"),),
    tool_timeout=45.5,
)


def written(servers: dict, text: str = USER) -> tuple[str, tuple[str, ...]]:
    edits = opencode_mcp.mcp_edits(servers, {CONFIG: text})
    notes = tuple(n for e in edits for n in e.notes)
    for e in edits:
        text = edit.apply("json", text, e.assignments, path=str(CONFIG.path))
    return text, notes


def read(text: str) -> dict:
    return {f.server.name: f for f in opencode_mcp.mcp_read({CONFIG: text}, ENVIRON)}


def test_the_agent_module_offers_them_through_its_own_file(tmp_path):
    environ = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert opencode.mcp_files(environ) == opencode.files(environ)
    named = {**environ, "OPENCODE_CONFIG": str(tmp_path / "mine.json")}
    assert [f.path for f in opencode.mcp_files(named)] == [tmp_path / "mine.json"]
    assert [f.server.name for f in opencode.mcp_read({CONFIG: USER}, ENVIRON)] == ["context7", "zai"]
    (change,) = opencode.mcp_edits({"zai": None}, {CONFIG: USER})
    assert change.assignments == [(("mcp", "zai"), edit.REMOVE)]


def test_the_users_servers_read_with_what_the_model_does_not_hold_named():
    found = read(USER)
    context7 = found["context7"]
    assert context7.where == "~/.config/opencode/opencode.jsonc: mcp.context7"
    assert context7.server == McpServer(
        name="context7",
        url="https://mcp.context7.com/mcp",
        transport="http",
        headers=(("X-Client", "opencode"),),
        secret_headers=(("CONTEXT7_API_KEY", "CONTEXT7_API_KEY"),),
    )
    assert context7.unmodelled == ("oauth", "enabled")
    zai = found["zai"]
    assert zai.server == McpServer(
        name="zai", command=("npx", "-y", "@z_ai/mcp-server"), env=(("Z_AI_MODE", "ZAI"),), tool_timeout=10.0
    )
    assert zai.unmodelled == ("cwd", "environment.Z_AI_API_KEY")  # another variable's value: the user's own


def test_new_servers_go_in_and_the_rest_of_the_file_stays():
    text, notes = written({"fs": STDIO, "web": HTTP})
    assert notes == ()
    assert written({"fs": None, "web": None}, text)[0] == USER  # the user's text as it was around them
    assert '"FS_TOKEN": "{env:FS_TOKEN}"' in text and '"Authorization": "Bearer {env:WEB_TOKEN}"' in text
    assert '"timeout": 45500' in text
    assert read(text)["fs"].server == STDIO and read(text)["web"].server == HTTP
    assert written({"fs": STDIO, "web": HTTP}, text)[0] == text  # a second sync changes nothing


def test_a_new_file_starts_from_the_seed():
    text, _ = written({"fs": STDIO}, opencode.SEED)
    assert text.startswith('{\n  "$schema": "https://opencode.ai/config.json",')
    assert read(text)["fs"].server == STDIO


def test_an_edit_sets_the_modelled_keys_and_keeps_the_users_own():
    server = McpServer(name="zai", command=("zai-mcp",), secrets=("ZAI_KEY",))
    text, _ = written({"zai": server})
    found = read(text)["zai"]
    assert found.server == server
    assert found.unmodelled == ("cwd", "environment.Z_AI_API_KEY")
    assert '"Z_AI_MODE"' not in text and '"timeout": 10000' not in text and '"cwd": "/home/u/src"' in text
    assert written({"zai": server}, text)[0] == text


def test_a_server_that_changes_kind_loses_the_other_kinds_keys():
    text, _ = written({"zai": replace(HTTP, name="zai")})
    (entry,) = [v for k, v in edit.load("json", text)["mcp"].items() if k == "zai"]
    assert entry["type"] == "remote" and not {"command", "environment", "cwd"} & set(entry)
    back, _ = written({"context7": replace(STDIO, name="context7")})
    entry = edit.load("json", back)["mcp"]["context7"]
    assert entry["type"] == "local" and not {"url", "headers", "oauth"} & set(entry) and entry["enabled"] is True


def test_an_entry_that_only_turns_a_server_off_is_not_one_but_an_edit_fills_it():
    text, _ = written({"off": replace(STDIO, name="off")})
    entry = edit.load("json", text)["mcp"]["off"]
    assert entry["enabled"] is False and entry["type"] == "local"
    assert read(text)["off"].server == replace(STDIO, name="off")


def test_removing_a_server_leaves_the_others():
    text, _ = written({"context7": None, "absent": None})
    assert "context7" not in text and '"zai"' in text and "// my opencode config" in text
    assert written({"absent": None}) == (USER, ())


def test_what_opencode_does_not_take_is_left_out_with_a_note():
    server = replace(STDIO, startup_timeout=5.0, tools=("read",))
    text, notes = written({"fs": server})
    assert notes == (
        "opencode: takes no startup timeout of its own (its `timeout` bounds every request, the start among them; "
        "agentcfg writes the tool timeout there): left out for 'fs'",
        "opencode: takes no list of a server's enabled tools: left out for 'fs'",
    )
    assert read(text)["fs"].server == STDIO


def test_an_sse_server_is_written_as_remote_opencode_tries_sse_after_streamable_http():
    sse = McpServer(name="old", url="http://127.0.0.1:9/sse", transport="sse")
    text, notes = written({"old": sse})
    assert notes == () and edit.load("json", text)["mcp"]["old"] == {"type": "remote", "url": "http://127.0.0.1:9/sse"}
    assert read(text)["old"].server == replace(sse, transport="http")


def test_literal_secrets_are_read_as_secrets_with_their_values_as_plaintext():
    text = """{"mcp": {
      "lit": {"type": "local", "command": ["srv"], "environment": {"API_KEY": "sk-abcdef1234567890", "MODE": "fast"}},
      "remote-1": {"type": "remote", "url": "https://mcp.example.com/mcp",
                   "headers": {"Authorization": "Bearer abc123", "X-Api-Key": "q8Xv72LmPz0RtY5nWb3K",
                               "X-Mode": "{file:/etc/mode}", "X-Org": "{env:ORG_ID}"}}}}"""
    found = read(text)
    assert found["lit"].server.secrets == ("API_KEY",) and found["lit"].server.env == (("MODE", "fast"),)
    assert found["lit"].plaintext == (("API_KEY", "sk-abcdef1234567890"),)
    web = found["remote-1"]
    assert web.server.bearer == "REMOTE_1_TOKEN"
    assert web.server.secret_headers == (("X-Api-Key", "REMOTE_1_X_API_KEY"), ("X-Org", "ORG_ID"))
    assert web.plaintext == (("REMOTE_1_TOKEN", "abc123"), ("REMOTE_1_X_API_KEY", "q8Xv72LmPz0RtY5nWb3K"))
    assert web.unmodelled == ("headers.X-Mode",)
    moved, _ = written({"remote-1": web.server, "lit": found["lit"].server}, text)
    assert "abc123" not in moved and "sk-abcdef" not in moved and "q8Xv" not in moved and "{file:/etc/mode}" in moved
    assert read(moved)["remote-1"].server == web.server and read(moved)["lit"].server == found["lit"].server


@pytest.mark.parametrize(
    "text",
    [
        '{"mcp": {"x": 1, "y": [], "z": {"type": "stdio"}, "a.b": {"type": "local", "command": ["x"]}}}',
        '{"mcp": {"s": {"type": "local", "command": "x", "environment": [1], "timeout": 1.5}}}',
        '{"mcp": {"s": {"type": "local", "command": [], "environment": {"A": 1, "PATH": "/x"}, "timeout": 0}}}',
        '{"mcp": {"s": {"type": "remote", "url": 5, "headers": {"A": 1, "B C": "x"}, "timeout": "5"}}}',
        '{"mcp": {"s": {"type": "remote", "url": "ftp://x", "headers": []}}}',
    ],
)
def test_odd_shapes_are_read_without_raising_and_edited(text):
    for f in read(text).values():
        assert f.unmodelled
    new, _ = written({"s": replace(STDIO, name="s")}, text)
    assert read(new)["s"].server == replace(STDIO, name="s")


def test_a_servers_object_that_is_not_one_is_read_as_none_and_left_as_it_is():
    assert read('{"mcp": 3}') == {}
    with pytest.raises(AgentcfgError, match="needs"):
        written({"s": STDIO}, '{"mcp": 3}')


def test_a_file_that_does_not_parse_raises_as_a_load_does():
    with pytest.raises(ParseError):
        read('{"mcp": {')


def test_every_corpus_file_reads_and_writes_its_own_servers_back_unchanged():
    for path in sorted(Path(__file__).parents[1].joinpath("corpus", "opencode").glob("*.json*")):
        text = path.read_text()
        found = read(text)
        clean = {n: f.server for n, f in found.items() if not f.plaintext}
        assert written(clean, text)[0] == text, path.name
        added, _ = written({"agentcfg-new": replace(STDIO, name="agentcfg-new")}, text)
        assert read(added)["agentcfg-new"].server == replace(STDIO, name="agentcfg-new")
        removed = written({"agentcfg-new": None}, added)[0]
        if edit.load("json", text).get("mcp") == {}:  # removing the last server takes `"mcp": {}` with it
            assert {**edit.load("json", text)} == {**edit.load("json", removed), "mcp": {}}, path.name
        else:
            assert removed == text, path.name


@settings(max_examples=150, deadline=None)
@given(server=mcp_servers.stdio(startup=False, tools=False) | mcp_servers.remote(startup=False, tools=False))
def test_what_is_written_reads_back_the_same(server):
    text, notes = written({server.name: server}, USER)
    assert notes == ()
    (found,) = [f for f in opencode_mcp.mcp_read({CONFIG: text}, ENVIRON) if f.server.name == server.name]
    assert found.server == server and found.plaintext == () and found.unmodelled == ()
    assert written({server.name: server}, text)[0] == text


def test_removing_the_last_server_leaves_no_empty_mcp_object():
    text = '{\n  "model": "a/b",\n  "mcp": {\n    "x": {"type": "local", "command": ["x"]}\n  }\n}\n'
    assert written({"x": None}, text)[0] == '{\n  "model": "a/b"\n}\n'
