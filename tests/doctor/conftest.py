"""Fixtures shared by the doctor tests."""

from __future__ import annotations

import pytest

from agentcfg.doctor import keys
from agentcfg.profiles import Profile


@pytest.fixture
def keyring(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The keyring as doctor sees it: profile name -> key (never the real keyring)."""
    stored: dict[str, str] = {}

    def fake(profile: Profile | None, environ: dict[str, str]) -> tuple[str | None, str]:
        if profile is None or not profile.key_env:
            return None, "none"
        if profile.name in stored:  # keystore.resolve: the keyring, then the variable
            return stored[profile.name], "keyring"
        if environ.get(profile.key_env):
            return environ[profile.key_env], f"env {profile.key_env}"
        return None, "none"

    monkeypatch.setattr(keys, "exec_key", fake)
    monkeypatch.setattr(keys, "keyring_key", lambda profile, environ: fake(profile, environ)[0])
    return stored
