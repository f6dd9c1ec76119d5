"""The benchmark scripts run end to end (one round, not timed: figures are not checked) and their rows are
what their labels say: the no-change switch changes no file, the changing one rewrites every agent's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import _timing
import startup

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def script(tmp_path: Path, name: str, *args: str) -> dict:
    """benchmarks/NAME with `--runs 1 --no-warm-up --envs user --json`, started with an empty HOME that stays so."""
    home = tmp_path / "home"
    home.mkdir()
    environ = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    argv = [sys.executable, str(BENCHMARKS / name), "--runs", "1", "--no-warm-up", "--envs", "user", "--json", *args]
    done = subprocess.run(argv, env=environ, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert list(home.iterdir()) == [], "a benchmark wrote to the HOME it was started with"
    return json.loads(done.stdout)


def rows(result: dict) -> dict[str, dict]:
    return {row["label"]: row for row in result["rows"]}


def test_startup_runs_and_its_no_change_switch_changes_nothing(tmp_path):
    result = script(tmp_path, "startup.py")
    by_label = rows(result)
    for label in (
        "switch local --all, nothing to change (answered from fingerprints)",
        "switch local --all, nothing to change, the full run",
        "status (answered from fingerprints)",
        "status, the full run",
    ):
        assert by_label[label]["files_changed"] == [0], label
    (rewritten,) = by_label["switch other --all, from local (every file rewritten)"]["files_changed"]
    assert rewritten >= len(startup.AGENT_FILES)
    assert {"import click (the CLI framework alone)", "key get taotoken (file keyring)", "--help"} <= set(by_label)
    for row in result["rows"]:
        assert row["runs"] == 1 and row["ratio"] > 0 and row["command"].startswith("[user] ")
    assert "AGENTCFG_HOME" not in result["environments"]["user"]
    # The floor imports nothing a switch does not: else agentcfg's distance to it would look smaller than it is.
    assert result["floor_check"]["listed_not_imported"] == []


def test_the_no_change_check_catches_a_switch_that_writes(tmp_path):
    envs = _timing.environments(tmp_path, os.environ.get("PATH", ""), ("user",))
    environ = envs["user"]
    agentcfg = _timing.agentcfg_script()
    subprocess.run([agentcfg, "switch", "local", "--all"], env=environ, check=True, capture_output=True)
    other = _timing.Row("switch taotoken", [agentcfg, "switch", "taotoken", "--all"], "user", codes=(0, 4),
                        watch=Path(environ["HOME"]), check=startup.no_change)  # fmt: skip
    with pytest.raises(_timing.BenchError, match="files changed by a switch that should change none"):
        _timing.measure([other], envs, runs=1, warm_up=False)


def test_the_markdown_block_has_one_line_per_command_and_a_column_per_environment(tmp_path):
    envs = _timing.environments(tmp_path, os.environ.get("PATH", ""))
    table = [_timing.Row("true", ["true"], env, markdown="`true`") for env in envs]
    _timing.measure(table, envs, runs=2, warm_up=False)
    result = _timing.report("t", table, envs, tmp_path, "agentcfg", 2)
    block = _timing.markdown(result, table, "t-benchmark", _timing.ENV_LABELS).splitlines()
    assert block[0] == "<!-- t-benchmark -->" and block[-1] == "<!-- /t-benchmark -->"
    assert block[3] == "| command | as users run it (no `AGENTCFG_HOME`) | `AGENTCFG_HOME` set |"
    (line,) = [line for line in block if line.startswith("| `true`")]
    assert line.count("×") == 2
    assert result["rows"][0]["command"] == "[user] true" and result["baseline"]["runs"] == 4


def test_doctor_deadline_runs_against_the_fault_server_and_a_black_hole(tmp_path):
    by_label = rows(script(tmp_path, "doctor_deadline.py", "--deadlines", "0.5", "--hole-runs", "1"))
    assert by_label["doctor, 4 agents, healthy local server"]["ratio"] > 0
    assert by_label["doctor --offline"]["ratio"] > 0
    hole = by_label["doctor --timeout 0.5, black hole"]
    assert "ratio" not in hole and "worst_past_deadline_s" in hole  # how far past: a figure, not checked here


def test_key_get_runs_with_the_file_keyring(tmp_path):
    result = script(tmp_path, "key_get.py", "--keyring", "file")
    assert set(rows(result)) == {"key get taotoken, no project", "key get taotoken, in a project"}
    assert all("PYTHON_KEYRING_BACKEND=tests.fake_keyring.FileKeyring" in row["command"] for row in result["rows"])
