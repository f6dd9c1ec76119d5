"""keyring backends for tests, chosen with PYTHON_KEYRING_BACKEND=tests.fake_keyring.<Class>.

`FileKeyring` keeps entries in the JSON file named by AGENTCFG_TEST_KEYRING (outside the test HOME),
so separate `agentcfg` processes share them; `MemoryKeyring` keeps them in a dict (in-process tests). The
others fail the way real backends do.

None of them is viable: keyring's own scan, which finds every KeyringBackend subclass imported into the
process, must never pick one for an in-process test that did not ask for it (it did pick
InterruptedKeyring once, and a switch exited 130). Naming a class in PYTHON_KEYRING_BACKEND, or
keyring.set_keyring, still chooses it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import KeyringError, KeyringLocked, PasswordDeleteError


class _TestBackend(KeyringBackend):
    priority = 1  # type: ignore[assignment]
    viable = False  # type: ignore[assignment]


class MemoryKeyring(_TestBackend):
    """Entries in a dict; `calls` records what was asked."""

    def __init__(self, entries: dict[tuple[str, str], str] | None = None) -> None:
        super().__init__()
        self.entries = dict(entries or {})
        self.calls: list[str] = []

    def get_password(self, service: str, username: str) -> str | None:
        self.calls.append("get")
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.calls.append("set")
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.calls.append("delete")
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError("No such password!")


class FileKeyring(_TestBackend):
    @property
    def _path(self) -> Path:
        return Path(os.environ["AGENTCFG_TEST_KEYRING"])

    def _load(self) -> dict[str, str]:
        try:
            return json.loads(self._path.read_text())
        except FileNotFoundError:
            return {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data[f"{service}/{username}"] = password
        self._save(data)

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        if data.pop(f"{service}/{username}", None) is None:
            raise PasswordDeleteError("No such password!")
        self._save(data)

    def _save(self, data: dict[str, str]) -> None:
        """Replaced whole, as a real keyring changes an item: a reader meanwhile (another agentcfg, a key helper)
        sees the old store or the new one, never an empty file."""
        partial = self._path.with_name(f".{self._path.name}.{os.getpid()}")
        partial.write_text(json.dumps(data))
        os.replace(partial, self._path)


class LockedKeyring(_TestBackend):
    """The Secret Service's answer when the collection stays locked."""

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("Failed to unlock the collection!")

    set_password = delete_password = get_password  # type: ignore[assignment]


class KeychainDeniedKeyring(_TestBackend):
    """macOS Keychain's answer when the user clicks Deny (errSecUserCanceled)."""

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringError("Can't get password from keychain: (-128, 'Unknown Error')")

    set_password = delete_password = get_password  # type: ignore[assignment]


class LowPriorityKeyring(FileKeyring):
    """Like keyrings.alt's PlaintextKeyring: keyring does not recommend it (priority < 1)."""

    priority = 0.5  # type: ignore[assignment]


class GoneKeyring(_TestBackend):
    """A backend that worked when it was chosen and no longer does (its daemon gone, its library removed)."""

    def get_password(self, service: str, username: str) -> str | None:
        raise RuntimeError("the backend's service is gone")

    set_password = delete_password = get_password  # type: ignore[assignment]


class InterruptedKeyring(_TestBackend):
    """A Ctrl-C while the keyring is asked (an unlock prompt left waiting)."""

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyboardInterrupt

    set_password = delete_password = get_password  # type: ignore[assignment]
