"""`agentcfg serve` against the real vLLM (CPU build, the tiny model): the server started from a profile, every real
agent answering through it after `switch`, a restart while a streamed request is in flight, a `kill -9` of the API
server leaving its engine and `serve restart` ending exactly that, and `serve stop` leaving nothing running."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from agentcfg.agents import AGENTS as REGISTRY
from tests.conftest import Home
from tests.e2e import agents
from tests.realservers.helpers import add_profile, doctor, failing
from tests.realservers.peers import MODEL, QUIET_ENV, VLLM_KEY, WINDOW

pytestmark = [pytest.mark.realservers, pytest.mark.e2e]

READY = 900  # s: a vLLM start on two cores shared with the rest of the tier (40-90 s idle)
TURN = 420
SERVER_SIDE = {"tool-parser-missing", "model-not-found", "vllm-enforce-eager", "vllm-stray-workers",
               "vllm-duplicate-servers", "vllm-window-differs", "vllm-parser-differs"}  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def group(pgid: int) -> dict[int, str]:
    """The live members of a process group: pid -> comm."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text.rpartition(")")[2].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            found[int(stat.parent.name)] = text[text.index("(") + 1 : text.rindex(")")]
    return found


def port_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture
def profile(agent_home: Home, keyring_file: Path, peers) -> dict:
    """Profile `srv` on a free port (window 65,536, key in the keyring) and how to serve it with the tiny model."""
    port = free_port()
    add_profile(agent_home, "srv", f"http://127.0.0.1:{port}", key=VLLM_KEY)
    args = ["--weights", str(peers.model_dir), "--vllm", peers.vllm_bin, "--family", "hermes",
            "--enforce-eager", "--timeout", str(READY), "--json", "--", "--dtype", "bfloat16"]  # fmt: skip
    yield {"port": port, "args": args, "root": f"http://127.0.0.1:{port}"}
    agent_home.run("serve", "stop", "srv", check=None)


def serve(home: Home, *args: str, check: int | None = 0) -> dict:
    done = home.run("serve", *args, check=check, timeout=READY + 120, **QUIET_ENV)
    return json.loads(done.stdout)


@pytest.mark.alone  # its stop: for a moment after SIGINT the engines outlive their server, as another doctor sees
def test_serve_then_switch_and_every_agent_answers_through_it(agent_home, profile, run_agent, peers) -> None:
    started = serve(agent_home, "start", "srv", *profile["args"])
    pid = started["pid"]
    print(f"serve start: ready {started['ready_seconds']} (s since launch: /health, /v1/models, one token)")
    assert VLLM_KEY not in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    environ = dict(v.split("=", 1) for v in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in v)
    assert environ["VLLM_API_KEY"] == VLLM_KEY and environ["PYTHONNOUSERSITE"] == "1" and "PYTHONPATH" not in environ
    assert any("enforce-eager" in w for w in started["warnings"])  # asked for (CPU: no compile), and warned

    agent_home.run("switch", "srv")
    taking = [agent for agent in agents.AGENTS if not agents.plain_profile_refused(agent)]  # Gemini CLI: a route only
    for agent in taking:  # an agent that cannot fetch a key itself (no key helper) starts through exec
        helper = REGISTRY[agent].TRAITS.key_helper_since is not None
        result = run_agent(agent, timeout=TURN, via=None if helper else "srv")
        if agent == "copilot":  # the tiny model's answer at its temperature 0 is empty (agents.EMPTY_AT_TEMPERATURE_0)
            assert "No response was returned" in result.output, (agent, result)
        else:
            assert result.returncode == 0, (agent, result)

    status = json.loads(agent_home.run("serve", "status", "srv", "--json").stdout)
    assert status["running"] and status["serving"] == {"id": MODEL, "max_model_len": WINDOW}
    assert sorted(status["agents"]) == sorted(taking) and status["problems"] == []
    _, findings = doctor(agent_home)
    assert not {f for f in failing(findings) if f[1] in SERVER_SIDE}, findings

    agent_home.run("profile", "set", "srv", "context_window=32768", "model=Other-Model")  # the profile moves on
    moved = json.loads(agent_home.run("serve", "status", "srv", "--json", check=1).stdout)
    assert moved["problems"] == [f"it serves '{MODEL}', the profile's model is 'Other-Model'",
                                 f"its window is {WINDOW:,} tokens, the profile's 32,768"]  # fmt: skip
    agent_home.run("profile", "set", "srv", f"context_window={WINDOW}", f"model={MODEL}")

    stopped = json.loads(agent_home.run("serve", "stop", "srv", "--json", timeout=300).stdout)
    print(f"serve stop: {stopped}")
    assert group(pid) == {} and port_free(profile["port"])


