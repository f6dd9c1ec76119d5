"""Keys through a real Secret Service (gnome-keyring on a private D-Bus session): the `secretservice` tier.

No mock at this level: keyring's SecretService backend talks D-Bus to gnome-keyring-daemon, and
libsecret's `secret-tool` checks the entries from outside agentcfg.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import AGENTCFG, Home
from tests.secret_service import SecretService, keyring_path

pytestmark = pytest.mark.secretservice

KEY = "sk-test-secret-service-0123456789"


def _set(home: Home, profile: str, value: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AGENTCFG, "key", "set", profile], env=home.env, input=value + "\n", capture_output=True, text=True, timeout=60
    )


def test_set_get_list_rm_through_the_secret_service(home: Home, real_keyring: SecretService):
    stored = _set(home, "taotoken", KEY)
    assert stored.returncode == 0, stored.stderr
    assert "Secret Service" in stored.stdout and "…6789" in stored.stdout and KEY not in stored.stdout
    assert real_keyring.lookup("taotoken") == KEY  # another Secret Service client sees the entry
    listed = home.json("key", "list")
    assert listed["backend_class"] == "keyring.backends.SecretService.Keyring"
    row = next(r for r in listed["profiles"] if r["profile"] == "taotoken")
    assert row["stored"] is True and row["tail"] == "…6789"
    assert home.run("key", "get", "taotoken").stdout == KEY + "\n"
    rotated = KEY.replace("0123", "9999")
    assert _set(home, "taotoken", rotated).returncode == 0
    assert real_keyring.lookup("taotoken") == rotated  # replaced, not a second entry
    assert home.run("key", "rm", "taotoken").stdout.startswith("Removed the key for taotoken")
    assert real_keyring.lookup("taotoken") is None
    assert "no key stored" in home.run("key", "get", "taotoken", check=4).stderr


def test_the_keyring_file_on_disk_does_not_hold_the_key_in_plaintext(home: Home, real_keyring: SecretService):
    assert _set(home, "taotoken", KEY).returncode == 0
    files = [p for p in keyring_path(real_keyring).rglob("*") if p.is_file()]
    assert files, "gnome-keyring keeps its collections under ~/.local/share/keyrings"
    for path in files:
        assert KEY.encode() not in path.read_bytes()


def test_a_locked_keyring_is_named_and_unlocking_it_helps(home: Home, real_keyring: SecretService):
    assert _set(home, "taotoken", KEY).returncode == 0
    real_keyring.lock()
    try:
        failed = home.run("key", "get", "taotoken", check=2)
        assert failed.stdout == ""
        assert "Secret Service is locked" in failed.stderr and "no unlock prompt can be shown" in failed.stderr
        assert "gnome-keyring-daemon --replace --unlock" in failed.stderr
        assert "Traceback" not in failed.stderr
        exported = home.run("exec", "taotoken", "--", "sh", "-c", 'printf %s "$TAOTOKEN_API_KEY"',
                            TAOTOKEN_API_KEY="sk-exported-value")  # fmt: skip
        assert exported.stdout == "sk-exported-value" and "TAOTOKEN_API_KEY" in exported.stderr
    finally:
        real_keyring.unlock()
    assert home.run("key", "get", "taotoken").stdout == KEY + "\n"


def test_switch_and_exec_hand_the_agents_the_key_from_the_secret_service(home: Home, real_keyring: SecretService):
    home.run("profile", "add", "gw", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
             "--anthropic-base-url", "http://127.0.0.1:9", "--key-env", "GW_API_KEY")  # fmt: skip
    assert _set(home, "gw", KEY).returncode == 0
    home.run("switch", "gw", "--all")
    helper = json.loads(home.read(".claude/settings.json"))["apiKeyHelper"]
    fetched = subprocess.run(["sh", "-c", helper], env=home.env, capture_output=True, text=True, timeout=60)
    assert fetched.stdout == KEY + "\n", fetched.stderr  # what Claude Code runs
    child = home.run("exec", "gw", "--", "sh", "-c", 'printf %s "$GW_API_KEY"')
    assert child.stdout == KEY
    for path in home.root.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_the_hosts_a_key_is_bound_to_live_beside_it_in_the_secret_service(home: Home, real_keyring: SecretService):
    home.write(
        ".config/agentcfg/profiles/work.toml",
        'base_url = "http://127.0.0.1:8000/v1"\nmodel = "m"\nkey_env = "WORK_KEY"\n',
    )
    assert _set(home, "work", KEY).returncode == 0
    assert json.loads(real_keyring.lookup("work", "agentcfg-origins") or "null") == ["http://loopback:8000"]
    home.write(
        ".config/agentcfg/profiles/work.toml",
        'base_url = "http://127.0.0.1:9000/v1"\nmodel = "m"\nkey_env = "WORK_KEY"\n',
    )
    refused = home.run("key", "get", "work", check=2)
    assert refused.stdout == "" and "agentcfg key bind work" in refused.stderr
    assert home.run("key", "bind", "work").stdout.endswith("http://loopback:8000 -> http://loopback:9000\n")
    assert json.loads(real_keyring.lookup("work", "agentcfg-origins") or "null") == ["http://loopback:9000"]
    assert home.run("key", "get", "work").stdout == KEY + "\n"
    assert "Removed the key for work" in home.run("profile", "rm", "work").stdout
    assert real_keyring.lookup("work") is None and real_keyring.lookup("work", "agentcfg-origins") is None


# After `key get`: whether keyring scanned for a backend (its scan imports every backend it knows, the macOS
# one among them, on Linux too) and what the state dir remembers.
_PROBE = r"""
import json, sys
import secretstorage
connections = []
real = secretstorage.dbus_init
secretstorage.dbus_init = lambda *a, **k: connections.append(1) or real(*a, **k)
from agentcfg import cli
try:
    cli.main(["key", "get", "taotoken"])
