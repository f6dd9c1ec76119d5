"""NVIDIA GPUs and the processes holding their memory, from `nvidia-smi`'s CSV queries.

A restart must not start the new engine before the old one's memory is free (vLLM's start fails its memory
check, "Free memory … less than desired"), and an engine whose API server was SIGKILLed keeps tens of GB while
the port is already free (vllm #55510). nvidia-smi is the one witness of both: its compute-apps list names every
process that holds memory, whatever it calls itself. Parsing is pure; `query_*` run nvidia-smi (None where there
is none, or it fails: no NVIDIA GPU to wait for). Standard library only: the GPU test runs without agentcfg's
dependencies.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Iterable

from agentcfg.lazyclass import dataclass

GPU_FIELDS = "index,uuid,name,memory.total,memory.used,memory.free"
APP_FIELDS = "pid,process_name,used_memory,gpu_uuid"
_UUID_PREFIXES = ("GPU-", "MIG-")


@dataclass(frozen=True)
class Gpu:
    """One GPU as nvidia-smi reports it (memory in MiB)."""

    index: int
    uuid: str
    name: str
    total_mib: int
    used_mib: int
    free_mib: int


@dataclass(frozen=True)
class App:
    """A process holding memory on a GPU. `used_mib` None: nvidia-smi said `[N/A]` (containers, some drivers) or
    `[Insufficient Permissions]`; `name` is nvidia-smi's text as is (argv[0], so `python3` for a process that
    renamed only its comm)."""

    pid: int
    name: str
    used_mib: int | None
    gpu_uuid: str


def _mib(field: str) -> int | None:
    """`81559` or `81559 MiB` -> 81559; `[N/A]` and other bracketed notes -> None."""
    value = field.strip().removesuffix("MiB").strip()
    return int(value) if value.isascii() and value.isdigit() else None


def _rows(csv_text: str) -> list[list[str]]:
    """Non-empty lines split on commas, fields stripped (nvidia-smi quotes nothing: a comma in a name splits it)."""
    return [[f.strip() for f in line.split(",")] for line in csv_text.splitlines() if line.strip()]


def parse_gpus(csv_text: str) -> list[Gpu]:
    """`nvidia-smi --query-gpu=GPU_FIELDS --format=csv,noheader,nounits` -> GPUs. A header, units, "No devices
    were found" and a GPU whose memory reads `[N/A]` are left out (nothing to compare free memory with)."""
    found = []
    for row in _rows(csv_text):
        if len(row) < 6 or not (row[0].isascii() and row[0].isdigit()) or not row[1].startswith(_UUID_PREFIXES):
            continue
        total, used, free = (_mib(f) for f in row[-3:])
        if total is None or used is None or free is None:
            continue
        found.append(Gpu(int(row[0]), row[1], ", ".join(row[2:-3]), total, used, free))
    return found


def parse_apps(csv_text: str) -> list[App]:
    """`nvidia-smi --query-compute-apps=APP_FIELDS --format=csv,noheader,nounits` -> processes. Empty output (none
    run), a header, units and lines that are not a pid and a GPU uuid are tolerated; a comma in the name is kept
    (the pid is first, memory and uuid last)."""
    found = []
    for row in _rows(csv_text):
        if len(row) < 4 or not (row[0].isascii() and row[0].isdigit()) or not row[-1].startswith(_UUID_PREFIXES):
            continue
        found.append(App(int(row[0]), ", ".join(row[1:-2]), _mib(row[-2]), row[-1]))
    return found


def _run(nvidia_smi: str | None, query: str, timeout: float) -> str | None:
    """nvidia-smi's stdout for one CSV query; None when it is absent, fails or hangs (a wedged driver does)."""
    exe = nvidia_smi or shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        done = subprocess.run(
            [exe, query, "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def query_gpus(nvidia_smi: str | None = None, timeout: float = 10) -> list[Gpu] | None:
    """The GPUs and their memory now; None: no nvidia-smi, or it failed."""
    text = _run(nvidia_smi, f"--query-gpu={GPU_FIELDS}", timeout)
    return None if text is None else parse_gpus(text)


def query_apps(nvidia_smi: str | None = None, timeout: float = 10) -> list[App] | None:
    """The processes holding GPU memory now; None: no nvidia-smi, or it failed. Their pids are in this PID
    namespace on current drivers (captured in a container: the container's pids)."""
    text = _run(nvidia_smi, f"--query-compute-apps={APP_FIELDS}", timeout)
    return None if text is None else parse_apps(text)


class NotReleased(TimeoutError):
    """nvidia-smi still lists some of the processes after the wait: `apps` says which and how much they hold."""

    def __init__(self, apps: list[App], waited: float) -> None:
        self.apps = apps
        self.waited = waited
        held = ", ".join(
            f"{a.name} (pid {a.pid}, {'? MiB' if a.used_mib is None else f'{a.used_mib} MiB'})" for a in apps
        )
        super().__init__(f"GPU memory not released after {waited:.1f} s: {held}")


def wait_released(
    pids: Iterable[int],
    timeout: float,
    tick: Callable[[float], None] | None = None,
    *,
    query: Callable[[], list[App] | None] = query_apps,
    interval: float = 0.25,
) -> float | None:
    """Seconds until nvidia-smi lists none of `pids`; None when there is no nvidia-smi (nothing to wait for).
    Raises NotReleased (a TimeoutError) when they still hold memory after `timeout`: a caller that forgot to check
    a returned flag would start the next engine into an out-of-memory. `tick(elapsed)` after each poll that still
    finds one (progress on a terminal). A failed query mid-wait (nvidia-smi is slow while a process exits) is
    polled again; only the first tells whether there is an nvidia-smi at all."""
    wanted = set(pids)
    start = time.monotonic()
    first = True
    held: list[App] = []
    while True:
        apps = query()
        elapsed = time.monotonic() - start
        if apps is None and first:
            return None
        first = False
        if apps is not None:
            held = [a for a in apps if a.pid in wanted]
            if not held:
                return elapsed
        if elapsed >= timeout:
            raise NotReleased(held, elapsed)
        if tick is not None:
            tick(elapsed)
        time.sleep(min(interval, max(0.0, timeout - elapsed)))
