"""agentcfg.keystore: the backend keyring chose, remembered so that no later run scans for it again,
and chosen again (as keyring would) when what it depended on changed or it stops working.

keyring's scan is replaced by a list of backends the test names (keyring.backend.get_all_keyring), and a
scan that must not happen raises.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import keyring
import keyring.backend
import keyring.core
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import chainer

from agentcfg import keyring_memo, keystore
from agentcfg.keystore import KeyringProblem, KeyStore
from agentcfg.profiles import Profile
from tests import fake_keyring

GW = Profile(name="gw", base_url="https://gw.example/v1", model="m", key_env="GW_API_KEY")
KEY = "sk-memo-0123456789abcdef"


@pytest.fixture
def environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """No backend named by the user, none chosen in this process yet, and a state dir (as after `key set`)."""
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))  # where keyring looks for keyringrc.cfg
    monkeypatch.setenv("AGENTCFG_TEST_KEYRING", str(tmp_path / "keyring.json"))
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    # The tests' backends stand for the OS keyrings here (only keyring's own are remembered otherwise).
    monkeypatch.setattr(keyring_memo, "REMEMBERED_MODULES", (*keyring_memo.REMEMBERED_MODULES, "tests.fake_keyring."))
    (tmp_path / "agentcfg" / "state").mkdir(parents=True)
    (tmp_path / "keyring.json").write_text(json.dumps({f"agentcfg/{GW.name}": KEY}))
    return {"HOME": str(tmp_path), "AGENTCFG_HOME": str(tmp_path / "agentcfg")}


def scan_finds(monkeypatch: pytest.MonkeyPatch, *backends: KeyringBackend) -> list[int]:
    """keyring's scan finds `backends`; the list returned counts the scans."""
    scans: list[int] = []

    def get_all_keyring() -> list[KeyringBackend]:
        scans.append(1)
        return list(backends)

    monkeypatch.setattr(keyring.backend, "get_all_keyring", get_all_keyring)
    return scans


def new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a new `agentcfg` process starts with: keyring has chosen nothing."""
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)


def record(environ: dict[str, str]) -> dict:
    return json.loads((Path(environ["AGENTCFG_HOME"]) / "state" / "keyring-backend").read_text())


def test_the_choice_is_remembered_and_the_next_run_does_not_scan(environ, monkeypatch) -> None:
    scans = scan_finds(monkeypatch, fake_keyring.FileKeyring())
    assert KeyStore(environ).get("gw") == KEY
    assert scans == [1]
    assert record(environ)["backend"] == "tests.fake_keyring.FileKeyring"
    new_process(monkeypatch)
    assert KeyStore(environ).get("gw") == KEY
    assert scans == [1]


def test_a_remembered_backend_that_fails_is_forgotten_and_keyring_chooses_again(environ, monkeypatch) -> None:
    scans = scan_finds(monkeypatch, fake_keyring.GoneKeyring())
    with pytest.raises(KeyringProblem):
        KeyStore(environ).get("gw")
    assert record(environ)["backend"] == "tests.fake_keyring.GoneKeyring"
    new_process(monkeypatch)
    scans = scan_finds(monkeypatch, fake_keyring.FileKeyring())  # its daemon replaced by another keyring
    assert KeyStore(environ).get("gw") == KEY
    assert scans == [1]
    assert record(environ)["backend"] == "tests.fake_keyring.FileKeyring"


def test_a_remembered_backend_that_is_locked_is_not_asked_twice(environ, monkeypatch) -> None:
    """Locked (the user dismissed the unlock prompt): choosing again would prompt again for nothing."""
    scan_finds(monkeypatch, fake_keyring.LockedKeyring())
    with pytest.raises(KeyringProblem) as first:
        KeyStore(environ).get("gw")
    new_process(monkeypatch)
    scans = scan_finds(monkeypatch, fake_keyring.FileKeyring())
    with pytest.raises(KeyringProblem) as second:
        KeyStore(environ).get("gw")
    assert first.value.kind == second.value.kind == "locked"
    assert scans == []


@pytest.mark.parametrize("change", ["installed", "session", "named", "keyringrc"])
def test_a_change_keyring_would_see_means_a_new_choice(environ, monkeypatch, tmp_path, change) -> None:
    site = tmp_path / "lib" / "site-packages"
    site.mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus")
    scans = scan_finds(monkeypatch, fake_keyring.FileKeyring())
    KeyStore(environ).get("gw")
    new_process(monkeypatch)
    if change == "installed":  # a package installed (a new backend may come with it)
        (site / "keyrings.alt-5.0.dist-info").mkdir()
        import os

        os.utime(site, ns=(0, site.stat().st_mtime_ns + 1_000_000_000))
    elif change == "session":  # another login session: another bus
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/dbus-other")
    elif change == "named":  # the user names a backend: keyring loads it, nothing is scanned or remembered
        monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "tests.fake_keyring.FileKeyring")
    else:  # a keyringrc.cfg now chooses
        (tmp_path / "xdg" / "python_keyring").mkdir(parents=True)
        (tmp_path / "xdg" / "python_keyring" / "keyringrc.cfg").write_text(
            "[backend]\ndefault-keyring=tests.fake_keyring.FileKeyring\n"
        )
    assert KeyStore(environ).get("gw") == KEY
    assert scans == ([1, 1] if change in ("installed", "session") else [1])


def test_nothing_is_remembered_without_a_state_dir_or_for_a_chain(environ, monkeypatch) -> None:
    state = Path(environ["AGENTCFG_HOME"]) / "state"
    chain = chainer.ChainerBackend()
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [fake_keyring.FileKeyring(), fake_keyring.FileKeyring()])
    scan_finds(monkeypatch, chain)
    assert KeyStore(environ).get("gw") == KEY
    assert not (state / "keyring-backend").exists()
    new_process(monkeypatch)
    for entry in state.iterdir():
        entry.unlink()
    state.rmdir()
    scan_finds(monkeypatch, fake_keyring.FileKeyring())
    assert KeyStore(environ).get("gw") == KEY
    assert not (state / "keyring-backend").exists()  # the state dir is made after the choice (stored-keys)


@pytest.mark.parametrize(
    "text", ["", "{", '{"backend": 5, "basis": null}', '{"backend": "no.such.Module", "basis": {}}']
)
def test_a_broken_record_is_as_good_as_none(environ, monkeypatch, text) -> None:
    (Path(environ["AGENTCFG_HOME"]) / "state" / "keyring-backend").write_text(text)
    scans = scan_finds(monkeypatch, fake_keyring.FileKeyring())
    assert KeyStore(environ).get("gw") == KEY
    assert scans == [1]
    assert record(environ)["backend"] == "tests.fake_keyring.FileKeyring"


def test_a_backend_chosen_in_this_process_stands(environ, monkeypatch) -> None:
    """keyring.set_keyring (as a library user, or these tests, do) wins over what was remembered."""
    scan_finds(monkeypatch, fake_keyring.GoneKeyring())
    with pytest.raises(KeyringProblem):
        KeyStore(environ).get("gw")
    keyring.set_keyring(fake_keyring.FileKeyring())
    assert KeyStore(environ).get("gw") == KEY
    assert record(environ)["backend"] == "tests.fake_keyring.GoneKeyring"  # nothing remembered from it
    assert keystore.backend_name(KeyStore(environ).backend) == "tests.fake_keyring.FileKeyring"


def test_a_remembered_backend_that_denies_is_not_asked_twice(environ, monkeypatch) -> None:
    """macOS Keychain's Deny comes as a plain KeyringError (-128): choosing again would ask again."""
    asked = []
    scan_finds(monkeypatch, fake_keyring.KeychainDeniedKeyring())
    with pytest.raises(KeyringProblem):
        KeyStore(environ).get("gw")
    new_process(monkeypatch)
    scans = scan_finds(monkeypatch, fake_keyring.FileKeyring())
    monkeypatch.setattr(fake_keyring.KeychainDeniedKeyring, "get_password", lambda *a: asked.append(1) or _deny())
    with pytest.raises(KeyringProblem) as info:
        KeyStore(environ).get("gw")
    assert (info.value.kind, len(asked), scans) == ("denied", 1, [])


