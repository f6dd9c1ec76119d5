"""docs/compatibility.md, written by the test run itself: each e2e/realservers test records what it
drove (`compat` fixture), the controller collects the outcomes and, when AGENTCFG_COMPAT_FILE is
set (`.ci/run` sets it), writes the table. Under xdist the reports reach the controller with their
user_properties, so one process writes the file."""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e import agents

_rows: list[dict[str, str]] = []


@pytest.fixture
def compat(record_property: Callable[[str, object], None], request: pytest.FixtureRequest) -> Callable[..., None]:
    """`compat(tier=..., agent=..., agent_version=..., server=..., case=...)` before the asserts; an
    agent's row also says which releases its version stands for ("pinned", "latest" or both)."""

    def record(**fields: str) -> None:
        if "release" in request.fixturenames and fields.get("agent") in agents.AGENTS:
            release = request.getfixturevalue("release")
            names = next(n for n in agents.releases_of(fields["agent"]) if release in n)
            fields.setdefault("release", "+".join(names))
        record_property("compat", fields)

    return record


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call":  # `compat(...)` is called in the test body
        return
    for name, fields in report.user_properties:
        if name == "compat" and isinstance(fields, dict):
            _rows.append({**fields, "outcome": report.outcome})


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("AGENTCFG_COMPAT_FILE")
    if not target or hasattr(session.config, "workerinput") or not _rows:
        return
    Path(target).write_text(render(_rows, datetime.date.today().isoformat()), encoding="utf-8")


def render(rows: list[dict[str, str]], day: str) -> str:
    """The page: versions tested, then one line per agent × server × case with its outcome."""
    ours = sorted({r["agent_version"] for r in rows if r.get("agent_version", "").startswith("agentcfg ")})
    programs = {f"{r['agent']} {r['agent_version']}" for r in rows if r.get("agent_version") not in (None, *ours)}
    servers = sorted({r["server"] for r in rows if r.get("server")})
    lines = [
        "# Compatibility",
        "",
        f"Produced by the test run on {day} (`bash .ci/run`; tests/e2e and tests/realservers), not typed by hand.",
        "Each row is one real program (an agent, or agentcfg's doctor or bench) driven through agentcfg",
        "against one server. An agent's case has a row per release: the pinned one and npm's latest when",
        "the run began; when they are the same release it ran once and both rows say so.",
        "",
        f"- Agents: {', '.join(sorted(programs))}.",
        f"- {', '.join(ours)}: the doctor and bench rows.",
        f"- Servers: {'; '.join(servers)}.",
        "",
        "| tier | agent | release | agent version | server | case | result |",
        "|---|---|---|---|---|---|---|",
    ]
    key = ("tier", "agent", "server", "case", "release")
    for row in sorted(_per_release(rows), key=lambda r: tuple(r.get(k, "") for k in key)):
        result = {"passed": "pass", "failed": "**FAIL**", "skipped": "skipped"}.get(row["outcome"], row["outcome"])
        lines.append(
            f"| {row.get('tier', '')} | {row.get('agent', '')} | {row.get('release', '')} "
            f"| {row.get('agent_version', '')} | {row.get('server', '')} | {row.get('case', '')} | {result} |"
        )
    passed = sum(r["outcome"] == "passed" for r in rows)
    lines += ["", f"{passed} of {len(rows)} runs passed.", ""]
    return "\n".join(lines)


def _per_release(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """A run that stood for two releases ("pinned+latest") as a row for each, the second marked as the same."""
    out = []
    for row in rows:
        names = row.get("release", "").split("+")
        out.append({**row, "release": names[0]})
        out += [{**row, "release": f"{name} (= {names[0]})"} for name in names[1:]]
    return out
