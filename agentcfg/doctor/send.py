"""Sending doctor's probes: httpx under asyncio, every probe at once under one deadline (the network edge).

Imported only when a run has something to send (`doctor --offline` never imports it). A direct client
loads its CA bundle at its first https request, not before: plain-http probes (a local vLLM) never need
one, and building the default TLS context is a noticeable part of a healthy doctor run.
"""

from __future__ import annotations

import asyncio
import importlib.util
import ssl
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentcfg.doctor.replies import still_sending
from agentcfg.doctor.wire import BODY_LIMIT, REDIRECTS, Probe, Result, error_kind, import_httpx, verify

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
    proxy: str | None, ca_file: str | None, timeout: httpx.Timeout, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """The client for the probes that share a proxy and a CA file. Through a proxy it is built as before,
    its TLS context at once (the proxy's own URL may be https); direct, with a TLSOnDemand transport. A given
    `transport` (a test's httpx.MockTransport) answers every request instead, proxied or not."""
    options: dict[str, Any] = {"trust_env": False, "timeout": timeout, "follow_redirects": True}
    if transport is not None:
        return httpx.AsyncClient(transport=transport, max_redirects=REDIRECTS, **options)
    if proxy is None:
        return httpx.AsyncClient(transport=TLSOnDemand(ca_file), max_redirects=REDIRECTS, **options)
    return httpx.AsyncClient(proxy=proxy, verify=verify(ca_file), max_redirects=REDIRECTS, **options)


async def _send(client: Any, probe: Probe, result: Result) -> None:
    started = time.monotonic()

    async def trace(event: str, info: dict[str, Any]) -> None:
        # Whether the server took the connection: a timeout after it did is a server that is up but
        # silent (loading, overloaded), not one nothing listens on.
        if event == "connection.connect_tcp.complete":
            result.extra["connected"] = True
        elif event.endswith(".send_request_body.complete"):
            result.extra["sent"] = True

    chunks: list[bytes] = []
    try:
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
        except asyncio.CancelledError:  # the deadline, while the body came: what came is kept, _run judges it
            result.truncated = bool(chunks)
            raise
        finally:
            result.body = b"".join(chunks)[:BODY_LIMIT].decode("utf-8", "replace")
            await response.aclose()
    except Exception as exc:
        result.error = error_kind(exc)
        result.detail = f"{type(exc).__name__}: {exc}"[:500]
    finally:
        result.elapsed = time.monotonic() - started


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


async def _run(
    probes: list[Probe],
    deadline: float,
    progress: Callable[[int, int], None] | None,
    follow: Callable[[Result], list[Probe]] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[Result]:
    results = [Result(p) for p in probes]
    clients: dict[tuple[str | None, str | None], httpx.AsyncClient] = {}
    timeout = httpx.Timeout(deadline, connect=min(deadline, 5.0))
    tasks: list[asyncio.Future[None]] = []
    done_count = 0

    def _done(_task: asyncio.Future[None]) -> None:
        nonlocal done_count
        done_count += 1
        if progress:
            progress(done_count, len(tasks))

    def start(probe: Probe, result: Result) -> None:
        if (probe.proxy, probe.ca_file) not in clients:
            clients[probe.proxy, probe.ca_file] = new_client(probe.proxy, probe.ca_file, timeout, transport)
        task = asyncio.ensure_future(_chained(clients[probe.proxy, probe.ca_file], probe, result))
        task.add_done_callback(_done)
        tasks.append(task)

    async def _chained(client: httpx.AsyncClient, probe: Probe, result: Result) -> None:
        await _send(client, probe, result)
        for after in follow(result) if follow else []:  # a request that needs this one's answer: same deadline
            results.append(Result(after))
            start(after, results[-1])

    for probe, result in zip(probes, results, strict=True):
        start(probe, result)
    ends = asyncio.get_running_loop().time() + deadline
    while pending := [t for t in tasks if not t.done()]:  # a chained request joins while the others run
        left = ends - asyncio.get_running_loop().time()
        if left <= 0:
            break
        await asyncio.wait(pending, timeout=left, return_when=asyncio.FIRST_COMPLETED)
    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for n, (result, task) in enumerate(zip(results, tasks, strict=True)):
        if task.cancelled() and result.error is None:
            if n < len(probes):  # a chained request keeps its own elapsed time (it started later)
                result.elapsed = deadline
            if not still_sending(result):  # else doctor stopped reading, not the server sending: judged as read
                result.error, result.detail = "timeout", f"no complete answer within the {deadline:g} s deadline"
    for client in clients.values():
        await client.aclose()
    return results


def run(
    probes: list[Probe],
    deadline: float,
    progress: Callable[[int, int], None] | None = None,
    follow: Callable[[Result], list[Probe]] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[Result]:
    """Send every probe at once; whatever has not finished at `deadline` seconds is a timeout. `follow` gives,
    for an answer that came, the requests to send next (a second turn), under the same deadline; their
    results come after the probes', in the order they were started. `transport`: what answers instead of the
    network (httpx.MockTransport in a test)."""
    return asyncio.run(_run(probes, deadline, progress, follow, transport))
