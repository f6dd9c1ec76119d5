"""`agentcfg serve start | stop | restart | status | logs` against tests/serve/fake_vllm.py, a stand-in that plays
vLLM's process shape (an API server and its `VLLM::EngineCore` child in one process group) and its faults on
purpose. The realservers tier runs the same life cycle against the real vLLM."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Home, keyring_env

FAKE = Path(__file__).with_name("fake_vllm.py")
MODEL = "DeepSeek-V4-Flash"
KEY = "sk-serve-test-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_free(port: int) -> bool:
    """Nothing listens there (bound as a server binds: SO_REUSEADDR, so closed connections do not count)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def group(pgid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


@pytest.fixture
def served(home: Home, tmp_path: Path) -> dict:
    """A keyed profile `srv` on a free loopback port, its key in the (file) keyring, and the fake vLLM as `vllm`."""
    port = free_port()
    home.env.update(keyring_env(tmp_path / "keyring.json"))
    program = tmp_path / "vllm"
    program.write_text(f"#!{sys.executable}\n" + FAKE.read_text())
    program.chmod(0o755)
    home.run("profile", "add", "srv", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", MODEL,
             "--context-window", "65536", "--key-env", "SRV_API_KEY")  # fmt: skip
    home.run("key", "set", "srv", stdin_text=KEY + "\n")
    weights = tmp_path / "weights"
    weights.mkdir()
    record = tmp_path / "fake-record.json"
    return {"port": port, "program": str(program), "weights": str(weights), "record": record,
            "env": {"FAKE_VLLM_RECORD": str(record)}}  # fmt: skip


def start(home: Home, served: dict, *extra: str, check: int | None = 0, mode: str = "") -> subprocess.CompletedProcess:
    args = ["serve", "start", "srv", "--weights", served["weights"], "--vllm", served["program"], "--family", "hermes",
            "--timeout", "30", "--json", *extra]  # fmt: skip
    return home.run(*args, check=check, FAKE_VLLM_MODE=mode, **served["env"])


@pytest.fixture(autouse=True)
def nothing_left(home: Home) -> object:
    """Whatever a test did, every server it started is stopped at its end (by the record agentcfg keeps)."""
    yield
    home.run("serve", "stop", "srv", check=None)


def test_start_builds_the_command_from_the_profile_and_stop_leaves_nothing(home: Home, served: dict) -> None:
    result = json.loads(start(home, served).stdout)
    pid = result["pid"]
    assert result["already_running"] is False and set(result["ready_seconds"]) == {"health", "models", "completion"}
    seen = json.loads(served["record"].read_text())
    argv = seen["argv"][1:]
    assert argv[:2] == ["serve", served["weights"]]
    assert argv[argv.index("--served-model-name") + 1] == MODEL
    assert argv[argv.index("--max-model-len") + 1] == "65536"
    assert argv[argv.index("--host") + 1] == "127.0.0.1" and argv[argv.index("--port") + 1] == str(served["port"])
    assert "--enable-auto-tool-choice" in argv and argv[argv.index("--tool-call-parser") + 1] == "hermes"
    assert "--enforce-eager" not in argv
    assert KEY not in " ".join(seen["argv"]) and KEY not in Path(f"/proc/{pid}/cmdline").read_text()
    assert seen["env"]["VLLM_API_KEY"] == KEY
    assert seen["env"]["PYTHONNOUSERSITE"] == "1" and "PYTHONPATH" not in seen["env"]
    members = group(pid)
    assert len(members) == 2, members  # the API server and its engine
    status = home.json("serve", "status", "srv")
    assert status["running"] and status["pid"] == pid and status["problems"] == []
    assert status["serving"] == {"id": MODEL, "max_model_len": 65536}
    assert KEY not in json.dumps(status) and KEY not in json.dumps(result)

    stopped = home.json("serve", "stop", "srv")
    assert stopped["stopped"] and stopped["signal"] == "SIGINT" and stopped["orphans_ended"] == []
    assert group(pid) == []
    assert port_free(served["port"])
    again = home.run("serve", "stop", "srv", "--json", check=3)
    assert json.loads(again.stdout)["error"]
    assert home.run("serve", "status", "srv", check=1).stdout.startswith("serve srv: not running")


def test_a_server_killed_hard_leaves_its_engine_and_restart_ends_exactly_that(home: Home, served: dict) -> None:
    pid = json.loads(start(home, served).stdout)["pid"]
    engine = next(p for p in group(pid) if p != pid)
    assert Path(f"/proc/{engine}/comm").read_text().strip() == "VLLM::EngineCor"
    os.kill(pid, signal.SIGKILL)  # vllm #55510: the engine lives on, holding the GPU, while the port is free
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive(engine)
    status = home.run("serve", "status", "srv", "--json", check=1)
    assert json.loads(status.stdout)["orphans"] == [{"pid": engine, "name": "VLLM::EngineCor", "gpu_devices": []}]
    assert json.loads(status.stdout)["unmanaged"] == []  # its engine (a fork: the server's command line) is ours

    restarted = json.loads(home.run("serve", "restart", "srv", "--json", **served["env"]).stdout)
    assert restarted["stopped"]["orphans_ended"] == [engine] and restarted["stopped"]["server_seconds"] is None
    assert not alive(engine)
    assert restarted["pid"] != pid and alive(restarted["pid"])


def test_a_busy_port_is_refused_naming_the_program_that_holds_it(home: Home, served: dict) -> None:
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", served["port"]))
        holder.listen()
        refused = start(home, served, check=2)
    error = json.loads(refused.stdout)["error"]
    assert f"port {served['port']} is in use" in error and f"pid {os.getpid()}" in error
    assert not served["record"].exists()  # nothing was started


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("wrong-name", "serves 'other-model', not the profile's model"),
        ("dead-engine", "a one-token completion failed: HTTP 500"),
        ("exit", "fake vLLM was told to fail"),
    ],
)
def test_a_server_that_does_not_serve_the_profile_is_stopped_with_the_reason(
    home: Home, served: dict, mode: str, said: str
) -> None:
    refused = start(home, served, check=2, mode=mode)
    error = json.loads(refused.stdout)["error"]
    assert said in error and "(stopped it)" in error, error
    pid = json.loads(served["record"].read_text())  # the fake ran
    assert pid
    assert home.run("serve", "status", "srv", "--json", check=1)
    assert json.loads(home.run("serve", "status", "srv", "--json", check=1).stdout)["running"] is False
    assert port_free(served["port"])


