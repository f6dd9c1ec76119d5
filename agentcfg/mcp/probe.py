"""Asking one MCP server whether it answers, as an agent starting it would: the wire edge of doctor's MCP check.

stdio: the command is started as the agent starts it (its environment, the server's variables), never with the
user's terminal: stdin and stdout are pipes, stderr is captured (its last lines kept, bounded), the working
directory is a fresh temporary one, and the process leads a group of its own, so that whatever it starts (npx,
uvx, a shell) ends with it. It gets one JSON-RPC `initialize` request as one line; the lines it writes are read
until the answer with id 1 (notifications and logs before it are skipped), then the group is ended: SIGTERM,
and SIGKILL for what is left a moment later. Only that group is signalled: its id is the PID of the process
started here, signalled before that process is reaped, so the id cannot have been given to anyone else.

Streamable HTTP (`http`): the same `initialize` is POSTed, and a JSON or an SSE body read up to the answer.
Legacy SSE (`sse`): a GET whose event stream must begin with the `endpoint` event (the URL the messages go to);
doctor stops there, without a session: that the server answers its SSE endpoint as the protocol says is the check.

Everything here blocks (subprocess, selectors, http.client) and keeps to `ends`, a time.monotonic() deadline;
doctor runs each server in a thread of its own, beside its asyncio probes. Nothing is imported by `doctor
--offline`, nor by a run whose agents have no MCP server.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urljoin, urlsplit

from agentcfg.lazyclass import dataclass

PROTOCOL_VERSION = "2025-06-18"
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "agentcfg-doctor", "version": "1"},
    },
}
LINE_LIMIT = 1024 * 1024  # an answer longer than this is no initialize result
STDERR_KEPT = 8 * 1024  # the end of what a server wrote on stderr, shown when it fails
STDERR_LINES = 5
GRACE = 0.1  # seconds between SIGTERM and SIGKILL


@dataclass
class Answer:
    """What one server did with `initialize`.

    kind: "ok" (a result with id 1), "error" (a JSON-RPC error with id 1), "garbage" (something that is not
    an answer), "exited" (a stdio server ended first), "missing" (no such program), "timeout" (nothing by the
    deadline), "unreachable" (no connection: refused, no such host, TLS), "status" (an HTTP status that is not 2xx)."""

    kind: str
    detail: str = ""  # what was seen, unmasked: the caller masks it
    server_name: str = ""  # serverInfo
    server_version: str = ""
    status: int | None = None  # HTTP
    stderr: str = ""  # a stdio server's last stderr lines
    elapsed: float = 0.0
    noise: int = 0  # lines before the answer that were no JSON-RPC message (a stdio server's logs on stdout)


def initialize_line() -> bytes:
    return (json.dumps(INITIALIZE, separators=(",", ":")) + "\n").encode()


def judge_message(message: Any) -> Answer | None:
    """The answer `message` (one JSON-RPC message, decoded) is, or None when it is something else (a
    notification, a request of the server's, an answer to another id)."""
    if not isinstance(message, dict) or message.get("id") != 1 or "method" in message:
        return None
    if isinstance(message.get("error"), dict):
        error = message["error"]
        return Answer("error", f"JSON-RPC error {error.get('code')}: {str(error.get('message', ''))[:300]}")
    result = message.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("protocolVersion"), str):
        return Answer("garbage", f"an answer with id 1 that is no initialize result: {json.dumps(message)[:300]}")
    info: dict[str, Any] = result["serverInfo"] if isinstance(result.get("serverInfo"), dict) else {}
    return Answer("ok", server_name=str(info.get("name", ""))[:100], server_version=str(info.get("version", ""))[:50])


