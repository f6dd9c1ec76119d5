"""Claude Code's user-scope MCP servers: `mcpServers` at the top of `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`
when set), a big file Claude Code rewrites itself: an edit touches only the entries it sets. A project's `.mcp.json`
has the same shape (its `mcp_read` reads either).

2.1.332: `type` stdio (or none) | http (or streamable-http) | sse; `command`, `args`, `env`; `url`, `headers`;
`${VAR}` and `${VAR:-default}` expanded in command, args, env, url and headers. `timeout` (milliseconds, a
positive integer) is the server's tool-call timeout, ignored under 1000; the startup timeout is only the
MCP_TIMEOUT variable. `tools` of a remote server are permission policies, not the tools enabled: unmodelled.
"""

from __future__ import annotations

from agentcfg.agents.mcpservers import Spec, Timeout

SPEC = Spec(
    agent="claude",
    display="Claude Code",
    type_aliases=(("streamable-http", "http"),),
    tool_timeout=Timeout("timeout", 1000, low=1.0),
    file_name=".claude.json",
)
