"""`agentcfg profile set` / `profile unset`: change fields of a profile without retyping it."""

from __future__ import annotations

import json

import pytest
import tomllib

from tests.fault_server import MODEL, FaultServer

USER_PROFILE = """\
# my gateway: keep this comment
base_url = "https://gw.example/v1"   # the EU endpoint
model = "m1"
key_env = "GW_API_KEY"
context_window = 65536
"""


def profile_file(home, name: str) -> str:
    return home.read(f".config/agentcfg/profiles/{name}.toml")


def shown(home, name: str) -> dict:
    return json.loads(home.run("profile", "show", name, "--json").stdout)


def test_set_changes_one_field_and_keeps_the_rest_and_the_comments(home):
    home.write(".config/agentcfg/profiles/gw.toml", USER_PROFILE)
    result = home.run("profile", "set", "gw", "model=m2")
    assert "model: m1 -> m2" in result.stdout
    text = profile_file(home, "gw")
    assert "# my gateway: keep this comment" in text and "# the EU endpoint" in text
    assert tomllib.loads(text) == {**tomllib.loads(USER_PROFILE), "model": "m2"}


def test_set_several_fields_at_once_with_the_add_spelling_too(home):
    home.write(".config/agentcfg/profiles/gw.toml", USER_PROFILE)
    home.run("profile", "set", "gw", "context-window=131072", "max_output_tokens=8192", "description=EU gateway")
    assert {k: shown(home, "gw")[k] for k in ("context_window", "max_output_tokens", "description")} == {
        "context_window": 131072,
        "max_output_tokens": 8192,
        "description": "EU gateway",
    }


def test_set_a_built_in_makes_a_profile_of_yours_from_its_fields(home):
    before = shown(home, "taotoken")
    result = home.run("profile", "set", "taotoken", "anthropic_base_url=https://taotoken.net/api/anthropic")
    assert "a profile of yours now, from the built-in taotoken" in result.stdout
    after = shown(home, "taotoken")
    assert after["source"].endswith("profiles/taotoken.toml")
    expected = {k: v for k, v in before.items() if k not in ("source", "key_in_environment")}
    assert {k: v for k, v in after.items() if k not in ("source", "key_in_environment")} == {
        **expected,
        "anthropic_base_url": "https://taotoken.net/api/anthropic",
    }
    home.run("profile", "rm", "taotoken")  # back to the built-in
    assert shown(home, "taotoken") == before


def test_same_values_again_change_zero_bytes(home):
    home.write(".config/agentcfg/profiles/gw.toml", USER_PROFILE)
    result = home.run("profile", "set", "gw", "model=m1", "context_window=65536")
    assert "nothing changed" in result.stdout
    assert profile_file(home, "gw") == USER_PROFILE
    assert home.json("profile", "set", "gw", "model=m1")["changed"] is False
    home.run("profile", "set", "local", "model=DeepSeek-V4-Flash")  # a built-in: no copy for no change
    assert not home.path(".config/agentcfg/profiles/local.toml").exists()


def test_unset_removes_optional_fields(home):
    home.write(".config/agentcfg/profiles/gw.toml", USER_PROFILE)
    data = home.json("profile", "unset", "gw", "context-window", "key_env")
    assert data["changes"] == {
        "key_env": {"old": "GW_API_KEY", "new": None},
        "context_window": {"old": 65536, "new": None},
    }
    assert tomllib.loads(profile_file(home, "gw")) == {"base_url": "https://gw.example/v1", "model": "m1"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("set", "gw", "colour=red"), "unknown field 'colour'"),
        (("set", "gw", "modle=x"), "did you mean model?"),
        (("set", "gw", "model"), "'model' is not FIELD=VALUE"),
        (("set", "gw", "model=a", "model=b"), "given twice"),
        (("set", "nope", "model=x"), "unknown profile 'nope'"),
        (("unset", "gw", "base_url"), "base_url cannot be unset"),
        (("unset", "gw", "model"), "model cannot be unset"),
        (("set", "gw", "context_window=255"), "from 256 to 100,000,000"),
        (("set", "gw", "max_output_tokens=15"), "from 16 to 100,000,000"),
        (("set", "gw", "context_window=lots"), "is a whole number of tokens from 256"),
        (("set", "gw", "model="), "'model'"),
        (("set", "gw", "base_url=ftp://x"), "must be an http:// or https:// URL"),
        (("set", "gw", "base_url=https://u:p@gw.example/v1"), "credentials in its URL"),
        (("set", "gw", "model=$HOME"), "template syntax"),
        (("set", "gw", "key_env=PATH"), "steers programs"),
        (("set", "gw", "anthropic_base_url=https://gw.example/v1"), "ends in /v1"),
        (("set", "gw", "description=" + "x" * 201), "at most 200"),
    ],
)
def test_bad_input_is_one_message_and_exit_2_and_nothing_written(home, args, message):
    home.write(".config/agentcfg/profiles/gw.toml", USER_PROFILE)
    result = home.run("profile", *args, check=2)
    assert message in result.stderr
    assert result.stderr.startswith("agentcfg: error:") and "Traceback" not in result.stderr
    assert "p@" not in result.stderr and "****" not in result.stderr  # no message mangled by the masking
    assert profile_file(home, "gw") == USER_PROFILE


