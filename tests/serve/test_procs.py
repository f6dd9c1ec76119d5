"""The process table for `serve stop` and orphan sweeps: parsing from a fake /proc, and real process trees
started here (a parent whose child forks a grandchild in the same group, renamed like vLLM's engines) for
descendants, in_group and end."""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcfg.serve import procs
from agentcfg.serve.procs import Holder, Proc

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc")


# -- a fake /proc ---------------------------------------------------------------------------------------


def _stat(pid: int, comm: str, ppid: int, pgid: int, sid: int, start: int, state: str = "S") -> str:
    """/proc/PID/stat as Linux writes it: 52 fields, starttime the 22nd."""
    after = [state, ppid, pgid, sid, 34817, pgid, 4194560, 1, 0, 0, 0, 3, 1, 0, 0, 20, 0, 1, 0, start]
    after += [0] * 32
    return f"{pid} ({comm}) " + " ".join(str(f) for f in after) + "\n"


def fake_proc(
    root: Path,
    pid: int,
    args: tuple[str, ...],
    *,
    ppid: int = 1,
    pgid: int | None = None,
    sid: int | None = None,
    uid: int | None = None,
    start: int = 1000,
    state: str = "S",
    comm: str | None = None,
) -> Path:
    entry = root / str(pid)
    entry.mkdir(parents=True)
    comm = comm if comm is not None else os.path.basename(args[0])[:15] if args else "kthread"
    (entry / "cmdline").write_bytes(b"".join(a.encode() + b"\0" for a in args))
    (entry / "stat").write_text(_stat(pid, comm, ppid, pgid or pid, sid or pid, start, state))
    (entry / "comm").write_text(comm + "\n")
    uid = os.getuid() if uid is None else uid
    (entry / "status").write_text(f"Name:\t{comm}\nState:\t{state}\nUid:\t{uid}\t0\t{uid}\t{uid}\nGid:\t0\t0\t0\t0\n")
    (entry / "fd").mkdir()
    return entry


def test_parse_stat_with_a_comm_that_has_parentheses_and_spaces() -> None:
    parsed = procs.parse_stat(_stat(42, "a) (b c)", 7, 40, 30, 123456))
    assert parsed == procs.Stat(pid=42, comm="a) (b c)", state="S", ppid=7, pgid=40, sid=30, start=123456)
    assert procs.parse_stat("") is None
    assert procs.parse_stat("42 (x) S 1 2") is None  # cut short


def test_real_uid_is_the_first_of_the_uid_line() -> None:
    assert procs.real_uid("Name:\tx\nUid:\t1000\t0\t1000\t0\n") == 1000
    assert procs.real_uid("Name:\tx\n") is None
    assert procs.real_uid("Uid:\t²\t0\n") is None


def test_snapshot_reads_every_process(tmp_path: Path) -> None:
    fake_proc(tmp_path, 100, ("/usr/bin/vllm", "serve", "m"), ppid=1, pgid=100, sid=90, uid=1000, start=5)
    # vLLM's engine: setproctitle rewrites argv; comm is cut to 15 characters
    fake_proc(tmp_path, 101, ("VLLM::EngineCore",), ppid=100, pgid=100, sid=90, uid=1000, start=6)
    fake_proc(tmp_path, 2, (), ppid=0, pgid=0, sid=0, uid=0, comm="kthreadd")  # a kernel thread: no cmdline
    fake_proc(tmp_path, 102, ("defunct",), ppid=100, state="Z")  # a zombie holds nothing and takes no signal
    gone = fake_proc(tmp_path, 103, ("gone",))
    (gone / "stat").unlink()  # ended while read
    hidden = fake_proc(tmp_path, 104, ("hidden",), uid=1000)
    (hidden / "status").unlink()
    (tmp_path / "self").mkdir()
    (tmp_path / "net").mkdir()
    found = {p.pid: p for p in procs.snapshot(tmp_path)}
    assert sorted(found) == [2, 100, 101, 104]
    assert found[101] == Proc(101, 100, 100, 90, 1000, 6, "VLLM::EngineCor", ("VLLM::EngineCore",))
    assert found[100].args == ("/usr/bin/vllm", "serve", "m")
    assert found[2].args == () and found[2].name == "kthreadd"
    assert found[104].uid is None  # owner unknown: never signalled (end)
    assert procs.snapshot(tmp_path / "missing") == []


