"""doctor's pure rules (agentcfg.doctor.rules) against every response captured from real servers, and against
hand-written bodies and synthetic probe results for the cases the captures do not cover."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcfg.doctor.model import FAIL, PASS, SKIP, WARN, Finding, Target
from agentcfg.doctor.probes import Probe, Result
from agentcfg.doctor.replies import alternative_base, error_message, max_model_len, model_ids, sse_events
from agentcfg.doctor.rules import classify, diagnose
from tests.conftest import SHARED_FIXTURES

VLLM = SHARED_FIXTURES / "vllm-0.32-cpu"
LITELLM = SHARED_FIXTURES / "litellm-1.108"

# -- fixtures as probe results ---------------------------------------------------------------------------


def kind_for(path: str, body: object) -> str | None:
    """The probe kind a captured request corresponds to, or None for endpoints doctor never probes."""
    stream = "-stream" if isinstance(body, dict) and body.get("stream") else ""
    path = path.split("?")[0].rstrip("/")
    if path.endswith("/models"):
        return "models"
    for suffix, kind in (("/chat/completions", "chat"), ("/responses", "responses"), ("/messages", "messages")):
        if path.endswith(suffix):
            return kind + stream
    return None


def load(path: Path) -> Result | None:
    """One captured case (either folder's format) as the Result a probe would have produced."""
    data = json.loads(path.read_text(encoding="utf-8"))
    request = data.get("request")
    if request is None:
        return None  # throughput summaries, not one request
    if "response" in data:  # LiteLLM: request + response{status, headers, body (text), content_type}
        response = data["response"]
        status, headers, text = response["status"], response["headers"], response["body"]
    else:  # vLLM: status, headers, body (parsed JSON) or body_raw (text)
        status, headers = data["status"], data["headers"]
        if "body_raw" in data:
            text = data["body_raw"] or ""
        elif data.get("body") is None:
            text = ""
        elif isinstance(data["body"], str):
            text = data["body"]
        else:
            text = json.dumps(data["body"])
    kind = kind_for(request["path"], request.get("body"))
    if kind is None:
        return None
    content_type = next((value for name, value in headers if name.lower() == "content-type"), "")
    body = request.get("body")
    if request["method"] == "POST" and body is None:
        body = {}
    probe = Probe(kind, "http://127.0.0.1:8000" + request["path"], (), body if request["method"] == "POST" else None)
    return Result(probe, status, content_type, text)


def fixture_name(path: Path) -> str:
    return str(path.relative_to(SHARED_FIXTURES).with_suffix(""))


ALL_FIXTURES = sorted(p for p in SHARED_FIXTURES.rglob("*.json"))

# Every captured case doctor could meet as one of its probes -> the verdict id (None: ok).
EXPECTED: dict[str, object] = {
    # vLLM 0.32 (CPU build)
    "vllm-0.32-cpu/a_get_v1_models": None,
    "vllm-0.32-cpu/b_chat_nonstream": None,
    "vllm-0.32-cpu/b_chat_stream": None,
    "vllm-0.32-cpu/b_chat_stream_include_usage": None,
    "vllm-0.32-cpu/c_responses_nonstream": None,
    "vllm-0.32-cpu/c_responses_stream": None,
    "vllm-0.32-cpu/d_wrong_model": "model-not-found",
    "vllm-0.32-cpu/d_wrong_model_responses": "model-not-found",
    "vllm-0.32-cpu/e_responses_tools_auto_with_flag": None,
    # vLLM's Responses API accepts tools without the flag (why doctor also sends Codex a chat request)
    "vllm-0.32-cpu/e_responses_tools_auto_without_flag": None,
    "vllm-0.32-cpu/e_scripted_no_tools": None,
    "vllm-0.32-cpu/e_scripted_responses_tools_auto": None,
    "vllm-0.32-cpu/e_scripted_responses_tools_auto_stream": None,
    "vllm-0.32-cpu/e_scripted_tool_result_roundtrip": None,
    "vllm-0.32-cpu/e_scripted_tools_auto": None,
    "vllm-0.32-cpu/e_scripted_tools_auto_stream": None,
    "vllm-0.32-cpu/e_scripted_tools_required": None,
    "vllm-0.32-cpu/e_tools_auto_with_flag": None,
    "vllm-0.32-cpu/e_tools_auto_with_flag_stream": None,
    "vllm-0.32-cpu/e_tools_auto_without_flag": "tool-parser-missing",
    "vllm-0.32-cpu/e_tools_auto_without_flag_stream": "tool-parser-missing",
    # `tool_choice=function "get_weather" requires --tool-call-parser to be set`
    "vllm-0.32-cpu/e_tools_named_without_flag": "tool-parser-missing",
    "vllm-0.32-cpu/e_tools_no_tool_choice_without_flag": "tool-parser-missing",
    "vllm-0.32-cpu/e_tools_required_with_flag": None,
    "vllm-0.32-cpu/e_tools_required_without_flag": "tool-parser-missing",
    "vllm-0.32-cpu/f_chat_key_without_bearer_prefix": "key-rejected",
    "vllm-0.32-cpu/f_chat_no_key": "key-rejected",
    "vllm-0.32-cpu/f_chat_right_key": None,
    "vllm-0.32-cpu/f_chat_wrong_key": "key-rejected",
    "vllm-0.32-cpu/f_chat_x_api_key_header": "key-rejected",
    "vllm-0.32-cpu/f_models_no_key": "key-rejected",
    "vllm-0.32-cpu/f_models_right_key": None,
    "vllm-0.32-cpu/f_models_wrong_key": "key-rejected",
    "vllm-0.32-cpu/f_responses_no_key": "key-rejected",
    "vllm-0.32-cpu/g_get_models_no_v1": "base-url-path",
    "vllm-0.32-cpu/g_post_chat_completions_no_v1": "base-url-path",
    "vllm-0.32-cpu/g_post_responses_no_v1": "base-url-path",
    "vllm-0.32-cpu/h_malformed_json": "request-rejected",
    "vllm-0.32-cpu/h_max_completion_tokens_over_max_model_len": "context-limit-exceeded",
    "vllm-0.32-cpu/h_max_tokens_over_max_model_len": "context-limit-exceeded",
    "vllm-0.32-cpu/h_missing_messages": "request-rejected",
    "vllm-0.32-cpu/h_missing_model": None,  # vLLM serves its only model
    # "This model's maximum context length is 2048 tokens. However, your prompt contains ..."
    "vllm-0.32-cpu/h_prompt_too_long": "context-limit-exceeded",
    # LiteLLM 1.108, stock auth without a database
    "litellm-1.108/a01-get-v1-models-key": None,
    "litellm-1.108/a02-get-v1-models-nokey": "key-rejected",
    "litellm-1.108/a03-get-v1-models-wrongkey": "key-rejected",  # 400 No connected db.
    "litellm-1.108/a04-get-models-key": None,
    "litellm-1.108/a05-get-models-nokey": "key-rejected",
    "litellm-1.108/b01-chat-mock-ok": None,
    "litellm-1.108/b02-chat-mock-stream": None,
    "litellm-1.108/b03-chat-upstream-ok": None,
    "litellm-1.108/b04-chat-upstream-stream": None,
    "litellm-1.108/b05-chat-upstream-stream-usage": None,
    "litellm-1.108/b06-chat-nokey": "key-rejected",
    "litellm-1.108/b07-chat-wrongkey": "key-rejected",  # 400 No connected db.
    "litellm-1.108/b08-chat-no-bearer": "key-rejected",  # Malformed API Key
    "litellm-1.108/b09-chat-lowercase-bearer": None,
    "litellm-1.108/b10-chat-key-trailing-space": None,
    # a raw newline in the header broke the request framing: the server saw invalid JSON (httpx
    # would have refused to send it: key-malformed, covered by the transport tests below)
    "litellm-1.108/b11-chat-key-trailing-newline": "request-rejected",
    "litellm-1.108/b12-chat-key-trailing-escaped-newline": "key-rejected",
    "litellm-1.108/b13-chat-double-bearer": None,
    "litellm-1.108/b14-chat-x-api-key": None,
    "litellm-1.108/b15-chat-api-key-header": None,
    "litellm-1.108/b16-chat-bad-json": "request-rejected",
    "litellm-1.108/b17-chat-no-messages": "request-rejected",
    "litellm-1.108/b18-chat-upstream-401": "server-error",  # the gateway's own upstream key failed
    "litellm-1.108/b19-chat-upstream-dead": "server-error",
    "litellm-1.108/b20-chat-mock-ratelimit": "rate-limited",
    "litellm-1.108/b21-chat-upstream-dead-stream": "server-error",
    "litellm-1.108/b22-chat-upstream-401-stream": "server-error",  # the gateway's own upstream key failed
    "litellm-1.108/c01-chat-unknown-model": "model-not-found",
    "litellm-1.108/c02-chat-model-wrong-case": "model-not-found",
    "litellm-1.108/c03-chat-model-provider-prefix": "model-not-found",
    "litellm-1.108/c04-chat-model-missing": "model-not-found",
    "litellm-1.108/c05-chat-unknown-model-nokey": "key-rejected",
    "litellm-1.108/c06-chat-model-deployment-name": None,
    "litellm-1.108/c07-chat-model-stale-upstream": "model-not-found",  # listed by the gateway, gone upstream
    "litellm-1.108/d01-responses-mock": None,
    # 500 with an SSE body holding an error and [DONE]: the status decides
    "litellm-1.108/d02-responses-mock-stream": "server-error",
    "litellm-1.108/d03-responses-upstream": None,
    # LiteLLM's streamed /responses sends text deltas without response.output_item.added: real Codex 0.171
    # logs "OutputTextDelta without active item" and prints no answer (seen against this shape).
    "litellm-1.108/d04-responses-upstream-stream": "stream-broken",
    "litellm-1.108/d05-responses-nokey": "key-rejected",
    "litellm-1.108/d06-responses-unknown-model": "model-not-found",
    "litellm-1.108/d07-responses-no-v1": None,  # LiteLLM accepts a missing /v1
    "litellm-1.108/e01-messages-xapikey-claude": None,
    "litellm-1.108/e02-messages-bearer-claude": None,
    "litellm-1.108/e03-messages-xapikey-openai-mock": None,
    "litellm-1.108/e04-messages-upstream": None,
    "litellm-1.108/e05-messages-upstream-stream": None,
    # stream=true answered with one plain JSON message (LiteLLM's mock): Claude Code 2.1 reads it
    # (tests/realservers runs claude against this gateway)
    "litellm-1.108/e06-messages-claude-stream": None,
    "litellm-1.108/e07-messages-nokey": "key-rejected",
    "litellm-1.108/e08-messages-wrong-xapikey": "key-rejected",
    "litellm-1.108/e09-messages-unknown-model": "model-not-found",
    "litellm-1.108/e10-messages-no-version": None,
    "litellm-1.108/e11-messages-no-v1": "base-url-path",
    "litellm-1.108/e12-messages-anthropic-prefix": "key-rejected",
    "litellm-1.108/f01-api-v1-chat": "base-url-path",
    "litellm-1.108/f02-api-v1-models": "base-url-path",
    "litellm-1.108/f03-no-v1-chat": None,
    "litellm-1.108/f04-v1v1-chat": "base-url-path",
    "litellm-1.108/f05-v1v1-models": "base-url-path",
    # 307 with an empty body and a Location header (probes do not follow redirects)
    "litellm-1.108/f06-v1-trailing-slash": "base-url-redirect",  # as captured: the probe would have followed it
    "litellm-1.108/f07-v1-double-slash": "base-url-path",
    "litellm-1.108/f08-get-chat": "request-rejected",  # 405
    "litellm-1.108/f10-openai-v1-chat": "server-error",
    "litellm-1.108/f12-api-v1-nokey": "base-url-path",
    # no-prisma/: every auth failure is a plain-text 500
    "litellm-1.108/no-prisma/a02-get-v1-models-nokey": "server-error",
    "litellm-1.108/no-prisma/a05-get-models-nokey": "server-error",
    "litellm-1.108/no-prisma/b06-chat-nokey": "server-error",
    "litellm-1.108/no-prisma/b08-chat-no-bearer": "server-error",
    "litellm-1.108/no-prisma/b22-chat-upstream-401-stream-after-cooldown": "rate-limited",
    "litellm-1.108/no-prisma/c05-chat-unknown-model-nokey": "server-error",
    "litellm-1.108/no-prisma/d05-responses-nokey": "server-error",
    "litellm-1.108/no-prisma/e07-messages-nokey": "server-error",
    "litellm-1.108/no-prisma/f10-openai-v1-chat": "server-error",
    # strict-401/: a wrong key is a 401
    "litellm-1.108/strict-401/a01-get-v1-models-key": None,
    "litellm-1.108/strict-401/a02-get-v1-models-nokey": "key-rejected",
    "litellm-1.108/strict-401/a03-get-v1-models-wrongkey": "key-rejected",
    "litellm-1.108/strict-401/a05-get-models-nokey": "key-rejected",
    "litellm-1.108/strict-401/b01-chat-mock-ok": None,
    "litellm-1.108/strict-401/b06-chat-nokey": "key-rejected",
    "litellm-1.108/strict-401/b07-chat-wrongkey": "key-rejected",
    "litellm-1.108/strict-401/b08-chat-no-bearer": "key-rejected",
    "litellm-1.108/strict-401/b09-chat-lowercase-bearer": None,
    "litellm-1.108/strict-401/b10-chat-key-trailing-space": None,
    "litellm-1.108/strict-401/b11-chat-key-trailing-newline": "request-rejected",
    "litellm-1.108/strict-401/b12-chat-key-trailing-escaped-newline": "key-rejected",
    "litellm-1.108/strict-401/b13-chat-double-bearer": None,
    "litellm-1.108/strict-401/b14-chat-x-api-key": None,
    "litellm-1.108/strict-401/b15-chat-api-key-header": None,
    "litellm-1.108/strict-401/c05-chat-unknown-model-nokey": "key-rejected",
    "litellm-1.108/strict-401/d05-responses-nokey": "key-rejected",
    "litellm-1.108/strict-401/e01-messages-xapikey-claude": None,
    "litellm-1.108/strict-401/e02-messages-bearer-claude": None,
    "litellm-1.108/strict-401/e07-messages-nokey": "key-rejected",
    "litellm-1.108/strict-401/e08-messages-wrong-xapikey": "key-rejected",
}

# Captured cases of endpoints doctor never probes (health, metrics, version, one model, legacy completions).
NOT_PROBED = {
    "vllm-0.32-cpu/a_get_health",
    "vllm-0.32-cpu/a_get_metrics",
    "vllm-0.32-cpu/a_get_version",
    "vllm-0.32-cpu/f_health_no_key",
    "vllm-0.32-cpu/f_metrics_no_key_status_only",
    "vllm-0.32-cpu/f_version_no_key",
    "vllm-0.32-cpu/g_get_v1_root",
    "vllm-0.32-cpu/i_throughput",
    "vllm-0.32-cpu/i_throughput_enforce_eager",
    "litellm-1.108/a06-get-v1-models-id-key",
    "litellm-1.108/a07-get-v1-models-unknown-id",
    "litellm-1.108/a08-health-liveliness-nokey",
    "litellm-1.108/a09-health-liveliness-key",
    "litellm-1.108/a10-health-liveness-nokey",
    "litellm-1.108/a11-health-readiness-nokey",
    "litellm-1.108/a12-health-nokey",
    "litellm-1.108/a13-health-key",
    "litellm-1.108/a14-get-v1-model-info-key",
    "litellm-1.108/a15-get-root",
    "litellm-1.108/e13-messages-count-tokens",
    "litellm-1.108/f09-v1-root",
    "litellm-1.108/f11-v1-completions-legacy",
    "litellm-1.108/no-prisma/a12-health-nokey",
    "litellm-1.108/strict-401/a12-health-nokey",
}


def test_every_fixture_is_accounted_for() -> None:
    names = {fixture_name(p) for p in ALL_FIXTURES}
    assert len(names) > 150
    probed = {fixture_name(p) for p in ALL_FIXTURES if load(p) is not None}
    assert probed == set(EXPECTED)
    assert names - probed == NOT_PROBED


@pytest.mark.parametrize(("name", "expected"), list(EXPECTED.items()), ids=list(EXPECTED))
def test_classify_captured(name: str, expected: str | None) -> None:
    result = load(SHARED_FIXTURES / f"{name}.json")
    assert result is not None
    verdict = classify(result)
    if expected is None:
        assert verdict.ok, verdict
        assert verdict.id is None
    else:
        assert not verdict.ok
        assert verdict.id == expected, verdict.message
        assert verdict.message


def test_captured_streams_are_streams() -> None:
    """The loader gives streams what probes see: the SSE text and its content type."""
    for name in ("vllm-0.32-cpu/b_chat_stream", "litellm-1.108/b02-chat-mock-stream"):
        result = load(SHARED_FIXTURES / f"{name}.json")
        assert result.probe.kind == "chat-stream" and result.probe.stream
        assert "text/event-stream" in result.content_type
        assert sse_events(result.body)[-1] == "[DONE]"
    responses = load(VLLM / "c_responses_stream.json")
    assert responses.probe.kind == "responses-stream"
    assert "event: response.completed" in responses.body


def _without_event_lines(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("event:")) + "\n"


def test_responses_stream_without_event_lines_is_ok_for_codex() -> None:
    result = load(VLLM / "c_responses_stream.json")
    result.body = _without_event_lines(result.body)
    assert classify(result).ok


def test_responses_stream_without_completed_is_broken() -> None:
    result = load(VLLM / "c_responses_stream.json")
    lines = result.body.splitlines()
    cut = next(i for i, line in enumerate(lines) if line == "event: response.completed")
    result.body = "\n".join(lines[:cut]) + "\n"
    verdict = classify(result)
    assert verdict.id == "stream-broken"
    assert "response.completed" in verdict.message


def test_messages_stream_without_message_stop_is_broken() -> None:
    result = load(LITELLM / "e05-messages-upstream-stream.json")
    assert classify(result).ok
    kept = [chunk for chunk in result.body.split("\n\n") if "message_stop" not in chunk]
    result.body = "\n\n".join(kept)
    verdict = classify(result)
    assert verdict.id == "stream-broken"
    assert "message_stop" in verdict.message


def test_chat_stream_without_done_is_broken() -> None:
    result = load(VLLM / "b_chat_stream.json")
    result.body = result.body.replace("data: [DONE]", "")
    verdict = classify(result)
    assert verdict.id == "stream-broken"
    assert "[DONE]" in verdict.message


# -- hand-written bodies ---------------------------------------------------------------------------------

CHAT = Probe("chat", "http://127.0.0.1:8000/v1/chat/completions", (), {"model": "m", "stream": False})
CHAT_STREAM = Probe("chat-stream", "http://127.0.0.1:8000/v1/chat/completions", (), {"model": "m", "stream": True})
RESPONSES_STREAM = Probe("responses-stream", "http://127.0.0.1:8000/v1/responses", (), {"model": "m", "stream": True})
MESSAGES_STREAM = Probe(
    "messages-stream", "http://127.0.0.1:8000/v1/messages?beta=true", (), {"model": "m", "stream": True}
)
MESSAGES = Probe("messages", "http://127.0.0.1:8000/v1/messages", (), {"model": "m"})
MODELS = Probe("models", "http://127.0.0.1:8000/v1/models")
JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream; charset=utf-8"

NOT_FOUND = "The model `gpt-4o` does not exist."


def answer(status: int, body: object, probe: Probe = CHAT, content_type: str = JSON_TYPE) -> Result:
    text = body if isinstance(body, str) else json.dumps(body)
    return Result(probe, status, content_type, text)


@pytest.mark.parametrize(
    "body",
    [
        {"error": {"message": NOT_FOUND, "type": "NotFoundError", "param": "model", "code": 404}},
        {"error": {"message": NOT_FOUND, "type": "NotFoundError", "param": "model", "code": "404"}},
        {"object": "error", "message": NOT_FOUND, "type": "NotFoundError", "param": None, "code": 404},
        {"object": "error", "message": NOT_FOUND, "type": "NotFoundError", "param": None, "code": "404"},
        {"type": "error", "error": {"type": "not_found_error", "message": NOT_FOUND}},
        {"detail": NOT_FOUND},
    ],
    ids=["nested-int", "nested-str", "flat-int", "flat-str", "anthropic", "detail"],
)
def test_error_shapes(body: dict) -> None:
    assert error_message(body) == NOT_FOUND
    assert error_message(json.dumps(body)) == NOT_FOUND
    verdict = classify(answer(404, body))
    assert verdict.id == "model-not-found"
    assert NOT_FOUND in verdict.message and "HTTP 404" in verdict.message


def test_error_message_other_shapes() -> None:
    assert error_message({"error": "Unauthorized"}) == "Unauthorized"
    assert error_message('{"error": "Unauthorized"}') == "Unauthorized"
    assert error_message({"error": {"type": "auth_error"}}) == "auth_error"
    assert error_message({"object": "error"}) == "error"
    assert "Field required" in error_message({"detail": [{"loc": ["body", "messages"], "msg": "Field required"}]})
    assert error_message("Internal Server Error") is None
    assert error_message("<html><body>502 Bad Gateway</body></html>") is None
    assert error_message({"choices": []}) is None
    assert error_message(None) is None
    assert error_message(["error"]) is None
    sse = 'data: {"choices": []}\n\ndata: {"error": {"message": "boom"}}\n\n'
    assert error_message(sse) == "boom"


def test_sse_events() -> None:
    text = 'event: x\ndata: {"a": 1}\n\ndata:{"b": 2}\r\n\r\ndata: not json\n\n: comment\ndata: [DONE]\n\n'
    assert sse_events(text) == [{"a": 1}, {"b": 2}, None, "[DONE]"]
    assert sse_events("") == []
    assert sse_events('{"data": 1}') == []


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (401, {"error": "Unauthorized"}, "key-rejected"),
        (403, {"error": {"message": "Forbidden", "type": "permission_error"}}, "key-rejected"),
        (404, {"detail": "Not Found"}, "base-url-path"),
        (404, "", "base-url-path"),
        (400, {"error": {"message": "No connected db.", "type": "no_db_connection", "code": "400"}}, "key-rejected"),
        (
            401,
            {"error": {"message": "Authentication Error, Malformed API Key passed in.", "code": "401"}},
            "key-rejected",
        ),
        (
            401,
            {"type": "error", "error": {"type": "authentication_error", "message": "OAuth token has expired. Refresh"}},
            "claude-oauth-expired",
        ),
        (
            400,
            {"error": {"message": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser'}},
            "tool-parser-missing",
        ),
        (
            400,
            {"error": {"message": "max_tokens=32000 cannot be greater than max_model_len=16384. Please request fewer"}},
            "context-limit-exceeded",
        ),
        (
            400,
            {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "prompt is too long: 250000 tokens"},
            },
            "context-limit-exceeded",
        ),
        (400, {"error": {"message": "Invalid model name passed in model=x"}}, "model-not-found"),
        (429, {"error": {"message": "slow down"}}, "rate-limited"),
        (500, "Internal Server Error", "server-error"),
        (502, "<html><body>Bad Gateway</body></html>", "server-error"),
        (503, {"error": {"message": "loading"}}, "server-error"),
        (400, {"error": {"message": "something else"}}, "request-rejected"),
        (422, {"detail": [{"msg": "Field required"}]}, "request-rejected"),
    ],
)
def test_error_statuses(status: int, body: object, expected: str) -> None:
    verdict = classify(answer(status, body))
    assert not verdict.ok
    assert verdict.id == expected, verdict.message
    assert f"HTTP {status}" in verdict.message


