"""Every real-world config file in tests/corpus/ that holds an agent's MCP servers, through MCP round trips:

  add:    `mcp add` a stdio server (a plain variable and a secret's reference) and a remote one (a header, a
          bearer reference), then the same again, then `mcp rm` of both, then rollback three times -> every
          file byte for byte as it was; the second identical add changes nothing;
  import: what the agents have is read into agentcfg's model without an error, and the user's own servers
          are the same before and after agentcfg adds its own.
After every step each file still parses with a parser that is not agentcfg's (tests/test_corpus.py: oracle).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcfg.agents import AGENTS
from agentcfg.apply import Journal
from agentcfg.mcp import ops
from agentcfg.mcp.model import McpServer
from tests.bare_home import make_environ
from tests.test_corpus import corpus_files, corpus_id, destination, oracle, parses

STDIO = McpServer("agentcfg-fs", command=("npx", "-y", "@modelcontextprotocol/server-filesystem", "/src dir"),
                  env=(("LOG_LEVEL", "debug"),), secrets=("FS_TOKEN",))  # fmt: skip
REMOTE = McpServer("agentcfg-docs", url="http://127.0.0.1:3001/mcp", transport="http", headers=(("X-Team", "a"),),
                   bearer="DOCS_TOKEN")  # fmt: skip


def mcp_cases() -> list:
    """The corpus files that sit where their agent keeps its MCP servers."""
    found = []
    for path in corpus_files():
        agent = AGENTS.get(path.parent.name)
        if agent is None or not parses(path, path.read_text(encoding="utf-8", errors="replace")):
            continue
        probe = Path("/nonexistent-home")
        if destination(path, probe) in {f.path for f in agent.mcp_files(make_environ(probe))}:
            found.append(pytest.param(path, id=corpus_id(path)))
    return found


def _place(path: Path, home: Path) -> tuple[dict[str, str], Path]:
    environ = make_environ(home)
    target = destination(path, home)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(path.read_bytes())
    return environ, target


def _commit(agent: str, changes: dict, environ: dict[str, str], label: str) -> ops.Committed:
    readings = ops.read([AGENTS[agent]], environ)
    assert readings[0].problem is None, readings[0].problem
    return ops.commit(changes, readings, environ, label=label)


@pytest.mark.parametrize("path", mcp_cases())
def test_mcp_add_and_rm_round_trip_byte_for_byte(path: Path, tmp_path: Path):
    agent = path.parent.name
    home = tmp_path / "home"
    environ, target = _place(path, home)
    original = target.read_bytes()
    own_before = {f.server.name: f for f in ops.read([AGENTS[agent]], environ)[0].found}

    added = _commit(agent, {STDIO.name: STDIO, REMOTE.name: REMOTE}, environ, "add")
    assert added.entry is not None
    text = target.read_text(encoding="utf-8")
    oracle(target, text, strict_json=False)
    found = {f.server.name: f for f in ops.read([AGENTS[agent]], environ)[0].found}
    assert found[STDIO.name].server == STDIO or found[STDIO.name].unmodelled == ()
    assert {n: f.server for n, f in found.items() if n in own_before} == {n: f.server for n, f in own_before.items()}

    again = _commit(agent, {STDIO.name: STDIO, REMOTE.name: REMOTE}, environ, "add again")
    assert again.entry is None and not again.plan.pending and target.read_text(encoding="utf-8") == text

    removed = _commit(agent, {STDIO.name: None, REMOTE.name: None}, environ, "rm")
    assert removed.entry is not None
    oracle(target, target.read_text(encoding="utf-8"), strict_json=False)

    journal = Journal(environ)
    for _ in range(2):
        with journal.locked():
            entry, changes, _kept = journal.rollback_plan(force=False)
            journal.rollback(entry, changes)
    assert target.read_bytes() == original
