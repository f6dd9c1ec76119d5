"""doctor pays only for what a run uses: --offline loads no network stack, a plain-http run loads no CA bundle.

Each check runs the real CLI in a subprocess (a temporary HOME, servers on 127.0.0.1 only) through a small
wrapper that records, when the process ends, which modules were imported and whether a TLS context with the
system's or certifi's CAs was built. Not timed: what it checks is what was loaded, which does not depend on
the machine's load. An https probe must verify exactly as before (tests/doctor/test_doctor.py checks the
self-signed server is refused, and trusted once the agent's CA variable names its certificate); the redirect
and proxy checks here keep the lazy TLS context from ever weakening that.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentcfg.doctor import probes
from tests.conftest import Home, make_home
from tests.doctor.test_doctor import (
    AbsoluteFormHandler,
    TLSFaultServer,
    add_profile,
    self_signed_certificate,
    serve,
    switch_to,
)
from tests.fault_server import MODEL, FaultServer, dead_port

# The network stack: none of it may be imported by a run that sends nothing.
NETWORK = (
    "httpx",
    "httpcore",
    "h11",
    "anyio",
    "sniffio",
    "certifi",
    "ssl",
    "_ssl",
    "asyncio",
    "concurrent.futures",
    "socket",
    "selectors",
    "http.client",
    "urllib.request",
)

# What only a run that sends requests, resolves a stored key, checks a route or breaks a tie needs: `doctor --offline`
# of agents switched to one keyless profile imports none of it (start-up is most of its time: issue 31).
OFFLINE_NEVER = (
    *NETWORK,
    "keyring",
    "jsonschema",
    "agentcfg.doctor.send",
    "agentcfg.doctor.probes",
    "agentcfg.doctor.thinking",
    "agentcfg.doctor.route",
    "agentcfg.doctor.wire",  # what a probe and its Result are: the rules name the type only
    "agentcfg.serve.families",  # a model family: for the two-turn probe, or a vLLM process found serving
    "agentcfg.trust",  # the approval command: for a project profile's key variable only
    "agentcfg.apply",  # the journal: read only when two profiles tie for an agent's files
    "agentcfg.journal",
    "agentcfg.doctor.mcp",  # the MCP check: only where an agent has MCP files (none here)
    "agentcfg.mcp.probe",
)
# A healthy run against a keyless local server: the network stack, but no keyring, no schema validator, and of
# agentcfg's own only what --offline loads and the sender's.
ONLINE_NEVER = (
    "keyring",
    "jsonschema",
    "agentcfg.doctor.route",
    "agentcfg.trust",
    "agentcfg.apply",
    "agentcfg.journal",
    "agentcfg.doctor.mcp",  # no agent here has an MCP server: nothing of the MCP check loads
    "agentcfg.mcp.probe",
)


# Runs the CLI as the console script does, then writes what it loaded to the file named in argv[1].
WRAPPER = """
import json, sys
record = {"ca_loads": []}
out, sys.argv = sys.argv[1], ["agentcfg", *sys.argv[2:]]

def watch_ssl():
    # Wrap ssl's CA loading before anything uses it (imports ssl now: only for the online runs).
    import ssl
    create = ssl.create_default_context
    load, paths = ssl.SSLContext.load_verify_locations, ssl.SSLContext.load_default_certs
    def create_default_context(*a, **k):
        record["ca_loads"].append("create_default_context")
        record["cafile"] = k.get("cafile")
        return create(*a, **k)
    def load_verify_locations(self, *a, **k):
        record["ca_loads"].append("load_verify_locations")
        return load(self, *a, **k)
    def load_default_certs(self, *a, **k):
        record["ca_loads"].append("load_default_certs")
        return paths(self, *a, **k)
    ssl.create_default_context = create_default_context
    ssl.SSLContext.load_verify_locations = load_verify_locations
    ssl.SSLContext.load_default_certs = load_default_certs

if "--offline" not in sys.argv:
    watch_ssl()
from agentcfg.cli import main
try:
    status = main()
except SystemExit as exit:
    status = exit.code
finally:
    record["modules"] = sorted(sys.modules)
    record["frozen"] = __import__("gc").get_freeze_count()
    with open(out, "w") as handle:
        json.dump(record, handle)
