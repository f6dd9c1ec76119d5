"""The network edge of `agentcfg bench`: requests sent with httpx under asyncio, and their timing.

One httpx.AsyncClient (one connection pool) per profile; an asyncio semaphore keeps `concurrency`
requests in flight; each request has its own timeout and the whole run one deadline. Ctrl-C (SIGINT)
stops the run at once and returns what finished before it. Timestamps are `time.perf_counter()`
taken when httpx hands over each chunk, before anything is parsed.

A profile's key goes only to that profile's own hosts (keystore.auth_headers refuses any other),
and requests follow the proxy variables the way agentcfg's own requests do (agentcfg.doctor.proxies).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from agentcfg import env, keystore, profiles
from agentcfg.apply import Journal
from agentcfg.bench import metrics
from agentcfg.bench.measure import STREAM, Record, StreamMeter, http_error, prompt, read_answer, request_body
from agentcfg.bench.summary import Phase, ProfileRun, Run, Settings
from agentcfg.doctor import proxies
from agentcfg.doctor.probes import error_kind, verify
from agentcfg.lazyclass import dataclass
from agentcfg.profiles import Profile

WARMUP_TOKENS = 8  # a warm-up request opens a pooled connection and wakes the server; it is not measured
METRICS_SETTLE = (0.05, 0.1, 0.2, 0.4)  # waits for vLLM's counters to catch up with the last answers
Progress = Callable[[str, str, int, int, int], None]  # profile, mode, done, total, failed
T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """A profile as bench sends to it: URLs, and headers already checked against the profile's hosts."""

    name: str
    base_url: str
    model: str
    headers: tuple[tuple[str, str], ...] = ()
    metrics_url: str | None = None
    metrics_headers: tuple[tuple[str, str], ...] = ()
    proxy: str | None = None
    ca_file: str | None = None

    @property
    def chat_url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    @property
    def models_url(self) -> str:
        return self.base_url.rstrip("/") + "/models"


def metrics_address(base_url: str) -> str:
    """vLLM serves /metrics beside /v1, at the server's root: http://h:8000/v1 -> http://h:8000/metrics."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    path = path[: -len("/v1")] if path.endswith("/v1") else path
    return urlunsplit((parts.scheme, parts.netloc, path + "/metrics", "", ""))


def target(profile: Profile, environ: env.Environ) -> tuple[Target, str | None]:
    """A profile's target, and a note on where its key came from when that is worth saying.

    A keyed profile without a key stops here (exit 2, naming `agentcfg key set`), before anything is sent.
    """
    resolved = keystore.resolve(profile, environ)
    key = resolved.value if resolved else None
    found = Target(profile.name, profile.base_url, profile.model, metrics_url=metrics_address(profile.base_url))
    found = replace(
        found,
        headers=tuple(keystore.auth_headers(profile, found.chat_url, key).items()),
        metrics_headers=tuple(keystore.auth_headers(profile, str(found.metrics_url), key).items()),
        proxy=proxies.proxy_for("agentcfg", found.chat_url, environ),
        ca_file=environ.get("SSL_CERT_FILE") or None,
    )
    return found, resolved.note if resolved else None


def default_profile(environ: env.Environ) -> str:
    """The profile of the last switch still in the journal (what `agentcfg status` shows), else local."""
    entries = [e for e in Journal(environ).entries() if e.manifest["kind"] == "switch"]
    name = entries[-1].manifest.get("profile") if entries else None
    return name if name in profiles.load_all(environ) else "local"


# -- one request ---------------------------------------------------------------------------------------


async def _exchange(client: Any, request: Any, record: Record, meter: StreamMeter | None) -> None:
    record.sent = time.perf_counter()
    response = await client.send(request, stream=True)
    try:
        record.status = response.status_code
        if response.status_code != 200:
            record.error = http_error(response.status_code, await response.aread())
            return
        if meter is not None:
            async for chunk in response.aiter_bytes():
                meter.feed(time.perf_counter(), chunk)
            meter.close()
            return
        parts = []
        async for chunk in response.aiter_bytes():
            parts.append(chunk)
        record.ended = time.perf_counter()
        read_answer(record, b"".join(parts))
    finally:
        await response.aclose()


async def request(
    client: Any, target: Target, mode: str, index: int, settings: Settings, ignore_eos: bool, max_tokens: int
) -> Record:
    """Send one chat completion and time it; a failure is a Record with its error, never an exception."""
    body = request_body(
        target.model,
        prompt(settings.prompt_tokens, os.urandom(4).hex()),
        max_tokens,
        stream=mode == STREAM,
        ignore_eos=ignore_eos,
    )
    headers = {**dict(target.headers), "content-type": "application/json"}
    built = client.build_request("POST", target.chat_url, headers=headers, content=json.dumps(body).encode())
    record = Record(mode, index, sent=time.perf_counter())
    meter = StreamMeter(record) if mode == STREAM else None
    try:
        await asyncio.wait_for(_exchange(client, built, record, meter), settings.timeout)
    except Exception as exc:  # the transport's failure, named the way doctor names it
        if meter is not None:
            meter.settle()  # the tokens that did come, for the message
        kind = error_kind(exc)
        if kind == "refused" and target.proxy:  # the connection that failed was the one to the proxy
            kind = "proxy"
        if kind == "timeout":
            got = f"stalled after {len(record.token_times)} token chunks" if record.token_times else "no token came"
            record.error = f"timeout: no complete answer within {settings.timeout:g} s ({got})"
        else:
            record.error = f"{kind}: {type(exc).__name__}: {exc}"[:300]
    return record


# -- the run ---------------------------------------------------------------------------------------------


class Stopped(Exception):
    """Ctrl-C or the deadline came first."""


class _Control:
    """Ctrl-C and the deadline: anything awaited through `until_stopped` gives way to either."""

    def __init__(self, deadline: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.deadline_at = self.loop.time() + deadline
        self.stop = asyncio.Event()
        self.reason: str | None = None

    def interrupt(self) -> None:
        self.reason = self.reason or "ctrl-c"
        self.stop.set()

    async def until_stopped(self, awaitable: Awaitable[T]) -> T:
        task = asyncio.ensure_future(awaitable)
        stopper = asyncio.ensure_future(self.stop.wait())
        try:
            remaining = max(0.0, self.deadline_at - self.loop.time())
            done, _ = await asyncio.wait({task, stopper}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        self.reason = self.reason or "deadline"
        raise Stopped


async def _get(client: Any, url: str, headers: tuple[tuple[str, str], ...]) -> Any:
    try:
        response = await client.get(url, headers=dict(headers), timeout=min(5.0, client.timeout.read))
    except Exception:
        return None
    return response if response.status_code == 200 else None


async def _is_vllm(client: Any, target: Target) -> bool:
    """vLLM's /v1/models says `owned_by: "vllm"`; only then is `ignore_eos` sent (others may reject it)."""
    response = await _get(client, target.models_url, target.headers)
    try:
        models = response.json()["data"] if response is not None else []
        return any(isinstance(m, dict) and m.get("owned_by") == "vllm" for m in models)
    except (ValueError, KeyError, TypeError, RecursionError):  # RecursionError: `[[[[...` past json's limit
        return False