def test_stop_escalates_to_sigterm_when_sigint_is_ignored(home: Home, served: dict) -> None:
    pid = json.loads(start(home, served, mode="slow-stop").stdout)["pid"]
    stopped = home.json("serve", "stop", "srv", "--timeout", "1")
    assert stopped["signal"] == "SIGTERM" and group(pid) == []


def test_restart_waits_for_requests_in_flight(home: Home, served: dict, tmp_path: Path) -> None:
    start(home, served, mode="busy:2")
    run_dir = Path(home.env["XDG_RUNTIME_DIR"]) / "agentcfg" / "serve" / "srv"
    started = time.monotonic()
    restarted = json.loads(home.run("serve", "restart", "srv", "--drain", "1.5", "--json", **served["env"]).stdout)
    assert restarted["stopped"]["drain_seconds"] == 1.5 and time.monotonic() - started >= 1.5
    (run_dir / "drained").write_text("")
    again = json.loads(home.run("serve", "restart", "srv", "--json", FAKE_VLLM_MODE="busy:2", **served["env"]).stdout)
    assert again["stopped"]["drain_seconds"] < 1.5


def test_start_twice_is_nothing_to_do_and_other_flags_need_a_restart(home: Home, served: dict) -> None:
    pid = json.loads(start(home, served).stdout)["pid"]
    again = json.loads(home.run("serve", "start", "srv", "--json", **served["env"]).stdout)  # the kept options
    assert again["already_running"] and again["pid"] == pid
    other = json.loads(home.run("serve", "start", "srv", "--json", "--", "--max-num-seqs", "4", check=2).stdout)
    assert "agentcfg serve restart srv" in other["hint"]


def test_print_shows_the_command_and_starts_nothing(home: Home, served: dict) -> None:
    shown = home.run("serve", "srv", "--weights", served["weights"], "--vllm", served["program"], "--family", "hermes",
                     "--print", **served["env"])  # fmt: skip
    assert "--served-model-name" in shown.stdout and "VLLM_API_KEY" in shown.stdout and KEY not in shown.stdout
    assert not served["record"].exists()
    assert not (Path(home.env["AGENTCFG_HOME"]) / "serve" / "srv.json").exists()  # --print keeps no option


def test_a_vllm_agentcfg_did_not_start_is_never_stopped(home: Home, served: dict, tmp_path: Path) -> None:
    env = {**home.env, "PATH": os.environ["PATH"]}
    other = subprocess.Popen([served["program"], "serve", "w", "--port", str(served["port"])], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", served["port"])) == 0:
                    break
            time.sleep(0.05)
        refused = home.run("serve", "stop", "srv", check=3)
        assert f"pid {other.pid}" in refused.stderr and "did not start" in refused.stderr
        assert other.poll() is None
    finally:
        os.killpg(other.pid, signal.SIGTERM)
        other.wait(10)


def test_logs_show_the_end_of_the_servers_log(home: Home, served: dict) -> None:
    start(home, served)
    shown = home.run("serve", "logs", "srv", "-n", "5")
    assert "GET /health" in shown.stdout or "fake vLLM serving" in shown.stdout
    assert home.run("serve", "logs", "nosuch", check=None).returncode in (2, 3)


@pytest.mark.parametrize("command", ["start", "stop", "status", "logs", "sweep", "restart"])
def test_a_name_that_is_a_path_never_becomes_a_file(home: Home, command: str) -> None:
    refused = home.run("serve", command, "../../x", check=2)
    assert "is not a profile's name" in refused.stderr or "unknown profile '../../x'" in refused.stderr
    assert not (Path(home.env["XDG_RUNTIME_DIR"]).parent / "x").exists()


def test_a_window_other_than_the_profiles_is_said_at_start(home: Home, served: dict) -> None:
    result = json.loads(start(home, served, "--", "--max-model-len", "8192").stdout)
    assert result["problems"] == ["its window is 8,192 tokens, the profile's 65,536"]
    status = home.run("serve", "status", "srv", check=1)
    assert "differs from the profile: its window is 8,192 tokens" in status.stdout and "since 20" in status.stdout


def test_a_kept_enforce_eager_is_dropped_with_no_enforce_eager(home: Home, served: dict) -> None:
    args = ["--weights", served["weights"], "--vllm", served["program"], "--family", "hermes", "--json"]
    eager = home.json("serve", "start", "srv", *args, "--enforce-eager", "--print")
    assert "--enforce-eager" in eager["argv"]
    home.write(".config/agentcfg/serve/srv.json", json.dumps({"weights": served["weights"], "vllm": served["program"],
                                                              "family": "hermes", "enforce_eager": True}))  # fmt: skip
    assert "--enforce-eager" in home.json("serve", "start", "srv", "--print")["argv"]  # a kept one stays
    assert "--enforce-eager" not in home.json("serve", "start", "srv", "--no-enforce-eager", "--print")["argv"]
