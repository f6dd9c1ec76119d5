"""Cline CLI's MCP servers: `mcpServers` of cline_mcp_settings.json (agents/cline/mcp.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agentcfg import edit
from agentcfg.agents import cline
from agentcfg.mcp.model import McpServer
from tests.agents.mcp_samples import ENVIRON, HTTP, SSE, STDIO, apply, round_trip

[FILE] = cline.mcp_files(ENVIRON)
# A flat entry (the older shape) and the nested one cline 3's own `cline mcp add` writes.
SETTINGS = """{
  "mcpServers": {
    "flat": {"command": "node", "args": ["srv.js"], "cwd": "/w", "disabled": false, "timeout": 60,
             "autoApprove": ["read"]},
    "hub": {"transportType": "http", "url": "http://127.0.0.1:9/mcp"},
    "added": {"transport": {"type": "streamableHttp", "url": "https://mcp.example.com/mcp",
                            "headers": {"X-Team": "core"}}, "disabled": true}
  }
}
"""


def test_the_file() -> None:
    assert FILE.path == Path("/home/u/.cline/data/settings/cline_mcp_settings.json")
    assert cline.mcp_files({**ENVIRON, "CLINE_DATA_DIR": "/d"})[0].path == Path("/d/settings/cline_mcp_settings.json")
    assert cline.mcp_files({**ENVIRON, "CLINE_MCP_SETTINGS_PATH": "/m.json"})[0].path == Path("/m.json")


def test_both_shapes_read() -> None:
    flat, hub, added = cline.mcp_read({FILE: SETTINGS}, ENVIRON)
    assert flat.server == McpServer("flat", command=("node", "srv.js"), tool_timeout=60)
    assert flat.unmodelled == ("cwd", "autoApprove")
    assert hub.server == McpServer("hub", url="http://127.0.0.1:9/mcp", transport="http")
    assert added.server == McpServer("added", url="https://mcp.example.com/mcp", transport="http",
                                     headers=(("X-Team", "core"),))  # fmt: skip
    assert added.unmodelled == ("disabled",)


def test_references_are_not_expanded_so_not_secrets() -> None:
    text = (
        '{"mcpServers": {"s": {"command": "x", "env": {"TOK": "${TOK}", "K": "ghp_abcdefghijklmnopqrstuvwxyz0123"}}}}'
    )
    [found] = cline.mcp_read({FILE: text}, ENVIRON)
    assert (
        found.unmodelled == ("env.TOK",)
        and found.server.secrets == ("K",)
        and found.plaintext == (("K", found.plaintext[0][1]),)
    )


def test_an_edit_keeps_the_shape_of_each_entry() -> None:
    added = McpServer("added", url="https://mcp.example.com/v2", transport="sse", tool_timeout=5)
    hub = McpServer("hub", url="http://127.0.0.1:9/mcp", transport="http")
    new, notes = apply(cline, {"added": added, "hub": hub}, {FILE: SETTINGS})
    servers = edit.load("json", new)["mcpServers"]
    assert servers["added"] == {"transport": {"type": "sse", "url": "https://mcp.example.com/v2"}, "disabled": True,
                                "timeout": 5}  # fmt: skip
    assert servers["hub"] == {"url": "http://127.0.0.1:9/mcp", "type": "streamableHttp"}
    assert notes == ()
    assert apply(cline, {"added": added, "hub": hub}, {FILE: new})[0] == new


def test_secrets_are_left_out_with_a_note() -> None:
    new, notes = apply(cline, {STDIO.name: STDIO, HTTP.name: HTTP}, {FILE: None})
    assert "${" not in new and "FILES_TOKEN" not in new and "WEB_KEY" not in new
    assert any("FILES_TOKEN" in n and "agentcfg exec" in n for n in notes)
    assert any("WEB_TOKEN" in n and "sends only what the file holds" in n for n in notes)


@pytest.mark.parametrize(
    "server",
    [replace(STDIO, secrets=(), tool_timeout=30), replace(HTTP, bearer=None, secret_headers=(), tool_timeout=2.5), SSE],
)
def test_round_trip(server: McpServer) -> None:
    assert round_trip(cline, server, SETTINGS) == [server]
    assert round_trip(cline, server) == [server]
