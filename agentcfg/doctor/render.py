"""Doctor's report as text (grouped by agent, aligned) and as data (`--json`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

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
            }
            for t in report.targets
        ],
        "findings": [asdict(f) for f in report.findings],
    }


def as_text(report: Any, colour: bool) -> str:
    lines: list[str] = []
    groups: list[tuple[str, list[Any]]] = []
    for target in report.targets:
        where = f"{target.base_url or '(no endpoint)'}"
        if target.model:
            where += f"  model {target.model}"
        if target.base_url:
            where += f"  key: {target.key_source}"
        if target.profile:
            where += f"  (profile {target.profile})"
        groups.append((f"{target.agent:<9}{where}", [f for f in report.findings if f.agent == target.agent]))
    shared = [f for f in report.findings if f.agent is None]
    if shared:
        groups.append(("server", shared))
    width = max((len(f.id) for f in report.findings), default=10)
    for title, findings in groups:
        lines.append(title)
        passed = [f.summary for f in findings if f.status == "pass"]
        for f in findings:
            if f.status == "pass":
                continue
            label, kind = _STATUS[f.status]
            lines.append(f"  {paint(label.ljust(4), kind, colour)}  {f.id.ljust(width)}  {f.summary}")
            if f.evidence:
                lines.append(f"        {'':<{width}}  evidence: {f.evidence}")
            if f.fix:
                lines.append(f"        {'':<{width}}  fix: {f.fix}")
            if f.hint:
                lines.append(f"        {'':<{width}}  hint: {f.hint}")
        if passed:
            lines.append(f"  {paint('ok  ', 'create', colour)}  " + "; ".join(passed))
    counts = report.summary()
    mode = (
        " (offline: no requests sent)" if report.offline else f" · {report.probes} requests in {report.elapsed:.2f} s"
    )
    lines.append("")
    warnings = f"{counts['warn']} warning" + ("" if counts["warn"] == 1 else "s")
    lines.append(f"{counts['fail']} failed, {warnings}, {counts['pass']} passed{mode}")
    return "\n".join(lines)