def _decoded(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return _NOT_JSON


_NOT_JSON = object()


# -- stdio ---------------------------------------------------------------------------------------------------


def stdio(argv: Sequence[str], environ: Mapping[str, str], ends: float, program: str | None = None) -> Answer:
    """Start `argv` with `environ`, ask it `initialize`, end it (and all it started) by `ends` at the latest.
    `program`: the file argv[0] was found as (on the agents' PATH), run as it is, wherever the process starts."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="agentcfg-mcp-") as cwd:
        try:
            process = subprocess.Popen(
                list(argv),
                executable=program,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(environ),
                cwd=cwd,
                start_new_session=True,  # its own session and process group: no terminal, one group to end
                close_fds=True,
            )
        except FileNotFoundError as exc:
            return Answer("missing", f"{type(exc).__name__}: {exc.strerror}", elapsed=time.monotonic() - started)
        except OSError as exc:
            return Answer("exited", f"could not start: {type(exc).__name__}: {exc.strerror}")
        try:
            answer = _converse(process, ends)
        finally:
            stderr = _end(process)
        answer.stderr = _last_lines(answer.stderr.encode() + stderr if answer.stderr else stderr)
        answer.elapsed = time.monotonic() - started
        return answer


def _converse(process: subprocess.Popen[bytes], ends: float) -> Answer:
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    out, err = process.stdout.fileno(), process.stderr.fileno()
    try:
        process.stdin.write(initialize_line())
        process.stdin.flush()
    except OSError:  # it ended already (a broken pipe): what it said comes below
        pass
    buffer, errors = b"", bytearray()
    noise = 0
    garbage: str | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(out, selectors.EVENT_READ)
        selector.register(err, selectors.EVENT_READ)
        open_fds = {out, err}
        while out in open_fds:
            left = ends - time.monotonic()
            if left <= 0:
                return Answer("timeout", "no answer to initialize", stderr=errors.decode("utf-8", "replace"))
            for key, _ in selector.select(left):
                fd = int(key.fd)
                chunk = os.read(fd, 65536)
                if not chunk:
                    selector.unregister(fd)
                    open_fds.discard(fd)
                    continue
                if fd == err:
                    errors += chunk
                    del errors[:-STDERR_KEPT]
                    continue
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if not line.strip():
                        continue
                    message = _decoded(line)
                    if message is _NOT_JSON:
                        noise += 1
                        garbage = garbage or line[:200].decode("utf-8", "replace")
                        continue
                    if (found := judge_message(message)) is not None:
                        found.noise = noise
                        return found
                if len(buffer) > LINE_LIMIT:
                    return Answer("garbage", f"a line of more than {LINE_LIMIT} bytes")
    stderr = bytes(errors).decode("utf-8", "replace")
    if garbage is not None:
        return Answer("garbage", f"it wrote no JSON-RPC answer, only text such as: {garbage}", stderr=stderr)
    return Answer("exited", "it closed its output without answering initialize", stderr=stderr)


def _end(process: subprocess.Popen[bytes]) -> bytes:
    """End the process's group (SIGTERM, then SIGKILL for what is left), reap the process; the rest of its stderr."""
    if os.name == "posix":
        group = process.pid  # start_new_session: the group's id is its leader's PID, which is not reaped yet
        try:
            os.killpg(group, signal.SIGTERM)
            if not _group_gone(group, GRACE):
                os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # nothing left in it
            pass
    else:  # pragma: no cover - Windows: no process group to signal
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL'd: only its reaping can be late
        process.wait(timeout=1.0)
    rest = b""
    assert process.stderr is not None
    try:
        os.set_blocking(process.stderr.fileno(), False)
        rest = process.stderr.read() or b""
    except (OSError, ValueError):
        pass
    for stream in (process.stdin, process.stdout, process.stderr):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    return rest[-STDERR_KEPT:]


def _group_gone(group: int, wait: float) -> bool:
    """Whether the leader has ended and no other process is left in its group, within `wait` seconds. The
    leader is only looked at (WNOWAIT), not reaped: its PID, the group's id, stays ours while it is signalled.
    Without /proc to look in: False once `wait` is over (the caller sends SIGKILL, harmless to a group gone)."""
    ends = time.monotonic() + wait
    while True:
        if _exited(group) and _members(group) is False:
            return True
        if time.monotonic() >= ends:
            return False
        time.sleep(0.005)


def _exited(pid: int) -> bool:
    try:
        found = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except (ChildProcessError, AttributeError, OSError):
        return True
    return found is not None


def _members(group: int) -> bool | None:
    """Whether a live process other than its (ended) leader is in `group`; None: there is no /proc to say."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    for name in names:
        if not name.isdigit() or int(name) == group:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[2] == str(group).encode() and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _last_lines(data: bytes) -> str:
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    return "\n".join(line[:300] for line in lines[-STDERR_LINES:])


# -- remote --------------------------------------------------------------------------------------------------


def remote(url: str, transport: str, headers: Mapping[str, str], ends: float) -> Answer:
    """POST `initialize` to a streamable-HTTP server, or open a legacy SSE server's event stream (GET)."""
    import http.client  # lazy: only with a remote server to ask

    started = time.monotonic()
    parts = urlsplit(url)
    left = max(0.01, ends - time.monotonic())
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname or "", parts.port, timeout=left)
    try:
        try:
            connection.connect()  # refused, no such host, no route, TLS, or nothing by the deadline
        except OSError as exc:
            answer = Answer("unreachable", f"{type(exc).__name__}: {exc}"[:300])
        else:
            answer = _exchange(connection, parts, transport, headers, ends)
    except TimeoutError:
        answer = Answer("timeout", "no answer within the deadline")
    except (http.client.HTTPException, OSError, ValueError) as exc:  # the answer broke off, or is no HTTP
        answer = Answer("garbage", f"{type(exc).__name__}: {exc}"[:300])
    finally:
        connection.close()
    answer.elapsed = time.monotonic() - started
    return answer


