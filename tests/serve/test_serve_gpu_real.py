"""`agentcfg serve` on a real NVIDIA GPU, with tests/serve/fake_vllm.py's engine holding GPU memory through PyTorch:
a `kill -9` of the API server leaves the engine holding its memory; `serve stop` ends exactly that engine by pid and
waits until nvidia-smi no longer lists it; a start is refused while another process holds the memory vLLM needs.

Runs where only pytest, torch and agentcfg's runtime dependencies are installed (the device machine), with no
conftest fixture:

    python3 -m pytest --noconftest -p no:cacheprovider -o addopts= -m gpu -rP tests/serve/test_serve_gpu_real.py
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentcfg.serve import gpus

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="no nvidia-smi: not an NVIDIA machine"),
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="no torch to take GPU memory with"),
]

FAKE = Path(__file__).with_name("fake_vllm.py")
HOLD_MIB = 4096


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class Cli:
    def __init__(self, root: Path) -> None:
        home = root / "home"
        home.mkdir()
        self.env = {**os.environ, "HOME": str(home), "AGENTCFG_HOME": str(home / ".agentcfg"),
                    "XDG_CONFIG_HOME": str(home / ".config"), "XDG_STATE_HOME": str(home / ".state"),
                    "XDG_RUNTIME_DIR": str(root / "run"), "NO_PROXY": "127.0.0.1,localhost"}  # fmt: skip
        (root / "run").mkdir(mode=0o700)

    def run(self, *args: str, check: int | None = 0, **env: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "agentcfg", *args], env={**self.env, **env}, text=True,
                              capture_output=True, timeout=600, stdin=subprocess.DEVNULL)  # fmt: skip
        print(f"$ agentcfg {' '.join(args)} -> {done.returncode}\n{done.stdout}{done.stderr}")
        if check is not None:
            assert done.returncode == check, done
        return done


@pytest.fixture
def cli(tmp_path: Path):
    program = tmp_path / "vllm"
    program.write_text(f"#!{sys.executable}\n" + FAKE.read_text())
    program.chmod(0o755)
    found = Cli(tmp_path)
    found.run("profile", "add", "gpu", "--base-url", f"http://127.0.0.1:{free_port()}/v1", "--model", "m",
              "--context-window", "4096", "--no-key")  # fmt: skip
    found.start = ["serve", "start", "gpu", "--weights", str(tmp_path), "--vllm", str(program), "--family",  # type: ignore[attr-defined]
                   "hermes", "--timeout", "300", "--json"]  # fmt: skip
    yield found
    found.run("serve", "stop", "gpu", check=None)


def test_a_killed_servers_engine_is_ended_by_pid_and_its_gpu_memory_waited_for(cli: Cli) -> None:
    started = json.loads(cli.run(*cli.start, "--", "--gpu-memory-utilization", "0.05",  # type: ignore[attr-defined]
                                 FAKE_VLLM_GPU_MIB=str(HOLD_MIB)).stdout)  # fmt: skip
    server = started["pid"]
    deadline = time.monotonic() + 120  # the engine imports torch and takes its memory after the server answers
    while not (held := [a for a in gpus.query_apps() or [] if (a.used_mib or 0) >= HOLD_MIB]):
        assert time.monotonic() < deadline, gpus.query_apps()
        time.sleep(0.5)
    (engine,) = held
    assert engine.pid != server
    assert Path(f"/proc/{engine.pid}/comm").read_text().strip() == "VLLM::EngineCor"
    os.kill(server, signal.SIGKILL)  # vllm #55510: the port is free, the engine holds the GPU
    deadline = time.monotonic() + 10
    while alive(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive(engine.pid) and engine.pid in {a.pid for a in gpus.query_apps() or []}
    status = json.loads(cli.run("serve", "status", "gpu", "--json", check=1).stdout)
    assert [o["pid"] for o in status["orphans"]] == [engine.pid]
    assert any(d.startswith("/dev/nvidia") for d in status["orphans"][0]["gpu_devices"]), status  # the evidence

    stopped = json.loads(cli.run("serve", "stop", "gpu", "--json").stdout)
    print(f"stop after kill -9: {stopped}")
    assert stopped["orphans_ended"] == [engine.pid] and stopped["server_seconds"] is None
    assert stopped["gpu_release_seconds"] is not None and stopped["gpu_release_seconds"] < 30
    assert engine.pid not in {a.pid for a in gpus.query_apps() or []}


def test_a_start_is_refused_while_another_process_holds_the_gpu_memory(cli: Cli) -> None:
    holder = subprocess.Popen([sys.executable, "-c", "import torch, time; x = torch.ones(int(16 * 1024**3), "
                               "dtype=torch.uint8, device='cuda'); torch.cuda.synchronize(); print('ready', "
                               "flush=True); time.sleep(600)"], stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        refused = cli.run(*cli.start, check=2)  # type: ignore[attr-defined]  (default utilization: 0.9 of the GPU)
        message = json.loads(refused.stdout)["error"]
        print(message)
        assert "too little free GPU memory" in message and f"pid {holder.pid}" in message
    finally:
        holder.kill()
        holder.wait()
