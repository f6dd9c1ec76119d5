"""Gemini CLI's MCP servers: `mcpServers` of ~/.gemini/settings.json (agents/gemini/mcp.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agentcfg import edit
from agentcfg.agents import gemini
from agentcfg.mcp.model import McpServer
from tests.agents.mcp_samples import ENVIRON, HTTP, SSE, STDIO, apply, round_trip

CORPUS = Path(__file__).parents[1] / "corpus" / "gemini"
[FILE] = gemini.mcp_files(ENVIRON)
JSONC = """{
  // Gemini reads comments
  "general": {"preferredEditor": "vim"},
  "mcpServers": {
    "coder": {"command": "node", "args": ["bin/coder-mcp.js"], "type": "stdio"}, // mine
    "old": {"httpUrl": "https://mcp.expo.dev/mcp", "description": "expo"}
  }
}
"""


def test_the_settings_file_a_switch_edits() -> None:
    assert gemini.files(ENVIRON)[1] == FILE and FILE.path == Path("/home/u/.gemini/settings.json")
    assert gemini.mcp_files({**ENVIRON, "GEMINI_CLI_HOME": "/g"})[0].path == Path("/g/.gemini/settings.json")


def test_real_files() -> None:
    [expo] = gemini.mcp_read({FILE: (CORPUS / "001-1natsu172-oauth-mcp-http.json").read_text()}, ENVIRON)
    assert expo.server == McpServer("expo", url="https://mcp.expo.dev/mcp", transport="http")  # the older httpUrl
    [cyber] = gemini.mcp_read({FILE: (CORPUS / "004-26zl-mcp-env-trust.json").read_text()}, ENVIRON)
    assert cyber.server.command == ("bash",) and set(cyber.unmodelled) == {"args", "trust"}  # `$(git ...)` in args
    assert cyber.server.env == (("CYBERSEC_MCP_ALLOW_EXTERNAL", "0"), ("CYBERSEC_MCP_ALLOW_SCRIPTS", "0"))


def test_a_url_reads_by_its_type() -> None:
    text = '{"mcpServers": {"a": {"url": "http://127.0.0.1:1/s", "type": "sse"}, "b": {"url": "http://127.0.0.1:1/m"}}}'
    assert [f.server.transport for f in gemini.mcp_read({FILE: text}, ENVIRON)] == ["sse", "http"]


def test_an_edit_moves_httpurl_to_url_and_keeps_the_rest() -> None:
    old = McpServer("old", url="https://mcp.expo.dev/mcp", transport="http", tool_timeout=20)
    coder = McpServer("coder", command=("node", "bin/coder-mcp.js"), tools=("run",))
    new, notes = apply(gemini, {"old": old, "coder": coder}, {FILE: JSONC})
    assert "// Gemini reads comments" in new and "// mine" in new and notes == ()
    servers = edit.load("json", new)["mcpServers"]
    url = "https://mcp.expo.dev/mcp"
    assert servers["old"] == {"description": "expo", "type": "http", "url": url, "timeout": 20000}
    coder = {"command": "node", "args": ["bin/coder-mcp.js"], "type": "stdio", "includeTools": ["run"]}
    assert servers["coder"] == coder


def test_a_new_stdio_server_has_no_type_and_a_startup_timeout_is_a_note() -> None:
    new, notes = apply(gemini, {STDIO.name: replace(STDIO, startup_timeout=9)}, {FILE: None})
    assert "type" not in edit.load("json", new)["mcpServers"]["files"]
    assert any("startup timeout" in n for n in notes)


@pytest.mark.parametrize("server", [replace(STDIO, tool_timeout=30, tools=("a",)), replace(HTTP, tool_timeout=9), SSE])
def test_round_trip(server: McpServer) -> None:
    assert round_trip(gemini, server, JSONC) == [server]
    assert round_trip(gemini, server) == [server]
