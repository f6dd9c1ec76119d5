"""`agentcfg doctor` end to end: every finding id produced by the real situation that causes it.

Each test runs the installed console script in a temporary HOME against servers on 127.0.0.1 only
(tests/fault_server.py, a black hole, a dead port, a dead or answering proxy, a self-signed HTTPS
server) and real processes that look like `vllm serve` and stray `VLLM::EngineCore` workers. A
finding that needs a remote host name is produced with `--offline`, so nothing is ever sent off
this machine.

Speed: most tests share a HOME already switched to one fault server and only change the server's
fault (its handler reads it per request) before running doctor, so a test costs one doctor run.
Tests that edit an agent's files get a HOME of their own.

doctor reads every process on the host, so the fake vLLM processes started here would show up in
any other test's doctor run. Every test of this file is in one xdist group (`--dist loadgroup`), and
because that grouping does nothing with pytest 9.2 + pytest-xdist 3.8 (xdist sets `item._nodeid`,
which pytest 9 no longer reads), a file lock does the same job: a test that starts such processes
holds it exclusively, every other test of this file holds it shared.
"""

from __future__ import annotations

import datetime
import fcntl
import inspect
import ipaddress
import json
import os
import signal
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import fault_server
from tests.conftest import AGENTCFG, SHARED_FIXTURES, Home, keyring_env, make_home
from tests.fault_server import MODEL, BlackHole, FaultServer, dead_port

AGENTS = ("codex", "qwen", "opencode", "claude", "cline", "copilot", "droid")
SERVER_KEY = "sk-test-server-key-123456"
WRONG_KEY = "sk-wrong-key-abcdef-987654"
DEFAULT_MAX_MODEL_LEN = inspect.signature(FaultServer).parameters["max_model_len"].default


# -- homes, servers and running doctor ---------------------------------------------------------------


@contextmanager
def serve(server: FaultServer) -> Iterator[FaultServer]:
    """Run a fault server whose shutdown takes milliseconds (serve_forever polls every 0.5 s by default)."""
    server._thread = threading.Thread(target=server._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    with server:
        yield server


def set_fault(server: FaultServer, fault: str = "healthy", **state: Any) -> None:
    """Change what the running server plays; its handler reads these per request."""
    inner = server._server
    inner.fault = fault
    inner.key = state.get("key")
    inner.model = state.get("model", MODEL)
    inner.max_model_len = state.get("max_model_len", DEFAULT_MAX_MODEL_LEN)
    inner.RequestHandlerClass = state.get("handler", fault_server._Handler)
    server.requests.clear()


def add_profile(
    home: Home,
    base_url: str,
    anthropic: str | None = None,
    *,
    name: str = "t",
    model: str = MODEL,
    key_env: str | None = None,
    window: int | None = 65536,
) -> None:
    args = ["profile", "add", name, "--base-url", base_url, "--model", model]
    if anthropic:
        args += ["--anthropic-base-url", anthropic]
    args += ["--key-env", key_env] if key_env else ["--no-key"]
    if window:
        args += ["--context-window", str(window)]
    home.run(*args)


def switch_to(home: Home, base_url: str, anthropic: str | None = None, **profile: Any) -> None:
    """`profile add t ...` then `switch t --all`: all four agents' files point at the endpoint."""
    add_profile(home, base_url, anthropic, **profile)
    switched = home.run("switch", "t", "--all", check=None)
    assert switched.returncode in (0, 4), switched  # 4: switched, but a keyed profile's key is not stored yet


def _these(args: tuple[str, ...]) -> tuple[str, ...]:
    """The agents these tests are about (AGENTS: the ones a plain profile configures), unless the test names some."""
    return args if "--agent" in args else (*args, *(w for agent in AGENTS for w in ("--agent", agent)))


def doctor(home: Home, *args: str, check: int | None = 1, **extra_env: str) -> dict[str, Any]:
    result = home.run("doctor", "--json", *_these(args), check=check, **extra_env)
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)


def doctor_text(home: Home, *args: str, check: int | None = 1, **extra_env: str) -> str:
    result = home.run("doctor", *_these(args), check=check, **extra_env)
    assert "Traceback" not in result.stderr
    assert "\x1b[" not in result.stdout + result.stderr  # not a terminal: no colour
    return result.stdout


