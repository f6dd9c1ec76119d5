"""The server's HTTP side, on loopback and never through a proxy: the waits until it serves (/health, /v1/models,
a one-token completion), what it serves, and the requests in flight a restart drains."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from typing import Any

from agentcfg import env, redact
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import Profile
from agentcfg.serve import command as commands

COMPLETION_TRIES = 5  # one-token requests that fail with a 5xx before the engine is taken for dead
Tick = Callable[[str, float], None]  # (phase, seconds so far) for progress on a terminal


def _request(url: str, key: str | None, timeout: float, body: dict[str, Any] | None = None) -> tuple[int, bytes]:
    """GET (or POST `body` as JSON) to the server on loopback, never through a proxy: its status and body."""
    import urllib.error
    import urllib.request

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    data = None if body is None else json.dumps(body).encode()
    if data is not None:
        headers["Content-Type"] = "application/json"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(urllib.request.Request(url, data, headers=headers), timeout=timeout) as response:
            return response.status, response.read(1 << 20)
    except urllib.error.HTTPError as error:
        return error.code, error.read(1 << 16)


def served(root: str, key: str | None, timeout: float = 10) -> dict[str, Any] | None:
    """The first model /v1/models lists (id, max_model_len), or None when it does not answer so."""
    try:
        status, body = _request(root + "/v1/models", key, timeout)
        data = json.loads(body)["data"] if status == 200 else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else None


def compare(profile: Profile, model: dict[str, Any]) -> list[str]:
    """Where what the server serves differs from the profile (pure)."""
    problems = []
    if model.get("id") != profile.model:
        problems.append(f"it serves {model.get('id')!r}, the profile's model is {profile.model!r}")
    window = model.get("max_model_len")
    if profile.context_window and isinstance(window, int) and window != profile.context_window:
        problems.append(f"its window is {window:,} tokens, the profile's {profile.context_window:,}")
    return problems


def one_token(root: str, model: str, key: str | None, timeout: float = 60) -> str | None:
    """Why a one-token chat completion fails (None: it answered): /health can say 200 while the engine is dead."""
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1, "stream": False}
    try:
        status, text = _request(root + "/v1/chat/completions", key, timeout, body)
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"
    if status != 200:
        return f"HTTP {status}: {redact.terminal_safe(text.decode('utf-8', 'replace'))[:300]}"
    return None


def wait_ready(
    root: str,
    profile: Profile,
    key: str | None,
    alive: Callable[[], bool],
    timeout: float,
    tick: Tick | None = None,
    interrupted: Callable[[], None] = lambda: None,
) -> dict[str, float]:
    """Wait for /health, then /v1/models (the served name and window checked), then a one-token completion: the
    seconds each was reached at. The process gone or too slow: AgentcfgError (the caller stops what it started)."""
    started = time.monotonic()
    reached: dict[str, float] = {}
    failures: list[str] = []
    phase = "health"
    while (elapsed := time.monotonic() - started) < timeout:
        interrupted()
        if not alive():
            raise AgentcfgError(f"vLLM exited before it was ready (waiting for {phase})")
        if phase == "health":
            with contextlib.suppress(OSError):
                if _request(root + "/health", None, 5)[0] == 200:
                    reached["health"], phase = elapsed, "models"
                    continue
        elif phase == "models":
            model = served(root, key)
            if model is not None:
                if model.get("id") != profile.model:
                    raise AgentcfgError(
                        f"vLLM serves {model.get('id')!r}, not the profile's model {profile.model!r}: the agents "
                        "would get 404s",
                        hint="Remove the --served-model-name given after `--`: agentcfg sets it from the profile.",
                    )
                reached["models"], phase = time.monotonic() - started, "completion"
                continue
        else:
            why = one_token(root, profile.model, key, timeout=max(5.0, min(120.0, timeout - elapsed)))
            if why is None:
                reached["completion"] = time.monotonic() - started
                return reached
            failures.append(why)
            # /health and /v1/models answered: the engine should serve now. A 4xx is final; a 5xx or a dropped
            # connection a few times over means an engine that is dead while /health still says 200.
            if not why.startswith(("HTTP 5", "URLError", "RemoteDisconnected", "ConnectionRe", "TimeoutError")) or (
                len(failures) >= COMPLETION_TRIES
            ):
                raise AgentcfgError(f"vLLM answers /health but a one-token completion failed: {why}")
        if tick:
            tick(phase, elapsed)
        time.sleep(0.5)
    raise AgentcfgError(f"vLLM was not ready within {timeout:.0f} s (waiting for {phase})")


def root_url(built: commands.Command) -> str:
    return _root(built.host, built.port)


def _root(host: str, port: int) -> str:
    """Where to reach a server listening on `host` (every interface: through loopback)."""
    host = host if host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def drain_requests(record: dict[str, Any], environ: env.Environ, limit: float, tick: Tick | None) -> float | None:
    """Seconds until vLLM's /metrics shows no request running or waiting (at most `limit`); None: no metrics."""
    root = _root(str(record.get("host") or ""), int(record["port"]))
    started = time.monotonic()
    while (elapsed := time.monotonic() - started) < limit:
        busy = in_flight(root)  # a server busy streaming answers /metrics late: the time is taken after it
        if busy is None:
            return None
        if busy == 0:
            return round(time.monotonic() - started, 2)
        if tick:
            tick(f"waiting for {busy} request(s) in flight", elapsed)
        time.sleep(0.25)
    return round(limit, 2)


def in_flight(root: str) -> int | None:
    try:
        status, body = _request(root + "/metrics", None, 5)
    except OSError:
        return None
    if status != 200:
        return None
    return requests_in_flight(body.decode("utf-8", "replace"))


def requests_in_flight(metrics: str) -> int | None:
    """vllm:num_requests_running + vllm:num_requests_waiting from Prometheus text (pure)."""
    total, seen = 0.0, False
    for line in metrics.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in ("vllm:num_requests_running", "vllm:num_requests_waiting"):  # not ..._waiting_by_reason
            with contextlib.suppress(ValueError, IndexError):
                total += float(line.rsplit(None, 1)[1])
                seen = True
    return int(total) if seen else None
