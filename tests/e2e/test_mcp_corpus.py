"""Real users' files (tests/corpus/) that hold an agent's MCP servers: `agentcfg mcp add` writes the registry's
server-everything beside what the user has, the real agent's own listing shows it (so the agent still loads the
file agentcfg wrote), and `agentcfg rollback` gives the file back byte for byte (after the agent ran: without
agentcfg's server, what the agent changed itself kept). A few files per agent (the
in-process round trips of every file are tests/test_corpus_mcp.py); a file the agent itself refuses as it is
(an option of another release) is skipped, as it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Home
from tests.e2e import mcp_servers
from tests.e2e.mcp_agents import LISTINGS, Server
from tests.e2e.test_mcp import listing
from tests.test_corpus import CORPUS, destination, parses

pytestmark = pytest.mark.e2e

PER_AGENT = 3
AGENTS = ("codex", "opencode", "qwen", "gemini")  # their corpus files are where they keep their MCP servers


def _files() -> list:
    chosen = []
    for agent in AGENTS:
        paths = [p for p in sorted((CORPUS / agent).iterdir()) if p.suffix != ".env" and parses(p, p.read_text())]
        mcp_first = sorted(paths, key=lambda p: "mcp" not in p.read_text().lower())  # some with servers of their own
        chosen += [pytest.param(agent, p, id=f"{agent}/{p.name}") for p in mcp_first[:PER_AGENT]]
    return chosen


@pytest.mark.parametrize(("agent", "path"), _files())
def test_mcp_add_to_a_real_users_file_then_the_agent_lists_it_and_rollback_restores(
    agent: str, path: Path, agent_home: Home
):
    mcp_servers.install()
    target = destination(path, agent_home.root)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(path.read_bytes())
    if listing(agent, agent_home).returncode != 0:
        pytest.skip(f"{agent} refuses {path.name} as it is")
    original = target.read_bytes()  # as the agent left it (qwen-code migrates an older file when it runs)
    server = Server("agentcfg-everything", command=tuple(mcp_servers.stdio_command()))
    add = ("mcp", "add", server.name, "--agent", agent, "--", *server.command)
    agent_home.run(*add)
    assert target.read_bytes() != original
    agent_home.run("rollback")
    assert target.read_bytes() == original  # before the agent ran again: byte for byte
    agent_home.run(*add)
    written = target.read_bytes()
    result = listing(agent, agent_home)
    assert result.returncode == 0 and LISTINGS[agent].sees(result, server), f"{agent} does not list it:\n{result}"
    agent_home.run("rollback")
    if target.read_bytes() != written:  # qwen-code migrates its settings when it runs: its own change stays
        assert server.name not in target.read_text(encoding="utf-8")
    else:
        assert target.read_bytes() == original
