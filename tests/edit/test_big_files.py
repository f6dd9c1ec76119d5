"""Big files: an edit costs a few readings of the file, not one per key set (the issue: a 55 MB
opencode.json took almost 5 minutes to switch). Generous bounds: the machine is shared."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from agentcfg import edit
from agentcfg.agents import codex, opencode
from agentcfg.agents.base import AgentFile, KeySource
from agentcfg.profiles import Profile

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import big_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PROFILE = Profile(name="local", base_url="http://127.0.0.1:8000/v1", model="qwen3", context_window=32768)


def _assignments(agent, fmt: str) -> list:
    (file_edit,) = agent.edits(PROFILE, {AgentFile(Path("x"), fmt): None}, KeySource())
    return file_edit.assignments


def _timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def test_a_2_mb_opencode_json_is_edited_in_well_under_a_few_seconds():
    text = big_file.opencode_json(2_000_000)
    assignments = _assignments(opencode, "json")
    elapsed = _timed(lambda: edit.apply("json", text, assignments))
    assert elapsed < 3, elapsed  # about 0.2 s here; the old editor took over 10 s


def test_a_toml_edit_costs_a_few_readings_of_the_file():
    text = big_file.codex_toml(1_000_000)
    assignments = _assignments(codex, "toml")
    reading = min(_timed(lambda: tomllib.loads(text)) for _ in range(2))
    elapsed = min(_timed(lambda: edit.apply("toml", text, assignments)) for _ in range(2))
    # two readings (before and after, by tomllib) and one scan; tomlkit took over 10 readings' time
    assert elapsed < 5 * reading, (elapsed, reading)
