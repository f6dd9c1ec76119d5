"""The requests the agents really make, sent concurrently under one deadline (the network edge of doctor).

A probe never follows the environment's proxy settings by itself: doctor decides, per probe, whether
it goes direct or through a named proxy, so "direct works, through the proxy it fails" can be shown.

This module is plain data and small functions, imported when doctor plans requests (`doctor --offline`
plans none, and imports neither it nor wire.py), and it imports nothing of the network stack: other tools
(serve, bench) use its helpers. What a Probe and a Result are is in wire.py (re-exported here); sending is
in send.py (httpx, asyncio), imported by run() when there is something to send.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentcfg.doctor.wire import BODY_LIMIT, REDIRECTS, Probe, Result, error_kind, import_httpx, verify

if TYPE_CHECKING:
    import httpx

__all__ = [
    "BODY_LIMIT",
    "PROMPT",
    "REDIRECTS",
    "TOOL",
    "Probe",
    "Result",
    "chat",
    "error_kind",
    "generate",
    "import_httpx",
    "messages",
    "models",
    "responses",
    "run",
    "tcp_open",
    "verify",
]

TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file from the workspace.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
}
PROMPT = "Reply with the single word: ready"


# -- the request shapes --------------------------------------------------------------------------------


def models(base_url: str, headers: dict[str, str], proxy: str | None = None) -> Probe:
    return Probe("models", base_url.rstrip("/") + "/models", tuple(headers.items()), None, proxy)


def chat(base_url: str, model: str, headers: dict[str, str], *, stream: bool) -> Probe:
    """As qwen-code and opencode send it: a tool, automatic tool choice, streaming with usage."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": PROMPT}],
        "tools": [TOOL],
        "tool_choice": "auto",
        "max_tokens": 256,  # not 1: reasoning models spend tokens before the answer
        "stream": stream,
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    return Probe(
        "chat-stream" if stream else "chat", base_url.rstrip("/") + "/chat/completions", tuple(headers.items()), body
    )


def responses(base_url: str, model: str, headers: dict[str, str]) -> Probe:
    """As Codex sends it: the Responses API, streaming, with a function tool."""
    tool = {
        "type": "function",
        "name": "read_file",
        "description": TOOL["function"]["description"],
        "parameters": TOOL["function"]["parameters"],
    }
    body = {
        "model": model,
        "instructions": "You are a coding agent.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": PROMPT}]}],
        "tools": [tool],
        "tool_choice": "auto",
        "stream": True,
        "store": False,
    }
    return Probe("responses-stream", base_url.rstrip("/") + "/responses", tuple(headers.items()), body)


def messages(anthropic_base_url: str, model: str, headers: dict[str, str]) -> Probe:
    """As Claude Code sends it: `/v1/messages?beta=true`, streaming, with a tool."""
    tool = {
        "name": "Read",
        "description": TOOL["function"]["description"],
        "input_schema": TOOL["function"]["parameters"],
    }
    body = {
        "model": model,
        "max_tokens": 256,
        "system": "You are a coding agent.",
        "messages": [{"role": "user", "content": PROMPT}],
        "tools": [tool],
        "stream": True,
    }
    url = anthropic_base_url.rstrip("/") + "/v1/messages?beta=true"
    return Probe("messages-stream", url, (("anthropic-version", "2023-06-01"), *headers.items()), body)


def generate(root: str, model: str, headers: dict[str, str]) -> Probe:
    """As Gemini CLI sends it (0.61): the Gemini API's `models/MODEL:streamGenerateContent?alt=sse` under the host
    root, a system instruction, function declarations and its generation config."""
    declaration = {"name": TOOL["function"]["name"], "description": TOOL["function"]["description"],
                   "parametersJsonSchema": TOOL["function"]["parameters"]}  # fmt: skip
    body = {
        "contents": [{"role": "user", "parts": [{"text": PROMPT}]}],
        "systemInstruction": {"role": "user", "parts": [{"text": "You are a coding agent."}]},
        "tools": [{"functionDeclarations": [declaration]}],
        "generationConfig": {
            "temperature": 1,
            "topP": 0.95,
            "topK": 64,
            "maxOutputTokens": 256,
            "thinkingConfig": {"includeThoughts": True},
        },
    }
    url = f"{root.rstrip('/')}/v1beta/models/{model}:streamGenerateContent?alt=sse"
    return Probe("gemini-stream", url, tuple(headers.items()), body)


# -- running them --------------------------------------------------------------------------------------


def run(
    probes: list[Probe],
    deadline: float,
    progress: Callable[[int, int], None] | None = None,
    follow: Callable[[Result], list[Probe]] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[Result]:
    """Send every probe at once; whatever has not finished at `deadline` seconds is a timeout. `follow`: the
    requests an answer calls for next (send.run), sent under the same deadline. `transport`: what sends them
    instead of the network (an `httpx.MockTransport` in a test: no socket)."""
    from agentcfg.doctor import send  # lazy: httpx and asyncio load only when there is something to send

    return send.run(probes, deadline, progress, follow, transport)


def tcp_open(host: str, port: int, timeout: float) -> bool:
    """Whether something accepts connections on host:port (a proxy's port, say)."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