def test_unauthorized_evidence_quotes_the_body() -> None:
    verdict = classify(answer(401, {"error": "Unauthorized"}))
    assert verdict.message == "HTTP 401: Unauthorized"
    plain = classify(answer(500, "Internal Server Error", content_type="text/plain"))
    assert plain.message == "HTTP 500: Internal Server Error"


@pytest.mark.parametrize(
    ("result", "expected", "says"),
    [
        (
            answer(200, "<!DOCTYPE html><html><body>Welcome</body></html>", content_type="text/html"),
            "response-not-openai",
            "HTML",
        ),
        (answer(200, "<html><head></head></html>", content_type=""), "response-not-openai", "HTML"),
        (answer(200, "<html>login</html>", CHAT_STREAM, "text/html"), "response-not-openai", "HTML"),
        (answer(200, {"id": "x", "object": "chat.completion"}), "response-not-openai", "choices"),
        (answer(200, {"error": {"message": "quota exhausted"}}), "response-not-openai", "status 200"),
        (answer(200, "ok", content_type="text/plain"), "response-not-openai", "not JSON"),
        (
            answer(200, {"id": "r"}, Probe("responses", "http://h/v1/responses", (), {})),
            "response-not-openai",
            "output",
        ),
        (answer(200, {"id": "m"}, MESSAGES), "response-not-openai", "content"),
        (answer(200, {"object": "list"}, MODELS), "response-not-openai", "data"),
        (answer(200, "[]", MODELS), "response-not-openai", "data"),
    ],
    ids=[
        "html-page",
        "html-untyped",
        "html-for-stream",
        "json-without-choices",
        "error-with-200",
        "plain-text",
        "responses-without-output",
        "messages-without-content",
        "models-without-data",
        "models-list",
    ],
)
def test_not_what_the_client_parses(result: Result, expected: str, says: str) -> None:
    verdict = classify(result)
    assert verdict.id == expected
    assert says in verdict.message


