"""Red team: `profile add --detect` reads a server's answer. A server (or anything on the port) that trickles
its body, or sends an endless one, must not hang the command or fill memory: httpx's timeout is per read."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tests.conftest import Home
from tests.fault_server import raw_server


def _answer(mode: str, conn: socket.socket, stop: threading.Event) -> None:
    if mode == "trickle":  # a valid start, then one byte a second, forever
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n")
        conn.sendall(b'{"data": [')
        while not stop.is_set():
            conn.sendall(b" ")
            time.sleep(1)
    else:  # endless: megabytes as fast as they go
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + b'{"data": [')
        chunk = b" " * (1 << 20)
        while not stop.is_set():
            conn.sendall(chunk)


@pytest.fixture(params=["trickle", "endless"])
def hostile(request) -> Iterator[int]:
    with raw_server(lambda conn, stop: _answer(request.param, conn, stop)) as port:
        yield port


def test_detect_gives_up_on_a_hostile_answer(home: Home, hostile: int) -> None:
    started = time.monotonic()
    result = home.run("profile", "add", "gw", "--base-url", f"http://127.0.0.1:{hostile}/v1", "--detect", check=2)
    assert time.monotonic() - started < 40
    assert "Traceback" not in result.stderr and "/models" in result.stderr
    assert not home.path(".config/agentcfg/profiles/gw.toml").exists()