except SystemExit as exc:
    assert not exc.code, exc.code
seen = {"scanned": "keyring.backends.macOS" in sys.modules, "connections": len(connections)}
print(json.dumps(seen), file=sys.stderr)
"""


def _key_get_probe(home: Home) -> tuple[str, bool]:
    """`key get taotoken`'s output, and whether keyring scanned for a backend. Without a scan, the key and its
    origins come over one D-Bus connection (keyring's own get_password opens one per entry)."""
    import sys

    done = subprocess.run([sys.executable, "-c", _PROBE], env=home.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stderr.splitlines()[-1])
    assert seen["scanned"] or seen["connections"] == 1, seen
    return done.stdout, seen["scanned"]


def test_the_secret_service_is_remembered_and_not_looked_for_again(home: Home, real_keyring: SecretService):
    assert _set(home, "taotoken", KEY).returncode == 0  # makes the state dir (after keyring chose)
    assert _key_get_probe(home) == (KEY + "\n", True)  # keyring chooses, and the choice is kept
    record = home.path(".config/agentcfg/state/keyring-backend")
    assert json.loads(record.read_text())["backend"] == "keyring.backends.SecretService.Keyring"
    assert KEY not in record.read_text()
    assert _key_get_probe(home) == (KEY + "\n", False)
    # A remembered backend that no longer works (here: KWallet, which this bus has not): keyring chooses again.
    planted = json.loads(record.read_text()) | {"backend": "keyring.backends.kwallet.DBusKeyring"}
    record.write_text(json.dumps(planted))
    assert _key_get_probe(home) == (KEY + "\n", True)
    assert json.loads(record.read_text())["backend"] == "keyring.backends.SecretService.Keyring"
    # Another session bus: what the choice depended on changed, so keyring chooses again.
    home.env["DBUS_SESSION_BUS_ADDRESS"] += ",guid=0"  # the same bus, but not the same words
    assert _key_get_probe(home) == (KEY + "\n", True)
    assert _key_get_probe(home) == (KEY + "\n", False)
