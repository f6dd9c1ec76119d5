"""Factory Droid's user-scope MCP servers: `mcpServers` in `~/.factory/mcp.json` (FACTORY_HOME_OVERRIDE moves it).

0.225.2: `type` stdio (the default) | http | sse; `command`, `args`, `env`; `url`, `headers`; `${VAR}` references in
env and headers (a credential's unset variable is an error). `timeout` (milliseconds) bounds a tool call,
`connectTimeout` (milliseconds) the start; `enabledTools` lists the tools enabled (`disabledTools`, `disabled`
are kept; its own `mcp add` writes `disabled: false`).
"""

from __future__ import annotations

from agentcfg.agents.mcpservers import Spec, Timeout

SPEC = Spec(
    agent="droid",
    display="Factory Droid",
    tool_timeout=Timeout("timeout"),
    startup_timeout=Timeout("connectTimeout"),
    tools_key="enabledTools",
    quiet=(("disabled", False),),
    file_name="mcp.json",
)