def store_key(home: Home, name: str, value: str, **extra_env: str) -> None:
    result = subprocess.run(
        [AGENTCFG, "key", "set", name],
        env={**home.env, **extra_env},
        input=value + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


# -- reading the report ------------------------------------------------------------------------------


def found(report: dict[str, Any], agent: str | None, fid: str, status: str | None = None) -> list[dict[str, Any]]:
    return [
        f
        for f in report["findings"]
        if f["agent"] == agent and f["id"] == fid and (status is None or f["status"] == status)
    ]


def one(report: dict[str, Any], agent: str | None, fid: str, status: str) -> dict[str, Any]:
    """The finding (agent, id, status); fails listing every problem when there is none."""
    matches = found(report, agent, fid, status)
    assert matches, (agent, fid, status, problems(report))
    return matches[0]


def problems(report: dict[str, Any], agent: object = ...) -> set[tuple[str | None, str, str]]:
    """(agent, id, status) of every fail and warn, for one agent or all."""
    return {
        (f["agent"], f["id"], f["status"])
        for f in report["findings"]
        if f["status"] in ("fail", "warn") and (agent is ... or f["agent"] == agent)
    }


def assert_documented_shape(report: dict[str, Any]) -> None:
    """--json: ok, offline, findings (id/status/agent/summary/evidence/fix/hint/leg/server), agents, requests,
    elapsed_s, summary, route."""
    assert {"ok", "offline", "findings", "agents", "requests", "elapsed_s", "summary"} <= set(report)
    assert isinstance(report["requests"], int) and isinstance(report["elapsed_s"], float)
    for finding in report["findings"]:
        assert set(finding) == {"id", "status", "agent", "summary", "evidence", "fix", "hint", "leg", "server"}
        assert finding["status"] in ("fail", "warn", "pass", "skip")
        assert finding["agent"] in (*AGENTS, None)
        assert finding["leg"] is None and report["route"] is None  # not a route: no leg's findings
        assert finding["server"] is None  # no agent here has an MCP server
    for agent in report["agents"]:
        assert {"agent", "base_url", "model", "profile", "key_source", "proxy"} <= set(agent)
    counts = {s: sum(f["status"] == s for f in report["findings"]) for s in ("fail", "warn", "pass", "skip")}
    assert report["summary"] == counts
    assert report["ok"] is (counts["fail"] == 0)


def posts(server: FaultServer) -> list[tuple[str, dict[str, str], Any]]:
    return [(path, headers, body) for method, path, headers, body in server.requests if method == "POST"]


def auth_headers(server: FaultServer) -> list[str]:
    return [h.get("Authorization", "") + h.get("X-Api-Key", "") for _, _, h, _ in server.requests]


def thinking_probe(body: Any) -> bool:
    """A request of the two-turn tool probe (MODEL is a thinking family): not one of the agents' own."""
    from agentcfg.doctor import thinking

    return thinking.PROMPT in json.dumps(body) or thinking.CLAUDE_PROMPT in json.dumps(body)


def assert_agent_requests(server: FaultServer) -> None:
    """The requests each agent really makes reached the server (and the two-turn probe's first turns)."""
    assert {path.split("?")[0] for path, _, body in posts(server) if thinking_probe(body)} == {
        "/v1/responses",
        "/v1/chat/completions",
        "/v1/messages",
    }
    own = [(path, headers, body) for path, headers, body in posts(server) if not thinking_probe(body)]
    sent = {path.split("?")[0]: (path, headers, body) for path, headers, body in own}
    # Codex: the Responses API, streaming, with a function tool
    _, _, responses = sent["/v1/responses"]
    assert responses["stream"] is True and responses["tools"][0]["type"] == "function"
    # qwen-code / opencode: chat completions with a tool and automatic tool choice, streaming and not
    chats = [body for path, _, body in own if path == "/v1/chat/completions"]
    assert {body["stream"] for body in chats} == {True, False}
    assert all(body["tools"] and body["tool_choice"] == "auto" for body in chats)
    assert all(body["max_tokens"] > 1 for body in chats)  # no max_tokens: 1 ping
    # Claude Code: /v1/messages?beta=true with anthropic-version
    path, headers, messages = sent["/v1/messages"]
    assert path == "/v1/messages?beta=true"
    assert headers.get("anthropic-version") == "2023-06-01"
    assert messages["stream"] is True and messages["tools"]
    # /models at the base URL, and with /v1 taken away
    gets = {path for method, path, _, _ in server.requests if method == "GET"}
    assert {"/v1/models", "/models"} <= gets


# -- servers the fault server cannot play by itself ----------------------------------------------------


class StatusHandler(fault_server._Handler):
    """Answers every POST with one HTTP status and a vLLM-shaped error body (429, 500, ...)."""

    def _route(self, method: str, body: Any) -> None:
        srv = self.server
        if method == "POST":
            srv.requests.append((method, self.path, dict(self.headers), body))
            self._error(srv.status, srv.status_message, "RateLimitError" if srv.status == 429 else "Error")
            return
        super()._route(method, body)


class StallHandler(fault_server._Handler):
    """Answers every POST with the headers of a stream, then says nothing more for 3 s."""

    def _route(self, method: str, body: Any) -> None:
        if method == "POST":
            self.server.requests.append((method, self.path, dict(self.headers), body))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            self.wfile.flush()
            time.sleep(3)
            self.close_connection = True
            return
        super()._route(method, body)


class AbsoluteFormHandler(fault_server._Handler):
    """A forward proxy that answers for the origin itself: it takes `GET http://127.0.0.1:P/v1/models`."""

    def _route(self, method: str, body: Any) -> None:
        if self.path.startswith("http://"):
            self.path = "/" + self.path.split("/", 3)[3]
            self.server.proxied = getattr(self.server, "proxied", 0) + 1
        super()._route(method, body)


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (cert.pem, key.pem)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


class TLSFaultServer(FaultServer):
    """The fault server behind TLS with a self-signed certificate: https://127.0.0.1:PORT/v1."""

    def __init__(self, cert: Path, key: Path, fault: str = "healthy") -> None:
        super().__init__(fault)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.root = f"https://127.0.0.1:{self.port}"
        self.base_url = self.root + "/v1"


# -- shared setups (module scope; each test resets the server it uses) --------------------------------


@dataclass
class Setup:
    home: Home
    server: FaultServer


@pytest.fixture(scope="module")
def _standard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    """All four agents switched to a keyless profile `t` (window 65,536) on one fault server."""
    with serve(FaultServer()) as server:
        home = make_home(tmp_path_factory.mktemp("standard"))
        switch_to(home, server.base_url, server.root)
        yield Setup(home, server)


@pytest.fixture
def standard(_standard: Setup) -> Iterator[Setup]:
    set_fault(_standard.server)
    yield _standard
    set_fault(_standard.server)


@pytest.fixture(scope="module")
def _keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    """All four agents switched to profile `t` whose key is in T_KEY; the server checks the key."""
    with serve(FaultServer(key=SERVER_KEY)) as server:
        home = make_home(tmp_path_factory.mktemp("keyed"))
        switch_to(home, server.base_url, server.root, key_env="T_KEY")
        yield Setup(home, server)


@pytest.fixture
def keyed(_keyed: Setup) -> Iterator[Setup]:
    set_fault(_keyed.server, key=SERVER_KEY)
    yield _keyed
    set_fault(_keyed.server, key=SERVER_KEY)


@pytest.fixture(scope="module")
def _unbounded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    """All four agents switched to a keyless profile that does not say its context window."""
    with serve(FaultServer()) as server:
        home = make_home(tmp_path_factory.mktemp("unbounded"))
        switch_to(home, server.base_url, server.root, window=None)
        yield Setup(home, server)


@pytest.fixture
def unbounded(_unbounded: Setup) -> Iterator[Setup]:
    set_fault(_unbounded.server)
    yield _unbounded
    set_fault(_unbounded.server)


@pytest.fixture(scope="module")
def _catalogue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    """Profiles only, nothing switched: checked with `doctor PROFILE`."""
    with serve(FaultServer()) as server:
        home = make_home(tmp_path_factory.mktemp("catalogue"))
        add_profile(home, server.base_url, server.root, name="t")
        add_profile(home, server.root, server.root, name="nov1")  # base URL without /v1
        add_profile(home, server.base_url, server.root, name="gpt", model="gpt-4o")
        add_profile(home, server.base_url, server.root, name="lower", model=MODEL.lower())
        yield Setup(home, server)


@pytest.fixture
def catalogue(_catalogue: Setup) -> Iterator[Setup]:
    set_fault(_catalogue.server)
    yield _catalogue
    set_fault(_catalogue.server)


@pytest.fixture(scope="module")
def dead(tmp_path_factory: pytest.TempPathFactory) -> tuple[Home, int]:
    """All four agents switched to a loopback port nothing listens on."""
    port = dead_port()
    home = make_home(tmp_path_factory.mktemp("dead"))
    switch_to(home, f"http://127.0.0.1:{port}/v1", f"http://127.0.0.1:{port}")
    return home, port


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Home:
    """A keyless profile on a remote name (only ever checked --offline) switched for all four agents."""
    home = make_home(tmp_path_factory.mktemp("remote"))
    switch_to(home, "https://gw.example/v1", "https://gw.example")
    return home


@pytest.fixture(scope="module")
def _tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Setup, Path]]:
    directory = tmp_path_factory.mktemp("tls")
    cert, key = self_signed_certificate(directory)
    with serve(TLSFaultServer(cert, key)) as server:
        home = make_home(directory)
        switch_to(home, server.base_url, server.root)
        yield Setup(home, server), cert


@pytest.fixture
def tls(_tls: tuple[Setup, Path]) -> tuple[Setup, Path]:
    set_fault(_tls[0].server)
    return _tls


# -- real processes that look like vLLM -------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _processes_lock(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Exclusive for a test that starts fake vLLM processes, shared for the others (across xdist workers)."""
    exclusive = "spawn" in request.fixturenames
    lock = tmp_path_factory.getbasetemp().parent / "agentcfg-test-doctor.lock"
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def group_alive(pgid: int) -> bool:
    """Whether a process of group `pgid` still runs (zombies have no command line: doctor ignores them)."""
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split() if entry.name.isdigit() else []
        except OSError:
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


@pytest.fixture
def spawn() -> Iterator[Any]:
    """Start processes in their own session; every one is killed (its process group, by id) at the end."""
    if not Path("/proc/self/cmdline").exists():
        pytest.skip("doctor reads vLLM processes from /proc (Linux)")
    started: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str], marker: str) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        started.append(process)
        wait_for_cmdline(process.pid, marker)
        return process

    try:
        yield start
    finally:
        for process in started:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
            deadline = time.monotonic() + 5  # its children (an engine under a fake server) die a moment later
            while group_alive(process.pid) and time.monotonic() < deadline:
                time.sleep(0.01)