def _p(pid: int, ppid: int, pgid: int) -> Proc:
    return Proc(pid, ppid, pgid, 1, 1000, pid, f"p{pid}", ())


def test_descendants_and_group_are_pure() -> None:
    table = [_p(10, 1, 10), _p(11, 10, 10), _p(12, 11, 10), _p(13, 1, 10), _p(20, 1, 20), _p(21, 20, 10)]
    assert [p.pid for p in procs.descendants(table, 10)] == [11, 12]
    assert [p.pid for p in procs.descendants(table, 20)] == [21]
    assert procs.descendants(table, 99) == []
    assert [p.pid for p in procs.in_group(table, 10)] == [10, 11, 12, 13, 21]
    cycle = [_p(30, 31, 30), _p(31, 30, 30)]  # impossible in /proc, but a torn read must not loop forever
    assert sorted(p.pid for p in procs.descendants(cycle, 30)) == [31]


def test_gpu_devices_from_the_open_file_descriptors(tmp_path: Path) -> None:
    entry = fake_proc(tmp_path, 828, ("VLLM::Worker_TP0",))
    targets = [
        "/dev/nvidiactl",
        "/dev/nvidia0",
        "/dev/nvidia-uvm",
        "/dev/nvidia0",
        "/dev/kfd",
        "/dev/dri/renderD128",
        "/dev/dri/card0",
        "/dev/null",
        "socket:[123]",
        "/home/u/nvidia0.log",
    ]
    for i, target in enumerate(targets):
        (entry / "fd" / str(i)).symlink_to(target)
    assert procs.gpu_devices(828, tmp_path) == [
        "/dev/dri/renderD128",
        "/dev/kfd",
        "/dev/nvidia-uvm",
        "/dev/nvidia0",
        "/dev/nvidiactl",
    ]
    assert procs.gpu_devices(999, tmp_path) == []  # gone, or another user's (fd not readable)


_TCP_HEAD = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"


def test_port_holders_v4_and_v6_from_proc_net(tmp_path: Path) -> None:
    me, other = os.getuid(), os.getuid() + 1000
    (tmp_path / "net").mkdir()
    tail = "00000000:00000000 00:00000000 00000000"  # tx/rx queue, timer, retransmits
    zero6 = "0" * 32
    (tmp_path / "net" / "tcp").write_text(
        _TCP_HEAD
        # 127.0.0.1:8000 listening (0A), mine
        + f"   0: 0100007F:1F40 00000000:0000 0A {tail}  {me}        0 5001 1 0 100 0 0 10 0\n"
        # a client's connection to 8000 (established, 01): its local port is not 8000
        + f"   1: 0100007F:9C40 0100007F:1F40 01 {tail}  {me}        0 5002 1 0 20 4 30 10 -1\n"
        # another user's listener on 8001
        + f"   2: 00000000:1F41 00000000:0000 0A {tail}  {other}        0 5003 1 0 100 0 0 10 0\n"
    )
    (tmp_path / "net" / "tcp6").write_text(
        _TCP_HEAD
        # [::]:8000 listening, mine, held by two processes (a fork shares it)
        + f"   0: {zero6}:1F40 {zero6}:0000 0A {tail}  {me}        0 6001 1 0 100 0 0 10 0\n"
        # [::1]:8001, another user's
        + f"   1: {zero6[:-8]}01000000:1F41 {zero6}:0000 0A {tail}  {other}        0 6002 1 0 100 0 0 10 0\n"
    )
    server = fake_proc(tmp_path, 500, ("/usr/bin/vllm", "serve"))
    (server / "fd" / "3").symlink_to("socket:[5001]")
    (server / "fd" / "4").symlink_to("socket:[6001]")
    (server / "fd" / "5").symlink_to("socket:[5002]")
    worker = fake_proc(tmp_path, 501, ("python3",), ppid=500)
    (worker / "fd" / "7").symlink_to("socket:[6001]")
    fake_proc(tmp_path, 600, ("theirs",), uid=other)  # its fd/ is unreadable for real; here simply empty

    assert sorted(procs.port_holders(8000, tmp_path), key=lambda h: (h.address, h.pid or 0)) == [
        Holder(500, me, "vllm", "127.0.0.1:8000"),
        Holder(500, me, "vllm", "[::]:8000"),
        Holder(501, me, "python3", "[::]:8000"),
    ]
    assert sorted(procs.port_holders(8001, tmp_path), key=lambda h: h.address) == [
        Holder(None, other, None, "0.0.0.0:8001"),
        Holder(None, other, None, "[::1]:8001"),
    ]
    assert procs.port_holders(8002, tmp_path) == []
    assert procs.port_holders(8000, tmp_path / "missing") == []


