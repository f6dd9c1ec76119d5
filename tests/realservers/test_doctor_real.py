"""`doctor --json` against a real vLLM (CPU build) and a real LiteLLM gateway, configured the ways
users get them wrong: each names the cause, and nothing fails against the healthy setups."""

from __future__ import annotations

import pytest

import agentcfg
from agentcfg.agents import AGENTS as REGISTRY
from agentcfg.profiles import Profile
from tests.conftest import Home
from tests.e2e.agents import AGENTS, plain_profile_refused
from tests.realservers.bias_proxy import LongAnswerProxy, SeparatorProxy, separator_tokens, special_tokens
from tests.realservers.helpers import add_profile, doctor, failing
from tests.realservers.peers import GATEWAY_KEY, GATEWAY_MOCK, GATEWAY_RETIRED, MODEL, VLLM_KEY, WINDOW

pytestmark = pytest.mark.realservers

WRONG_KEY = "sk-wrong-key-0000000000000"


def vllm(peers) -> str:
    return f"vLLM {peers.vllm_version} (CPU)"


def gateway(peers) -> str:
    return f"LiteLLM {peers.litellm_version}"


def record(compat, server: str, case: str) -> None:
    compat(tier="realservers", agent="doctor", agent_version=f"agentcfg {agentcfg.__version__}", server=server,
           case=case)  # fmt: skip


# The agents a plain profile (a server's own endpoint) switches: Gemini CLI runs on a route only.
TAKING = tuple(agent for agent in AGENTS if not plain_profile_refused(agent))


def every_agent(finding_id: str) -> set[tuple[str | None, str]]:
    return {(agent, finding_id) for agent in TAKING}


def test_healthy_vllm_nothing_fails(home: Home, peers, keyring_file, compat):
    """Issue 14's setup: CPU, a 65,536 window, the hermes tool parser, --api-key."""
    record(compat, vllm(peers), "healthy (--api-key, hermes, 65,536): nothing fails for any agent")
    add_profile(home, "local", peers.vllm, key=VLLM_KEY)
    home.run("switch", "local", "--all")
    code, findings = doctor(home)
    assert failing(findings) == set() and code == 0, findings
    assert set(AGENTS) <= {f["agent"] for f in findings}, findings  # all four were looked at
    code, findings = doctor(home, "local")
    assert failing(findings) == set() and code == 0, findings


def test_vllm_wrong_model(home: Home, peers, keyring_file, compat):
    record(compat, vllm(peers), "wrong model → model-not-found")
    add_profile(home, "local", peers.vllm, model="deepseek-chat", key=VLLM_KEY)
    home.run("switch", "local", "--all")
    code, findings = doctor(home)
    # each agent's probe, and the `vllm serve` process's own --served-model-name
    assert failing(findings) == every_agent("model-not-found") | {(None, "model-not-found")}, findings
    assert code == 1


def test_vllm_base_url_without_v1(home: Home, peers, keyring_file, compat):
    record(compat, vllm(peers), "base URL without /v1 → base-url-path")
    add_profile(home, "local", peers.vllm, v1=False, key=VLLM_KEY)
    home.run("switch", "local", "--all")
    _, findings = doctor(home)
    # every agent of the OpenAI base URL (Claude Code's Anthropic URL is the host root, which has no /v1)
    openai = [a for a in TAKING if REGISTRY[a].TRAITS.protocol != "messages"]
    assert failing(findings) == {(a, "base-url-path") for a in openai}, findings
    fix = next(f for f in findings if f["id"] == "base-url-path")
    assert peers.vllm + "/v1" in fix["summary"]


def test_vllm_without_tool_parser_is_named_for_all_four(home: Home, peers, keyring_file, compat):
    record(
        compat, vllm(peers), "no tool parser, --enforce-eager → tool-parser-missing for all four, vllm-enforce-eager"
    )
    add_profile(home, "bare", peers.vllm_bare, key=VLLM_KEY)
    home.run("switch", "bare", "--all")
    _, findings = doctor(home)
    # probes per agent (Codex too, which would exit 0 and silently run no tools) and the process flags
    assert failing(findings) == every_agent("tool-parser-missing") | {(None, "tool-parser-missing")}, findings
    assert ("vllm-enforce-eager", "warn") in {(f["id"], f["status"]) for f in findings}
    codex = next(f for f in findings if f["id"] == "tool-parser-missing" and f["agent"] == "codex")
    assert "exits 0" in codex["summary"]
    assert VLLM_KEY not in str(findings)  # the --api-key on the process's command line is masked


