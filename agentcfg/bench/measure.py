"""What one benchmark request sends, and what its timings are, from the arrival time of each chunk.

The definitions are those of vLLM's serving benchmark (`vllm bench serve`), so figures compare:

- TTFT: request sent -> the first chunk that carries a token;
- ITL: the gaps between successive token-carrying chunks, one gap per chunk (a chunk that carries
  several tokens is one gap, as vLLM's benchmark counts it; TPOT is the per-token figure);
- TPOT: (last token chunk - first token chunk) / (output tokens - 1);
- decode rate: its inverse, (output tokens - 1) / (last token chunk - first token chunk);
- E2EL: request sent -> the last byte of the answer.

One deliberate difference: a chunk that only announces the role (`{"role": "assistant",
"content": ""}`) is not a token. vLLM sends it together with the first token, so nothing changes
there, but a gateway may send it at once, before the model has produced anything.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from dataclasses import field
from typing import Any

from agentcfg.bench.sse import Parser
from agentcfg.lazyclass import dataclass

STREAM, NON_STREAM = "stream", "non_stream"
MODES = (STREAM, NON_STREAM)
TOKEN_FIELDS = ("content", "reasoning_content", "reasoning", "tool_calls")
CHARS_PER_TOKEN = 4  # for a non-streamed answer without `usage` only; flagged as an estimate
PROMPT_OVERHEAD = 20  # the instruction and a chat template, in tokens, roughly
# Words that GPT, Llama, Qwen and DeepSeek tokenizers each encode as one token (with the leading space).
_WORDS = (
    "the of and to in is was for on that with as by at from his her they this had not are but"
    " one all were when there can more other time into some could them than first been people"
    " water long little very after words called just where most know through back much before"
    " good great year same right think also around another came come work three word must because"
    " does part even place well such here take why things help put different away again off went"
    " old number house world near build self earth father head stand own page should country found"
)
WORDS = tuple(_WORDS.split())


# -- what is sent -------------------------------------------------------------------------------------


def prompt(tokens: int, nonce: str) -> str:
    """A synthetic prompt of roughly `tokens` tokens that starts with `nonce`.

    The words are each one token in common tokenizers; the instruction and chat template take about
    PROMPT_OVERHEAD more. Each request gets its own nonce first, so a prefix cache cannot answer
    from an earlier request and TTFT includes the real prefill (the server's `usage.prompt_tokens`
    reports the size it really saw).
    """
    generator = random.Random(nonce)
    words = [generator.choice(WORDS) for _ in range(max(1, tokens - PROMPT_OVERHEAD))]
    return f"Request {nonce}. Continue this text for as long as you can:\n" + " ".join(words)


def request_body(model: str, text: str, max_tokens: int, *, stream: bool, ignore_eos: bool = False) -> dict[str, Any]:
    """A chat completion request; a stream asks for `usage` in its last chunk."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": text}],
        "max_tokens": max_tokens,
        "stream": stream,
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    if ignore_eos:
        body["ignore_eos"] = True  # vLLM's extension: exactly max_tokens tokens, so decode rates compare
    return body


# -- what came back ---------------------------------------------------------------------------------


@dataclass
class Record:
    """One request. Times are `time.perf_counter()` seconds; derived figures are in seconds too."""

    mode: str
    index: int
    sent: float
    status: int | None = None
    error: str | None = None
    token_times: list[float] = field(default_factory=list)  # arrival of each token-carrying chunk
    ended: float | None = None  # arrival of the last byte
    usage_tokens: int | None = None  # usage.completion_tokens, when the server reported it
    prompt_tokens: int | None = None
    text_chars: int = 0
    finish_reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.ended is not None

    @property
    def output_tokens(self) -> int | None:
        """The server's count; without one, a stream's token chunks, or a non-streamed text's length / 4."""
        if self.usage_tokens is not None:
            return self.usage_tokens
        if self.mode == STREAM:
            return len(self.token_times)
        return math.ceil(self.text_chars / CHARS_PER_TOKEN) if self.text_chars else 0

    @property
    def ttft(self) -> float | None:
        return self.token_times[0] - self.sent if self.token_times else None

    @property
    def itl(self) -> list[float]:
        times = self.token_times
        return [later - earlier for earlier, later in itertools.pairwise(times)]

    @property
    def e2e(self) -> float | None:
        return self.ended - self.sent if self.ended is not None else None

    @property
    def decode_time(self) -> float | None:
        """First token chunk -> last token chunk: what TPOT and the decode rate divide."""
        return self.token_times[-1] - self.token_times[0] if len(self.token_times) > 1 else None

    @property
    def tpot(self) -> float | None:
        tokens, span = self.output_tokens or 0, self.decode_time
        return span / (tokens - 1) if span is not None and tokens > 1 else None

    @property
    def decode_tok_s(self) -> float | None:
        tokens, span = self.output_tokens or 0, self.decode_time
        return (tokens - 1) / span if span and tokens > 1 else None

    @property
    def tok_s(self) -> float | None:
        """Output tokens over the whole request (prefill included): the one rate both modes have."""
        e2e = self.e2e
        return (self.output_tokens or 0) / e2e if e2e else None


