"""Issue 15 for `agentcfg profile ...` (agentcfg/cli/profiles.py): every input checked before anything is written,
sent or asked; ranges and reserved variable names refused in words; contradictory options refused; --json on
add, rm and export. Every run in a temporary HOME; servers on loopback only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomllib

from tests.conftest import Home
from tests.fault_server import MODEL, FaultServer

PROFILES = ".config/agentcfg/profiles"
LOCAL = ("--base-url", "http://127.0.0.1:9/v1", "--model", "m")
I64_MAX = 2**63 - 1


def _clean(text: str) -> None:
    assert "Traceback" not in text and "internal error" not in text, text
    assert "does not match" not in text and "(?!" not in text and "Fields a profile may have" not in text, text


def _no_profile(home: Home, name: str) -> None:
    assert not home.path(f"{PROFILES}/{name}.toml").exists()


# -- item 1: ranges ---------------------------------------------------------------------------------------


def test_the_issue_window_is_refused_with_its_range_and_nothing_written(home: Home) -> None:
    failed = home.run("profile", "add", "big", *LOCAL, "--context-window", "999999999999999999999", check=2)
    _clean(failed.stderr)
    assert "256 to 100,000,000" in failed.stderr
    _no_profile(home, "big")


def test_profile_set_and_from_files_use_the_same_range(home: Home, tmp_path: Path) -> None:
    home.run("profile", "add", "gpu", *LOCAL)
    before = home.read(f"{PROFILES}/gpu.toml")
    failed = home.run("profile", "set", "gpu", "context_window=100000001", check=2)
    _clean(failed.stderr)
    assert "256 to 100,000,000" in failed.stderr and home.read(f"{PROFILES}/gpu.toml") == before
    shared = tmp_path / "team.toml"
    shared.write_text('base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\ncontext_window = 100000001\n')
    failed = home.run("profile", "add", "team", "--from", str(shared), check=2)
    _clean(failed.stderr)
    assert "256 to 100,000,000" in failed.stderr
    _no_profile(home, "team")


def test_an_output_bound_larger_than_the_window_is_refused(home: Home) -> None:
    failed = home.run("profile", "add", "x", *LOCAL, "--context-window", "4096", "--max-output-tokens", "9000", check=2)
    _clean(failed.stderr)
    assert "9,000" in failed.stderr and "4,096" in failed.stderr
    _no_profile(home, "x")


def test_the_largest_window_goes_through_switch_into_a_config_toml_codex_can_read(home: Home) -> None:
    """The fast tier's check (tomllib parse, i64 bound); the real codex reads it in tests/e2e."""
    home.run("profile", "add", "big", *LOCAL, "--context-window", "100000000")
    home.write(".codex/config.toml", 'approval_policy = "on-request"\n')
    home.run("switch", "big", "--agent", "codex")
    config = tomllib.loads(home.read(".codex/config.toml"))
    assert config["model_context_window"] == 100_000_000 <= I64_MAX


def test_a_long_url_is_refused_with_its_limit(home: Home) -> None:
    url = "http://127.0.0.1:9/" + "v" * 3000
    failed = home.run("profile", "add", "long", "--base-url", url, "--model", "m", check=2)
    _clean(failed.stderr)
    assert "at most 2,048" in failed.stderr and url not in failed.stderr
    _no_profile(home, "long")


# -- item 2: reserved variables ---------------------------------------------------------------------------


@pytest.mark.parametrize("variable", ["PATH", "LD_PRELOAD", "PYTHONPATH", "LC_ALL", "CODEX_HOME", "PS3", "TERM"])
def test_a_variable_that_steers_programs_is_refused_on_add_and_set(home: Home, variable: str) -> None:
    failed = home.run("profile", "add", "gw", "--base-url", "https://gw.example/v1", "--model", "m",
                      "--key-env", variable, check=2)  # fmt: skip
    _clean(failed.stderr)
    assert variable in failed.stderr and "GW_API_KEY" in failed.stderr
    _no_profile(home, "gw")
    home.run("profile", "add", "gw", "--base-url", "https://gw.example/v1", "--model", "m")
    failed = home.run("profile", "set", "gw", f"key_env={variable}", check=2)
    _clean(failed.stderr)
    assert variable in failed.stderr and "GW_API_KEY" in failed.stderr


def test_a_team_file_with_a_reserved_key_env_is_refused(home: Home, tmp_path: Path) -> None:
    shared = tmp_path / "team.toml"
    shared.write_text('base_url = "https://gw.example/v1"\nmodel = "m"\nkey_env = "NODE_OPTIONS"\n')
    failed = home.run("profile", "add", "team", "--from", str(shared), check=2)
    _clean(failed.stderr)
    assert "NODE_OPTIONS" in failed.stderr
    _no_profile(home, "team")