def test_vllm_api_key_wrong(home: Home, peers, keyring_file, compat):
    record(compat, vllm(peers), "--api-key, wrong key → key-rejected")
    add_profile(home, "bare", peers.vllm_bare, key=WRONG_KEY)
    home.run("switch", "bare", "--all")
    _, findings = doctor(home)
    assert every_agent("key-rejected") <= failing(findings), findings
    assert {i for _, i in failing(findings)} <= {"key-rejected", "tool-parser-missing"}


def test_healthy_gateway_nothing_fails_for_its_forwarded_model(home: Home, peers, keyring_file, compat):
    record(compat, gateway(peers), "healthy (model forwarded to vLLM): nothing fails")
    add_profile(home, "gw", peers.litellm, key=GATEWAY_KEY)
    home.run("switch", "gw", "--all")
    code, findings = doctor(home)
    assert failing(findings) == set() and code == 0, findings


def test_gateway_wrong_key(home: Home, peers, keyring_file, compat):
    record(compat, gateway(peers), "wrong key (400 No connected db.) → key-rejected")
    add_profile(home, "gw", peers.litellm, model=GATEWAY_MOCK, key=WRONG_KEY)
    home.run("switch", "gw", "--all")
    _, findings = doctor(home)
    # LiteLLM without a database answers a wrong key with 400 "No connected db.": still the key
    assert failing(findings) == every_agent("key-rejected"), findings


def test_gateway_wrong_model(home: Home, peers, keyring_file, compat):
    record(compat, gateway(peers), "wrong model (400) → model-not-found")
    add_profile(home, "gw", peers.litellm, model="deepseek-v4-flash", key=GATEWAY_KEY)
    home.run("switch", "gw", "--all")
    _, findings = doctor(home)
    assert failing(findings) == every_agent("model-not-found"), findings  # LiteLLM says 400, not 404
    assert MODEL in next(f for f in findings if f["id"] == "model-not-found")["summary"]


def test_gateway_without_v1_is_not_called_a_wrong_path(home: Home, peers, keyring_file, compat):
    record(compat, gateway(peers), "base URL without /v1 (accepted): nothing fails")
    add_profile(home, "gw", peers.litellm, v1=False, key=GATEWAY_KEY)
    home.run("switch", "gw", "--all")
    _, findings = doctor(home)
    assert "base-url-path" not in {i for _, i in failing(findings)}, findings  # LiteLLM accepts a missing /v1
    assert failing(findings) == set(), findings


def test_gateway_mock_model_codex_stream_fails(home: Home, peers, keyring_file, compat):
    """LiteLLM's mock models answer a streamed /responses with 500: doctor says so for Codex only
    (test_agents_real runs the real codex against it)."""
    record(compat, gateway(peers), "mock model: streamed /responses 500 → server-error for Codex only")
    add_profile(home, "gw", peers.litellm, model=GATEWAY_MOCK, key=GATEWAY_KEY)
    home.run("switch", "gw", "--all")
    _, findings = doctor(home)
    assert failing(findings) == {("codex", "server-error")}, findings


def test_vllm_profile_window_larger_than_the_servers(home: Home, peers, keyring_file, compat):
    """The profile says 1,048,576 tokens, `vllm serve --max-model-len` says 65,536: the agents that
    size their prompts and output by the window (Codex, opencode, qwen-code) overrun the server;
    Claude Code does not use it."""
    record(compat, vllm(peers), "profile window 1,048,576 > server 65,536 → context-window-too-large")
    root = peers.vllm
    home.run("profile", "add", "big", "--force", "--base-url", root + "/v1", "--model", MODEL,
             "--key-env", "BIG_API_KEY", "--anthropic-base-url", root, "--context-window", "1048576")  # fmt: skip
    home.run("key", "set", "big", stdin_text=VLLM_KEY + "\n")
    home.run("switch", "big", "--all")
    # what the agents' files tell them (after the switch), and what the profile says
    for args in ((), ("big",)):
        code, findings = doctor(home, *args)
        # the agents a switch tells the window (Claude Code is told none)
        told = [
            a for a in TAKING if REGISTRY[a].told_window(Profile("big", root + "/v1", MODEL, context_window=1048576))
        ]
        too_large = {(a, "context-window-too-large") for a in told}
        assert failing(findings) == too_large, (args, findings)
        assert code == 1
        for finding in findings:
            if finding["id"] == "context-window-too-large":
                assert str(WINDOW) in finding["summary"].replace(",", ""), finding  # the server's own figure


