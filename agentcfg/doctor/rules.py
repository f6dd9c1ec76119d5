"""Doctor's rules, pure: what each agent will send (Target), what came back (probe Results) and facts
about a local server in; Findings out. No I/O here: every rule is tested with plain data and the
responses captured from real servers in ../shared/fixtures.

diagnose() runs the steps below in order; what one probe's answer means is verdicts.py, the finding a
failed probe gives is problems.py, the window rules are limits.py, and every id is in catalogue.py.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from agentcfg import fixes
from agentcfg.doctor import catalogue
from agentcfg.doctor.advice import host, traits
from agentcfg.doctor.limits import context_findings, window_told
from agentcfg.doctor.model import BLOCKING, EXPLAINS, FAIL, PASS, REFUSALS, WARN, Finding, Target
from agentcfg.doctor.problems import not_answering, problem, redirect, unreachable
from agentcfg.doctor.replies import max_model_len, model_ids
from agentcfg.doctor.verdicts import Verdict, classify, upstream_model
from agentcfg.profiles import is_loopback

if TYPE_CHECKING:
    from agentcfg.doctor.wire import Result

__all__ = ["Verdict", "classify", "diagnose", "upstream_model"]

Seen = dict[str, "Result"]


def diagnose(target: Target, seen: Seen, proxy_open: bool | None = None) -> list[Finding]:
    """Every finding for one agent, one per cause: its static ones, then what its probes showed."""
    return _one_per_cause(_diagnose(target, seen, proxy_open))


def _one_per_cause(findings: list[Finding]) -> list[Finding]:
    """Drop what another finding of the same agent explains (model.EXPLAINS, REFUSALS)."""
    present = {f.id for f in findings if f.status in (FAIL, WARN)}
    explained = set().union(*(EXPLAINS[cause] for cause in present & EXPLAINS.keys()))
    if present & REFUSALS:  # the agent refuses its file: what that file (or the shell) says otherwise is moot
        explained |= {f.id for f in findings if f.id not in REFUSALS and f.status == FAIL}
    return [f for f in findings if f.id not in explained or f.status not in (FAIL, WARN)]


def _diagnose(target: Target, seen: Seen, proxy_open: bool | None) -> list[Finding]:
    findings = list(target.static)
    if any(f.status == FAIL and f.id in BLOCKING for f in findings):
        # The agent stops before it sends a request: what is wrong with the key it would send is not a
        # second cause (qwen with qwen-oauth selected never reads its .env's key).
        return [f for f in findings if not f.id.startswith("key-")]
    if not target.base_url:
        return findings
    findings += _proxy_findings(target, seen, proxy_open)
    proxy_explains = any(f.status == FAIL and f.id.startswith("proxy-") for f in findings)
    primary = [seen[k] for k in traits(target).probes if k in seen]
    verdicts = [classify(r) for r in primary]
    if primary and all(v.id in ("server-unreachable", "server-not-answering") for v in verdicts):
        if not proxy_explains:
            silent = [v for v in verdicts if v.id == "server-not-answering"]
            findings.append(not_answering(target, silent[0], seen) if silent else unreachable(target, verdicts[0]))
        return findings
    problems = _problems(target, seen, primary, verdicts, proxy_explains)
    already = {f.id for f in findings if f.status == FAIL}  # a static finding already names this cause
    findings += [f for f in problems.values() if f.id not in already]
    failed = {f.id for f in findings if f.status == FAIL}
    if primary and not failed and all(v.ok for v in verdicts):  # a WARN (a redirect, say) keeps the passes
        findings += [Finding(fid, PASS, target.agent, text) for fid, text in catalogue.passes().items()]
    findings += _unlisted_model(target, seen, failed)
    return _window(target, seen, findings, failed)


def _problems(
    target: Target, seen: Seen, primary: list[Result], verdicts: list[Verdict], proxy_explains: bool
) -> dict[str, Finding]:
    """What the agent's own requests showed, one finding per id, in the order the requests are made. What came
    back through a failing proxy is the proxy's (`proxy_explains`)."""
    problems: dict[str, Finding] = {}
    side = classify(seen["chat"]) if "chat" in seen and traits(target).protocol == "responses" else None
    if side is not None and side.id == "tool-parser-missing":  # its /responses works; its tool calls come as text
        problems["tool-parser-missing"] = problem(target, side, seen)
    for result, verdict in [] if proxy_explains else zip(primary, verdicts, strict=True):
        moved = redirect(target, result, verdict)
        if moved:
            problems.setdefault(moved.id, moved)
            if moved.status == FAIL:
                continue
        if not verdict.ok:
            if final := result.extra.get("final_url"):
                verdict = replace(verdict, message=f"after a redirect to {final}: {verdict.message}")
            finding = problem(target, verdict, seen)
            problems.setdefault(finding.id, finding)
    if "server-slow" in problems:  # one slow server: headers then silence on one request, none on another
        problems.pop("server-not-answering", None)
    return problems


