"""The process table (Linux /proc) for stopping a vLLM server and the engines it leaves behind.

A SIGKILLed API server leaves `VLLM::EngineCore` / `VLLM::Worker_TP*` alive, reparented, still in the server's
process group and holding the GPUs (vllm #55510); their comm is cut to `VLLM::EngineCor`, so a name pattern
misses them, and a name pattern across the machine would hit other users' and other servers' engines anyway.
So processes are found by relation (parent, process group) and by the GPU devices they hold open, and ended by
PID, with the start time read again before every signal so that a pid the kernel gave to a new process is never
hit, and never another user's. The parsers are pure; the readers take the /proc root so tests can fake one.
Standard library only (the GPU test runs without agentcfg's dependencies), and not `socket`: doctor reads the
table through here, and its --offline run loads nothing of the network stack.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import time
from pathlib import Path

from agentcfg.lazyclass import dataclass

PROC = Path("/proc")
GPU_DEVICE_PREFIXES = ("/dev/nvidia", "/dev/kfd", "/dev/dri/renderD")
KILL_GRACE = 5.0  # seconds for a SIGKILLed process to leave the table (a GPU context takes a moment to tear down)
_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's `st` column


@dataclass(frozen=True)
class Stat:
    """The fields of /proc/PID/stat this module uses."""

    pid: int
    comm: str
    state: str
    ppid: int
    pgid: int
    sid: int
    start: int  # starttime: clock ticks after boot; with the pid, names one process for good


@dataclass(frozen=True)
class Proc:
    """A process as /proc shows it: enough to prove it belongs to the server agentcfg manages."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    uid: int | None  # real uid; None: not readable, never signalled
    start: int  # starttime in clock ticks after boot: (pid, start) guards against pid reuse
    name: str  # comm: at most 15 bytes (`VLLM::EngineCor`)
    args: tuple[str, ...]  # the command line; empty for kernel threads; setproctitle rewrites it


@dataclass(frozen=True)
class Holder:
    """A process listening on a TCP port. `pid` None: the socket is another user's (their fds are not readable),
    or in no process this namespace shows; `uid` is the socket owner's from /proc/net."""

    pid: int | None
    uid: int | None
    name: str | None
    address: str  # `127.0.0.1:8000`, `[::]:8000`


def stat_fields(text: str) -> tuple[str, list[str]] | None:
    """/proc/PID/stat -> (comm, the fields after it, state first). comm may hold spaces and parentheses: it ends
    at the last `)`."""
    head, sep, tail = text.rpartition(")")
    if not sep or " (" not in head:
        return None
    return head.split(" (", 1)[1], tail.split()


def parse_stat(text: str) -> Stat | None:
    """/proc/PID/stat -> Stat; None when it is cut short or not a stat line."""
    fields = stat_fields(text)
    if fields is None:
        return None
    comm, after = fields
    try:
        pid = int(text.split(" (", 1)[0])
        return Stat(pid, comm, after[0], int(after[1]), int(after[2]), int(after[3]), int(after[19]))
    except (IndexError, ValueError):
        return None


def real_uid(status: str) -> int | None:
    """The real uid from /proc/PID/status's `Uid:` line (real, effective, saved, filesystem)."""
    for line in status.splitlines():
        if line.startswith("Uid:"):
            fields = line.split()
            return int(fields[1]) if len(fields) > 1 and fields[1].isascii() and fields[1].isdigit() else None
    return None


def read(pid: int, proc: Path = PROC) -> Proc | None:
    """One process now; None when it is gone, a zombie (it holds nothing and takes no signal) or unreadable.
    Its uid is None when its status cannot be read."""
    entry = proc / str(pid)
    try:
        stat = parse_stat((entry / "stat").read_text())
        raw = (entry / "cmdline").read_bytes()
    except OSError:
        return None
    if stat is None or stat.state in ("Z", "X", "x"):
        return None
    try:
        uid = real_uid((entry / "status").read_text())
    except OSError:
        uid = None
    args = tuple(a.decode("utf-8", "replace") for a in raw.split(b"\0") if a)
    return Proc(pid, stat.ppid, stat.pgid, stat.sid, uid, stat.start, stat.comm, args)


def snapshot(proc: Path = PROC) -> list[Proc]:
    """Every live process, by pid (empty off Linux or when /proc is unreadable); one that ends while it is read
    is left out."""
    try:
        pids = sorted(int(p.name) for p in proc.iterdir() if p.name.isascii() and p.name.isdigit())
    except OSError:
        return []
    return [p for p in (read(pid, proc) for pid in pids) if p is not None]


def descendants(procs: list[Proc], pid: int) -> list[Proc]:
    """Children, their children and so on, breadth first (not `pid` itself). A process whose parent died has
    been reparented and is no longer here: find those with in_group."""
    children: dict[int, list[Proc]] = {}
    for p in procs:
        children.setdefault(p.ppid, []).append(p)
    found: list[Proc] = []
    seen = {pid}
    queue = [pid]
    while queue:
        for child in children.get(queue.pop(0), []):
            if child.pid not in seen:
                seen.add(child.pid)
                found.append(child)
                queue.append(child.pid)
    return found


def in_group(procs: list[Proc], pgid: int) -> list[Proc]:
    """The processes of process group `pgid`: a reparented engine keeps its server's group."""
    return [p for p in procs if p.pgid == pgid]


