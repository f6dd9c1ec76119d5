"""Refused (nothing listens: server-unreachable) against accepted but silent (server-not-answering)."""

from __future__ import annotations

from agentcfg.doctor.model import FAIL, WARN
from agentcfg.doctor.probes import Result
from agentcfg.doctor.rules import classify, diagnose
from tests.doctor.test_rules import CHAT_STREAM, PROXY, fail, healthy, ids, only, target

KINDS = ("models", "models-alt", "chat-stream", "chat")


def silent(kind: str, **kw: object) -> Result:
    result = fail(kind, None, error="timeout", detail="ReadTimeout: timed out", **kw)
    result.extra["connected"] = True
    return result


def test_a_timeout_after_the_connection_is_not_answering() -> None:
    result = Result(CHAT_STREAM, error="timeout", detail="no complete answer within the 6 s deadline")
    assert classify(result).id == "server-unreachable"  # never connected (a dropped SYN, say)
    result.extra["connected"] = True
    verdict = classify(result)
    assert verdict.id == "server-not-answering" and "connected" in verdict.message


def test_a_silent_server_is_one_finding_per_agent_and_not_unreachable() -> None:
    findings = diagnose(target("qwen"), {k: silent(k) for k in KINDS})
    assert ids(findings) == ["server-not-answering"]
    finding = only(findings, "server-not-answering")
    assert finding.status == FAIL
    assert "accepts connections" in finding.summary and "up but not answering" in finding.summary
    assert "curl http://127.0.0.1:8000/health" in finding.hint and "loading" in finding.hint
    assert finding.fix == ""


def test_a_silent_agent_endpoint_while_the_model_list_answers_is_a_warning() -> None:
    seen = healthy("codex")
    seen["responses-stream"] = silent("responses-stream")
    finding = only(diagnose(target("codex"), seen), "server-not-answering")
    assert finding.status == WARN and "its model list answers" in finding.summary


def test_refused_stays_unreachable() -> None:
    seen = {k: fail(k, None, error="refused", detail="ConnectError: [Errno 111]") for k in KINDS}
    finding = only(diagnose(target("qwen"), seen), "server-unreachable")
    assert "nothing listens" in finding.summary and "start the server" in finding.hint


def test_a_silent_proxy_is_not_the_server() -> None:
    result = silent("chat-stream", proxy=PROXY)
    assert classify(result).id == "server-unreachable"


def test_a_stream_that_stalls_and_a_request_never_answered_are_one_slow_server() -> None:
    seen = healthy("qwen")
    seen["chat-stream"] = fail("chat-stream", 200, "", error="timeout", detail="no complete answer")
    seen["chat"] = silent("chat")
    findings = diagnose(target("qwen"), seen)
    assert ids(findings, WARN) == ["server-slow"] and not ids(findings, FAIL)