def _exchange(connection: Any, parts: Any, transport: str, headers: Mapping[str, str], ends: float) -> Answer:
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    sent = {"User-Agent": "agentcfg-doctor", **headers}
    if transport == "sse":
        sent["Accept"] = "text/event-stream"
        connection.request("GET", target, headers=sent)
    else:
        sent.update({"Accept": "application/json, text/event-stream", "Content-Type": "application/json"})
        sent.setdefault("MCP-Protocol-Version", PROTOCOL_VERSION)
        connection.request("POST", target, body=initialize_line().strip(), headers=sent)
    _left(connection, ends)
    response = connection.getresponse()
    if not 200 <= response.status < 300:
        body = _read_some(response, connection, ends, 2000)
        return Answer("status", body.decode("utf-8", "replace")[:300], status=response.status)
    kind = (response.getheader("content-type") or "").split(";")[0].strip().lower()
    if transport == "sse":
        if kind != "text/event-stream":
            return Answer("garbage", f"a {kind or 'body'} where an event stream was asked for", status=response.status)
        return _endpoint_event(response, connection, ends, parts)
    if kind == "text/event-stream":
        return _sse_answer(response, connection, ends)
    body = _read_some(response, connection, ends, LINE_LIMIT)
    message = _decoded(body)
    found = None if message is _NOT_JSON else judge_message(message)
    if found is None:
        shown = body[:200].decode("utf-8", "replace")
        return Answer(
            "garbage", f"HTTP {response.status} {kind or '(no content type)'}: {shown}", status=response.status
        )
    found.status = response.status
    return found


def _left(connection: Any, ends: float) -> None:
    """The socket's timeout: what is left of the deadline (each read gets only that)."""
    left = ends - time.monotonic()
    if left <= 0:
        raise TimeoutError
    if connection.sock is not None:
        connection.sock.settimeout(left)


def _read_some(response: Any, connection: Any, ends: float, limit: int) -> bytes:
    data = b""
    while len(data) < limit:
        _left(connection, ends)
        chunk = response.read1(min(65536, limit - len(data)))
        if not chunk:
            break
        data += chunk
    return data


def _events(response: Any, connection: Any, ends: float) -> Any:
    """(event, data) of each event of an SSE stream, as they come."""
    event, data, size = "message", list[str](), 0
    while True:
        _left(connection, ends)
        raw = response.readline(LINE_LIMIT)
        if not raw:
            return
        size += len(raw)
        if size > 4 * LINE_LIMIT:
            return
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))


def _sse_answer(response: Any, connection: Any, ends: float) -> Answer:
    for _, data in _events(response, connection, ends):
        message = _decoded(data.encode())
        if message is not _NOT_JSON and (found := judge_message(message)) is not None:
            found.status = response.status
            return found
    return Answer("garbage", "an event stream that ended without the answer to initialize", status=response.status)


def _endpoint_event(response: Any, connection: Any, ends: float, parts: Any) -> Answer:
    for event, data in _events(response, connection, ends):
        if event == "endpoint":
            endpoint = urljoin(parts.geturl(), data.strip())
            return Answer("ok", f"its endpoint event names {urlsplit(endpoint).path}", status=response.status)
    return Answer("garbage", "an event stream that ended without the endpoint event", status=response.status)
