"""The use cases under `profile add/rm`, `trust`, `key list` and `exec`, on plain data: what the CLI handlers
call and render (agentcfg.profile_ops, trust_review, key_commands)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcfg import key_rules, launch, profile_ops, trust_review
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import Profile
from agentcfg.trust import KeyApproval
from agentcfg.trust_review import Review

TEAM = Profile(name="team", base_url="https://llm.example.com/v1", model="m", key_env="TEAM_KEY")
OTHER = Profile(name="other", base_url="https://elsewhere.example/v1", model="m", key_env="TEAM_KEY")


def test_a_requests_options_are_as_typed_in_the_order_a_hint_repeats_them() -> None:
    request = profile_ops.AddRequest(name="gpu", base_url="http://gpu:8000/v1", detect=True, context_window=65536)
    options = request.options()
    assert list(options)[:3] == ["--base-url", "--model", "--anthropic-base-url"]
    assert options["--base-url"] == "http://gpu:8000/v1" and options["--detect"] is True
    assert options["--context-window"] == 65536 and options["--key-stdin"] is False
    assert "--force" not in options  # add_again adds it itself


def test_added_as_json_names_what_the_key_still_needs() -> None:
    added = profile_ops.Added(TEAM, Path("/p/team.toml"), detected_window=65536)
    data = added.as_json()
    assert data["profile"] == "team" and data["path"] == "/p/team.toml" and data["from"] is None
    assert data["key_stored"] is False and data["key_store"] is None and data["key_set"]
    assert data["detected_window"] == 65536 and data["switch"] and data["notes"] == []


def _pending(keyed: dict[str, Profile], approvals: dict[str, KeyApproval]) -> trust_review.Pending:
    rows: list[dict[str, object]] = [{"name": name} for name in keyed]
    review = Review(rows, [], {}, keyed, {})
    return trust_review.Pending(Path("/r/.agentcfg/profiles"), Path("/r"), review, approvals)


def test_a_variable_approved_for_other_hosts_is_not_offered_again() -> None:
    pending = _pending({"team": TEAM, "other": OTHER}, {})
    offered = trust_review.offer(pending, "team", TEAM)
    assert offered is not None and offered["team"].variable == "TEAM_KEY"
    pending.approvals = offered
    assert trust_review.offer(pending, "other", OTHER) is None  # TEAM_KEY goes to llm.example.com already


@pytest.mark.parametrize("variable", ["PATH", "LD_PRELOAD", "NODE_OPTIONS"])
def test_exec_sets_no_key_into_a_variable_that_steers_programs(variable: str) -> None:
    with pytest.raises(AgentcfgError, match="steers programs"):
        key_rules.refuse_runtime_variable(Profile(name="p", base_url="http://h/v1", model="m", key_env=variable))
    key_rules.refuse_runtime_variable(TEAM)


def test_exec_of_a_command_that_is_no_agent_gets_the_variables_only() -> None:
    run = launch.exec_run(TEAM, ["env"], {"TEAM_KEY": "sk-x", "AGENTCFG_PROFILE": "team"}, {})
    assert run == launch.Run(("env",), {"TEAM_KEY": "sk-x", "AGENTCFG_PROFILE": "team"})
