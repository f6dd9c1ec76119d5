"""doctor's MCP check (agentcfg/doctor/mcp.py, agentcfg/mcp/probe.py): real tiny servers, started for real.

The servers are Python scripts (tests/doctor/mcp_servers.py) and a loopback HTTP server; the definitions are
constructed Found objects, as an agent's mcp_read gives them. The keyring is keyring's own API with an
in-memory backend (tests/fake_keyring.py), never the real one.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import keyring
import pytest

from agentcfg.doctor import mcp
from agentcfg.doctor.model import Finding
from agentcfg.mcp.model import Found, McpServer
from tests.doctor import mcp_servers
from tests.doctor.mcp_servers import http_server, records, script
from tests.fake_keyring import LockedKeyring, MemoryKeyring
from tests.fault_server import dead_port

SECRET = "mcp-SECRET-value-0123456789abcdef"
WHERE = {"codex": "~/.codex/config.toml: mcp_servers.tiny", "claude": "~/.claude.json: mcpServers.tiny"}


def found(server: McpServer, agent: str = "codex", **extra: object) -> Found:
    return Found(agent, server, WHERE.get(agent, f"~/.{agent}: tiny"), **extra)  # type: ignore[arg-type]


def stdio(tmp_path: Path, kind: str, **fields: object) -> McpServer:
    return McpServer("tiny", command=script(tmp_path, kind), **fields)  # type: ignore[arg-type]


def environ(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "RECORD": str(tmp_path / "record.jsonl"), **extra}


def check(items: list[Found], env: dict[str, str], *, deadline: float = 5.0, offline: bool = False,
          **kwargs: object) -> list[Finding]:  # fmt: skip
    return mcp.run(items, env, deadline=deadline, offline=offline, **kwargs)  # type: ignore[arg-type]


def ids(findings: list[Finding]) -> dict[str, str]:
    return {f.id: f.status for f in findings}


def shown(findings: list[Finding]) -> str:
    return json.dumps([f.__dict__ if hasattr(f, "__dict__") else repr(f) for f in findings], default=repr) + repr(
        findings
    )


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[-1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


@pytest.fixture
def memory_keyring() -> MemoryKeyring:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    return backend


# -- stdio -------------------------------------------------------------------------------------------------------


def test_a_server_that_answers_is_ok_with_its_name_and_version(tmp_path):
    (finding,) = check([found(stdio(tmp_path, "answers"))], environ(tmp_path))
    assert (finding.id, finding.status, finding.server, finding.agent) == ("mcp-ok", "pass", "tiny", None)
    assert "tiny 1.2.3" in finding.summary and finding.summary.startswith("codex: ")
    (started,) = records(tmp_path / "record.jsonl")
    assert started["tty"] is False and Path(started["cwd"]).name.startswith("agentcfg-mcp-")
    assert not alive(started["pid"])


def test_notifications_and_log_lines_before_the_answer_are_skipped(tmp_path):
    assert ids(check([found(stdio(tmp_path, "logs-first"))], environ(tmp_path))) == {"mcp-ok": "pass"}


def test_a_server_that_never_answers_is_ended_by_the_deadline_with_all_it_started(tmp_path):
    started = time.monotonic()
    (finding,) = check([found(stdio(tmp_path, "never"))], environ(tmp_path), deadline=1.0)
    took = time.monotonic() - started
    assert finding.id == "mcp-no-answer" and finding.status == "fail"
    assert 1.0 <= took < 1.3, took
    pids = [r.get("pid") or r.get("child") for r in records(tmp_path / "record.jsonl")]
    assert len(pids) == 2, pids  # the server and the child it started
    assert [p for p in pids if alive(p)] == []


def test_a_server_that_ignores_sigterm_is_killed(tmp_path):
    started = time.monotonic()
    (finding,) = check([found(stdio(tmp_path, "ignores-term"))], environ(tmp_path), deadline=0.5)
    assert finding.id == "mcp-no-answer"
    assert time.monotonic() - started < 0.8
    (record,) = records(tmp_path / "record.jsonl")
    assert not alive(record["pid"])


def test_a_server_that_exits_shows_its_last_stderr_lines_masked(tmp_path):
    server = stdio(tmp_path, "exits", secrets=("TINY_TOKEN",))
    (finding,) = check([found(server)], environ(tmp_path, TINY_TOKEN=SECRET))
    assert (finding.id, finding.status) == ("mcp-exited", "fail")
    assert "loading config" in finding.evidence and "error: bad token" in finding.evidence
    assert SECRET not in shown([finding])


@pytest.mark.parametrize(("kind", "said"), [("garbage", "Hello! I am not"), ("error", "unsupported version")])
def test_garbage_and_an_error_are_a_bad_answer(tmp_path, kind, said):
    (finding,) = check([found(stdio(tmp_path, kind))], environ(tmp_path))
    assert (finding.id, finding.status) == ("mcp-bad-answer", "fail")
    assert said in finding.evidence


def test_one_definition_in_four_agents_is_started_once_and_names_them_all(tmp_path):
    server = stdio(tmp_path, "answers")
    agents = ["codex", "claude", "qwen", "opencode"]
    (finding,) = check([found(server, agent) for agent in agents], environ(tmp_path))
    assert finding.id == "mcp-ok" and finding.summary.startswith("codex, claude, qwen, opencode: ")
    assert "~/.claude.json: mcpServers.tiny" in finding.evidence
    assert len(records(tmp_path / "record.jsonl")) == 1


def test_two_definitions_of_one_name_are_two_servers(tmp_path):
    one, other = stdio(tmp_path, "answers"), stdio(tmp_path, "answers", env=(("MODE", "x"),))
    findings = check([found(one, "codex"), found(other, "claude")], environ(tmp_path))
    assert [f.summary.split(":")[0] for f in findings] == ["codex", "claude"]
    assert len(records(tmp_path / "record.jsonl")) == 2


def test_the_server_gets_its_plain_variables_and_secrets(tmp_path):
    server = stdio(tmp_path, "answers", env=(("RECORD_VARIABLE", "TINY_TOKEN"),), secrets=("TINY_TOKEN",))
    findings = check([found(server)], environ(tmp_path, TINY_TOKEN=SECRET))
    assert ids(findings) == {"mcp-ok": "pass"}
    assert records(tmp_path / "record.jsonl")[0]["value"] == SECRET


# -- offline ------------------------------------------------------------------------------------------------


def test_offline_starts_nothing(tmp_path):
    assert check([found(stdio(tmp_path, "answers"))], environ(tmp_path), offline=True) == []
    assert records(tmp_path / "record.jsonl") == []


@pytest.mark.parametrize("command", [("npx", "-y", "@modelcontextprotocol/server-everything"), ("/nowhere/mcp-bin",)])
def test_a_command_not_on_path_is_missing_and_not_started(tmp_path, command):
    empty = tmp_path / "bin"
    empty.mkdir()
    server = McpServer("tiny", command=command)
    for offline in (True, False):
        (finding,) = check([found(server)], {"PATH": str(empty), "HOME": str(tmp_path)}, offline=offline)
        assert (finding.id, finding.status) == ("mcp-command-missing", "fail")
        assert command[0] in finding.summary


def test_a_command_on_the_agents_path_is_found(tmp_path):
    directory = tmp_path / "bin"
    directory.mkdir()
    program = directory / "tiny-mcp"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    server = McpServer("tiny", command=("tiny-mcp",))
    assert check([found(server)], {"PATH": str(directory)}, offline=True) == []


@pytest.mark.parametrize("command", ["tiny-mcp", "./bin/tiny-mcp"])
def test_a_command_is_run_as_the_agent_finds_it_not_from_the_servers_working_directory(tmp_path, monkeypatch, command):
    directory = tmp_path / "bin"
    directory.mkdir()
    program = directory / "tiny-mcp"
    program.write_text(f"#!{sys.executable}\n" + Path(script(tmp_path, "answers")[1]).read_text())
    program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    env = environ(tmp_path, PATH=f"{directory}{os.pathsep}{os.environ['PATH']}")
    assert ids(check([found(McpServer("tiny", command=(command,)))], env)) == {"mcp-ok": "pass"}


def test_a_secret_set_here_resolves_without_the_keyring(tmp_path):
    server = stdio(tmp_path, "answers", secrets=("TINY_TOKEN",))
    store = object()  # any use of it fails the test
    findings = check([found(server)], environ(tmp_path, TINY_TOKEN=SECRET), offline=True,
                     secrets=mcp.Secrets(environ(tmp_path, TINY_TOKEN=SECRET), store))  # fmt: skip
    assert findings == []


def test_a_secret_only_in_the_keyring_warns_and_the_server_gets_it(tmp_path, memory_keyring):
    memory_keyring.entries[("agentcfg", "mcp:TINY_TOKEN")] = SECRET
    server = stdio(tmp_path, "answers", env=(("RECORD_VARIABLE", "TINY_TOKEN"),), secrets=("TINY_TOKEN",))
    findings = check([found(server)], environ(tmp_path), profiles={"codex": "work"}, binaries={"codex": "codex"})
    assert ids(findings) == {"mcp-secret-keyring-only": "warn", "mcp-ok": "pass"}
    warning = findings[0]
    assert warning.fix == "agentcfg exec work -- codex"
    assert records(tmp_path / "record.jsonl")[0]["value"] == SECRET
    assert SECRET not in shown(findings)


def test_a_secret_nowhere_is_an_error_with_the_command_that_stores_it(tmp_path, memory_keyring):
    server = stdio(tmp_path, "answers", secrets=("TINY_TOKEN",))
    (finding,) = check([found(server)], environ(tmp_path), offline=True)
    assert (finding.id, finding.status, finding.fix) == ("mcp-secret-missing", "fail", "agentcfg mcp secret TINY_TOKEN")


def test_a_keyring_that_cannot_be_read_is_a_finding_not_a_traceback(tmp_path):
    keyring.set_keyring(LockedKeyring())
    server = stdio(tmp_path, "answers", secrets=("TINY_TOKEN", "OTHER_TOKEN"))
    findings = check([found(server)], environ(tmp_path), offline=True)
    assert [f.id for f in findings] == ["mcp-keyring-unavailable"] * 2
    assert all(f.status == "warn" for f in findings)


def test_a_secret_in_plain_text_in_the_file_warns_and_is_never_shown(tmp_path):
    server = stdio(tmp_path, "answers", env=(("RECORD_VARIABLE", "TINY_TOKEN"),), secrets=("TINY_TOKEN",))
    findings = check([found(server, plaintext=(("TINY_TOKEN", SECRET),))], environ(tmp_path))
    assert ids(findings) == {"mcp-secret-in-file": "warn", "mcp-ok": "pass"}
    assert findings[0].fix == "agentcfg mcp import" and "TINY_TOKEN" in findings[0].summary
    assert records(tmp_path / "record.jsonl")[0]["value"] == SECRET  # as the agent starts it
    assert SECRET not in shown(findings)


def test_settings_doctor_does_not_model_are_a_skip_at_most(tmp_path):
    findings = check([found(stdio(tmp_path, "answers"), unmodelled=("trust", "cwd"))], environ(tmp_path), offline=True)
    assert ids(findings) == {"mcp-unmodelled": "skip"}
    assert "cwd, trust" in findings[0].summary


# -- remote -------------------------------------------------------------------------------------------------


def remote(url: str, **fields: object) -> McpServer:
    return McpServer("tiny", url=url, transport=str(fields.pop("transport", "http")), **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", ["/json", "/sse"])
def test_a_remote_server_that_answers_json_or_sse_is_ok(tmp_path, path):
    with http_server() as server:
        started = time.monotonic()
        (finding,) = check([found(remote(server.root + path))], environ(tmp_path))
        assert time.monotonic() - started < 2  # the event stream stays open: doctor stops at the answer
    assert (finding.id, finding.status) == ("mcp-ok", "pass") and "tiny 1.2.3" in finding.summary
    (request,) = server.seen
    assert request["headers"]["Accept"] == "application/json, text/event-stream"
    assert request["headers"]["Content-Type"] == "application/json"
    body = json.loads(request["body"])
    assert body["method"] == "initialize" and body["params"]["protocolVersion"] == "2025-06-18"
    assert body["params"]["clientInfo"]["name"] == "agentcfg-doctor"


def test_a_legacy_sse_server_answers_with_its_endpoint_event(tmp_path):
    with http_server() as server:
        (finding,) = check([found(remote(server.root + "/legacy", transport="sse"))], environ(tmp_path))
    assert (finding.id, finding.status) == ("mcp-ok", "pass") and "/messages" in finding.summary
    assert server.seen[0]["headers"]["Accept"] == "text/event-stream"


@pytest.mark.parametrize(
    ("path", "ident"), [("/401", "mcp-unauthorized"), ("/nope", "mcp-wrong-url"), ("/500", "mcp-bad-answer")]
)
def test_remote_statuses(tmp_path, path, ident):
    with http_server() as server:
        given = found(remote(server.root + path, bearer="TINY_TOKEN"))
        (finding,) = check([given], environ(tmp_path, TINY_TOKEN=SECRET))
    assert (finding.id, finding.status) == (ident, "fail")
    assert server.seen[0]["headers"]["Authorization"] == f"Bearer {SECRET}"  # from this shell: as the agent sends it
    if ident == "mcp-unauthorized":  # the shell's value was sent: storing another in the keyring changes nothing
        assert finding.fix == "" and "TINY_TOKEN (set in this shell)" in finding.summary
    assert SECRET not in shown([finding])


def test_a_dead_port_is_unreachable(tmp_path):
    (finding,) = check([found(remote(f"http://127.0.0.1:{dead_port()}/mcp"))], environ(tmp_path))
    assert (finding.id, finding.status) == ("mcp-unreachable", "fail")


def test_a_keyring_token_goes_to_the_origin_it_was_stored_for(tmp_path, memory_keyring):
    with http_server(token=SECRET) as server:
        memory_keyring.entries[("agentcfg", "mcp:TINY_TOKEN")] = SECRET
        memory_keyring.entries[("agentcfg-origins", "mcp:TINY_TOKEN")] = json.dumps([server.root])
        findings = check([found(remote(server.root + "/needs-token", bearer="TINY_TOKEN"))], environ(tmp_path))
    assert ids(findings) == {"mcp-secret-keyring-only": "warn", "mcp-ok": "pass"}
    assert server.seen[0]["headers"]["Authorization"] == f"Bearer {SECRET}"


def test_a_keyring_token_the_server_refuses_is_stored_again(tmp_path, memory_keyring):
    with http_server(token="another-token-0123456789") as server:
        memory_keyring.entries[("agentcfg", "mcp:TINY_TOKEN")] = SECRET
        memory_keyring.entries[("agentcfg-origins", "mcp:TINY_TOKEN")] = json.dumps([server.root])
        findings = check([found(remote(server.root + "/needs-token", bearer="TINY_TOKEN"))], environ(tmp_path))
    assert ids(findings) == {"mcp-secret-keyring-only": "warn", "mcp-unauthorized": "fail"}
    assert findings[1].fix == "agentcfg mcp secret TINY_TOKEN" and "(from the keyring)" in findings[1].summary
    assert SECRET not in shown(findings)


@pytest.mark.parametrize("origins", [["https://elsewhere.example:443"], None])
def test_a_keyring_token_bound_elsewhere_is_not_sent(tmp_path, memory_keyring, origins):
    with http_server(token=SECRET) as server:
        memory_keyring.entries[("agentcfg", "mcp:TINY_TOKEN")] = SECRET
        if origins is not None:
            memory_keyring.entries[("agentcfg-origins", "mcp:TINY_TOKEN")] = json.dumps(origins)
        findings = check([found(remote(server.root + "/needs-token", bearer="TINY_TOKEN"))], environ(tmp_path))
    assert ids(findings) == {"mcp-secret-wrong-host": "fail", "mcp-unauthorized": "skip"}
    assert "Authorization" not in server.seen[0]["headers"]
    assert findings[0].fix == "agentcfg mcp secret TINY_TOKEN"
    assert SECRET not in shown(findings) + json.dumps(server.seen)


def test_a_remote_server_that_holds_the_connection_is_no_answer_by_the_deadline(tmp_path):
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    try:
        started = time.monotonic()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        (finding,) = check([found(remote(url))], environ(tmp_path), deadline=0.8)
        assert time.monotonic() - started < 1.1
    finally:
        listener.close()
    assert (finding.id, finding.status) == ("mcp-no-answer", "fail")


def test_stdio_and_remote_servers_are_asked_at_once(tmp_path):
    with http_server() as server:
        items = [found(stdio(tmp_path, "never")), found(remote(server.root + "/json"), "claude")]
        started = time.monotonic()
        findings = check(items, environ(tmp_path), deadline=1.0)
        assert time.monotonic() - started < 1.3
    assert ids(findings) == {"mcp-no-answer": "fail", "mcp-ok": "pass"}


def test_the_scripts_module_is_importable_alone():
    assert set(mcp_servers.SCRIPTS) >= {"answers", "never", "exits", "garbage", "logs-first"}


@pytest.mark.parametrize("written", [("Authorization", f"Bearer {SECRET}"), ("TINY_TOKEN", SECRET)])
def test_a_token_written_in_the_file_is_sent_as_the_agent_sends_it(tmp_path, written):
    with http_server(token=SECRET) as server:
        given = found(remote(server.root + "/needs-token", bearer="TINY_TOKEN"), plaintext=(written,))
        findings = check([given], environ(tmp_path))
    assert ids(findings) == {"mcp-secret-in-file": "warn", "mcp-ok": "pass"}
    assert server.seen[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in shown(findings)
