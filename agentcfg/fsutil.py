"""The small file-system primitives the one writer is built from: atomic replace, private state, a lock."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from agentcfg.errors import AgentcfgError

TMP_SUFFIX = ".agentcfg-tmp"


# The largest files agentcfg reads. An agent file (10 MB read in ~2-5 s: benchmarks/scaling.py) or a
# profile beyond these is refused, so that a symlink to /dev/zero or a huge file cannot exhaust memory.
AGENT_FILE_LIMIT = 64 << 20
PROFILE_LIMIT = 1 << 20
_NONBLOCK = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return name
    return "not a regular file"


def read_limited(path: Path, shown: str, limit: int = AGENT_FILE_LIMIT) -> bytes | None:
    """A regular file's bytes (None when it does not exist), never more than `limit`, never blocking.

    A FIFO, device or socket (or a symlink to one) is refused before it is opened, and the open itself
    is non-blocking, so a file swapped for a FIFO in between cannot hang a command that holds the lock.
    """
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise AgentcfgError("is a directory, not a file", where=shown, hint="Move it away and run again.")
        if not stat.S_ISREG(info.st_mode):
            raise AgentcfgError(
                f"is {_kind(info.st_mode)}, not a regular file: agentcfg does not read it",
                where=shown,
                hint="Replace it with a regular file (or remove it) and run again.",
            )
        fd = os.open(path, os.O_RDONLY | _NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AgentcfgError(
            f"cannot read it: {exc.strerror}", where=shown, hint="Check its permissions (ls -l) and run again."
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # swapped since the stat above
            raise AgentcfgError(f"is {_kind(info.st_mode)}, not a regular file: agentcfg does not read it", where=shown)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except BlockingIOError:
        raise AgentcfgError("could not be read without waiting: agentcfg does not read it", where=shown) from None
    except OSError as exc:
        raise AgentcfgError(f"cannot read it: {exc.strerror}", where=shown) from None
    finally:
        os.close(fd)
    if size > limit:
        raise AgentcfgError(
            f"is larger than {limit >> 20} MiB, the most agentcfg reads: it is not read",
            where=shown,
            hint="Check that it is the file you mean (a log or a data file at this path?).",
        )
    return b"".join(chunks)


def read_text(path: Path, shown: str, limit: int = AGENT_FILE_LIMIT) -> str | None:
    """A file's text exactly as stored (CRLF kept), or None when it does not exist."""
    data = read_limited(path, shown, limit)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentcfgError(
            f"is not UTF-8 text (byte {exc.start})",
            where=shown,
            hint="agentcfg did not change it; save it as UTF-8 and run again.",
        ) from None


# fsync of a directory is not possible everywhere (Windows, some network file systems): those
# errors mean "not supported" and are ignored; these mean the data may not be on disk.
_DURABILITY_ERRORS = frozenset({errno.EIO, errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


def fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno in _DURABILITY_ERRORS:
            raise
    finally:
        os.close(fd)


CHUNK = 1 << 18  # what a big file is read, hashed, encoded and written by: no second whole copy of it


def text_chunks(text: str) -> Iterator[bytes]:
    """`text` as UTF-8, a chunk at a time (a slice of a str never splits a character)."""
    for start in range(0, len(text), CHUNK):
        yield text[start : start + CHUNK].encode("utf-8")


def _write_all(fd: int, data: bytes | str) -> None:
    """os.write until every byte is out (a short write is not an error; ENOSPC is); text as UTF-8, a chunk at a
    time."""
    for chunk in text_chunks(data) if isinstance(data, str) else (data,):
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view) :]


