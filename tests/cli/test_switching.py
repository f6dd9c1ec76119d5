"""`switch`, `rollback`, `status`, `agents` (agentcfg/cli/switching.py): exit statuses, JSON, refusals, completion.

Exit statuses (agentcfg.errors.Exit): 0 the agents point at the profile, 2 refused (nothing written),
3 nothing switched / nothing to roll back, 4 switched but the profile's key is missing. --dry-run
exits with the status the real run would have.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import AGENTCFG, Home

KEY = "sk-test-0123456789abcdef"
NO_BUS = {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"}
NO_KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring", **NO_BUS}
LOCAL_ONLY = 'base_url = "http://127.0.0.1:8001/v1"\nmodel = "m"\n'  # no anthropic_base_url: claude cannot use it


def store(keyring_file, name: str = "taotoken", value: str = KEY) -> None:
    """A key put straight into the FileKeyring, as if stored by another agentcfg or by hand (not recorded)."""
    keyring_file.write_text(json.dumps({f"agentcfg/{name}": value}))


# -- item 1: no agent to switch is Exit.NOTHING (3) -----------------------------------------------------------


def test_no_agent_installed_or_configured_exits_3_and_names_complete_commands(home: Home) -> None:
    result = home.run("switch", "local", check=3)
    assert result.stdout.startswith("No agent to switch to local: none is installed or configured")
    assert "  agentcfg switch local --all\n" in result.stdout  # a command to paste, on its own line
    assert "and run: agentcfg switch local\n" in result.stdout
    assert home.snapshot() == {}


def test_no_agent_json_says_nothing_to_switch(home: Home) -> None:
    result = home.run("switch", "local", "--json", check=3)
    data = json.loads(result.stdout)
    assert data["nothing_to_switch"] is True and data["switched"] == [] and data["key_missing"] is None
    assert data["changes"] == [] and set(data["skipped"]) == {
        "codex",
        "qwen",
        "opencode",
        "claude",
        "cline",
        "copilot",
        "gemini",
        "droid",
    }
    assert home.snapshot() == {}


def test_no_agent_dry_run_exits_as_the_real_run_would(home: Home) -> None:
    assert "No agent to switch" in home.run("switch", "local", "--dry-run", check=3).stdout
    assert json.loads(home.run("switch", "local", "--dry-run", "--json", check=3).stdout)["nothing_to_switch"]


def test_chosen_agents_that_cannot_use_the_profile_switch_nothing_and_exit_3(home: Home) -> None:
    home.write(".config/agentcfg/profiles/plain.toml", LOCAL_ONLY)
    result = home.run("switch", "plain", "--agent", "claude", check=3)
    assert result.stdout.startswith("No agent switched to plain: none of the agents chosen can use it")
    assert "anthropic_base_url" in result.stdout  # claude's line says what it needs
    assert home.snapshot() == {}


def test_switched_and_already_on_exit_0(home: Home) -> None:
    data = json.loads(home.run("switch", "local", "--agent", "codex", "--json").stdout)
    assert data["switched"] == ["codex"] and data["nothing_to_switch"] is False and data["key_missing"] is None
    again = home.run("switch", "local", "--agent", "codex")
    assert "Already on local" in again.stdout and "nothing to change" in again.stdout


# -- item 1: switched, but the key is missing: Exit.NO_KEY (4) --------------------------------------------------


def test_keyed_profile_without_a_key_writes_the_files_and_exits_4(home: Home, keyring_file) -> None:
    result = home.run("switch", "taotoken", "--agent", "codex", check=4)
    assert home.path(".codex/config.toml").exists()  # switched: the files are as asked
    assert result.stderr.splitlines()[0] == (
        "note: agentcfg has stored no key for taotoken on this machine and TAOTOKEN_API_KEY is not exported: "
        "the agents fail until you run `agentcfg key set taotoken`"
    )
    before = home.snapshot()
    again = home.run("switch", "taotoken", "--agent", "codex", "--json", check=4)  # the same answer, 0 bytes
    assert home.snapshot() == before
    data = json.loads(again.stdout)
    assert data["key_missing"] == {
        "profile": "taotoken",
        "key_env": "TAOTOKEN_API_KEY",
        "fix": "agentcfg key set taotoken",
    }
    assert data["switched"] == ["codex"] and data["nothing_to_switch"] is False


def test_keyed_profile_dry_run_exits_4_and_writes_nothing(home: Home, keyring_file) -> None:
    data = json.loads(home.run("switch", "taotoken", "--all", "--dry-run", "--json", check=4).stdout)
    assert data["key_missing"]["fix"] == "agentcfg key set taotoken"
    assert (
        data["switched"] == ["codex", "qwen", "opencode", "cline", "copilot", "droid"] and "claude" in data["skipped"]
    )  # no Anthropic URL
    assert home.snapshot() == {}


def test_key_set_then_switch_exits_0(home: Home, keyring_file) -> None:
    home.run("switch", "taotoken", "--agent", "codex", check=4)
    home.run("key", "set", "taotoken", stdin_text=KEY + "\n")
    data = json.loads(home.run("switch", "taotoken", "--agent", "codex", "--json").stdout)
    assert data["key_missing"] is None
    assert not [n for n in data["notes"] if "stored no key" in n]


def test_an_exported_key_is_not_missing(home: Home, keyring_file) -> None:
    data = json.loads(home.run("switch", "taotoken", "--agent", "codex", "--json", TAOTOKEN_API_KEY=KEY).stdout)
    assert data["key_missing"] is None


def test_a_key_in_the_keyring_that_agentcfg_did_not_record_is_not_missing(home: Home, keyring_file) -> None:
    store(keyring_file)  # stored before agentcfg kept its record, or the record was deleted
    assert not home.path(".local/state/agentcfg/stored-keys").exists()
    data = json.loads(home.run("switch", "taotoken", "--agent", "codex", "--json").stdout)
    assert data["key_missing"] is None


def test_no_keyring_and_nothing_exported_exits_4_and_says_to_export(home: Home) -> None:
    result = home.run("switch", "taotoken", "--agent", "codex", check=4, **NO_KEYRING)
    assert "there is no usable keyring" in result.stderr and "TAOTOKEN_API_KEY is exported" in result.stderr
    assert "Traceback" not in result.stderr


# -- item 2: every input checked before the first write ---------------------------------------------------------


def test_store_key_in_files_without_a_key_refuses_and_writes_nothing(home: Home, keyring_file) -> None:
    result = home.run("switch", "taotoken", "--all", "--store-key-in-files", check=2)
    assert "no key stored for profile 'taotoken'" in result.stderr and "agentcfg key set taotoken" in result.stderr
    assert home.snapshot() == {}


def test_store_key_in_files_without_a_keyring_refuses_and_writes_nothing(home: Home) -> None:
    result = home.run("switch", "taotoken", "--all", "--store-key-in-files", "--json", check=2, **NO_KEYRING)
    assert json.loads(result.stdout)["exit"] == 2 and "no usable keyring" in result.stderr
    assert home.snapshot() == {}


def _window_profile(home: Home, window: int) -> None:
    home.write(".config/agentcfg/profiles/big.toml", f"{LOCAL_ONLY}context_window = {window}\n")


def test_a_window_codex_cannot_parse_is_refused_before_any_write(home: Home) -> None:
    _window_profile(home, 999999999999999999999)  # more than a TOML integer (64 bits) holds
    result = home.run("switch", "big", "--all", "--json", check=2)
    error = json.loads(result.stdout)
    assert error["exit"] == 2 and "context_window" in error["error"]
    assert error["where"].endswith("big.toml")
    assert home.snapshot() == {}


def test_a_window_out_of_the_stated_range_is_refused_before_any_write(home: Home) -> None:
    _window_profile(home, 100_000_001)
    home.run("switch", "big", "--all", check=2)
    assert home.snapshot() == {}


@pytest.mark.parametrize("command", ["status", "agents", "switch", "rollback"])
def test_an_unknown_option_with_json_is_one_error_document(home: Home, command: str) -> None:
    args = [command, *(["local"] if command == "switch" else []), "--json", "--jsn"]
    result = home.run(*args, check=2)
    error = json.loads(result.stdout)
    assert error == {
        "error": "No such option '--jsn'. Did you mean '--json'?",
        "where": f"agentcfg {command}",
        "hint": f"`agentcfg {command} --help` shows what it takes.",
        "exit": 2,
    }
    assert home.snapshot() == {}


# -- rollback ---------------------------------------------------------------------------------------------------


def test_rollback_with_nothing_to_roll_back_exits_3(home: Home) -> None:
    result = home.run("rollback", check=3)
    assert "nothing to roll back: the journal is empty" in result.stderr and "agentcfg status" in result.stderr
    error = json.loads(home.run("rollback", "--json", check=3).stdout)
    assert error["exit"] == 3 and error["error"].startswith("nothing to roll back")


def test_rollback_after_a_switch_exits_0_then_3(home: Home) -> None:
    home.run("switch", "local", "--agent", "codex")
    home.run("rollback")
    home.run("rollback", check=3)
    assert home.snapshot() == {}


# -- item 3: agents --json keeps its shape ----------------------------------------------------------------------


def test_agents_json_keeps_its_shape(home: Home) -> None:
    home.run("switch", "local", "--agent", "codex")
    rows = json.loads(home.run("agents", "--json").stdout)
    assert [r["agent"] for r in rows] == ["codex", "qwen", "opencode", "claude", "cline", "copilot", "gemini", "droid"]
    keys = {"agent", "path", "version", "proven", "files", "configured", "profile", "base_url", "model", "error"}
    assert all(set(r) == keys for r in rows)
    assert rows[0]["profile"] == "local" and rows[0]["configured"] is True


# -- item 4: completion -----------------------------------------------------------------------------------------


def complete(home: Home, line: str) -> list[str]:
    """What bash completion offers for `line` (the word being completed is its last, possibly empty)."""
    words = line.split(" ")
    environ = {**home.env, "_AGENTCFG_COMPLETE": "bash_complete", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
    result = subprocess.run([AGENTCFG], env=environ, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return [row.split(",", 1)[1] for row in result.stdout.splitlines()]


@pytest.mark.parametrize("command", ["switch", "doctor", "bench"])
def test_profile_completion_offers_every_profile(home: Home, command: str) -> None:
    home.write(".config/agentcfg/profiles/lab.toml", LOCAL_ONLY)
    assert complete(home, f"agentcfg {command} l") == ["lab", "local"]
    assert complete(home, f"agentcfg {command} ") == ["lab", "local", "taotoken"]


@pytest.mark.parametrize("command", ["switch local", "doctor"])
def test_agent_completion_offers_the_agents(home: Home, command: str) -> None:
    assert complete(home, f"agentcfg {command} --agent q") == ["qwen"]
    assert complete(home, f"agentcfg {command} --agent c") == ["codex", "claude", "cline", "copilot"]


# -- item 3: messages give complete commands ------------------------------------------------------------------


def test_a_skipped_agent_names_the_complete_switch_that_sets_it_up(home: Home) -> None:
    data = json.loads(home.run("switch", "taotoken", "--json", check=3).stdout)
    assert data["skipped"]["qwen"] == (
        "not installed (no `qwen` on PATH) and no config file; "
        "`agentcfg switch taotoken --agent qwen` sets it up anyway"
    )


def test_the_window_note_gives_the_field_to_set_as_a_command(home: Home) -> None:
    result = home.run("switch", "taotoken", "--agent", "qwen", TAOTOKEN_API_KEY=KEY)
    (note,) = [line for line in result.stderr.splitlines() if "context window" in line]
    assert "`agentcfg profile set taotoken context_window=` followed by the window in tokens" in note, note
