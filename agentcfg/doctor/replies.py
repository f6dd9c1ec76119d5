"""Reading what a server sent back: JSON, error bodies of every shape in the field, SSE events, model lists."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentcfg.doctor.wire import Result


def parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError, RecursionError):  # a server's `[[[[...` is past json's recursion limit
        return None


def error_message(body: Any) -> str | None:
    """The message of an error body of any shape agents meet (vLLM new and old, LiteLLM, Anthropic, proxies)."""
    if isinstance(body, str):
        parsed = parse_json(body)
        if parsed is None:
            events = sse_events(body)
            parsed = next((e for e in events if isinstance(e, dict) and "error" in e), None)
        body = parsed
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error.get("type") or error)
    if isinstance(error, str):
        return error
    if body.get("object") == "error" or body.get("type") == "error":
        return str(body.get("message") or body.get("error") or "error")
    if "detail" in body:
        detail = body["detail"]
        return detail if isinstance(detail, str) else json.dumps(detail)[:300]
    return None


# SSE lines end at CRLF, LF or CR and nowhere else: not str.splitlines(), which also splits at U+2028,
# U+2029, U+0085, \x0b, \x0c and \x1c-\x1e, characters vLLM writes raw inside JSON strings.
_LINE_END = re.compile(r"\r\n|\r|\n")


def sse_events(text: str, *, whole: bool = True) -> list[Any]:
    """The JSON payload of each event (`[DONE]` as the string itself; a payload that is not JSON as None).

    As the agents' SSE readers take it (WHATWG): `data:` with one optional space, several `data:` lines
    of one event joined by "\n", `:` comments and other fields ignored, an event ending at a blank line
    (the last one also at the end of the text), an event without data not dispatched. Of a text that is not
    `whole` (doctor stopped reading), only the events a blank line ended: the rest may have more to come.
    """
    events: list[Any] = []
    data: list[str] = []
    lines = _LINE_END.split(text)
    # Whole, the end of the text ends the last event; cut, the last line may itself be cut: left out.
    for line in [*lines, ""] if whole else lines[:-1]:
        if not line:
            payload = "\n".join(data)
            if payload:
                events.append("[DONE]" if payload.strip() == "[DONE]" else parse_json(payload))
            data = []
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    return events


def is_event_stream(result: Result) -> bool:
    return "text/event-stream" in result.content_type.lower()


def still_sending(result: Result) -> bool:
    """Whether the deadline cut a stream while its events were still coming, so that doctor stopped reading and
    not the server sending: a 2xx event stream with a complete event, and a byte in the last quarter of the wait
    (at least the last second). A stream that went quiet, or sent only comments, did not answer in time."""
    last_byte = result.extra.get("last_byte")
    return (
        result.truncated
        and result.probe.stream
        and result.status is not None
        and 200 <= result.status < 300
        and is_event_stream(result)
        and isinstance(last_byte, float)
        and result.elapsed - last_byte <= max(1.0, result.elapsed / 4)
        and any(isinstance(event, dict) for event in sse_events(result.body, whole=False))
    )


def looks_html(result: Result) -> bool:
    return "html" in result.content_type.lower() or result.body.lstrip()[:15].lower().startswith(("<!doctype", "<html"))


def model_ids(result: Result | None) -> list[str]:
    data = parse_json(result.body) if result and result.status == 200 else None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return []
    return [str(m.get("id")) for m in data["data"] if isinstance(m, dict) and m.get("id")]


def max_model_len(result: Result | None, model: str | None) -> int | None:
    """vLLM's `max_model_len` for the model (LiteLLM's `max_input_tokens` as a fallback)."""
    data = parse_json(result.body) if result and result.status == 200 else None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    entries = [m for m in data["data"] if isinstance(m, dict)]
    chosen = next((m for m in entries if m.get("id") == model), entries[0] if len(entries) == 1 else None)
    if chosen is None:
        return None
    value = chosen.get("max_model_len") or chosen.get("max_input_tokens")
    return value if isinstance(value, int) and value > 0 else None


def alternative_base(base_url: str) -> str:
    """The same base URL with `/v1` added or taken away: the commonest wrong-path mistake."""
    base = base_url.rstrip("/")
    return base[:-3] if base.endswith("/v1") else base + "/v1"
