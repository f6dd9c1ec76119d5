"""Keys through the installed `agentcfg`: key set/get/rm/list, exec, env and how switch hands keys to agents.

Keys live in tests/fake_keyring.py's FileKeyring (the `keyring_file` fixture), outside the test HOME,
so a scan of HOME finds any copy agentcfg leaves behind. "No backend" runs have no
PYTHON_KEYRING_BACKEND and a session bus address that leads nowhere.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
from pathlib import Path

import pytest
import tomllib

from agentcfg.invocation import self_command
from tests.conftest import AGENTCFG

KEY = "sk-test-0123456789abcdef"  # tail …cdef
NEW_KEY = "sk-rotated-fedcba9876543210"  # tail …3210
GW_KEY = "gw-secret-5f1e9a7c3b2d4e60"  # tail …4e60
FILE_KEYRING = "tests.fake_keyring.FileKeyring"
NO_BUS = {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"}
GW_PROFILE = """\
base_url = "http://127.0.0.1:9/v1"
anthropic_base_url = "http://127.0.0.1:9"
model = "m"
key_env = "GW_API_KEY"
"""
TAOTOKEN_BOUND = {"agentcfg-origins/taotoken": '["https://taotoken.net:443"]'}  # key set binds the key
HELPER_NOTE = "read the key from GW_API_KEY: start them with "


def helper_note(*binaries: str) -> str:
    """The switch note for the agents that read the key from its variable: one pasteable command each."""
    return HELPER_NOTE + ", ".join(f"`agentcfg exec gw -- {b}`" for b in binaries)


def run(home, *args: str, input: str = "", check: int | None = 0, **extra_env: str) -> subprocess.CompletedProcess:
    """`agentcfg ARGS` in the test HOME with `input` on stdin (bytes as given: no newline translation)."""
    result = subprocess.run(
        [AGENTCFG, *args],
        input=input.encode("utf-8"),
        env={**home.env, **extra_env},
        capture_output=True,
        timeout=60,
    )
    done = subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode("utf-8"), result.stderr.decode("utf-8")
    )
    if check is not None:
        assert done.returncode == check, (done.returncode, done.stdout, done.stderr)
    return done


def set_key(home, name: str = "taotoken", value: str = KEY, **extra_env: str) -> subprocess.CompletedProcess:
    return run(home, "key", "set", name, input=value + "\n", **extra_env)


def store(keyring_file: Path, name: str = "taotoken", value: str = KEY) -> None:
    """Put a key straight into the FileKeyring, for tests whose subject is not `key set`."""
    keyring_file.write_text(json.dumps({f"agentcfg/{name}": value}))


def helper_argv(profile: str) -> list[str]:
    """The command agentcfg hands an agent that prints `profile`'s key: this interpreter's agentcfg, isolated."""
    return [*self_command(), "key", "get", profile]


def add_gw(home) -> None:
    """The profile `agentcfg profile add gw ... --key-env GW_API_KEY` writes, without running it."""
    home.write(".config/agentcfg/profiles/gw.toml", GW_PROFILE)


def assert_clean_error(result, *words: str, status: int = 2) -> None:
    assert result.returncode == status, (result.returncode, result.stdout, result.stderr)
    assert result.stderr.startswith("agentcfg: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, (word, result.stderr)


def files_holding(root: Path, secret: str) -> list[str]:
    """Every file under `root` (agentcfg's state included) whose bytes contain `secret`."""
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and secret.encode() in p.read_bytes()
    )


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def bin_dir(home) -> Path:
    return Path(home.env["PATH"].split(os.pathsep)[0])


def fake_codex(home, version: str) -> None:
    """A `codex` on PATH that only answers --version (the script's size differs per version)."""
    path = bin_dir(home) / "codex"
    path.write_text(f"#!/bin/sh\n# fake codex {version}{'.' * len(version)}\necho 'codex-cli {version}'\n")
    path.chmod(0o755)


