"""What the per-agent MCP tests share: an agent's MCP edits applied to plain strings, and the servers a round trip
through its file must keep."""

from __future__ import annotations

from collections.abc import Mapping

from agentcfg import edit
from agentcfg.agents.base import AgentFile
from agentcfg.mcp.model import McpServer

ENVIRON = {"HOME": "/home/u"}
STDIO = McpServer("files", command=("npx", "-y", "@mcp/files", "/srv"), env=(("MODE", "ro"),), secrets=("FILES_TOKEN",))
HTTP = McpServer("web", url="https://mcp.example.com/mcp", transport="http", headers=(("X-Team", "core"),),
                 bearer="WEB_TOKEN", secret_headers=(("X-Api-Key", "WEB_KEY"),))  # fmt: skip
SSE = McpServer("events", url="http://127.0.0.1:8123/sse", transport="sse")


def apply(agent, servers: Mapping[str, McpServer | None], texts: dict[AgentFile, str | None]) -> tuple[str, tuple]:
    """The new text of the agent's one MCP file and the notes."""
    [file_edit] = agent.mcp_edits(servers, texts)
    before = texts[file_edit.file]
    start = file_edit.file.seed if before is None else before
    return edit.apply("json", start, file_edit.assignments, path=str(file_edit.file.path)), file_edit.notes


def round_trip(agent, server: McpServer, text: str | None = None) -> list[McpServer]:
    """The servers read back from the agent's file after `server` is written into `text`; a second edit of the
    same server must change nothing."""
    [file] = agent.mcp_files(ENVIRON)
    new, _ = apply(agent, {server.name: server}, {file: text})
    assert apply(agent, {server.name: server}, {file: new})[0] == new
    return [f.server for f in agent.mcp_read({file: new}, ENVIRON) if f.server.name == server.name]
