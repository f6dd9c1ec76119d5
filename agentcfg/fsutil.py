"""The small file-system primitives the one writer is built from: atomic replace, private state, a lock."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from agentcfg.errors import AgentcfgError

TMP_SUFFIX = ".agentcfg-tmp"


def read_text(path: Path, shown: str) -> str | None:
    """A file's text exactly as stored (CRLF kept), or None when it does not exist."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise AgentcfgError("is a directory, not a file", where=shown, hint="Move it away and run again.") from None
    except OSError as exc:
        raise AgentcfgError(
            f"cannot read it: {exc.strerror}", where=shown, hint="Check its permissions (ls -l) and run again."
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentcfgError(
            f"is not UTF-8 text (byte {exc.start})",
            where=shown,
            hint="agentcfg did not change it; save it as UTF-8 and run again.",
        ) from None


def fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not possible on every platform / file system
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(target: Path, data: bytes, mode: int, owner: tuple[int, int] | None = None) -> None:
    """Write `data` to a temp file beside `target`, fsync, rename over it: readers see old or new."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}{TMP_SUFFIX}")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if owner and hasattr(os, "chown"):
            with contextlib.suppress(OSError):
                os.chown(tmp, *owner)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(target.parent)


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


if os.name == "nt":  # pragma: no cover
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
