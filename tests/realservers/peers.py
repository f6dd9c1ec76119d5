"""Start and stop the real servers of the realservers tier: two vLLM CPU servers on a tiny local
model and a LiteLLM proxy as the gateway, all on 127.0.0.1.

    python -m tests.realservers.peers up STATE.json     # prints each step's time; bounded waits
    python -m tests.realservers.peers down STATE.json   # stops every process it started, by PID

`.ci/run` does both around the test run; tests read STATE.json (AGENTCFG_PEERS). The Pythons come
from `.ci/install-servers` (VLLM_PYTHON, LITELLM_PYTHON)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

MODEL = "DeepSeek-V4-Flash"
WINDOW = 65536  # the agents' first prompts (up to ~32k tokens for Claude Code) fit, with room to answer
VLLM_KEY = "sk-vllm-test-key-0123456789"
GATEWAY_KEY = "sk-gw-master-0123456789"
GATEWAY_MOCK = "deepseek-chat"  # answers "ready" without an upstream
# A gateway model whose upstream no longer serves it: LiteLLM forwards it to the real vLLM under a
# name vLLM does not serve, so vLLM's 404 comes back through the gateway (issue 14).
GATEWAY_RETIRED = "gpt-retired"
HERE = Path(__file__).resolve().parent
# The two vLLM configurations: the healthy one the agents work against (issue 14's setup: CPU,
# 65,536 window, hermes tool parser, --api-key), and the one users get wrong (no tool parser; it
# also shows --enforce-eager). Both need VLLM_KEY.
VLLM_SERVERS = {
    "vllm": [
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "hermes",
        "--api-key",
        VLLM_KEY,
        "--enable-log-requests",
    ],
    "vllm-bare": ["--api-key", VLLM_KEY, "--enforce-eager"],
}
QUIET_ENV = {
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "NO_PROXY": "127.0.0.1,localhost",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    drop = ("PROXY", "API_KEY", "OPENAI", "ANTHROPIC")
    env = {k: v for k, v in os.environ.items() if not any(d in k.upper() for d in drop)}
    return {**env, **QUIET_ENV}


def _start(name: str, argv: list[str], workdir: Path) -> dict[str, object]:
    log = workdir / f"{name}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=_env(), start_new_session=True
        )
    return {"pid": proc.pid, "log": str(log), "argv": argv, "started": time.time()}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split(") ")[-1].startswith("Z"))


def _wait(name: str, peer: dict, path: str, timeout: float) -> None:
    """Poll `path` until 200, at most `timeout` s; stop early (with the log's tail) if the PID dies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(int(peer["pid"])):
            break
        try:
            with urllib.request.urlopen(f"{peer['url']}{path}", timeout=5) as response:
                if response.status == 200:
                    print(f"  {name} ready in {time.time() - float(peer['started']):.0f}s at {peer['url']}", flush=True)
                    return
        except OSError:
            pass
        time.sleep(1)
    tail = Path(str(peer["log"])).read_text(errors="replace")[-3000:]
    state = "exited" if not _alive(int(peer["pid"])) else f"not ready after {timeout:.0f}s"
    raise SystemExit(f"{name} {state}; the end of {peer['log']}:\n{tail}")


def vllm_argv(vllm_bin: str, model_dir: Path, port: int, extra: list[str]) -> list[str]:
    return [vllm_bin, "serve", str(model_dir), "--host", "127.0.0.1", "--port", str(port),
            "--served-model-name", MODEL, "--max-model-len", str(WINDOW), "--dtype", "bfloat16",
            *extra]  # fmt: skip


class Vllm:
    """A vLLM of one test's own, to stop and start again on the same port (the shared peers serve other tests
    at the same time and are never stopped): the healthy peer's settings (window, hermes tool parser, --api-key,
    request log), with --enforce-eager, which starts faster (no compile)."""

    def __init__(self, vllm_bin: str, model_dir: Path, workdir: Path) -> None:
        self.argv = vllm_argv(vllm_bin, model_dir, _free_port(), [*VLLM_SERVERS["vllm"], "--enforce-eager"])
        self.url = "http://127.0.0.1:" + self.argv[self.argv.index("--port") + 1]
        self.log = workdir / "dedicated-vllm.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert self.process is None, "already started"
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env=_env(), start_new_session=True)  # fmt: skip

    def wait_ready(self, timeout: float) -> float:
        """Seconds until /health answered 200; the process gone or too slow: RuntimeError with the log's end."""
        assert self.process is not None
        started = time.monotonic()
        while time.monotonic() - started < timeout and self.process.poll() is None:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5) as response:
                    if response.status == 200:
                        return time.monotonic() - started
            except OSError:
                pass
            time.sleep(0.5)
        state = f"exited ({self.process.returncode})" if self.process.poll() is not None else f"not ready in {timeout}s"
        tail = self.log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"the dedicated vLLM {state}; the end of {self.log}:\n{tail}")

    def stop(self, timeout: float = 30) -> float:
        """SIGTERM its process group, SIGKILL what is left after `timeout`; returns time.monotonic() at the moment
        the whole group was gone (the port then refuses connections)."""
        process, self.process = self.process, None
        if process is None:
            return time.monotonic()
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                if process.poll() is not None and not _group_alive(process.pid):
                    return time.monotonic()
                time.sleep(0.05)
        raise RuntimeError(f"the dedicated vLLM (pid {process.pid}) did not stop")


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Zombies left for init to reap still count as members: look for a live one.
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def _gateway_config(workdir: Path, upstream: str) -> Path:
    # Every mock model gets a loopback api_base: some routes ignore mock_response and would try the
    # vendor's real host. The forwarded model goes to the real vLLM.
    config = {
        "model_list": [
            {
                "model_name": GATEWAY_MOCK,
                "litellm_params": {
                    "model": f"openai/{GATEWAY_MOCK}",
                    "api_key": "fake",
                    "api_base": "http://127.0.0.1:9/v1",
                    "mock_response": "ready",
                },
            },
            {
                "model_name": MODEL,
                "litellm_params": {"model": f"openai/{MODEL}", "api_key": VLLM_KEY, "api_base": f"{upstream}/v1"},
            },
            {
                "model_name": GATEWAY_RETIRED,
                "litellm_params": {
                    "model": f"openai/{GATEWAY_RETIRED}",
                    "api_key": VLLM_KEY,
                    "api_base": f"{upstream}/v1",
                },
            },
        ],
        "litellm_settings": {"num_retries": 0},
        "router_settings": {"disable_cooldowns": True},
        "general_settings": {"master_key": GATEWAY_KEY},
    }
    path = workdir / "litellm.yaml"
    path.write_text(json.dumps(config, indent=1))  # JSON is YAML
    return path


