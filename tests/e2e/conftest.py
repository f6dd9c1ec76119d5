"""Fixtures for the e2e tier: the real agents from npm, each run in its own temporary HOME."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import AGENTCFG, Home
from tests.e2e import agents


@pytest.fixture
def release() -> str:
    """The agents' release a test runs (`@pytest.mark.parametrize(("agent", "release"), agents.matrix())`
    overrides this): the pinned one unless the test says."""
    return "pinned"


@pytest.fixture
def agents_bin(release: str) -> Path:
    return agents.install(release)  # cached: only the first call of a run installs


@pytest.fixture
def agent_versions(agents_bin: Path) -> dict[str, str]:
    return {name: _version(name, agents_bin) for name in agents.AGENTS}


@functools.cache
def _version(name: str, bin_dir: Path) -> str:
    return agents.version(name, bin_dir)


@pytest.fixture
def agent_home(home: Home, agents_bin: Path) -> Home:
    """`home`, with the four agents on PATH (so a plain `agentcfg switch` finds them installed)."""
    home.env = agents.environment(home.env, agents_bin)
    return home


@pytest.fixture
def run_agent(agent_home: Home) -> Callable[..., agents.Run]:
    """`run_agent("codex", timeout=60, via=None | "PROFILE", **env)`: the agent headless in the
    test HOME, directly or through `agentcfg exec PROFILE --`."""

    def run(agent: str, timeout: float = 90, via: str | None = None, **env: str) -> agents.Run:
        argv = agents.command(agent)
        if via:
            argv = [AGENTCFG, "exec", via, "--", *argv]
        return agents.run(argv, {**agent_home.env, **env}, agent_home.root, timeout, agent)

    return run
