"""The pure core of a switch (agentcfg.switchplan.plan): plain data in, a plan out; no file is read or written,
so these tests need no temporary directory (HOME names a directory that does not exist)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcfg import switchplan
from agentcfg.agents import claude, codex, opencode, qwen
from agentcfg.agents.base import AgentFile, FileEdit, KeySource
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import Profile
from agentcfg.switchplan import AgentReading

ENVIRON = {"HOME": "/nonexistent/home/u"}
NO_KEYS = KeySource()
WINDOWED = Profile(
    name="local",
    base_url="http://127.0.0.1:8000/v1",
    model="qwen3-coder",
    anthropic_base_url="http://127.0.0.1:8000",
    context_window=262144,
)
UNWINDOWED = Profile(name="gw", base_url="https://gw.example/v1", model="m", anthropic_base_url="https://gw.example")


def fresh(agent) -> AgentReading:
    """An agent with none of its files yet."""
    return AgentReading(agent, dict.fromkeys(agent.files(ENVIRON)))


def test_from_nothing_every_file_is_created_in_the_agents_order():
    plan = switchplan.plan(WINDOWED, [fresh(codex), fresh(qwen)], NO_KEYS, ENVIRON)
    assert [(c.agent, c.action) for c in plan.changes] == [("codex", "create"), ("qwen", "create"), ("qwen", "create")]
    assert plan.changes[0].path == Path("/nonexistent/home/u/.codex/config.toml")
    assert 'model = "qwen3-coder"' in (plan.changes[0].after or "")
    assert plan.skipped == {}


def test_a_second_plan_on_what_the_first_wrote_changes_nothing():
    first = switchplan.plan(WINDOWED, [fresh(opencode)], NO_KEYS, ENVIRON)
    written = AgentReading(opencode, {c.file: c.after for c in first.changes})
    assert [c.action for c in switchplan.plan(WINDOWED, [written], NO_KEYS, ENVIRON).changes] == ["unchanged"]


def test_a_skipped_agent_is_named_with_its_reason_and_planned_for_nothing():
    plan = switchplan.plan(WINDOWED, [AgentReading(claude, {}, skipped="no Anthropic URL")], NO_KEYS, ENVIRON)
    assert (plan.changes, plan.skipped) == ([], {"claude": "no Anthropic URL"})


def test_a_refusal_read_beforehand_stops_the_plan():
    refusal = AgentcfgError("this is the opencode V2 config")
    with pytest.raises(AgentcfgError, match="V2 config"):
        switchplan.plan(WINDOWED, [fresh(codex), AgentReading(opencode, {}, refusal=refusal)], NO_KEYS, ENVIRON)


def test_the_other_files_an_agent_keeps_are_planned_under_it():
    kept = AgentFile(Path("/nonexistent/home/u/.codex/agentcfg-other.config.toml"), "toml")
    reading = AgentReading(
        codex, dict.fromkeys(codex.files(ENVIRON)), extra=((FileEdit(kept, [(("model",), "x")]), None),)
    )
    plan = switchplan.plan(WINDOWED, [reading], NO_KEYS, ENVIRON)
    assert [(c.agent, c.path.name, c.after) for c in plan.changes][1] == ("codex", kept.path.name, 'model = "x"\n')


def test_the_window_note_only_when_an_agent_that_is_given_an_output_bound_is_switched():
    assert not [n for n in switchplan.plan(UNWINDOWED, [fresh(codex)], NO_KEYS, ENVIRON).notes if "window" in n]
    notes = switchplan.plan(UNWINDOWED, [fresh(codex), fresh(qwen)], NO_KEYS, ENVIRON).notes
    assert switchplan.window_note(UNWINDOWED) in notes


def test_the_shells_credential_headers_are_named_when_the_endpoint_moves_host():
    (settings,) = claude.files(ENVIRON)
    before = json.dumps({"env": {"ANTHROPIC_BASE_URL": "https://old.example"}})
    environ = {**ENVIRON, "ANTHROPIC_CUSTOM_HEADERS": "X-Api-Key: sk-secret-value-1234567890"}
    notes = switchplan.plan(UNWINDOWED, [AgentReading(claude, {settings: before})], NO_KEYS, environ).notes
    assert [n for n in notes if n.startswith("ANTHROPIC_CUSTOM_HEADERS")] == [
        "ANTHROPIC_CUSTOM_HEADERS in this shell has the header X-Api-Key, which looks like a credential: Claude Code "
        "will now send it to gw.example; unset it (or drop that line) before running claude if it is not meant for "
        "gw.example"
    ]
    assert "sk-secret" not in "".join(notes)


def test_the_agents_traits_name_what_switch_says_of_the_shell():
    """The values the notes were written with before they came from Traits."""
    assert claude.TRAITS.shell_keys_over_helper == (claude.TOKEN, claude.API_KEY)
    assert claude.TRAITS.shell_headers == claude.CUSTOM_HEADERS
    assert qwen.TRAITS.shell_key_over_placeholder == (qwen.KEY, qwen.files(ENVIRON)[0].path.name)
    assert codex.TRAITS.profile_files_since == codex.PROFILE_FILES_SINCE


# -- what the journal keeps of an owned list (Droid's customModels, qwen's modelProviders.openai) ----------


def test_an_owned_list_holding_a_key_is_kept_as_its_digest_only():
    """A switch owns a whole list where an agent keeps its models in one (the user's entries with it): the
    journal must not copy a key from one of them, yet still tell when someone edited the list."""
    from agentcfg.plan import drifted, owned_to_json

    users = {"model": "m", "apiKey": "sk-users-own-Q8x7v2LkP9z3M4n5"}  # a key agentcfg was never told of
    ours = {"model": "m", "id": "custom:agentcfg-local"}
    owned = owned_to_json(((("customModels",), [users, ours]), (("name",), "plain")))
    assert "sk-users-own" not in json.dumps(owned)
    assert owned[1] == {"key": ["name"], "value": "plain"}  # a value without a key stays readable
    text = json.dumps({"customModels": [users, ours], "name": "plain"})
    assert drifted("json", text, owned, "f") == []
    edited = json.dumps({"customModels": [users], "name": "plain"})
    assert drifted("json", edited, owned, "f") == ["customModels"]