CHUNK = {
    "id": "c",
    "object": "chat.completion.chunk",
    "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}],
}


def sse(*payloads: object) -> str:
    return "".join(f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n" for p in payloads)


@pytest.mark.parametrize(
    ("result", "says"),
    [
        (answer(200, sse(CHUNK, CHUNK), CHAT_STREAM, SSE_TYPE), "[DONE]"),
        (answer(200, sse(CHUNK, "{not json", "[DONE]"), CHAT_STREAM, SSE_TYPE), "not JSON"),
        (
            answer(200, sse(CHUNK, {"error": {"message": "engine died"}}, "[DONE]"), CHAT_STREAM, SSE_TYPE),
            "engine died",
        ),
        (
            answer(
                200,
                "event: error\n"
                + sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
                MESSAGES_STREAM,
                SSE_TYPE,
            ),
            "Overloaded",
        ),
        (answer(200, {"id": "x", "choices": [{"message": {"content": "hi"}}]}, CHAT_STREAM), "got JSON"),
        (answer(200, "", CHAT_STREAM, ""), "a body"),
        (answer(200, "", CHAT_STREAM, SSE_TYPE), "no `data:` events"),
        (answer(200, sse("[DONE]"), CHAT_STREAM, SSE_TYPE), "no `data:` events"),
        (answer(200, "event: ping\n\n", RESPONSES_STREAM, SSE_TYPE), "no `data:` events"),
    ],
    ids=[
        "no-done",
        "non-json-line",
        "error-in-stream",
        "anthropic-error-event",
        "json-for-stream",
        "empty-untyped",
        "empty-sse",
        "only-done",
        "only-event-lines",
    ],
)
def test_broken_streams(result: Result, says: str) -> None:
    verdict = classify(result)
    assert verdict.id == "stream-broken", verdict
    assert says in verdict.message


def test_good_hand_written_streams() -> None:
    assert classify(answer(200, sse(CHUNK, "[DONE]"), CHAT_STREAM, SSE_TYPE)).ok
    responses = (
        "event: response.created\n"
        + sse({"type": "response.created", "response": {"id": "r"}})
        + "event: response.completed\n"
        + sse({"type": "response.completed", "response": {"id": "r"}})
    )
    assert classify(answer(200, responses, RESPONSES_STREAM, SSE_TYPE)).ok
    incomplete = responses.replace("response.completed", "response.incomplete")
    assert classify(answer(200, incomplete, RESPONSES_STREAM, SSE_TYPE)).ok
    messages = sse({"type": "message_start", "message": {"id": "m", "usage": {}}}, {"type": "message_stop"})
    assert classify(answer(200, messages, MESSAGES_STREAM, SSE_TYPE)).ok


@pytest.mark.parametrize(
    ("kind", "body", "why"),
    [
        ("chat", sse({"choices": [{"index": 0, "delta": {"content": "hi"}}]}, "[DONE]"), "finish_reason"),
        (
            "responses",
            sse({"type": "response.output_text.delta", "delta": "x"}, {"type": "response.completed"}),
            "OutputTextDelta without active item",
        ),
        ("messages", sse({"type": "message_start", "message": {}}, {"type": "message_stop"}), "malformed"),
        (
            "messages",
            sse(
                {"type": "message_start", "message": {"usage": {}}},
                {"type": "content_block_delta", "delta": {"text": "x"}},
                {"type": "message_stop"},
            ),
            "malformed",
        ),
    ],
)
def test_streams_the_agents_themselves_reject(kind: str, body: str, why: str) -> None:
    """Each shape made a real agent fail (codex 0.171, qwen-code, Claude Code 2.1) against a test server."""
    probe = {"chat": CHAT_STREAM, "responses": RESPONSES_STREAM, "messages": MESSAGES_STREAM}[kind]
    verdict = classify(answer(200, body, probe, SSE_TYPE))
    assert (verdict.ok, verdict.id) == (False, "stream-broken") and why in verdict.message


def test_chat_stream_without_choices_is_not_openai() -> None:
    verdict = classify(answer(200, sse({"type": "message_start"}, "[DONE]"), CHAT_STREAM, SSE_TYPE))
    assert verdict.id == "response-not-openai"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ("refused", "server-unreachable"),
        ("timeout", "server-unreachable"),
        ("dns", "server-unreachable"),
        ("reset", "server-unreachable"),
        ("other", "server-unreachable"),
        ("tls", "tls-untrusted"),
        ("proxy", "proxy-unreachable"),
        ("protocol", "key-malformed"),
    ],
)
def test_transport_errors(error: str, expected: str) -> None:
    verdict = classify(Result(CHAT_STREAM, error=error, detail="ConnectError: something"))
    assert not verdict.ok
    assert verdict.id == expected
    assert verdict.message == f"{error}: ConnectError: something"


