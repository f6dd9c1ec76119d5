"""The agent is told a larger context window than the server holds (context-window-too-large): Codex,
opencode and qwen-code compact by the window they are told, so they would not compact before the
server refuses the conversation. Claude Code is told no window."""

from __future__ import annotations

import pytest

from agentcfg.doctor.model import FAIL, PASS, WARN
from agentcfg.doctor.rules import diagnose
from tests.doctor.test_rules import BASE, healthy, ids, only, target, window_models


def findings_for(agent: str, told: int | None, server: int = 65_536, **kw: object) -> list:
    base = "http://127.0.0.1:8000" if agent == "claude" else BASE
    seen = healthy(agent, base)
    seen["models"] = window_models(server)
    return diagnose(target(agent, base, context_window=told, **kw), seen)


@pytest.mark.parametrize("agent", ["codex", "qwen", "opencode"])
def test_told_more_than_the_server_holds_fails(agent: str) -> None:
    findings = findings_for(agent, 1_048_576, output_tokens=8_000)
    finding = only(findings, "context-window-too-large")
    assert finding.status == FAIL and finding.agent == agent
    assert "1,048,576" in finding.summary and "65,536" in finding.summary and "compact" in finding.summary
    assert finding.fix == f"agentcfg profile set gw context_window=65536 && agentcfg switch gw --agent {finding.agent}"
    assert finding.evidence == f"max_model_len=65536; {agent} context window=1048576 (profile gw)"


@pytest.mark.parametrize("told", [65_536, 32_768, None])
def test_told_no_more_than_the_server_holds_is_fine(told: int | None) -> None:
    for agent in ("codex", "qwen", "opencode"):
        assert "context-window-too-large" not in ids(findings_for(agent, told))


def test_claude_is_told_no_window() -> None:
    assert "context-window-too-large" not in ids(findings_for("claude", 1_048_576))


def test_no_profile_says_where_in_words() -> None:
    finding = only(findings_for("codex", 1_048_576, profile=None), "context-window-too-large")
    assert finding.fix == ""
    assert "model_context_window" in finding.hint and "65,536" in finding.hint


def test_an_output_limit_from_the_same_window_is_one_finding() -> None:
    # The profile's window made the output limit too large as well: one cause, one finding, one fix.
    findings = findings_for("opencode", 65_536, server=16_384, output_tokens=27_768, prompt_tokens=10_000)
    assert ids(findings, FAIL) == ["context-window-too-large"]
    assert "27,768 output tokens" in only(findings, "context-window-too-large").summary


def test_a_prompt_that_does_not_fit_is_still_its_own_finding() -> None:
    findings = findings_for("qwen", 131_072, server=8_192, prompt_tokens=22_000, output_tokens=4_000)
    assert sorted(ids(findings, FAIL)) == ["context-limit-exceeded", "context-window-too-large"]
    assert (
        "--max-model-len"
        in only(findings, "context-limit-exceeded").hint + only(findings, "context-limit-exceeded").fix
    )


def test_pass_stays_when_the_request_fits() -> None:
    findings = findings_for("codex", 1_048_576)
    assert only(findings, "context-limit-exceeded").status == PASS


def test_the_servers_refusal_of_that_output_limit_is_the_same_finding() -> None:
    from tests.doctor.test_rules import VLLM, load

    seen = healthy("qwen")
    seen["models"] = window_models(2048)
    seen["chat-stream"] = load(VLLM / "h_max_tokens_over_max_model_len.json")  # max_tokens=4096 > 2048
    findings = diagnose(target("qwen", context_window=65_536, output_tokens=4096), seen)
    assert ids(findings, FAIL) == ["context-window-too-large"]


def test_a_project_profile_gets_no_profile_set_fix() -> None:
    """`profile set` refuses a project's profile (its file is the project's): the fix would exit 2."""
    finding = only(findings_for("codex", 1_048_576, profile_project=True), "context-window-too-large")
    assert finding.fix == "" and "model_context_window" in finding.hint


def test_claude_at_the_least_output_it_needs_is_told_to_grow_the_window_not_to_shrink_its_output() -> None:
    """A 32,768 window: switch gives Claude Code the 4,096 it needs (budget.MIN_OUTPUT), which with its ~32k
    prompt exceeds the window. Telling the profile that window again (the fix for an output limit made from a
    larger one) would change nothing: the server's window is what is too small."""
    from tests.doctor.test_rules import context

    finding = context("claude", 32_768, prompt_tokens=32_000, output_tokens=4_096)
    assert finding.status == WARN
    assert finding.fix == ""
    assert "--max-model-len (40,192 or more)" in finding.hint
    # an output limit made from a larger window than the server's is still the profile's to fix
    larger = context("opencode", 32_768, prompt_tokens=10_000, output_tokens=32_000)
    assert larger.fix == "agentcfg profile set gw context_window=32768 && agentcfg switch gw --agent opencode"
