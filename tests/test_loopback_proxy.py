"""The loopback-only proxy the e2e tier runs agents behind (tests/loopback_proxy.py): it must forward to
loopback and refuse, and record, every other host, or a phone-home test proves nothing."""

from __future__ import annotations

import socket
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.loopback_proxy import LoopbackProxy, _target


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def origin():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def test_plain_http_to_loopback_is_forwarded(origin):
    with LoopbackProxy() as proxy:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy.url}))
        body = opener.open(f"http://127.0.0.1:{origin}/v1/models?x=1", timeout=10).read()
    assert body == b"hello /v1/models?x=1"
    assert proxy.refused == [] and len(proxy.forwarded) == 1


def test_connect_to_loopback_is_tunnelled(origin):
    with LoopbackProxy() as proxy, socket.create_connection(("127.0.0.1", int(proxy.url.rsplit(":", 1)[1]))) as sock:
        sock.sendall(f"CONNECT 127.0.0.1:{origin} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /through HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    assert answer.endswith(b"hello /through")


@pytest.mark.parametrize(
    "line",
    [
        "CONNECT api.github.com:443 HTTP/1.1",
        "GET http://telemetry.example.com/v1/x HTTP/1.1",
        "CONNECT 10.0.0.1:443 HTTP/1.1",
    ],
)
def test_any_other_host_is_refused_and_recorded(line):
    with LoopbackProxy() as proxy, socket.create_connection(("127.0.0.1", int(proxy.url.rsplit(":", 1)[1]))) as sock:
        sock.sendall(line.encode() + b"\r\nHost: x\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 403")
    assert proxy.refused == [line]


def test_request_lines_are_read_as_proxies_see_them():
    assert _target("CONNECT [::1]:8000 HTTP/1.1") == ("::1", 8000, "")
    assert _target("POST http://localhost:9/v1/chat/completions HTTP/1.1") == (
        "localhost", 9, "POST /v1/chat/completions HTTP/1.1",
    )  # fmt: skip
    assert _target("garbage") is None
