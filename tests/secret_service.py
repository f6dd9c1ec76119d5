"""A real Secret Service for the `secretservice` tier: a private D-Bus session bus with
gnome-keyring-daemon on it, unlocked, in a throw-away HOME.

The bus has no service directories, so nothing is activated behind the tests' back and no other
keyring (nor the machine's own session) is ever reached.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

PASSWORD = "agentcfg-test-keyring-password"
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={run}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""
NEEDED = ("dbus-daemon", "dbus-send", "gnome-keyring-daemon", "secret-tool")


class SecretService:
    def __init__(self, env: dict[str, str], daemon: subprocess.Popen[bytes]) -> None:
        self.env = env  # HOME, XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS of the private session
        self.daemon = daemon

    def lookup(self, profile: str, service: str = "agentcfg") -> str | None:
        """The entry as another Secret Service client (libsecret's secret-tool) sees it."""
        result = subprocess.run(
            ["secret-tool", "lookup", "service", service, "username", profile],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return result.stdout if result.returncode == 0 else None

    def lock(self) -> None:
        code = "import secretstorage as s; b = s.dbus_init(); s.get_default_collection(b).lock()"
        subprocess.run([_python(), "-c", code], env=self.env, check=True, timeout=30)

    def unlock(self) -> None:
        """What a user does on a headless box: hand the password to a replacement daemon."""
        subprocess.run(
            ["gnome-keyring-daemon", "--replace", "--unlock", "--components=secrets", "--daemonize"],
            input=PASSWORD.encode(),
            env=self.env,
            check=True,
            capture_output=True,
            timeout=30,
        )
        _wait_for_owner(self.env)


def _python() -> str:
    import sys

    return sys.executable


def _wait_for_owner(env: dict[str, str], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = subprocess.run(
            ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
             "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"],
            env=env, capture_output=True, text=True, timeout=10,
        )  # fmt: skip
        if reply.returncode == 0 and reply.stdout.split()[-1:] == ["true"]:
            return
        time.sleep(0.05)
    raise RuntimeError("gnome-keyring-daemon did not appear on the session bus")


@pytest.fixture(scope="session")
def secret_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecretService]:
    missing = [name for name in NEEDED if not shutil.which(name)]
    if missing:
        pytest.fail(
            f"the secretservice tier needs {', '.join(missing)}: "
            "apt-get install gnome-keyring dbus libsecret-tools (`.ci/run` does)"
        )
    root = tmp_path_factory.mktemp("secret-service")
    home, run = root / "home", root / "run"
    home.mkdir()
    run.mkdir(mode=0o700)
    (root / "bus.conf").write_text(BUS_CONFIG.format(run=run))
    env = {
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(run),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
    }
    bus = subprocess.Popen(
        ["dbus-daemon", f"--config-file={root / 'bus.conf'}", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    assert bus.stdout is not None
    env["DBUS_SESSION_BUS_ADDRESS"] = bus.stdout.readline().strip()
    daemon = subprocess.Popen(
        ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert daemon.stdin is not None
    daemon.stdin.write(PASSWORD.encode())
    daemon.stdin.close()
    try:
        _wait_for_owner(env)
        yield SecretService(env, daemon)
    finally:
        bus.terminate()  # every gnome-keyring-daemon on it exits with the bus
        bus.wait(10)
        daemon.terminate()
        daemon.wait(10)


@pytest.fixture
def real_keyring(secret_service: SecretService, home) -> Iterator[SecretService]:
    """`home.run` talks to the private Secret Service; its entries are gone again afterwards."""
    home.env.update({k: secret_service.env[k] for k in ("DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR")})
    yield secret_service
    code = (
        "import secretstorage as s; b = s.dbus_init(); c = s.get_default_collection(b)\n"
        "c.is_locked() and c.unlock()\n"
        "[i.delete() for s in ('agentcfg', 'agentcfg-origins') for i in c.search_items({'service': s})]"
    )
    subprocess.run([_python(), "-c", code], env=secret_service.env, check=False, timeout=30)


def keyring_path(service: SecretService) -> Path:
    return Path(service.env["HOME"]) / ".local" / "share" / "keyrings"
