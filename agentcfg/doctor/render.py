"""Doctor's report as text (grouped by agent, aligned) and as data (`--json`)."""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any

from agentcfg.redact import terminal_safe
from agentcfg.report import paint

_STATUS = {
    "fail": ("FAIL", "remove"),
    "warn": ("WARN", "modify"),
    "pass": ("ok", "create"),
    "skip": ("skip", "skipped"),
}


def as_dict(report: Any) -> dict[str, Any]:
    return {
        "ok": not report.failed,
        "offline": report.offline,
        "elapsed_s": round(report.elapsed, 3),
        "requests": report.probes,
        "summary": report.summary(),
        "agents": [
            {
                "agent": t.agent,
                "base_url": t.base_url,
                "model": t.model,
                "profile": t.profile,
                "key_source": t.key_source,
                "proxy": t.proxy,
                "leg": t.leg,
            }
            for t in report.targets
        ],
        "findings": [asdict(f) for f in report.findings],
        "route": None if report.route is None else {**report.route, "leg_summary": report.leg_summary()},
    }


ID_COLUMN = 24  # ids longer than this get a line of their own rather than pushing every summary right
_LINE_END = re.compile(r"\r\n|\r|\n")


def _shown(text: str) -> list[str]:
    """A server's text as lines a terminal shows and does not obey: control characters escaped."""
    return [terminal_safe(line) for line in _LINE_END.split(text)]


def _block(first: str, indent: int, label: str, text: str) -> list[str]:
    """`first` + label + the text's first line, every further line under the text's first character."""
    lines = [line for line in _shown(text) if line.strip()] or [""]  # a server's blank lines say nothing
    pad = " " * (indent + len(label))
    return [first + label + lines[0], *(pad + line for line in lines[1:])]


# The --json value stays short and stable; the text says what it means.
_KEY_SOURCES = {"placeholder": "agentcfg's stand-in (the server needs none)", "none": "none sent"}


def _groups(report: Any) -> list[tuple[str, list[Any]]]:
    """The agents through the endpoint and the server, then (a route) each leg's section and the route's verdict."""
    route = report.route
    roles = {leg["profile"]: leg["role"] for leg in route["legs"]} if route else {}
    groups: list[tuple[str, list[Any]]] = []
    for leg in [None, *roles]:
        if leg is not None:
            groups.append((f"--- leg {leg} ({roles[leg]}) ---", []))  # a heading: the leg's agents follow
        for target in (t for t in report.targets if t.leg == leg):
            where = f"{target.base_url or '(no endpoint)'}"
            if target.model:
                where += f"  model {target.model}"
            if target.base_url:
                where += f"  key: {_KEY_SOURCES.get(target.key_source, target.key_source)}"
            if target.profile:
                where += f"  (profile {target.profile})"
            found = [f for f in report.findings if f.agent == target.agent and f.leg == leg]
            groups.append((f"{target.agent:<9}{where}", found))
        shared = [
            f for f in report.findings if f.agent is None and f.leg == leg and not f.server and not _verdict(f, route)
        ]
        if shared:
            groups.append(("server", shared))
    servers = [f.server for f in report.findings if f.server]
    for name in sorted(set(servers)):  # the MCP servers the agents start (doctor/mcp.py): one section each
        groups.append((f"mcp server {name}", [f for f in report.findings if f.server == name]))
    if route:
        groups.append((f"--- route {route['name']} ---", [f for f in report.findings if _verdict(f, route)]))
    return groups


def _verdict(finding: Any, route: Any) -> bool:
    return bool(route) and finding.agent is None and finding.leg is None and finding.id.startswith("route-")


def as_text(report: Any, colour: bool) -> str:
    lines: list[str] = []
    groups = _groups(report)
    shown = [f for f in report.findings if f.status != "pass"]
    width = min(max((len(f.id) for f in shown), default=10), ID_COLUMN)
    column = 2 + 4 + 2 + width + 2  # where summaries, evidence, fixes and hints start
    for title, findings in groups:
        lines.append(" ".join(_shown(title)))
        passed = [f.summary for f in findings if f.status == "pass"]
        for f in findings:
            if f.status == "pass":
                continue
            label, kind = _STATUS[f.status]
            head = f"  {paint(label.ljust(4), kind, colour)}  "
            if len(f.id) > width:  # the id on its own line, the summary under the others
                lines.append(head + f.id)
                lines += _block(" " * column, column, "", f.summary)
            else:
                lines += _block(head + f.id.ljust(width) + "  ", column, "", f.summary)
            for name in ("evidence", "fix", "hint"):
                if value := getattr(f, name):
                    lines += _block(" " * column, column, f"{name}: ", value)
        if passed:
            lines.append(f"  {paint('ok  ', 'create', colour)}  " + "; ".join(" ".join(_shown(p)) for p in passed))
    counts = report.summary()
    mode = (
        " (offline: no requests sent)" if report.offline else f" · {report.probes} requests in {report.elapsed:.2f} s"
    )
    lines.append("")
    legs = ""
    if report.route and (leg_counts := report.leg_summary())["fail"]:
        legs = f"; the legs' own {leg_counts['fail']} failed (shown above) are the route's evidence"
    lines.append(f"{tally(counts)}{legs}{mode}")
    return "\n".join(lines)


def tally(counts: dict[str, int]) -> str:
    """`1 failed, 2 warnings, 9 passed`: doctor's last line, and init's line for the same check."""
    warnings = f"{counts['warn']} warning" + ("" if counts["warn"] == 1 else "s")
    return f"{counts['fail']} failed, {warnings}, {counts['pass']} passed"