class ChangedMeanwhile(Exception):
    """The target was changed by someone else between agentcfg's last check and its rename."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path


Fingerprint = tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns


def fingerprint(path: Path) -> Fingerprint | None:
    """Identity and version of a file, None when it does not exist (0 where the platform gives none)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def read_with_fingerprint(path: Path) -> tuple[bytes | None, Fingerprint | None]:
    """A file's bytes and the fingerprint of the very file they were read from (one open)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None, None
    try:
        return _read_fd(fd)
    finally:
        os.close(fd)


def atomic_write(
    target: Path,
    data: bytes | str,
    mode: int,
    owner: tuple[int, int] | None = None,
    check: Callable[[], Callable[[], None] | None] | None = None,
) -> None:
    """Write `data` (text: as UTF-8) to a temp file beside `target`, fsync, rename over it: readers see old or new.

    `check` runs after the new bytes are durable, immediately before the rename: the last moment
    to refuse (raise) because someone else changed the target. What it returns, if anything, runs
    right after the rename (to find a write that landed in the file just replaced)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}{TMP_SUFFIX}")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)
        if owner and hasattr(os, "chown"):
            with contextlib.suppress(OSError):
                os.chown(tmp, *owner)
        after_rename = check() if check is not None else None
        os.replace(tmp, target)
        if after_rename is not None:
            after_rename()
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(target.parent)


class Watch:
    """The file at a path, read and kept open, to tell after a rename over it whether someone wrote
    into it meanwhile (in place: open, truncate, write) and what they wrote, which the rename would
    otherwise drop. POSIX only: Windows cannot rename over an open file.

    On Linux it also holds a read lease (fcntl F_SETLEASE) from before its read until the rename:
    the kernel refuses the lease while any program has the file open for writing, and makes a program
    that opens it for writing meanwhile wait until agentcfg lets go, marking the lease as breaking.
    So a writer that opened the file and stalled before writing (a loaded machine) is seen before the
    rename (`quiet` is False) instead of writing into the replaced file afterwards; and after the
    rename, a lease taken on the replaced file says no writer has it open any more, so what it holds
    then is final. Where leases are not available (another OS, a file of another user, NFS) the
    lease part is skipped: a late write is then found by waiting for the file to settle."""

    def __init__(self, path: Path, wait: float = 0.1) -> None:
        self.fd: int | None = None
        self.digest: str | None = None  # sha256 of what it held when read (not the bytes: a file can be big)
        self.fingerprint: Fingerprint | None = None
        self.leased = False
        self.busy = False  # another program had it open for writing for all of `wait`
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            leased = _lease(fd, wait)
            self.busy, self.leased = leased is False, leased is True
            self.digest, self.fingerprint = _digest_fd(fd)
        except BaseException:
            os.close(fd)
            raise
        if os.name == "posix":
            self.fd = fd
        else:  # pragma: no cover
            os.close(fd)

    def quiet(self) -> bool:
        """True unless another program has the file open for writing, or is opening it now."""
        if self.busy:
            return False
        if not self.leased or self.fd is None:  # closed: the lease went with it
            return True
        import fcntl

        return fcntl.fcntl(self.fd, fcntl.F_GETLEASE) == fcntl.F_RDLCK

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # also lets go of the lease
            self.fd = None

    def written_since(self, settle: float = 0.005, limit: float = 0.2) -> bytes | None:
        """What was written into the watched file since it was read, once the writer is done (it
        closed the file, where leases tell; else no change for `settle` seconds, waiting `limit` at
        most); None when nothing was."""
        if self.fd is None:
            return None
        if self.leased:
            _unlease(self.fd)  # a writer waiting on the lease goes on, into the file just replaced
        if _lease(self.fd, limit):  # nobody has it open for writing, nor can open it by name: final
            _unlease(self.fd)
            settle = 0.0
        if _digest_fd(self.fd) == (self.digest, self.fingerprint):
            return None
        data, seen = _read_fd(self.fd)
        deadline = quiet = time.monotonic()
        deadline += limit
        while time.monotonic() < deadline and time.monotonic() - quiet < settle:
            time.sleep(settle / 5)
            again = _read_fd(self.fd)
            if again != (data, seen):
                (data, seen), quiet = again, time.monotonic()
        return data


