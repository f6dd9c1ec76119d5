"""A real MCP server from the registries for the e2e tier: the reference "everything" server
(@modelcontextprotocol/server-everything), once over stdio and once over streamable HTTP.

`python -m tests.e2e.mcp_servers` installs the pinned release into the same cache as the agents
(tests/e2e/agents.py `cache_root()`), once per version; `.ci/run` runs it before the tests, which run
without network. The tests start the server with `node` on its entry file (no npx: that would ask the
registry), stdio as a command an agent starts, HTTP as a process of the test's own (`http_server`)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.agents import cache_root

PACKAGE = "@modelcontextprotocol/server-everything"
# Its releases are dated; a bump here is deliberate. 2026.8.31 serves stdio by default and streamable
# HTTP on /mcp with the argument `streamableHttp`, on the port in $PORT (3001 unless set).
VERSION = "2026.8.31"
TOOL = "echo"  # {"message": str} -> text "Echo: <message>"
# A preload for `node --require`: the server listens on every interface (express `app.listen(PORT)`); the
# tests' one listens on loopback only.
LOOPBACK = Path(__file__).with_name("loopback_listen.cjs")


def prefix() -> Path:
    return cache_root() / f"mcp-server-everything-{VERSION}"


def entry() -> Path:
    """The server's entry file, run as `node ENTRY` (stdio) or `node ENTRY streamableHttp`."""
    return prefix() / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def stdio_command() -> list[str]:
    """The command an agent starts for the stdio server: absolute paths, so no PATH lookup decides."""
    return [node(), str(entry())]


def node() -> str:
    """The `node` the agents run on (an absolute path: an agent's config may be read with another PATH)."""
    import shutil

    found = shutil.which("node")
    if found is None:
        raise RuntimeError("node is not on PATH: the agents and the MCP server need it")
    return found


def install() -> Path:
    """npm-install the pinned server (once: a `.complete` marker, a lock against xdist workers racing)
    and return its entry file."""
    root = prefix()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / ".complete"
        if not done.exists():
            started = time.monotonic()
            subprocess.run(
                ["npm", "install", "--prefix", str(root), "--no-audit", "--no-fund", "--loglevel=error",
                 f"{PACKAGE}@{VERSION}"],
                check=True, stdin=subprocess.DEVNULL, timeout=600,
            )  # fmt: skip
            done.write_text(f"{PACKAGE}@{VERSION}\n")
            print(f"installed {PACKAGE}@{VERSION} in {time.monotonic() - started:.0f}s", file=sys.stderr)
    return entry()


def installed() -> bool:
    return (prefix() / ".complete").exists() and entry().exists()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class HttpServer:
    """A running streamable HTTP server-everything: `url` is its MCP endpoint."""

    port: int
    pid: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def http_server(timeout: float = 30, env: dict[str, str] | None = None) -> Iterator[HttpServer]:
    """server-everything over streamable HTTP on a free loopback port, in a process group of its own that
    is killed (by its PID) on the way out. A port taken between choosing and binding gets another try."""
    last = ""
    for _ in range(3):
        port = free_port()
        base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **(env or {})}
        proc = subprocess.Popen(
            [node(), "--require", str(LOOPBACK), str(entry()), "streamableHttp"],
            env={**base, "PORT": str(port)}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while proc.poll() is None and not _listening(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        if proc.poll() is None and _listening(port):
            try:
                yield HttpServer(port, proc.pid)
            finally:
                _stop(proc)
            return
        _stop(proc)
        last = proc.stderr.read() if proc.stderr else ""
        if "already in use" not in last:
            break
    raise RuntimeError(f"server-everything did not listen on 127.0.0.1: {last[-2000:]}")


def _stop(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(10)
    if proc.stderr:
        proc.stderr.close()


def _check() -> str:
    """Start both transports once and ask each for its tools: proof the install runs without npx."""
    import json

    hello = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
         "capabilities": {}, "clientInfo": {"name": "agentcfg-ci", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": TOOL, "arguments": {"message": "hi"}}},
    ]  # fmt: skip
    proc = subprocess.Popen(
        stdio_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    assert proc.stdin and proc.stdout
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in hello).encode())
    proc.stdin.flush()
    out, deadline = b"", time.monotonic() + 30  # notifications come between the answers
    while b"Echo: hi" not in out and time.monotonic() < deadline:
        if select.select([proc.stdout], [], [], 0.5)[0]:
            out += os.read(proc.stdout.fileno(), 65536)
    _stop(proc)
    if b"Echo: hi" not in out:
        raise SystemExit(f"the stdio server answered {out[-2000:]!r}")
    with http_server() as server:
        status = _post_initialize(server.url)
    if not re.search(r'"serverInfo"', status):
        raise SystemExit(f"the HTTP server answered {status!r}")
    return f"stdio and streamable HTTP answer ({entry()})"


def _post_initialize(url: str) -> str:
    import json
    import urllib.request

    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "agentcfg-ci", "version": "0"}}}  # fmt: skip
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"content-type": "application/json",
                                         "accept": "application/json, text/event-stream"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as answer:  # loopback only
        return answer.read().decode()


if __name__ == "__main__":
    install()
    print(f"{PACKAGE}@{VERSION}: {_check()}")