def wait_for_cmdline(pid: int, marker: str) -> None:
    """Until /proc/PID/cmdline shows `marker` as its program or script: `exec -a` takes a moment."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            args = []
        if any(a.decode(errors="replace").endswith(marker) for a in args[:2]):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never showed {marker!r} in its command line")


def engines_under(parent: int) -> list[int]:
    """PIDs of `VLLM::EngineCore` processes whose parent is `parent`."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or not (entry / "cmdline").read_bytes().startswith(b"VLLM::EngineCore"):
                continue
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent:
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def fake_vllm(tmp_path: Path, body: str = "sleep 30\n") -> Path:
    """An executable named `vllm`; `vllm serve ...` then shows in /proc as a vLLM server with its flags.

    It must not `exec sleep`: that would replace the command line the flags are read from.
    """
    directory = tmp_path / f"vllm-{len(list(tmp_path.glob('vllm-*')))}"
    directory.mkdir()
    script = directory / "vllm"
    script.write_text("#!/bin/bash\n" + body)
    script.chmod(0o755)
    return script


def serve_args(script: Path, port: int, *flags: str) -> list[str]:
    return [str(script), "serve", "m", "--port", str(port), *flags]


TOOL_FLAGS = ("--enable-auto-tool-choice", "--tool-call-parser", "hermes")


# == healthy ==============================================================================================


def test_healthy_server_every_agent_passes_in_few_real_requests(standard):
    report = doctor(standard.home, check=0)
    sent = len(standard.server.requests)
    assert_agent_requests(standard.server)
    text = doctor_text(standard.home, check=0)

    assert_documented_shape(report)
    assert report["ok"] is True
    assert report["offline"] is False
    assert problems(report) == set()
    for agent in AGENTS:
        passed = {f["id"] for f in report["findings"] if f["agent"] == agent and f["status"] == "pass"}
        assert {"server-unreachable", "key-rejected", "tool-parser-missing", "stream-broken"} <= passed, agent
        assert "context-limit-exceeded" in passed, agent
    assert [a["agent"] for a in report["agents"]] == list(AGENTS)
    assert all(a["profile"] == "t" and a["model"] == MODEL for a in report["agents"])
    assert report["summary"]["fail"] == report["summary"]["warn"] == 0
    # what was sent is what was counted, and little of it (identical requests go once)
    assert 0 < report["requests"] <= 12 + 3  # + the thinking probe's three first turns (no tool call: no turn 2)
    assert sent == report["requests"]
    for agent in AGENTS:
        assert f"\n{agent} " in "\n" + text
    assert "0 failed, 0 warnings" in text
    assert f"{report['requests']} requests in" in text


def test_agent_option_checks_only_the_agents_named(standard):
    report = doctor(standard.home, "--agent", "codex", "--agent", "claude", check=0)
    assert [a["agent"] for a in report["agents"]] == ["codex", "claude"]
    assert {f["agent"] for f in report["findings"]} == {"codex", "claude"}
    streamed_chat = [body for path, _, body in posts(standard.server) if "/chat/" in path and body.get("stream")]
    assert streamed_chat == []  # that is qwen's and opencode's request


def test_profile_argument_checks_the_profile_before_any_switch(catalogue):
    report = doctor(catalogue.home, "t", check=0)
    assert report["ok"] is True, problems(report)
    urls = {catalogue.server.base_url, catalogue.server.root}
    assert all(a["base_url"] in urls and a["profile"] == "t" for a in report["agents"])
    assert not (catalogue.home.root / ".codex").exists()  # doctor wrote nothing


# == the server cannot be reached ==========================================================================


def test_dead_port_is_server_unreachable_for_every_agent(dead):
    home, port = dead
    report = doctor(home, check=1)
    assert report["ok"] is False
    for agent in AGENTS:
        finding = one(report, agent, "server-unreachable", "fail")
        assert f"127.0.0.1:{port}" in finding["summary"]
        assert "refused" in finding["evidence"]
        assert "start the server" in finding["hint"]


def test_offline_sends_nothing_and_does_not_fail_for_unreachability(dead):
    home, _ = dead
    report = doctor(home, "--offline", check=0)
    assert report["ok"] is True and report["offline"] is True
    assert report["requests"] == 0
    assert not any(f["id"] == "server-unreachable" for f in report["findings"])


def test_black_hole_returns_within_the_deadline_as_a_timeout(home):
    with BlackHole() as hole:
        add_profile(home, hole.base_url, hole.base_url.removesuffix("/v1"))
        started = time.monotonic()
        result = home.run("doctor", "t", "--json", "--timeout", "2", check=1)
        wall = time.monotonic() - started
    assert wall < 4.5, wall  # the 2 s deadline + 1 s + the CLI's start-up
    report = json.loads(result.stdout)
    assert report["elapsed_s"] < 3.0
    for agent in AGENTS:  # it took the connection: a server that is up but silent, not one that is down
        finding = one(report, agent, "server-not-answering", "fail")
        assert "no answer" in finding["evidence"] and "connected" in finding["evidence"]
        assert "up but not answering" in finding["summary"] and "/health" in finding["hint"]
        assert not found(report, agent, "server-unreachable")


def test_headers_then_silence_is_server_slow_not_unreachable(standard):
    set_fault(standard.server, handler=StallHandler)
    started = time.monotonic()
    report = doctor(standard.home, "--timeout", "1", check=0)
    assert time.monotonic() - started < 3.0
    for agent in AGENTS:
        finding = one(report, agent, "server-slow", "warn")
        assert "HTTP 200" in finding["evidence"]
        assert "--timeout" in finding["hint"]
        assert not found(report, agent, "server-unreachable", "fail")


def test_proxy_on_a_dead_port_intercepts_local_requests(standard):
    proxy = f"http://127.0.0.1:{dead_port()}"
    report = doctor(standard.home, check=1, HTTP_PROXY=proxy, NO_PROXY="")
    for agent in AGENTS:  # one cause (the dead proxy), one finding per agent
        finding = one(report, agent, "proxy-unreachable", "fail")
        assert proxy in finding["summary"] and "(direct works)" in finding["summary"]
        assert "direct: works" in finding["evidence"]
        assert ("env -u HTTPS_PROXY" if agent == "qwen" else "export NO_PROXY=") in finding["fix"]
        assert not found(report, agent, "proxy-intercepts-local")
        assert not found(report, agent, "server-unreachable"), "the proxy explains it"
    assert {a["agent"]: a["proxy"] for a in report["agents"]} == dict.fromkeys(AGENTS, proxy)


def test_no_proxy_covers_local_requests_except_for_qwen_which_ignores_it(standard):
    proxy = f"http://127.0.0.1:{dead_port()}"
    report = doctor(standard.home, check=1, HTTP_PROXY=proxy, NO_PROXY="127.0.0.1,localhost")
    for agent in ("codex", "opencode", "claude", "cline", "copilot", "droid"):
        assert not any(f["id"].startswith("proxy-") for f in report["findings"] if f["agent"] == agent), agent
        assert problems(report, agent) == set()
    finding = one(report, "qwen", "proxy-unreachable", "fail")
    assert problems(report, "qwen") == {("qwen", "proxy-unreachable", "fail")}  # one finding, not two
    # NO_PROXY is already set: the fix that works for qwen runs it without the proxy variables
    assert finding["fix"] == "env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy qwen"
    assert "ignores NO_PROXY" in finding["hint"]
    proxies = {a["agent"]: a["proxy"] for a in report["agents"]}
    assert proxies == {
        "codex": None,
        "qwen": proxy,
        "opencode": None,
        "claude": None,
        "cline": None,
        "copilot": None,
        "droid": None,
    }


