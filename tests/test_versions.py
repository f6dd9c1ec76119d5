"""agentcfg.versions: `BINARY --version`, run once per program file and cached by its identity."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from agentcfg import versions

pytestmark = pytest.mark.skipif(os.name == "nt", reason="fake agents are POSIX shell scripts")


@pytest.mark.parametrize(
    ("output", "version"),
    [
        ("codex-cli 0.171.0", (0, 171, 0)),
        ("2.1.197 (Claude Code)", (2, 1, 197)),
        ("v1.2.3-beta", (1, 2, 3)),
        ("opencode 0.15.8\nnode v22.1.0\n", (0, 15, 8)),  # the first one
        ("qwen 1.2", None),
        ("no version", None),
        ("", None),
    ],
)
def test_parse(output, version):
    assert versions.parse(output) == version


@pytest.fixture
def agent(tmp_path: Path):
    """Write `tmp_path/bin/NAME` printing `output` and exiting with `code`; each run adds a line to a counter."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    counter = tmp_path / "runs"

    def write(name: str, output: str = "codex-cli 0.171.0", code: int = 0, extra: str = "") -> Path:
        path = bin_dir / name
        path.write_text(f'#!/bin/sh\necho "$@" >> {counter}\n{extra}printf "%s\\n" "{output}"\nexit {code}\n')
        path.chmod(0o755)
        return path

    write.runs = lambda: len(counter.read_text().splitlines()) if counter.exists() else 0  # type: ignore[attr-defined]
    write.args = lambda: counter.read_text().splitlines()  # type: ignore[attr-defined]
    return write


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    return {"PATH": str(tmp_path / "bin"), "AGENTCFG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}


def _cache(tmp_path: Path) -> dict[str, str]:
    return json.loads((tmp_path / "cfg" / "state" / "versions.json").read_text())


def test_installed_runs_once_then_reads_the_cache(agent, environ, tmp_path):
    path = agent("codex")
    assert versions.installed("codex", environ) == (0, 171, 0)
    assert agent.runs() == 1
    assert agent.args() == ["--version"]
    assert versions.installed("codex", environ) == (0, 171, 0)
    assert agent.runs() == 1
    st = path.stat()
    assert _cache(tmp_path) == {f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}": "codex-cli 0.171.0"}
    assert (tmp_path / "cfg" / "state" / "versions.json").stat().st_mode & 0o077 == 0


def test_an_upgrade_runs_it_again(agent, environ, tmp_path):
    agent("codex")
    assert versions.installed("codex", environ) == (0, 171, 0)
    path = agent("codex", output="codex-cli 0.200.10 (upgraded)")
    assert versions.installed("codex", environ) == (0, 200, 10)
    assert agent.runs() == 2
    assert versions.installed("codex", environ) == (0, 200, 10)
    assert agent.runs() == 2
    assert list(_cache(tmp_path).values()) == ["codex-cli 0.200.10 (upgraded)"]  # the old identity is dropped
    assert str(os.path.realpath(path)) in next(iter(_cache(tmp_path)))


def test_the_same_size_with_a_new_mtime_runs_it_again(agent, environ):
    path = agent("codex", output="codex-cli 0.171.0")
    assert versions.installed("codex", environ) == (0, 171, 0)
    agent("codex", output="codex-cli 0.171.9")  # same length
    later = time.time_ns() + 5_000_000_000
    os.utime(path, ns=(later, later))
    assert versions.installed("codex", environ) == (0, 171, 9)
    assert agent.runs() == 2


def test_each_binary_has_its_own_entry(agent, environ, tmp_path):
    agent("codex")
    agent("claude", output="2.1.197 (Claude Code)")
    assert versions.installed("codex", environ) == (0, 171, 0)
    assert versions.installed("claude", environ) == (2, 1, 197)
    assert versions.installed("codex", environ) == (0, 171, 0)
    assert agent.runs() == 2
    assert sorted(_cache(tmp_path).values()) == ["2.1.197 (Claude Code)", "codex-cli 0.171.0"]


def test_missing_binary(agent, environ, tmp_path):
    assert versions.installed("codex", environ) is None
    not_executable = tmp_path / "bin" / "qwen"
    not_executable.write_text("#!/bin/sh\necho 1.2.3\n")
    not_executable.chmod(0o644)
    assert versions.installed("qwen", environ) is None
    assert not (tmp_path / "cfg" / "state" / "versions.json").exists()


def test_a_failing_version_command_is_none(agent, environ):
    agent("codex", output="codex-cli 0.171.0", code=1)
    assert versions.installed("codex", environ) is None
    assert agent.runs() == 1


def test_output_without_a_version_is_none(agent, environ):
    agent("codex", output="codex-cli (development build)")
    assert versions.installed("codex", environ) is None
    assert versions.installed("codex", environ) is None
    assert agent.runs() == 1


def test_a_hung_binary_times_out_and_is_not_cached(agent, environ, tmp_path):
    flag = tmp_path / "hang"
    flag.touch()
    agent("codex", extra=f"[ -e {flag} ] && exec /bin/sleep 30\n")
    started = time.monotonic()
    assert versions.installed("codex", environ, timeout=0.5) is None
    assert time.monotonic() - started < 5
    cache = tmp_path / "cfg" / "state" / "versions.json"
    assert not cache.exists() or _cache(tmp_path) == {}
    flag.unlink()  # the same program file, which answers this time: it runs again
    assert versions.installed("codex", environ, timeout=5) == (0, 171, 0)
    assert agent.runs() == 2


def test_an_unreadable_cache_is_ignored_and_replaced(agent, environ, tmp_path):
    state = tmp_path / "cfg" / "state"
    state.mkdir(parents=True)
    (state / "versions.json").write_text("{not json")
    agent("codex")
    assert versions.installed("codex", environ) == (0, 171, 0)
    assert list(_cache(tmp_path).values()) == ["codex-cli 0.171.0"]


@pytest.mark.parametrize("content", ["null", "[]"])
def test_a_cache_of_the_wrong_type_is_ignored(agent, environ, tmp_path, content):
    state = tmp_path / "cfg" / "state"
    state.mkdir(parents=True)
    (state / "versions.json").write_text(content)
    agent("codex")
    assert versions.installed("codex", environ) == (0, 171, 0)


def test_the_version_command_gets_the_given_environment(agent, environ, tmp_path):
    agent("codex", extra='[ "$AGENTCFG_PROBE" = yes ] || exit 3\n')
    assert versions.installed("codex", {**environ, "AGENTCFG_PROBE": "yes"}) == (0, 171, 0)


# -- which versions agentcfg is proven with (`agentcfg agents`) -------------------------------------------


def test_every_pinned_release_of_the_e2e_tier_is_listed_as_proven():
    from agentcfg.agents import AGENTS
    from tests.e2e.agents import PINNED

    for agent, version in PINNED.items():
        assert version in AGENTS[agent].TRAITS.proven, (
            f"tests/e2e/agents.py pins {agent} {version}: add it to its proven"
        )


@pytest.mark.parametrize(
    ("version", "said"),
    [
        ((0, 15, 10), "proven"),
        ((0, 30, 0), "newer than 0.24.4, the newest proven"),
        ((0, 9, 1), "older than 0.15.10, the oldest proven"),
        ((0, 20, 0), "not proven (proven: 0.15.10, 0.24.4)"),
        (None, None),
    ],
)
def test_proven_says_what_is_known_of_a_version(version, said):
    assert versions.proven(("0.15.10", "0.24.4"), version) == said


def test_agents_shows_whether_the_installed_version_is_proven(agent, environ, tmp_path):
    import subprocess

    from tests.conftest import AGENTCFG

    agent("codex")  # a fake `codex --version` answering 0.171.0, which CI has run
    shown = subprocess.run([AGENTCFG, "agents", "--json"], env=environ, capture_output=True, text=True, timeout=60)
    rows = {r["agent"]: r for r in json.loads(shown.stdout)}
    assert rows["codex"]["version"] == "0.171.0"
    assert rows["codex"]["proven"] == versions.proven(("0.171.0",), (0, 171, 0)) == "proven"
    assert rows["qwen"]["proven"] is None  # not installed
    text = subprocess.run([AGENTCFG, "agents"], env=environ, capture_output=True, text=True, timeout=60).stdout
    assert "0.171.0 (proven)" in text


def test_every_agent_is_asked_at_once_and_every_answer_is_kept(agent, environ, tmp_path):
    """`agentcfg agents` asks all of them: a slow start (Cline CLI's 150 MB binary, ~3 s on a busy machine) is
    paid once, not once per agent, and answers that came together all reach the cache."""
    for name in ("codex", "cline", "droid"):
        agent(name, output=f"{name} 1.2.3", extra="/bin/sleep 1\n")
    found = versions.installed_all(("codex", "cline", "droid", "gone"), environ, timeout=10.0)
    assert found == [(1, 2, 3), (1, 2, 3), (1, 2, 3), None]
    assert sorted(_cache(tmp_path).values()) == ["cline 1.2.3", "codex 1.2.3", "droid 1.2.3"]
    assert versions.installed_all(("codex", "cline"), environ) == [(1, 2, 3), (1, 2, 3)]
    assert agent.runs() == 3  # the second time from the cache


def test_agents_waits_for_a_slow_version_answer(agent, environ):
    import subprocess

    from tests.conftest import AGENTCFG

    agent("cline", output="3.0.65", extra="/bin/sleep 4\n")  # longer than the 3 s it once allowed
    shown = subprocess.run([AGENTCFG, "agents", "--json"], env=environ, capture_output=True, text=True, timeout=60)
    rows = {r["agent"]: r for r in json.loads(shown.stdout)}
    assert rows["cline"]["version"] == "3.0.65" and rows["cline"]["proven"] == "proven"