def test_port_holders_finds_this_process_listening() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        found = procs.port_holders(port)
        assert [(h.pid, h.uid, h.address) for h in found] == [(os.getpid(), os.getuid(), f"127.0.0.1:{port}")]
    assert procs.port_holders(port) == []


# -- real process trees ------------------------------------------------------------------------------------

TREE = r"""
import ctypes, os, signal, sys, time

def rename(title):
    ctypes.CDLL(None).prctl(15, title.encode(), 0, 0, 0)  # PR_SET_NAME: comm, cut to 15 bytes

ignore = "ignore-term" in sys.argv
if os.fork() == 0:
    rename("VLLM::EngineCore")
    if ignore:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.fork() == 0:
        rename("VLLM::Worker_TP0")
        if ignore:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.write(1, b"grandchild %d\n" % os.getpid())  # one write: the three share the pipe
        while True:
            time.sleep(60)
    os.write(1, b"child %d\n" % os.getpid())
    while True:
        time.sleep(60)
os.write(1, b"parent %d\n" % os.getpid())
while True:
    time.sleep(60)
"""


@dataclasses.dataclass
class Tree:
    parent: subprocess.Popen[str]
    pids: dict[str, int]


def _alive(pid: int) -> bool:
    stat = procs.read(pid)
    return stat is not None


