"""Red team, another local user: /proc/*/cmdline of every user's processes is readable, and doctor reads the
vLLM ones. `str.isdigit()` is true for '²' (and other Unicode digits int() refuses): a process started as
`vllm serve --port ²` made every `agentcfg doctor` of a local profile fail with an internal error."""

from __future__ import annotations

import pytest

from agentcfg.doctor import localserver
from agentcfg.doctor.localserver import Process


@pytest.mark.parametrize("port", ["²", "①", "1²"])
def test_another_users_odd_port_never_crashes_doctor(port: str) -> None:
    hostile = Process(4242, 1, ("vllm", "serve", "m", "--port", port))
    assert localserver.port_of(hostile) == 8000  # not a port agentcfg can read: vLLM's default, as for none
    localserver.findings([hostile], 8000, "m")  # no exception


# -- another user's vLLM engines are theirs: counted and killed by them, never advised here ---------------


def _fake_proc(root, pid: int, ppid: int, args: tuple[str, ...], uid: int) -> None:
    """One /proc/PID as Linux lays it out: cmdline (NUL-separated), stat, and status with its Uid line."""
    entry = root / str(pid)
    entry.mkdir(parents=True)
    (entry / "cmdline").write_bytes(b"\0".join(a.encode() for a in args) + b"\0")
    (entry / "stat").write_text(f"{pid} ({args[0][:15]}) S {ppid} {pid} {pid} 0 -1 4194560 0 0\n")
    # real, effective, saved, filesystem: a setuid program's effective uid is not its owner
    status = f"Name:\t{args[0][:15]}\nState:\tS (sleeping)\nUid:\t{uid}\t0\t{uid}\t0\nGid:\t0\t0\t0\t0\n"
    (entry / "status").write_text(status)


def test_stray_workers_of_another_user_are_not_counted_nor_killed(tmp_path) -> None:
    import os

    me, other = os.getuid(), os.getuid() + 1000
    _fake_proc(tmp_path, 300, 1, ("VLLM::EngineCore",), me)  # mine, its `vllm serve` gone
    _fake_proc(tmp_path, 400, 1, ("VLLM::EngineCore",), other)  # another user's, also orphaned
    _fake_proc(tmp_path, 401, 400, ("VLLM::Worker",), other)
    _fake_proc(tmp_path, 500, 1, ("/usr/bin/vllm", "serve", "m", "--port", "8001"), other)  # a live server of theirs
    _fake_proc(tmp_path, 501, 500, ("VLLM::EngineCore",), other)
    (tmp_path / "self").mkdir()  # not a pid
    procs = localserver.processes(tmp_path)
    assert sorted((p.pid, p.uid) for p in procs) == [(300, me), (400, other), (401, other), (500, other), (501, other)]
    found = [f for f in localserver.findings(procs, 8000, None) if f.id == "vllm-stray-workers"]
    assert [f.fix for f in found] == ["kill 300"]
    assert not any("400" in f.summary + f.fix or "401" in f.summary + f.fix for f in found)


def test_a_process_whose_owner_cannot_be_read_is_not_killed(tmp_path) -> None:
    _fake_proc(tmp_path, 300, 1, ("VLLM::EngineCore",), 0)
    (tmp_path / "300" / "status").unlink()  # gone between the reads, or hidden
    procs = localserver.processes(tmp_path)
    assert [f for f in localserver.findings(procs, 8000, None) if f.id == "vllm-stray-workers"] == []
