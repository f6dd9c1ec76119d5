"""The MCP check inside a doctor run: gathered from the agents' user-scope MCP files (the synthetic agent's,
tests/agents/synthetic.py, given an MCP file of its own here), asked under doctor's one deadline beside the other
probes, shown in a section per server, and valid `--json`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import jsonschema
import pytest

from agentcfg import doctor, edit
from agentcfg.agents import AGENTS
from agentcfg.agents.base import AgentFile
from agentcfg.doctor import render
from agentcfg.mcp.model import Found, McpServer
from tests.agents.synthetic import synth  # noqa: F401 - the fixture
from tests.conftest import REPO
from tests.doctor.mcp_servers import http_server, records, script
from tests.doctor.test_mcp import SECRET

SCHEMA = json.loads((REPO / "schemas" / "cli" / "doctor.schema.json").read_text())


@pytest.fixture
def synth_mcp(synth, monkeypatch, tmp_path):  # noqa: F811
    """synth keeps MCP servers in `$SYNTH_HOME/mcp.json`: {"NAME": {"command": [...]} or {"url": ...}}."""

    def mcp_files(environ):
        return [AgentFile(Path(environ["SYNTH_HOME"]) / "mcp.json", "json", "{}\n")]

    def mcp_read(current, environ):
        found = []
        for file, text in current.items():
            for name, entry in (edit.load("json", text, path=str(file.path)) if text else {}).items():
                server = McpServer(name, command=tuple(entry.get("command", ())), url=entry.get("url"),
                                   transport="http" if entry.get("url") else "stdio",
                                   secrets=tuple(entry.get("secrets", ())))  # fmt: skip
                found.append(Found("synth", server, f"~/.synth/mcp.json: {name}"))
        return found

    monkeypatch.setattr(synth, "mcp_files", mcp_files)
    monkeypatch.setattr(synth, "mcp_read", mcp_read)
    home = tmp_path / "synth"
    home.mkdir()
    return home


def environ_for(tmp_path: Path, synth_home: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "SYNTH_HOME": str(synth_home),
        "RECORD": str(tmp_path / "record.jsonl"),
        "NO_PROXY": "127.0.0.1,localhost",
        **extra,
    }


def test_doctor_checks_the_servers_of_the_agents_files_and_shows_them(tmp_path, synth_mcp):
    (tmp_path / "home").mkdir()
    with http_server() as server:
        (synth_mcp / "mcp.json").write_text(
            json.dumps(
                {
                    "files": {"command": list(script(tmp_path, "exits")), "secrets": ["TINY_TOKEN"]},
                    "remote": {"url": server.root + "/json"},
                }
            )
        )
        environ = environ_for(tmp_path, synth_mcp, TINY_TOKEN=SECRET)
        report = doctor.check_now([AGENTS["synth"]], environ, deadline=3.0)
    by_server = {f.server: f for f in report.findings if f.server}
    assert {name: (f.id, f.status) for name, f in by_server.items()} == {
        "files": ("mcp-exited", "fail"),
        "remote": ("mcp-ok", "pass"),
    }
    assert report.failed and report.probes >= 2
    data = render.as_dict(report)
    jsonschema.validate({**data, "agents": []}, SCHEMA)  # (synth is in no schema's list of agents)
    assert any(f["server"] == "files" and f["agent"] is None for f in data["findings"])
    text = render.as_text(report, colour=False)
    assert "mcp server files" in text and "mcp server remote" in text
    assert "synth: files ended before it answered initialize" in text
    assert SECRET not in text and SECRET not in json.dumps(data)


def test_doctor_offline_starts_no_server(tmp_path, synth_mcp):
    (tmp_path / "home").mkdir()
    (synth_mcp / "mcp.json").write_text(json.dumps({"files": {"command": list(script(tmp_path, "answers"))}}))
    report = doctor.check_now([AGENTS["synth"]], environ_for(tmp_path, synth_mcp), offline=True)
    assert [f for f in report.findings if f.server] == []
    assert records(tmp_path / "record.jsonl") == []


def test_a_hanging_server_keeps_doctor_within_its_deadline(tmp_path, synth_mcp):
    (tmp_path / "home").mkdir()
    (synth_mcp / "mcp.json").write_text(json.dumps({"hangs": {"command": list(script(tmp_path, "never"))}}))
    started = time.monotonic()
    report = doctor.check_now([AGENTS["synth"]], environ_for(tmp_path, synth_mcp), deadline=1.0)
    assert time.monotonic() - started < 1.3
    assert [(f.id, f.server) for f in report.findings if f.server] == [("mcp-no-answer", "hangs")]


def test_an_mcp_file_that_does_not_parse_is_a_warning_of_the_agent(tmp_path, synth_mcp):
    (tmp_path / "home").mkdir()
    (synth_mcp / "mcp.json").write_text("{not json")
    report = doctor.check_now([AGENTS["synth"]], environ_for(tmp_path, synth_mcp), offline=True)
    (finding,) = [f for f in report.findings if f.id.startswith("mcp-")]
    assert (finding.id, finding.status, finding.agent) == ("mcp-config-unreadable", "warn", "synth")


def test_servers_given_to_run_are_checked_without_any_agent(tmp_path):
    server = McpServer("tiny", command=script(tmp_path, "answers"))
    environ = {"PATH": os.environ["PATH"], "RECORD": str(tmp_path / "record.jsonl")}
    report = doctor.run([], environ, deadline=3.0, mcp_servers=[Found("codex", server, "x")])
    assert [(f.id, f.server) for f in report.findings] == [("mcp-ok", "tiny")]
    assert not report.failed


def test_a_hanging_server_and_a_silent_endpoint_share_the_one_deadline(tmp_path):
    """The MCP servers are asked beside the agents' requests, not after them: a silent endpoint and a server
    that never answers take one deadline together."""
    from agentcfg.doctor.model import Target
    from tests.fault_server import BlackHole

    server = McpServer("hangs", command=script(tmp_path, "never"))
    environ = {"PATH": os.environ["PATH"], "RECORD": str(tmp_path / "record.jsonl")}
    with BlackHole() as hole:
        target = Target("codex", "openai", hole.base_url, "m")
        started = time.monotonic()
        report = doctor.run([target], environ, deadline=1.0, mcp_servers=[Found("codex", server, "x")])
        took = time.monotonic() - started
    assert took < 1.3, took
    ids = {f.id for f in report.findings}
    assert "mcp-no-answer" in ids and "server-not-answering" in ids
    assert [r for r in records(tmp_path / "record.jsonl") if not _gone(r.get("pid") or r["child"])] == []


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[-1].split()[0] in (b"Z", b"X")
    except OSError:
        return True
