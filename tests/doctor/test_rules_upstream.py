"""A gateway lists a model whose upstream is gone: real LiteLLM 1.108 answers 404 `litellm.NotFoundError:
... The model 'gpt-retired' does not exist ... model group 'NAME' failed`. That is the model's problem
upstream of the gateway (model-not-found), not a server error to wait out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcfg.doctor.model import FAIL, WARN
from agentcfg.doctor.probes import Probe, Result
from agentcfg.doctor.rules import classify, diagnose, upstream_model
from tests.doctor.test_rules import LITELLM, LITELLM_MODELS, SSE_TYPE, healthy, ids, load, only, probe, target

STALE = load(LITELLM / "c07-chat-model-stale-upstream.json")
GW = "http://127.0.0.1:4000/v1"
UPSTREAM_MESSAGE = json.loads(STALE.body)["error"]["message"]


def stale(kind: str, body: str | None = None, status: int = 404, content_type: str = "application/json") -> Result:
    """The captured upstream-404 answer as this probe kind would get it."""
    return Result(probe(kind, GW), status, content_type, STALE.body if body is None else body)


# Shapes of the same cause on the other endpoints, as LiteLLM 1.108 builds them (proxy/utils.py
# ProxyException for OpenAI routes; anthropic_endpoints wrap the same message in Anthropic's error shape).
SHAPES = {
    "chat": stale("chat"),
    "chat-stream": stale("chat-stream"),
    "responses-stream": stale("responses-stream"),
    "messages-stream": stale(
        "messages-stream",
        json.dumps({"type": "error", "error": {"type": "not_found_error", "message": UPSTREAM_MESSAGE}}),
    ),
    "code-model-not-found": stale(
        "chat",
        json.dumps(
            {
                "error": {
                    "message": "litellm.NotFoundError: OpenAIException - Error code: 404 - {'error': {'message': "
                    "'The model `gpt-retired` does not exist or you do not have access to it.', "
                    "'type': 'invalid_request_error', 'param': None, 'code': 'model_not_found'}}",
                    "type": None,
                    "param": None,
                    "code": "404",
                }
            }
        ),
    ),
    "in-the-stream": stale(
        "chat-stream",
        'data: {"error": {"message": ' + json.dumps(UPSTREAM_MESSAGE) + ', "code": "404"}}\n\ndata: [DONE]\n\n',
        200,
        SSE_TYPE,
    ),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_upstream_not_found_is_model_not_found(shape: str) -> None:
    verdict = classify(SHAPES[shape])
    assert (verdict.ok, verdict.id, verdict.upstream) == (False, "model-not-found", True), verdict
    assert "gpt-retired" in verdict.message


def test_other_upstream_failures_stay_server_errors() -> None:
    for name in ("b18-chat-upstream-401", "b19-chat-upstream-dead", "b21-chat-upstream-dead-stream"):
        assert classify(load(LITELLM / f"{name}.json")).id == "server-error", name
    assert classify(load(LITELLM / "b20-chat-mock-ratelimit.json")).id == "rate-limited"
    assert classify(load(LITELLM / "c01-chat-unknown-model.json")).upstream is False  # the gateway's own answer


def test_upstream_model_name() -> None:
    assert upstream_model(UPSTREAM_MESSAGE) == "gpt-retired"
    assert upstream_model("The model 'x-1' does not exist") == "x-1"
    assert upstream_model("Connection error.") is None


def gateway_seen(agent: str, model_list: str = LITELLM_MODELS.body) -> dict[str, Result]:
    seen = healthy(agent, GW)
    seen["models"] = Result(probe("models", GW), 200, "application/json", model_list)
    for kind in ("chat", "chat-stream", "responses-stream"):
        if kind in seen:
            seen[kind] = stale(kind)
    if "messages-stream" in seen:
        seen["messages-stream"] = SHAPES["messages-stream"]
    return seen


@pytest.mark.parametrize("agent", ["codex", "qwen", "opencode", "claude"])
def test_one_upstream_finding_per_agent_naming_the_upstream(agent: str) -> None:
    listed = json.loads(LITELLM_MODELS.body)
    listed["data"].append({"id": "stale-upstream-model", "object": "model"})
    findings = diagnose(
        target(agent, GW, model="stale-upstream-model", profile="gw"), gateway_seen(agent, json.dumps(listed))
    )
    assert ids(findings, FAIL) == ["model-not-found"], findings
    assert "model-not-found" not in ids(findings, WARN)
    finding = only(findings, "model-not-found")
    assert "upstream" in finding.summary
    assert "'stale-upstream-model'" in finding.summary and "'gpt-retired'" in finding.summary
    assert "gateway lists" in finding.summary
    assert "admin" in finding.hint and "deepseek-chat" in finding.hint
    assert "try again later" not in finding.summary + finding.hint
    assert finding.fix == ""  # no listed model is a sensible stand-in for this name


def test_a_close_listed_model_becomes_the_fix() -> None:
    listed = json.loads(LITELLM_MODELS.body)
    listed["data"].append({"id": "deepseek-chat-v2", "object": "model"})
    findings = diagnose(
        target("qwen", GW, model="deepseek-chat-v2", profile="gw"), gateway_seen("qwen", json.dumps(listed))
    )
    finding = only(findings, "model-not-found")
    assert finding.fix == f"agentcfg profile set gw model=deepseek-chat && agentcfg switch gw --agent {finding.agent}"


def test_no_profile_no_fix_command() -> None:
    listed = json.loads(LITELLM_MODELS.body)
    listed["data"].append({"id": "deepseek-chat-v2", "object": "model"})
    findings = diagnose(
        target("qwen", GW, model="deepseek-chat-v2", profile=None), gateway_seen("qwen", json.dumps(listed))
    )
    assert only(findings, "model-not-found").fix == ""


def test_probe_kinds_cover_the_agents() -> None:
    assert {p.probe.kind for p in SHAPES.values()} == {"chat", "chat-stream", "responses-stream", "messages-stream"}
    assert isinstance(SHAPES["chat"].probe, Probe)


# -- real LiteLLM 1.108 in front of real vLLM 0.32 that does not serve the model (tests/fixtures/
# litellm-1.108-upstream404, captured by the "real" helper): chat, streamed or not, Responses, Messages ------

REAL = Path(__file__).parent.parent / "fixtures" / "litellm-1.108-upstream404"
REAL_KIND = {
    "b01-chat": "chat",
    "b02-chat-stream": "chat-stream",
    "d01-responses-stream": "responses-stream",
    "e01-messages-stream": "messages-stream",
}


@pytest.mark.parametrize("case", sorted(p.stem for p in REAL.glob("[bde]*.json")))
def test_real_upstream_404s_are_model_not_found_upstream(case: str) -> None:
    result = load(REAL / f"{case}.json")
    assert result is not None and result.status == 404
    verdict = classify(result)
    assert (verdict.id, verdict.upstream) == ("model-not-found", True), verdict
    assert upstream_model(verdict.message) == "gpt-retired"


@pytest.mark.parametrize(("case", "kind"), list(REAL_KIND.items()))
def test_real_upstream_404_as_each_agent_sees_it(case: str, kind: str) -> None:
    agent = {"chat": "opencode", "chat-stream": "qwen", "responses-stream": "codex", "messages-stream": "claude"}
    base = GW.removesuffix("/v1") if kind == "messages-stream" else GW
    seen = healthy(agent[kind], base)
    models = load(REAL / "a01-get-v1-models.json")
    seen["models"] = Result(probe("models", GW), 200, "application/json", models.body)
    for other in ("chat", "chat-stream", "responses-stream", "messages-stream"):
        if other in seen:
            captured = load(REAL / f"{next(c for c, k in REAL_KIND.items() if k == other)}.json")
            seen[other] = Result(probe(other, base), captured.status, captured.content_type, captured.body)
    findings = diagnose(target(agent[kind], base, model="gpt-retired", profile="gw"), seen)
    assert ids(findings, FAIL) == ["model-not-found"], findings
    finding = only(findings, "model-not-found")
    assert "upstream" in finding.summary and "gateway lists model 'gpt-retired'" in finding.summary
    assert "DeepSeek-V4-Flash" in finding.hint and "admin" in finding.hint
