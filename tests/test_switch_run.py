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


def test_planning_parses_before_the_lock_is_taken(home: Home, monkeypatch) -> None:
    """A big file is parsed while other agentcfg commands can still take the lock: planning runs before it."""
    from agentcfg import fsutil, switchplan
    from agentcfg.errors import AgentcfgError

    environ = home.env
    held = []
    planned = switchplan.plan

    def watching(*args, **kwargs):
        lock = Journal(environ).state / "lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        try:
            with fsutil.exclusive_lock(lock, timeout=0):
                held.append(False)
        except AgentcfgError:  # another holds it
            held.append(True)
        return planned(*args, **kwargs)

    monkeypatch.setattr(switchplan, "plan", watching)
    home.write(".codex/config.toml", 'model = "other"\n')
    switch.run(profiles.get("local", environ), [AGENTS["codex"]], environ, KeySource(), label="l")
    assert held == [False]
    assert 'model = "DeepSeek-V4-Flash"' in home.read(".codex/config.toml")


def test_a_file_changed_between_planning_and_the_lock_is_planned_again(home: Home, monkeypatch) -> None:
    """Another run that wrote after this one planned (and before it took the lock): planned again, under the lock,
    from what is there now; the other run's edit is kept."""
    environ = home.env
    home.write(".codex/config.toml", 'model = "other"\n')
    locked = Journal.locked

    def meanwhile(self, *args, **kwargs):
        home.write(".codex/config.toml", 'model = "other"\n# written meanwhile\n')
        return locked(self, *args, **kwargs)

    monkeypatch.setattr(Journal, "locked", meanwhile)
    done = switch.run(profiles.get("local", environ), [AGENTS["codex"]], environ, KeySource(), label="l")
    text = home.read(".codex/config.toml")
    assert "# written meanwhile" in text and 'model = "DeepSeek-V4-Flash"' in text
    assert done.entry is not None