def test_timeout_after_headers_is_not_unreachable() -> None:
    result = Result(CHAT_STREAM, 200, SSE_TYPE, "", error="timeout", detail="no complete answer within 6 s")
    assert classify(result).id != "server-unreachable"


# -- /models: ids, window, the other base URL ------------------------------------------------------------


def test_model_ids_and_window_from_vllm() -> None:
    models = load(VLLM / "a_get_v1_models.json")
    assert model_ids(models) == ["DeepSeek-V4-Flash"]
    assert max_model_len(models, "DeepSeek-V4-Flash") == 2048
    assert max_model_len(models, None) == 2048  # the only model
    assert max_model_len(models, "other") == 2048  # one model listed: its window is the server's


def test_model_ids_and_window_from_litellm() -> None:
    models = load(LITELLM / "a01-get-v1-models-key.json")
    ids = model_ids(models)
    assert ids[:3] == ["deepseek-chat", "qwen-plus", "claude-sonnet-4"]
    assert "broken-upstream-key" in ids and len(ids) == 8
    assert max_model_len(models, "deepseek-chat") == 131072  # max_input_tokens
    assert max_model_len(models, "claude-sonnet-4") == 200000
    assert max_model_len(models, "qwen-plus") is None  # no size listed
    assert max_model_len(models, "no-such-model") is None  # several models: no guess
    assert max_model_len(models, None) is None


