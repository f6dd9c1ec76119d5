"""The key commands' contract (issue 15): what `key set` accepts, `key list` without a keyring, `--json` on
`key get` / `exec` / `env` (never the key), a missing key as Exit.NO_KEY, and no key exported into a
variable that steers programs. Keys live in tests/fake_keyring.py's FileKeyring, outside the test HOME."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentcfg import keystore
from agentcfg.errors import Exit
from agentcfg.profiles import Profile
from tests.cli.test_keys_backends import FILE_KEYRING, KEY, run, store

FAIL_BACKEND = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
TAOTOKEN = Profile(name="taotoken", base_url="https://taotoken.net/v1", model="m", key_env="TAOTOKEN_API_KEY")


def stored(keyring_file: Path) -> dict[str, str]:
    return json.loads(keyring_file.read_text()) if keyring_file.exists() else {}


# -- 1. key set: one line, a length limit, no placeholders ----------------------------------------------


@pytest.mark.parametrize(
    ("given", "lines"),
    [(f"{KEY}\nsecond\n", 2), (f"{KEY}\r\n{KEY}\r\n\r\n", 3), ("\n\n", 2), (f"{KEY}\n\n", 2)],
    ids=["two", "crlf-three", "blank-lines", "trailing-blank-line"],
)
def test_key_set_refuses_more_than_one_line_and_stores_nothing(home, keyring_file, given, lines):
    result = run(home, "key", "set", "taotoken", input=given, check=Exit.REFUSED)
    assert f"{lines} lines" in result.stderr
    assert """`printf %s "$KEY" | agentcfg key set taotoken`""" in result.stderr
    assert "Traceback" not in result.stderr and KEY not in result.stdout + result.stderr
    assert stored(keyring_file) == {}


@pytest.mark.parametrize("ending", ["", "\n", "\r\n"], ids=["none", "lf", "crlf"])
def test_key_set_takes_one_line_with_or_without_its_line_ending(home, keyring_file, ending):
    run(home, "key", "set", "taotoken", input=KEY + ending)
    assert stored(keyring_file)["agentcfg/taotoken"] == KEY


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("k" * 100_000, "100,000 characters; a key is at most 4,096"),
        ("k" * 4_097, "4,097 characters; a key is at most 4,096"),
        ("abc12", "5 characters; a key is at least 6"),
    ],
    ids=["100k", "4097", "short"],
)
def test_key_set_states_the_length_limit(home, keyring_file, value, words):
    result = run(home, "key", "set", "taotoken", input=value + "\n", check=Exit.REFUSED)
    assert words in result.stderr
    assert len(result.stderr) < 600  # the value is not echoed back
    assert stored(keyring_file) == {}


def test_key_set_takes_a_long_jwt_like_key(home, keyring_file):
    jwt = "eyJhbGciOiJSUzI1NiJ9." + "a" * 2_000 + ".sig-0123456789"
    run(home, "key", "set", "taotoken", input=jwt + "\n")
    assert stored(keyring_file)["agentcfg/taotoken"] == jwt


@pytest.mark.parametrize(
    "value",
    [
        "agentcfg-no-key",
        "EMPTY",
        "sk-xxx",
        "sk-xxxxxxxxxxxxxxxx",
        "your-api-key",
        "YOUR_API_KEY",
        "<key>",
        "<your-taotoken-key>",
        "changeme",
        "$TAOTOKEN_API_KEY",
        "${TAOTOKEN_API_KEY}",
        "%TAOTOKEN_API_KEY%",
    ],
)
def test_key_set_refuses_placeholders_and_unexpanded_variables(home, keyring_file, value):
    result = run(home, "key", "set", "taotoken", input=value + "\n", check=Exit.REFUSED)
    assert result.stderr.startswith("agentcfg: error: not storing the key for taotoken: ")
    assert "placeholder" in result.stderr or "variable" in result.stderr, result.stderr
    assert stored(keyring_file) == {}


def test_key_set_refuses_control_characters(home, keyring_file):
    result = run(home, "key", "set", "taotoken", input="sk-abc\x1b[Adef0123456789\n", check=Exit.REFUSED)
    assert "control character (U+001B)" in result.stderr
    assert stored(keyring_file) == {}


def test_the_shared_check_refuses_unexpanded_variables_and_over_long_values_for_every_caller():
    # init and profile add call check_value(value) as it is: they share what is wrong wherever a key comes from
    assert "variable" in str(keystore.check_value("$TAOTOKEN_API_KEY"))
    assert "4,096" in str(keystore.check_value("k" * 5_000))
    # the stand-in agentcfg writes into keyless profiles' files is not malformed there (doctor reads it)
    assert keystore.check_value("agentcfg-no-key") is None
    assert "placeholder" in str(keystore.check_value("agentcfg-no-key", typed=True))


def test_profile_add_key_stdin_refuses_two_lines_and_placeholders(home, keyring_file):
    for given in (f"{KEY}\nmore\n", "agentcfg-no-key\n"):
        result = run(
            home, "profile", "add", "gw", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--key-stdin",
            input=given, check=Exit.REFUSED,
        )  # fmt: skip
        assert "Traceback" not in result.stderr
        assert stored(keyring_file) == {}
        assert not home.path(".config/agentcfg/profiles/gw.toml").exists()


# -- 2. key list without a usable keyring -------------------------------------------------------------


def test_key_list_without_a_keyring_lists_the_profiles_anyway(home):
    result = run(home, "key", "list", TAOTOKEN_API_KEY=KEY, **FAIL_BACKEND)  # exit 0: the list was asked and shown
    lines = result.stdout.splitlines()
    assert lines[0].startswith("keyring: unavailable (no usable keyring")
    assert "`agentcfg key set " in lines[0] and "lists the ways to get one" in lines[0]  # that refusal has them all
    table = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    assert table["taotoken"] == ["TAOTOKEN_API_KEY", "unavailable", "set"]
    assert table["local"][1:3] == ["not", "needed"]
    assert KEY not in result.stdout + result.stderr

    data = json.loads(run(home, "key", "list", "--json", **FAIL_BACKEND).stdout)
    assert (data["backend"], data["available"], data["backend_class"]) == (None, False, None)
    assert "no usable keyring" in data["reason"]
    row = next(r for r in data["profiles"] if r["profile"] == "taotoken")
    assert (row["stored"], row["tail"], row["bound_to"]) == (None, None, None)


def test_key_list_with_a_keyring_says_it_is_available(home, keyring_file):
    store(keyring_file)
    data = json.loads(run(home, "key", "list", "--json").stdout)
    assert (data["backend"], data["available"], data["reason"]) == (FILE_KEYRING, True, None)


# -- 3. --json on key get / env / exec: never the key; a missing key is NO_KEY ---------------------------


def test_key_get_json_names_the_source_and_tail_never_the_key(home, keyring_file):
    store(keyring_file)
    result = run(home, "key", "get", "taotoken", "--json")
    assert json.loads(result.stdout) == {
        "profile": "taotoken",
        "key_env": "TAOTOKEN_API_KEY",
        "source": "keyring",
        "tail": "…cdef",
    }
    exported = run(home, "key", "get", "taotoken", "--json", TAOTOKEN_API_KEY="sk-exported-0123456789wxyz")
    keyring_file.unlink()
    exported = run(home, "key", "get", "taotoken", "--json", TAOTOKEN_API_KEY="sk-exported-0123456789wxyz")
    assert json.loads(exported.stdout)["source"] == "environment"
    assert json.loads(exported.stdout)["tail"] == "…wxyz"
    assert "sk-exported" not in exported.stdout


def test_env_json_gives_variable_names_sources_and_tails(home, keyring_file):
    store(keyring_file)
    result = run(home, "env", "taotoken", "--json", "--shell", "fish")
    assert KEY not in result.stdout
    assert json.loads(result.stdout) == {
        "profile": "taotoken",
        "shell": "fish",
        "variables": {
            "AGENTCFG_PROFILE": {"set": True, "source": "agentcfg", "tail": None, "value": "taotoken"},
            "TAOTOKEN_API_KEY": {"set": True, "source": "keyring", "tail": "…cdef", "value": None},
        },
    }


@pytest.mark.parametrize(
    ("args", "as_json"),
    [
        (("key", "get", "taotoken"), ("key", "get", "taotoken", "--json")),
        (("env", "taotoken"), ("env", "taotoken", "--json")),
        (("exec", "taotoken", "--", "sh", "-c", "touch ran"), ("exec", "--json", "taotoken", "--", "touch", "ran")),
    ],
    ids=["key-get", "env", "exec"],
)
def test_a_missing_key_is_no_key_and_nothing_runs_or_prints(home, keyring_file, args, as_json):
    result = run(home, *args, check=Exit.NO_KEY)
    assert result.stdout == ""
    assert "`agentcfg key set taotoken`" in result.stderr
    assert "Traceback" not in result.stderr

    error = json.loads(run(home, *as_json, check=Exit.NO_KEY).stdout)
    assert error["exit"] == Exit.NO_KEY and "agentcfg key set taotoken" in error["hint"]
    assert not list(home.root.rglob("ran")) and not Path("ran").exists()  # exec ran nothing


def test_exec_json_success_is_the_childs_own_output(home, keyring_file):
    store(keyring_file)
    result = run(home, "exec", "--json", "taotoken", "--", "sh", "-c", "echo child")
    assert result.stdout == "child\n"


def test_exec_with_the_key_only_exported_runs(home, keyring_file):
    result = run(home, "exec", "taotoken", "--", "sh", "-c", 'printf %s "$TAOTOKEN_API_KEY"', TAOTOKEN_API_KEY=KEY)
    assert result.stdout == KEY


# -- 4. never a key into a variable that steers programs -------------------------------------------------


@pytest.mark.parametrize("variable", ["PATH", "HOME", "LD_PRELOAD", "PYTHONPATH", "NODE_OPTIONS", "path"])
def test_exec_and_env_refuse_a_reserved_key_variable_even_from_a_file(monkeypatch, environ, variable):
    from agentcfg import profiles
    from agentcfg.cli import keys
    from agentcfg.errors import AgentcfgError

    reserved = Profile(name="evil", base_url="https://evil.example/v1", model="m", key_env=variable)
    monkeypatch.setattr(profiles, "get", lambda name, environ: reserved)  # as if the loader had let it through
    monkeypatch.setattr(keystore, "resolve", lambda *a, **k: pytest.fail("the key was looked up"))
    with pytest.raises(AgentcfgError) as caught:
        keys._profile_variables(profiles.get("evil", environ), {**environ, variable: "sk-0123456789abcdef"})
    assert caught.value.exit_code == Exit.REFUSED
    assert variable in caught.value.message and "steers programs" in caught.value.message


# -- 5. the keyring's ways out: complete instructions, no placeholders ---------------------------------


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_ways_out_name_the_real_variable_and_hold_no_placeholder(platform):
    text = keystore.ways_out(TAOTOKEN, platform)
    assert "`read -rs TAOTOKEN_API_KEY && export TAOTOKEN_API_KEY`" in text
    assert "`agentcfg switch taotoken --store-key-in-files`" in text
    for ways in (text, keystore.ways_out(None, platform)):
        assert not re.search(r"<key>|\bVAR\b|\bPROFILE\b|=\.\.\.", ways), ways


def test_missing_and_bad_exported_key_hints_hold_no_placeholder():
    assert "=..." not in str(keystore.missing(TAOTOKEN, "keyring"))
    with pytest.raises(keystore.KeyringProblem) as caught:
        keystore._exported(TAOTOKEN, "sk-\u00e9t\u00e9-0123456789")
    assert "<key>" not in str(caught.value) and "TAOTOKEN_API_KEY" in str(caught.value)


# -- found by the review of issue 15 --------------------------------------------------------------------


def test_exec_json_after_profile_is_not_taken_as_the_command(home) -> None:
    """`exec local --json -- true`: --json is either the flag (runs true) or part of COMMAND (then no JSON
    on stdout); it was both: 'command not found: --json' and a JSON error document."""
    result = home.run("exec", "local", "--json", "--", "true", check=None)
    if result.returncode == 127:
        assert not result.stdout.strip(), result.stdout
    else:
        assert result.returncode == 0, (result.returncode, result.stderr)