async def _scrape(client: Any, target: Target) -> metrics.Samples | None:
    if not target.metrics_url:
        return None
    response = await _get(client, target.metrics_url, target.metrics_headers)
    samples = metrics.parse(response.text) if response is not None else None
    return samples if samples and metrics.is_vllm(samples) else None


async def _server_view(client: Any, target: Target, before: metrics.Samples, answered: int) -> Any:
    """vLLM's histograms over the phase, once its counters include every answered request."""
    result = None
    for wait in (0.0, *METRICS_SETTLE):
        await asyncio.sleep(wait)
        after = await _scrape(client, target)
        result = metrics.deltas(before, after, target.model) if after else None
        if result is not None and metrics.served(result) >= answered:
            break
    return result


async def _phase(
    client: Any, target: Target, phase: Phase, settings: Settings, ignore_eos: bool, progress: Progress | None
) -> None:
    """`concurrency` workers, each sending the next request when its last one is done: a request is made when it
    is sent, never all of them up front (-n is up to 10,000, and was once unbounded)."""
    indices = iter(range(phase.planned))  # shared: each worker takes the next index

    def report() -> None:
        if progress:
            failed = sum(not r.ok for r in phase.records)
            progress(target.name, phase.mode, len(phase.records), phase.planned, failed)

    async def worker() -> None:
        for index in indices:
            record = await request(client, target, phase.mode, index, settings, ignore_eos, settings.max_tokens)
            phase.records.append(record)
            report()

    report()
    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker() for _ in range(min(settings.concurrency, phase.planned))))
    finally:
        phase.wall = time.perf_counter() - started


async def _profile(
    client: Any, target: Target, profile: ProfileRun, settings: Settings, control: _Control, progress: Progress | None
) -> None:
    profile.ignore_eos = await control.until_stopped(_is_vllm(client, target))
    warmups = min(settings.concurrency, settings.requests)
    warm = await control.until_stopped(
        asyncio.gather(
            *(request(client, target, STREAM, -1, settings, profile.ignore_eos, WARMUP_TOKENS) for _ in range(warmups))
        )
    )
    # A server that takes connections and never answers would cost every request its full timeout.
    hung = all(r.error and r.error.startswith("timeout") for r in warm)
    for mode in settings.modes:
        phase = profile.phases[mode] = Phase(mode, planned=settings.requests)
        if hung:
            phase.skipped = f"not sent: the warm-up request failed ({warm[0].error})"
            continue
        before = await control.until_stopped(_scrape(client, target))
        profile.metrics_url = target.metrics_url if before is not None else None
        await control.until_stopped(_phase(client, target, phase, settings, profile.ignore_eos, progress))
        if before is not None:
            answered = sum(r.ok for r in phase.records)
            phase.server = await control.until_stopped(_server_view(client, target, before, answered))


async def _run(targets: list[Target], settings: Settings, progress: Progress | None) -> Run:
    import httpx

    control = _Control(settings.deadline)
    run = Run(settings, [ProfileRun(t.name, t.base_url, t.model, t.proxy) for t in targets])
    started = time.perf_counter()
    try:
        control.loop.add_signal_handler(signal.SIGINT, control.interrupt)
        handled = True
    except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
        handled = False
    try:
        for target_, profile in zip(targets, run.profiles, strict=True):
            # One pool per profile: `concurrency` connections for the requests, one for /metrics.
            limits = httpx.Limits(max_connections=settings.concurrency + 1, max_keepalive_connections=None)
            timeout = httpx.Timeout(settings.timeout, connect=min(settings.timeout, 10.0))
            async with httpx.AsyncClient(
                proxy=target_.proxy, trust_env=False, timeout=timeout, limits=limits, verify=verify(target_.ca_file)
            ) as client:
                await _profile(client, target_, profile, settings, control, progress)
    except Stopped:
        run.interrupted = control.reason
    finally:
        if handled:
            control.loop.remove_signal_handler(signal.SIGINT)
        run.elapsed = time.perf_counter() - started
    return run


def run(targets: list[Target], settings: Settings, progress: Progress | None = None) -> Run:
    """Benchmark each target in turn, each mode in turn; returns what was measured, also when stopped."""
    return asyncio.run(_run(targets, settings, progress))