def test_model_ids_of_failures() -> None:
    assert model_ids(None) == []
    assert max_model_len(None, "m") is None
    assert model_ids(load(VLLM / "f_models_no_key.json")) == []
    assert model_ids(load(LITELLM / "a02-get-v1-models-nokey.json")) == []
    assert model_ids(Result(MODELS, 200, JSON_TYPE, "not json")) == []
    assert model_ids(Result(MODELS, 200, JSON_TYPE, '{"data": [{"id": "a"}, {"x": 1}, "b", {"id": ""}]}')) == ["a"]
    bogus = Result(MODELS, 200, JSON_TYPE, '{"data": [{"id": "a", "max_model_len": "2048"}]}')
    assert max_model_len(bogus, "a") is None
    zero = Result(MODELS, 200, JSON_TYPE, '{"data": [{"id": "a", "max_model_len": 0, "max_input_tokens": 4096}]}')
    assert max_model_len(zero, "a") == 4096


@pytest.mark.parametrize(
    ("base", "other"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1"),
        ("https://taotoken.net/api", "https://taotoken.net/api/v1"),
        ("https://gw.example.com/api/v1", "https://gw.example.com/api"),
    ],
)
def test_alternative_base(base: str, other: str) -> None:
    assert alternative_base(base) == other


# -- the rules -------------------------------------------------------------------------------------------

BASE = "http://127.0.0.1:8000/v1"
REMOTE = "https://gw.example.com/v1"
MODELS_BODY = {"object": "list", "data": [{"id": "DeepSeek-V4-Flash", "max_model_len": 131072}]}
DONE_STREAM = sse(CHUNK, "[DONE]")
CHAT_BODY = {"id": "c", "object": "chat.completion", "choices": [{"message": {"content": "ready"}}]}
RESPONSES_BODY = (
    "event: response.created\n"
    + sse({"type": "response.created", "response": {"id": "r"}})
    + "event: response.completed\n"
    + sse({"type": "response.completed", "response": {"id": "r"}})
)
MESSAGES_BODY = (
    "event: message_start\n"
    + sse({"type": "message_start", "message": {"id": "m", "usage": {}}})
    + "event: message_stop\n"
    + sse({"type": "message_stop"})
)


def target(agent: str = "qwen", base: str | None = BASE, **kw: object) -> Target:
    defaults: dict[str, object] = {
        "protocol": "anthropic" if agent == "claude" else "openai",
        "model": "DeepSeek-V4-Flash",
        "key": "sk-real-key",
        "key_source": "env GW_KEY",
        "key_env": "GW_KEY",
        "profile": "gw",
        "prompt_tokens": 10_000,
        "output_tokens": 8_000,
    }
    defaults.update(kw)
    return Target(agent, defaults.pop("protocol"), base, defaults.pop("model"), **defaults)


def probe(kind: str, base: str = BASE, proxy: str | None = None) -> Probe:
    path = {
        "models": "/models",
        "models-alt": "/models",
        "models-direct": "/models",
        "chat": "/chat/completions",
        "chat-stream": "/chat/completions",
        "responses-stream": "/responses",
        "messages-stream": "/v1/messages?beta=true",
    }[kind]
    if kind == "models-alt":
        base = alternative_base(base)
    body = None if kind.startswith("models") else {"model": "m", "stream": kind.endswith("-stream")}
    return Probe(kind, base.rstrip("/") + path, (), body, proxy)


def ok(kind: str, base: str = BASE, proxy: str | None = None) -> Result:
    text, ctype = {
        "models": (json.dumps(MODELS_BODY), JSON_TYPE),
        "chat": (json.dumps(CHAT_BODY), JSON_TYPE),
        "chat-stream": (DONE_STREAM, SSE_TYPE),
        "responses-stream": (RESPONSES_BODY, SSE_TYPE),
        "messages-stream": (MESSAGES_BODY, SSE_TYPE),
    }[kind if not kind.startswith("models") else "models"]
    return Result(probe(kind, base, proxy), 200, ctype, text)


def fail(kind: str, status: int | None, body: object = "", base: str = BASE, **kw: object) -> Result:
    text = body if isinstance(body, str) else json.dumps(body)
    return Result(probe(kind, base, kw.pop("proxy", None)), status, JSON_TYPE if status else "", text, **kw)


def healthy(agent: str, base: str = BASE) -> dict[str, Result]:
    kinds = {
        "codex": ("models", "models-alt", "responses-stream", "chat"),
        "qwen": ("models", "models-alt", "chat-stream", "chat"),
        "opencode": ("models", "models-alt", "chat-stream", "chat"),
        "claude": ("models", "messages-stream"),
    }[agent]
    seen = {k: ok(k, base) for k in kinds}
    if "models-alt" in seen:
        seen["models-alt"] = fail("models-alt", 404, {"detail": "Not Found"}, base)
    return seen


def ids(findings: list[Finding], status: str | None = None) -> list[str]:
    return [f.id for f in findings if status is None or f.status == status]


def only(findings: list[Finding], fid: str) -> Finding:
    matching = [f for f in findings if f.id == fid]
    assert len(matching) == 1, findings
    return matching[0]


@pytest.mark.parametrize("agent", ["codex", "qwen", "opencode", "claude"])
def test_healthy_gives_only_passes(agent: str) -> None:
    base = "http://127.0.0.1:8000" if agent == "claude" else BASE
    t = target(agent, base)
    findings = diagnose(t, healthy(agent, base))
    assert findings
    assert {f.status for f in findings} == {PASS}
    assert {"server-unreachable", "key-rejected", "tool-parser-missing", "stream-broken"} <= set(ids(findings))
    assert only(findings, "context-limit-exceeded").status == PASS


def test_all_primary_refused_is_one_unreachable_failure() -> None:
    seen = {
        k: fail(k, None, error="refused", detail="ConnectError: [Errno 111] Connection refused")
        for k in ("models", "models-alt", "chat-stream", "chat")
    }
    findings = diagnose(target("qwen"), seen)
    assert ids(findings) == ["server-unreachable"]
    (finding,) = findings
    assert finding.status == FAIL and finding.agent == "qwen"
    assert BASE in finding.summary
    assert "Connection refused" in finding.evidence
    assert "start the server" in finding.hint and finding.fix == ""


def test_unreachable_for_codex_counts_only_responses() -> None:
    seen = healthy("codex")
    seen["responses-stream"] = fail("responses-stream", None, error="timeout", detail="ReadTimeout")
    assert ids(diagnose(target("codex"), seen)) == ["server-unreachable"]


KEY_401 = {"error": {"message": "Authentication Error, Invalid proxy server token passed.", "code": "401"}}