def _message(data: Any) -> str:
    """The error message inside an OpenAI-, vLLM- or gateway-shaped error body."""
    if isinstance(data, dict):
        for key in ("error", "detail", "message"):
            value = data.get(key)
            if isinstance(value, dict):
                return _message(value)
            if isinstance(value, str):
                return value
    return json.dumps(data)[:200]


def http_error(status: int, body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        detail = _message(json.loads(text))
    except (ValueError, RecursionError):  # RecursionError: a server's `[[[[...` past json's limit
        detail = " ".join(text.split())[:200] or "(empty body)"
    return f"HTTP {status}: {detail}"


def _carries_token(delta: dict[str, Any]) -> bool:
    present = [value for value in map(delta.get, TOKEN_FIELDS) if value is not None]
    return bool(present) and (not delta.get("role") or any(present))  # a bare role announcement is no token


def _take_usage(record: Record, data: dict[str, Any]) -> None:
    usage = data.get("usage")
    if isinstance(usage, dict):
        if isinstance(usage.get("completion_tokens"), int):
            record.usage_tokens = usage["completion_tokens"]
        if isinstance(usage.get("prompt_tokens"), int):
            record.prompt_tokens = usage["prompt_tokens"]


class StreamMeter:
    """Feeds a streamed answer's bytes, with their arrival times, into a Record.

    The SSE framing is parsed as the bytes arrive, so each event keeps the arrival time of the read
    that completed it; its JSON is read later (`settle`), off the path between two reads. When a
    burst of chunks is already waiting, each is then handed over sooner, and stamped closer to
    when it really arrived.
    """

    def __init__(self, record: Record) -> None:
        self.record = record
        self.parser = Parser()
        self.last_arrival: float | None = None
        self.events: list[tuple[float, str]] = []  # (arrival, data), not yet read

    def feed(self, arrival: float, chunk: bytes) -> None:
        self.last_arrival = arrival
        for event in self.parser.feed(chunk):
            self.events.append((arrival, event.data))

    def settle(self) -> None:
        """Read the events received so far into the record (also after a timeout: what did come)."""
        for arrival, data in self.events:
            self._event(arrival, data)
        self.events.clear()

    def close(self) -> None:
        """The stream ended: the last byte's arrival is the request's end."""
        for event in self.parser.close():
            self.events.append((self.last_arrival or self.record.sent, event.data))
        self.settle()
        record = self.record
        record.ended = self.last_arrival
        if record.error is None and not record.token_times:
            record.error = "the stream carried no token"

    def _event(self, arrival: float, data: str) -> None:
        record = self.record
        data = data.strip()
        if record.error is not None or data == "[DONE]":
            return
        try:
            parsed = json.loads(data)
        except (ValueError, RecursionError):
            record.error = f"a stream event is not JSON: {data[:80]!r}"
            return
        if not isinstance(parsed, dict):
            record.error = f"a stream event is not a JSON object: {data[:80]!r}"
            return
        choices = parsed.get("choices")
        if not choices and ("error" in parsed or parsed.get("object") == "error"):
            record.error = f"error in the stream: {_message(parsed)}"
            return
        _take_usage(record, parsed)
        if choices and isinstance(choices[0], dict):
            choice = choices[0]
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                delta = {}
            if _carries_token(delta):
                record.token_times.append(arrival)
                record.text_chars += len(str(delta.get("content") or delta.get("reasoning_content") or ""))
            if choice.get("finish_reason"):
                record.finish_reason = choice["finish_reason"]


def read_answer(record: Record, body: bytes) -> None:
    """A non-streamed answer: its text length and the server's usage."""
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        record.error = f"the answer is not JSON: {body[:80].decode('utf-8', 'replace')!r}"
        return
    choices = parsed.get("choices") if isinstance(parsed, dict) else None
    if not choices or not isinstance(choices[0], dict):
        record.error = f"the answer has no choices: {_message(parsed)}"
        return
    message = choices[0].get("message") or {}
    record.text_chars = sum(len(str(message.get(k) or "")) for k in ("content", "reasoning_content"))
    record.finish_reason = choices[0].get("finish_reason")
    _take_usage(record, parsed)
