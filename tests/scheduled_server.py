"""An OpenAI-compatible chat server on 127.0.0.1 that emits tokens on a known schedule.

Token i of a request is ready `ttft + i * itl` seconds after the request arrived; a chunk is sent
when its last token is ready (`tokens_per_chunk` tokens per chunk). The schedule is kept against
absolute times, so a late wake-up delays one chunk and not every later one. Because the expected
TTFT and ITL are known, a client's measurements can be checked against them.

Also: usage on or off, a role chunk sent at once (as gateways do) or with the first token (as vLLM
does), a stall mid-stream for chosen requests, an early end-of-sequence unless the request asks
`ignore_eos`, a key check, and `/metrics` with vLLM's histogram names whose counts and sums grow
with every answered request. `GET /debug/sends` lists when each token chunk was written
(`time.perf_counter_ns()`, the same clock as a client's `perf_counter()` on this machine).

    python -m tests.scheduled_server --ttft 0 --itl 0.0002    # prints the port, serves until killed
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "DeepSeek-V4-Flash"
# vLLM 0.32's bucket bounds (../shared/fixtures/vllm-0.32-cpu/a_get_metrics.txt).
BUCKETS = {
    "vllm:time_to_first_token_seconds": (
        0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
        80.0, 160.0, 640.0, 2560.0,
    ),
    "vllm:inter_token_latency_seconds": (
        0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
    ),
    "vllm:e2e_request_latency_seconds": (
        0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0,
        960.0, 1920.0, 7680.0,
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Schedule:
    ttft: float = 0.06  # request received -> first token ready, seconds
    itl: float = 0.01  # between tokens (0: as fast as the socket takes them)
    tokens_per_chunk: int = 1
    usage: bool = True  # report usage (in the last chunk when the request asks for it)
    role_first: bool = True  # send the role chunk on arrival, as gateways do (vLLM: with the first token)
    stall_requests: frozenset[int] = frozenset()  # chat requests (0-based, in arrival order) that stall ...
    stall_after: int = 3  # ... after this many tokens ...
    stall_for: float = 5.0  # ... for this long, then hang up
    eos_after: int | None = None  # end early unless the request asks ignore_eos
    metrics: bool = True
    owned_by: str = "vllm"
    key: str | None = None
    model: str = MODEL


@dataclass
class Observed:
    """What the fake engine saw: for /metrics, for `peak` and for the tests."""

    chats: int = 0
    in_flight: int = 0
    peak: int = 0
    ttft: list[float] = field(default_factory=list)
    itl: list[float] = field(default_factory=list)
    e2e: list[float] = field(default_factory=list)
    sends: list[list[int]] = field(default_factory=list)  # per chat request: perf_counter_ns of each token chunk


def _sleep_until(moment: float) -> None:
    remaining = moment - time.perf_counter()
    if remaining > 0:
        time.sleep(remaining)


def metrics_text(observed: Observed, model: str) -> str:
    """Prometheus text with vLLM's names and labels for the three histograms bench reads."""
    lines = []
    labels = f'engine="0",model_name="{model}"'
    for name, values in (
        ("vllm:time_to_first_token_seconds", observed.ttft),
        ("vllm:inter_token_latency_seconds", observed.itl),
        ("vllm:e2e_request_latency_seconds", observed.e2e),
    ):
        lines += [f"# HELP {name} Histogram.", f"# TYPE {name} histogram"]
        for bound in (*BUCKETS[name], float("inf")):
            le = "+Inf" if bound == float("inf") else repr(bound)
            count = sum(1 for v in values if v <= bound)
            lines.append(f'{name}_bucket{{engine="0",le="{le}",model_name="{model}"}} {float(count)}')
        lines.append(f"{name}_count{{{labels}}} {float(len(values))}")
        lines.append(f"{name}_sum{{{labels}}} {sum(values)}")
    lines.append(f"vllm:num_requests_running{{{labels}}} {float(observed.in_flight)}")
    return "\n".join(lines) + "\n"


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as uvicorn: no Nagle delay

    def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def do_GET(self) -> None:
        srv, schedule = self.server, self.server.schedule
        srv.requests.append(("GET", self.path, dict(self.headers), None))
        if self.path == "/metrics" and schedule.metrics:
            with srv.lock:
                text = metrics_text(srv.observed, schedule.model)
            self._send(200, text, "text/plain; version=0.0.4")
        elif self.path == "/v1/models":
            model = {"id": schedule.model, "object": "model", "owned_by": schedule.owned_by, "max_model_len": 65536}
            self._send(200, {"object": "list", "data": [model]})
        elif self.path == "/debug/sends":
            self._send(200, srv.observed.sends)
        else:
            self._send(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        arrived = time.perf_counter()
        srv, schedule = self.server, self.server.schedule
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.loads(raw or b"{}")
        srv.requests.append(("POST", self.path, dict(self.headers), body))
        if self.path != "/v1/chat/completions":
            self._send(404, {"detail": "Not Found"})
            return
        if schedule.key is not None and self.headers.get("authorization") != f"Bearer {schedule.key}":
            self._send(401, {"error": "Unauthorized"})
            return
        if body.get("model") != schedule.model:
            self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist.", "code": 404}})
            return
        tokens = int(body.get("max_tokens") or 16)
        if schedule.eos_after is not None and not body.get("ignore_eos"):
            tokens = min(tokens, schedule.eos_after)
        with srv.lock:
            number = srv.observed.chats
            srv.observed.chats += 1
            srv.observed.in_flight += 1
            srv.observed.peak = max(srv.observed.peak, srv.observed.in_flight)
            sends: list[int] = []
            srv.observed.sends.append(sends)
        try:
            if body.get("stream"):
                self._stream(body, tokens, arrived, number, sends)
            else:
                self._answer(tokens, arrived)
        except OSError:  # the client hung up (a timeout, Ctrl-C): nothing to record
            self.close_connection = True
        finally:
            with srv.lock:
                srv.observed.in_flight -= 1

    def _record(self, tokens: int, first: float, arrived: float) -> None:
        schedule, observed = self.server.schedule, self.server.observed
        with self.server.lock:
            observed.ttft.append(first - arrived)
            observed.itl.extend([schedule.itl] * (tokens - 1))
            observed.e2e.append(time.perf_counter() - arrived)

    def _answer(self, tokens: int, arrived: float) -> None:
        schedule = self.server.schedule
        _sleep_until(arrived + schedule.ttft + (tokens - 1) * schedule.itl)
        answer: dict[str, Any] = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": schedule.model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": " w" * tokens}, "finish_reason": "length"}
            ],
        }
        if schedule.usage:
            answer["usage"] = {"prompt_tokens": 12, "completion_tokens": tokens, "total_tokens": 12 + tokens}
        self._record(tokens, arrived + schedule.ttft, arrived)
        self._send(200, answer)

    def _stream(self, body: dict[str, Any], tokens: int, arrived: float, number: int, sends: list[int]) -> None:
        schedule = self.server.schedule
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": schedule.model}

        def event(choices: list[Any], **extra: Any) -> bytes:
            return b"data: " + json.dumps({**base, "choices": choices, **extra}).encode() + b"\n\n"

        role = event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        if schedule.role_first:
            self._chunk(role)
        per_chunk = max(1, schedule.tokens_per_chunk)
        plain = event([{"index": 0, "delta": {"content": " w" * per_chunk}, "finish_reason": None}])
        first = None
        sent = 0
        while sent < tokens:
            size = min(per_chunk, tokens - sent)
            if number in schedule.stall_requests and sent >= schedule.stall_after:
                time.sleep(schedule.stall_for)
                self.close_connection = True
                return
            _sleep_until(arrived + schedule.ttft + (sent + size - 1) * schedule.itl)
            last = sent + size == tokens
            data = plain
            if size != per_chunk or last:
                finish = "length" if last else None
                data = event([{"index": 0, "delta": {"content": " w" * size}, "finish_reason": finish}])
            if first is None and not schedule.role_first:
                data = role + data
            sends.append(time.perf_counter_ns())
            self._chunk(data)
            first = first if first is not None else time.perf_counter()
            sent += size
        if schedule.usage and (body.get("stream_options") or {}).get("include_usage"):
            usage = {"prompt_tokens": 12, "completion_tokens": tokens, "total_tokens": 12 + tokens}
            self._chunk(event([], usage=usage))
        self._chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self._record(tokens, first if first is not None else time.perf_counter(), arrived)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, schedule: Schedule) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.schedule = schedule
        self.observed = Observed()
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []


class ScheduledServer:
    """`with ScheduledServer(ttft=0.05, itl=0.01) as server: server.base_url` (http://127.0.0.1:PORT/v1)."""

    def __init__(self, schedule: Schedule | None = None, **changes: Any) -> None:
        self._server = _Server(replace(schedule or Schedule(), **changes))
        self.port = self._server.server_address[1]
        self.root = f"http://127.0.0.1:{self.port}"
        self.base_url = self.root + "/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def schedule(self) -> Schedule:
        return self._server.schedule

    def reschedule(self, **changes: Any) -> None:
        """Change what the running server plays from its next request on."""
        self._server.schedule = replace(self._server.schedule, **changes)

    @property
    def observed(self) -> Observed:
        return self._server.observed

    @property
    def requests(self) -> list[tuple[str, str, dict[str, str], Any]]:
        return self._server.requests

    def chat_bodies(self) -> list[dict[str, Any]]:
        return [body for method, path, _, body in self.requests if method == "POST" and path.endswith("/completions")]

    def __enter__(self) -> ScheduledServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ttft", type=float, default=0.0)
    parser.add_argument("--itl", type=float, default=0.0002)
    parser.add_argument("--tokens-per-chunk", type=int, default=1)
    args = parser.parse_args()
    schedule = Schedule(ttft=args.ttft, itl=args.itl, tokens_per_chunk=args.tokens_per_chunk)
    server = ScheduledServer(schedule)
    print(server.port, flush=True)
    server._server.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