def test_401_without_a_key_is_key_missing() -> None:
    seen = healthy("qwen")
    seen["chat-stream"] = fail("chat-stream", 401, KEY_401)
    seen["chat"] = fail("chat", 401, KEY_401)
    findings = diagnose(target("qwen", key=None, key_source="none"), seen)
    assert ids(findings, FAIL) == ["key-missing"]
    finding = only(findings, "key-missing")
    assert "sends none" in finding.summary
    assert finding.fix == "agentcfg key set gw && agentcfg exec gw -- qwen"
    assert "GW_KEY" in finding.hint
    assert "HTTP 401" in finding.evidence
    assert "key-rejected" not in ids(findings, PASS)


def test_401_with_a_key_is_key_rejected() -> None:
    seen = healthy("qwen")
    seen["chat-stream"] = fail("chat-stream", 401, KEY_401)
    findings = diagnose(target("qwen"), seen)
    assert ids(findings, FAIL) == ["key-rejected"]
    finding = only(findings, "key-rejected")
    assert "env GW_KEY" in finding.summary
    assert "sk-real-key" not in finding.summary + finding.evidence + finding.fix


def test_vllm_unauthorized_hint_and_claude_header_hint() -> None:
    seen = healthy("opencode")
    seen["chat-stream"] = fail("chat-stream", 401, {"error": "Unauthorized"})
    finding = only(diagnose(target("opencode"), seen), "key-rejected")
    assert "Authorization: Bearer" not in finding.summary  # opencode sent Bearer: the remark would mislead
    base = "http://127.0.0.1:8000"
    seen = healthy("claude", base)
    seen["messages-stream"] = fail("messages-stream", 401, {"error": "Unauthorized"}, base)
    finding = only(diagnose(target("claude", base, key_header="x-api-key"), seen), "key-rejected")
    assert "x-api-key" in finding.summary and "ANTHROPIC_AUTH_TOKEN as Bearer" in finding.summary
    assert "--api-key checks only `Authorization: Bearer`" in finding.summary


def test_claude_oauth_expired_from_a_probe() -> None:
    base = "http://127.0.0.1:8000"
    seen = healthy("claude", base)
    body = {"type": "error", "error": {"type": "authentication_error", "message": "OAuth token has expired."}}
    seen["messages-stream"] = fail("messages-stream", 401, body, base)
    finding = only(diagnose(target("claude", base), seen), "claude-oauth-expired")
    assert finding.status == FAIL and "/login" in finding.hint
    assert finding.fix == "agentcfg switch gw --agent claude"


LITELLM_MODELS = load(LITELLM / "a01-get-v1-models-key.json")


def test_model_not_found_lists_the_served_ids_and_suggests_the_closest() -> None:
    seen = healthy("qwen")
    seen["models"] = Result(probe("models"), 200, JSON_TYPE, LITELLM_MODELS.body)
    bad = load(LITELLM / "c01-chat-unknown-model.json").body  # model=deepseek-v3
    seen["chat-stream"] = fail("chat-stream", 400, bad)
    seen["chat"] = fail("chat", 400, bad)
    findings = diagnose(target("qwen", model="deepseek-v3"), seen)
    finding = only(findings, "model-not-found")
    assert finding.status == FAIL
    assert "'deepseek-v3'" in finding.summary
    assert "deepseek-chat, qwen-plus, claude-sonnet-4" in finding.summary
    assert finding.fix == f"agentcfg profile set gw model=deepseek-chat && agentcfg switch gw --agent {finding.agent}"
    assert "use model 'deepseek-chat'" in finding.hint
    assert "--served-model-name deepseek-v3" in finding.hint
    assert "Invalid model name" in finding.evidence
    assert "model-not-found" not in ids(findings, WARN)  # no second, weaker finding


def test_model_not_found_without_a_model_list() -> None:
    seen = healthy("qwen")
    seen["models"] = fail("models", 401, {"error": "Unauthorized"})
    seen["chat-stream"] = fail("chat-stream", 404, load(VLLM / "d_wrong_model.json").body)
    finding = only(diagnose(target("qwen", model="gpt-4o"), seen), "model-not-found")
    assert "the server has:" not in finding.summary
    assert finding.hint.startswith("use one of the server's model ids") and finding.fix == ""


NOT_FOUND_BODY = {"detail": "Not Found"}


def test_base_url_path_names_the_url_that_works() -> None:
    base = "http://127.0.0.1:8000"  # missing /v1
    seen = {
        "models": fail("models", 404, NOT_FOUND_BODY, base),
        "models-alt": ok("models-alt", base),
        "chat-stream": fail("chat-stream", 404, NOT_FOUND_BODY, base),
        "chat": fail("chat", 404, NOT_FOUND_BODY, base),
    }
    findings = diagnose(target("qwen", base), seen)
    finding = only(findings, "base-url-path")
    assert finding.status == FAIL
    assert finding.summary == "http://127.0.0.1:8000 is the wrong path: http://127.0.0.1:8000/v1 works"
    assert (
        finding.fix
        == f"agentcfg profile set gw base_url=http://127.0.0.1:8000/v1 && agentcfg switch gw --agent {finding.agent}"
    )
    assert ids(findings, FAIL) == ["base-url-path"]


def test_base_url_path_when_no_other_url_works() -> None:
    base = "http://127.0.0.1:8000/api"
    seen = {
        "models": fail("models", 404, NOT_FOUND_BODY, base),
        "models-alt": fail("models-alt", 404, NOT_FOUND_BODY, base),
        "chat-stream": fail("chat-stream", 404, NOT_FOUND_BODY, base),
        "chat": fail("chat", 404, NOT_FOUND_BODY, base),
    }
    finding = only(diagnose(target("opencode", base), seen), "base-url-path")
    assert finding.summary == "http://127.0.0.1:8000/api/chat/completions answers 404"
    assert "Not Found" in finding.evidence
    assert "/api/v1" in finding.hint and finding.fix == ""


def test_claude_base_url_with_v1() -> None:
    base = "http://127.0.0.1:8000/v1"
    seen = {
        "models": fail("models", 404, NOT_FOUND_BODY, base + "/v1"),
        "messages-stream": fail("messages-stream", 404, NOT_FOUND_BODY, base),
    }
    finding = only(diagnose(target("claude", base), seen), "base-url-path")
    assert "ends in /v1" in finding.summary
    assert finding.fix == (
        f"agentcfg profile set gw anthropic_base_url=http://127.0.0.1:8000 && "
        f"agentcfg switch gw --agent {finding.agent}"
    )


def test_codex_responses_missing_while_models_works() -> None:
    seen = healthy("codex", REMOTE)
    seen["responses-stream"] = fail("responses-stream", 404, NOT_FOUND_BODY, REMOTE)
    findings = diagnose(target("codex", REMOTE), seen)
    finding = only(findings, "responses-api-missing")
    assert finding.status == FAIL and finding.agent == "codex"
    assert finding.summary.startswith(f"{REMOTE}/responses does not exist")
    assert "base-url-path" not in ids(findings)


def test_codex_responses_missing_when_both_model_urls_work() -> None:
    seen = healthy("codex", REMOTE)
    seen["models-alt"] = ok("models-alt", REMOTE)
    seen["responses-stream"] = fail("responses-stream", 404, NOT_FOUND_BODY, REMOTE)
    findings = diagnose(target("codex", REMOTE), seen)
    assert ids(findings, FAIL) == ["responses-api-missing"]


def test_codex_tool_parser_from_chat_though_responses_worked() -> None:
    seen = healthy("codex")
    seen["responses-stream"] = load(VLLM / "e_scripted_responses_tools_auto_stream.json")
    seen["chat"] = load(VLLM / "e_tools_auto_without_flag.json")
    findings = diagnose(target("codex"), seen)
    finding = only(findings, "tool-parser-missing")
    assert finding.status == FAIL
    assert "Codex exits 0 but never runs a tool" in finding.summary
    assert "--enable-auto-tool-choice --tool-call-parser" in finding.hint and finding.fix == ""
    assert "requires --enable-auto-tool-choice" in finding.evidence
    assert PASS not in {f.status for f in findings if f.id != "context-limit-exceeded"}