def test_working_proxy_in_front_of_a_local_server_is_a_warning(standard):
    with serve(FaultServer()) as proxy:
        proxy._server.RequestHandlerClass = AbsoluteFormHandler
        report = doctor(standard.home, check=0, HTTP_PROXY=proxy.root, NO_PROXY="")
        assert proxy._server.proxied > 0  # the requests really went through it
    assert report["ok"] is True
    for agent in AGENTS:
        finding = one(report, agent, "proxy-intercepts-local", "warn")
        assert "through the proxy" in finding["summary"] and "fail" not in finding["summary"]
        assert ("env -u HTTPS_PROXY" if agent == "qwen" else "NO_PROXY") in finding["fix"]
        assert not found(report, agent, "proxy-unreachable")


def test_self_signed_https_is_tls_untrusted_with_each_agents_ca_variable(tls):
    setup, _ = tls
    report = doctor(setup.home, check=1)
    assert setup.server.requests == []  # no request got past the handshake
    for agent in AGENTS:
        finding = one(report, agent, "tls-untrusted", "fail")
        assert "127.0.0.1" in finding["summary"] and "not trusted" in finding["summary"]
        assert "certificate" in finding["evidence"].lower()
    assert "CODEX_CA_CERTIFICATE" in one(report, "codex", "tls-untrusted", "fail")["hint"]
    for agent in ("qwen", "opencode", "claude"):
        assert "NODE_EXTRA_CA_CERTS" in one(report, agent, "tls-untrusted", "fail")["hint"]


def test_tls_untrusted_clears_once_the_agents_ca_variables_name_the_certificate(tls):
    setup, cert = tls
    report = doctor(setup.home, check=None, NODE_EXTRA_CA_CERTS=str(cert), CODEX_CA_CERTIFICATE=str(cert))
    assert not any(f["id"] == "tls-untrusted" for f in report["findings"]), problems(report)


# == keys ==================================================================================================


def test_key_missing_when_the_variable_is_unset_and_nothing_is_stored(keyed, tmp_path):
    report = doctor(keyed.home, check=1, **keyring_env(tmp_path / "empty-keyring.json"))
    # statically: codex and qwen refuse to start, opencode starts and sends no key
    for agent in ("codex", "qwen"):
        finding = one(report, agent, "key-missing", "fail")
        assert "T_KEY" in finding["summary"] and "refuses to start" in finding["summary"]
        assert f"agentcfg exec t -- {agent}" in finding["fix"]
    static = one(report, "opencode", "key-missing", "warn")
    assert "sends no key" in static["summary"]
    # ... and the probe proves it: the server wants a key and opencode sends none
    probed = one(report, "opencode", "key-missing", "fail")
    assert "wants a key" in probed["summary"] and "401" in probed["evidence"]
    assert "agentcfg key set t" in probed["fix"]
    # Claude Code's helper (`agentcfg key get t`) finds nothing in the keyring
    claude = one(report, "claude", "key-missing", "fail")
    assert "agentcfg key set t" in claude["fix"]
    assert not any(f["id"] == "key-rejected" for f in report["findings"])
    assert set(auth_headers(keyed.server)) == {""}  # no key was sent


def test_key_in_the_keyring_but_not_exported_warns_and_probes_with_it(keyed, tmp_path):
    keyring = keyring_env(tmp_path / "keyring.json")
    store_key(keyed.home, "t", SERVER_KEY, **keyring)
    result = keyed.home.run("doctor", "--json", check=0, **keyring)
    text = doctor_text(keyed.home, check=0, **keyring)
    report = json.loads(result.stdout)
    assert report["ok"] is True, problems(report)
    for agent in ("codex", "qwen", "opencode"):
        finding = one(report, agent, "key-missing", "warn")
        assert "sends no key" in finding["summary"]
        assert f"agentcfg exec t -- {agent}" in finding["fix"]
    for agent in AGENTS:
        one(report, agent, "key-rejected", "pass")
    assert f"Bearer {SERVER_KEY}" in auth_headers(keyed.server)
    assert SERVER_KEY not in result.stdout + result.stderr + text


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_wrong_key_is_key_rejected_and_never_printed(keyed, as_json):
    args = ("doctor", "--json") if as_json else ("doctor",)
    result = keyed.home.run(*args, check=1, T_KEY=WRONG_KEY)
    assert f"Bearer {WRONG_KEY}" in auth_headers(keyed.server)  # it was really tried ...
    assert WRONG_KEY not in result.stdout + result.stderr  # ... and never shown
    assert "key-rejected" in result.stdout
    if as_json:
        report = json.loads(result.stdout)
        for agent in ("codex", "qwen", "opencode"):
            finding = one(report, agent, "key-rejected", "fail")
            assert "T_KEY" in finding["summary"] and "401" in finding["evidence"]
            assert "agentcfg key set t" in finding["fix"]
        one(report, "claude", "key-rejected", "fail")


@pytest.mark.parametrize("bad_key", ["sk-abc def", "sk-abc\ndef"], ids=["space", "newline"])
def test_key_with_whitespace_is_key_malformed(keyed, bad_key):
    result = keyed.home.run("doctor", "--json", check=1, T_KEY=bad_key)
    report = json.loads(result.stdout)
    for agent in ("codex", "qwen", "opencode"):
        finding = one(report, agent, "key-malformed", "fail")
        assert "whitespace" in finding["summary"]
        # the key comes from T_KEY in this shell: storing one in the keyring would not change what the agent reads
        assert finding["fix"] == "" and "env T_KEY" in finding["hint"]
    assert bad_key not in result.stdout + result.stderr


def test_key_with_whitespace_is_key_malformed_for_claude_too(keyed):
    report = doctor(keyed.home, "--agent", "claude", check=1, T_KEY="sk-abc def")
    one(report, "claude", "key-malformed", "fail")


def test_placeholder_key_to_a_remote_host_offline_sends_nothing(remote):
    with BlackHole() as sentinel:  # as the proxy: any request to gw.example would land here
        proxy = f"http://127.0.0.1:{sentinel.port}"
        report = doctor(remote, "--offline", check=1, HTTPS_PROXY=proxy, HTTP_PROXY=proxy)
        time.sleep(0.2)  # the sentinel's accept loop polls every 0.1 s
        assert sentinel._held == []
    assert report["offline"] is True and report["requests"] == 0
    for agent in ("qwen", "claude"):  # the two that a keyless switch gives a placeholder
        finding = one(report, agent, "key-placeholder-to-remote", "fail")
        assert "gw.example" in finding["summary"] and "placeholder" in finding["summary"]
        assert "agentcfg switch t" in finding["fix"]
    for agent in ("codex", "opencode"):  # they send no key at all
        assert not found(report, agent, "key-placeholder-to-remote")
    assert not any(f["id"] == "server-unreachable" for f in report["findings"])


def test_profile_argument_agrees_with_a_switch_about_who_sends_a_placeholder(remote):
    report = doctor(remote, "t", "--offline", check=1)
    for agent in ("codex", "opencode"):
        assert not found(report, agent, "key-placeholder-to-remote"), problems(report)


def test_qwen_falling_back_to_openai_api_key_is_a_warning_only(keyed):
    keyed.server._server.key = None  # a server that takes any key: only the static findings matter
    report = doctor(keyed.home, "--agent", "qwen", check=None, OPENAI_API_KEY="sk-other-openai-key-999")
    finding = one(report, "qwen", "key-missing", "warn")
    assert "OPENAI_API_KEY" in finding["summary"]
    assert not found(report, "qwen", "key-missing", "fail"), problems(report)


def test_claude_key_rejected_fix_names_key_set(keyed):
    report = doctor(keyed.home, "--agent", "claude", check=1, T_KEY=WRONG_KEY)
    assert "agentcfg key set t" in one(report, "claude", "key-rejected", "fail")["fix"]


