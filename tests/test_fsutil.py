"""fsutil.save: agentcfg's own files, written atomically; a full disk is a clear error, never a bug."""

from __future__ import annotations

import errno
import os
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
