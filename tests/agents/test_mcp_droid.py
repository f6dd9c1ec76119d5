"""Factory Droid's MCP servers: `mcpServers` of ~/.factory/mcp.json (agents/droid/mcp.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agentcfg import edit
from agentcfg.agents import droid
from agentcfg.mcp.model import McpServer
from tests.agents.mcp_samples import ENVIRON, HTTP, SSE, STDIO, apply, round_trip

[FILE] = droid.mcp_files(ENVIRON)
# As droid 0.225.2's own `droid mcp add` writes it.
OWN = """{
  "mcpServers": {
    "rem": {
      "url": "http://127.0.0.1:9/mcp",
      "headers": {
        "Authorization": "Bearer ${TOK}"
      },
      "disabled": false,
      "type": "http"
    },
    "off": {
      "type": "stdio",
      "command": "srv",
      "disabled": true,
      "disabledTools": ["rm"]
    }
  }
}"""


def test_the_file() -> None:
    assert FILE.path == Path("/home/u/.factory/mcp.json")
    assert droid.mcp_files({**ENVIRON, "FACTORY_HOME_OVERRIDE": "/f"})[0].path == Path("/f/.factory/mcp.json")


def test_what_its_own_add_writes() -> None:
    rem, off = droid.mcp_read({FILE: OWN}, ENVIRON)
    assert rem.server == McpServer("rem", url="http://127.0.0.1:9/mcp", transport="http", bearer="TOK")
    assert rem.unmodelled == ()  # `disabled: false` says nothing
    assert off.unmodelled == ("disabled", "disabledTools")


def test_an_edit_keeps_disabled_and_sets_timeouts() -> None:
    server = McpServer("off", command=("srv", "--v"), startup_timeout=15, tool_timeout=120, tools=("ls",))
    new, notes = apply(droid, {"off": server}, {FILE: OWN})
    assert notes == () and new.endswith("}")  # no newline added at the end
    kept = {"type": "stdio", "command": "srv", "disabled": True, "disabledTools": ["rm"]}
    set_ = {"args": ["--v"], "timeout": 120000, "connectTimeout": 15000, "enabledTools": ["ls"]}
    assert edit.load("json", new)["mcpServers"]["off"] == {**kept, **set_}


@pytest.mark.parametrize(
    "server", [replace(STDIO, tool_timeout=30, startup_timeout=4, tools=("a",)), replace(HTTP, tool_timeout=9), SSE]
)
def test_round_trip(server: McpServer) -> None:
    assert round_trip(droid, server, OWN) == [server]
    assert round_trip(droid, server) == [server]
