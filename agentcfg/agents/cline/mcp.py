"""Cline CLI's MCP servers: `mcpServers` in `<data dir>/settings/cline_mcp_settings.json` (~/.cline/data; the file
CLINE_MCP_SETTINGS_PATH names instead).

3.0.65 reads two shapes of an entry: the flat one (`type` stdio | sse | streamableHttp, or `transportType`, which
also takes http; `command`, `args`, `cwd`, `env`; `url`, `headers`; a `url` without a type is SSE) and the one its
own `cline mcp add` writes, `{"transport": {type, command, args, cwd, env | url, headers}}`; both with `disabled`,
`timeout` (seconds: "Increase the timeout field (in seconds)"). agentcfg writes the flat shape, and edits a nested
entry in place. Cline expands no variable in this file (only a plugin's ${PLUGIN_ROOT}), so a secret cannot be
referenced: a server's secrets are left out, with a note. No list of enabled tools (`autoApprove` is not read).
"""

from __future__ import annotations

from agentcfg.agents.mcpservers import Spec, Timeout

SPEC = Spec(
    agent="cline",
    display="Cline CLI",
    types=(("stdio", "stdio"), ("http", "streamableHttp"), ("sse", "sse")),
    type_aliases=(("http", "http"),),
    untyped_url="sse",
    type_keys_read=("transportType",),
    nested="transport",
    references=(),
    tool_timeout=Timeout("timeout", per_second=1),
    quiet=(("disabled", False),),
    file_name="cline_mcp_settings.json",
)
