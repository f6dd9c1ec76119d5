"""An HTTP(S) proxy on 127.0.0.1 that forwards to loopback only and refuses, and records, everything else.

An agent started with HTTPS_PROXY/HTTP_PROXY/ALL_PROXY pointing here shows every host it tries to reach
besides the profile's server: its vendor's API, telemetry, update checks. Loopback targets are tunnelled
(an agent that ignores NO_PROXY, qwen-code's undici, still reaches its server); any other target gets a 403
and lands in `refused`. An agent that ignores the proxy variables altogether is not seen here: CI's network
namespace (`.ci/run`) stops it instead.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from urllib.parse import urlsplit

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def _target(request_line: str) -> tuple[str, int, str] | None:
    """(host, port, the request line to send on) of `CONNECT host:port` or `METHOD http://host:port/path`."""
    parts = request_line.split()
    if len(parts) != 3:
        return None
    method, where, version = parts
    if method == "CONNECT":
        host, _, port = where.rpartition(":")
        return (host.strip("[]"), int(port), "") if port.isdigit() else None
    url = urlsplit(where)
    if url.scheme != "http" or not url.hostname:
        return None
    path = url.path or "/"
    return url.hostname, url.port or 80, f"{method} {path}{'?' + url.query if url.query else ''} {version}"


class LoopbackProxy:
    """`with LoopbackProxy() as proxy:` ... `proxy.url`, `proxy.refused` (the request lines it refused)."""

    def __init__(self) -> None:
        self.refused: list[str] = []
        self.forwarded: list[str] = []
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._stop = threading.Event()

    def variables(self, no_proxy: str = "127.0.0.1,localhost,::1") -> dict[str, str]:
        """The proxy variables an agent run gets, both spellings."""
        names = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
        out = {name: self.url for name in names} | {name.lower(): self.url for name in names}
        return out | {"NO_PROXY": no_proxy, "no_proxy": no_proxy}

    def __enter__(self) -> LoopbackProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client:
            client.settimeout(30)
            head = b""
            with contextlib.suppress(OSError):
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    chunk = client.recv(4096)
                    if not chunk:
                        break
                    head += chunk
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            target = _target(line)
            if target is None or target[0] not in LOOPBACK:
                self.refused.append(line)
                with contextlib.suppress(OSError):
                    client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            self.forwarded.append(line)
            host, port, resend = target
            try:
                upstream = socket.create_connection((host.replace("localhost", "127.0.0.1"), port), timeout=30)
            except OSError:
                with contextlib.suppress(OSError):
                    client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            with upstream:
                if resend:  # plain HTTP: the request again in origin form, the rest as it came
                    upstream.sendall(resend.encode("latin-1") + head[len(line) :])
                else:
                    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    upstream.sendall(head.split(b"\r\n\r\n", 1)[1])
                _pipe(client, upstream)


def _pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    a.settimeout(None)
    b.settimeout(None)
    while True:
        ready, _, _ = select.select([a, b], [], [], 120)
        if not ready:
            return
        for sock in ready:
            try:
                data = sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            (b if sock is a else a).sendall(data)