@pytest.fixture
def tree(request: pytest.FixtureRequest) -> Iterator[Tree]:
    """A new session and process group: parent -> child -> grandchild, the two below renamed like vLLM's
    engines. Whatever is left of its group at the end is SIGKILLed by pid (never by name)."""
    extra = getattr(request, "param", ())
    parent = subprocess.Popen(
        [sys.executable, "-c", TREE, *extra], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert parent.stdout is not None
    first = procs.read(parent.pid)
    born = first.start if first is not None else 0
    pids: dict[str, int] = {}
    try:
        for _ in range(3):
            role, pid = parent.stdout.readline().split()
            pids[role] = int(pid)
        yield Tree(parent, pids)
    finally:
        _sweep(parent, born)


def _sweep(parent: subprocess.Popen[str], born: int) -> None:
    """SIGKILL what is left of the group this test started (its pgid is the parent's pid; members started since
    the parent), by our own end(), which checks each pid's start time and owner again."""
    left = [p for p in procs.in_group(procs.snapshot(), parent.pid) if p.start >= born and p.pid != parent.pid]
    procs.end(left, uid=os.getuid(), timeout=0, signal_first=signal.SIGKILL)
    if parent.poll() is None:
        parent.kill()
    parent.wait(5)


def test_descendants_and_group_of_a_real_tree(tree: Tree) -> None:
    table = procs.snapshot()
    parent, child, grandchild = tree.pids["parent"], tree.pids["child"], tree.pids["grandchild"]
    assert [p.pid for p in procs.descendants(table, parent)] == [child, grandchild]
    group = procs.in_group(table, parent)
    assert sorted(p.pid for p in group) == sorted([parent, child, grandchild])
    by_pid = {p.pid: p for p in group}
    assert by_pid[child].name == "VLLM::EngineCor"  # comm is cut to 15: a pattern on the full title misses it
    assert by_pid[grandchild].name == "VLLM::Worker_TP"
    assert by_pid[child].uid == os.getuid() and by_pid[child].sid == parent


def test_parent_sigkilled_leaves_the_child_in_its_group(tree: Tree) -> None:
    parent, child, grandchild = tree.pids["parent"], tree.pids["child"], tree.pids["grandchild"]
    tree.parent.kill()  # the API server SIGKILLed: its engine lives on (vllm #55510)
    tree.parent.wait(5)
    now = procs.read(child)
    assert now is not None and now.ppid != parent  # reparented when the parent died
    table = procs.snapshot()
    assert procs.descendants(table, parent) == []  # the parent is gone: its children are someone else's now
    orphans = procs.in_group(table, parent)
    assert sorted(p.pid for p in orphans) == sorted([child, grandchild])
    assert {p.pid: p.ppid for p in orphans}[child] != parent

    ended = procs.end(orphans, uid=os.getuid(), timeout=5)
    assert sorted(ended) == sorted([child, grandchild])
    assert not _alive(child) and not _alive(grandchild)


@pytest.mark.parametrize("tree", [("ignore-term",)], indirect=True)
def test_end_sigkills_what_ignores_sigterm_after_the_timeout(tree: Tree) -> None:
    targets = [p for p in procs.in_group(procs.snapshot(), tree.pids["parent"]) if p.pid != tree.pids["parent"]]
    began = time.monotonic()
    ended = procs.end(targets, uid=os.getuid(), timeout=0.5)
    took = time.monotonic() - began
    assert sorted(ended) == sorted([tree.pids["child"], tree.pids["grandchild"]])
    assert 0.5 <= took < 5
    assert _alive(tree.pids["parent"])  # not a target


def test_end_never_signals_a_reused_pid(tree: Tree) -> None:
    child = next(p for p in procs.snapshot() if p.pid == tree.pids["child"])
    earlier = dataclasses.replace(child, start=child.start - 1)  # what was at this pid before: it is gone
    assert procs.end([earlier], uid=os.getuid(), timeout=0.3) == []
    time.sleep(0.1)
    assert _alive(child.pid)


def test_end_never_signals_another_users_process(tmp_path: Path, tree: Tree) -> None:
    child = tree.pids["child"]
    real = procs.read(child)
    assert real is not None
    other = os.getuid() + 1000
    # the same process as a fake /proc shows it owned by another user
    fake_proc(tmp_path, child, ("VLLM::EngineCore",), uid=other, start=real.start, ppid=real.ppid, pgid=real.pgid)
    theirs = procs.snapshot(tmp_path)
    assert [p.uid for p in theirs] == [other]
    assert procs.end(theirs, uid=os.getuid(), timeout=0.3) == []
    unknown = [dataclasses.replace(real, uid=None)]  # owner not readable: not ours to end either
    assert procs.end(unknown, uid=os.getuid(), timeout=0.3) == []
    # ours as the snapshot says, but /proc (read again before the signal) says another uid: left alone
    assert procs.end(theirs, uid=other, timeout=0.3) == []
    time.sleep(0.1)
    assert _alive(child)


def test_end_never_signals_this_process_or_init() -> None:
    me = procs.read(os.getpid())
    assert me is not None
    init = dataclasses.replace(me, pid=1)
    assert procs.end([me, init], uid=os.getuid(), timeout=0.1) == []
