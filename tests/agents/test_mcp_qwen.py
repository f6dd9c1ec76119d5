"""qwen-code's MCP servers: `mcpServers` of ~/.qwen/settings.json (agents/qwen/mcp.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agentcfg import edit
from agentcfg.agents import qwen
from agentcfg.mcp.model import McpServer
from tests.agents.mcp_samples import ENVIRON, HTTP, SSE, STDIO, apply, round_trip

CORPUS = Path(__file__).parents[1] / "corpus" / "qwen"
[FILE] = qwen.mcp_files(ENVIRON)


def test_the_settings_file_a_switch_edits() -> None:
    assert qwen.files(ENVIRON)[1] == FILE and FILE.path == Path("/home/u/.qwen/settings.json")
    assert qwen.mcp_files({**ENVIRON, "QWEN_HOME": "/q"})[0].path == Path("/q/settings.json")


def test_real_files() -> None:
    [lisp] = qwen.mcp_read({FILE: (CORPUS / "003-40ants-mcp.json").read_text()}, ENVIRON)
    assert lisp.server == McpServer("lisp-dev", command=("lisp-dev-mcp", "--log", "mcp.log", "--verbose"),
                                    env=(("SLYNK_PORT", "9991"),))  # fmt: skip
    [hub] = qwen.mcp_read({FILE: (CORPUS / "012-v1nh1shungry-mcp.json").read_text()}, ENVIRON)
    assert hub.server == McpServer("mcphub", url="http://localhost:37373/mcp", transport="sse")  # `url`: SSE
    assert hub.unmodelled == ("trust",) and hub.where == "~/.qwen/settings.json: mcpServers.mcphub"


def test_dollar_references_read_as_secrets() -> None:
    text = '{"mcpServers": {"s": {"httpUrl": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer $TOK"}}}}'
    [found] = qwen.mcp_read({FILE: text}, ENVIRON)
    assert found.server.transport == "http" and found.server.bearer == "TOK"


def test_an_edit_keeps_the_rest_of_the_settings() -> None:
    text = (CORPUS / "012-v1nh1shungry-mcp.json").read_text()
    url = "http://localhost:37373/mcp"
    server = McpServer("mcphub", url=url, transport="http", startup_timeout=10, tool_timeout=60)
    new, notes = apply(qwen, {"mcphub": server}, {FILE: text})
    data = edit.load("json", new)
    assert data["mcpServers"]["mcphub"] == {"trust": True, "httpUrl": "http://localhost:37373/mcp", "timeout": 60000,
                                            "discoveryTimeoutMs": 10000}  # fmt: skip
    assert data["selectedAuthType"] == "qwen-oauth" and notes == ()


def test_a_long_startup_timeout_is_said() -> None:
    _, notes = apply(qwen, {STDIO.name: replace(STDIO, startup_timeout=600)}, {FILE: None})
    assert any("0.1 to 300 seconds" in n for n in notes)


def test_a_new_file_starts_from_the_seed() -> None:
    new, _ = apply(qwen, {SSE.name: SSE}, {FILE: None})
    assert edit.load("json", new) == {
        "$version": qwen.SETTINGS_VERSION,
        "mcpServers": {"events": {"url": "http://127.0.0.1:8123/sse"}},
    }


@pytest.mark.parametrize(
    "server",
    [replace(STDIO, tool_timeout=30, startup_timeout=5, tools=("read", "write")), replace(HTTP, tool_timeout=2.5), SSE],
)
def test_round_trip(server: McpServer) -> None:
    assert round_trip(qwen, server, (CORPUS / "008-gerald-model-providers.json").read_text()) == [server]
    assert round_trip(qwen, server) == [server]
