"""`key set` on a terminal: a hidden prompt (the key is never echoed), as a user at a TTY sees it."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time

from tests.conftest import AGENTCFG, Home


def _read_until(fd: int, marker: bytes, timeout: float = 30.0) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_key_set_prompts_without_echo_on_a_terminal(home: Home, keyring_file):
    key = "sk-typed-at-the-prompt-0123456789"
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [AGENTCFG, "key", "set", "taotoken"], stdin=terminal, stdout=terminal, stderr=terminal, env=home.env
    )
    os.close(terminal)
    try:
        prompt = _read_until(controller, b": ")
        assert b"Key for taotoken (input hidden): " in prompt
        os.write(controller, key.encode() + b"\r")
        rest = _read_until(controller, b"Stored")
        rest += _read_until(controller, b").")
        assert process.wait(30) == 0
    finally:
        os.close(controller)
    assert key.encode() not in prompt + rest  # not echoed, not printed
    assert b"Stored the key for taotoken" in rest and b"\xe2\x80\xa66789" in rest  # the masked tail "…6789"
    assert home.run("key", "get", "taotoken").stdout == key + "\n"


def test_key_set_checks_the_keyring_before_it_prompts(home: Home):
    """Without a usable keyring the user is not asked to type a key that could not be stored."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [AGENTCFG, "key", "set", "taotoken"],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env={**home.env, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"},
    )
    os.close(terminal)
    try:
        seen = _read_until(controller, b"Ways out")
        status = process.wait(30)  # it ends by itself: it is not waiting for a key
        seen += _read_until(controller, b"\x00", timeout=1)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(controller)
    assert status == 2, seen
    assert b"Key for" not in seen and b"no usable keyring" in seen


def test_key_set_on_a_terminal_refuses_a_placeholder_typed_at_the_prompt(home: Home, keyring_file):
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [AGENTCFG, "key", "set", "taotoken"], stdin=terminal, stdout=terminal, stderr=terminal, env=home.env
    )
    os.close(terminal)
    try:
        assert b"Key for taotoken (input hidden): " in _read_until(controller, b": ")
        os.write(controller, b"your-api-key\r")
        rest = _read_until(controller, b"hidden).")
        assert process.wait(30) == 2
    finally:
        if process.poll() is None:
            process.kill()
        os.close(controller)
    assert b"placeholder" in rest and not keyring_file.exists()
