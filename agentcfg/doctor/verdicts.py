"""What one probe's answer means (a Verdict), from its transport error, status, content type and body. Pure:
each rule below is a small function of the Result, tried in order; the first that speaks decides."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentcfg.doctor import catalogue
from agentcfg.doctor.replies import error_message, is_event_stream, looks_html, parse_json, sse_events
from agentcfg.lazyclass import dataclass
from agentcfg.patterns import lazy  # compiled when first used: --offline judges no answer

if TYPE_CHECKING:
    from agentcfg.doctor.wire import Result


@dataclass(frozen=True)
class Verdict:
    """One probe's outcome: ok, or the finding id that names what went wrong."""

    ok: bool
    id: str | None = None
    message: str = ""
    upstream: bool = False  # a gateway passed on what its upstream said (LiteLLM's "model group ... failed")

    def __post_init__(self) -> None:
        if self.id is not None:
            catalogue.entry(self.id)  # an id that is not catalogued is refused here, where it is made


def snippet(result: Result, limit: int = 160) -> str:
    text = " ".join(result.body.split())
    return text[:limit] + ("…" if len(text) > limit else "")


_TRANSPORT = {
    "tls": "tls-untrusted",
    "proxy": "proxy-unreachable",
    "protocol": "key-malformed",
    "redirects": "base-url-redirect",
}


def classify(result: Result) -> Verdict:
    """What a probe's answer means, from its transport error, status, content type and body."""
    if result.error == "timeout" and result.status is not None:
        return Verdict(False, "server-slow", f"HTTP {result.status}, then no complete answer: {result.detail}")
    if result.error == "timeout" and result.extra.get("connected") and not result.probe.proxy:
        return Verdict(False, "server-not-answering", f"connected, then no answer: {result.detail}")
    if result.error:
        return Verdict(False, _TRANSPORT.get(result.error, "server-unreachable"), f"{result.error}: {result.detail}")
    status, text = result.status or 0, result.body
    if 300 <= status < 400:  # a redirect the probe could not follow (no Location), as the agents cannot
        location = result.extra.get("location")
        where = f"redirected to {location}" if location else "a redirect without a Location header"
        return Verdict(False, "base-url-redirect", f"HTTP {status}, {where}")
    if status < 400:
        if looks_html(result):
            return Verdict(False, "response-not-openai", f"HTTP {status} with an HTML page: {snippet(result, 80)}")
        return _check_shape(result)
    message = error_message(text) or ""
    where = f"HTTP {status}" + (f": {message}" if message else f": {snippet(result)}" if text.strip() else "")
    return _from_error(status, message, where)


# LiteLLM names the exception its upstream raised: `litellm.NotFoundError: NotFoundError: OpenAIException -
# The model `gpt-retired` does not exist` (litellm/litellm_core_utils/exception_mapping_utils.py maps an
# upstream 404 to NotFoundError), then "LiteLLM: model group 'NAME' failed with the error above".
_UPSTREAM_NOT_FOUND = lazy(r"litellm\.notfounderror|\bmodel_not_found\b|not_found_error", re.IGNORECASE)
_GONE_MODEL = lazy(r"[Tt]he model [`'\"]([^`'\"]+)[`'\"] does not exist")
_OUTPUT_OVER_WINDOW = lazy(r"max_(completion_)?tokens=\d+ cannot be greater than max_model_len")


def upstream_model(message: str) -> str | None:
    """The model a gateway's upstream said does not exist (`gpt-retired`), if its message names one."""
    match = _GONE_MODEL.search(message)
    return match.group(1) if match else None


@dataclass(frozen=True)
class _Error:
    """What an error's status and message say, as each rule reads them."""

    status: int
    message: str
    lowered: str

    @property
    def gateway(self) -> bool:  # LiteLLM passes on what the provider behind it said
        return "litellm." in self.lowered

    @property
    def auth(self) -> bool:
        lowered = self.lowered
        return self.status in (401, 403) or "no connected db" in lowered or "malformed api key" in lowered


def _has(*words: str) -> Callable[[_Error], bool]:
    return lambda e: any(word in e.lowered for word in words)