def test_set_needs_a_change(home):
    result = home.run("profile", "set", "local", check=2)
    assert "FIELD=VALUE" in result.stderr


def test_a_project_profile_is_refused_naming_its_file(home, tmp_path):
    project = home.root / "src" / "team"
    (project / ".agentcfg" / "profiles").mkdir(parents=True)
    (project / ".agentcfg" / "profiles" / "team.toml").write_text('base_url = "https://team.example/v1"\nmodel = "m"\n')
    home.run("trust", str(project))
    import subprocess

    from tests.conftest import AGENTCFG

    result = subprocess.run(
        [AGENTCFG, "profile", "set", "team", "model=x"], cwd=project, env=home.env, capture_output=True, text=True
    )
    assert result.returncode == 2, result.stderr
    assert "this project's profile" in result.stderr and "team.toml" in result.stderr
    assert 'model = "m"' in (project / ".agentcfg" / "profiles" / "team.toml").read_text()


def test_agents_on_the_profile_are_named_with_the_switch_to_run(home):
    home.run("profile", "add", "gw", "--base-url", "http://127.0.0.1:9/v1", "--model", "m1", "--no-key")
    home.run("switch", "gw", "--agent", "codex", "--agent", "qwen")
    result = home.run("profile", "set", "gw", "model=m2")
    assert "codex, qwen still use the old values" in result.stdout
    assert "Switch to it with: agentcfg switch gw --agent codex --agent qwen" in result.stdout
    home.run("switch", "gw", "--agent", "codex", "--agent", "qwen")
    status = {a["name"]: a for a in home.json("status")["agents"]}
    assert status["codex"]["model"] == "m2" and status["codex"]["profile"] == "gw"
    quiet = home.run("profile", "set", "gw", "description=x")  # no agent points at a profile it is not on
    assert "Switch to it" not in home.run("profile", "set", "local", "description=y").stdout
    assert "Switch to it with: agentcfg switch gw --agent codex --agent qwen" in quiet.stdout


def test_moving_a_keyed_profile_to_another_host_says_how_the_key_follows(home, keyring_file):
    home.write(".config/agentcfg/profiles/gw.toml", USER_PROFILE)
    home.run("key", "set", "gw", stdin_text="sk-gw-secret-123456\n")
    same_host = home.run("profile", "set", "gw", "base_url=https://gw.example/api/v1")
    assert "key bind" not in same_host.stderr  # the same origin: the key still goes there
    moved = home.run("profile", "set", "gw", "base_url=https://other.example/v1")
    assert "bound to https://gw.example:443" in moved.stderr
    assert "agentcfg key bind gw" in moved.stderr and "agentcfg key set gw" in moved.stderr
    refused = home.run("key", "get", "gw", check=2)  # as `profile add --force` leaves it: not handed out
    assert "refusing" in refused.stderr
    home.run("key", "bind", "gw")
    assert home.run("key", "get", "gw").stdout.strip() == "sk-gw-secret-123456"
    renamed = home.run("profile", "set", "gw", "key_env=OTHER_KEY")
    assert "stored key of gw stays" in renamed.stderr
    assert home.run("key", "get", "gw").stdout.strip() == "sk-gw-secret-123456"


def test_adding_a_key_variable_says_to_store_the_key(home):
    home.run("profile", "add", "box", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--no-key")
    result = home.run("profile", "set", "box", "key_env=BOX_API_KEY")
    assert "agentcfg key set box" in result.stderr


def test_set_detect_reads_the_window_from_the_server_with_the_stored_key(home, keyring_file):
    with FaultServer(key="sk-server-key-123456", max_model_len=32768) as server:
        home.run("profile", "add", "box", "--base-url", server.base_url, "--model", MODEL, "--key-env", "BOX_KEY")
        home.run("key", "set", "box", stdin_text="sk-server-key-123456\n")
        result = home.run("profile", "set", "box", "--detect")
    assert "context_window: (not set) -> 32,768" in result.stdout
    assert shown(home, "box")["anthropic_base_url"] == server.root  # vLLM: Claude Code's URL too
