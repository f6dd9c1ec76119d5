"""Sending a plain-http probe straight, without httpx: a local vLLM, a LiteLLM router, the tests' servers.

httpx, httpcore, h11 and anyio took a third of a healthy local doctor run to import, for requests that need none
of what they do: no TLS, no proxy, no connection pool, one request per connection. Here a probe is one HTTP/1.1
request over an asyncio connection, its answer read as httpx reads it (Content-Length, chunked or to the close),
with the same bookkeeping (Result.extra's connected, sent, first_byte, last_byte; BODY_LIMIT). A redirect is
left to httpx (send.py sends the probe again through it): following one, to https say, is what httpx is for.
Errors are raised as the exceptions httpx raises in those cases, with httpx's messages, so a finding's evidence
reads the same whichever sender saw it.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any
from urllib.parse import SplitResult, quote, urlsplit

from agentcfg.doctor.wire import BODY_LIMIT, Probe, Result
from agentcfg.patterns import lazy

REDIRECT_STATUSES = frozenset((301, 302, 303, 307, 308))
_HEAD_LIMIT = 64 * 1024  # a status line and headers longer than this are no HTTP server's answer
_USER_AGENT = "agentcfg-doctor"
# What a path and a query may hold as written; anything else is percent-encoded (as httpx encodes a URL)
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE = _PATH_SAFE + "?"
_TOKEN = lazy(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # a header's name (RFC 9110)


class TransportError(Exception):
    """A failure httpx reports as an exception of the same name (`kind`: wire.error_kind's word for it)."""

    kind = "other"

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind


class ConnectError(TransportError):
    kind = "refused"


class ConnectTimeout(TransportError):
    kind = "timeout"


class ReadError(TransportError):
    kind = "reset"


class RemoteProtocolError(TransportError):
    kind = "reset"


class LocalProtocolError(TransportError):
    kind = "protocol"


def takes(probe: Probe) -> bool:
    """Whether this sender sends `probe`: plain http, straight to the server (no proxy, so no CA file in use), to
    a URL with an ASCII host and a port that is a number (httpx encodes or explains any other)."""
    if probe.proxy is not None or probe.url[:7].lower() != "http://":
        return False
    try:
        url = urlsplit(probe.url)
        host = url.hostname or ""
        return bool(host) and host.isascii() and (url.port or 80) > 0
    except ValueError:
        return False


class Redirected(Exception):
    """The answer is a redirect: httpx follows it (send.py)."""


async def send(probe: Probe, result: Result, connect_timeout: float, started: float) -> None:
    """Send `probe` and fill `result` as send.py's httpx sender does (`started`: when, by time.monotonic);
    Redirected for an answer that redirects, before anything of it is in `result`."""
    url = urlsplit(probe.url)
    host, port = url.hostname or "", url.port or 80  # takes() saw both
    request = _request(probe, url)  # a header that cannot be sent is refused before any connection, as by httpx
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), connect_timeout)
    except asyncio.TimeoutError:
        raise ConnectTimeout("") from None
    except socket.gaierror as exc:  # the name does not resolve
        raise ConnectError(str(exc), "dns") from exc
    except OSError as exc:
        raise ConnectError("All connection attempts failed") from exc
    result.extra["connected"] = True
    try:
        writer.write(request)
        await writer.drain()
        result.extra["sent"] = True
        status, headers = await _head(reader)
        if status in REDIRECT_STATUSES and "location" in headers:
            raise Redirected
        result.status = status
        result.content_type = headers.get("content-type", "")
        if model_id := headers.get("x-litellm-model-id"):  # which of a router's legs answered
            result.extra["model_id"] = model_id[:200]
        if headers.get("location"):
            result.extra["location"] = headers["location"]
        await _body(reader, headers, status, result, started)
    except (ConnectionError, OSError) as exc:
        raise ReadError(str(exc)) from exc
    finally:
        writer.close()