def test_qwen_tool_parser_missing() -> None:
    seen = healthy("qwen")
    seen["chat-stream"] = load(VLLM / "e_tools_auto_without_flag_stream.json")
    seen["chat"] = load(VLLM / "e_tools_auto_without_flag.json")
    findings = diagnose(target("qwen"), seen)
    assert ids(findings, FAIL) == ["tool-parser-missing"]
    assert "no tool parser" in only(findings, "tool-parser-missing").summary


def test_codex_chat_failing_otherwise_is_not_reported() -> None:
    """Codex never sends chat requests: only a missing tool parser there matters."""
    seen = healthy("codex")
    seen["chat"] = fail("chat", 404, NOT_FOUND_BODY)
    assert {f.status for f in diagnose(target("codex"), seen)} == {PASS}


def test_rate_limited_is_a_warning() -> None:
    seen = healthy("opencode")
    seen["chat-stream"] = load(LITELLM / "b20-chat-mock-ratelimit.json")
    findings = diagnose(target("opencode"), seen)
    assert only(findings, "rate-limited").status == WARN
    assert not ids(findings, FAIL)


def test_stream_broken_and_not_openai_findings() -> None:
    seen = healthy("qwen")
    seen["chat-stream"] = Result(probe("chat-stream"), 200, JSON_TYPE, json.dumps(CHAT_BODY))
    finding = only(diagnose(target("qwen"), seen), "stream-broken")
    assert "a stream the agent cannot read" in finding.summary
    seen = healthy("qwen")
    seen["chat"] = Result(probe("chat"), 200, "text/html", "<html>portal</html>")
    finding = only(diagnose(target("qwen"), seen), "response-not-openai")
    assert "a response the agent cannot parse" in finding.summary


def test_tls_and_malformed_key_findings() -> None:
    seen = healthy("claude", "https://gw.example.com")
    seen["messages-stream"] = fail("messages-stream", None, error="tls", detail="CERTIFICATE_VERIFY_FAILED")
    finding = only(diagnose(target("claude", "https://gw.example.com"), seen), "tls-untrusted")
    assert "gw.example.com" in finding.summary and "NODE_EXTRA_CA_CERTS" in finding.hint and finding.fix == ""
    seen = healthy("codex")
    seen["responses-stream"] = fail("responses-stream", None, error="protocol", detail="Illegal header value")
    finding = only(diagnose(target("codex"), seen), "key-malformed")
    assert finding.status == FAIL


# context window


def window_models(window: int) -> Result:
    body = {"object": "list", "data": [{"id": "DeepSeek-V4-Flash", "max_model_len": window}]}
    return Result(probe("models"), 200, JSON_TYPE, json.dumps(body))


def context(agent: str, window: int, **kw: object) -> Finding:
    base = "http://127.0.0.1:8000" if agent == "claude" else BASE
    seen = healthy(agent, base)
    seen["models"] = window_models(window)
    return only(diagnose(target(agent, base, **kw), seen), "context-limit-exceeded")


def test_prompt_larger_than_window_fails() -> None:
    finding = context("opencode", 8192, prompt_tokens=10_000, output_tokens=1000)
    assert finding.status == FAIL
    assert "does not fit" in finding.summary
    assert finding.evidence == "max_model_len=8192"
    assert "--max-model-len (18,192 or more)" in finding.hint and finding.fix == ""  # prompt + 2 x budget.MIN_OUTPUT


def test_qwen_default_output_larger_than_window_fails() -> None:
    # qwen's first request asks for 8000: a window below that fails at once ...
    finding = context("qwen", 7_000, prompt_tokens=2_000, output_tokens=None, default_output=64_000)
    assert finding.status == FAIL
    assert "8,000 output tokens (its default)" in finding.summary
    assert "qwen output limit=8000" in finding.evidence
    assert finding.fix == f"agentcfg profile set gw context_window=7000 && agentcfg switch gw --agent {finding.agent}"


def test_qwen_default_retry_larger_than_window_warns() -> None:
    # ... a larger one fails only when a reply reaches 8000 and qwen retries with its model limit.
    finding = context("qwen", 32_768, prompt_tokens=22_000, output_tokens=None, default_output=64_000)
    assert finding.status == WARN
    assert "retries with 64,000" in finding.summary and "8,000" in finding.summary
    assert finding.fix == f"agentcfg profile set gw context_window=32768 && agentcfg switch gw --agent {finding.agent}"


def test_configured_output_larger_than_window_fails() -> None:
    finding = context("claude", 40_000, prompt_tokens=32_000, output_tokens=50_000)
    assert finding.status == FAIL
    assert "50,000 output tokens," in finding.summary and "(its default)" not in finding.summary


def test_prompt_plus_output_over_window_warns() -> None:
    finding = context("opencode", 32_768, prompt_tokens=10_000, output_tokens=32_000)
    assert finding.status == WARN
    assert "opencode compacts every turn" in finding.summary
    finding = context("qwen", 32_768, prompt_tokens=22_000, output_tokens=16_000)
    assert finding.status == WARN and "compacts" not in finding.summary


def test_fitting_request_passes() -> None:
    finding = context("opencode", 131_072, prompt_tokens=10_000, output_tokens=32_000)
    assert finding.status == PASS
    assert finding.summary == "prompt (~10,000) + output (32,000) fit the window (131,072)"  # both numbers
    finding = context("claude", 131_072, prompt_tokens=32_000, output_tokens=None)  # default 32000
    assert finding.status == PASS and "32,000" in finding.summary


def test_codex_checks_only_its_prompt() -> None:
    finding = context("codex", 16_384, prompt_tokens=13_000, output_tokens=None, default_output=32_000)
    assert finding.status == PASS
    assert "13,000-token prompt fits" in finding.summary
    assert context("codex", 12_000, prompt_tokens=13_000, output_tokens=None).status == FAIL


def test_no_window_no_context_finding() -> None:
    seen = healthy("qwen")
    seen["models"] = Result(probe("models"), 200, JSON_TYPE, LITELLM_MODELS.body)
    assert "context-limit-exceeded" not in ids(diagnose(target("qwen", model="qwen-plus"), seen))


def test_context_rejection_from_server_is_not_doubled() -> None:
    seen = healthy("qwen")
    seen["models"] = window_models(2048)
    seen["chat-stream"] = load(VLLM / "h_max_tokens_over_max_model_len.json")
    findings = diagnose(target("qwen"), seen)
    finding = only(findings, "context-limit-exceeded")
    assert finding.status == FAIL
    assert "max_tokens=4096 cannot be greater than max_model_len=2048" in finding.evidence


# proxies

PROXY = "http://127.0.0.1:7890"


BAD_GATEWAY = "<html><body><h1>502 Bad Gateway</h1><p>proxy could not connect</p></body></html>"


def through_proxy(agent: str, base: str, via_ok: bool, direct_ok: bool) -> dict[str, Result]:
    """Every probe sent through PROXY (a live proxy answering its own 502 page when via_ok is False)."""
    seen = {}
    for kind, result in healthy(agent, base).items():
        sent = Probe(kind, result.probe.url, (), result.probe.body, PROXY)
        if via_ok or kind == "models-alt":
            seen[kind] = Result(sent, result.status, result.content_type, result.body)
        else:
            seen[kind] = Result(sent, 502, "text/html", BAD_GATEWAY)
    seen["models-direct"] = (
        ok("models-direct", base) if direct_ok else fail("models-direct", None, base=base, error="refused")
    )
    return seen


