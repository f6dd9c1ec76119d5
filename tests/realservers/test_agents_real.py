"""Every real agent, configured only by `agentcfg switch`, completes a turn against a real vLLM
(the tiny model's text is gibberish; the agent must exit 0). Where a real server breaks an agent,
the agent's own error and doctor's finding name the same cause."""

from __future__ import annotations

import pytest

from agentcfg import budget
from agentcfg.agents import AGENTS as AGENT_MODULES
from agentcfg.profiles import Profile
from tests.e2e import agents
from tests.realservers.bias_proxy import SeparatorProxy, separator_tokens
from tests.realservers.helpers import add_profile, doctor, failing
from tests.realservers.peers import GATEWAY_KEY, GATEWAY_MOCK, MODEL, VLLM_KEY, WINDOW

pytestmark = [pytest.mark.realservers, pytest.mark.e2e]

TURN = 420  # s: the agents' 10k-32k-token prompts are prefilled on two CPU cores, four agents at once
# Claude Code's retries would hide the error for minutes; the cause is what this test compares.
FAST_FAIL = {"CLAUDE_CODE_MAX_RETRIES": "0"}


@pytest.mark.parametrize("agent", agents.on_tiny_model(agents.AGENTS))
def test_switch_local_and_the_agent_completes_a_turn_on_vllm(
    agent, agent_home, run_agent, peers, keyring_file, agent_versions, compat
):
    if refused := agents.plain_profile_refused(agent):  # a plain profile: it needs a route
        pytest.skip(refused)
    compat(
        tier="realservers", agent=agent, agent_version=agent_versions[agent],
        server=f"vLLM {peers.vllm_version} (CPU)", case="`switch local` (--api-key, window 65,536): a turn, rc 0",
    )  # fmt: skip
    add_profile(agent_home, "local", peers.vllm, key=VLLM_KEY)
    agent_home.run("switch", "local")
    result = run_agent(agent, via="local", timeout=TURN)
    assert result.returncode == 0, result
    # Codex sends no output limit (it is told the window instead); cline sizes its own from the window
    if AGENT_MODULES[agent].TRAITS.bounds_output:
        # vLLM's request log: the agent asked for agentcfg's bound, not its own default (qwen-code
        # 8000 then 384000 for a deepseek-v4 name; opencode and Claude Code 32000)
        profile = Profile(name="local", base_url=peers.vllm + "/v1", model=MODEL, context_window=WINDOW)
        bound = budget.output_tokens(profile, AGENT_MODULES[agent].TRAITS.prompt_tokens)
        assert f"max_tokens={bound}," in peers.vllm_log.read_text(errors="replace"), bound


@pytest.mark.parametrize("agent", agents.AGENTS)
def test_without_a_tool_parser_doctor_names_what_breaks_the_agent(
    agent, agent_home, run_agent, peers, keyring_file, agent_versions, compat
):
    if refused := agents.plain_profile_refused(agent):  # a plain profile: it needs a route
        pytest.skip(refused)
    compat(
        tier="realservers", agent=agent, agent_version=agent_versions[agent],
        server=f"vLLM {peers.vllm_version} (CPU)", case="no tool parser: doctor names tool-parser-missing",
    )  # fmt: skip
    add_profile(agent_home, "bare", peers.vllm_bare, key=VLLM_KEY)
    agent_home.run("switch", "bare")
    result = run_agent(agent, via="bare", timeout=TURN, **FAST_FAIL)
    _, findings = doctor(agent_home, "--agent", agent)
    assert (agent, "tool-parser-missing") in failing(findings), findings
    if agent == "codex":  # the silent case: it answers, and tools would never run
        assert result.returncode == 0, result
    else:
        assert result.returncode not in (0, None), result
        # Droid prints only "Exec failed" whatever the cause (tests/e2e/test_broken_setups.py): doctor names it
        said = "Exec failed" if agent == "droid" else "--enable-auto-tool-choice"
        assert said in result.output, result


@pytest.mark.parametrize("agent", agents.AGENTS)
def test_through_the_gateway_agent_and_doctor_agree(
    agent, agent_home, run_agent, peers, keyring_file, agent_versions, compat
):
    """LiteLLM's mock model: qwen, opencode and Claude Code answer; Codex fails on LiteLLM's streamed
    /responses (500), which is what doctor reports for Codex and no one else."""
    if refused := agents.plain_profile_refused(agent):  # a plain profile: it needs a route
        pytest.skip(refused)
    compat(
        tier="realservers", agent=agent, agent_version=agent_versions[agent],
        server=f"LiteLLM {peers.litellm_version}", case="mock model, `agentcfg exec`: agent and doctor agree",
    )  # fmt: skip
    add_profile(agent_home, "gw", peers.litellm, model=GATEWAY_MOCK, key=GATEWAY_KEY)
    agent_home.run("switch", "gw")
    result = run_agent(agent, via="gw", timeout=120, **FAST_FAIL)
    _, findings = doctor(agent_home, "--agent", agent)
    if agent == "codex":
        assert result.returncode not in (0, None), result
        assert failing(findings) == {("codex", "server-error")}, findings
    else:
        assert result.returncode == 0, result
        assert "ready" in result.stdout.lower(), result
        assert failing(findings) == set(), findings
    assert GATEWAY_KEY not in result.output


def test_codex_completes_on_a_stream_with_line_separators(
    agent_home, run_agent, peers, keyring_file, agent_versions, compat
):
    """The ground truth for doctor's reader: real vLLM writes U+2028 raw inside the JSON strings of
    the /responses stream (tests/fixtures/vllm-0.32-cpu-u2028), and real Codex reads it and exits 0.
    So doctor must not call that stream broken (test_doctor_real)."""
    compat(
        tier="realservers", agent="codex", agent_version=agent_versions["codex"],
        server=f"vLLM {peers.vllm_version} (CPU)", case="U+2028 raw in /responses stream (logit_bias): a turn, rc 0",
    )  # fmt: skip
    tokens, eos = separator_tokens(peers.model_dir)
    with SeparatorProxy(peers.vllm, tokens["u2028"], eos) as proxy:
        add_profile(agent_home, "sep", proxy.url, key=VLLM_KEY)
        agent_home.run("switch", "sep", "--agent", "codex")
        result = run_agent("codex", via="sep", timeout=TURN)
        seen, paths = proxy.separators_seen, list(proxy.paths)
        _, findings = doctor(agent_home, "--agent", "codex")
    assert "/v1/responses" in paths and seen > 0, paths  # Codex's own stream carried them
    assert result.returncode == 0, result
    assert "\u2028" in result.stdout, result  # and it printed them: read as text, not as a line end
    assert failing(findings) == set(), findings  # doctor agrees with the agent