# -- key set / get ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("ending", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_key_set_from_stdin_stores_and_get_prints_only_the_key(home, keyring_file, ending):
    stored = run(home, "key", "set", "taotoken", input=KEY + ending)
    assert stored.stdout == f"Stored the key for taotoken in the {FILE_KEYRING} (…cdef).\n"
    assert stored.stderr == ""
    assert json.loads(keyring_file.read_text()) == {"agentcfg/taotoken": KEY, **TAOTOKEN_BOUND}

    got = run(home, "key", "get", "taotoken")
    assert got.stdout == KEY + "\n"
    assert got.stderr == ""


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("\n", "the key is empty"),
        ("sk-abcd efgh0123456789\n", "whitespace"),
        ("sk-abcdefgh0123456789 \n", "whitespace"),
        ('"sk-abcdefgh0123456789"\n', "quotes"),
        ("Bearer sk-abcdefgh0123456789\n", "Bearer"),
    ],
    ids=["empty", "inner-space", "trailing-space", "quotes", "bearer"],
)
def test_key_set_refuses_a_value_that_is_not_a_key_alone(home, keyring_file, value, reason):
    result = run(home, "key", "set", "taotoken", input=value, check=2)
    assert_clean_error(result, reason)
    first, *rest = result.stderr.splitlines()
    assert first.startswith("agentcfg: error: not storing the key for taotoken: ") and reason in first
    assert len(rest) <= 1  # the reason on one line, at most a hint below it
    assert result.stdout == ""
    assert "efgh0123456789" not in result.stderr  # the value is not echoed back
    assert not keyring_file.exists()  # nothing stored


def test_key_set_json_gives_the_tail_and_never_the_key(home, keyring_file):
    result = run(home, "key", "set", "taotoken", "--json", input=KEY + "\n")
    assert json.loads(result.stdout) == {
        "profile": "taotoken",
        "backend": FILE_KEYRING,
        "stored": True,
        "tail": "…cdef",
    }
    assert KEY not in result.stdout + result.stderr


def test_key_set_again_rotates_and_the_keyring_wins_over_an_exported_key(home, keyring_file):
    store(keyring_file, value=KEY)
    rotated = set_key(home, value=NEW_KEY, TAOTOKEN_API_KEY=KEY)
    assert rotated.stdout == f"Stored the key for taotoken in the {FILE_KEYRING} (…3210).\n"
    assert rotated.stderr == (
        "note: TAOTOKEN_API_KEY in this shell holds another key; `agentcfg exec` uses the keyring's\n"
    )
    for secret in (KEY, NEW_KEY):
        assert secret not in rotated.stdout + rotated.stderr
    assert json.loads(keyring_file.read_text()) == {"agentcfg/taotoken": NEW_KEY, **TAOTOKEN_BOUND}
    got = run(home, "key", "get", "taotoken", TAOTOKEN_API_KEY=KEY)
    assert (got.stdout, got.stderr) == (NEW_KEY + "\n", "")


@pytest.mark.parametrize("command", ["set", "get"])
def test_key_commands_refuse_a_keyless_profile(home, keyring_file, command):
    result = run(home, "key", command, "local", input=KEY + "\n", check=2)
    assert_clean_error(
        result,
        "profile 'local' needs no key (it has no key_env)",
        "`agentcfg profile set local key_env=LOCAL_API_KEY && agentcfg key set local`",
    )
    assert result.stdout == ""
    assert not keyring_file.exists()


def test_key_set_suggests_for_an_unknown_profile(home, keyring_file):
    result = run(home, "key", "set", "taotokn", input=KEY + "\n", check=2)
    assert_clean_error(result, "unknown profile 'taotokn'. Did you mean 'taotoken'?", "agentcfg profile list")
    assert result.stdout == ""
    assert not keyring_file.exists()


def test_key_get_with_nothing_stored_fails_unless_the_key_is_exported(home, keyring_file):
    missing = run(home, "key", "get", "taotoken", check=4)  # Exit.NO_KEY
    assert missing.stderr.startswith(f"agentcfg: error: no key stored for profile 'taotoken' in the {FILE_KEYRING}")
    assert "`agentcfg key set taotoken`" in missing.stderr
    assert missing.stdout == ""

    fallback = run(home, "key", "get", "taotoken", TAOTOKEN_API_KEY=KEY)
    assert (fallback.stdout, fallback.stderr) == (KEY + "\n", "")


# -- key list / rm ----------------------------------------------------------------------------------------


