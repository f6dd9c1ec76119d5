"""The canary: a recognisable key, stored once, must never show up where the user did not ask for it.

Every command that exists runs with text and --json output; then HOME (agents' files, agentcfg's
state, backups), the keyring's own files and every captured output are searched for the key. It
may appear only in `key get`'s stdout, `env`'s stdout and the environment of `exec`'s child.
Extend COMMANDS when a command is added (bench). doctor sends the key to a dead loopback port.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from tests.conftest import AGENTCFG, Home
from tests.secret_service import keyring_path

PROFILE = [
    *("profile", "add", "gw", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--key-env", "GW_API_KEY"),
    *("--anthropic-base-url", "http://127.0.0.1:9", "--context-window", "65536"),
]
COMMANDS = [
    ["switch", "gw", "--all", "--dry-run"],
    ["switch", "gw", "--all", "--dry-run", "--json"],
    ["switch", "gw", "--all"],
    ["switch", "gw", "--all", "--json"],
    ["status"],
    ["status", "--json"],
    ["profile", "show", "gw"],
    ["profile", "show", "gw", "--json"],
    ["profile", "list"],
    ["profile", "list", "--json"],
    ["key", "list"],
    ["key", "list", "--json"],
    ["rollback", "--dry-run"],
    ["rollback", "--json"],
    ["switch", "local", "--all"],
    ["rollback"],
    ["key", "get", "nope"],  # an error path
    ["exec", "nope", "--", "true"],
    ["doctor", "--timeout", "3"],
    ["doctor", "--json", "--timeout", "3"],
    ["doctor", "gw", "--timeout", "3"],
    ["doctor", "gw", "--json", "--timeout", "3"],
    ["--help"],
]


@pytest.fixture(params=["file", pytest.param("secretservice", marks=pytest.mark.secretservice)])
def backend(request: pytest.FixtureRequest, home: Home) -> list[Path]:
    """Keys in the fake file backend or the real Secret Service; returns the keyring's own files."""
    if request.param == "file":
        return [request.getfixturevalue("keyring_file")]
    service = request.getfixturevalue("real_keyring")
    return [keyring_path(service)]


def _run(home: Home, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([AGENTCFG, *args], env=home.env, input=stdin, capture_output=True, text=True, timeout=60)


def test_the_key_appears_only_where_asked_for(home: Home, backend: list[Path], tmp_path: Path):
    canary = f"sk-canary-{uuid.uuid4().hex}"
    bin_dir = Path(home.env["PATH"].split(":")[0])
    codex = bin_dir / "codex"  # a Codex new enough to fetch the key with a command
    codex.write_text("#!/bin/sh\necho 'codex-cli 0.171.0'\n")
    codex.chmod(0o755)
    outputs = []
    for args in [PROFILE, ["key", "set", "gw"]]:
        result = _run(home, *args, stdin=canary + "\n")
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout + result.stderr)
    for args in COMMANDS:
        result = _run(home, *args)
        assert result.returncode in (0, 1, 2), (args, result.stderr)  # doctor: 1 = something failed
        assert "Traceback" not in result.stderr
        outputs.append(result.stdout + result.stderr)

    # Where it was asked for, it is there.
    got = _run(home, "key", "get", "gw")
    assert got.stdout == canary + "\n" and canary not in got.stderr
    shown = _run(home, "env", "gw")
    assert f"GW_API_KEY={canary}" in shown.stdout and canary not in shown.stderr
    child_out = tmp_path / "child-saw"
    ran = _run(home, "exec", "gw", "--", "sh", "-c", f'printf %s "$GW_API_KEY" > {child_out}')
    assert ran.returncode == 0 and child_out.read_text() == canary and canary not in ran.stdout + ran.stderr
    child_out.unlink()
    _run(home, "switch", "gw", "--all")  # leave the files pointing at the keyed profile for the scan

    # Nowhere else: not in any output, any file under HOME (agentcfg's state and backups included),
    # nor in the keyring's own files in plaintext.
    for output in outputs:
        assert canary not in output
    scanned = 0
    for root in [home.root, *backend]:
        paths = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
        for path in paths:
            if path == backend[0] and path.name == "fake-keyring.json":
                continue  # the fake backend is a plaintext test double of the OS keyring
            assert canary.encode() not in path.read_bytes(), path
            scanned += 1
    assert scanned >= 8  # the four agents' files, profiles, journal entries and backups were there to scan
