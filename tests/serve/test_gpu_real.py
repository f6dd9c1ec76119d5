"""On a real NVIDIA GPU: an engine orphaned by a SIGKILLed API server is found through its process group, seen
in nvidia-smi, ended by PID, and its memory seen released (vllm #55510's path, with PyTorch instead of vLLM).

Runs with only pytest and torch installed and the repository on PYTHONPATH (the device machine has no
agentcfg dependencies), so it uses no conftest fixture:

    python3 -m pytest --noconftest -p no:cacheprovider -o addopts= -m gpu -rP tests/serve/test_gpu_real.py

(`-o addopts=` drops pyproject's `-n auto`, which needs pytest-xdist; `-rP` prints the timings.)
"""

from __future__ import annotations

import importlib.util
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from agentcfg.serve import gpus, procs

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="no nvidia-smi: not an NVIDIA machine"),
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="no torch to take GPU memory with"),
]

HOLD_MIB = 2048
READY_S = 300  # importing torch and creating a CUDA context on a cold machine
RELEASE_S = 15  # end() plus the wait; measured 0.09-0.26 s for a PyTorch process (tests/fixtures/nvidia-h100)

# The "engine": holds ~2 GiB, names itself as vLLM's does (setproctitle rewrites argv, which nvidia-smi shows;
# prctl alone sets only comm), says its pid, and waits.
ENGINE = r"""
import ctypes, os, time
import torch
held = torch.ones(2 * 1024**3, dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
try:
    import setproctitle
    setproctitle.setproctitle("VLLM::EngineCore")
except ImportError:
    ctypes.CDLL(None).prctl(15, b"VLLM::EngineCore", 0, 0, 0)  # PR_SET_NAME
os.write(1, b"ready %d\n" % os.getpid())
while True:
    time.sleep(60)
"""

# The "API server": starts the engine in its own process group and waits on it.
SERVER = "import subprocess, sys; subprocess.Popen([sys.executable, '-c', sys.argv[1]]).wait()"


def _read_line(stream, timeout: float) -> str:
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return ""


def _used_mib(uuid: str) -> int | None:
    found = [g for g in gpus.query_gpus() or [] if g.uuid == uuid]
    return found[0].used_mib if found else None


def test_an_orphaned_engine_is_found_ended_and_its_memory_released() -> None:
    assert gpus.query_gpus(), "nvidia-smi is here but lists no GPU (or fails)"
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, ENGINE], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    first = procs.read(server.pid)
    born = first.start if first is not None else 0
    try:
        line = _read_line(server.stdout, READY_S)
        assert line.startswith("ready "), f"the engine did not start within {READY_S} s: {line!r}"
        engine_pid = int(line.split()[1])

        apps = gpus.query_apps()
        assert apps is not None
        listed = [a for a in apps if a.pid == engine_pid]
        assert listed, f"nvidia-smi does not list pid {engine_pid} (another PID namespace?): {apps}"
        held = listed[0]
        assert held.used_mib is None or held.used_mib >= HOLD_MIB, held
        used_while_held = _used_mib(held.gpu_uuid)

        server.kill()  # the API server SIGKILLed: nothing tells its engine
        server.wait(10)
        table = procs.snapshot()
        assert procs.descendants(table, server.pid) == []
        group = procs.in_group(table, server.pid)
        assert [p.pid for p in group] == [engine_pid], group
        engine = group[0]
        assert engine.ppid != server.pid  # reparented, still in the server's group
        assert engine.name == "VLLM::EngineCor"  # comm, cut to 15
        assert any(d.startswith("/dev/nvidia") for d in procs.gpu_devices(engine_pid)), "no /dev/nvidia* open"

        began = time.monotonic()
        ended = procs.end(group, uid=os.getuid(), timeout=10)
        ended_after = time.monotonic() - began
        assert ended == [engine_pid]
        released = gpus.wait_released([engine_pid], timeout=RELEASE_S)
        total = time.monotonic() - began
        assert released is not None
        print(
            f"engine {held.name} pid {engine_pid} held {held.used_mib} MiB on {held.gpu_uuid}: "
            f"ended (SIGTERM) in {ended_after:.2f} s, nvidia-smi stopped listing it {released:.2f} s after that "
            f"call, {total:.2f} s in all"
        )
        assert total < RELEASE_S

        if used_while_held is not None:  # the GPU's own count drops too (a shared GPU may move a little)
            deadline = time.monotonic() + 5
            while (_used_mib(held.gpu_uuid) or 0) > used_while_held - HOLD_MIB // 2 and time.monotonic() < deadline:
                time.sleep(0.1)
            after = _used_mib(held.gpu_uuid)
            print(f"GPU memory used: {used_while_held} MiB while held, {after} MiB after")
            assert after is not None and after <= used_while_held - HOLD_MIB // 2
    finally:
        left = [p for p in procs.in_group(procs.snapshot(), server.pid) if p.start >= born]
        procs.end(left, uid=os.getuid(), timeout=0, signal_first=signal.SIGKILL)
        if server.poll() is None:
            server.kill()
        server.wait(10)
