"""What a path looked like, taken cheaply and compared exactly: the evidence agentcfg.replay answers from.

A fingerprint is plain data (JSON lists). Of a path that was stat'ed: its identity (device, inode, mode, links,
owner, size, mtime_ns, ctime_ns; of a directory: device, inode, mode, owner). Of a file that was read: that
identity and a digest of its bytes, because a timestamp can be coarser than the time between two writes of the
same size, and a clock can be set back. Of a directory that was listed: a digest of its entries (names and
kinds). An error is a fingerprint too (absent, not a directory, refused): a file that appears is a change.
"""

from __future__ import annotations

import os
import stat

try:  # hashlib would load OpenSSL first: a few milliseconds on a path meant to take almost none
    from _blake2 import blake2b
except ImportError:  # pragma: no cover  # a Python built without it
    from hashlib import blake2b

Fingerprint = list[object]

# The originals: agentcfg.replay watches a recorded run by wrapping os.stat and friends, and a fingerprint
# taken from inside that watch must not be watched again.
_stat, _lstat, _open, _read, _close, _fstat = os.stat, os.lstat, os.open, os.read, os.close, os.fstat
_CHUNK = 1 << 20


def identity(st: os.stat_result) -> Fingerprint:
    """A directory's kind, identity, mode and owner only: its times and size change with every file made in it
    (a shell's history in HOME), and what a stat of a directory tells (it is one, it is private) is kept. What is
    in it counts where it was listed ("list")."""
    if stat.S_ISDIR(st.st_mode):
        return ["d", st.st_dev, st.st_ino, st.st_mode, st.st_uid]
    return ["s", st.st_dev, st.st_ino, st.st_mode, st.st_nlink, st.st_uid, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def take(how: str, path: str) -> Fingerprint:
    """The fingerprint of `path` as `how` ("stat", "lstat", "read" or "list") would see it now."""
    try:
        if how == "stat":
            return identity(_stat(path))
        if how == "lstat":
            return identity(_lstat(path))
        if how == "read":
            return _read_print(path)
        if how == "list":
            return _list_print(path)
    except OSError as exc:
        return ["e", exc.errno or 0]
    raise ValueError(f"not a way to look at a path: {how!r}")


def _read_print(path: str) -> Fingerprint:
    """A regular file's identity and content digest, both from one open (a FIFO or device: its identity only)."""
    fd = _open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = _fstat(fd)
        found = identity(st)
        if not stat.S_ISREG(st.st_mode):
            return found
        digest = blake2b(digest_size=16)
        while chunk := _read(fd, _CHUNK):
            digest.update(chunk)
        return [*found, digest.hexdigest()]
    finally:
        _close(fd)


def _list_print(path: str) -> Fingerprint:
    digest = blake2b(digest_size=16)
    with os.scandir(path) as entries:
        listed = sorted((e.name, e.is_dir(follow_symlinks=False), e.is_symlink()) for e in entries)
    for name, is_dir, is_link in listed:
        digest.update(f"{name}\0{int(is_dir)}{int(is_link)}\0".encode("utf-8", "surrogateescape"))
    return ["l", digest.hexdigest()]


def digest(*parts: str, salt: bytes = b"") -> str:
    """A digest of strings (keyed by `salt`: of the environment, whose values may hold keys, only a salted
    digest is kept, so that no short key can be found by trying candidates)."""
    hashed = blake2b(digest_size=16, key=salt)
    for part in parts:
        hashed.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return hashed.hexdigest()