def _request(probe: Probe, url: SplitResult) -> bytes:
    """The request's bytes, with the headers httpx would send but the compression it offers (none is read here)."""
    target = quote(url.path or "/", safe=_PATH_SAFE) + (f"?{quote(url.query, safe=_QUERY_SAFE)}" if url.query else "")
    default_port = url.port in (None, 80)
    host = url.hostname or ""
    host = f"[{host}]" if ":" in host else host
    host_header = host if default_port else f"{host}:{url.port}"
    sent = [("Host", host_header), ("Accept", "*/*"), ("Connection", "close"), ("User-Agent", _USER_AGENT)]
    body = b""
    if probe.body is not None:  # as httpx encodes json=: compact, UTF-8, no NaN
        body = json.dumps(probe.body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        sent += [("Content-Length", str(len(body))), ("Content-Type", "application/json")]
    headers = {name.lower(): (name, value) for name, value in sent}
    for name, value in probe.headers:  # the probe's own, spelt as given (as httpx sends them): they win
        # never a line of its own, nor a character sent as another (httpx refuses a value that is not ASCII too)
        if not _TOKEN.fullmatch(name) or not value.isascii() or any(c in value for c in "\r\n\0"):
            raise LocalProtocolError("Illegal header name or value")  # not shown: a value may be a key
        headers[name.lower()] = (name, value)
    if any(c in host_header for c in " \r\n\0/"):
        raise LocalProtocolError("Illegal host")
    lines = [f"{probe.method} {target} HTTP/1.1", *(f"{name}: {value}" for name, value in headers.values())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + body


async def _head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    """The status and headers (names lower-cased, repeated ones joined by commas, as httpx.Headers.get gives
    them), after any 1xx interim answer."""
    while True:
        try:
            block = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                raise RemoteProtocolError("Server disconnected without sending a response.") from None
            raise RemoteProtocolError("peer closed connection without sending complete message body") from None
        except asyncio.LimitOverrunError:
            raise RemoteProtocolError("the status line and headers are too long") from None
        lines = block.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit() or len(parts[1]) != 3:
            raise RemoteProtocolError(f"illegal status line: {bytearray(lines[0][:100].encode('latin-1'))!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip():
                raise RemoteProtocolError(f"illegal header line: {line[:100]!r}")
            name, value = name.lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        status = int(parts[1])
        if not 100 <= status < 200 or status == 101:
            return status, headers


async def _body(
    reader: asyncio.StreamReader, headers: dict[str, str], status: int, result: Result, started: float
) -> None:
    """Read the body into result.body, up to BODY_LIMIT, as send.py's httpx sender reads it."""
    chunks: list[bytes] = []
    try:
        result.truncated = await _read(reader, headers, status, chunks, result.extra, started)
    except asyncio.CancelledError:  # the deadline, while the body came: what came is kept, send.py judges it
        result.truncated = bool(chunks)
        raise
    finally:
        result.body = b"".join(chunks)[:BODY_LIMIT].decode("utf-8", "replace")


async def _read(
    reader: asyncio.StreamReader, headers: dict[str, str], status: int, chunks: list[bytes], extra: dict[str, Any],
    started: float,
) -> bool:  # fmt: skip
    """Whether doctor stopped before the body's end; `extra` gets when its first and last bytes came."""
    size = 0

    def keep(chunk: bytes) -> bool:
        nonlocal size
        extra.setdefault("first_byte", time.monotonic() - started)
        extra["last_byte"] = time.monotonic() - started
        chunks.append(chunk)
        size += len(chunk)
        return size > BODY_LIMIT  # more than doctor reads (a body of exactly BODY_LIMIT is read whole)

    if status in (204, 304):
        return False
    if "chunked" in headers.get("transfer-encoding", "").lower():
        while True:
            line = await _line(reader)
            try:
                length = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise RemoteProtocolError("illegal chunk size") from None
            if length == 0:
                return False
            while length:
                chunk = await reader.read(min(length, 65536))
                if not chunk:
                    raise RemoteProtocolError(
                        "peer closed connection without sending complete message body (incomplete chunked read)"
                    )
                length -= len(chunk)
                if keep(chunk):
                    return True
            await _line(reader)  # the CRLF after a chunk's data
    if "content-length" in headers:
        try:
            left = int(headers["content-length"])
        except ValueError:
            raise RemoteProtocolError("illegal Content-Length") from None
        while left > 0:
            chunk = await reader.read(min(left, 65536))
            if not chunk:
                raise RemoteProtocolError(
                    f"peer closed connection without sending complete message body (received {size} bytes, "
                    f"expected {int(headers['content-length'])})"
                )
            left -= len(chunk)
            if keep(chunk):
                return True
        return False
    while chunk := await reader.read(65536):  # neither: the body runs to the close
        if keep(chunk):
            return True
    return False


async def _line(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.readuntil(b"\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        raise RemoteProtocolError(
            "peer closed connection without sending complete message body (incomplete chunked read)"
        ) from None