def test_key_list_text_and_json_show_masked_tails(home, keyring_file):
    store(keyring_file)
    text = run(home, "key", "list")
    assert text.stdout == (
        f"keyring: {FILE_KEYRING}\n"
        "\n"
        "PROFILE   VARIABLE          KEYRING       IN ENVIRONMENT\n"
        "local     -                 not needed    -\n"
        "taotoken  TAOTOKEN_API_KEY  stored …cdef  -\n"
    )
    listed = run(home, "key", "list", "--json", TAOTOKEN_API_KEY=NEW_KEY)
    assert json.loads(listed.stdout) == {
        "backend": FILE_KEYRING,
        "backend_class": FILE_KEYRING,
        "available": True,
        "reason": None,
        "profiles": [
            {
                "profile": "local",
                "key_env": None,
                "stored": None,
                "tail": None,
                "in_environment": False,
                "bound_to": None,
            },
            {
                "profile": "taotoken",
                "key_env": "TAOTOKEN_API_KEY",
                "stored": True,
                "tail": "…cdef",
                "in_environment": True,
                "bound_to": None,  # stored before keys were bound (straight into the FileKeyring)
            },
        ],
    }
    for result in (text, listed):
        assert KEY not in result.stdout + result.stderr and NEW_KEY not in result.stdout + result.stderr


def test_key_rm_removes_and_a_second_rm_says_nothing_was_stored(home, keyring_file):
    store(keyring_file)
    removed = run(home, "key", "rm", "taotoken")
    assert removed.stdout == f"Removed the key for taotoken from the {FILE_KEYRING}.\n"
    assert json.loads(keyring_file.read_text()) == {}
    assert run(home, "key", "get", "taotoken", check=4).stdout == ""  # Exit.NO_KEY

    again = run(home, "key", "rm", "taotoken")
    assert again.stdout == f"No key was stored for taotoken in the {FILE_KEYRING}; nothing to remove.\n"
    assert json.loads(run(home, "key", "rm", "taotoken", "--json").stdout) == {
        "profile": "taotoken",
        "backend": FILE_KEYRING,
        "removed": False,
    }
    store(keyring_file)
    assert json.loads(run(home, "key", "rm", "taotoken", "--json").stdout)["removed"] is True
    assert json.loads(keyring_file.read_text()) == {}


# -- keyring backends that cannot be used ---------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("key", "set", "taotoken"),
        ("key", "get", "taotoken"),
        ("key", "rm", "taotoken"),
        ("exec", "taotoken", "--", "true"),
        ("env", "taotoken"),
    ],
    ids=["set", "get", "rm", "exec", "env"],  # key list lists without a keyring: tests/cli/test_keys.py
)
def test_no_backend_every_key_command_names_the_ways_out(home, args):
    # get, exec, env: the key is neither stored nor exported, as switch's exit 4 means; set, rm: refused
    expected = 4 if args[0] in ("exec", "env") or args[:2] == ("key", "get") else 2
    result = run(home, *args, input=KEY + "\n", check=expected, **NO_BUS)
    assert_clean_error(
        result,
        "no usable keyring",
        "fail.Keyring",
        "gnome-keyring",
        "PYTHON_KEYRING_BACKEND",
        "--store-key-in-files",
        status=expected,
    )
    assert result.stdout == ""
    assert KEY not in result.stderr


def test_no_backend_message_shows_the_backend_class_to_export(home):
    result = run(home, "key", "get", "taotoken", check=4, **NO_BUS)
    assert "`export PYTHON_KEYRING_BACKEND=keyrings.cryptfile.cryptfile.CryptFileKeyring`" in result.stderr


def test_no_backend_exec_and_env_use_the_exported_key_with_a_note(home):
    executed = run(
        home, "exec", "taotoken", "--", "sh", "-c", 'printf %s "$TAOTOKEN_API_KEY"', TAOTOKEN_API_KEY=KEY, **NO_BUS
    )
    assert executed.stdout == KEY
    assert executed.stderr.startswith("note: using TAOTOKEN_API_KEY from your environment (no usable keyring")
    assert KEY not in executed.stderr

    printed = run(home, "env", "taotoken", "--shell", "bash", TAOTOKEN_API_KEY=KEY, **NO_BUS)
    assert printed.stdout == f"export AGENTCFG_PROFILE=taotoken\nexport TAOTOKEN_API_KEY={KEY}\n"
    assert "note: using TAOTOKEN_API_KEY from your environment" in printed.stderr
    assert KEY not in printed.stderr


