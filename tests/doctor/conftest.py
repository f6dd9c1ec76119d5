"""Fixtures shared by the doctor tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentcfg.doctor import keys
from agentcfg.doctor.catalogue import CATALOGUE
from agentcfg.doctor.model import Finding
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


@pytest.fixture(autouse=True)
def catalogued_findings(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every Finding a doctor test makes has an id from agentcfg/doctor/catalogue.py: a producer that makes up
    an id fails the test that reaches it. (test_render renders a made-up long id on purpose.)"""
    if request.module.__name__.endswith("test_render"):
        yield
        return
    made: list[str] = []
    init = Finding.__init__

    def record(self: Finding, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.append(self.id)

    monkeypatch.setattr(Finding, "__init__", record)
    yield
    unknown = sorted(set(made) - CATALOGUE.keys())
    assert not unknown, f"finding ids not in agentcfg/doctor/catalogue.py: {unknown}"
