"""`agentcfg doctor`: what each agent will send, sent for real, and the cause of what comes back.

The edge of doctor: collect.py reads the agents' files and this environment into Targets, probes.py
sends the requests under one deadline, localserver.py reads the local vLLM processes, and the pure
rules (rules.py) turn it all into Findings; render.py shows them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agentcfg import env, profiles, redact
from agentcfg.agents import AGENTS
from agentcfg.doctor import localserver, proxies
from agentcfg.doctor.collect import targets_from_files, targets_from_profile
from agentcfg.doctor.model import BLOCKING, FAIL, PASS, SKIP, WARN, Finding, Target
from agentcfg.doctor.rules import classify, diagnose
from agentcfg.lazyclass import dataclass
from agentcfg.profiles import is_loopback
from agentcfg.serve import units

if TYPE_CHECKING:
    from agentcfg.doctor import probes
    from agentcfg.doctor import route as route_check
    from agentcfg.mcp.model import Found

__all__ = ["Finding", "Report", "Target", "check_now", "run", "summary", "targets_from_files", "targets_from_profile"]

DEFAULT_DEADLINE = 6.0


@dataclass
class Report:
    """What one doctor run found: the targets it checked and the findings about them."""

    targets: list[Target]
    findings: list[Finding]
    elapsed: float = 0.0
    probes: int = 0
    offline: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    route: dict[str, Any] | None = None  # `doctor ROUTE`: the router and its legs (doctor/route.py summary_of)

    @property
    def failed(self) -> bool:
        """A leg's own failures are the route's evidence, not its outcome: the route's verdict decides."""
        return any(f.status == FAIL and f.leg is None for f in self.findings)

    def summary(self) -> dict[str, int]:
        return summary([f for f in self.findings if f.leg is None])

    def leg_summary(self) -> dict[str, int]:
        return summary([f for f in self.findings if f.leg is not None])


# -- probing ------------------------------------------------------------------------------------------------


def _headers(target: Target) -> dict[str, str]:
    if not target.key:
        return {}
    if target.protocol == "generate-content":
        return {"x-goog-api-key": target.key}
    if target.protocol == "anthropic":
        if target.key_header == "x-api-key":
            return {"x-api-key": target.key}
        if target.key_header == "both":
            return {"x-api-key": target.key, "Authorization": f"Bearer {target.key}"}
    return {"Authorization": f"Bearer {target.key}"}


def probe_plan(target: Target) -> dict[str, probes.Probe]:
    """The requests this agent really makes (plus /models, and the base URL with /v1 added or removed)."""
    from agentcfg.doctor import probes  # lazy: the request shapes, for a run that sends them (not --offline)
    from agentcfg.doctor.replies import alternative_base  # lazy: as probes, only when requests are planned

    if not target.base_url or any(f.status == FAIL and f.id in BLOCKING for f in target.static):
        return {}
    headers, base, model, via = _headers(target), target.base_url.rstrip("/"), target.model or "", target.proxy
    plan: dict[str, probes.Probe] = {}
    openai_base = base if target.protocol == "openai" else base + "/v1"
    plan["models"] = probes.models(openai_base, headers, via)
    if target.protocol == "openai":
        plan["models-alt"] = replace(probes.models(alternative_base(base), headers, via), kind="models-alt")
    if via:
        plan["models-direct"] = replace(plan["models"], kind="models-direct", proxy=None)
    agent = AGENTS.get(target.agent)
    requests = {
        "responses-stream": lambda: probes.responses(base, model, headers),
        "chat-stream": lambda: probes.chat(base, model, headers, stream=True),
        "chat": lambda: probes.chat(base, model, headers, stream=False),  # for Codex too: the tool-parser check
        "messages-stream": lambda: probes.messages(base, model, headers),
        "gemini-stream": lambda: probes.generate(base, model, headers),
    }
    # The requests the agent makes, and for an OpenAI-protocol agent the unstreamed chat request with tools.
    kinds = (*agent.TRAITS.probes, *(("chat",) if target.protocol == "openai" else ())) if agent else ()
    for kind in dict.fromkeys(kinds):
        plan[kind] = replace(requests[kind](), proxy=via)
    return plan


def _thinking_probe(target: Target) -> probes.Probe | None:
    """Turn 1 of the two-turn tool probe (doctor/thinking.py), for an agent whose model thinks."""
    from agentcfg.doctor import thinking  # lazy: the two-turn probe, for a run that sends requests
    from agentcfg.serve import families  # lazy: as thinking

    family = families.detect(target.model)
    if family is None or not family.thinking or target.agent not in AGENTS or not target.base_url:
        return None
    probe = thinking.first_turn(target.agent, target.base_url, target.model or "", _headers(target))
    return replace(probe, proxy=target.proxy, ca_file=target.ca_file)