def test_backend_naming_a_missing_module_cannot_be_used(home, keyring_file):
    result = run(home, "key", "get", "taotoken", check=4, PYTHON_KEYRING_BACKEND="tests.no_such_module.Keyring")
    assert_clean_error(
        result, "the keyring backend you chose cannot be used", "No module named", "--store-key-in-files", status=4
    )
    assert result.stdout == ""


def test_low_priority_backend_is_used_when_chosen_explicitly(home, keyring_file):
    chosen = {"PYTHON_KEYRING_BACKEND": "tests.fake_keyring.LowPriorityKeyring"}
    stored = set_key(home, **chosen)
    assert stored.stdout == "Stored the key for taotoken in the tests.fake_keyring.LowPriorityKeyring (…cdef).\n"
    assert run(home, "key", "get", "taotoken", **chosen).stdout == KEY + "\n"


@pytest.mark.parametrize(
    ("backend", "extra", "present", "absent"),
    [
        ("LockedKeyring", {}, ["is locked", "no DISPLAY", "gnome-keyring-daemon --replace --unlock"], ["denied"]),
        ("LockedKeyring", {"DISPLAY": ":99"}, ["is locked and unlocking it was denied"], ["gnome-keyring-daemon"]),
        ("KeychainDeniedKeyring", {}, ["unlocking it was denied"], ["gnome-keyring-daemon"]),
    ],
    ids=["locked-headless", "locked-with-display", "keychain-denied"],
)
def test_locked_or_denied_keyring_says_which(home, keyring_file, backend, extra, present, absent):
    result = run(
        home, "key", "get", "taotoken", check=2, PYTHON_KEYRING_BACKEND=f"tests.fake_keyring.{backend}", **extra
    )
    assert_clean_error(result, *present)
    assert result.stdout == ""
    for word in absent:
        assert word not in result.stderr


# -- exec ------------------------------------------------------------------------------------------------


def test_exec_gives_the_child_the_stored_key_and_the_profile(home, keyring_file):
    store(keyring_file)
    result = run(home, "exec", "taotoken", "--", "sh", "-c", 'printf "%s|%s" "$TAOTOKEN_API_KEY" "$AGENTCFG_PROFILE"')
    assert (result.stdout, result.stderr) == (f"{KEY}|taotoken", "")


def test_exec_passes_the_exit_status_through(home, keyring_file):
    run(home, "exec", "taotoken", "--", "sh", "-c", "exit 7", check=7, TAOTOKEN_API_KEY=KEY)


def test_exec_replaces_agentcfg_so_a_signal_reaches_the_caller(home, keyring_file):
    result = run(home, "exec", "taotoken", "--", "sh", "-c", "kill -TERM $$", check=None, TAOTOKEN_API_KEY=KEY)
    assert result.returncode == -15, (result.returncode, result.stderr)


def test_exec_passes_stdin_through(home, keyring_file):
    text = "line one\nline two\r\nno newline"
    result = run(home, "exec", "taotoken", "--", "cat", input=text, TAOTOKEN_API_KEY=KEY)
    assert (result.stdout, result.stderr) == (text, "")


def test_exec_command_not_found_and_not_executable(home, keyring_file, tmp_path):
    missing = run(home, "exec", "taotoken", "--", "no-such-cmd", check=127, TAOTOKEN_API_KEY=KEY)
    assert missing.stderr.startswith("agentcfg: error: command not found: no-such-cmd")
    plain = tmp_path / "not-executable"
    plain.write_text("#!/bin/sh\necho ran\n")
    plain.chmod(0o644)
    refused = run(home, "exec", "taotoken", "--", str(plain), check=126, TAOTOKEN_API_KEY=KEY)
    assert refused.stderr.startswith(f"agentcfg: error: cannot run {plain}: permission denied")
    assert refused.stdout == "" and "Traceback" not in missing.stderr + refused.stderr


def test_exec_keyless_profile_sets_no_key_and_needs_no_keyring(home):
    result = run(home, "exec", "local", "--", "sh", "-c", "echo ok; env", **NO_BUS)
    lines = result.stdout.splitlines()
    assert lines[0] == "ok"
    assert "AGENTCFG_PROFILE=local" in lines
    assert not [line for line in lines if line.split("=", 1)[0].endswith(("_API_KEY", "_TOKEN"))]
    assert result.stderr == ""


