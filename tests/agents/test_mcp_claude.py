"""Claude Code's MCP servers: `mcpServers` of ~/.claude.json (agents/claude/mcp.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from agentcfg import edit
from agentcfg.agents import claude
from agentcfg.agents.base import AgentFile
from agentcfg.mcp.model import McpServer
from tests.agents.mcp_samples import ENVIRON, HTTP, SSE, STDIO, apply, round_trip

FILE = AgentFile(Path("/home/u/.claude.json"), "json")
# What Claude Code keeps in ~/.claude.json besides the servers: never touched by an MCP edit.
CLAUDE_JSON = """{
  "numStartups": 42,
  "installMethod": "npm",
  "projects": {
    "/home/u/src/app": {
      "allowedTools": [],
      "mcpServers": {"local-one": {"type": "stdio", "command": "node", "args": ["x.js"]}},
      "hasTrustDialogAccepted": true
    }
  },
  "mcpServers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": {"Authorization": "Bearer ${GITHUB_PAT}"},
      "oauth": {"clientId": "abc"}
    },
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {}}
  },
  "userID": "0123abcd"
}
"""


def test_the_user_scope_file() -> None:
    assert claude.mcp_files(ENVIRON) == [FILE]
    [moved] = claude.mcp_files({**ENVIRON, "CLAUDE_CONFIG_DIR": "/cfg/claude "})
    assert moved.path == Path("/cfg/claude/.claude.json")


def test_reads_the_user_servers_only() -> None:
    found = claude.mcp_read({FILE: CLAUDE_JSON}, ENVIRON)
    assert [f.where for f in found] == ["~/.claude.json: mcpServers.github", "~/.claude.json: mcpServers.memory"]
    github, memory = (f.server for f in found)
    url = "https://api.githubcopilot.com/mcp/"
    assert github == McpServer("github", url=url, transport="http", bearer="GITHUB_PAT")
    assert found[0].unmodelled == ("oauth",) and found[0].agent == "claude"
    assert memory.command == ("npx", "-y", "@modelcontextprotocol/server-memory") and found[1].unmodelled == ()


def test_a_project_mcp_json_reads_alike() -> None:
    project = AgentFile(Path("/home/u/src/app/.mcp.json"), "json")
    text = '{"mcpServers": {"db": {"type": "streamable-http", "url": "http://127.0.0.1:5/mcp", "timeout": 120000}}}'
    [found] = claude.mcp_read({project: text}, ENVIRON)
    assert found.where == "~/src/app/.mcp.json: mcpServers.db"
    assert found.server == McpServer("db", url="http://127.0.0.1:5/mcp", transport="http", tool_timeout=120)


def test_a_default_or_a_renamed_variable_is_unmodelled() -> None:
    text = '{"mcpServers": {"s": {"command": "${BIN:-srv}", "env": {"KEY": "${OTHER}"}}}}'
    [found] = claude.mcp_read({FILE: text}, ENVIRON)
    assert found.server.command == () and set(found.unmodelled) == {"command", "env.KEY"}


def test_an_edit_touches_only_its_entry() -> None:
    server = McpServer("memory", command=("npx", "-y", "@modelcontextprotocol/server-memory"), tool_timeout=60)
    text, notes = apply(claude, {"memory": server, "github": None}, {FILE: CLAUDE_JSON})
    data, before = json.loads(text), json.loads(CLAUDE_JSON)
    assert data["projects"] == before["projects"] and data["userID"] == "0123abcd" and data["numStartups"] == 42
    assert data["mcpServers"] == {"memory": {**before["mcpServers"]["memory"], "type": "stdio", "timeout": 60000}}
    assert notes == ()
    assert text.startswith('{\n  "numStartups": 42,\n  "installMethod": "npm",\n  "projects": {')


def test_what_claude_code_does_not_take_is_a_note() -> None:
    server = replace(STDIO, startup_timeout=30, tools=("read",), tool_timeout=0.5)
    _, notes = apply(claude, {server.name: server}, {FILE: None})
    assert any("MCP" not in n and "startup" in n for n in notes) and any("enabled tools" in n for n in notes)
    assert any("1 to 3600" in n for n in notes)  # it ignores a timeout under 1000 ms


def test_the_written_syntax() -> None:
    text, _ = apply(claude, {s.name: s for s in (STDIO, HTTP)}, {FILE: None})
    data = edit.load("json", text)["mcpServers"]
    assert data["files"] == {"type": "stdio", "command": "npx", "args": ["-y", "@mcp/files", "/srv"],
                             "env": {"MODE": "ro", "FILES_TOKEN": "${FILES_TOKEN}"}}  # fmt: skip
    headers = {"X-Team": "core", "X-Api-Key": "${WEB_KEY}", "Authorization": "Bearer ${WEB_TOKEN}"}
    assert data["web"]["headers"] == headers


@pytest.mark.parametrize("server", [replace(STDIO, tool_timeout=45), replace(HTTP, tool_timeout=1.5), SSE])
@pytest.mark.parametrize("start", [None, CLAUDE_JSON])
def test_round_trip(server: McpServer, start: str | None) -> None:
    assert round_trip(claude, server, start) == [server]
