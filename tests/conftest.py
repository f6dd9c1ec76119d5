"""Shared test helpers: a throw-away HOME for every run of agentcfg, never the real one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.secret_service import real_keyring, secret_service  # noqa: F401 - fixtures for the secretservice tier

pytest_plugins = ["tests.compat"]  # the compatibility table the slow tiers write

REPO = Path(__file__).resolve().parents[1]
SHARED_FIXTURES = REPO.parent / "shared" / "fixtures"
AGENTCFG = shutil.which("agentcfg", path=str(Path(sys.executable).parent)) or "agentcfg"


@dataclass
class Home:
    """A temporary HOME with agentcfg's and the agents' variables pointing into it."""

    root: Path
    env: dict[str, str]

    def path(self, relative: str) -> Path:
        return self.root / relative

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return path

    def read(self, relative: str) -> str:
        return (self.root / relative).read_bytes().decode("utf-8")

    def run(
        self,
        *args: str,
        check: int | None = 0,
        stdin_text: str | None = None,
        cwd: Path | None = None,
        timeout: float = 60,
        **extra_env: str,
    ) -> subprocess.CompletedProcess[str]:
        """Run the installed `agentcfg` console script in this HOME (stdin: `stdin_text` or nothing), in `cwd`
        (default: this test process's directory), for at most `timeout` seconds."""
        result = subprocess.run(
            [AGENTCFG, *args],
            env={**self.env, **extra_env},
            cwd=cwd,
            capture_output=True,
            text=True,
            input=stdin_text,
            stdin=None if stdin_text is not None else subprocess.DEVNULL,
            timeout=timeout,
        )
        if check is not None:
            assert result.returncode == check, (result.returncode, result.stdout, result.stderr)
        return result

    def run_in_tty(self, *args: str, **extra_env: str) -> tuple[int, str]:
        """Run agentcfg with stdout and stderr on a pseudo-terminal; returns (status, everything printed)."""
        import pty

        master, slave = pty.openpty()
        try:
            process = subprocess.Popen(
                [AGENTCFG, *args],
                env={**self.env, **extra_env},
                stdin=subprocess.DEVNULL,
                stdout=slave,
                stderr=slave,
            )
        finally:
            os.close(slave)
        chunks = []
        try:
            while True:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
        finally:
            os.close(master)
        return process.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")

    def json(self, *args: str, **extra_env: str):
        return json.loads(self.run(*args, "--json", **extra_env).stdout)

    def snapshot(self) -> dict[str, bytes]:
        """Every file under HOME except agentcfg's own state, by relative path."""
        return {
            str(p.relative_to(self.root)): p.read_bytes()
            for p in sorted(self.root.rglob("*"))
            if p.is_file() and not p.is_symlink() and "agentcfg" not in p.relative_to(self.root).parts
        }


def make_home(directory: Path) -> Home:
    """A HOME under `directory`, with an empty bin dir first on PATH: no agent "installed" unless a
    test puts one there."""
    root = directory / "home"
    root.mkdir()
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    env = {
        "HOME": str(root),
        "AGENTCFG_HOME": str(root / ".config" / "agentcfg"),
        "XDG_CONFIG_HOME": str(root / ".config"),
        "XDG_STATE_HOME": str(root / ".local" / "state"),
        "XDG_DATA_HOME": str(root / ".local" / "share"),
        "XDG_RUNTIME_DIR": str(directory / "run"),  # agentcfg exec's settings files: outside HOME, as on a desktop
        "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    return Home(root, env)


def keyring_env(path: Path) -> dict[str, str]:
    """The variables that make agentcfg keep keys in tests/fake_keyring.py's FileKeyring at `path`."""
    return {
        "PYTHON_KEYRING_BACKEND": "tests.fake_keyring.FileKeyring",
        "AGENTCFG_TEST_KEYRING": str(path),
        "PYTHONPATH": str(REPO),
    }


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


@pytest.fixture
def environ(home: Home) -> dict[str, str]:
    return home.env


@pytest.fixture(autouse=True)
def known_secrets() -> Iterator[set[str]]:
    """agentcfg.redact keeps the keys it has seen in a process-wide set: each test starts with none."""
    from agentcfg import redact

    saved = set(redact._known)
    redact._known.clear()
    yield redact._known
    redact._known.clear()
    redact._known.update(saved)


@pytest.fixture(autouse=True)
def keyring_choice() -> Iterator[None]:
    """keyring keeps the backend it chose in a process-wide global: no test leaves its choice to the next."""
    import keyring.core

    saved = keyring.core._keyring_backend
    yield
    keyring.core._keyring_backend = saved


@pytest.fixture
def keyring_file(home: Home, tmp_path: Path) -> Path:
    """`home.run` keeps keys in tests/fake_keyring.py's FileKeyring; returns its store (outside HOME)."""
    path = tmp_path / "fake-keyring.json"
    home.env.update(keyring_env(path))
    return path
