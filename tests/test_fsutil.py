"""fsutil.save: agentcfg's own files, written atomically; a full disk is a clear error, never a bug. fsutil.Watch:
a write in place by another program is seen, not dropped by agentcfg's rename."""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentcfg import fsutil
from agentcfg.errors import AgentcfgError, Exit


def test_save_creates_a_private_directory_and_the_file(tmp_path: Path) -> None:
    target = tmp_path / "cfg" / "profiles" / "gpu.toml"
    fsutil.save(target, b"model = 'm'\n", 0o644, "~/cfg/profiles/gpu.toml")
    assert target.read_bytes() == b"model = 'm'\n"
    assert (target.parent.stat().st_mode & 0o777) == 0o700
    assert (target.stat().st_mode & 0o777) == 0o644


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_failed_write_is_one_error_and_the_old_file_stays(tmp_path: Path, monkeypatch, code: int) -> None:
    target = tmp_path / "profiles" / "gpu.toml"
    target.parent.mkdir()
    target.write_bytes(b"old\n")

    def failing(fd: int, data: bytes) -> int:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "write", failing)
    with pytest.raises(AgentcfgError) as caught:
        fsutil.save(target, b"new\n", 0o644, "~/profiles/gpu.toml")
    monkeypatch.undo()
    assert caught.value.exit_code == Exit.REFUSED
    assert "~/profiles/gpu.toml" in caught.value.message and os.strerror(code) in caught.value.message
    assert ("df -h" in caught.value.hint) == (code == errno.ENOSPC)
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["gpu.toml"]  # no temp file left


# -- Watch: a write in place that a rename would drop (Linux read leases) -----------------------------------------

try:
    import fcntl
except ImportError:  # Windows: no fcntl, so no leases either
    fcntl = None
leases = pytest.mark.skipif(not hasattr(fcntl, "F_SETLEASE"), reason="read leases are Linux's")

HOLD_OPEN = (
    "import sys, time\nf = open(sys.argv[1], 'r+b')\nprint('open', flush=True)\ntime.sleep(float(sys.argv[2]))\n"
)
OPEN_AND_WRITE = "import sys\nwith open(sys.argv[1], 'r+b') as f:\n    f.write(b'theirs')\nprint('wrote', flush=True)\n"


def _run(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True)


@leases
def test_a_file_another_program_holds_open_for_writing_is_not_quiet(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b"ours")
    writer = _run(HOLD_OPEN, str(path), "1")
    assert writer.stdout.readline() == "open\n"
    watch = fsutil.Watch(path, wait=0.05)  # it stays open longer than agentcfg waits
    try:
        assert watch.busy and not watch.quiet()
    finally:
        watch.close()
        writer.wait()
    watch = fsutil.Watch(path)  # closed now: quiet
    try:
        assert watch.leased and watch.quiet() and watch.digest == hashlib.sha256(b"ours").hexdigest()
    finally:
        watch.close()


@leases
def test_a_program_opening_the_file_while_watched_waits_and_is_seen_before_the_rename(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b"ours")
    watch = fsutil.Watch(path)
    try:
        writer = _run(OPEN_AND_WRITE, str(path))
        deadline = time.monotonic() + 10
        while watch.quiet() and time.monotonic() < deadline:  # its open breaks the lease (and waits on it)
            time.sleep(0.01)
        assert not watch.quiet()
        assert path.read_bytes() == b"ours"  # it has not written: it waits until agentcfg lets go
    finally:
        watch.close()  # also: this process was signalled the break (SIGURG) and is still here
    assert writer.wait(timeout=10) == 0 and path.read_bytes() == b"theirs"


@leases
def test_after_the_rename_a_late_write_into_the_old_file_is_waited_for_and_returned(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b"ours")
    writer = _run(
        HOLD_OPEN.replace("time.sleep(float(sys.argv[2]))", "time.sleep(0.1); f.write(b'late')"), str(path), "0"
    )
    assert writer.stdout.readline() == "open\n"
    watch = fsutil.Watch(path, wait=0.0)
    try:
        assert not watch.quiet()  # (a switch would refuse here; what follows is the window after it)
        replacement = tmp_path / "new"
        replacement.write_bytes(b"agentcfg's")
        os.replace(replacement, path)
        assert watch.written_since(settle=0.0, limit=5.0) == b"late"  # no settling: the lease says it is closed
    finally:
        watch.close()
        writer.wait()
