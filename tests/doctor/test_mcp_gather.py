"""doctor's first look at the agents' MCP servers (agentcfg.doctor._mcp_gather): a file that cannot define one
is not parsed for them, and one that can is, however its key is spelt."""

from __future__ import annotations

import pytest

from agentcfg import doctor
from agentcfg.agents import AGENTS


@pytest.mark.parametrize(
    ("text", "may"),
    [
        (None, False),
        ('model = "x"\n[model_providers.a]\nbase_url = "http://127.0.0.1:9/v1"\n', False),
        ('[mcp_servers.fs]\ncommand = "x"\n', True),
        ('{"mcpServers": {}}', True),
        ('{"MCP": 1}', True),
        ('{"\\u006dcpServers": {"fs": {"command": "x"}}}', True),  # a key spelt with escapes
        ('["\\u006dcp_servers".fs]\ncommand = "x"\n', True),
    ],
)
def test_only_a_file_that_may_name_mcp_servers_is_read_for_them(text, may):
    assert doctor._may_hold_mcp(text) is may


def test_a_server_spelt_with_escapes_is_still_found(tmp_path):
    environ = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config"), "PATH": "/usr/bin:/bin"}
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text('["\\u006dcp_servers".fs]\ncommand = "fs-mcp"\n')
    found, problems = doctor._mcp_gather([AGENTS["codex"]], environ)
    assert problems == [] and [f.server.command for f in found] == [("fs-mcp",)]