def test_dead_proxy_is_proxy_unreachable_not_server_unreachable() -> None:
    seen = {
        k: fail(k, None, base=REMOTE, error="refused", detail="ConnectError: [Errno 111]", proxy=PROXY)
        for k in ("models", "models-alt", "chat-stream", "chat")
    }
    seen["models-direct"] = ok("models-direct", REMOTE)
    findings = diagnose(target("qwen", REMOTE, proxy=PROXY), seen, proxy_open=False)
    assert ids(findings, FAIL) == ["proxy-unreachable"]
    finding = only(findings, "proxy-unreachable")
    assert PROXY in finding.summary and "gw.example.com" in finding.summary
    assert finding.fix == "env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy qwen"
    assert "ignores NO_PROXY" in finding.hint
    assert "direct: works" in finding.evidence


def test_loopback_through_failing_proxy_while_direct_works() -> None:
    seen = through_proxy("qwen", BASE, via_ok=False, direct_ok=True)
    findings = diagnose(target("qwen", proxy=PROXY), seen, proxy_open=True)
    finding = only(findings, "proxy-intercepts-local")
    assert finding.status == FAIL
    assert "(direct works)" in finding.summary
    assert finding.evidence.startswith(f"through {PROXY}: HTTP 502")
    assert finding.evidence.endswith("direct: works")
    assert finding.fix == "env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy qwen"


def test_failing_proxy_is_not_also_blamed_on_the_server() -> None:
    seen = through_proxy("qwen", BASE, via_ok=False, direct_ok=True)
    findings = diagnose(target("qwen", proxy=PROXY), seen, proxy_open=True)
    assert ids(findings, FAIL) == ["proxy-intercepts-local"]


def test_loopback_through_working_proxy_warns() -> None:
    seen = through_proxy("opencode", BASE, via_ok=True, direct_ok=True)
    findings = diagnose(target("opencode", proxy=PROXY), seen, proxy_open=True)
    finding = only(findings, "proxy-intercepts-local")
    assert finding.status == WARN
    assert "where they fail" not in finding.summary
    assert not ids(findings, FAIL)
    assert "server-unreachable" in ids(findings, PASS)


def test_dead_proxy_for_loopback_is_one_finding() -> None:
    seen = {
        k: fail(k, None, error="refused", detail="ConnectError: [Errno 111]", proxy=PROXY)
        for k in ("models", "models-alt", "chat-stream", "chat")
    }
    seen["models-direct"] = ok("models-direct")
    findings = diagnose(target("opencode", proxy=PROXY), seen, proxy_open=False)
    assert ids(findings, FAIL) == ["proxy-unreachable"]  # one cause (the dead proxy), one finding
    finding = only(findings, "proxy-unreachable")
    assert "127.0.0.1" in finding.summary and "(direct works)" in finding.summary
    assert (
        finding.fix == 'export NO_PROXY="${NO_PROXY:+$NO_PROXY,}127.0.0.1" no_proxy="${no_proxy:+$no_proxy,}127.0.0.1"'
    )
    assert "start the proxy" in finding.hint


def test_remote_host_works_directly_but_not_through_proxy() -> None:
    seen = through_proxy("codex", REMOTE, via_ok=False, direct_ok=True)
    findings = diagnose(target("codex", REMOTE, proxy=PROXY), seen, proxy_open=True)
    finding = only(findings, "proxy-unreachable")
    assert "works directly but not through the proxy" in finding.summary
    assert "proxy-intercepts-local" not in ids(findings)


def test_no_proxy_no_proxy_findings() -> None:
    findings = diagnose(target("qwen"), healthy("qwen"), proxy_open=None)
    assert not [f for f in findings if f.id.startswith("proxy-")]


# the model list, static findings


def test_model_missing_from_list_but_requests_work_warns() -> None:
    seen = healthy("opencode")
    findings = diagnose(target("opencode", model="deepseek-v4-flash"), seen)
    finding = only(findings, "model-not-found")
    assert finding.status == WARN
    assert "requests work" in finding.summary
    assert finding.evidence == "/models lists: DeepSeek-V4-Flash"
    assert not ids(findings, FAIL)


@pytest.mark.parametrize(
    "static",
    [
        Finding("config-unreadable", FAIL, "codex", "its config file does not parse"),
        Finding("codex-wire-api", FAIL, "codex", 'wire_api = "chat"'),
        Finding("claude-login-required", FAIL, "codex", "not logged in"),
    ],
    ids=lambda f: f.id,
)
def test_blocking_static_findings_stop_the_rules(static: Finding) -> None:
    seen = {
        k: fail(k, None, error="refused", detail="ConnectError") for k in ("models", "models-alt", "responses-stream")
    }
    t = target("codex", static=[static], proxy=PROXY)
    assert diagnose(t, seen, proxy_open=False) == [static]


def test_non_blocking_static_findings_are_kept_first() -> None:
    warn = Finding("key-missing", WARN, "qwen", "GW_KEY is not set here")
    skip = Finding("not-configured", SKIP, "qwen", "skipped")
    findings = diagnose(target("qwen", static=[warn, skip]), healthy("qwen"))
    assert findings[:2] == [warn, skip]
    assert {f.status for f in findings[2:]} == {PASS}


def test_no_base_url_returns_static_only() -> None:
    skip = Finding("not-configured", SKIP, "qwen", "no custom endpoint configured")
    assert diagnose(target("qwen", None, static=[skip]), {}) == [skip]


def test_static_key_failure_suppresses_passes() -> None:
    static = Finding("key-placeholder-to-remote", FAIL, "qwen", "placeholder to a remote host")
    findings = diagnose(target("qwen", REMOTE, static=[static]), healthy("qwen", REMOTE))
    assert findings[0] == static
    assert "stream-broken" not in ids(findings, PASS)


def test_offline_no_probes_no_probe_findings() -> None:
    assert diagnose(target("qwen"), {}) == []


def test_an_agent_that_refuses_to_start_gets_no_second_finding_about_its_key():
    refused = Finding("qwen-oauth-selected", FAIL, "qwen", "qwen uses Qwen OAuth")
    missing = Finding("key-missing", FAIL, "qwen", "TAOTOKEN_API_KEY is not set")
    t = target("qwen", key=None, key_source="none")
    t.static += [refused, missing]
    assert diagnose(t, {}) == [refused]
    t.static.remove(refused)
    assert diagnose(t, {}) == [missing]  # without the refusal the key is the cause


def test_a_key_that_cannot_be_sent_is_the_only_key_finding() -> None:
    seen = healthy("codex")
    seen["responses-stream"] = fail("responses-stream", 401, {"error": "Unauthorized"})
    malformed = Finding("key-malformed", FAIL, "codex", "the key has a line break in it")
    t = target("codex", static=[malformed])
    assert ids(diagnose(t, seen), FAIL) == ["key-malformed"]


def test_a_removed_profile_explains_its_missing_key() -> None:
    removed = Finding("profile-removed", FAIL, "codex", "profile zzz is gone")
    missing = Finding("key-missing", FAIL, "codex", "ZZZ_KEY is not set")
    assert ids(diagnose(target("codex", static=[removed, missing]), healthy("codex")), FAIL) == ["profile-removed"]


def test_claude_ignoring_its_settings_is_not_also_a_login_problem() -> None:
    invalid = Finding("claude-settings-invalid", FAIL, "claude", "env is not an object: Claude ignores the file")
    login = Finding("claude-login-required", FAIL, "claude", "no token")
    assert diagnose(target("claude", static=[invalid, login]), {}) == [invalid]


def test_a_wrong_exported_key_says_the_variable_and_that_exec_gives_the_keyrings() -> None:
    seen = healthy("codex")
    seen["responses-stream"] = fail("responses-stream", 401, {"error": "Unauthorized"})
    finding = only(diagnose(target("codex", profile="gw"), seen), "key-rejected")
    assert "unset GW_KEY" in finding.hint and "Authorization: Bearer" not in finding.summary
