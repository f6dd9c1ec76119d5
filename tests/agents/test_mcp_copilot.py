"""Copilot CLI's MCP servers: `mcpServers` of ~/.copilot/mcp-config.json (agents/copilot/mcp.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agentcfg import edit
from agentcfg.agents import copilot
from agentcfg.mcp.model import McpServer
from tests.agents.mcp_samples import ENVIRON, HTTP, SSE, STDIO, apply, round_trip

[FILE] = copilot.mcp_files(ENVIRON)
# As Copilot CLI 1.0.102's own `copilot mcp add` writes it.
OWN = """{
  "mcpServers": {
    "loc": {
      "tools": [
        "*"
      ],
      "type": "local",
      "command": "/bin/true",
      "args": [
        "a",
        "b"
      ],
      "env": {
        "K": "V",
        "T": "${TOK}"
      }
    }
  }
}
"""


def test_the_file() -> None:
    assert FILE.path == Path("/home/u/.copilot/mcp-config.json")
    assert copilot.mcp_files({**ENVIRON, "COPILOT_HOME": "/c"})[0].path == Path("/c/mcp-config.json")


def test_what_its_own_add_writes() -> None:
    [found] = copilot.mcp_read({FILE: OWN}, ENVIRON)
    assert found.server == McpServer("loc", command=("/bin/true", "a", "b"), env=(("K", "V"),))
    assert found.unmodelled == ("env.T",)  # a reference to another variable: no renaming in the model


def test_all_tools_is_a_star_and_stdio_is_local() -> None:
    new, _ = apply(copilot, {"loc": McpServer("loc", command=("/bin/true", "a", "b"), env=(("K", "V"),))}, {FILE: OWN})
    assert edit.load("json", new)["mcpServers"]["loc"] == {"tools": ["*"], "type": "local", "command": "/bin/true",
                                                           "args": ["a", "b"], "env": {"K": "V"}}  # fmt: skip
    text = '{"mcpServers": {"s": {"type": "stdio", "command": "x", "tools": ["a"]}}}'
    [found] = copilot.mcp_read({FILE: text}, ENVIRON)
    assert found.server == McpServer("s", command=("x",), tools=("a",))
    [found] = copilot.mcp_read({FILE: '{"mcpServers": {"s": {"command": "x", "tools": []}}}'}, ENVIRON)
    assert found.unmodelled == ("tools",)  # none enabled: not "all"


@pytest.mark.parametrize("server", [replace(STDIO, tool_timeout=30, tools=("a",)), replace(HTTP, tool_timeout=9), SSE])
def test_round_trip(server: McpServer) -> None:
    assert round_trip(copilot, server, OWN) == [server]
    assert round_trip(copilot, server) == [server]