def _stream(root: str, out: dict) -> None:
    """A streamed chat request long enough to be in flight during the restart (ignore_eos: vLLM's own option; 6,000
    tokens take vLLM's CPU build ~20 s to stream on two cores)."""
    conn = http.client.HTTPConnection("127.0.0.1", int(root.rsplit(":", 1)[1]), timeout=600)
    body = {"model": MODEL, "messages": [{"role": "user", "content": "count"}], "max_tokens": 6000, "stream": True,
            "ignore_eos": True}  # fmt: skip
    try:
        conn.request("POST", "/v1/chat/completions", json.dumps(body),
                     {"Authorization": f"Bearer {VLLM_KEY}", "Content-Type": "application/json"})  # fmt: skip
        response = conn.getresponse()
        out["status"] = response.status
        out["text"] = response.read().decode(errors="replace")
    except OSError as exc:
        out["error"] = repr(exc)
    finally:
        out["ended"] = time.monotonic()
        conn.close()


@pytest.mark.alone  # its kill -9 leaves a real orphaned engine for seconds: another test's doctor would report it
def test_restart_in_flight_then_a_kill_9_and_restart_ends_exactly_the_engine_left(agent_home, profile) -> None:
    first = serve(agent_home, "start", "srv", *profile["args"])
    out: dict = {}
    streaming = threading.Thread(target=_stream, args=(profile["root"], out))
    streaming.start()
    time.sleep(2)  # the request is in flight
    began = time.monotonic()
    restarted = serve(agent_home, "restart", "srv", "--drain", "300", "--json")
    streaming.join(60)
    print(f"restart with a request in flight: {json.dumps(restarted['stopped'])}, ready {restarted['ready_seconds']}")
    # Still streaming when the restart began, and whole: restart waited until vLLM had no request running (its
    # /metrics) before it sent SIGINT; what vLLM had written by then reaches the client after the stop
    assert out["ended"] > began and restarted["stopped"]["drain_seconds"] is not None, (out, restarted["stopped"])
    assert out.get("status") == 200 and '"finish_reason":"length"' in out["text"].replace(" ", ""), out
    second = restarted["pid"]
    assert second != first["pid"] and group(first["pid"]) == {}

    engines = {p: name for p, name in group(second).items() if p != second}
    os.kill(second, signal.SIGKILL)  # the API server only, as a force-kill or a systemd escalation does
    deadline = time.monotonic() + 30
    while second in group(second) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2)
    left = {p: name for p, name in group(second).items()}
    print(f"after kill -9 of the API server (pid {second}): its engines {engines}, left alive {left}")
    status = json.loads(agent_home.run("serve", "status", "srv", "--json", check=1).stdout)
    assert sorted(o["pid"] for o in status["orphans"]) == sorted(left)
    third = serve(agent_home, "restart", "srv", "--json")
    assert sorted(third["stopped"]["orphans_ended"]) == sorted(left), third["stopped"]
    assert group(second) == {}
    print(f"restart after kill -9: {json.dumps(third['stopped'])}, ready {third['ready_seconds']}")
    stopped = serve(agent_home, "stop", "srv", "--json")
    assert stopped["orphans_ended"] == [] and group(third["pid"]) == {} and port_free(profile["port"])


def test_a_port_held_by_another_program_is_refused_before_vllm_starts(agent_home, profile) -> None:
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", profile["port"]))
        holder.listen()
        refused = agent_home.run("serve", "start", "srv", *profile["args"], check=2, **QUIET_ENV)
    error = json.loads(refused.stdout)["error"]
    assert f"port {profile['port']} is in use: pid {os.getpid()}" in error, error
    assert not list((Path(agent_home.env["XDG_RUNTIME_DIR"]) / "agentcfg" / "serve" / "srv").glob("vllm.log"))
