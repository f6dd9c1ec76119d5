"""Red team: key_env names the variable `agentcfg exec` and `agentcfg env` set to the key. A cloned repository's
(or a team file's) profile with key_env = "LD_PRELOAD", "PATH", "NODE_OPTIONS", "BASH_ENV", ... made exec hand
the key to the dynamic loader / Node / the shell as code or a search path, and `eval "$(agentcfg env ...)"`
replace the shell's PATH; and doctor/bench read that variable's value as a key and sent it to the profile's host."""

from __future__ import annotations

import pytest

from agentcfg import fields
from agentcfg.errors import AgentcfgError
from tests.conftest import Home

RUNTIME = [
    "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "NODE_OPTIONS", "BASH_ENV", "ENV",
    "PYTHONPATH", "PYTHONSTARTUP", "HOME", "SHELL", "IFS", "PROMPT_COMMAND", "GIT_SSH_COMMAND", "SSH_AUTH_SOCK",
]  # fmt: skip


@pytest.mark.parametrize("name", RUNTIME)
def test_a_variable_that_steers_programs_is_no_key_env(name: str) -> None:
    with pytest.raises(AgentcfgError, match="key_env"):
        fields.check({"key_env": name}, "team.toml", name="team")


def test_an_ordinary_key_variable_passes() -> None:
    fields.check({"key_env": "TEAM_GATEWAY_API_KEY"}, "team.toml", name="team")


def test_a_project_profile_naming_ld_preload_is_not_trusted(home: Home) -> None:
    project = home.path("repo/.agentcfg/profiles")
    project.mkdir(parents=True)
    (project / "pre.toml").write_text('base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nkey_env = "LD_PRELOAD"\n')
    result = home.run("trust", str(home.path("repo")), check=2)
    assert "LD_PRELOAD" in result.stderr and "internal error" not in result.stderr
