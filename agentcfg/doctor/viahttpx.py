"""Sending a probe through httpx: https (verified as the agent verifies), a proxy, a redirect to follow, and a
test's transport. send.py imports this module only when a probe needs it: a plain-http probe straight to its
server goes out through plainhttp.

A direct client loads its CA bundle at its first https request, not before: plain-http requests it sends (a
redirect's first hop) never need one, and building the default TLS context is a noticeable part of a run.
"""

from __future__ import annotations

import asyncio
import importlib.util
import ssl
import sys
import time
from typing import TYPE_CHECKING, Any

from agentcfg.doctor.wire import BODY_LIMIT, REDIRECTS, Probe, Result, import_httpx, verify

if TYPE_CHECKING:
    import httpx
else:
    httpx = import_httpx()

# httpcore asks sniffio which event loop runs at every request, and takes asyncio when sniffio is not installed
# (anyio 4 no longer needs it): then each of those imports searched all of sys.path again. None in sys.modules
# makes it fail at once, with the same answer; an installed sniffio is left alone (it is no dependency of ours).
if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
    sys.modules["sniffio"] = None  # type: ignore[assignment]


class TLSOnDemand(httpx.AsyncBaseTransport):
    """The transport of `httpx.AsyncClient(verify=verify(ca_file), trust_env=False)`, in two halves.

    http:// requests go to a transport whose TLS context trusts nothing and is never used (httpcore wraps
    no plain-http connection in TLS, and a proxy never reaches this transport); every other request goes
    to the verifying transport, built as httpx builds it, at the first such request. So every https
    request, a redirect from http to https too, is verified exactly as by a client built with verify=.
    """

    def __init__(self, ca_file: str | None) -> None:
        self._ca_file = ca_file
        self._plain = httpx.AsyncHTTPTransport(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), trust_env=False)
        self._tls: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme == "http":
            return await self._plain.handle_async_request(request)
        if self._tls is None:
            self._tls = httpx.AsyncHTTPTransport(verify=verify(self._ca_file), trust_env=False)
        return await self._tls.handle_async_request(request)

    async def aclose(self) -> None:
        await self._plain.aclose()
        if self._tls is not None:
            await self._tls.aclose()


def new_client(
    proxy: str | None, ca_file: str | None, deadline: float, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """The client for the probes that share a proxy and a CA file. Through a proxy it is built as before,
    its TLS context at once (the proxy's own URL may be https); direct, with a TLSOnDemand transport. A given
    `transport` (a test's httpx.MockTransport) answers every request instead, proxied or not."""
    timeout = httpx.Timeout(deadline, connect=min(deadline, 5.0))
    options: dict[str, Any] = {"trust_env": False, "timeout": timeout, "follow_redirects": True}
    if transport is not None:
        return httpx.AsyncClient(transport=transport, max_redirects=REDIRECTS, **options)
    if proxy is None:
        return httpx.AsyncClient(transport=TLSOnDemand(ca_file), max_redirects=REDIRECTS, **options)
    return httpx.AsyncClient(proxy=proxy, verify=verify(ca_file), max_redirects=REDIRECTS, **options)


async def send(client: Any, probe: Probe, result: Result, started: float) -> None:
    """Send `probe` through `client` and fill `result` (`started`: when, by time.monotonic)."""

    async def trace(event: str, info: dict[str, Any]) -> None:
        # Whether the server took the connection: a timeout after it did is a server that is up but
        # silent (loading, overloaded), not one nothing listens on.
        if event == "connection.connect_tcp.complete":
            result.extra["connected"] = True
        elif event.endswith(".send_request_body.complete"):
            result.extra["sent"] = True

    chunks: list[bytes] = []
    request = client.build_request(
        probe.method, probe.url, headers=dict(probe.headers), json=probe.body, extensions={"trace": trace}
    )
    response = await client.send(request, stream=True)
    try:
        result.status = response.status_code
        result.content_type = response.headers.get("content-type", "")
        if model_id := response.headers.get("x-litellm-model-id"):  # which of a router's legs answered
            result.extra["model_id"] = model_id[:200]
        if response.headers.get("location"):
            result.extra["location"] = response.headers["location"]
        if response.history:  # followed as the agents follow them (see REDIRECTS)
            result.extra["redirects"] = [(r.status_code, r.headers.get("location", "")) for r in response.history]
            result.extra["final_url"] = str(response.url)
        result.truncated = await _read(response, chunks, result.extra, started)
    except asyncio.CancelledError:  # the deadline, while the body came: what came is kept, send.py judges it
        result.truncated = bool(chunks)
        raise
    finally:
        result.body = b"".join(chunks)[:BODY_LIMIT].decode("utf-8", "replace")
        await response.aclose()


async def _read(response: httpx.Response, chunks: list[bytes], extra: dict[str, Any], started: float) -> bool:
    """Read the body into `chunks`, up to BODY_LIMIT; whether doctor stopped before its end. When the first and
    the last byte came (seconds after the request started) go into `extra`."""
    size = 0
    async for chunk in response.aiter_bytes():
        extra.setdefault("first_byte", time.monotonic() - started)
        extra["last_byte"] = time.monotonic() - started
        chunks.append(chunk)
        size += len(chunk)
        if size > BODY_LIMIT:  # more than doctor reads (a body of exactly BODY_LIMIT is read whole)
            return True
    return False
