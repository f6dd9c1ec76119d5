"""Copilot CLI's user-scope MCP servers: `mcpServers` in `~/.copilot/mcp-config.json` (`$COPILOT_HOME`).

1.0.102: `type` local (or stdio) | http | sse; `command`, `args`, `env`; `url`, `headers`; `tools` the tools enabled
(`["*"]`: all, what its own `mcp add` writes; absent reads as all); `timeout` in milliseconds (taken here as the
tool-call timeout: the binary's own code is not readable, its help says only "Timeout in milliseconds"). `${VAR}`
and `$VAR` are expanded in args, env and header values (seen with a real stdio server and a loopback HTTP one).
"""

from __future__ import annotations

from agentcfg.agents.mcpservers import Spec, Timeout

SPEC = Spec(
    agent="copilot",
    display="Copilot CLI",
    types=(("stdio", "local"), ("http", "http"), ("sse", "sse")),
    type_aliases=(("stdio", "stdio"),),
    references=(("${", "}"), ("$", "")),
    tool_timeout=Timeout("timeout"),
    tools_key="tools",
    all_tools=("*",),
    file_name="mcp-config.json",
)
