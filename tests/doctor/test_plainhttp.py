"""agentcfg.doctor.plainhttp: a plain-http probe sent without httpx comes back as httpx's sender brings it back.

Each case answers the same probe twice from a raw loopback server (bytes as written, no HTTP library between):
once through plainhttp (what `probes.run` picks for plain http), once through httpx (a transport given makes
send.py use httpx for every probe), and the two Results must agree.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from agentcfg.doctor import probes
from agentcfg.doctor.wire import BODY_LIMIT, Probe, Result
from tests.fault_server import dead_port, raw_server


def _both(probe: Probe) -> tuple[Result, Result]:
    (plain,) = probes.run([probe], 5.0)
    (via_httpx,) = probes.run([probe], 5.0, transport=httpx.AsyncHTTPTransport())
    return plain, via_httpx


def _seen(result: Result) -> dict[str, Any]:
    """What doctor's rules read of a Result (elapsed times are the clock's)."""
    extra = {k: v for k, v in result.extra.items() if k not in ("first_byte", "last_byte")}
    return {
        "status": result.status, "content_type": result.content_type, "body": result.body, "error": result.error,
        "exception": result.detail.split(":", 1)[0], "truncated": result.truncated, "extra": extra,
        "timed": ("first_byte" in result.extra, "last_byte" in result.extra),
    }  # fmt: skip


def _answering(raw: bytes, *, close: bool = True) -> Any:
    def handle(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(raw)
        if not close:
            stop.wait(10)

    return raw_server(handle)


ANSWERS = {
    "content-length": b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"a": true}',
    "chunked": b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"6\r\ndata: \r\n3;ext=1\r\n{}\n\r\n1\r\n\n\r\n0\r\n\r\n",
    "to the close": b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello, world",
    "no content": b"HTTP/1.1 204 No Content\r\n\r\n",
    "interim first": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
    b'Content-Length: 27\r\n\r\n{"error": {"message": "no"}}'[:-1],
    "repeated headers": b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nX-LiteLLM-Model-Id: a\r\n"
    b"x-litellm-model-id: b\r\nLocation: /elsewhere\r\nContent-Length: 2\r\n\r\nok",
    "utf-8 split": b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\n\xc3\xa9\xff\xfe!",
    "short body": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",
    "short chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort",
    "nothing": b"",
    "garbage": b"garbage\r\n\r\n",
}


@pytest.mark.parametrize("answer", ANSWERS, ids=list(ANSWERS))
def test_an_answer_reads_as_httpx_reads_it(answer: str) -> None:
    with _answering(ANSWERS[answer]) as port:
        plain, via_httpx = _both(probes.models(f"http://127.0.0.1:{port}/v1", {}))
    assert _seen(plain) == _seen(via_httpx)
    assert plain.detail == via_httpx.detail  # the evidence a finding quotes: in httpx's words
    if plain.error is None:
        assert plain.extra["connected"] and plain.extra["sent"]


def test_a_body_past_the_limit_is_cut_where_httpx_cuts_it() -> None:
    big = b"x" * (BODY_LIMIT + 200_000)
    with _answering(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(big) + big, close=False) as port:
        plain, via_httpx = _both(probes.models(f"http://127.0.0.1:{port}/v1", {}))
    assert plain.truncated and via_httpx.truncated
    assert len(plain.body) == len(via_httpx.body) == BODY_LIMIT


def test_nothing_listening_is_refused_in_httpx_words() -> None:
    plain, via_httpx = _both(probes.models(f"http://127.0.0.1:{dead_port()}/v1", {}))
    assert (plain.error, plain.detail) == (via_httpx.error, via_httpx.detail) == (
        "refused", "ConnectError: All connection attempts failed",
    )  # fmt: skip
    assert "connected" not in plain.extra


def test_a_server_that_closes_at_once_reads_as_with_httpx() -> None:
    with _answering(b"") as port:
        plain, via_httpx = _both(probes.models(f"http://127.0.0.1:{port}/v1", {}))
    assert plain.detail == via_httpx.detail == "RemoteProtocolError: Server disconnected without sending a response."


@contextlib.contextmanager
def _capturing() -> Iterator[tuple[int, list[bytes]]]:
    """A server that keeps each request's bytes (head and body, by its Content-Length) and answers 200."""
    seen: list[bytes] = []

    def handle(conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
            data += chunk
        head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
        length = next((int(line.split(":")[1]) for line in head.split("\r\n") if line.startswith("content-length")), 0)
        while len(data.split(b"\r\n\r\n", 1)[1]) < length and (chunk := conn.recv(65536)):
            data += chunk
        seen.append(data)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

    listener = socket.create_server(("127.0.0.1", 0))

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                handle(conn)

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1], seen
    finally:
        listener.close()


def _parsed(raw: bytes) -> tuple[str, dict[str, str], bytes]:
    head, body = raw.split(b"\r\n\r\n", 1)
    first, *lines = head.decode("latin-1").split("\r\n")
    return first, dict(line.split(": ", 1) for line in lines), body


def test_the_request_is_the_one_httpx_sends_but_for_what_it_says_of_itself() -> None:
    body = {"model": "é-model", "messages": [{"role": "user", "content": "ping ✓"}], "stream": True, "n": 1.5}
    headers = (("Authorization", "Bearer sk-test-0123456789"), ("anthropic-version", "2023-06-01"))
    with _capturing() as (port, seen):
        probe = Probe("chat", f"http://127.0.0.1:{port}/v1/chat/completions?api-version=2024 x", headers, body)
        plain, via_httpx = _both(probe)
    assert plain.status == via_httpx.status == 200
    (line, sent, content), (line_httpx, sent_httpx, content_httpx) = map(_parsed, seen)
    assert line == line_httpx == "POST /v1/chat/completions?api-version=2024%20x HTTP/1.1"
    assert content == content_httpx and json.loads(content) == body
    own = {"User-Agent", "Accept-Encoding", "Connection"}  # who is asking, compression (none), one request
    assert {k: v for k, v in sent.items() if k not in own} == {k: v for k, v in sent_httpx.items() if k not in own}
    assert sent["Authorization"] == "Bearer sk-test-0123456789"  # spelt as the probe spells it


@pytest.mark.parametrize(
    "header",
    [
        ("X-Evil", "a\r\nX-Injected: 1"),
        ("X-Evil", "a\nb"),
        ("Bad Name", "x"),
        ("X-Evil", "a\x00"),
        ("X-Key", "sk-\u2013x"),  # a dash from a web page: sent as another character, it would be another key
    ],
)
def test_a_header_that_would_be_a_line_of_its_own_is_never_sent(header: tuple[str, str]) -> None:
    """A profile's header or key is an attacker's text: refused before any connection, as httpx refuses it."""
    with _capturing() as (port, seen):
        (plain,) = probes.run([Probe("models", f"http://127.0.0.1:{port}/v1/models", (header,))], 5.0)
    assert plain.error == "protocol" and "connected" not in plain.extra
    assert seen == [] and "a\r\nX-Injected" not in plain.detail


def test_a_redirect_is_followed_by_httpx_as_before() -> None:
    with _capturing() as (target, _):
        redirect = f"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:{target}/v1/models\r\n"
        with _answering(redirect.encode() + b"Content-Length: 0\r\n\r\n") as port:
            plain, via_httpx = _both(probes.models(f"http://127.0.0.1:{port}/v1", {}))
    assert _seen(plain) == _seen(via_httpx)
    assert plain.extra["redirects"] == [(307, f"http://127.0.0.1:{target}/v1/models")]
