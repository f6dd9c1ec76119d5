"""Sending doctor's probes: every probe at once under one deadline, on asyncio (the network edge).

Imported only when a run has something to send (`doctor --offline` never imports it). A plain-http probe
straight to its server (a local vLLM, a router) goes out through plainhttp, which needs no more than asyncio;
the others (https, a proxy, a redirect to follow, a test's httpx.MockTransport) through httpx (viahttpx),
imported at the first probe that needs it: a healthy local run never loads httpx, httpcore or anyio.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentcfg.doctor import plainhttp
from agentcfg.doctor.replies import still_sending
from agentcfg.doctor.wire import Probe, Result, error_kind

if TYPE_CHECKING:
    import httpx


async def _send(
    client: Callable[[Probe], Any], probe: Probe, result: Result, connect_timeout: float, direct: bool
) -> None:
    """Send `probe`, filling `result`; `client(probe)`: the httpx client for a probe plainhttp does not send
    (`direct`: whether it may)."""
    started = time.monotonic()
    try:
        if direct and plainhttp.takes(probe):
            try:
                await plainhttp.send(probe, result, connect_timeout, started)
                return
            except plainhttp.Redirected:  # httpx follows it, from the first request on, as before
                result.extra.clear()
        from agentcfg.doctor import viahttpx  # lazy: httpx loads only for a probe plainhttp does not send

        await viahttpx.send(client(probe), probe, result, started)
    except Exception as exc:
        result.error = error_kind(exc)
        result.detail = f"{type(exc).__name__}: {exc}"[:500]
    finally:
        result.elapsed = time.monotonic() - started


async def _run(
    probes: list[Probe],
    deadline: float,
    progress: Callable[[int, int], None] | None,
    follow: Callable[[Result], list[Probe]] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[Result]:
    results = [Result(p) for p in probes]
    clients: dict[tuple[str | None, str | None], httpx.AsyncClient] = {}
    tasks: list[asyncio.Future[None]] = []
    done_count = 0

    def _done(_task: asyncio.Future[None]) -> None:
        nonlocal done_count
        done_count += 1
        if progress:
            progress(done_count, len(tasks))

    def client_for(probe: Probe) -> httpx.AsyncClient:
        """The httpx client for the probes that share its proxy and CA file, made at the first of them."""
        from agentcfg.doctor import viahttpx  # lazy: as in _send

        if (probe.proxy, probe.ca_file) not in clients:
            clients[probe.proxy, probe.ca_file] = viahttpx.new_client(probe.proxy, probe.ca_file, deadline, transport)
        return clients[probe.proxy, probe.ca_file]

    def start(probe: Probe, result: Result) -> None:
        task = asyncio.ensure_future(_chained(probe, result))
        task.add_done_callback(_done)
        tasks.append(task)

    async def _chained(probe: Probe, result: Result) -> None:
        await _send(client_for, probe, result, min(deadline, 5.0), transport is None)
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
    for made in clients.values():
        await made.aclose()
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
