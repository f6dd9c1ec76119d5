"""qwen-code's user-scope MCP servers: `mcpServers` in `~/.qwen/settings.json` (`$QWEN_HOME`), the file a switch
edits too.

0.24.4 has no transport `type`: `command` (+ `args`, `env`, `cwd`) is stdio, `httpUrl` streamable HTTP, `url` SSE.
`$VAR` and `${VAR}` are expanded in every string value of the file. `timeout` (milliseconds) bounds each request
(tool calls), `discoveryTimeoutMs` (milliseconds, 0.1 to 300 seconds) the start; `includeTools` lists the tools
enabled (`excludeTools`, `trust`, `cwd` are kept as they are).
"""

from __future__ import annotations

from agentcfg.agents.mcpservers import Spec, Timeout

SPEC = Spec(
    agent="qwen",
    display="qwen-code",
    type_key=None,
    url_keys=(("http", "httpUrl"), ("sse", "url")),
    untyped_url="sse",
    references=(("${", "}"), ("$", "")),
    tool_timeout=Timeout("timeout"),
    startup_timeout=Timeout("discoveryTimeoutMs", low=0.1, high=300.0),
    tools_key="includeTools",
    file_name="settings.json",
)
