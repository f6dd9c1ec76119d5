"""`agentcfg route` in front of a real vLLM (CPU) with a keyed loopback server as the gateway, through the real
LiteLLM proxy, which `route serve` finds beside the Python of the venv `.ci/install-servers` made with
`pip install -e ".[route]"` (the extra a user installs; never AGENTCFG_LITELLM here).

The route's fallback is tests/fault_server.py's healthy server with a key: it logs every request, so a test
knows which leg answered; its key is stored with `agentcfg key set` and must reach no file and no output.
The shared peers' vLLM serves other tests at the same time, so the failover test stops and restarts a vLLM of
its own (`dedicated_vllm`). Routes whose primary is the CPU vLLM get `--timeout 600`: the agents' 10k-32k-token
prompts take minutes to prefill on two cores, and the default 120 s would send them to the fallback.

$AGENTCFG_ROUTE_TIMINGS names a file for the failover's timings (JSON; also printed).
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

import agentcfg
from agentcfg.route.server import TESTED_LITELLM
from tests.conftest import Home
from tests.e2e import agents
from tests.fault_server import FaultServer
from tests.realservers.conftest import DEDICATED_READY, Peers
from tests.realservers.helpers import add_profile
from tests.realservers.peers import MODEL, VLLM_KEY, WINDOW

pytestmark = [pytest.mark.realservers, pytest.mark.e2e]

TURN = 420  # s: as test_agents_real: the agents' prompts are prefilled on two CPU cores, four tests at once
ROUTE = "home"
FALLBACK_KEY = "sk-fallback-route-test-0123456789abcdef"
FALLBACK_MODEL = "gw-model"
COOLDOWN = 10  # s the stopped primary rests before the router tries it again
ROUTE_TIMEOUT = 600  # s a leg may take to start answering (`route add --timeout`): the CPU vLLM's prefill
RECOVER = 120  # s after the restarted vLLM is ready, at most, until the router sends to it again
COMPLETIONS = ("/v1/chat/completions", "/v1/responses", "/v1/messages")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Routed:
    """A route `home` (primary `local`, fallback `gw`) served by the real LiteLLM, in a test HOME."""

    home: Home
    fallback: FaultServer
    url: str  # the router's root (no /v1)
    key: str = ""  # the router key (every route has one: it refuses requests without it)
    outputs: list[str] = field(default_factory=list)  # everything agentcfg and the agents printed

    def run(self, *args: str, check: int | None = 0) -> subprocess.CompletedProcess[str]:
        done = self.home.run(*args, check=check)
        self.outputs.append(done.stdout + done.stderr)
        return done

    def fallback_answers(self) -> list[str]:
        """The completion requests the fallback got (not LiteLLM's GET /models at start)."""
        return [path for method, path, _, _ in self.fallback.requests if method == "POST" and path in COMPLETIONS]


@contextmanager
def routed(home: Home, peers: Peers, primary_root: str, *extra: str) -> Iterator[Routed]:
    """Profiles `local` (the vLLM at `primary_root`) and `gw` (a keyed FaultServer, key in the file keyring), the
    route over them, served with the LiteLLM venv's own `agentcfg`; stopped at the end, then no key anywhere."""
    home.env.pop("AGENTCFG_LITELLM", None)
    with FaultServer("healthy", key=FALLBACK_KEY, model=FALLBACK_MODEL, max_model_len=WINDOW) as fallback:
        port = _free_port()  # not the first free from 4000: tests of other workers add routes at the same time
        routed_ = Routed(home, fallback, f"http://127.0.0.1:{port}")
        add_profile(home, "local", primary_root, key=VLLM_KEY)
        routed_.run("profile", "add", "gw", "--base-url", fallback.base_url, "--model", FALLBACK_MODEL,
                    "--key-env", "GW_API_KEY", "--context-window", str(WINDOW))  # fmt: skip
        stored = home.run("key", "set", "gw", stdin_text=FALLBACK_KEY + "\n")
        routed_.outputs.append(stored.stdout + stored.stderr)
        routed_.run("route", "add", ROUTE, "--primary", "local", "--fallback", "gw", "--port", str(port),
                    "--cooldown", str(COOLDOWN), "--timeout", str(ROUTE_TIMEOUT), *extra)  # fmt: skip
        serve = [str(peers.litellm_venv / "bin" / "agentcfg"), "route", "serve", ROUTE, "--json", "--timeout", "300"]
        try:
            served = subprocess.run(serve, env=home.env, capture_output=True, text=True, timeout=360)
            routed_.outputs.append(served.stdout + served.stderr)
            assert served.returncode == 0, (served.stdout, served.stderr)
            # Found beside its own Python: the extra's LiteLLM, the version agentcfg is tested with
            assert json.loads(served.stdout)["litellm_version"] == TESTED_LITELLM, served.stdout
            routed_.key = home.run("key", "get", ROUTE).stdout.strip()
            yield routed_
            assert_no_key(routed_)
        finally:
            stopped = home.run("route", "stop", ROUTE, check=None)
            routed_.outputs.append(stopped.stdout + stopped.stderr)
    assert_no_key(routed_)


def assert_no_key(routed_: Routed) -> None:
    """The fallback's key and the router key are in the keyring file (outside HOME) only: no file under HOME
    (AGENTCFG_HOME and its state are there), none in the runtime dir (the route's litellm.yaml, litellm.log,
    process.json), no output."""
    home = routed_.home
    roots = [home.root, Path(home.env["XDG_RUNTIME_DIR"])]
    assert (Path(home.env["XDG_RUNTIME_DIR"]) / "agentcfg" / "routes" / ROUTE / "litellm.yaml").is_file()
    secrets = [FALLBACK_KEY, *([routed_.key] if routed_.key else [])]  # the router key: only in the keyring, too

    def leaked() -> list[str]:
        return [str(p) for root in roots for p in root.rglob("*") if p.is_file() and not p.is_symlink()
                for secret in secrets if _holds(p, secret)]  # fmt: skip

    # exec's per-run key files (qwen's system settings) go when its watcher sees the agent's process end: a
    # moment after the agent exits, not at once (seen in CI: the file was still there right after qwen ended)
    deadline = time.monotonic() + 10
    while leaked() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leaked() == []
    assert not any(secret in text for text in routed_.outputs for secret in secrets)


def _holds(path: Path, secret: str) -> bool:
    try:
        return secret.encode() in path.read_bytes()
    except FileNotFoundError:  # removed while it was read: a per-run file going away
        return False


def ask(route: Routed, *, stream: bool = False, max_tokens: int = 8, timeout: float = 120, **extra: Any) -> tuple:
    """One chat request through the router, with its key: (status, the leg that answered: x-litellm-model-id, body)."""
    where = urlsplit(route.url)
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": max_tokens,
            "stream": stream, **extra}  # fmt: skip
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=timeout)
    try:
        conn.request("POST", "/v1/chat/completions", json.dumps(body), headers(route))
        response = conn.getresponse()
        return response.status, response.getheader("x-litellm-model-id"), response.read().decode(errors="replace")
    finally:
        conn.close()


