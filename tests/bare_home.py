"""Fixtures for the writer's own tests (test_apply, test_crash): HOME as a bare Path.

Imported by those modules, where they replace conftest.py's `home` (a helper object for CLI tests).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def make_environ(tmp: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp),
        "AGENTCFG_HOME": str(tmp / "agentcfg"),
        "XDG_CONFIG_HOME": str(tmp / ".config"),
        "PATH": os.environ["PATH"],
    }


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def environ(home: Path) -> dict[str, str]:
    return make_environ(home)


def write(path: Path, data: bytes, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chmod(path, mode)
    return path
