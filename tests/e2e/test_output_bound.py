"""The output bound switch gives Claude Code on vLLM's commonest window (32,768) is what real Claude Code
sends as max_tokens, and no less than what it plans with (agentcfg.budget.MIN_OUTPUT): the walkthrough's
switch wrote 384, so every reply longer than that was cut off."""

from __future__ import annotations

import json

import pytest

from agentcfg import budget
from tests.e2e.agents import matrix
from tests.e2e.test_agents_answer import model_calls
from tests.fault_server import MODEL, FaultServer

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(("agent", "release"), matrix(["claude"]))
def test_claude_on_a_32k_window_asks_for_what_it_needs(agent, agent_home, run_agent) -> None:
    with FaultServer(max_model_len=32_768) as server:
        agent_home.run(
            "profile", "add", "local", "--force", "--base-url", server.base_url, "--model", MODEL,
            "--anthropic-base-url", server.root, "--context-window", "32768",
        )  # fmt: skip
        switched = agent_home.run("switch", "local", "--agent", "claude")
        result = run_agent(agent)
        calls = model_calls(server, agent)
    written = json.loads(agent_home.path(".claude/settings.json").read_text())["env"]["CLAUDE_CODE_MAX_OUTPUT_TOKENS"]
    assert int(written) == budget.MIN_OUTPUT
    assert "32,768-token window" in switched.stderr  # said, not silent
    assert result.returncode == 0 and "ready" in result.stdout.lower(), result
    asked = [body.get("max_tokens") for _, body in calls]
    assert budget.MIN_OUTPUT in asked, asked  # the main request: the bound, as written
    assert all(isinstance(n, int) and n <= budget.MIN_OUTPUT for n in asked), asked
    for _, body in calls:  # a thinking budget, where Claude Code sends one, stays below max_tokens
        thinking = body.get("thinking") or {}
        if thinking.get("type") == "enabled":
            assert thinking["budget_tokens"] < body["max_tokens"], body
