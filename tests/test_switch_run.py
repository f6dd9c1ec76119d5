"""The one switch path (agentcfg.switch.run): a dry run plans exactly what the real run commits, and writes
nothing; the real run commits one journal entry under the label it is given."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from agentcfg import profiles, switch
from agentcfg.agents import AGENTS
from agentcfg.agents.base import KeySource
from agentcfg.apply import Journal
from tests.conftest import Home


def _files(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_dry_run_is_the_same_plan_and_writes_nothing(home: Home) -> None:
    environ = home.env
    local, agents = profiles.get("local", environ), list(AGENTS.values())
    dry = switch.run(local, agents, environ, KeySource(), label="switch local", dry_run=True)
    assert dry.entry is None and _files(home.root) == {}
    real = switch.run(local, agents, environ, KeySource(), label="switch local")
    assert [(c.path, c.before, c.after) for c in dry.plan.changes] == [
        (c.path, c.before, c.after) for c in real.plan.changes
    ]
    (entry,) = Journal(environ).entries()
    assert (entry.id, entry.manifest["label"]) == (real.entry, "switch local")
    again = switch.run(local, agents, environ, KeySource(), label="switch local")
    assert again.entry is None and not again.plan.pending  # a second switch changes 0 bytes


def test_rewrite_changes_each_planned_file_before_it_is_committed(home: Home) -> None:
    environ = home.env

    local = profiles.get("local", environ)
    done = switch.run(
        local, [AGENTS["codex"]], environ, KeySource(), label="l", rewrite=lambda c: replace(c, after="# x\n")
    )
    assert {c.path.read_text() for c in done.plan.changes} == {"# x\n"}
