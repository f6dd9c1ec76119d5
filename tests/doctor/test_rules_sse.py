"""SSE as the agents read it: lines end only at CR, LF or CRLF (not at U+2028, U+0085, \\x0b, ...),
`data:` takes one optional space, several `data:` lines make one event joined by "\\n", `:` lines are
comments, and an event ends at a blank line. A model's output may contain any character, and vLLM
writes JSON with U+2028 and friends raw inside strings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcfg.bench.sse import Event, Parser
from agentcfg.doctor.probes import Probe, Result
from agentcfg.doctor.replies import sse_events
from agentcfg.doctor.rules import classify
from tests.conftest import SHARED_FIXTURES

VLLM_STREAM = SHARED_FIXTURES / "vllm-0.32-cpu" / "b_chat_stream_include_usage.txt"
STREAM_PROBE = Probe("chat-stream", "http://127.0.0.1:8000/v1/chat/completions", (), {"model": "m", "stream": True})
# Characters str.splitlines() splits at that SSE does not. JSON may carry these three raw inside a string
# (vLLM does: its JSON is not ASCII-escaped); the C0 ones below it must escape, but other payloads carry them.
RAW_IN_JSON = ["\u2028", "\u2029", "\u0085"]
NOT_LINE_ENDS = [*RAW_IN_JSON, "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]


def vllm_stream_with(character: str) -> str:
    """The captured vLLM 0.32 stream with `character` put raw into the first non-empty delta's content."""
    text = VLLM_STREAM.read_text(encoding="utf-8")
    marker = '"content":"'
    at = text.index(marker, text.index('"delta":{"content":"')) + len(marker)
    changed = text[:at] + "one" + character + "two" + text[at:]
    return changed


@pytest.mark.parametrize("character", RAW_IN_JSON, ids=[f"U+{ord(c):04X}" for c in RAW_IN_JSON])
def test_a_healthy_vllm_stream_with_a_raw_separator_in_its_content_is_fine(character: str) -> None:
    text = vllm_stream_with(character)
    assert character in text and len(text.splitlines()) > len(VLLM_STREAM.read_text().splitlines())
    events = sse_events(text)
    assert None not in events and events[-1] == "[DONE]"
    contents = [c["delta"].get("content", "") for e in events[:-1] for c in e["choices"]]
    assert any(("one" + character + "two") in content for content in contents)
    verdict = classify(Result(STREAM_PROBE, 200, "text/event-stream; charset=utf-8", text))
    assert verdict.ok, verdict


@pytest.mark.parametrize("character", RAW_IN_JSON, ids=[f"U+{ord(c):04X}" for c in RAW_IN_JSON])
def test_bench_reads_the_same_stream_whole(character: str) -> None:
    data = vllm_stream_with(character).encode()
    parser = Parser()
    events = parser.feed(data) + parser.close()
    assert events[-1] == Event("[DONE]")
    assert all(json.loads(e.data) for e in events[:-1])
    assert any(("one" + character + "two") in e.data for e in events)


def test_sse_framing_by_the_spec() -> None:
    text = (
        ": a comment\r\n"
        "event: delta\r\n"
        'data: {"a":\r\n'
        "data:  1}\r\n"  # one space taken; the second is the value's
        "\r\n"
        "data:[DONE]\r"
        "\r"
        "data: \n"  # an empty data line, then the end without a blank line
    )
    assert sse_events(text) == [{"a": 1}, "[DONE]"]


def test_data_lines_without_a_blank_line_between_are_one_event() -> None:
    # As every agent's SSE reader does (eventsource-stream, the OpenAI and Anthropic SDKs): joined by "\n".
    assert sse_events('data: {"a": 1}\ndata: {"b": 2}\n\n') == [None]
    assert sse_events('data: {"a": 1}\n\ndata: {"b": 2}') == [{"a": 1}, {"b": 2}]


def test_a_field_without_a_colon_and_other_fields_are_ignored() -> None:
    assert sse_events('data\nid: 7\nretry: 10\ndata: {"a": 1}\n\n') == [{"a": 1}]


@pytest.mark.parametrize("character", NOT_LINE_ENDS, ids=[f"U+{ord(c):04X}" for c in NOT_LINE_ENDS])
def test_no_other_character_ends_a_line(character: str) -> None:
    text = f"data: [DONE]{character}more\n\n"
    assert sse_events(text) == [None]  # one event, and not the end of the stream
    parser = Parser()
    assert parser.feed(text.encode()) + parser.close() == [Event(f"[DONE]{character}more")]


# -- real vLLM 0.32 streams whose model wrote U+2028, U+2029 and U+0085 (tests/fixtures/vllm-0.32-cpu-u2028,
# captured by the "real" helper: vLLM writes them raw inside the JSON strings) --------------------------------

REAL = Path(__file__).parent.parent / "fixtures" / "vllm-0.32-cpu-u2028"
REAL_CASES = sorted(p.stem for p in REAL.glob("*_u*.json"))


@pytest.mark.parametrize("case", REAL_CASES)
def test_real_vllm_streams_with_separators_are_healthy(case: str) -> None:
    from tests.doctor.test_rules import load

    result = load(REAL / f"{case}.json")
    assert result is not None and result.probe.stream
    raw = (REAL / f"{case}.txt").read_text(encoding="utf-8")
    assert result.body == raw and any(c in raw for c in RAW_IN_JSON)
    assert len(raw.splitlines()) > len(sse_lines(raw))  # str.splitlines() would cut events in two
    assert None not in sse_events(raw)
    assert classify(result).ok, classify(result)
    parser = Parser()
    assert all(e.data == "[DONE]" or json.loads(e.data) for e in parser.feed(raw.encode()) + parser.close())


def sse_lines(text: str) -> list[str]:  # the SSE rule, spelled out for the test
    import re

    return re.split(r"\r\n|\r|\n", text)


def test_the_real_captures_are_there() -> None:
    assert len(REAL_CASES) == 6