def test_a_profiles_key_never_goes_to_another_host(keyed, tmp_path):
    keyring = keyring_env(tmp_path / "keyring.json")
    store_key(keyed.home, "t", SERVER_KEY, **keyring)
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    with serve(FaultServer()) as other:
        (project / ".claude" / "settings.json").write_text(json.dumps({"env": {"ANTHROPIC_BASE_URL": other.root}}))
        subprocess.run(
            [AGENTCFG, "doctor", "--agent", "claude"],
            env={**keyed.home.env, **keyring},
            cwd=project,
            capture_output=True,
            timeout=60,
        )
    assert other.requests, "doctor probed the project's endpoint"
    assert not any(SERVER_KEY in header for header in auth_headers(other))


# == "reading choices": a response the agent cannot parse =================================================


def test_unknown_model_is_model_not_found_listing_the_servers_models(catalogue):
    report = doctor(catalogue.home, "gpt", check=1)  # profile gpt: model gpt-4o
    for agent in AGENTS:
        finding = one(report, agent, "model-not-found", "fail")
        assert "'gpt-4o'" in finding["summary"] and MODEL in finding["summary"]
        assert "does not exist" in finding["evidence"]
        assert (
            finding["fix"]
            == f"agentcfg profile set gpt model={MODEL} && agentcfg switch gpt --agent {finding['agent']}"
        )


def test_model_with_the_wrong_case_is_model_not_found_suggesting_the_servers_id(catalogue):
    report = doctor(catalogue.home, "lower", "--agent", "codex", check=1)
    finding = one(report, "codex", "model-not-found", "fail")
    assert f"use model {MODEL!r}" in finding["hint"]
    assert (
        finding["fix"]
        == f"agentcfg profile set lower model={MODEL} && agentcfg switch lower --agent {finding['agent']}"
    )


def test_model_not_found_suggests_the_only_model_the_server_has(catalogue):
    report = doctor(catalogue.home, "gpt", "--agent", "codex", check=1)
    assert MODEL in one(report, "codex", "model-not-found", "fail")["fix"]


def test_base_url_with_v1_on_a_server_without_it_names_the_url_that_works(standard):
    set_fault(standard.server, "no-v1")  # the profile still says .../v1
    report = doctor(standard.home, check=1)
    root = standard.server.root
    for agent in ("codex", "qwen", "opencode"):
        finding = one(report, agent, "base-url-path", "fail")
        assert f"{root} works" in finding["summary"]
        assert (
            finding["fix"] == f"agentcfg profile set t base_url={root} && agentcfg switch t --agent {finding['agent']}"
        )
    one(report, "claude", "base-url-path", "fail")  # /v1/messages does not exist there at all


def test_base_url_without_v1_names_the_v1_url(catalogue):
    report = doctor(catalogue.home, "nov1", check=1)
    good = catalogue.server.base_url
    for agent in ("codex", "qwen", "opencode"):
        finding = one(report, agent, "base-url-path", "fail")
        assert f"{good} works" in finding["summary"]
        assert (
            finding["fix"]
            == f"agentcfg profile set nov1 base_url={good} && agentcfg switch nov1 --agent {finding['agent']}"
        )
    assert problems(report, "claude") == set()  # its URL is right without /v1


def test_html_page_is_response_not_openai(standard):
    set_fault(standard.server, "html")
    report = doctor(standard.home, check=1)
    for agent in AGENTS:
        finding = one(report, agent, "response-not-openai", "fail")
        assert "HTML" in finding["evidence"]
        assert "not a web page" in finding["hint"]


def test_json_without_choices_is_response_not_openai(standard):
    set_fault(standard.server, "no-choices")
    report = doctor(standard.home, check=1)
    for agent in ("qwen", "opencode"):
        finding = one(report, agent, "response-not-openai", "fail")
        assert "without `choices`" in finding["evidence"]
        one(report, agent, "stream-broken", "fail")  # a stream that is plain JSON
    assert "got JSON" in one(report, "codex", "stream-broken", "fail")["evidence"]


def test_sse_that_is_not_json_is_stream_broken(standard):
    set_fault(standard.server, "broken-sse")
    report = doctor(standard.home, check=1)
    for agent in AGENTS:
        finding = one(report, agent, "stream-broken", "fail")
        assert "cannot read" in finding["summary"]
        assert "data:" in finding["evidence"]


def test_an_answer_longer_than_doctor_reads_is_judged_on_its_complete_events(standard):
    """Issue 27 item 2: every stream is over 1 MB of text deltas (a model that answers at length). Doctor reads
    up to its limit and judges the complete events: the cut last event is no `data:` line that is not JSON, and
    no missing `[DONE]`, `response.completed` or `message_stop`."""
    set_fault(standard.server, "long-answer")
    report = doctor(standard.home, check=0)
    assert report["ok"] is True, problems(report)
    assert len([body for _, _, body in posts(standard.server) if body.get("stream")]) >= 3
    for agent in AGENTS:
        one(report, agent, "stream-broken", "pass")


class TrickleHandler(fault_server._Handler):
    """Streams as a slow model answers at length: the first events at once, then a text delta every 50 ms for
    10 s, longer than doctor's deadline. A request that asks for no stream is answered as usual."""

    def _route(self, method: str, body: Any) -> None:
        path = self.path.split("?")[0]
        if method != "POST" or not body.get("stream") or path.endswith("/models"):
            super()._route(method, body)
            return
        self.server.requests.append((method, self.path, dict(self.headers), body))
        if path.endswith("/chat/completions"):
            events = [f"data: {json.dumps(c)}\n\n" for c in fault_server.chat_chunks(body["model"], "ready", 2)]
        else:
            build = fault_server.responses_events if path.endswith("/responses") else fault_server.messages_events
            events = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in build(body["model"], "ready", 2)]
        delta = next(i for i, e in enumerate(events) if '"ready"' in e)  # the first text delta
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        self.close_connection = True
        with suppress(OSError):
            self.wfile.write("".join(events[: delta + 1]).encode())
            self.wfile.flush()
            for _ in range(200):
                time.sleep(0.05)
                self.wfile.write(events[delta].encode())
                self.wfile.flush()


def test_a_stream_still_coming_at_the_deadline_is_judged_on_what_came(standard):
    """The deadline cut a stream whose events were still coming: doctor stopped reading, the server did not stop
    sending. What came is judged (streaming works), not called slow (tests/doctor/test_rules_silent.py: a
    stream that went quiet still is)."""
    set_fault(standard.server, handler=TrickleHandler)
    report = doctor(standard.home, "--timeout", "2", check=0)
    assert report["ok"] is True, problems(report)
    for agent in AGENTS:
        assert not found(report, agent, "server-slow"), problems(report)
        one(report, agent, "stream-broken", "pass")


def test_server_without_a_tool_parser_fails_every_agent(standard):
    set_fault(standard.server, "no-tool-parser")
    report = doctor(standard.home, check=1)
    assert_documented_shape(report)
    for agent in AGENTS:
        finding = one(report, agent, "tool-parser-missing", "fail")
        assert "--enable-auto-tool-choice" in finding["evidence"]
        assert "--tool-call-parser" in finding["hint"]
    assert "never runs a tool" in one(report, "codex", "tool-parser-missing", "fail")["summary"]


def test_server_without_responses_api_fails_only_codex(standard):
    set_fault(standard.server, "no-responses")
    report = doctor(standard.home, check=1)
    finding = one(report, "codex", "responses-api-missing", "fail")
    assert "/responses" in finding["summary"] and "Responses API" in finding["summary"]
    assert problems(report) == {("codex", "responses-api-missing", "fail")}
    for agent in ("qwen", "opencode", "claude"):
        one(report, agent, "stream-broken", "pass")