@pytest.mark.parametrize(
    "args",
    [
        ("--", "printf", "%s|", "--flag", "-x", "--help", "--", "y"),
        ("printf", "%s|", "--flag", "-x", "--help", "--", "y"),
    ],
    ids=["with-separator", "without-separator"],
)
def test_exec_passes_arguments_after_the_command_unchanged(home, keyring_file, args):
    result = run(home, "exec", "taotoken", *args, TAOTOKEN_API_KEY=KEY)
    assert (result.stdout, result.stderr) == ("--flag|-x|--help|--|y|", "")


# -- env -------------------------------------------------------------------------------------------------


def test_env_prints_exactly_the_assignments_for_each_shell(home, keyring_file):
    store(keyring_file)
    default = run(home, "env", "taotoken", SHELL="/bin/bash")
    assert (default.stdout, default.stderr) == (
        f"export AGENTCFG_PROFILE=taotoken\nexport TAOTOKEN_API_KEY={KEY}\n",
        "",
    )
    fish = run(home, "env", "taotoken", "--shell", "fish", SHELL="/bin/bash")
    assert fish.stdout == f"set -gx AGENTCFG_PROFILE 'taotoken';\nset -gx TAOTOKEN_API_KEY '{KEY}';\n"
    powershell = run(home, "env", "taotoken", "--shell", "powershell", SHELL="/bin/bash")
    assert powershell.stdout == f"$env:AGENTCFG_PROFILE = 'taotoken'\n$env:TAOTOKEN_API_KEY = '{KEY}'\n"


def test_env_output_evaluated_by_bash_sets_the_variable(home, keyring_file):
    tricky = "sk-$(id)|x;y&z*~#!\\w{a,b}<c>0123"  # a key check_value accepts, full of shell syntax
    script = f'eval "$({shlex.quote(AGENTCFG)} env taotoken)" && printf "%s|%s" "$AGENTCFG_PROFILE" "$TAOTOKEN_API_KEY"'
    result = subprocess.run(
        ["/bin/bash", "-c", script],
        env={**home.env, "SHELL": "/bin/bash", "TAOTOKEN_API_KEY": tricky},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, f"taotoken|{tricky}", "")


# -- switch: the key stays out of files -------------------------------------------------------------------


