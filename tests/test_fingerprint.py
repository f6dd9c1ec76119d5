"""agentcfg.fingerprint: every kind of change to a path changes its fingerprint, whatever its timestamps say."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcfg import fingerprint

TEXT = b'model = "DeepSeek-V4-Flash"\n'


def seeded(tmp_path: Path, data: bytes = TEXT) -> Path:
    path = tmp_path / "config.toml"
    path.write_bytes(data)
    return path


def rewrite_in_place(path: Path, data: bytes) -> None:
    """The same inode rewritten, its mtime put back to the nanosecond: a write within one timestamp tick of the
    recorded one, or after the clock was set back."""
    before = os.stat(path)
    with open(path, "r+b") as file:
        file.write(data)
        file.truncate()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns


def test_same_size_rewrite_with_the_same_mtime_changes_the_read_fingerprint(tmp_path: Path) -> None:
    path = seeded(tmp_path)
    before = fingerprint.take("read", str(path))
    rewrite_in_place(path, TEXT.replace(b"Flash", b"Flasx"))
    assert os.stat(path).st_size == len(TEXT)
    assert fingerprint.take("read", str(path)) != before


def test_when_timestamps_cannot_tell_the_bytes_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A filesystem whose timestamps are coarser than two writes, or a clock set back to the nanosecond: every
    stat field the same, only the content differs."""
    path = seeded(tmp_path)
    frozen = os.stat(path)
    monkeypatch.setattr(fingerprint, "_fstat", lambda fd: frozen)
    before = fingerprint.take("read", str(path))
    rewrite_in_place(path, TEXT.replace(b"Flash", b"Flasx"))
    assert fingerprint.take("read", str(path)) != before
    rewrite_in_place(path, TEXT)
    assert fingerprint.take("read", str(path)) == before


def test_rename_over_with_the_same_bytes_is_a_change(tmp_path: Path) -> None:
    path = seeded(tmp_path)
    before = fingerprint.take("read", str(path))
    other = tmp_path / "new"
    other.write_bytes(TEXT)
    os.utime(other, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns))
    os.replace(other, path)
    assert fingerprint.take("read", str(path)) != before
    assert fingerprint.take("stat", str(path)) != before[:-1]


def test_hard_link_touch_and_chmod_are_changes(tmp_path: Path) -> None:
    path = seeded(tmp_path)
    for change in (
        lambda: os.link(path, tmp_path / "link"),
        lambda: os.utime(path, ns=(0, 10**18)),
        lambda: os.chmod(path, 0o600 if (os.stat(path).st_mode & 0o777) != 0o600 else 0o644),
    ):
        before = fingerprint.take("read", str(path)), fingerprint.take("stat", str(path))
        change()
        after = fingerprint.take("read", str(path)), fingerprint.take("stat", str(path))
        assert after[0] != before[0] and after[1] != before[1]


def test_absent_then_present_and_listing(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    absent = fingerprint.take("read", str(missing))
    assert absent[0] == "e"
    listed = fingerprint.take("list", str(tmp_path))
    directory = fingerprint.take("stat", str(tmp_path))
    missing.write_text("{}")
    assert fingerprint.take("read", str(missing)) != absent
    assert fingerprint.take("list", str(tmp_path)) != listed
    # A directory's stat keeps what a stat of it tells (kind, identity, mode, owner): a new file is its listing's.
    assert fingerprint.take("stat", str(tmp_path)) == directory


def test_a_fifo_is_read_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert fingerprint.take("read", str(fifo))[0] == "s"


@settings(max_examples=60, deadline=None)
@given(
    original=st.binary(max_size=64),
    steps=st.lists(
        st.tuples(st.sampled_from(["in-place", "replace", "link", "touch", "same"]), st.binary(max_size=64)),
        min_size=1,
        max_size=4,
    ),
)
def test_equal_fingerprints_mean_equal_bytes_and_identity(
    tmp_path_factory: object, original: bytes, steps: list[tuple[str, bytes]]
) -> None:
    """Whatever happens to a file (rewritten in place with its mtime put back, replaced by rename, linked,
    touched), an unchanged read fingerprint means the same bytes, inode and link count."""
    directory = Path(tmp_path_factory.mktemp("fp"))  # type: ignore[attr-defined]
    path = seeded(directory, original)
    before = fingerprint.take("read", str(path))
    start = os.stat(path)
    for i, (kind, data) in enumerate(steps):
        if kind == "in-place":
            rewrite_in_place(path, data)
        elif kind == "replace":
            other = directory / f"tmp{i}"
            other.write_bytes(data)
            os.replace(other, path)
        elif kind == "link":
            os.link(path, directory / f"link{i}")
        elif kind == "touch":
            os.utime(path, ns=(start.st_atime_ns, start.st_mtime_ns + i + 1))
    now = os.stat(path)
    same = path.read_bytes() == original and (now.st_ino, now.st_nlink, now.st_mtime_ns, now.st_ctime_ns) == (
        start.st_ino,
        start.st_nlink,
        start.st_mtime_ns,
        start.st_ctime_ns,
    )
    assert (fingerprint.take("read", str(path)) == before) == same


def test_salted_digest_differs_by_salt() -> None:
    assert fingerprint.digest("KEY=sk-1", salt=b"a" * 16) != fingerprint.digest("KEY=sk-1", salt=b"b" * 16)
    assert fingerprint.digest("a", "b") != fingerprint.digest("ab")