def _unlisted_model(target: Target, seen: Seen, failed: set[str]) -> list[Finding]:
    """Requests work, but the model is not in the server's /models list (some gateways list only some)."""
    ids = model_ids(seen.get("models"))
    if not ids or not target.model or target.model in ids or "model-not-found" in failed:
        return []
    summary = f"{target.model!r} is not in the server's /models list (requests work)"
    return [Finding("model-not-found", WARN, target.agent, summary, f"/models lists: {', '.join(ids[:8])}")]


def _window(target: Target, seen: Seen, findings: list[Finding], failed: set[str]) -> list[Finding]:
    """The window rules (limits.py): a window the agent is told that is too large is the one cause of what
    the server said about the output limit that follows from it."""
    window = max_model_len(seen.get("models"), target.model)
    too_large = window_told(target, window)
    if too_large:
        findings = [f for f in findings if f.id != "context-limit-exceeded" or f in target.static]
        findings.append(too_large)
    if "context-limit-exceeded" not in failed:
        context = context_findings(target, window)
        if too_large:  # the output limit follows from the window it is told: one cause, one finding
            context = [f for f in context if f.status == PASS or "does not fit" in f.summary]
        findings += context
    return findings


# -- the proxy ------------------------------------------------------------------------------------------------

PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")


def _bypass(target: Target, where: str) -> tuple[str, str]:
    """(fix, hint) that send this agent's requests to host `where` past the proxy."""
    agent = traits(target)
    if agent.ignores_no_proxy:
        # qwen-code takes --proxy, then its `proxy` setting, then HTTPS_PROXY/https_proxy/HTTP_PROXY/
        # http_proxy for every request (packages/cli/src/config/config.ts) and never reads NO_PROXY; an
        # empty --proxy falls through to the variables, so only running it without them goes direct.
        unset = [word for name in PROXY_VARIABLES for word in ("-u", name)]
        setting = f" (or its {agent.proxy_setting}, which must not be set either)" if agent.proxy_setting else ""
        return fixes.command("env", *unset, agent.binary), (
            f"{agent.title} ignores NO_PROXY: it sends every request through HTTPS_PROXY/HTTP_PROXY{setting}, "
            "so run it without them"
        )
    if not re.fullmatch(r"[A-Za-z0-9.:_-]+", where):  # it goes inside double quotes: nothing the shell expands
        return "", f"add {where} to NO_PROXY"
    line = " ".join(f'{name}="${{{name}:+${name},}}{where}"' for name in ("NO_PROXY", "no_proxy"))
    return f"export {line}", f"this adds {where} to NO_PROXY in this shell; put it in your shell's profile to keep it"


def _proxy_findings(target: Target, seen: Seen, proxy_open: bool | None) -> list[Finding]:
    """At most one finding per agent for its proxy: one cause, one finding."""
    if not target.proxy or not target.base_url:
        return []
    where = host(target.base_url)
    via, direct = seen.get("models"), seen.get("models-direct")
    via_ok = via is not None and classify(via).ok
    direct_ok = direct is not None and classify(direct).ok
    evidence = (
        f"through {target.proxy}: {'works' if via_ok else classify(via).message if via else 'not tried'}; "
        f"direct: {'works' if direct_ok else classify(direct).message if direct else 'not tried'}"
    )
    fix, hint = _bypass(target, where)
    fix = fix if direct_ok else ""  # going direct helps only where direct works
    if proxy_open is False:
        summary = f"requests to {where} go through the proxy {target.proxy}, and nothing answers there" + (
            " (direct works)" if direct_ok else ""
        )
        hint = "start the proxy (a VPN or Clash, say), or unset the proxy variables; " + hint
        return [Finding("proxy-unreachable", FAIL, target.agent, summary, evidence, fix, hint)]
    if is_loopback(where):
        fails = "" if via_ok else (", where they fail" + (" (direct works)" if direct_ok else ""))
        summary = f"requests to {where} go through the proxy {target.proxy}" + fails
        return [Finding("proxy-intercepts-local", WARN if via_ok else FAIL, target.agent, summary, evidence, fix, hint)]
    if not via_ok and direct_ok:
        summary = f"{where} works directly but not through the proxy {target.proxy}"
        hint = "fix the proxy, or send this host past it; " + hint
        return [Finding("proxy-unreachable", FAIL, target.agent, summary, evidence, fix, hint)]
    return []