def _lease(fd: int, wait: float) -> bool | None:
    """Take a read lease on `fd`, waiting up to `wait` seconds while another program has the file open
    for writing: True when held, False when it still had, None when leases are not available here."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    if not hasattr(fcntl, "F_SETLEASE"):  # leases are Linux's
        return None
    import signal

    deadline = time.monotonic() + wait
    while True:
        try:
            # A break is signalled to the holder: SIGURG, which is ignored unless handled, in place of
            # SIGIO, which would end the process. (Set each try: it fails where leases do.)
            fcntl.fcntl(fd, getattr(fcntl, "F_SETSIG", 10), signal.SIGURG)
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
            return True
        except OSError as exc:
            if exc.errno != errno.EAGAIN:
                return None  # not the owner, not a local file system, leases disabled
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.0005)


def _unlease(fd: int) -> None:
    import fcntl

    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)


def digest_with_fingerprint(path: Path) -> tuple[str | None, Fingerprint | None]:
    """The sha256 of a file's bytes and the fingerprint of the very file they were read from (one open), read a
    chunk at a time; (None, None) when it does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK)  # a FIFO put there meanwhile: no wait for a writer
    except FileNotFoundError:
        return None, None
    try:
        return _digest_fd(fd)
    finally:
        os.close(fd)


def _digest_fd(fd: int) -> tuple[str, Fingerprint]:
    import hashlib  # only where a file is written: `key get` imports this module and never loads OpenSSL

    os.lseek(fd, 0, os.SEEK_SET)
    st = os.fstat(fd)
    digest = hashlib.sha256()
    while chunk := os.read(fd, CHUNK):
        digest.update(chunk)
    return digest.hexdigest(), (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _read_fd(fd: int) -> tuple[bytes, Fingerprint]:
    os.lseek(fd, 0, os.SEEK_SET)
    st = os.fstat(fd)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks), (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def write_new(path: Path, data: bytes | str) -> None:
    """Create `path` (0600, must not exist) with `data` (text: as UTF-8), fsynced. For files in a staging directory,
    which becomes visible only by a rename once all of it is written: no temp file needed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def space_hint(exc: OSError, near: str) -> str:
    """What to do about a failed write: free space (full disk, quota), else check the file system."""
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return f"Free some space on the file system that holds {near} (see `df -h {near}`), then run again."
    return f"Check that {near} is writable and its file system healthy (dmesg), then run again."


def remove_stale_temps(target: Path) -> None:
    """Temp files a killed writer left beside `target`."""
    for stale in target.parent.glob(f".{target.name}.*{TMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            stale.unlink()


def private_dir(path: Path) -> Path:
    """Create (or tighten) a directory only the user may read: 0700."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if os.name == "posix" and (path.stat().st_mode & 0o777) != 0o700:
        os.chmod(path, 0o700)
    return path


def save(path: Path, data: bytes, mode: int, shown: str) -> None:
    """A file of agentcfg's own (a profile, the trust store), written atomically in a 0700 directory.
    A full disk or a read-only directory is the machine's state, not a bug: one error naming the file,
    and the old file (or none) stays."""
    try:
        private_dir(path.parent)
        atomic_write(path, data, mode)
    except OSError as exc:
        near = shown.rsplit("/", 1)[0] if "/" in shown else "."
        raise AgentcfgError(
            f"could not write {shown} ({exc.strerror or exc}); it is as it was", hint=space_hint(exc, near)
        ) from None


def write_private(path: Path, text: str | bytes) -> None:
    data = text.encode("utf-8") if isinstance(text, str) else text
    atomic_write(path, data, 0o600)


@contextlib.contextmanager
def exclusive_lock(path: Path, timeout: float = 30.0) -> Iterator[None]:
    """An exclusive advisory lock on `path`, waited for up to `timeout` seconds.

    Hand-written instead of the filelock package: filelock 3.2x/4.x imports asyncio and costs
    40-140 ms, more than all the rest of `agentcfg switch`.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                _lock(fd)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AgentcfgError(
                        f"another agentcfg has held the lock for {timeout:.0f}s",
                        where=str(path),
                        hint="Wait for it to finish and run again.",
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        with contextlib.suppress(OSError):
            _unlock(fd)
        os.close(fd)


if sys.platform == "win32":  # pragma: no cover - os.name "nt", in a form mypy knows
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