class Chains:
    """The two-turn probes: each agent's chain of requests (turn 1, maybe turn 1 unforced, turn 2), sent under
    the one deadline. Agents whose requests are the same share them (qwen-code and opencode their turn 1)."""

    def __init__(self, firsts: dict[int, probes.Probe], targets: list[Target]) -> None:
        self._chains = {key: [probe] for key, probe in firsts.items()}
        self._targets = {id(t): t for t in targets if id(t) in firsts}
        self._waiting: dict[str, list[int]] = {}
        for key, probe in firsts.items():
            self._waiting.setdefault(_signature(probe), []).append(key)
        self._sent = set(self._waiting)

    def firsts(self) -> list[probes.Probe]:
        return [chain[0] for chain in self._chains.values()]

    def follow(self, result: probes.Result) -> list[probes.Probe]:
        """The requests this answer calls for next, each sent once."""
        from agentcfg.doctor import thinking  # lazy: called only with an answer, after the requests were sent

        following = []
        for key in self._waiting.pop(_signature(result.probe), []):
            after = thinking.follow(self._targets[key].agent, result)
            if after is None:
                continue
            self._chains[key].append(after)
            signature = _signature(after)
            if not after.kind.endswith("-2"):
                self._waiting.setdefault(signature, []).append(key)
            if signature not in self._sent:
                self._sent.add(signature)
                following.append(after)
        return following

    def findings(self, target: Target, results: dict[str, probes.Result], found: list[Finding]) -> list[Finding]:
        """The probe's finding for this agent; a skip is left out where another failure explains it."""
        chain = [results[s] for p in self._chains.get(id(target), []) if (s := _signature(p)) in results]
        if not chain:
            return []
        from agentcfg.doctor import thinking  # lazy: only with a chain's answers (never --offline)
        from agentcfg.serve import families  # lazy: as thinking

        family = families.detect(target.model)
        parsers = (family.tool_parser, family.reasoning_parser) if family else (None, None)
        finding = thinking.judge(target, chain, parsers)
        if finding.status == SKIP and any(f.status == FAIL for f in found):
            return []
        return [finding]


def ca_file(agent: str, environ: env.Environ) -> str | None:
    """The extra CA file the agent adds to the system's store, from its own variable."""
    known = AGENTS.get(agent)
    for name in known.TRAITS.ca_variables if known else ("NODE_EXTRA_CA_CERTS",):
        if environ.get(name):
            return environ[name]
    return None


def _with_ca(plan: dict[str, probes.Probe], ca: str | None) -> dict[str, probes.Probe]:
    return {kind: replace(probe, ca_file=ca) for kind, probe in plan.items()} if ca else plan


def _signature(probe: probes.Probe) -> str:
    return json.dumps([probe.kind, probe.url, probe.headers, probe.body, probe.proxy, probe.ca_file], sort_keys=True)


def _proxy_address(proxy: str) -> tuple[str, int] | None:
    parts = urlsplit(proxy if "://" in proxy else "http://" + proxy)
    try:
        port = parts.port or {"http": 80, "https": 443, "socks5": 1080, "socks5h": 1080}.get(parts.scheme, 80)
    except ValueError:
        return None
    return (parts.hostname or "", port) if parts.hostname else None