def test_gateway_model_whose_upstream_answers_404(home: Home, peers, keyring_file, compat):
    """LiteLLM lists `gpt-retired` but its upstream (the real vLLM) does not serve it: every request
    comes back 404 `litellm.NotFoundError ... does not exist`. That is the model, not the server."""
    record(compat, gateway(peers), "listed model, upstream 404 → model-not-found naming the upstream")
    add_profile(home, "gw", peers.litellm, model=GATEWAY_RETIRED, key=GATEWAY_KEY)
    home.run("switch", "gw", "--all")
    code, findings = doctor(home)
    assert failing(findings) == every_agent("model-not-found"), findings
    assert code == 1
    for finding in findings:
        if finding["id"] == "model-not-found":
            assert "upstream" in finding["summary"], finding


def test_vllm_stream_with_line_separators_is_not_broken(home: Home, peers, keyring_file, compat):
    """Real vLLM writes U+2028 raw inside a JSON string (tests/fixtures/vllm-0.32-cpu-u2028): by the
    SSE rules only CR and LF end a line, so the stream is whole, and real Codex completes on it
    (test_agents_real). Doctor must agree: no stream-broken, nothing failing."""
    record(compat, vllm(peers), "U+2028 raw in the stream (logit_bias): not stream-broken")
    tokens, eos = separator_tokens(peers.model_dir)
    with SeparatorProxy(peers.vllm, tokens["u2028"], eos) as proxy:
        add_profile(home, "sep", proxy.url, key=VLLM_KEY)
        home.run("switch", "sep", "--all")
        code, findings = doctor(home)
    assert proxy.separators_seen > 0, proxy.paths  # the probes' streams really carried it
    assert not [f for f in findings if f["id"] == "stream-broken" and f["status"] != "pass"], findings
    assert failing(findings) == set() and code == 0, findings


@pytest.mark.alone  # it needs the CPU vLLM to itself: 64 KB streamed within doctor's deadline (at -n 4 it got 18 KB)
def test_vllm_answering_at_length_is_not_a_broken_stream_for_codex(home: Home, peers, keyring_file, compat):
    """Issue 27 item 2: Codex's probe (a streamed /responses without an output bound) answered at length, as a
    reasoning model answers, by the real vLLM: far more than doctor reads before its deadline or its limit.
    Doctor judged the cut last event as a whole one ("a `data:` line that is not JSON") where the issue saw the
    real `codex exec` complete its turn. Doctor judges the complete events only: streaming works."""
    record(compat, vllm(peers), "a long Responses stream (special tokens forbidden): not stream-broken for Codex")
    with LongAnswerProxy(peers.vllm, special_tokens(peers.model_dir)) as proxy:
        add_profile(home, "long", proxy.url, key=VLLM_KEY)
        home.run("switch", "long", "--agent", "codex")
        code, findings = doctor(home, "--agent", "codex", "--timeout", "20")
    streamed = sum(size for path, size in proxy.relayed.items() if path.startswith("/v1/responses"))
    assert streamed > 64 * 1024, proxy.relayed  # longer than doctor read before (its old limit): the case of the issue
    assert failing(findings) == set() and code == 0, findings
    codex = {(f["id"], f["status"]) for f in findings if f["agent"] == "codex"}
    assert ("stream-broken", "pass") in codex and ("server-slow", "warn") not in codex, codex


def test_vllm_two_turn_tool_probe_reports_no_thinking_failure_falsely(home: Home, peers, keyring_file, compat):
    """The real vLLM serves a tiny random model as "DeepSeek-V4-Flash" (a thinking family, so doctor sends its
    two-turn tool probe) with the hermes parser and no reasoning parser. A forced first turn gets a real tool call
    in each of the three protocols; the second turn, with each agent's replay, is accepted and goes on with
    gibberish. Gibberish is never one of the three failures: no reasoning in turn 1 (nothing an agent could drop)
    means a stop is not an early stop, and the markup patterns need a call's structure, not one token."""
    record(compat, vllm(peers), "two-turn tool probe (thinking family, random model): thinking-tools passes")
    add_profile(home, "local", peers.vllm, key=VLLM_KEY)
    home.run("switch", "local", "--all")
    code, findings = doctor(home)
    probe = {f["agent"]: (f["id"], f["status"], f["evidence"]) for f in findings if f["id"].startswith("thinking-")}
    assert {agent: found[:2] for agent, found in probe.items()} == {
        agent: ("thinking-tools", "pass") for agent in TAKING
    }, probe
    assert failing(findings) == set() and code == 0, findings
