"""agentcfg.env: agentcfg's own directories. On Linux they are computed without platformdirs (its import costs
a quarter of `agentcfg status`), and must be what platformdirs would say."""

from __future__ import annotations

import sys
from pathlib import Path

import platformdirs
import pytest

from agentcfg import env

pytestmark = pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="platformdirs itself is used there")

CASES = [
    {"HOME": "/home/u"},
    {"HOME": "/home/u/"},
    {"HOME": "/"},
    {"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg", "XDG_STATE_HOME": "/st"},
    {"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg/", "XDG_STATE_HOME": "/st/"},
    {"HOME": "/home/u", "XDG_CONFIG_HOME": "", "XDG_STATE_HOME": ""},
    {"HOME": "/home/u", "XDG_CONFIG_HOME": "relative/cfg", "XDG_STATE_HOME": "./st"},  # not absolute: ignored
    {"HOME": "/home/u", "XDG_CONFIG_HOME": " /cfg", "XDG_STATE_HOME": "~/st"},
    {"HOME": "relative-home"},  # as expanduser: the password database's home
    {},
]


@pytest.mark.parametrize("environ", CASES, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()) or "empty")
def test_the_directories_are_platformdirs_own(environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "AGENTCFG_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert env.config_dir(environ) == Path(platformdirs.user_config_dir("agentcfg", appauthor=False))
    assert env.state_dir(environ) == Path(platformdirs.user_state_dir("agentcfg", appauthor=False))


def test_agentcfg_home_comes_first() -> None:
    environ = {"HOME": "/home/u", "AGENTCFG_HOME": "/a", "XDG_CONFIG_HOME": "/cfg"}
    assert (env.config_dir(environ), env.state_dir(environ)) == (Path("/a"), Path("/a/state"))


def test_the_environment_given_is_the_one_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not the process's: a command's environment is passed in (a test's temporary HOME, never the real one)."""
    monkeypatch.setenv("HOME", "/somewhere/else")
    monkeypatch.setenv("XDG_STATE_HOME", "/elsewhere")
    assert env.state_dir({"HOME": "/home/u"}) == Path("/home/u/.local/state/agentcfg")
