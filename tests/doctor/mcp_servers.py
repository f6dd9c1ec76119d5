"""Tiny MCP servers for doctor's MCP tests: stdio ones as Python scripts, and a loopback HTTP one.

Each stdio script reads its `initialize` line and does one thing with it (answers, never answers, ends at once
with stderr, prints garbage, logs first). `record` (an environment variable naming a file) gets a line per
start, with the PID and the value of the variable named in RECORD_VARIABLE: a test sees how often a server was
started, what it was given, and which processes to look for afterwards.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PRELUDE = """
import json, os, sys, time
if os.environ.get("RECORD"):
    with open(os.environ["RECORD"], "a") as out:
        out.write(json.dumps({"pid": os.getpid(), "value": os.environ.get(os.environ.get("RECORD_VARIABLE", ""), None),
                              "cwd": os.getcwd(), "tty": os.isatty(0)}) + "\\n")
request = json.loads(sys.stdin.readline())
def send(message):
    sys.stdout.write(json.dumps(message) + "\\n"); sys.stdout.flush()
"""
RESULT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "tiny", "version": "1.2.3"},
}

SCRIPTS = {
    "answers": f"send({{'jsonrpc': '2.0', 'id': request['id'], 'result': {RESULT!r}}})\nsys.stdin.read()\n",
    "logs-first": (
        "send({'jsonrpc': '2.0', 'method': 'notifications/message', 'params': {'level': 'info', 'data': 'hi'}})\n"
        "sys.stdout.write('starting up...\\n'); sys.stdout.flush()\n"
        "send({'jsonrpc': '2.0', 'id': 7, 'result': {}})\n"
        f"send({{'jsonrpc': '2.0', 'id': request['id'], 'result': {RESULT!r}}})\nsys.stdin.read()\n"
    ),
    # Never answers, and starts a child of its own that would outlive it (its PID in the record file).
    "never": (
        "import subprocess\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "if os.environ.get('RECORD'):\n"
        "    open(os.environ['RECORD'], 'a').write(json.dumps({'child': child.pid}) + '\\n')\n"
        "time.sleep(60)\n"
    ),
    "exits": (
        "sys.stderr.write('loading config\\n')\n"
        "sys.stderr.write('error: bad token ' + os.environ.get('TINY_TOKEN', '(none)') + '\\n')\n"
        "sys.exit(3)\n"
    ),
    "garbage": "print('Hello! I am not an MCP server.'); sys.stdout.flush()\n",
    "error": "send({'jsonrpc': '2.0', 'id': 1, 'error': {'code': -32600, 'message': 'unsupported version'}})\n",
    "ignores-term": ("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)\n"),
}


def script(directory: Path, kind: str) -> tuple[str, ...]:
    """The command that runs the stdio server `kind`."""
    path = directory / f"mcp-{kind}.py"
    path.write_text(PRELUDE + SCRIPTS[kind])
    return (sys.executable, str(path))


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# -- remote -----------------------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[dict[str, Any]]

    def log_message(self, *args: Any) -> None:
        pass

    def _record(self, body: bytes) -> None:
        self.server.seen.append(  # type: ignore[attr-defined]
            {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body.decode()}
        )

    def _send(self, status: int, kind: str, body: bytes, length: bool = True) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self._record(body)
        request = json.loads(body)
        answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": RESULT}).encode()
        if self.path == "/json":
            self._send(200, "application/json", answer)
        elif self.path == "/needs-token":
            if self.headers.get("Authorization") == f"Bearer {self.server.token}":  # type: ignore[attr-defined]
                self._send(200, "application/json", answer)
            else:
                self._send(401, "application/json", b'{"error": "invalid_token"}')
        elif self.path == "/sse":  # an event stream left open after the answer: doctor stops reading at it
            self.close_connection = True
            self._send(200, "text/event-stream", b"", length=False)
            self.wfile.write(b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n')
            self.wfile.write(b"event: message\ndata: " + answer + b"\n\n")
            self.wfile.flush()
            self.server.hold.wait(10)  # type: ignore[attr-defined]
        elif self.path == "/401":
            self._send(401, "application/json", b'{"error": "invalid_token"}')
        elif self.path == "/500":
            self._send(500, "text/plain", b"upstream exploded")
        else:
            self._send(404, "text/plain", b"Not Found")

    def do_GET(self) -> None:
        self._record(b"")
        if self.path == "/legacy":
            self.close_connection = True
            self._send(200, "text/event-stream", b"", length=False)
            self.wfile.write(b"event: endpoint\ndata: /messages?sessionId=abc\n\n")
            self.wfile.flush()
            self.server.hold.wait(10)  # type: ignore[attr-defined]
        else:
            self._send(405, "text/plain", b"Method Not Allowed")


@contextmanager
def http_server(token: str = "") -> Iterator[Any]:
    """A loopback MCP server: POST /json, /sse, /needs-token, /401, /500, (else 404); GET /legacy (else 405).
    `.root` is its URL, `.seen` what it was sent."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.seen = []  # type: ignore[attr-defined]
    server.token = token  # type: ignore[attr-defined]
    server.hold = threading.Event()  # type: ignore[attr-defined]
    server.root = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.hold.set()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()