def headers(route: Routed) -> dict[str, str]:
    return {"Content-Type": "application/json", "Authorization": f"Bearer {route.key}"}


def _compat(compat: Any, peers: Peers, versions: dict[str, str], agent: str, case: str) -> None:
    compat(
        tier="realservers", agent=agent, agent_version=versions[agent],
        server=f"LiteLLM {peers.litellm_version} route: vLLM {peers.vllm_version} (CPU), then a keyed gateway",
        case=case,
    )  # fmt: skip


@pytest.mark.parametrize("agent", agents.on_tiny_model(agents.AGENTS))
def test_every_agent_completes_a_turn_through_the_route_on_the_primary(
    agent, agent_home, run_agent, peers, keyring_file, agent_versions, compat
):
    _compat(compat, peers, agent_versions, agent, "`switch home` (route: vLLM, then gateway): a turn on vLLM, rc 0")
    with routed(agent_home, peers, peers.vllm) as route:
        route.run("switch", ROUTE)
        result = run_agent(agent, via=ROUTE, timeout=TURN)
        route.outputs.append(result.output)
        assert result.returncode == 0, result
        assert route.fallback_answers() == [], route.fallback_answers()  # vLLM answered: the fallback saw nothing


def _turn(run_agent: Any, agent: str, gone: float) -> tuple[agents.Run, float]:
    result = run_agent(agent, via=ROUTE, timeout=TURN)
    return result, time.monotonic() - gone


