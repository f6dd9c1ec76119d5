"""Each leg's health as the router sees it: LiteLLM's own health check of that deployment.

`GET /health?model_id=LEG` makes the router send the leg one small completion (16 tokens, "What's 1 + 1?") with
the leg's key, through its config: what comes back is what the router would meet now. LiteLLM exposes no
cooldown state, so this is the closest view there is; it costs each leg one tiny request.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import field
from typing import Any

from agentcfg import redact
from agentcfg.lazyclass import dataclass

HEALTHY, UNHEALTHY, UNKNOWN = "healthy", "unhealthy", "unknown"


@dataclass
class Seen:
    """What LiteLLM's health endpoints said of the router and each leg."""

    answering: bool  # /health/liveliness answered 200
    legs: dict[str, dict[str, Any]] = field(default_factory=dict)  # leg -> {"state", "error"}


def leg_state(body: Any, leg: str) -> dict[str, Any]:
    """One leg's entry in LiteLLM's /health answer: healthy, or unhealthy with the first line of its error."""
    if not isinstance(body, dict):
        return {"state": UNKNOWN, "error": "the router's /health answer is not JSON"}
    for entry in body.get("healthy_endpoints") or []:
        if isinstance(entry, dict) and entry.get("model_id") == leg:
            return {"state": HEALTHY, "error": None}
    for entry in body.get("unhealthy_endpoints") or []:
        if isinstance(entry, dict) and entry.get("model_id") == leg:
            return {"state": UNHEALTHY, "error": short_error(entry)}
    return {"state": UNKNOWN, "error": "the router did not report this leg"}


def short_error(entry: dict[str, Any]) -> str:
    """LiteLLM's error (a message, then a stack trace) as one line, with its status when it gives one."""
    text = str(entry.get("error") or "").strip()
    first = next((line.strip() for line in text.splitlines() if line.strip()), "no reason given")
    status = entry.get("exception_status")
    shown = redact.terminal_safe(redact.scrub(first))[:240]
    return f"{status}: {shown}" if status else shown


def _get(url: str, key: str | None, timeout: float) -> tuple[int | None, Any]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the router is on this machine
    try:
        with opener.open(request, timeout=timeout) as response:
            status, data = response.status, response.read(1 << 20)
    except urllib.error.HTTPError as error:
        status, data = error.code, error.read(1 << 20)
    except (OSError, ValueError):
        return None, None
    try:
        return status, json.loads(data)
    except ValueError:
        return status, None


def read(url: str, key: str | None, legs: list[str], timeout: float) -> Seen:
    """Liveness and every leg's health check, at once, each bounded by `timeout`."""
    from urllib.parse import quote

    with ThreadPoolExecutor(max_workers=len(legs) + 1) as pool:
        alive = pool.submit(_get, url + "/health/liveliness", None, timeout)
        checks = {leg: pool.submit(_get, f"{url}/health?model_id={quote(leg)}", key, timeout) for leg in legs}
        answering = alive.result()[0] == 200
        seen = Seen(answering)
        for leg, future in checks.items():
            status, body = future.result()
            if status is None:
                seen.legs[leg] = {"state": UNKNOWN, "error": f"the router gave no health answer within {timeout:.0f} s"}
            elif isinstance(body, dict) and ("healthy_endpoints" in body or "unhealthy_endpoints" in body):
                seen.legs[leg] = leg_state(body, leg)  # 200, or 503 when an endpoint is unhealthy
            else:
                seen.legs[leg] = {"state": UNKNOWN, "error": f"the router's /health answered {status}"}
    return seen
