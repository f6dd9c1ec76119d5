"""The compatibility page the slow tiers write (tests/compat.py)."""

from __future__ import annotations

from tests.compat import render


def row(tier: str, agent: str, version: str, server: str, case: str, outcome: str) -> dict[str, str]:
    return {"tier": tier, "agent": agent, "agent_version": version, "server": server, "case": case, "outcome": outcome}


ROWS = [
    row("realservers", "doctor", "agentcfg 0.1.0", "vLLM 0.32.0 (CPU)", "healthy", "failed"),
    {**row("e2e", "qwen", "0.15.10", "test server", "b", "passed"), "release": "pinned"},
    {**row("e2e", "qwen", "0.24.4", "test server", "b", "failed"), "release": "latest"},
    {**row("e2e", "codex", "0.171.0", "test server", "a", "passed"), "release": "pinned+latest"},
]


def test_the_page_names_versions_sorts_rows_and_marks_failures():
    page = render(ROWS, "2026-11-30")
    assert "on 2026-11-30" in page
    assert "- Agents: codex 0.171.0, qwen 0.15.10, qwen 0.24.4." in page
    assert "- agentcfg 0.1.0: the doctor and bench rows." in page
    assert "- Servers: test server; vLLM 0.32.0 (CPU).\n\n| tier |" in page
    assert "both rows say so.\n\n- Agents:" in page
    rows = [line for line in page.splitlines() if line.startswith("| e2e") or line.startswith("| realservers")]
    assert [r.split(" | ")[1:3] for r in rows] == [
        ["codex", "latest (= pinned)"],  # one run, both releases: each gets its row
        ["codex", "pinned"],
        ["qwen", "latest"],
        ["qwen", "pinned"],
        ["doctor", ""],
    ]
    assert "| qwen | latest | 0.24.4 | test server | b | **FAIL** |" in page
    assert rows[-1].endswith("| **FAIL** |")
    assert "2 of 4 runs passed." in page
