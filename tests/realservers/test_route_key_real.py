"""A route's router key against the real LiteLLM proxy (issue 27, item 5): the router refuses a request without
the key, a web page's `text/plain` POST (a CORS simple request, no preflight) gets nothing and may read nothing,
and the agents, configured by `switch` and `exec`, send the key and get their answers.

Only LiteLLM is real here (LITELLM_PYTHON's venv, `.ci/install-servers`: the `route` extra); its legs are
tests/fault_server.py's servers, so no vLLM is needed. `route serve` is this checkout's agentcfg, given the venv's
`litellm` program by AGENTCFG_LITELLM (tests/realservers/test_route_real.py runs the venv's own agentcfg).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from agentcfg.agents import AGENTS as REGISTRY
from tests.conftest import Home
from tests.e2e import agents
from tests.fault_server import MODEL, FaultServer

pytestmark = pytest.mark.realservers

GW_KEY = "sk-gateway-route-key-test-0123456789"
EVIL = "http://evil.example"
COMPLETIONS = ("/v1/chat/completions", "/v1/responses", "/v1/messages")
# Where each agent finds the router key after `switch home`: Codex and Claude Code run agentcfg's key helper; every
# other agent gets it from `agentcfg exec home --` (docs/route.md; Droid reads the variable exec sets, Copilot CLI
# and Cline take no reference in their files, Gemini CLI reads GEMINI_API_KEY).
THROUGH_EXEC = {agent for agent in agents.AGENTS if REGISTRY[agent].TRAITS.key_helper_since is None}


@pytest.fixture
def litellm_program() -> Path:
    python = os.environ.get("LITELLM_PYTHON")
    if not python:
        pytest.fail("needs LITELLM_PYTHON: `bash .ci/install-servers FILE` and export the line it writes")
    return Path(python).parent / "litellm"


@dataclass
class Router:
    url: str  # the router's root (no /v1)
    key: str
    primary: FaultServer
    fallback: FaultServer

    def completions(self) -> list[str]:
        """The completion requests the legs got (not LiteLLM's GET /models at start)."""
        seen = [*self.primary.requests, *self.fallback.requests]
        return [path for method, path, _, _ in seen if method == "POST" and path in COMPLETIONS]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def served(home: Home, litellm_program: Path) -> Iterator[Router]:
    """Route `home`: keyless `local` first, keyed `gw` next, served by the real LiteLLM with its router key."""
    home.env["AGENTCFG_LITELLM"] = str(litellm_program)
    with FaultServer(max_model_len=131072) as primary, FaultServer(key=GW_KEY, max_model_len=131072) as fallback:
        for name, server, extra in (("local", primary, ()), ("gw", fallback, ("--key-env", "GW_API_KEY"))):
            home.run("profile", "add", name, "--base-url", server.base_url, "--anthropic-base-url", server.root,
                     "--model", MODEL, "--context-window", "131072", "--force", *extra)  # fmt: skip
        home.run("key", "set", "gw", stdin_text=GW_KEY + "\n")
        port = _free_port()
        home.run("route", "add", "home", "--primary", "local", "--fallback", "gw", "--port", str(port))
        try:
            home.run("route", "serve", "home", "--timeout", "300")
            key = home.run("key", "get", "home", check=None).stdout.strip()  # checked by the tests, after the router
            yield Router(f"http://127.0.0.1:{port}", key, primary, fallback)
        finally:
            home.run("route", "stop", "home", check=None)


def request(
    url: str, method: str = "POST", body: str | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], str]:
    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=120)
    try:
        conn.request(method, where.path, body, headers or {})
        response = conn.getresponse()
        text = response.read().decode(errors="replace")
        return response.status, {k.lower(): v for k, v in response.getheaders()}, text
    finally:
        conn.close()


CHAT = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8})


def test_the_router_refuses_requests_without_its_key_and_lets_no_page_read_it(
    home: Home, keyring_file: Path, litellm_program: Path
) -> None:
    with served(home, litellm_program) as router:
        chat = router.url + "/v1/chat/completions"
        status, _, body = request(chat, body=CHAT, headers={"Content-Type": "application/json"})
        assert status == 401, (status, body)
        assert router.key.startswith("sk-agentcfg-")
        wrong = {"Content-Type": "application/json", "Authorization": "Bearer sk-agentcfg-guessed-0123456789abcdef"}
        status, _, body = request(chat, body=CHAT, headers=wrong)
        assert status in (400, 401) and "choices" not in body, (status, body)  # 400: "No connected db."

        # What a page at another origin can send without asking first: a POST of text/plain, with its Origin
        status, headers, body = request(chat, body=CHAT, headers={"Content-Type": "text/plain", "Origin": EVIL})
        assert status == 401 and "choices" not in body, (status, body)
        assert headers.get("access-control-allow-origin") not in ("*", EVIL), headers
        assert "access-control-allow-credentials" not in headers or headers.get("access-control-allow-origin") != EVIL

        # What it must ask first for (a JSON body, an Authorization header): the router does not allow that origin
        status, headers, _ = request(chat, "OPTIONS", headers={
            "Origin": EVIL, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type"})  # fmt: skip
        assert headers.get("access-control-allow-origin") not in ("*", EVIL), (status, headers)
        assert router.completions() == []  # no leg was asked anything: no quota spent

        status, headers, body = request(
            chat, body=CHAT, headers={"Content-Type": "application/json", "Authorization": f"Bearer {router.key}"}
        )
        assert (status, headers.get("x-litellm-model-id")) == (200, "local"), (status, body)

        # status and doctor send the router key: the router's health checks of each leg, the agents' probes
        shown = home.json("route", "status", "home")
        assert [leg["state"] for leg in shown["legs"]] == ["healthy", "healthy"], shown
        report = json.loads(home.run("doctor", "home", "--json", "--timeout", "60", check=None).stdout)
        route_findings = {f["id"]: f["status"] for f in report["findings"] if f["id"].startswith("route-")}
        assert route_findings == {"route-serving": "pass"}, report["findings"]
        assert not [f for f in report["findings"] if f["status"] == "fail"], report["findings"]


def litellm_version(program: Path) -> str:
    python = program.with_name("python")
    code = "import importlib.metadata as m; print(m.version('litellm'))"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.e2e
def test_every_agent_sends_the_router_key_and_is_answered(
    agent_home: Home, keyring_file: Path, litellm_program: Path, run_agent, agent_versions, compat
) -> None:
    server = f"LiteLLM {litellm_version(litellm_program)} route with its router key: agentcfg test servers"
    for agent in agents.AGENTS:
        how = "`agentcfg exec home --`" if agent in THROUGH_EXEC else "its key helper"
        case = f"`switch home`: the router key through {how}; the router refuses requests without it"
        compat(tier="realservers", agent=agent, agent_version=agent_versions[agent], server=server, case=case)
    with served(agent_home, litellm_program) as router:
        assert router.key.startswith("sk-agentcfg-")  # the router refuses requests without it (the test above)
        agent_home.run("switch", "home")
        results = {}
        for agent in agents.AGENTS:
            before = len(router.primary.requests)
            results[agent] = run_agent(agent, timeout=240, via="home" if agent in THROUGH_EXEC else None)
            answered = [p for m, p, _, _ in router.primary.requests[before:] if m == "POST" and p in COMPLETIONS]
            assert results[agent].returncode == 0 and answered, (agent, results[agent])
        on_disk = agent_home.snapshot()
    assert not [path for path, data in on_disk.items() if router.key.encode() in data], "the router key is in a file"
    assert not [agent for agent, result in results.items() if router.key in result.output]
