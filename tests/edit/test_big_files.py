"""Big files: an edit reads the whole file a fixed number of times, not once per key set (the issue: a
55 MB opencode.json took almost 5 minutes to switch). Counted, not timed: benchmarks/scaling.py times it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentcfg import edit, switchplan
from agentcfg.agents import codex, opencode
from agentcfg.agents.base import AgentFile, KeySource
from agentcfg.profiles import Profile

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import scaling as big_file

PROFILE = Profile(name="local", base_url="http://127.0.0.1:8000/v1", model="qwen3", context_window=32768)


def _assignments(agent, fmt: str) -> list:
    (file_edit,) = agent.edits(PROFILE, {AgentFile(Path("x"), fmt): None}, KeySource())
    return file_edit.assignments


def _count(monkeypatch, module, name: str, big: int) -> list[int]:
    """Calls of module.name on a text of at least `big` characters (a reading of the whole file)."""
    calls: list[int] = []
    real = getattr(module, name)

    def counted(text, *args, **kwargs):
        if len(text) >= big:
            calls.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_json_edit_reads_the_whole_file_a_fixed_number_of_times_however_many_keys(monkeypatch):
    from agentcfg.edit import jsonc, jsonparts

    edit.forget()
    text = big_file.opencode_json(2_000_000)
    assignments = _assignments(opencode, "json")
    assert len(assignments) > 5
    whole = _count(monkeypatch, jsonc, "loads", 1_000_000)  # read whole,
    walked = _count(monkeypatch, jsonparts, "_read", 1_000_000)  # or member by member
    scans = _count(monkeypatch, jsonc, "_Lazy", 1_000_000)
    edit.apply("json", text, assignments)
    removals = sum(v is edit.REMOVE for _, v in assignments)
    # the old editor parsed the whole text once per key: 73 s for this file
    assert len(whole) + len(walked) == 2 and len(scans) <= 1 + removals, (whole, walked, scans)


def test_a_toml_edit_reads_the_whole_file_a_fixed_number_of_times_however_many_keys(monkeypatch):
    from agentcfg.edit import toml

    text = big_file.codex_toml(1_000_000)
    assignments = _assignments(codex, "toml")
    assert len(assignments) > 5
    readings = _count(monkeypatch, toml.tomllib, "loads", 0)
    scans = _count(monkeypatch, toml, "Layout", 500_000)
    edit.apply("toml", text, assignments)
    # before and after by the TOML reader (whole, or in parts: tomlparts), one scan by agentcfg's splicer
    # (tomlkit took over 10 readings' time)
    assert sum(readings) < 2.1 * len(text) and len(scans) == 1, (readings, scans)


def _readings(monkeypatch, fmt: str) -> list[int]:
    """The texts read by a format's parser: tomli for TOML (a big file in parts), the JSONC reader for JSON."""
    module = edit.editor(fmt)
    return _count(monkeypatch, module.tomllib if fmt == "toml" else module, "loads", 10_000)


@pytest.mark.parametrize(
    ("agent", "fmt", "build"),
    [(codex, "toml", big_file.codex_toml), (opencode, "json", big_file.opencode_json)],
    ids=["codex", "opencode"],
)
def test_a_switch_plan_reads_a_big_file_once_before_and_once_after_the_edit(monkeypatch, agent, fmt, build):
    """The issue: edit.apply, the agent's edits (legacy notes) and header_notes' two readings each parsed the
    same 5 MB text again, ten tomli readings in all; a text is now parsed once, whoever asks."""
    edit.forget()
    (file,) = agent.files({"HOME": "/nonexistent/home/u"})
    text = build(600_000)
    readings = _readings(monkeypatch, fmt)
    plan = switchplan.plan(PROFILE, [switchplan.AgentReading(agent, {file: text})], KeySource(), {"HOME": "/h"})
    assert [c.action for c in plan.changes] == ["modify"]
    assert sum(readings) < 2.1 * len(text), readings  # the text before, the text after (each whole or in parts)


def test_a_small_file_is_parsed_once_before_and_once_after_whatever_keys_its_readers_ask_for(monkeypatch):
    """A small text is read whole: a reader asking for other keys (claude's edits ask for `apiKeyHelper`, then
    `env`, apply for its roots, read for more) finds them all in the first reading (it was parsed 7 times)."""
    from agentcfg.agents import claude
    from agentcfg.edit import jsonc

    edit.forget()
    (file,) = claude.files({"HOME": "/nonexistent/home/u"})
    text = '{\n  "model": "sonnet",\n  "env": {"A": "1"}\n}\n'
    readings = _count(monkeypatch, jsonc, "loads", 0)
    profile = Profile(name="local", base_url="http://127.0.0.1:8000/v1", model="m", anthropic_base_url="http://h:1")
    plan = switchplan.plan(profile, [switchplan.AgentReading(claude, {file: text})], KeySource(), {"HOME": "/h"})
    assert [c.action for c in plan.changes] == ["modify"]
    assert len(readings) == 2, readings


def _largest_decoded(monkeypatch) -> list[int]:
    """The lengths of the values json's C decoder builds, wherever agentcfg's JSON readers call it."""
    from agentcfg.edit import jsonc, jsonparts

    spans: list[int] = []
    for decoder in (jsonparts._DECODER, jsonc._SKIPPER):
        real = decoder.raw_decode

        def counted(text, pos=0, real=real):
            value, end = real(text, pos)
            spans.append(end - pos)
            return value, end

        monkeypatch.setattr(decoder, "raw_decode", counted)
    return spans


def test_a_switch_of_a_big_opencode_json_builds_none_of_its_provider_map(monkeypatch):
    """The provider map is most of a big opencode.json: checking, editing and reading the provider a switch
    writes builds that provider alone (the map was built whole three times, four times the text at the peak)."""
    edit.forget()
    text = big_file.opencode_json(2_000_000)
    spans = _largest_decoded(monkeypatch)
    config = AgentFile(Path("opencode.json"), "json")
    new = edit.apply("json", text, _assignments(opencode, "json"))
    binding = opencode.read({config: new})
    assert opencode.foreign_format({config: text}) is None
    assert binding.model == PROFILE.model and binding.base_url == PROFILE.base_url
    assert spans and max(spans) < 10_000, max(spans)  # one provider or server at a time, never the map


def test_a_big_array_in_a_json_file_is_never_built_to_be_skipped(monkeypatch):
    """Claude Code's permissions.allow of thousands of rules, beside the keys a switch sets."""
    from agentcfg.agents import claude

    edit.forget()
    rules = ",\n".join(f'      "Bash(npm run task-{i}:*)"' for i in range(40_000))
    text = '{\n  "model": "sonnet",\n  "permissions": {\n    "allow": [\n' + rules + "\n    ]\n  }\n}\n"
    spans = _largest_decoded(monkeypatch)
    (file_edit,) = claude.edits(PROFILE, {AgentFile(Path("settings.json"), "json"): None}, KeySource())
    new = edit.apply("json", text, file_edit.assignments)
    assert new.count("Bash(npm run task-") == 40_000
    assert not spans or max(spans) < 10_000, max(spans)