sys.exit(status)
"""


def run_recorded(home: Home, tmp_path: Path, *args: str, check: int = 0, **extra_env: str) -> dict[str, Any]:
    out = tmp_path / "record.json"
    result = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(out), *args],
        env={**home.env, **extra_env},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == check, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    record = json.loads(out.read_text())
    record["stdout"] = result.stdout
    return record


def network_modules(modules: list[str], names: tuple[str, ...] = NETWORK) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(name + ".") for name in names)]


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Home, FaultServer]]:
    """All four agents switched to a keyless profile on a plain-http fault server."""
    with serve(FaultServer()) as server:
        home = make_home(tmp_path_factory.mktemp("imports"))
        switch_to(home, server.base_url, server.root)
        yield home, server


def test_offline_imports_nothing_of_the_network_stack(healthy, tmp_path):
    home, server = healthy
    server.requests.clear()
    record = run_recorded(home, tmp_path, "doctor", "--offline", "--json")
    assert json.loads(record["stdout"])["offline"] is True
    assert server.requests == []
    assert network_modules(record["modules"]) == []


def test_offline_imports_only_what_its_checks_need(healthy, tmp_path):
    home, _ = healthy
    record = run_recorded(home, tmp_path, "doctor", "--offline")
    assert "0 failed" in record["stdout"]
    assert network_modules(record["modules"], OFFLINE_NEVER) == []
    assert "agentcfg.doctor.rules" in record["modules"]  # what it does need is there: the check did run
    assert record["frozen"] > 0  # the report out, its objects frozen: interpreter shutdown does not scan them


def test_offline_loads_the_checks_of_the_configured_agents_only(tmp_path):
    """An agent without its files gets `not-configured` from the registry's data: its doctor-only modules
    (checks.py, Claude Code's doctor.py) are not imported."""
    home = make_home(tmp_path)
    add_profile(home, "http://127.0.0.1:9/v1", "http://127.0.0.1:9")
    home.run("switch", "t", "--agent", "codex")
    record = run_recorded(home, tmp_path, "doctor", "--offline", "--json")
    assert {f["agent"] for f in json.loads(record["stdout"])["findings"] if f["id"] == "not-configured"} >= {"qwen"}
    doctor_only = sorted(m for m in record["modules"] if m.endswith((".checks", ".doctor")) and ".agents." in m)
    assert doctor_only == ["agentcfg.agents.codex.checks"]


def test_a_healthy_keyless_run_loads_no_keyring_and_no_schema_validator(healthy, tmp_path):
    home, _ = healthy
    record = run_recorded(home, tmp_path, "doctor", "--json")
    assert json.loads(record["stdout"])["ok"] is True
    assert "agentcfg.doctor.plainhttp" in record["modules"]
    assert network_modules(record["modules"], ONLINE_NEVER) == []


def test_plain_http_probes_load_no_httpx(healthy, tmp_path):
    """httpx, httpcore, h11 and anyio were a third of a healthy local run: plainhttp sends what needs none of
    them (plain http, straight to the server), and they load only for a probe that does (tests below)."""
    home, server = healthy
    server.requests.clear()
    record = run_recorded(home, tmp_path, "doctor", "--json")
    assert json.loads(record["stdout"])["requests"] == len(server.requests) > 0
    assert network_modules(record["modules"], ("httpx", "httpcore", "h11", "anyio", "sniffio", "certifi")) == []


def test_offline_of_a_remote_https_profile_imports_nothing_of_the_network_stack(tmp_path):
    home = make_home(tmp_path)
    switch_to(home, "https://gw.example/v1", "https://gw.example")
    record = run_recorded(home, tmp_path, "doctor", "--offline", check=1)  # stand-in key to a remote host
    assert network_modules(record["modules"]) == []


def test_plain_http_probes_load_no_ca_bundle(healthy, tmp_path):
    home, _ = healthy
    record = run_recorded(home, tmp_path, "doctor", "--json")
    report = json.loads(record["stdout"])
    assert report["ok"] is True and report["requests"] > 0
    assert record["ca_loads"] == []  # (httpcore imports certifi's module, a file name: that loads nothing)


def test_an_https_probe_still_loads_the_ca_bundle_and_refuses_a_self_signed_server(tmp_path):
    cert, key = self_signed_certificate(tmp_path)
    with serve(TLSFaultServer(cert, key)) as server:
        home = make_home(tmp_path)
        switch_to(home, server.base_url, server.root)
        record = run_recorded(home, tmp_path, "doctor", "--json", "--agent", "codex", check=1)
    assert server.requests == []  # nothing got past the handshake
    assert {f["id"] for f in json.loads(record["stdout"])["findings"] if f["status"] == "fail"} == {"tls-untrusted"}
    assert "create_default_context" in record["ca_loads"]
    assert Path(record["cafile"]).name == "cacert.pem"  # certifi's bundle, as httpx's verify=True loads it


def test_a_proxied_probe_loads_the_ca_bundle_as_before(healthy, tmp_path):
    home, _ = healthy
    with serve(FaultServer()) as proxy:
        proxy._server.RequestHandlerClass = AbsoluteFormHandler
        record = run_recorded(
            home, tmp_path, "doctor", "--json", "--agent", "codex", HTTP_PROXY=proxy.root, NO_PROXY=""
        )
        assert proxy._server.proxied > 0
    assert "create_default_context" in record["ca_loads"]


# -- the lazy TLS context, in process: a redirect from http to https verifies as a direct https request ------


class _Redirect(BaseHTTPRequestHandler):
    target = ""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(307)
        self.send_header("location", self.target + self.path)
        self.send_header("content-length", "0")
        self.end_headers()


def _redirector(target: str) -> tuple[ThreadingHTTPServer, threading.Thread]:
    handler = type("Redirect", (_Redirect,), {"target": target})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    return server, thread


@pytest.mark.parametrize("trusted", [False, True])
def test_a_redirect_from_http_to_https_verifies_the_certificate(tmp_path, trusted):
    cert, key = self_signed_certificate(tmp_path)
    with serve(TLSFaultServer(cert, key)) as tls:
        redirector, _ = _redirector(tls.root)
        try:
            url = f"http://127.0.0.1:{redirector.server_address[1]}/v1/models"
            probe = probes.Probe("models", url, ca_file=str(cert) if trusted else None)
            (result,) = probes.run([probe], 5.0)
        finally:
            redirector.shutdown()
            redirector.server_close()
    if trusted:  # the agent's CA file trusts it: through to the server
        assert result.error is None and result.status == 200, result
        assert result.extra["redirects"] == [(307, tls.root + "/v1/models")]
    else:
        assert result.error == "tls" and "certificate" in result.detail.lower(), result
        assert tls.requests == []


def test_plain_http_probes_in_process_build_no_ca_context(monkeypatch, tmp_path):
    import ssl

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a CA bundle was loaded for plain-http probes")

    monkeypatch.setattr(ssl, "create_default_context", refuse)
    with serve(FaultServer()) as server:
        plan = [probes.models(server.base_url, {}), probes.chat(server.base_url, MODEL, {}, stream=True)]
        results = probes.run(plan, 5.0)
    assert [r.status for r in results] == [200, 200], results


def test_dead_port_is_still_refused_without_a_ca_context(monkeypatch):
    import ssl

    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: pytest.fail("CA bundle loaded"))
    (result,) = probes.run([probes.models(f"http://127.0.0.1:{dead_port()}/v1", {})], 5.0)
    assert result.error == "refused", result


