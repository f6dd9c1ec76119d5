"""Issue 27 item 2: an answer longer than doctor reads. Doctor reads up to its limit (or its deadline) and judges
the complete events only: the cut last event is evidence of nothing, and a stream doctor stopped reading did not
"end without `response.completed`". Built from the real vLLM 0.32 streams in ../shared/fixtures, their text
deltas repeated (each a real event, renumbered where the stream numbers its events) until the stream is longer
than what doctor reads, as a model that answers at length (a reasoning model) sends it."""

from __future__ import annotations

import json
import re

import pytest

from agentcfg.doctor import replies
from agentcfg.doctor.probes import BODY_LIMIT, Probe, Result
from agentcfg.doctor.replies import sse_events
from agentcfg.doctor.rules import classify
from tests.conftest import SHARED_FIXTURES

VLLM = SHARED_FIXTURES / "vllm-0.32-cpu"
SSE_TYPE = "text/event-stream; charset=utf-8"
RESPONSES = Probe("responses-stream", "http://127.0.0.1:8000/v1/responses", (), {"model": "m", "stream": True})
CHAT_STREAM = Probe("chat-stream", "http://127.0.0.1:8000/v1/chat/completions", (), {"model": "m", "stream": True})
MODELS = Probe("models", "http://127.0.0.1:8000/v1/models")
LONG = 1_500_000  # characters: more than doctor reads


def lengthened(text: str, is_delta: str, size: int = LONG) -> str:
    """The captured stream `text` with its first event that contains `is_delta` repeated until the stream is
    longer than `size`; `sequence_number`s renumbered so the stream stays one a server could send."""
    events = text.split("\n\n")
    at = next(i for i, event in enumerate(events) if is_delta in event)
    copies = size // len(events[at]) + 1
    events = events[:at] + [events[at]] * copies + events[at + 1 :]
    numbered, counter = [], iter(range(len(events)))
    for event in events:
        numbered.append(re.sub(r'"sequence_number":\d+', lambda _: f'"sequence_number":{next(counter)}', event))
    return "\n\n".join(numbered)


def long_responses() -> str:
    return lengthened((VLLM / "c_responses_stream.txt").read_text(encoding="utf-8"), "response.output_text.delta")


def cut(text: str, at: int, probe: Probe = RESPONSES) -> Result:
    """What doctor read of `text`: its first `at` characters, marked as cut by doctor."""
    result = Result(probe, 200, SSE_TYPE, text[:at])
    result.truncated = True
    return result


def test_the_long_stream_is_real_and_longer_than_doctor_reads() -> None:
    text = long_responses()
    assert len(text.encode()) > BODY_LIMIT >= 1024 * 1024  # streams past 1 MiB are read to the limit only
    events = sse_events(text)
    assert None not in events and events[-1]["type"] == "response.completed"
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert classify(Result(RESPONSES, 200, SSE_TYPE, text)).ok  # read whole, it is a healthy stream


def test_the_cut_last_event_of_a_long_responses_stream_is_evidence_of_nothing() -> None:
    """Cut where the real vLLM's stream was cut (64 KiB, the old limit), inside a `data:` line, between lines of
    one event, after a `data:` line's end, and at BODY_LIMIT: every complete event is judged, and the stream
    did not end early, doctor stopped reading."""
    text = long_responses()
    inside_data = text.index("data: ", 70_000) + 30
    between_lines = text.index("\ndata: ", 70_000) + 1
    after_data = text.index("\n", inside_data) + 1
    for at in (64 * 1024, inside_data, between_lines, after_data, BODY_LIMIT):
        verdict = classify(cut(text, at))
        assert verdict.ok, (at, verdict)
    # Not cut by doctor, the same text did end early: that is still a broken stream.
    early = Result(RESPONSES, 200, SSE_TYPE, text[:after_data])
    assert classify(early).id == "stream-broken"


