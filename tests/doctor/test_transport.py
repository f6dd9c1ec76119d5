"""Probes take an injectable transport (httpx.MockTransport), as httpx's own tests do: a rule test sends the
agent's real request shape through the real sender and judges what a handler answers, with no server and no
socket."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest

from agentcfg.doctor import probes
from agentcfg.doctor.rules import diagnose
from tests.doctor.test_rules import ids, target

BASE = "http://gateway.invalid/v1"  # a name that never resolves: an answer can only come from the handler
MODEL = "DeepSeek-V4-Flash"


@pytest.fixture(autouse=True)
def no_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a probe with a transport opened a connection")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


def responses_stream(text: str) -> str:
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "r"}},
        {"type": "response.output_item.added", "item": {"type": "message"}},
        {"type": "response.output_text.delta", "delta": text},
        {"type": "response.completed", "response": {"id": "r"}},
    ]
    return "".join(f"data: {json.dumps(event)}\n\n" for event in events)


def gateway(key: str) -> httpx.MockTransport:
    """A server that lists one model with a 65,536 window and streams the Responses API to one key."""
    requests: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if request.headers.get("authorization") != f"Bearer {key}":
            return httpx.Response(401, json={"error": {"message": "Invalid API key", "type": "auth_error"}})
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"object": "list", "data": [{"id": MODEL, "max_model_len": 65536}]})
        assert request.url.path == "/v1/responses" and json.loads(request.content)["stream"] is True
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=responses_stream("ready"))

    transport = httpx.MockTransport(handle)
    transport.requests = requests  # type: ignore[attr-defined]
    return transport


def send(key: str, transport: httpx.MockTransport) -> dict[str, probes.Result]:
    headers = {"Authorization": f"Bearer {key}"}
    plan = [probes.models(BASE, headers), probes.responses(BASE, MODEL, headers)]
    return {r.probe.kind: r for r in probes.run(plan, 5.0, transport=transport)}


def test_a_probe_and_diagnose_through_a_handler_with_no_server() -> None:
    transport = gateway("sk-real-key")
    seen = send("sk-real-key", transport)
    assert [r.url.path for r in transport.requests] == ["/v1/models", "/v1/responses"]  # type: ignore[attr-defined]
    assert seen["responses-stream"].status == 200 and seen["responses-stream"].error is None
    findings = diagnose(target("codex", BASE), seen)
    assert ids(findings, "fail") == [] and ids(findings, "warn") == []
    assert {"server-unreachable", "key-rejected", "stream-broken", "context-limit-exceeded"} <= set(
        ids(findings, "pass")
    )


def test_a_key_the_handler_refuses_is_key_rejected() -> None:
    seen = send("sk-wrong", gateway("sk-real-key"))
    findings = diagnose(target("codex", BASE, key="sk-wrong"), seen)
    assert ids(findings, "fail") == ["key-rejected"]
    rejected = next(f for f in findings if f.id == "key-rejected")
    assert rejected.evidence == "HTTP 401: Invalid API key", rejected
