"""The agents' readers agree: one server written by hand in each agent's own shape reads as one definition, so
`mcp list` shows no difference where there is none and `mcp import` takes one server, not a conflict."""

from __future__ import annotations

import json
from pathlib import Path

from agentcfg.agents import AGENTS
from agentcfg.agents.base import AgentFile

ENV = {"LOG_LEVEL": "debug", "API_KEY": "short1", "SERVICE_URL": "http://127.0.0.1:9"}
COMMAND = ["npx", "-y", "server"]
CODEX_ENV = ", ".join(f'{k} = "{v}"' for k, v in ENV.items())


def _servers(entry: dict) -> str:
    return json.dumps({"mcpServers": {"s": entry}})


STDIO = {"command": "npx", "args": COMMAND[1:], "env": ENV}
HAND_WRITTEN = {
    "codex": ("toml", f'[mcp_servers.s]\ncommand = "npx"\nargs = ["-y", "server"]\nenv = {{ {CODEX_ENV} }}\n'),
    "opencode": ("json", json.dumps({"mcp": {"s": {"type": "local", "command": COMMAND, "environment": ENV}}})),
    "claude": ("json", _servers(STDIO)),
    "qwen": ("json", _servers(STDIO)),
    "gemini": ("json", _servers(STDIO)),
    "droid": ("json", _servers({"type": "stdio", **STDIO})),
    "copilot": ("json", _servers({"type": "local", **STDIO})),
}


def test_one_server_in_every_agent_s_shape_reads_as_one_definition():
    read = {}
    for agent, (fmt, text) in HAND_WRITTEN.items():
        file = AgentFile(Path(f"/home/u/{agent}.{'toml' if fmt == 'toml' else 'json'}"), fmt)
        (found,) = AGENTS[agent].mcp_read({file: text}, {"HOME": "/home/u"})
        read[agent] = (found.server.comparable(), found.plaintext)
    assert len(set(read.values())) == 1, read
    server, plaintext = read["codex"]
    assert server.secrets == ("API_KEY",) and plaintext == (("API_KEY", "short1"),)
    assert dict(server.env) == {"LOG_LEVEL": "debug", "SERVICE_URL": "http://127.0.0.1:9"}