def run(
    targets: list[Target],
    environ: env.Environ,
    *,
    deadline: float = DEFAULT_DEADLINE,
    offline: bool = False,
    progress: Callable[[int, int], None] | None = None,
    route: route_check.Check | None = None,
    mcp_servers: list[Found] | None = None,
) -> Report:
    """Probe every target concurrently under one deadline and diagnose what came back. With `route`, the
    targets are the router's (leg None) and each leg's (Target.leg), and the router's liveness is asked too,
    all under the same deadline; the route's verdict follows the findings. The MCP servers the agents start
    (`mcp_servers`; None: read from each agent's user-scope MCP files) are checked too, and asked under the
    same deadline (doctor/mcp.py)."""
    started = time.monotonic()
    if route is not None or any(t.leg for t in targets):
        from agentcfg.doctor import route as route_check  # lazy: `doctor ROUTE` only
    for target in targets:
        redact.register(target.key)  # keys read from agent files, too: never in any output
        if target.base_url:
            target.proxy = proxies.proxy_for(target.agent, target.base_url, environ)
        target.ca_file = ca_file(target.agent, environ)
    plans = {id(t): ({} if offline else _with_ca(probe_plan(t), t.ca_file)) for t in targets}
    unique: dict[str, probes.Probe] = {}
    for plan in plans.values():
        for probe in plan.values():
            unique.setdefault(_signature(probe), probe)
    chains = Chains({id(t): first for t in targets if plans[id(t)] and (first := _thinking_probe(t))}, targets)
    for probe in chains.firsts():
        unique.setdefault(_signature(probe), probe)
    alive = route_check.liveliness(route.url) if route is not None and route.running and not offline else None
    if alive is not None:
        unique.setdefault(_signature(alive), alive)
    proxy_hosts = {t.proxy for t in targets if t.proxy and not offline}
    mcp_findings, mcp_plans = _mcp_checks(targets, environ, mcp_servers)
    asking = _mcp_start(mcp_plans, deadline) if mcp_plans and not offline else None  # beside the probes
    results, proxy_open = _send(list(unique.values()), proxy_hosts, deadline, progress, chains.follow)
    by_signature = {_signature(r.probe): r for r in results}
    findings: list[Finding] = []
    seen_by: dict[int, dict[str, probes.Result]] = {}
    for target in targets:
        seen = seen_by[id(target)] = {kind: by_signature[_signature(p)] for kind, p in plans[id(target)].items()}
        found = diagnose(target, seen, proxy_open.get(target.proxy) if target.proxy else None)
        found += chains.findings(target, by_signature, found)
        findings += route_check.as_leg(found, target.leg) if target.leg else found
    findings += _local_findings(targets, environ)
    findings += mcp_findings + (asking.findings() if asking is not None else [])
    asked = len(asking.plans) if asking is not None else 0
    report = Report(targets, findings, time.monotonic() - started, len(results) + asked, offline)
    if route is not None:
        _conclude(report, route, seen_by, by_signature.get(_signature(alive)) if alive else None)
    return report


def check_now(
    agents: list[Any],
    environ: env.Environ,
    *,
    deadline: float = DEFAULT_DEADLINE,
    offline: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """`agentcfg doctor` without a profile: each agent as its files and this environment start it now. init's
    closing check is this same call, so the two never disagree (init used to check the profile the way
    `exec` runs the agents, which hid a qwen that, started plainly, has no key)."""
    targets = targets_from_files(agents, environ, profiles.load_all(environ), Path.cwd())
    return run(targets, environ, deadline=deadline, offline=offline, progress=progress)


def _conclude(
    report: Report, check: route_check.Check, seen_by: dict[int, dict[str, probes.Result]], alive: probes.Result | None
) -> None:
    """The route's verdict from what the router's and the legs' probes got (doctor/route.py decides)."""
    from agentcfg.doctor import route as route_check  # lazy: `doctor ROUTE` only

    def requests(leg: str | None) -> list[tuple[probes.Result, bool]]:
        return [
            (seen[kind], classify(seen[kind]).ok)
            for t in report.targets
            if t.leg == leg
            for seen in [seen_by[id(t)]]
            for kind in AGENTS[t.agent].TRAITS.probes
            if kind in seen
        ]

    through = requests(None)
    names = [name for name, _ in check.legs]
    problems = [f"{f.agent}: {f.summary}" for f in report.findings if f.leg is None and f.agent and f.status == FAIL]
    if alive is not None and not route_check.answered(alive):
        problems.insert(0, f"liveliness: {f'HTTP {alive.status}' if alive.status else alive.error}: {alive.detail}")
    outcome = route_check.Outcome(
        None if alive is None else route_check.answered(alive),
        any(ok for _, ok in through),
        route_check.who([r for r, ok in through if ok], names),
        problems,
    )
    legs = [
        route_check.leg_state(name, role, [f for f in report.findings if f.leg == name], requests(name))
        for name, role in check.legs
    ]
    report.findings = route_check.explained(check, outcome, report.findings) + route_check.verdict(check, outcome, legs)
    report.route = route_check.summary_of(check, outcome, legs, report.targets)


def _send(
    plan: list[probes.Probe],
    proxy_hosts: set[str],
    deadline: float,
    progress: Callable[[int, int], None] | None,
    follow: Callable[[probes.Result], list[probes.Probe]] | None = None,
) -> tuple[list[probes.Result], dict[str, bool | None]]:
    """The probes' results (and those of the requests `follow` chained to them), and whether each proxy's port
    is open (checked in threads, while the probes run). Nothing to send, nothing imported: the network stack
    and the thread pool only when they are used."""
    if not plan and not proxy_hosts:
        return [], {}
    from agentcfg.doctor import probes  # lazy: only with requests to send, or a proxy to check

    if not proxy_hosts:
        return (probes.run(plan, deadline, progress, follow) if plan else []), {}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(proxy_hosts)) as pool:
        checks = {p: pool.submit(_proxy_open, p, min(2.0, deadline)) for p in proxy_hosts}
        results = probes.run(plan, deadline, progress, follow) if plan else []
        return results, {p: f.result() for p, f in checks.items()}