def test_primary_stopped_the_fallback_answers_then_the_primary_again(
    agent_home, run_agent, peers, keyring_file, agent_versions, compat, dedicated_vllm
):
    """The primary (a vLLM of this test's own) is stopped: every agent's next turn completes on the fallback, and
    doctor names the leg that is down; started again on its port, it answers again after the cooldown."""
    for agent in agents.AGENTS:
        _compat(compat, peers, agent_versions, agent, "route, its vLLM stopped: the turn completes on the gateway")
    timings: dict[str, Any] = {"cooldown_s": COOLDOWN}
    try:
        with routed(agent_home, peers, dedicated_vllm.url) as route:
            route.run("switch", ROUTE)
            assert ask(route)[:2] == (200, "local")  # the primary serves while it runs

            gone = dedicated_vllm.stop()  # the moment the whole process group is gone
            status, leg, body = ask(route)
            timings["stop_to_direct_request_on_fallback_s"] = round(time.monotonic() - gone, 2)
            assert (status, leg) == (200, "gw"), body

            # Every agent at once, right after the stop (as a user's agents would be): each one's own figure
            with ThreadPoolExecutor(len(agents.AGENTS)) as pool:
                futures = {agent: pool.submit(_turn, run_agent, agent, gone) for agent in agents.AGENTS}
                turns = {agent: future.result() for agent, future in futures.items()}
            for result, _ in turns.values():
                route.outputs.append(result.output)
            timings["stop_to_agent_turn_on_fallback_s"] = {
                agent: {"since_stop": round(since, 2), "turn": round(result.seconds, 2)}
                for agent, (result, since) in turns.items()
            }
            timings["stop_to_first_agent_turn_on_fallback_s"] = min(
                round(since, 2) for result, since in turns.values() if result.returncode == 0
            ) if any(result.returncode == 0 for result, _ in turns.values()) else None  # fmt: skip
            failed = {agent: str(result) for agent, (result, _) in turns.items() if result.returncode != 0}
            assert failed == {}, failed
            answered = route.fallback_answers()
            # Each agent's own path reached the fallback (codex: /responses; qwen, opencode: chat; Claude Code's
            # /v1/messages becomes chat completions at the router)
            assert "/v1/responses" in answered and answered.count("/v1/chat/completions") >= 4, answered

            doctor = route.run("doctor", ROUTE, "--json", "--timeout", "60", check=None)
            document = json.loads(doctor.stdout)
            findings = document["findings"]
            seen = [(f["id"], f["status"], f.get("leg"), f["summary"]) for f in findings if f["status"] != "pass"]
            seen += [(f["id"], f["status"], f["summary"]) for f in findings if f["id"] == "route-serving"]
            timings["doctor"] = {"exit": doctor.returncode, "findings": seen}
            assert doctor.returncode == 0, seen  # the route serves: the primary down is a warning
            assert any(f["id"] == "route-leg-down" and "leg local (primary)" in f["summary"] for f in findings), seen
            assert any(f["id"] == "route-serving" and "gw" in f["summary"] for f in findings), seen
            assert document["route"]["answered_by"] == ["gw"], document["route"]
            assert [leg["down"] for leg in document["route"]["legs"]] == [True, False], document["route"]

            dedicated_vllm.start()  # again, on the same port
            timings["vllm_restart_ready_s"] = round(dedicated_vllm.wait_ready(DEDICATED_READY), 1)
            ready, tries = time.monotonic(), []
            while time.monotonic() - ready < RECOVER:
                status, leg, _ = ask(route)
                tries.append((status, leg))
                if leg == "local":
                    break
                time.sleep(2)
            timings["ready_to_primary_again_s"] = round(time.monotonic() - ready, 1)
            assert tries[-1] == (200, "local"), tries
    finally:  # what was measured, also when an assert below the measurement failed
        _report(timings)


def _report(timings: dict[str, Any]) -> None:
    text = json.dumps(timings, indent=1)
    print(f"route failover timings: {text}")
    if target := os.environ.get("AGENTCFG_ROUTE_TIMINGS"):
        Path(target).write_text(text + "\n", encoding="utf-8")


def test_beyond_max_parallel_a_request_goes_to_the_fallback(home, peers, keyring_file, compat):
    """`--max-parallel 1`: while one stream holds the primary's slot, a second request is served by the fallback."""
    compat(
        tier="realservers", agent="route", agent_version=f"agentcfg {agentcfg.__version__}",
        server=f"LiteLLM {peers.litellm_version}: vLLM {peers.vllm_version} (CPU), then a keyed gateway",
        case="--max-parallel 1, two streams at once: one on each leg",
    )  # fmt: skip
    with routed(home, peers, peers.vllm, "--max-parallel", "1") as route:
        first: queue.Queue[tuple] = queue.Queue()

        def hold() -> None:  # ~400 tokens at ~300 tok/s: the slot is held for the whole stream
            where = urlsplit(route.url)
            conn = http.client.HTTPConnection(where.hostname, where.port, timeout=ROUTE_TIMEOUT)
            try:
                body = {"model": MODEL, "messages": [{"role": "user", "content": "count"}], "max_tokens": 400,
                        "ignore_eos": True, "stream": True}  # fmt: skip
                conn.request("POST", "/v1/chat/completions", json.dumps(body), headers(route))
                response = conn.getresponse()
                first.put(("headers", response.status, response.getheader("x-litellm-model-id")))
                first.put(("body", response.read().decode(errors="replace")))
            except Exception as error:  # the test's assert says what went wrong
                first.put(("error", repr(error), None))
            finally:
                conn.close()

        thread = threading.Thread(target=hold, daemon=True)
        thread.start()
        opened = first.get(timeout=ROUTE_TIMEOUT)
        assert opened[:3] == ("headers", 200, "local"), opened
        status, leg, body = ask(route, stream=True)  # while the first stream holds the primary's slot
        thread.join(ROUTE_TIMEOUT)
        done = first.get(timeout=5)
        assert (status, leg) == (200, "gw"), (status, leg, body)
        assert route.fallback_answers() == ["/v1/chat/completions"], route.fallback_answers()
        assert done[0] == "body" and "[DONE]" in done[1], done
        # The slot's refusal did not cool the primary down: the next request, alone, is the primary's again
        assert ask(route, stream=True)[:2] == (200, "local")
        assert route.fallback_answers() == ["/v1/chat/completions"], route.fallback_answers()
