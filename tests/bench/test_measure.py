"""agentcfg.bench.measure: what a request sends, and its timings from chunk arrival times."""

from __future__ import annotations

import json

import pytest

from agentcfg.bench.measure import (
    NON_STREAM,
    PROMPT_OVERHEAD,
    STREAM,
    WORDS,
    Record,
    StreamMeter,
    http_error,
    prompt,
    read_answer,
    request_body,
)
from tests.conftest import SHARED_FIXTURES


def chunk(delta: dict | None = None, finish: str | None = None, **extra) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return b"data: " + json.dumps({"choices": choices, **extra}).encode() + b"\n\n"


def meter_of(timed: list[tuple[float, bytes]]) -> Record:
    record = Record(STREAM, 0, sent=0.0)
    meter = StreamMeter(record)
    for arrival, data in timed:
        meter.feed(arrival, data)
    meter.close()
    return record


# -- what is sent ------------------------------------------------------------------------------------


def test_prompt_is_about_the_asked_size_and_unique_per_nonce():
    text = prompt(512, "ab12")
    assert text.startswith("Request ab12.")
    words = text.split("\n", 1)[1].split()
    assert len(words) == 512 - PROMPT_OVERHEAD and set(words) <= set(WORDS)
    assert prompt(512, "ab12") == text and prompt(512, "cd34") != text
    assert len(prompt(1, "x").split("\n", 1)[1].split()) == 1


def test_request_body_streams_with_usage_and_ignores_eos_only_when_asked():
    body = request_body("m", "hi", 64, stream=True)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 64 and body["messages"] == [{"role": "user", "content": "hi"}]
    assert "ignore_eos" not in body
    plain = request_body("m", "hi", 64, stream=False, ignore_eos=True)
    assert plain["ignore_eos"] is True and "stream_options" not in plain and plain["stream"] is False


# -- a stream's timings -----------------------------------------------------------------------------


def test_timings_follow_vllms_definitions():
    record = meter_of(
        [
            (0.001, chunk({"role": "assistant", "content": ""})),  # a gateway's role chunk, at once: no token
            (0.100, chunk({"content": "a"})),
            (0.110, chunk({"content": "b"})),
            (0.130, chunk({"content": "c"}) + chunk({"content": "d"}, "length")),  # two events in one read
            (0.131, chunk(None, usage={"completion_tokens": 4, "prompt_tokens": 30}) + b"data: [DONE]\n\n"),
        ]
    )
    assert record.ok and record.error is None
    assert record.ttft == pytest.approx(0.100)
    assert record.itl == pytest.approx([0.010, 0.020, 0.0])
    assert record.e2e == pytest.approx(0.131)  # the last byte, after the usage chunk
    assert record.output_tokens == 4 and record.prompt_tokens == 30
    assert record.tpot == pytest.approx(0.030 / 3)  # (last token chunk - first) / (tokens - 1)
    assert record.decode_tok_s == pytest.approx(3 / 0.030)
    assert record.tok_s == pytest.approx(4 / 0.131)
    assert record.finish_reason == "length"


def test_a_role_chunk_that_carries_text_is_a_token():
    record = meter_of([(0.05, chunk({"role": "assistant", "content": "Hi"})), (0.06, chunk({"content": "!"}))])
    assert record.ttft == pytest.approx(0.05) and len(record.token_times) == 2


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "tool_calls"])
def test_reasoning_and_tool_call_deltas_are_tokens(field):
    value = [{"index": 0, "function": {"arguments": "{"}}] if field == "tool_calls" else "hmm"
    record = meter_of([(0.2, chunk({field: value}))])
    assert record.ttft == pytest.approx(0.2)


def test_without_usage_tokens_are_counted_per_chunk():
    record = meter_of([(0.1, chunk({"content": "ab"})), (0.2, chunk({"content": "cd"}))])
    assert record.usage_tokens is None and record.output_tokens == 2


def test_the_real_vllm_stream_counts_what_its_usage_says():
    data = (SHARED_FIXTURES / "vllm-0.32-cpu" / "b_chat_stream_include_usage.txt").read_bytes()
    record = meter_of([(0.5, data)])
    assert record.output_tokens == 8 and len(record.token_times) == 8  # empty-content tokens count too


def test_the_real_litellm_stream_finish_chunk_is_no_token():
    case = json.loads((SHARED_FIXTURES / "litellm-1.108" / "b05-chat-upstream-stream-usage.json").read_text())
    record = meter_of([(0.5, case["response"]["body"].encode())])
    assert len(record.token_times) == 2 and record.usage_tokens == 1 and record.ok


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b'data: {"error": {"message": "boom", "code": 500}}\n\n', "error in the stream: boom"),
        (b"data: {not json\n\n", "a stream event is not JSON"),
        (b"data: [1, 2]\n\n", "not a JSON object"),
        (b'data: {"id": "x", "choices": []}\n\ndata: [DONE]\n\n', "the stream carried no token"),
    ],
)
def test_a_broken_stream_is_a_failed_request(data, error):
    record = meter_of([(0.1, chunk({"content": "a"}) if "carried" not in error else b""), (0.2, data)])
    assert not record.ok and error in record.error


# -- a non-streamed answer ------------------------------------------------------------------------------


def answer(usage: bool) -> bytes:
    body = {"choices": [{"message": {"role": "assistant", "content": "x" * 40}, "finish_reason": "stop"}]}
    if usage:
        body["usage"] = {"completion_tokens": 12, "prompt_tokens": 7}
    return json.dumps(body).encode()


def test_non_stream_reads_usage_else_estimates_from_the_text():
    record = Record(NON_STREAM, 0, sent=0.0, ended=0.5)
    read_answer(record, answer(usage=True))
    assert record.ok and record.output_tokens == 12 and record.prompt_tokens == 7
    assert record.ttft is None and record.itl == [] and record.tpot is None and record.decode_tok_s is None
    assert record.tok_s == pytest.approx(24.0)
    estimated = Record(NON_STREAM, 0, sent=0.0, ended=0.5)
    read_answer(estimated, answer(usage=False))
    assert estimated.output_tokens == 10  # 40 characters / 4


@pytest.mark.parametrize(("body", "error"), [(b"<html>", "not JSON"), (b'{"detail": "nope"}', "no choices: nope")])
def test_non_stream_without_choices_fails(body, error):
    record = Record(NON_STREAM, 0, sent=0.0, ended=0.5)
    read_answer(record, body)
    assert not record.ok and error in record.error


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            b'{"error": {"message": "The model `x` does not exist.", "code": 404}}',
            "HTTP 404: The model `x` does not exist.",
        ),
        (b'{"error": "Unauthorized"}', "HTTP 404: Unauthorized"),
        (b'{"detail": "Not Found"}', "HTTP 404: Not Found"),
        (b"<html>\n<body>Bad   gateway</body></html>", "HTTP 404: <html> <body>Bad gateway</body></html>"),
        (b"", "HTTP 404: (empty body)"),
    ],
)
def test_http_errors_name_the_servers_message(body, expected):
    assert http_error(404, body) == expected


def test_settle_reads_what_came_before_a_stream_broke_off():
    record = Record(STREAM, 0, sent=0.0)
    meter = StreamMeter(record)
    meter.feed(0.1, chunk({"content": "a"}) + chunk({"content": "b"}))
    meter.feed(0.2, chunk({"content": "c"})[:20])  # an event cut short
    assert record.token_times == []  # JSON is read off the timing path, when asked
    meter.settle()
    assert record.token_times == [0.1, 0.1] and record.ended is None and not record.ok