def _proxy_open(proxy: str, timeout: float) -> bool | None:
    from agentcfg.doctor import probes  # lazy: a proxy's port is checked only with requests to send

    address = _proxy_address(proxy)
    return None if address is None else probes.tcp_open(address[0], address[1], timeout)


def _mcp_checks(
    targets: list[Target], environ: env.Environ, found: list[Found] | None
) -> tuple[list[Finding], list[Any]]:
    """The MCP findings from files and this environment, and the servers to ask. Agents without MCP files (every
    agent, until its format is written) cost a call each: doctor/mcp.py is not even imported."""
    chosen = [AGENTS[n] for n in dict.fromkeys(t.agent for t in targets if t.leg is None) if n in AGENTS]
    problems: list[Finding] = []
    if found is None:
        found, problems = _mcp_gather(chosen, environ)
    if not found:
        return problems, []
    from agentcfg.doctor import mcp  # lazy: only where an agent has MCP servers, or a caller gave them

    profiles_of = {t.agent: t.profile for t in targets if t.leg is None}
    binaries = {agent.TRAITS.name: agent.TRAITS.binary for agent in chosen}
    findings, plans = mcp.check(mcp.group(found), environ, mcp.Secrets(environ), profiles_of, binaries)
    return problems + findings, plans


def _mcp_gather(agents: list[Any], environ: env.Environ) -> tuple[list[Found], list[Finding]]:
    """The servers each agent's user-scope MCP files define, and a finding for a file that cannot be read. Here,
    not in doctor/mcp.py: most runs find none, and then load nothing of the MCP checks."""
    from agentcfg import fsutil  # lazy: files read only where an agent keeps MCP servers
    from agentcfg.errors import AgentcfgError  # lazy: as fsutil

    found: list[Found] = []
    problems: list[Finding] = []
    for agent in agents:
        try:
            files = agent.mcp_files(environ)
            current = {f: fsutil.read_text(f.path, env.display(f.path, environ)) for f in files}
            shared = set(agent.files(environ))  # its config too: one without "mcp" in it defines no server
            if any(_may_hold_mcp(text) or (text is not None and f not in shared) for f, text in current.items()):
                found += agent.mcp_read(current, environ)
        except AgentcfgError as problem:
            problems.append(
                Finding(
                    "mcp-config-unreadable",
                    WARN,
                    agent.TRAITS.name,
                    f"its MCP servers cannot be checked: {problem.message}",
                    problem.where or "",
                    hint=problem.hint or "fix the file named; doctor checks the servers once it reads",
                )
            )
    return found, problems


def _may_hold_mcp(text: str | None) -> bool:
    """Whether an agent's config file may define MCP servers: every agent's key for them there says "mcp"
    (mcp_servers, mcpServers, mcp), unless spelt with escapes. A config without either is not parsed again, nor
    its MCP format loaded; a file of MCP servers alone always is (one that does not parse is reported)."""
    import re

    return text is not None and ("\\u" in text or re.search("mcp", text, re.IGNORECASE) is not None)


def _mcp_start(plans: list[Any], deadline: float) -> Any:
    from agentcfg.doctor import mcp  # lazy: as _mcp_checks, which planned them

    return mcp.start(plans, deadline)


def _local_findings(targets: list[Target], environ: env.Environ) -> list[Finding]:
    """Facts about the vLLM server behind loopback endpoints, and the systemd units that start it, once per port."""
    local: dict[int, tuple[str | None, str | None, str | None, int | None]] = {}
    for target in targets:
        parts = urlsplit(target.base_url or "")
        if parts.hostname and is_loopback(parts.hostname):
            try:
                port = parts.port or (443 if parts.scheme == "https" else 80)
            except ValueError:
                continue
            profile = None if target.profile_project else target.profile
            # a route's leg: its section has them
            local.setdefault(port, (target.model, profile, target.leg, target.context_window))
    if not local:
        return []
    running = localserver.processes()
    scanned = units.find_units(environ=environ)  # a directory scan: no systemctl
    findings: list[Finding] = []
    for port, (model, profile, leg, window) in local.items():
        own = localserver.findings(running, port, model, profile, window=window)
        own += localserver.unit_findings(scanned, port)
        for finding in own:
            if all(replace(finding, leg=None) != replace(f, leg=None) for f in findings):  # stray workers: once
                findings.append(replace(finding, leg=leg))
    return findings


def summary(findings: list[Finding]) -> dict[str, int]:
    return {status: sum(1 for f in findings if f.status == status) for status in (FAIL, WARN, PASS, SKIP)}
