"""`doctor ROUTE`: the router, the agents' requests through it, and each leg on its own, in one run. Pure.

The router's answers say which leg served them (LiteLLM's `x-litellm-model-id` is the leg's profile name,
agentcfg/route/litellm.py); each leg is probed directly with the requests `doctor LEG` sends. The verdict
puts the two together: a leg whose requests fail while the router still answers is one the router is
routing around (a warning: the agents work); every leg failing is the route down.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field, replace
from typing import Any

from agentcfg import fixes
from agentcfg.doctor.model import FAIL, PASS, WARN, Finding
from agentcfg.doctor.probes import Probe, Result
from agentcfg.lazyclass import dataclass

# What the router's being down (or deaf) explains among the agents' findings through it: one cause, one finding.
EXPLAINED = {"server-unreachable", "server-not-answering"}


@dataclass(frozen=True)
class Check:
    """What is known of a route before any request: its name, the router's root URL, whether its LiteLLM runs
    (agentcfg/route/server.py's process record), and its legs in order with their role."""

    name: str
    url: str  # the router's root: http://127.0.0.1:4000
    running: bool
    legs: tuple[tuple[str, str], ...]  # (profile, role): ("local", "primary"), ("taotoken", "fallback 1")
    keyless: bool = False  # running, started without the router key (server.started_keyless): it answers anyone


@dataclass(frozen=True)
class LegState:
    """One leg as its own probes saw it."""

    name: str
    role: str
    down: bool  # it has requests to answer and answered none of them
    cause: str = ""  # the first failure's summary (what `doctor LEG` would say first)
    evidence: str = ""  # what that failure's probe got


@dataclass(frozen=True)
class Outcome:
    """The router as the agents' probes met it: whether it served any, and which legs the answers came from."""

    answering: bool | None  # /health/liveliness answered 200; None: not asked (not running, offline)
    served: bool = False
    answered_by: tuple[str, ...] = ()
    problems: list[str] = field(default_factory=list)  # the router's own failures (the agents' findings)


def roles(legs: Iterable[str]) -> tuple[tuple[str, str], ...]:
    return tuple((leg, "primary" if i == 0 else f"fallback {i}") for i, leg in enumerate(legs))


def title(name: str, role: str) -> str:
    return f"leg {name} ({role})"


def liveliness(url: str) -> Probe:
    """LiteLLM's liveness path: no key, no upstream call (docs/route.md)."""
    return Probe("route-liveliness", url.rstrip("/") + "/health/liveliness")


def answered(result: Result | None) -> bool:
    return result is not None and result.error is None and result.status is not None and 200 <= result.status < 300


def who(results: Iterable[Result], legs: Iterable[str]) -> tuple[str, ...]:
    """The legs the router's 2xx answers came from, in the route's order; an id that is no leg's, as given."""
    known = list(legs)
    ids = {r.extra["model_id"] for r in results if answered(r) and isinstance(r.extra.get("model_id"), str)}
    return tuple(leg for leg in known if leg in ids) + tuple(sorted(repr(i)[:60] for i in ids - set(known)))


def leg_state(name: str, role: str, findings: list[Finding], requests: list[tuple[Result, bool]]) -> LegState:
    """`requests`: each of the leg's agent requests (not /models) with whether its answer is one the agent takes.
    Down: there were requests and none was taken; its first FAIL finding is the cause."""
    down = bool(requests) and not any(ok for _, ok in requests)
    if not down:
        return LegState(name, role, False)
    first = next((f for f in findings if f.status == FAIL), None)
    if first is None:
        failed = next((r for r, _ in requests), None)
        detail = "" if failed is None else (f"HTTP {failed.status}" if failed.status else f"{failed.error}")
        return LegState(name, role, True, "no request was answered", detail)
    return LegState(name, role, True, first.summary, first.evidence)


def verdict(check: Check, outcome: Outcome, legs: list[LegState]) -> list[Finding]:
    """The route's findings (agent None, leg None), after the sections: open, running, answering, serving."""
    return _open(check) + _state(check, outcome, legs)


def _restart(name: str) -> str:
    return fixes.then(
        fixes.command("agentcfg", "route", "stop", name), fixes.command("agentcfg", "route", "serve", name)
    )


def _open(check: Check) -> list[Finding]:
    """A router an agentcfg before every route had a router key started: it runs without one until restarted."""
    if not (check.running and check.keyless):
        return []
    return [
        Finding(
            "route-open",
            FAIL,
            None,
            f"route {check.name}'s router was started without a router key (by an earlier agentcfg): any program or "
            "web page on this machine can send it requests, and spend the key a leg holds",
            "the config it runs has no master_key (dangerously_permit_weak_or_unset_master_key)",
            _restart(check.name),
            f"started again it refuses requests without the router key; an agent switched to {check.name} before the "
            f"route had one sends none: `agentcfg switch {check.name}` again",
        )
    ]


def _state(check: Check, outcome: Outcome, legs: list[LegState]) -> list[Finding]:
    """Running, answering, serving."""
    name = check.name
    serve = fixes.command("agentcfg", "route", "serve", name)
    restart = _restart(name)
    if not check.running:
        return [
            Finding(
                "route-not-running",
                FAIL,
                None,
                f"route {name}'s router (LiteLLM) is not running: every agent switched to it gets connection refused",
                "no live process in its process record",
                serve,
                "the legs' sections above say whether each leg would answer",
            )
        ]
    if outcome.answering is None:  # offline: nothing was asked
        return []
    if not outcome.answering:
        return [
            Finding(
                "route-not-answering",
                FAIL,
                None,
                f"route {name}'s router runs but {check.url}/health/liveliness does not answer 200",
                "; ".join(outcome.problems[:1]),
                restart,
                f"its log says why: `agentcfg route status {name}` names it",
            )
        ]
    by = ", ".join(outcome.answered_by) or "a leg that did not say which (no x-litellm-model-id)"
    found: list[Finding] = []
    down = [leg for leg in legs if leg.down]
    if outcome.served:
        for leg in down:
            around = (
                f"the router's answers come from it all the same (its way to {leg.name} works)"
                if leg.name in outcome.answered_by
                else f"the router routes around it: answers come from {by}"
            )
            found.append(
                Finding(
                    "route-leg-down",
                    WARN,
                    None,
                    f"{title(leg.name, leg.role)} is failing: {_short(leg.cause)}; {around}",
                    leg.evidence,
                    hint=f"the agents work; fix {leg.name} (its section above, or `agentcfg doctor {leg.name}`)",
                    leg=None,
                )
            )
        found.append(Finding("route-serving", PASS, None, f"route {name} is serving: answers come from {by}"))
        return found
    if legs and all(leg.down for leg in legs):
        causes = "; ".join(f"{leg.name}: {_short(leg.cause)}" for leg in legs)
        return [
            Finding(
                "route-down",
                FAIL,
                None,
                f"route {name} is down: every leg is failing ({causes})",
                "; ".join(f"{leg.name}: {leg.evidence}" for leg in legs if leg.evidence),
                hint="bring one leg back (its section above); the router tries it again after its cooldown",
            )
        ]
    working = ", ".join(leg.name for leg in legs if not leg.down) or "none"
    return [
        Finding(
            "route-not-serving",
            FAIL,
            None,
            f"route {name}'s router answers its health check but not the agents' requests, "
            f"while leg {working} answers directly",
            "; ".join(outcome.problems[:2]),
            restart,
            "every leg failing recently leaves them all cooling down (a 429 until the cooldown ends); "
            "a router started before its legs changed needs a restart",
        )
    ]


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def explained(check: Check, outcome: Outcome, findings: list[Finding]) -> list[Finding]:
    """The agents' findings through the router, less what its not running or not answering already says."""
    if check.running and outcome.answering is not False:
        return findings
    return [f for f in findings if not (f.leg is None and f.agent is not None and f.id in EXPLAINED)]


def as_leg(findings: list[Finding], leg: str) -> list[Finding]:
    return [replace(f, leg=leg) for f in findings]


def summary_of(check: Check, outcome: Outcome, legs: list[LegState], targets: list[Any]) -> dict[str, Any]:
    """The route's part of `--json`."""
    urls = {t.leg: t.base_url for t in reversed(targets) if t.leg and t.base_url and t.protocol == "openai"}
    return {
        "name": check.name,
        "url": check.url,
        "running": check.running,
        "answering": outcome.answering,
        "serving": outcome.served,
        "answered_by": list(outcome.answered_by),
        "legs": [
            {
                "profile": name,
                "role": role,
                "base_url": urls.get(name),
                "down": next((leg.down for leg in legs if leg.name == name), None),
            }
            for name, role in check.legs
        ],
    }