def test_codex_wire_api_chat_fails_without_probing_codex(standard):
    config = standard.home.path(".codex/config.toml")
    text = config.read_text()
    assert 'wire_api = "responses"' in text
    config.write_text(text.replace('wire_api = "responses"', 'wire_api = "chat"'))
    try:
        report = doctor(standard.home, "--agent", "codex", check=1)
    finally:
        config.write_text(text)
    finding = one(report, "codex", "codex-wire-api", "fail")
    assert 'wire_api = "chat"' in finding["summary"]
    assert finding["fix"] == "agentcfg switch t --agent codex" and 'wire_api = "responses"' in finding["hint"]
    assert report["requests"] == 0 and standard.server.requests == []


def test_config_that_does_not_parse_is_config_unreadable(home):
    home.write(".codex/config.toml", 'model = "m"\n[broken\n')
    report = doctor(home, "--agent", "codex", check=1)
    finding = one(report, "codex", "config-unreadable", "fail")
    assert "config.toml" in finding["evidence"]
    assert report["requests"] == 0


@pytest.mark.parametrize(
    ("status", "message", "fid", "level"),
    [
        (429, "Rate limit exceeded", "rate-limited", "warn"),
        (500, "EngineCore encountered an issue", "server-error", "fail"),
        (400, "temperature must be non-negative", "request-rejected", "fail"),
    ],
)
def test_other_http_errors_carry_the_servers_message(standard, status, message, fid, level):
    set_fault(standard.server, handler=StatusHandler)
    standard.server._server.status, standard.server._server.status_message = status, message
    report = doctor(standard.home, check=1 if level == "fail" else 0)
    for agent in AGENTS:
        finding = one(report, agent, fid, level)
        assert f"HTTP {status}" in finding["evidence"] and message in finding["evidence"]


def test_rate_limited_requests_are_not_reported_as_working(standard):
    set_fault(standard.server, handler=StatusHandler)
    standard.server._server.status, standard.server._server.status_message = 429, "Rate limit exceeded"
    report = doctor(standard.home, check=0)
    for agent in AGENTS:
        one(report, agent, "rate-limited", "warn")
        assert not found(report, agent, "stream-broken", "pass"), agent
        assert not found(report, agent, "tool-parser-missing", "pass"), agent


# == the context window ===================================================================================


def test_small_window_fails_the_agents_whose_prompt_does_not_fit(unbounded):
    set_fault(unbounded.server, max_model_len=16384)
    report = doctor(unbounded.home, check=1)
    for agent, prompt in (("claude", "32,000"), ("qwen", "22,000")):
        finding = one(report, agent, "context-limit-exceeded", "fail")
        assert prompt in finding["summary"] and "16,384" in finding["summary"]
        assert "--max-model-len" in finding["hint"]
    one(report, "codex", "context-limit-exceeded", "pass")  # ~13k fits
    # opencode: without a window in the profile, switch tells it 131,072 (budget.ASSUMED_WINDOW): it would
    # not compact before the server refuses. One cause, one finding: not also its output limit.
    assert len(problems(report, "opencode")) == 1
    told = one(report, "opencode", "context-window-too-large", "fail")
    assert "131,072" in told["summary"] and "16,384" in told["summary"]
    assert told["fix"] == f"agentcfg profile set t context_window=16384 && agentcfg switch t --agent {told['agent']}"


def test_window_that_holds_every_prompt_and_the_bounded_output_passes(unbounded):
    set_fault(unbounded.server, max_model_len=131072)  # what opencode is told without a profile window
    report = doctor(unbounded.home, check=0)
    assert report["ok"] is True, problems(report)
    for agent in ("qwen", "opencode", "claude"):
        assert "8,192" in one(report, agent, "context-limit-exceeded", "pass")["summary"]
    one(report, "codex", "context-limit-exceeded", "pass")


def test_profile_window_larger_than_the_servers_makes_the_output_too_large(standard):
    set_fault(standard.server, max_model_len=16384)  # the profile says 65,536: opencode may ask for ~27k
    report = doctor(standard.home, "--agent", "opencode", check=1)
    # one cause, one finding: the window opencode is told, not also the output limit that follows from it
    assert len(problems(report, "opencode")) == 1
    finding = one(report, "opencode", "context-window-too-large", "fail")
    assert "27,768 output tokens" in finding["summary"] and "16,384" in finding["summary"]
    assert (
        finding["fix"] == f"agentcfg profile set t context_window=16384 && agentcfg switch t --agent {finding['agent']}"
    )


# == Claude Code login =====================================================================================


def write_json(home: Home, relative: str, data: Any) -> None:
    home.write(relative, json.dumps(data))


def claude_login(home: Home, expires_in: float) -> int:
    expires = int((time.time() + expires_in) * 1000)
    write_json(home, ".claude/.credentials.json", {"claudeAiOauth": {"accessToken": "x", "expiresAt": expires}})
    return expires


def test_token_and_api_key_in_settings_are_an_auth_conflict(home):
    with serve(FaultServer()) as server:
        env = {"ANTHROPIC_BASE_URL": server.root, "ANTHROPIC_MODEL": MODEL}
        env |= {"ANTHROPIC_AUTH_TOKEN": "tok-aaaaaaaaaaaa", "ANTHROPIC_API_KEY": "key-bbbbbbbbbbbb"}
        write_json(home, ".claude/settings.json", {"env": env})
        report = doctor(home, "--agent", "claude", check=1)
    finding = one(report, "claude", "claude-auth-conflict", "fail")
    assert "ANTHROPIC_AUTH_TOKEN" in finding["summary"] and "ANTHROPIC_API_KEY" in finding["summary"]
    assert "keep one" in finding["hint"] and not finding["fix"]  # no profile for the endpoint: no command


def test_api_key_in_the_shell_and_token_in_settings_are_an_auth_conflict(standard):
    report = doctor(standard.home, "--agent", "claude", check=1, ANTHROPIC_API_KEY="sk-ant-shell-123456789")
    finding = one(report, "claude", "claude-auth-conflict", "fail")
    assert "ANTHROPIC_AUTH_TOKEN" in finding["summary"] and "ANTHROPIC_API_KEY" in finding["summary"]
    assert finding["fix"] == "unset ANTHROPIC_API_KEY"  # a switch does not change the shell's variable


def test_claude_login_and_api_key_are_an_auth_conflict(home):
    with serve(FaultServer()) as server:
        write_json(
            home, ".claude/settings.json", {"env": {"ANTHROPIC_BASE_URL": server.root, "ANTHROPIC_MODEL": MODEL}}
        )
        claude_login(home, 3600)
        report = doctor(home, "--agent", "claude", check=1, ANTHROPIC_API_KEY="sk-ant-shell-123456789")
    finding = one(report, "claude", "claude-auth-conflict", "fail")
    assert "claude.ai login" in finding["summary"] and "ANTHROPIC_API_KEY" in finding["summary"]
    assert finding["fix"] == "unset ANTHROPIC_API_KEY" and "/logout" in finding["hint"]


def test_an_api_key_alone_is_a_warning_for_its_approval_prompt(home):
    """Issue 16 item 5: interactive Claude Code asks to approve an ANTHROPIC_API_KEY (never a token or helper)."""
    with serve(FaultServer()) as server:
        env = {"ANTHROPIC_BASE_URL": server.root, "ANTHROPIC_MODEL": MODEL, "ANTHROPIC_API_KEY": "key-bbbbbbbbbbbb"}
        write_json(home, ".claude/settings.json", {"env": env})
        report = doctor(home, "--agent", "claude", check=None)
        finding = one(report, "claude", "claude-api-key-set", "warn")
        assert "ask whether to use it" in finding["summary"]
        assert "settings.json" in finding["evidence"]
        del env["ANTHROPIC_API_KEY"]
        write_json(home, ".claude/settings.json", {"env": env})
        shell = doctor(home, "--agent", "claude", check=None, ANTHROPIC_API_KEY="sk-ant-shell-123456789")
    assert one(shell, "claude", "claude-api-key-set", "warn")["fix"] == "unset ANTHROPIC_API_KEY"