def test_probes_search_sys_path_for_no_module_at_each_request():
    """httpcore imports sniffio at every request; where it is not installed, each of those imports searched
    sys.path again (a stat per entry). Only a module's first import may search. The probes go through a
    redirect, which httpx follows (plainhttp sends none of these)."""
    from agentcfg.doctor import send, viahttpx  # noqa: F401  (imported first: what they search is not counted)

    searched: list[str] = []

    class Record:
        @staticmethod
        def find_spec(name: str, path: Any = None, target: Any = None) -> None:
            searched.append(name)
            return None

    sys.meta_path.insert(0, Record)  # type: ignore[arg-type]
    try:
        with serve(FaultServer()) as server:
            redirector, _ = _redirector(server.root)
            base = f"http://127.0.0.1:{redirector.server_address[1]}/v1"
            plan = [probes.models(base, {}), probes.Probe("models", f"{base}/models?again=1")]
            probes.run(plan, 5.0)  # the first run may import what httpx and httpcore load lazily
            searched.clear()
            results = probes.run(plan * 3, 5.0)
            redirector.shutdown()
            redirector.server_close()
    finally:
        sys.meta_path.remove(Record)  # type: ignore[arg-type]
    assert [r.status for r in results] == [200, 200] * 3, results
    assert all(r.extra.get("redirects") for r in results), results
    assert searched == []