def test_the_complete_events_of_a_cut_stream_are_still_judged() -> None:
    text = long_responses()
    verdict = classify(cut(text, BODY_LIMIT))
    assert verdict.ok, verdict
    # a complete event that is not JSON, before the cut
    at = text.index("event: response.output_text.delta", 10_000)
    broken = text[:at] + "data: {not json\n\n" + text[at:]
    assert classify(cut(broken, BODY_LIMIT)).message == "a `data:` line that is not JSON"
    # text deltas before any `response.output_item.added` (Codex: "OutputTextDelta without active item")
    no_item = re.sub(r"event: response\.output_item\.added\ndata: [^\n]*\n\n", "", text, count=1)
    assert "OutputTextDelta" in classify(cut(no_item, BODY_LIMIT)).message
    # an error event inside what was read
    error = text[:at] + 'data: {"error": {"message": "engine died"}}\n\n' + text[at:]
    assert "engine died" in classify(cut(error, BODY_LIMIT)).message


def test_a_long_chat_stream_cut_by_doctor_needs_no_done_or_finish_reason() -> None:
    text = lengthened((VLLM / "b_chat_stream_include_usage.txt").read_text(encoding="utf-8"), '"delta":{"content":"')
    assert classify(Result(CHAT_STREAM, 200, SSE_TYPE, text)).ok
    verdict = classify(cut(text, 64 * 1024 + 17, CHAT_STREAM))
    assert verdict.ok, verdict


def test_a_model_list_longer_than_doctor_reads_is_not_called_not_json() -> None:
    """A big gateway's /models (hundreds of models, each with a long description) cut at the limit."""
    listed = json.loads((VLLM / "a_get_v1_models.json").read_text(encoding="utf-8"))["body"]
    entry = listed["data"][0]
    listed["data"] = [{**entry, "id": f"model-{n}"} for n in range(LONG // len(json.dumps(entry)) + 1)]
    text = json.dumps(listed)
    result = Result(MODELS, 200, "application/json", text[:BODY_LIMIT])
    result.truncated = True
    assert classify(result).ok, classify(result)
    result.body = "<!doctype html>" + result.body  # an HTML page stays one, however long
    assert classify(result).id == "response-not-openai"


def test_sse_events_of_a_cut_text_are_only_the_events_a_blank_line_ended() -> None:
    text = 'data: {"a": 1}\n\ndata: {"b": 2}\ndata: 3}\n\ndata: {"c"'
    assert sse_events(text) == [{"a": 1}, None, None]  # read whole, the last event ends at the end of the text
    assert sse_events(text, whole=False) == [{"a": 1}, None]
    assert sse_events('data: {"a": 1}\n\ndata: {"b": 2}\n', whole=False) == [{"a": 1}]  # its blank line is to come
    assert sse_events('data: {"a": 1}\r\n\r', whole=False) == [{"a": 1}]  # a CR alone ends a line


def cut_at_deadline(last_byte: float, body: str, *, deadline: float = 6.0, status: int = 200) -> Result:
    """What send.py keeps of a stream the deadline cancelled: what came, the time of its last byte."""
    result = Result(RESPONSES, status, SSE_TYPE, body, elapsed=deadline, truncated=True)
    result.extra.update(first_byte=0.01, last_byte=last_byte)
    return result


@pytest.mark.parametrize(
    ("last_byte", "body", "status", "sending"),
    [
        (5.9, None, 200, True),  # events still coming when the deadline came
        (4.6, None, 200, True),  # within the last quarter of the wait
        (3.0, None, 200, False),  # quiet for half the wait: a stall, server-slow
        (5.9, ": ping\n\n: ping\n\n", 200, False),  # only comments: no answer has begun
        (5.9, "data: {not json", 200, False),  # nothing complete yet
        (5.9, None, 500, False),
    ],
    ids=["flowing", "recent", "went-quiet", "comments-only", "nothing-complete", "error-status"],
)
def test_still_sending_at_the_deadline(last_byte: float, body: str | None, status: int, sending: bool) -> None:
    text = long_responses()[:200_000] if body is None else body
    assert replies.still_sending(cut_at_deadline(last_byte, text, status=status)) is sending
