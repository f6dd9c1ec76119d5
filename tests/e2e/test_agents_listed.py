"""`agentcfg agents` lists every agent the e2e tier installs with the version the program reports of itself,
and says that version is proven: what `--version` prints is what agentcfg compares (Droid's npm package 0.225.1
runs a 0.225.2 binary), and a slow start (Cline CLI's Bun binary) still gets its answer."""

from __future__ import annotations

import pytest

from tests.e2e import agents

pytestmark = pytest.mark.e2e


def test_agents_lists_each_installed_agent_at_its_pinned_release_as_proven(agent_home):
    rows = {row["agent"]: row for row in agent_home.json("agents")}  # the pinned releases on PATH
    for agent in agents.AGENTS:
        assert rows[agent]["path"], rows[agent]
        assert rows[agent]["version"] and rows[agent]["proven"] == "proven", rows[agent]
