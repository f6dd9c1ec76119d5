"""Defects a review of issue 15 found by trying the CLI as a new user; each test failed on db5af53."""

from __future__ import annotations

import json

from tests.conftest import Home

FAIL_BACKEND = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


def test_exec_json_after_profile_is_not_taken_as_the_command(home: Home) -> None:
    """`exec local --json -- true`: --json is either the flag (runs true) or part of COMMAND (then no JSON
    on stdout); today it is both: 'command not found: --json' and a JSON error document."""
    result = home.run("exec", "local", "--json", "--", "true", check=None)
    if result.returncode == 127:
        assert not result.stdout.strip(), result.stdout
    else:
        assert result.returncode == 0, (result.returncode, result.stderr)


def test_init_does_not_say_stored_when_the_key_is_only_exported(home: Home) -> None:
    (home.root / ".codex").mkdir()
    result = home.run(
        "init", "--profile", "taotoken", "--yes", check=None, TAOTOKEN_API_KEY="sk-exported12345", **FAIL_BACKEND
    )
    assert "key already stored" not in result.stdout, result.stdout


def test_init_without_keyring_does_not_point_at_key_set(home: Home) -> None:
    """No keyring: `agentcfg key set taotoken` is refused (exit 2), so init must not tell the user to run it."""
    (home.root / ".codex").mkdir()
    result = home.run("init", "--profile", "taotoken", "--yes", "--agents", "codex", check=4, **FAIL_BACKEND)
    assert "store it with `agentcfg key set taotoken`" not in result.stdout, result.stdout


def test_profile_import_does_not_say_no_endpoint_when_it_skipped_one(home: Home) -> None:
    home.write(
        ".claude/settings.json",
        json.dumps({"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9999", "ANTHROPIC_AUTH_TOKEN": "sk-tok1234567"}}),
    )
    result = home.run("profile", "import", check=None)
    assert "no agent points at any endpoint" not in result.stdout, result.stdout


def test_init_skip_line_names_an_option_init_takes(home: Home) -> None:
    """init's 'skipped' lines said `--agent codex sets it up anyway`; init has only --agents."""
    (home.root / ".codex").mkdir()
    result = home.run("init", "--profile", "local", "--yes", check=3)
    assert "`agentcfg switch local --agent codex` sets it up anyway" in result.stdout, result.stdout
