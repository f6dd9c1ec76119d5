"""Gemini CLI's user-scope MCP servers: `mcpServers` in `~/.gemini/settings.json` (`$GEMINI_CLI_HOME/.gemini`),
the file a switch edits too (JSON with comments).

0.61.0: `command` (+ `args`, `env`, `cwd`) is stdio; `url` with `type` http or sse (a `url` without a type: HTTP,
falling back to SSE), or the older `httpUrl` (read, replaced by `url` + `type` on an edit). `$VAR`, `${VAR}` and
`${VAR:-default}` are expanded in every string value. `timeout` (milliseconds) bounds each request, the
connection's too; no separate startup timeout. `includeTools` lists the tools enabled.
"""

from __future__ import annotations

from agentcfg.agents.mcpservers import Spec, Timeout

SPEC = Spec(
    agent="gemini",
    display="Gemini CLI",
    types=(("stdio", None), ("http", "http"), ("sse", "sse")),  # a command needs no type (its own `mcp add` too)
    type_aliases=(("stdio", "stdio"),),
    legacy_urls=(("httpUrl", "http"),),
    references=(("${", "}"), ("$", "")),
    tool_timeout=Timeout("timeout"),
    tools_key="includeTools",
    file_name="settings.json",
)