def gpu_devices(pid: int, proc: Path = PROC) -> list[str]:
    """The GPU device files `pid` holds open (/dev/nvidia*, /dev/kfd, /dev/dri/renderD*), sorted, each once;
    empty when it is gone or its fds are not readable (another user's)."""
    found = set()
    try:
        fds = list((proc / str(pid) / "fd").iterdir())
    except OSError:
        return []
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(GPU_DEVICE_PREFIXES):
            found.add(target)
    return sorted(found)


def _address(hex_address: str) -> tuple[str, int] | None:
    """`0100007F:1F40` -> ("127.0.0.1", 8000); the IPv6 form -> ("[::1]", port). /proc/net writes the address as
    32-bit words in host byte order."""
    host, _, port = hex_address.partition(":")
    try:
        raw = bytes.fromhex(host)
        port_number = int(port, 16)
    except ValueError:
        return None
    if len(raw) not in (4, 16):
        return None
    if sys.byteorder == "little":
        raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    if len(raw) == 4:
        return str(ipaddress.IPv4Address(raw)), port_number
    return f"[{ipaddress.IPv6Address(raw)}]", port_number


def parse_listeners(text: str) -> list[tuple[str, int, int | None, int]]:
    """/proc/net/tcp or tcp6 -> (address, port, uid, socket inode) of each listening socket."""
    found = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 10 or fields[3] != _LISTEN:
            continue
        address = _address(fields[1])
        if address is None or not fields[9].isascii() or not fields[9].isdigit():
            continue
        uid = int(fields[7]) if fields[7].isascii() and fields[7].isdigit() else None
        found.append((address[0], address[1], uid, int(fields[9])))
    return found


def _socket_owners(inodes: set[int], proc: Path) -> dict[int, list[int]]:
    """socket inode -> the pids that hold it open (only processes whose fds this user may read)."""
    owners: dict[int, list[int]] = {}
    try:
        pids = sorted(int(p.name) for p in proc.iterdir() if p.name.isascii() and p.name.isdigit())
    except OSError:
        return owners
    for pid in pids:
        try:
            fds = list((proc / str(pid) / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:[") and target.endswith("]"):
                inode = int(target[8:-1]) if target[8:-1].isdigit() else -1
                if inode in inodes and pid not in owners.setdefault(inode, []):
                    owners[inode].append(pid)
    return owners


def port_holders(port: int, proc: Path = PROC) -> list[Holder]:
    """Who listens on TCP `port`, IPv4 and IPv6: one Holder per process and address (a forked server shares its
    socket), pid None where the socket's process cannot be seen (another user's)."""
    listeners = []
    for name in ("tcp", "tcp6"):
        try:
            text = (proc / "net" / name).read_text()
        except OSError:
            continue
        listeners += [entry for entry in parse_listeners(text) if entry[1] == port]
    if not listeners:
        return []
    owners = _socket_owners({inode for *_, inode in listeners}, proc)
    holders = []
    for address, _, uid, inode in listeners:
        shown = f"{address}:{port}"
        pids = owners.get(inode, [])
        if not pids:
            holders.append(Holder(None, uid, None, shown))
        for pid in pids:
            holder = read(pid, proc)
            holders.append(Holder(pid, uid, holder.name if holder else None, shown))
    return holders


def _same(target: Proc, proc: Path) -> bool:
    """`target` is still the process it was: same pid and start time, alive, same real uid."""
    now = read(target.pid, proc)
    return now is not None and now.start == target.start and now.uid == target.uid


def _signal(target: Proc, sig: int, proc: Path) -> bool:
    """Send `sig` to `target` if it is still that process. A pidfd (Linux 5.3+) is opened before the check, so
    the process checked is the one signalled; without one the window is the time between a read and kill()."""
    pidfd = None
    try:
        pidfd = os.pidfd_open(target.pid)
    except ProcessLookupError:
        return False
    except (AttributeError, OSError):
        pidfd = None  # no pidfd on this kernel or Python: check, then kill by pid
    try:
        if not _same(target, proc):
            return False
        if pidfd is not None:
            import signal  # lazy: as in end()

            signal.pidfd_send_signal(pidfd, sig)
        else:
            os.kill(target.pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _wait_gone(targets: list[Proc], timeout: float, proc: Path) -> list[Proc]:
    """Wait until none of `targets` runs or `timeout` passes; those still running."""
    deadline = time.monotonic() + timeout
    while True:
        left = [t for t in targets if _same(t, proc)]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


def end(
    targets: list[Proc], *, uid: int, timeout: float, signal_first: int | None = None, proc: Path = PROC
) -> list[int]:
    """End `targets` by PID: `signal_first` (None: SIGTERM) to each, up to `timeout` seconds for them to exit,
    SIGKILL for what is left, then up to KILL_GRACE more. Before every signal the pid's start time and owner are
    read again, so a pid reused by another process is never hit; a target that is not `uid`'s (or whose owner is
    unknown), pid 1 and this process are never signalled. Returns the pids that were signalled and are gone."""
    import signal  # lazy: doctor lists processes (this module) and never signals one

    mine: dict[int, Proc] = {}
    for t in targets:
        if t.uid is not None and t.uid == uid and t.pid > 1 and t.pid != os.getpid():
            mine.setdefault(t.pid, t)
    signalled = [t for t in mine.values() if _signal(t, signal_first or signal.SIGTERM, proc)]
    left = _wait_gone(signalled, timeout, proc)
    if left:
        for t in left:
            _signal(t, signal.SIGKILL, proc)
        left = _wait_gone(left, KILL_GRACE, proc)
    return [t.pid for t in signalled if t not in left]