def _upstream_gone(e: _Error) -> bool:
    return e.gateway and bool(_UPSTREAM_NOT_FOUND.search(e.message)) and "model" in e.lowered


def _no_model(e: _Error) -> bool:
    return "model" in e.lowered and _has("does not exist", "invalid model", "model not found")(e)


# (the error it is, its finding id, whether a gateway's upstream said it), in the order they are tried.
_ERROR_RULES: tuple[tuple[Callable[[_Error], bool], str, bool], ...] = (
    (_upstream_gone, "model-not-found", True),
    (lambda e: e.status == 429, "rate-limited", False),
    (lambda e: "model group" in e.lowered and e.gateway, "server-error", False),  # the gateway's upstream failed
    (lambda e: e.auth and "oauth token has expired" in e.lowered, "claude-oauth-expired", False),
    (lambda e: e.auth, "key-rejected", False),
    (_has("tool choice requires", "tool-call-parser", "enable-auto-tool-choice"), "tool-parser-missing", False),
    (lambda e: bool(_OUTPUT_OVER_WINDOW.search(e.message)), "context-limit-exceeded", False),
    (_has("maximum context length", "prompt is too long", "longer than the maximum"), "context-limit-exceeded", False),
    (_no_model, "model-not-found", False),
    (lambda e: e.status == 404, "base-url-path", False),
    (lambda e: e.status >= 500, "server-error", False),
)


def _from_error(status: int, message: str, where: str) -> Verdict:
    """What an error's status and message mean (an HTTP error, or an error event inside a stream)."""
    error = _Error(status, message, message.lower())
    for applies, vid, upstream in _ERROR_RULES:
        if applies(error):
            return Verdict(False, vid, where, upstream=upstream)
    return Verdict(False, "request-rejected", where)


# -- a 2xx answer: is it what this probe's client can parse? -------------------------------------------------


def _cut_json(result: Result) -> Verdict | None:
    """JSON longer than doctor reads (a big gateway's model list): cut, it parses as nothing."""
    if result.truncated and not result.probe.stream and result.body.lstrip().startswith("{"):
        return Verdict(True)
    return None


def _model_list(result: Result) -> Verdict | None:
    if not result.probe.kind.startswith("models"):
        return None
    data = parse_json(result.body)
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        return Verdict(True)
    return Verdict(False, "response-not-openai", f"no model list (`data`) in: {snippet(result, 100)}")


def _whole_json(result: Result) -> Verdict | None:
    if result.probe.stream:
        return None
    data = parse_json(result.body)
    if not isinstance(data, dict):
        return Verdict(False, "response-not-openai", f"not JSON: {snippet(result, 100)}")
    if error_message(data):
        return Verdict(False, "response-not-openai", f"an error object with status 200: {error_message(data)}")
    wanted = {"chat": "choices", "responses": "output"}.get(result.probe.kind, "content")
    if wanted not in data:
        return Verdict(False, "response-not-openai", f"JSON without `{wanted}`: {snippet(result, 100)}")
    return Verdict(True)


def _not_a_stream(result: Result) -> Verdict | None:
    if is_event_stream(result):
        return None
    data = parse_json(result.body)
    if result.probe.kind == "messages-stream" and isinstance(data, dict) and isinstance(data.get("content"), list):
        # Claude Code 2.1 reads a whole message where it asked for a stream (seen against LiteLLM's
        # mock models, which answer /v1/messages so).
        return Verdict(True)
    what = "JSON" if data is not None else "a body"
    return Verdict(
        False,
        "stream-broken",
        f"asked for a stream, got {what} ({result.content_type or 'no type'}): {snippet(result, 100)}",
    )