def _deny() -> None:
    from keyring.errors import KeyringError

    raise KeyringError("Can't get password from keychain: (-128, 'Unknown Error')")


def test_a_remembered_backend_without_the_key_makes_keyring_choose_again(environ, monkeypatch) -> None:
    """A store chosen before the OS keyring's daemon was up, and the same session since: the key is in the
    backend keyring would choose now, and `key get` finds it there (only a missing key pays the new choice)."""
    scan_finds(monkeypatch, fake_keyring.LowPriorityKeyring.__base__())  # FileKeyring, its file empty
    monkeypatch.setenv("AGENTCFG_TEST_KEYRING", str(Path(environ["HOME"]) / "empty.json"))
    assert KeyStore(environ).get("gw") is None
    new_process(monkeypatch)
    monkeypatch.setenv("AGENTCFG_TEST_KEYRING", str(Path(environ["HOME"]) / "keyring.json"))
    monkeypatch.setattr(fake_keyring.FileKeyring, "get_password", _empty_once())
    scans = scan_finds(monkeypatch, fake_keyring.FileKeyring())
    assert KeyStore(environ).get("gw") == KEY
    assert scans == [1]


def _empty_once():
    """The remembered instance answers nothing (it stands for the other store), the new choice answers."""
    calls = []
    real = fake_keyring.FileKeyring.get_password

    def get_password(self, service: str, username: str) -> str | None:
        calls.append(1)
        return None if len(calls) == 1 else real(self, service, username)

    return get_password


@pytest.mark.parametrize(
    "named",
    [
        "this.Keyring",  # any module: `import this` prints the Zen of Python
        "tests.conftest.Home",  # not a keyring backend
        "keyring.backends.null.Keyring",  # a backend _open refuses: it stores nothing
        "keyring.backends.fail.Keyring",
        "keyring.backends.chainer.ChainerBackend",
    ],
)
def test_a_planted_record_names_nothing_that_is_used(environ, monkeypatch, capsys, named) -> None:
    """What the record names is imported only from keyring's own backends, and only a backend _open would take."""
    monkeypatch.setattr(keyring_memo, "REMEMBERED_MODULES", ("keyring.backends.",))
    monkeypatch.delitem(sys.modules, "this", raising=False)
    path = Path(environ["AGENTCFG_HOME"]) / "state" / "keyring-backend"
    path.write_text(json.dumps({"backend": named, "basis": keyring_memo._backend_basis()}))
    scans = scan_finds(monkeypatch, fake_keyring.FileKeyring())
    assert KeyStore(environ).get("gw") == KEY
    assert scans == [1]
    assert "this" not in sys.modules
    assert "Beautiful is better than ugly" not in capsys.readouterr().out


def test_loaded_names_only_the_classes_of_modules_already_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    from keyring.backends import fail, null

    assert keyring_memo.loaded(*keyring_memo.NOT_A_KEYRING) == (fail.Keyring, chainer.ChainerBackend, null.Keyring)
    monkeypatch.delitem(sys.modules, "keyring.backends.null")
    assert keyring_memo.loaded(*keyring_memo.NOT_A_KEYRING) == (fail.Keyring, chainer.ChainerBackend)
    assert "keyring.backends.null" not in sys.modules  # not imported by asking