def up(state_file: Path, vllm_python: str, litellm_python: str) -> dict:
    workdir = state_file.parent
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    model_dir = workdir / "tiny-model"
    subprocess.run([vllm_python, str(HERE / "tiny_model.py"), str(model_dir), "--window", str(WINDOW)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)  # fmt: skip
    print(f"  tiny model built in {time.monotonic() - started:.0f}s", flush=True)
    vllm_bin = str(Path(vllm_python).parent / "vllm")
    state: dict = {"model_dir": str(model_dir), "peers": {}}
    peers = state["peers"]
    try:
        for name, extra in VLLM_SERVERS.items():
            port = _free_port()
            argv = vllm_argv(vllm_bin, model_dir, port, extra)
            peers[name] = {**_start(name, argv, workdir), "url": f"http://127.0.0.1:{port}"}
        port = _free_port()
        config = _gateway_config(workdir, peers["vllm"]["url"])
        argv = [str(Path(litellm_python).parent / "litellm"), "--config", str(config), "--host", "127.0.0.1",
                "--port", str(port), "--num_workers", "1"]  # fmt: skip
        peers["litellm"] = {**_start("litellm", argv, workdir), "url": f"http://127.0.0.1:{port}"}
        state_file.write_text(json.dumps(state, indent=1))  # written early: `down` can stop a failed start
        _wait("litellm", peers["litellm"], "/health/liveliness", 180)
        for name in VLLM_SERVERS:  # started together; the first start compiles (~3 min on 2 cores)
            _wait(name, peers[name], "/health", 900)
        with urllib.request.urlopen(peers["vllm"]["url"] + "/version", timeout=5) as response:
            state["vllm_version"] = json.load(response)["version"]
        state["litellm_version"] = subprocess.run(
            [litellm_python, "-c", "import importlib.metadata as m; print(m.version('litellm'))"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
    except BaseException:
        down(state_file, state)
        raise
    state_file.write_text(json.dumps(state, indent=1))
    print(f"  all servers up in {time.monotonic() - started:.0f}s", flush=True)
    return state


def down(state_file: Path, state: dict | None = None) -> None:
    """SIGTERM each process group, SIGKILL what is left after 20 s."""
    if state is None:
        if not state_file.exists():
            return
        state = json.loads(state_file.read_text())
    pids = [int(peer["pid"]) for peer in state["peers"].values()]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, sig)
        deadline = time.monotonic() + 20
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not any(_alive(pid) for pid in pids):
            break
    stopped = ", ".join(f"{name} (pid {peer['pid']})" for name, peer in state["peers"].items())
    print(f"  stopped {stopped}", flush=True)


def main() -> None:
    action, state_file = sys.argv[1], Path(sys.argv[2]).resolve()
    if action == "up":
        up(state_file, os.environ["VLLM_PYTHON"], os.environ["LITELLM_PYTHON"])
    else:
        down(state_file)


if __name__ == "__main__":
    main()