def _stream(result: Result) -> Verdict | None:
    """An event stream, of what was read: a cut tail is evidence of nothing, and whether a stream doctor stopped
    reading (truncated) ended well is not known."""
    text, ended = result.body, not result.truncated
    events = sse_events(text, whole=ended)
    payloads = [e for e in events if isinstance(e, dict)]
    if not events or not payloads:
        if not ended:
            return Verdict(
                False, "stream-broken", f"no complete `data:` event with JSON in its first {len(text):,} characters"
            )
        return Verdict(False, "stream-broken", f"no `data:` events with JSON: {snippet(result, 100)}")
    if any(e is None for e in events):
        return Verdict(False, "stream-broken", "a `data:` line that is not JSON")
    if message := next((error_message(e) for e in payloads if error_message(e)), None):
        where = f"HTTP {result.status}, then an error inside the stream: {message}"
        named = _from_error(result.status or 200, message, where)
        if named.id == "model-not-found" and named.upstream:  # a gateway's upstream, mid-stream: same cause
            return named
        return Verdict(False, "stream-broken", f"an error inside the stream: {message}")
    parser = _PARSERS.get(result.probe.kind)
    return parser(events, payloads, ended) if parser else None


# What each agent's parser insists on, seen by running them (codex 0.171, qwen-code 0.15, Claude Code 2.1).


def _chat_stream(events: list[Any], payloads: list[dict[str, Any]], ended: bool) -> Verdict | None:
    if not any("choices" in e for e in payloads):
        return Verdict(False, "response-not-openai", "stream events without `choices`")
    if ended and events[-1] != "[DONE]":
        return Verdict(False, "stream-broken", "the stream ended without `data: [DONE]`")
    choices = [c for e in payloads for c in e.get("choices") or [] if isinstance(c, dict)]
    if ended and not any(c.get("finish_reason") for c in choices):
        return Verdict(
            False,
            "stream-broken",
            'no chunk has a `finish_reason` (qwen-code: "Model stream ended without a finish reason")',
        )
    return None


def _responses_stream(events: list[Any], payloads: list[dict[str, Any]], ended: bool) -> Verdict | None:
    types = [e.get("type") for e in payloads]
    if ended and "response.completed" not in types and "response.incomplete" not in types:
        return Verdict(False, "stream-broken", "the Responses stream ended without `response.completed`")
    if "response.output_text.delta" in types and "response.output_item.added" not in types:
        return Verdict(
            False,
            "stream-broken",
            'text deltas without `response.output_item.added` (Codex: "OutputTextDelta without active item")',
        )
    return None


def _messages_stream(events: list[Any], payloads: list[dict[str, Any]], ended: bool) -> Verdict | None:
    types = [e.get("type") for e in payloads]
    if ended and "message_stop" not in types:
        return Verdict(False, "stream-broken", "the Messages stream ended without `message_stop`")
    start = next((e.get("message") for e in payloads if e.get("type") == "message_start"), None)
    if (
        not isinstance(start, dict)
        or "usage" not in start
        or ("content_block_delta" in types and "content_block_start" not in types)
    ):
        return Verdict(
            False,
            "stream-broken",
            "`message_start` without a full message, or deltas without "
            '`content_block_start` (Claude Code: "empty or malformed response")',
        )
    return None


def _gemini_stream(events: list[Any], payloads: list[dict[str, Any]], ended: bool) -> Verdict | None:
    """Gemini CLI reads `candidates[].content.parts`, and a stream whose last chunk has no `finishReason` is one it
    rejects ("Model stream ended without a finish reason.", geminiChat.js)."""
    candidates = [c for e in payloads for c in e.get("candidates") or [] if isinstance(c, dict)]
    if not candidates:
        return Verdict(False, "response-not-openai", "stream events without `candidates` (not the Gemini API)")
    if ended and not any(c.get("finishReason") for c in candidates):
        said = '"Model stream ended without a finish reason."'
        return Verdict(False, "stream-broken", f"no chunk has a `finishReason` (Gemini CLI: {said})")
    return None


_PARSERS = {
    "chat-stream": _chat_stream,
    "responses-stream": _responses_stream,
    "messages-stream": _messages_stream,
    "gemini-stream": _gemini_stream,
}
_SHAPE_RULES: tuple[Callable[[Result], Verdict | None], ...] = (
    _cut_json,
    _model_list,
    _whole_json,
    _not_a_stream,
    _stream,
)


def _check_shape(result: Result) -> Verdict:
    """A 2xx answer: the first shape rule that finds something decides; none does: the client can parse it."""
    for rule in _SHAPE_RULES:
        if (verdict := rule(result)) is not None:
            return verdict
    return Verdict(True)