def test_switch_after_key_set_writes_no_key_and_agents_fetch_or_read_it(home, keyring_file):
    run(
        home,
        "profile",
        "add",
        "gw",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--anthropic-base-url",
        "http://127.0.0.1:9",
        "--model",
        "m",
        "--key-env",
        "GW_API_KEY",
    )
    set_key(home, "gw", GW_KEY)
    first = run(home, "switch", "gw", "--all")
    assert "note: claude fetches the key from the keyring by itself (`agentcfg key get gw`)\n" in first.stderr
    readers = ("codex", "qwen", "opencode", "droid")  # not copilot: no file of it can name a variable (its own note)
    assert f"note: {', '.join(readers)} {helper_note(*readers)}" in first.stderr
    assert "Copilot CLI takes a provider's key only in plaintext" in first.stderr
    assert "no key stored" not in first.stderr
    assert GW_KEY not in first.stdout + first.stderr
    assert files_holding(home.root, GW_KEY) == []

    claude = json.loads(home.read(".claude/settings.json"))
    assert claude["apiKeyHelper"] == shlex.join(helper_argv("gw"))
    assert not {"ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"} & set(claude["env"])
    helper = subprocess.run(
        ["sh", "-c", claude["apiKeyHelper"]], env=home.env, capture_output=True, text=True, timeout=60
    )
    assert (helper.returncode, helper.stdout) == (0, GW_KEY + "\n")
    opencode = json.loads(home.read(".config/opencode/opencode.json"))
    assert opencode["provider"]["agentcfg-gw"]["options"]["apiKey"] == "{env:GW_API_KEY}"
    qwen = json.loads(home.read(".qwen/settings.json"))
    assert qwen["modelProviders"]["openai"][0]["envKey"] == "GW_API_KEY"
    assert "OPENAI_API_KEY" not in home.read(".qwen/.env")
    provider = tomllib.loads(home.read(".codex/config.toml"))["model_providers"]["agentcfg-gw"]
    assert provider["env_key"] == "GW_API_KEY"
    assert "auth" not in provider and "experimental_bearer_token" not in provider

    fake_codex(home, "0.171.0")  # runs an auth command
    second = run(home, "switch", "gw", "--all")
    assert "note: codex, claude fetch the key from the keyring by itself" in second.stderr
    assert f"note: qwen, opencode, droid {helper_note('qwen', 'opencode', 'droid')}" in second.stderr
    provider = tomllib.loads(home.read(".codex/config.toml"))["model_providers"]["agentcfg-gw"]
    assert provider["auth"] == {"command": helper_argv("gw")[0], "args": helper_argv("gw")[1:]}
    assert "env_key" not in provider and "experimental_bearer_token" not in provider
    fetched = subprocess.run(
        [provider["auth"]["command"], *provider["auth"]["args"]],
        env=home.env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert (fetched.returncode, fetched.stdout) == (0, GW_KEY + "\n")

    fake_codex(home, "0.118.0")  # before the auth command existed
    third = run(home, "switch", "gw", "--all")
    assert f"note: {', '.join(readers)} {helper_note(*readers)}", (
        "note: codex, qwen, opencode, droid {helper_note('codex', 'qwen', 'opencode', 'droid')}" in third.stderr
    )
    provider = tomllib.loads(home.read(".codex/config.toml"))["model_providers"]["agentcfg-gw"]
    assert provider["env_key"] == "GW_API_KEY" and "auth" not in provider
    assert files_holding(home.root, GW_KEY) == []
    assert GW_KEY not in second.stdout + second.stderr + third.stdout + third.stderr


def test_switch_with_no_key_stored_says_how_to_store_it(home, keyring_file):
    add_gw(home)
    result = run(home, "switch", "gw", "--agent", "codex", check=4)
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: ") and "no key" in line]
    assert len(notes) == 1 and " gw " in notes[0] and notes[0].endswith("run `agentcfg key set gw`"), result.stderr


def test_dry_run_diff_shows_the_key_helper_command_unmasked(home, keyring_file):
    add_gw(home)  # the shape masker once printed `"apiKeyHelper": "**** key get gw"` here
    result = run(home, "switch", "gw", "--agent", "claude", "--dry-run", check=4)  # no key stored
    assert f'+  "apiKeyHelper": {json.dumps(shlex.join(helper_argv("gw")))}' in result.stdout


# -- switch --store-key-in-files ------------------------------------------------------------------------------

SEEDED = {
    ".codex/config.toml": 'approval_policy = "on-request"\n',
    ".qwen/.env": "# my qwen settings\n",
    ".qwen/settings.json": '{"ui": {"theme": "GitHub"}}\n',
    ".config/opencode/opencode.json": '{"theme": "tokyonight"}\n',
    ".claude/settings.json": '{"env": {"DISABLE_TELEMETRY": "1"}}\n',
}


def test_store_key_in_files_writes_private_files_and_never_prints_the_key(home, keyring_file):
    add_gw(home)
    for relative, text in SEEDED.items():
        home.write(relative, text).chmod(0o644)
    start = home.snapshot()
    set_key(home, "gw", GW_KEY)

    preview = run(home, "switch", "gw", "--all", "--store-key-in-files", "--dry-run")
    assert "+experimental_bearer_token = " in preview.stdout and "****" in preview.stdout
    assert home.snapshot() == start
    switched = run(home, "switch", "gw", "--all", "--store-key-in-files", "--json")
    data = json.loads(switched.stdout)
    assert data["changed"] is True
    assert any("the key is in the agents' files now (mode 0600)" in n for n in data["notes"])
    for result in (preview, switched):
        assert GW_KEY not in result.stdout + result.stderr

    provider = tomllib.loads(home.read(".codex/config.toml"))["model_providers"]["agentcfg-gw"]
    assert provider["experimental_bearer_token"] == GW_KEY
    assert "env_key" not in provider and "auth" not in provider
    options = json.loads(home.read(".config/opencode/opencode.json"))["provider"]["agentcfg-gw"]["options"]
    assert options["apiKey"] == GW_KEY
    assert f"OPENAI_API_KEY={GW_KEY}" in home.read(".qwen/.env").splitlines()
    claude = json.loads(home.read(".claude/settings.json"))
    assert claude["env"]["ANTHROPIC_AUTH_TOKEN"] == GW_KEY and "apiKeyHelper" not in claude
    assert json.loads(home.read(".copilot/providers.json"))["providers"][0]["apiKey"] == GW_KEY
    holding = [".codex/config.toml", ".config/opencode/opencode.json", ".qwen/.env", ".claude/settings.json"]
    holding.append(".cline/data/settings/providers.json")  # cline's apiKey, as asked
    holding.append(".copilot/providers.json")
    holding.append(".factory/settings.json")  # Droid's entry: "apiKey" is the key itself
    # and the Codex profile file of the profile switched to (`codex --profile agentcfg-gw`), as asked
    holding.append(".codex/agentcfg-gw.config.toml")
    assert files_holding(home.root, GW_KEY) == sorted(holding)
    assert {r: mode(home.path(r)) for r in holding} == dict.fromkeys(holding, 0o600)
    assert mode(home.path(".qwen/settings.json")) == 0o644  # holds no key: its mode is kept

    manifests = list(home.path(".config/agentcfg/state").rglob("manifest.json"))
    assert manifests and not [m for m in manifests if GW_KEY.encode() in m.read_bytes()]

    status_text = run(home, "status")
    flagged = {line.split(":")[0] for line in status_text.stdout.splitlines() if "plaintext" in line}
    assert flagged == {"codex", "qwen", "opencode", "claude", "cline", "copilot", "droid"}, status_text.stdout
    status = {a["name"]: a for a in json.loads(run(home, "status", "--json").stdout)["agents"]}
    status = {name: a for name, a in status.items() if a["configured"]}  # (Gemini CLI: a route only, left alone)
    assert {name: a["key_in_file"] for name, a in status.items()} == dict.fromkeys(status, True)
    assert {a["profile"] for a in status.values()} == {"gw"}

    after = home.snapshot()
    again = run(home, "switch", "gw", "--all", "--store-key-in-files")
    assert "nothing to change" in again.stdout
    assert home.snapshot() == after
    assert GW_KEY not in again.stdout + again.stderr + status_text.stdout + status_text.stderr

    run(home, "rollback")
    assert home.snapshot() == start
    assert files_holding(home.root, GW_KEY) == []  # the journal's copies went with the entry


def test_store_key_in_files_from_the_environment_without_a_keyring(home):
    add_gw(home)
    result = run(home, "switch", "gw", "--agent", "codex", "--store-key-in-files", GW_API_KEY=GW_KEY, **NO_BUS)
    assert "note: using GW_API_KEY from your environment (no usable keyring" in result.stderr
    assert GW_KEY not in result.stdout + result.stderr
    provider = tomllib.loads(home.read(".codex/config.toml"))["model_providers"]["agentcfg-gw"]
    assert provider["experimental_bearer_token"] == GW_KEY
    assert mode(home.path(".codex/config.toml")) == 0o600

    before = home.snapshot()
    refused = run(home, "switch", "gw", "--agent", "codex", "--store-key-in-files", check=2, **NO_BUS)
    assert_clean_error(refused, "no usable keyring", "--store-key-in-files")
    assert home.snapshot() == before


def test_switching_back_to_the_keyring_leaves_no_unflagged_plaintext_key(home, keyring_file):
    add_gw(home)
    set_key(home, "gw", GW_KEY)
    run(home, "switch", "gw", "--agent", "qwen", "--store-key-in-files")
    run(home, "switch", "gw", "--agent", "qwen")
    qwen = next(a for a in json.loads(run(home, "status", "--json").stdout)["agents"] if a["name"] == "qwen")
    assert GW_KEY not in home.read(".qwen/.env") or qwen["key_in_file"]


# -- an exported key never shows in output ---------------------------------------------------------------------


def test_exported_key_is_scrubbed_from_every_output(home, keyring_file):
    exported = {"TAOTOKEN_API_KEY": KEY}
    outputs = [
        run(home, "status", "--json", **exported),
        run(home, "profile", "show", "taotoken", "--json", **exported),
        run(home, "switch", "taotoken", "--all", "--dry-run", **exported),
        run(home, "switch", "taotoken", "--all", "--dry-run", "--store-key-in-files", **exported),
        run(home, "key", "get", "nope", check=2, **exported),
    ]
    assert json.loads(outputs[1].stdout)["key_in_environment"] is True
    assert "+experimental_bearer_token = " in outputs[3].stdout  # the diff that would show the key
    assert outputs[4].stdout == "" and "unknown profile 'nope'" in outputs[4].stderr
    for result in outputs:
        assert KEY not in result.stdout + result.stderr, result.args