def test_a_token_alone_gets_no_api_key_warning(standard):
    report = doctor(standard.home, "--agent", "claude", check=None)
    assert not [f for f in report["findings"] if f["id"] == "claude-api-key-set"]


def test_claude_with_an_endpoint_but_no_token_requires_login_and_is_not_probed(home):
    with serve(FaultServer()) as server:
        write_json(home, ".claude/settings.json", {"env": {"ANTHROPIC_BASE_URL": server.root}})
        report = doctor(home, "--agent", "claude", check=1)
        assert server.requests == []
    finding = one(report, "claude", "claude-login-required", "fail")
    assert "ANTHROPIC_BASE_URL" in finding["summary"] and "/login" in finding["summary"]
    assert not finding["fix"] and "agentcfg profile add" in finding["hint"]  # no profile for the endpoint


def test_installed_claude_without_settings_or_login_is_not_logged_in(home, tmp_path):
    claude = tmp_path / "bin" / "claude"  # the home fixture's PATH entry
    claude.write_text("#!/bin/sh\nexit 0\n")
    claude.chmod(0o755)
    report = doctor(home, "--agent", "claude", check=1)
    finding = one(report, "claude", "claude-login-required", "fail")
    assert "not logged in" in finding["summary"]
    assert "agentcfg switch" in finding["fix"]


def test_nothing_installed_or_configured_is_skipped(home):
    report = doctor(home, check=0)
    assert report["ok"] is True
    findings = {(f["agent"], f["id"], f["status"]) for f in report["findings"]}
    assert findings == {(agent, "not-configured", "skip") for agent in AGENTS}


def test_claude_first_run_screens_are_a_login_warning(standard):
    onboarding = standard.home.path(".claude.json")
    onboarding.write_text(json.dumps({"numStartups": 1}))
    try:
        report = doctor(standard.home, "--agent", "claude", check=0)
    finally:
        onboarding.unlink()
    finding = one(report, "claude", "claude-login-required", "warn")
    assert "hasCompletedOnboarding" in finding["summary"]


def test_server_saying_the_oauth_token_expired_is_claude_oauth_expired(standard):
    set_fault(standard.server, "oauth-expired")
    report = doctor(standard.home, check=1)
    finding = one(report, "claude", "claude-oauth-expired", "fail")
    assert "OAuth token has expired" in finding["evidence"]
    assert "/login" in finding["hint"] and finding["fix"] == "agentcfg switch t --agent claude"
    for agent in ("codex", "qwen", "opencode"):
        assert problems(report, agent) == set()


def test_expired_claude_login_without_a_token_is_claude_oauth_expired(home):
    with serve(FaultServer()) as server:
        write_json(
            home, ".claude/settings.json", {"env": {"ANTHROPIC_BASE_URL": server.root, "ANTHROPIC_MODEL": MODEL}}
        )
        expired = claude_login(home, -3600)
        report = doctor(home, "--agent", "claude", check=1)
        finding = one(report, "claude", "claude-oauth-expired", "fail")
        assert str(expired) in finding["evidence"] and "/login" in finding["hint"] and not finding["fix"]
        assert not found(report, "claude", "claude-login-required")

        claude_login(home, 3600)  # logged in again
        report = doctor(home, "--agent", "claude", check=0)
    assert problems(report) == set()


# == the local vLLM server: real processes ================================================================


def test_vllm_with_enforce_eager_and_no_tool_parser_and_its_api_key_masked(standard, tmp_path, spawn):
    script = fake_vllm(tmp_path)
    flags = ("--served-model-name", MODEL, "--enforce-eager", "--api-key", "secret-xyz")
    process = spawn(serve_args(script, standard.server.port, *flags), "vllm")
    result = standard.home.run("doctor", "--json", check=1)
    text = doctor_text(standard.home, "--offline", check=1)
    report = json.loads(result.stdout)
    eager = one(report, None, "vllm-enforce-eager", "warn")
    assert f"pid {process.pid}" in eager["evidence"]
    assert "--api-key '****'" in eager["evidence"]  # shlex-quoted
    assert "without --enforce-eager" in eager["hint"] and eager["fix"] == ""
    assert "--enforce-eager" not in eager["hint"].split(": ", 1)[1]  # the command line to restart with
    parser = one(report, None, "tool-parser-missing", "fail")
    assert "--enable-auto-tool-choice" in parser["summary"]
    assert "secret-xyz" not in result.stdout + result.stderr + text
    assert "\nserver\n" in text and "vllm-enforce-eager" in text.split("\nserver\n", 1)[1]
    for agent in AGENTS:
        assert problems(report, agent) == set()  # the probes themselves pass


def test_vllm_flags_on_another_port_or_with_a_parser_give_no_server_finding(standard, tmp_path, spawn):
    spawn(serve_args(fake_vllm(tmp_path), dead_port(), "--enforce-eager"), "vllm")  # another server
    flags = ("--served-model-name", MODEL, *TOOL_FLAGS)
    spawn(serve_args(fake_vllm(tmp_path), standard.server.port, *flags), "vllm")
    report = doctor(standard.home, "--offline", check=0)
    assert report["ok"] is True
    assert [f for f in report["findings"] if f["agent"] is None] == []


def test_vllm_serving_another_model_name_is_model_not_found(standard, tmp_path, spawn):
    flags = ("--served-model-name", "other-model", *TOOL_FLAGS)
    spawn(serve_args(fake_vllm(tmp_path), standard.server.port, *flags), "vllm")
    report = doctor(standard.home, "--offline", check=1)
    finding = one(report, None, "model-not-found", "fail")
    assert "other-model" in finding["summary"] and MODEL in finding["summary"]
    assert f"--served-model-name {MODEL}" in finding["hint"]
    assert finding["fix"] == "agentcfg profile set t model=other-model && agentcfg switch t"


def test_two_vllm_servers_on_one_port_are_duplicates(standard, tmp_path, spawn):
    port = standard.server.port
    flags = ("--served-model-name", MODEL, *TOOL_FLAGS)
    first = spawn(serve_args(fake_vllm(tmp_path), port, *flags), "vllm")
    second = spawn(serve_args(fake_vllm(tmp_path), port, *flags), "vllm")
    report = doctor(standard.home, "--offline", check=0)
    finding = one(report, None, "vllm-duplicate-servers", "warn")
    assert str(first.pid) in finding["summary"] and str(second.pid) in finding["summary"]
    assert f"port {port}" in finding["summary"]


def test_engine_process_without_a_vllm_parent_is_a_stray_worker(standard, spawn):
    stray = spawn(["bash", "-c", "exec -a VLLM::EngineCore sleep 30"], "VLLM::EngineCore")
    report = doctor(standard.home, "--offline", check=1)
    finding = one(report, None, "vllm-stray-workers", "fail")
    assert f"pid {stray.pid}" in finding["summary"]
    assert finding["fix"] == f"kill {stray.pid}"


def test_engine_process_under_a_live_vllm_serve_is_not_stray(standard, tmp_path, spawn):
    script = fake_vllm(tmp_path, "(exec -a VLLM::EngineCore sleep 30) &\nwait\n")
    flags = ("--served-model-name", MODEL, *TOOL_FLAGS)
    server = spawn(serve_args(script, standard.server.port, *flags), "vllm")
    deadline = time.monotonic() + 5
    while not engines_under(server.pid):
        assert time.monotonic() < deadline, "the fake vLLM never started its engine"
        time.sleep(0.01)
    report = doctor(standard.home, "--offline", check=0)
    assert not found(report, None, "vllm-stray-workers"), problems(report)


# == output ================================================================================================