# -- item 3: --from with field options --------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [("--model", "other"), ("--base-url", "http://127.0.0.1:8/v1"), ("--key-env", "X_KEY"), ("--detect",),
     ("--context-window", "4096"), ("--no-key",), ("--key-stdin",)],
)  # fmt: skip
def test_from_with_a_field_option_is_refused_naming_both(home: Home, tmp_path: Path, extra: tuple[str, ...]) -> None:
    shared = tmp_path / "team.toml"
    shared.write_text('base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    failed = home.run("profile", "add", "team", "--from", str(shared), *extra, check=2)
    _clean(failed.stderr)
    assert "--from" in failed.stderr and extra[0] in failed.stderr
    if extra[0] == "--model":
        assert "agentcfg profile set team model=other" in failed.stderr
    _no_profile(home, "team")


# -- item 4: names in the user's words --------------------------------------------------------------------


def test_a_300_character_name_states_the_limit(home: Home) -> None:
    failed = home.run("profile", "add", "a" * 300, *LOCAL, check=2)
    _clean(failed.stderr)
    assert "at most 64 characters" in failed.stderr and "a" * 300 not in failed.stderr


def test_an_upper_case_name_is_explained_with_the_command(home: Home) -> None:
    failed = home.run("profile", "add", "UPPER", *LOCAL, check=2)
    _clean(failed.stderr)
    assert "lower-case" in failed.stderr and "agentcfg profile add upper --base-url" in failed.stderr


def test_a_bad_field_value_names_no_regex(home: Home) -> None:
    failed = home.run("profile", "set", "local", "model=", check=2)
    _clean(failed.stderr)


# -- item 5: --json ---------------------------------------------------------------------------------------


def test_add_rm_and_export_take_json(home: Home) -> None:
    added = home.json("profile", "add", "gw", "--base-url", "https://gw.example/v1", "--model", "m")
    assert added["profile"] == "gw" and added["path"].endswith("gw.toml")
    assert added["fields"]["model"] == "m" and added["key_env"] == "GW_API_KEY" and added["key_stored"] is False
    assert added["switch"] == "agentcfg switch gw"
    exported = home.json("profile", "export", "gw")
    assert exported["profile"] == "gw" and exported["fields"] == added["fields"]
    assert tomllib.loads(exported["toml"]) == exported["fields"]
    removed = home.json("profile", "rm", "gw")
    assert removed["profile"] == "gw" and removed["removed"] is True and removed["built_in_applies"] is False
    assert removed["agents_pointing"] == [] and removed["path"] == added["path"]
    _no_profile(home, "gw")


def test_rm_json_of_a_copy_of_a_built_in(home: Home) -> None:
    home.run("profile", "set", "local", "context_window=65536")
    removed = home.json("profile", "rm", "local")
    assert removed["built_in_applies"] is True


def test_add_json_refusal_is_one_error_document(home: Home) -> None:
    failed = home.run("profile", "add", "UPPER", *LOCAL, "--json", check=2)
    document = json.loads(failed.stdout)
    assert document["exit"] == 2 and "lower-case" in document["error"]


def test_add_json_with_detect_says_the_window_read(home: Home) -> None:
    with FaultServer(max_model_len=40960) as server:
        added = home.json("profile", "add", "gpu", "--base-url", server.base_url, "--detect")
    assert added["detected_window"] == 40960 and added["fields"]["model"] == MODEL


# -- item 6: before the key is read and the request sent --------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [("--key-env", "1KEY"), ("--key-env", "PATH"), ("--context-window", "4096", "--max-output-tokens", "9000"),
     ("--context-window", "1000000000")],
)  # fmt: skip
def test_detect_with_key_stdin_checks_everything_before_reading_the_key_or_sending(
    home: Home, keyring_file: Path, bad: tuple[str, ...]
) -> None:
    with FaultServer(key="sk-detect-key-123456") as server:
        # A key the key check refuses: an error about it would mean the key was read before the options were.
        failed = home.run("profile", "add", "gw", "--base-url", server.base_url, *bad, "--detect", "--key-stdin",
                          stdin_text="two words\n", check=2)  # fmt: skip
        assert server.requests == []
    _clean(failed.stderr)
    assert "not using the key" not in failed.stderr and "usable keyring" not in failed.stderr
    _no_profile(home, "gw")
    assert not keyring_file.exists() or "sk-" not in keyring_file.read_text()


def test_an_unknown_profile_hint_is_a_command_without_placeholders(home: Home) -> None:
    failed = home.run("profile", "show", "nope", check=2)
    hint = failed.stderr.split("\n", 1)[1]
    assert "agentcfg profile add nope --base-url" in hint
    assert not {"NAME", "URL", "ID"} & set(hint.replace("`", " ").replace("(", " ").split())
