"""doctor's MCP check against servers written with the official MCP SDK (@modelcontextprotocol/sdk, the one the
agents ship in their node_modules): stdio, streamable HTTP answering in JSON and in SSE, and legacy SSE. The
servers run on 127.0.0.1 only; the definitions are constructed as an agent's mcp_read gives them."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcfg import doctor
from agentcfg.mcp.model import Found, McpServer

pytestmark = pytest.mark.e2e

TOKEN = "right-token-0123456789abcdef"
STDIO = """
import {{ McpServer }} from "{sdk}/dist/esm/server/mcp.js";
import {{ StdioServerTransport }} from "{sdk}/dist/esm/server/stdio.js";
const server = new McpServer({{ name: "sdk-stdio", version: "0.0.1" }});
server.tool("ping", async () => ({{ content: [{{ type: "text", text: "pong" }}] }}));
await server.connect(new StdioServerTransport());
"""
HTTP = """
import http from "node:http";
import {{ McpServer }} from "{sdk}/dist/esm/server/mcp.js";
import {{ StreamableHTTPServerTransport }} from "{sdk}/dist/esm/server/streamableHttp.js";
import {{ SSEServerTransport }} from "{sdk}/dist/esm/server/sse.js";
const made = () => new McpServer({{ name: "sdk-http", version: "0.0.2" }});
const listener = http.createServer(async (req, res) => {{
  if (req.url === "/sse" && req.method === "GET") {{
    await made().connect(new SSEServerTransport("/messages", res));
    return;
  }}
  if (!["/json", "/stream"].includes(req.url)) {{ res.writeHead(404).end("nope"); return; }}
  if (req.headers.authorization !== "Bearer {token}") {{
    res.writeHead(401).end('{{"error":"invalid_token"}}');
    return;
  }}
  const server = made();
  const transport = new StreamableHTTPServerTransport({{ sessionIdGenerator: undefined,
                                                          enableJsonResponse: req.url === "/json" }});
  res.on("close", () => {{ transport.close(); server.close(); }});
  await server.connect(transport);
  await transport.handleRequest(req, res);
}});
listener.listen(0, "127.0.0.1", () => console.log(listener.address().port));
"""


@pytest.fixture
def sdk(agents_bin: Path, tmp_path: Path) -> Path:
    found = agents_bin.parent / "@modelcontextprotocol" / "sdk"
    if not (found / "package.json").exists():
        pytest.skip("no @modelcontextprotocol/sdk among the agents' packages")
    return found


@pytest.fixture
def http_root(sdk: Path, tmp_path: Path) -> Iterator[str]:
    program = tmp_path / "http.mjs"
    program.write_text(HTTP.format(sdk=sdk, token=TOKEN))
    process = subprocess.Popen(["node", str(program)], stdout=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        yield f"http://127.0.0.1:{port}"
    finally:
        process.kill()
        process.wait()


def test_doctor_asks_the_sdks_servers(sdk, http_root, tmp_path):
    program = tmp_path / "stdio.mjs"
    program.write_text(STDIO.format(sdk=sdk))
    servers = [
        McpServer("stdio", command=("node", str(program))),
        McpServer("json", url=http_root + "/json", transport="http", bearer="SDK_TOKEN"),
        McpServer("stream", url=http_root + "/stream", transport="http", bearer="SDK_TOKEN"),
        McpServer("legacy", url=http_root + "/sse", transport="sse"),
        McpServer("refused", url=http_root + "/json", transport="http", bearer="OTHER_TOKEN"),
        McpServer("other-transport", url=http_root + "/sse", transport="http"),
    ]
    environ = {"PATH": os.environ["PATH"], "SDK_TOKEN": TOKEN, "OTHER_TOKEN": "wrong-token-0123456789"}
    report = doctor.run([], environ, deadline=10.0, mcp_servers=[Found("claude", s, s.name) for s in servers])
    assert {f.server: (f.id, f.status) for f in report.findings} == {
        "stdio": ("mcp-ok", "pass"),
        "json": ("mcp-ok", "pass"),
        "stream": ("mcp-ok", "pass"),
        "legacy": ("mcp-ok", "pass"),
        "refused": ("mcp-unauthorized", "fail"),
        "other-transport": ("mcp-wrong-url", "fail"),
    }
    names = {f.server: f.summary for f in report.findings}
    assert "sdk-stdio 0.0.1" in names["stdio"] and "sdk-http 0.0.2" in names["stream"]