def test_json_key_source_is_not_masked(standard):
    report = doctor(standard.home, "--agent", "qwen", check=0)
    assert report["agents"][0]["key_source"] == "placeholder"


def test_json_fix_reads_as_in_the_text_output(standard):
    set_fault(standard.server, "oauth-expired")
    report = doctor(standard.home, "--agent", "claude", check=1)
    text = doctor_text(standard.home, "--agent", "claude", check=1)
    fix = one(report, "claude", "claude-oauth-expired", "fail")["fix"]
    assert "agentcfg switch t" in text
    assert fix in text


def test_json_summary_reads_as_in_the_text_output(keyed):
    report = doctor(keyed.home, "--agent", "codex", check=1, T_KEY=WRONG_KEY)
    text = doctor_text(keyed.home, "--agent", "codex", check=1, T_KEY=WRONG_KEY)
    summary = one(report, "codex", "key-rejected", "fail")["summary"]
    assert "refuses the key from env T_KEY" in summary
    assert summary in text


def test_output_on_a_terminal_is_coloured_unless_no_color(standard):
    set_fault(standard.server, "no-tool-parser")
    status, coloured = standard.home.run_in_tty("doctor")
    status_plain, plain = standard.home.run_in_tty("doctor", NO_COLOR="1")
    assert status == status_plain == 1
    assert "\x1b[" in coloured  # on a terminal it is coloured ...
    assert "\x1b[" not in plain  # ... unless NO_COLOR is set
    assert "tool-parser-missing" in plain


def test_unknown_profile_is_exit_2(home):
    result = home.run("doctor", "nope", check=2)
    assert "unknown profile 'nope'" in result.stderr
    assert result.stdout == ""


def test_broken_profile_file_is_exit_2(home):
    home.write(".config/agentcfg/profiles/bad.toml", 'base_url = "http://127.0.0.1:1/v1"\nmodel = \n')
    result = home.run("doctor", check=2)
    assert "bad.toml" in result.stderr and "Traceback" not in result.stderr


# == issue 14: what doctor reads, and its rules ===========================================================

LINE_SEPARATOR = "\u2028"  # str.splitlines() splits here; SSE does not, and vLLM writes it raw in JSON


def _with_separator(text: str, marker: str) -> bytes:
    """A captured stream with U+2028 put raw into the first text after `marker` (a delta's content)."""
    at = text.index(marker) + len(marker)
    return (text[:at] + "one" + LINE_SEPARATOR + "two" + text[at:]).encode()


class SeparatorStreamHandler(fault_server._Handler):
    """Streams as real vLLM 0.32 did (the captured bytes), with a U+2028 raw inside a delta's text."""

    def _stream_bytes(self, data: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chat(self, body: dict[str, Any]) -> None:
        if not body.get("stream"):
            super()._chat(body)
            return
        text = (SHARED_FIXTURES / "vllm-0.32-cpu" / "b_chat_stream_include_usage.txt").read_text(encoding="utf-8")
        self._stream_bytes(_with_separator(text, '"delta":{"content":"'))

    def _responses(self, body: dict[str, Any]) -> None:
        text = (SHARED_FIXTURES / "vllm-0.32-cpu" / "c_responses_stream.txt").read_text(encoding="utf-8")
        self._stream_bytes(_with_separator(text, '"content_index":0,"delta":"'))

    def _messages(self, body: dict[str, Any]) -> None:
        events = fault_server.messages_events(body["model"], "one" + LINE_SEPARATOR + "two")
        lines = [f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events]
        self._stream_bytes("".join(lines).encode())


def test_a_healthy_stream_with_a_line_separator_in_the_models_text_passes(standard):
    set_fault(standard.server, handler=SeparatorStreamHandler)
    report = doctor(standard.home, check=0)
    assert report["ok"] is True, problems(report)
    streamed = [body for path, _, body in posts(standard.server) if body.get("stream")]
    assert len(streamed) >= 3  # the chat, Responses and Messages streams were all read
    for agent in AGENTS:
        one(report, agent, "stream-broken", "pass")


def test_a_profile_window_larger_than_the_servers_is_context_window_too_large(standard):
    set_fault(standard.server, max_model_len=16384)  # profile t tells the agents 65,536
    report = doctor(standard.home, "t", check=1)
    for agent in ("codex", "qwen", "opencode"):
        finding = one(report, agent, "context-window-too-large", "fail")
        assert "65,536" in finding["summary"] and "16,384" in finding["summary"]
        assert (
            finding["fix"]
            == f"agentcfg profile set t context_window=16384 && agentcfg switch t --agent {finding['agent']}"
        )
        assert not found(report, agent, "context-limit-exceeded", "warn"), "one cause, one finding"
    assert not found(report, "claude", "context-window-too-large")


class RedirectHandler(fault_server._Handler):
    """Every request under /v1 answered with a redirect (the server's `redirect` status) to `moved_to`."""

    def _route(self, method: str, body: Any) -> None:
        srv = self.server
        srv.requests.append((method, self.path, dict(self.headers), body))
        self.send_response(srv.redirect)
        self.send_header("location", srv.moved_to + self.path.removeprefix("/v1"))
        self.send_header("content-length", "0")
        self.end_headers()


@pytest.mark.parametrize("status", [307, 301])
def test_a_server_that_moved_is_followed_as_the_agents_follow_it(standard, status):
    with serve(FaultServer()) as moved:
        set_fault(standard.server, handler=RedirectHandler)
        standard.server._server.redirect, standard.server._server.moved_to = status, moved.base_url
        report = doctor(standard.home, "--agent", "qwen", "--agent", "codex", check=None)
        streamed = [body for path, _, body in posts(moved) if body.get("stream")]
    for agent in ("qwen", "codex"):
        finding = one(report, agent, "base-url-redirect", "warn" if status == 307 else "fail")
        assert moved.base_url in finding["summary"]
        assert (
            finding["fix"]
            == f"agentcfg profile set t base_url={moved.base_url} && agentcfg switch t --agent {finding['agent']}"
        )
        assert "answers 404" not in finding["summary"]
    if status == 307:  # kept a POST: the requests really reached the new address
        assert report["ok"] is True and streamed
    else:  # resent as a GET, as reqwest and fetch do after a 301
        assert "as a GET" in one(report, "qwen", "base-url-redirect", "fail")["summary"]


class UpstreamGoneHandler(fault_server._Handler):
    """A LiteLLM-like gateway that lists the model, and whose upstream says it does not exist (the
    captured LiteLLM 1.108 answer, tests/fixtures/litellm-1.108-upstream404)."""

    def _route(self, method: str, body: Any) -> None:
        if method == "POST":
            self.server.requests.append((method, self.path, dict(self.headers), body))
            case = "e01-messages-stream" if "/messages" in self.path else "b01-chat"
            captured = json.loads((UPSTREAM404 / f"{case}.json").read_text())["response"]["body"]
            self._send(404, captured)
            return
        super()._route(method, body)


UPSTREAM404 = Path(__file__).parent.parent / "fixtures" / "litellm-1.108-upstream404"


def test_a_model_gone_upstream_of_a_gateway_is_model_not_found_naming_the_upstream(standard):
    set_fault(standard.server, handler=UpstreamGoneHandler)  # /models lists MODEL; every request: 404 upstream
    report = doctor(standard.home, check=1)
    text = doctor_text(standard.home, check=1)
    for agent in AGENTS:
        assert problems(report, agent) == {(agent, "model-not-found", "fail")}
        finding = one(report, agent, "model-not-found", "fail")
        assert "upstream" in finding["summary"] and "gateway lists" in finding["summary"]
        assert "admin" in finding["hint"] and "try again later" not in finding["hint"]
    assert "litellm.NotFoundError" in text and "server-error" not in text
