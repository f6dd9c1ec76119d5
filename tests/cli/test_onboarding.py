"""`agentcfg init` and `profile import` (agentcfg/cli/onboarding.py): read and show first, check every input
and the keyring once, then ask, then write; exit statuses; `init --json`; Claude Code without ANTHROPIC_MODEL.

Every run gets a temporary HOME (tests/conftest.py); keys live in tests/fake_keyring.py's FileKeyring outside
it; every URL is on 127.0.0.1 (ports nothing answers on, or a FaultServer).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from agentcfg.errors import Exit
from tests.conftest import AGENTCFG, Home
from tests.fault_server import MODEL, FaultServer
from tests.test_onboard import (
    GW_A,
    KEY_A,
    KEY_B,
    MODEL_A,
    PROFILES,
    QWEN_ENV,
    Terminal,
    every_file,
    keyring,
    run,
    seed,
)

NO_KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
GW_ROOT = "http://127.0.0.1:9/anthropic"  # discard port: nothing answers, nothing is sent by an import
TOKEN = "sk-claude-gw-0123456789abcdef"
SLOT_MODEL = "glm-4.6"


@pytest.fixture
def local_server(home: Home):
    """The user's `local` profile: a healthy FaultServer on loopback (as in tests/test_onboard.py)."""
    with FaultServer() as server:
        home.write(
            f"{PROFILES}/local.toml",
            f'base_url = "{server.base_url}"\nanthropic_base_url = "{server.root}"\nmodel = "{MODEL}"\n'
            "context_window = 131072\n",
        )
        yield server


@pytest.fixture
def messy(home: Home, keyring_file: Path, local_server: FaultServer) -> Home:
    seed(home)
    return home


def everything(home: Home, keyring_file: Path | None = None) -> dict[str, bytes]:
    """Every file under HOME, agentcfg's config dir included, and the keyring's store outside it."""
    files = every_file(home.root)
    if keyring_file is not None and keyring_file.exists():
        files["<keyring>"] = keyring_file.read_bytes()
    return files


def claude_settings(home: Home, **extra_env: str) -> None:
    """Claude Code pointed at a gateway with a plaintext token, and no ANTHROPIC_MODEL."""
    settings = {"env": {"ANTHROPIC_BASE_URL": GW_ROOT, "ANTHROPIC_AUTH_TOKEN": TOKEN, **extra_env}}
    home.write(".claude/settings.json", json.dumps(settings, indent=2) + "\n")


def gateway_profile(home: Home) -> None:
    """taotoken, overridden to a loopback port, so that the doctor run that ends init sends nothing off the box."""
    home.write(
        f"{PROFILES}/taotoken.toml",
        'base_url = "http://127.0.0.1:9/v1"\nmodel = "deepseek-chat"\nkey_env = "TAOTOKEN_API_KEY"\n',
    )


# -- (b) validation first: an unknown profile writes nothing ----------------------------------------------------


def test_init_with_an_unknown_profile_writes_nothing(home: Home, keyring_file: Path):
    seed(home)  # plaintext keys in qwen's .env, opencode and Claude: main imported and moved them before refusing
    before = everything(home, keyring_file)
    assert not home.path(".config/agentcfg").exists()
    result = run(home, "init", "--profile", "nope", "--yes", check=2)
    assert "unknown profile 'nope'" in result.stderr
    assert "local-9" in result.stderr  # the names the import would add count as known, and are listed
    assert "Traceback" not in result.stderr
    assert everything(home, keyring_file) == before
    assert not home.path(".config/agentcfg").exists()  # not even agentcfg's config dir
    assert not home.path(".qwen/settings.json").exists()


def test_init_unknown_profile_json_is_the_error_document(home: Home, keyring_file: Path):
    seed(home)
    before = everything(home, keyring_file)
    result = run(home, "init", "--profile", "nope", "--yes", "--json", check=2)
    document = json.loads(result.stdout)
    assert document["exit"] == 2 and "unknown profile 'nope'" in document["error"]
    assert everything(home, keyring_file) == before


def test_init_accepts_a_profile_the_import_adds(messy: Home, keyring_file: Path):
    # local-9 does not exist before the run: the import creates it, so --profile may name it.
    result = run(messy, "init", "--profile", "local-9", "--yes")
    assert "4. switched to local-9: " in result.stdout
    assert "3. local-9: key already stored" in result.stdout  # the key init itself moved into the keyring
    assert keyring(keyring_file)["agentcfg/local-9"] == KEY_A


# -- (c) the keyring, once, before anything is read, asked or written ---------------------------------------------


def test_no_keyring_with_key_stdin_is_refused_before_stdin_is_read(home: Home, tmp_path: Path):
    home.write(".qwen/.env", QWEN_ENV)
    gateway_profile(home)
    before = everything(home)
    # stdin stays open and empty: an init that read it would wait there until the timeout.
    process = subprocess.Popen(
        [AGENTCFG, "init", "--profile", "taotoken", "--key-stdin", "--yes"],
        env={**home.env, **NO_KEYRING},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert process.returncode == 2, (out, err)
    assert "cannot store the key for taotoken: no usable keyring" in err
    assert "Traceback" not in err
    assert everything(home) == before
    assert not home.path(".config/agentcfg/state").exists()


def test_no_keyring_on_a_terminal_says_so_first_never_offers_a_move_nor_asks_for_a_key(home: Home):
    home.write(".qwen/.env", QWEN_ENV)
    gateway_profile(home)
    before = everything(home)
    term = Terminal(home, "init", "--agents", "qwen")
    term.process.args  # noqa: B018
    try:
        term.expect("Switch to which profile?", timeout=30)
        assert "no usable keyring" in term.text  # said before the first question
        assert "Move the key" not in term.text
        assert everything(home) == before  # nothing written while it waits for an answer
        term.send("taotoken")
        status = term.finish()
    finally:
        term.close()
    assert status == Exit.NOTHING, term.text  # qwen, the one agent, keeps its plaintext key: nothing switched
    assert "Key for taotoken" not in term.text  # no key typed only to be lost
    assert "--store-key-in-files" in term.text and "export TAOTOKEN_API_KEY" in term.text  # what can work here


# -- (d) the questions: what the profile is, then whether to move its key; nothing written before the answers -----


def test_the_move_question_says_what_the_profile_is_and_comes_before_any_write(
    home: Home, keyring_file: Path, local_server
):
    home.write(".qwen/.env", QWEN_ENV)
    term = Terminal(home, "init")
    try:
        asked = term.expect("Move the key into the keyring? [Y/n]: ").decode()
        question = asked.replace("\r\n", "\n").splitlines()[-1]
        assert question.startswith(f"local-9 is {MODEL_A} at {GW_A}; its key is in plaintext in qwen (~/.qwen/.env)")
        assert not home.path(f"{PROFILES}/local-9.toml").exists()  # shown and asked, not written yet
        assert home.read(".qwen/.env") == QWEN_ENV
        term.send("y")
        term.expect("Switch to which profile? (local, local-9, taotoken) [local]: ")
        assert not home.path(f"{PROFILES}/local-9.toml").exists()
        term.send("local")
        assert term.finish() == 0, term.text
    finally:
        term.close()
    assert keyring(keyring_file) == {"agentcfg/local-9": KEY_A}
    shown = term.text.index("2. endpoints the agents already use:")
    assert shown < term.text.index("Move the key")


# -- exit statuses -------------------------------------------------------------------------------------------------


def test_init_with_no_agent_installed_or_configured_ends_nothing(home: Home, keyring_file: Path):
    result = run(home, "init", "--profile", "local", "--yes", check=3)
    assert "5. doctor: no agent was switched; nothing to check" in result.stdout
    assert "no agent is installed or configured, so nothing was switched (exit 3)" in result.stderr


def test_init_switched_to_a_keyed_profile_without_its_key_ends_no_key(home: Home, keyring_file: Path):
    gateway_profile(home)
    result = run(home, "init", "--profile", "taotoken", "--yes", "--agents", "qwen", check=4)
    assert "4. switched to taotoken: qwen" in result.stdout  # the rest was done
    assert "3. no key for taotoken yet: store it with `agentcfg key set taotoken`" in result.stdout
    assert "run `agentcfg key set taotoken`" in result.stderr
    assert home.path(".qwen/.env").exists()


def test_init_doctor_failures_do_not_change_the_status(messy: Home, keyring_file: Path):
    # local-9 is a port nothing answers on: doctor fails, init still did what was asked.
    result = run(messy, "init", "--profile", "local-9", "--yes", "--agents", "qwen")
    assert re.search(r"^5\. doctor: [1-9]\d* failed", result.stdout, re.MULTILINE), result.stdout


# -- init --json ---------------------------------------------------------------------------------------------------


def test_init_json_is_one_document_of_every_step_and_never_a_key(messy: Home, keyring_file: Path, local_server):
    result = run(messy, "init", "--profile", "local", "--yes", "--json")
    document = json.loads(result.stdout)  # one JSON value, nothing else on stdout
    assert document["config_dir"] == str(messy.path(".config/agentcfg"))
    assert [(p["name"], p["created"], p["key_moved"]) for p in document["profiles"]] == [
        ("local-9", True, True),
        ("local-19", True, True),
    ]
    assert document["profile"] == "local"
    assert document["key"] == {"state": "not needed", "key_env": None, "fix": None}
    assert document["switch"]["agents"] == ["qwen", "opencode", "claude"]
    assert document["switch"]["skipped"]["codex"].startswith("not installed")
    assert document["switch"]["journal_entry"]
    assert document["doctor"]["fail"] == 0 and document["doctor"]["pass"] > 0 and document["doctor"]["failed"] == []
    assert document["exit"] == 0
    for secret in (KEY_A, KEY_B):
        assert secret not in result.stdout + result.stderr


def test_init_json_no_key_document(home: Home, keyring_file: Path):
    gateway_profile(home)
    document = json.loads(
        run(home, "init", "--profile", "taotoken", "--yes", "--agents", "qwen", "--json", check=4).stdout
    )
    assert document["key"] == {"state": "missing", "key_env": "TAOTOKEN_API_KEY", "fix": "agentcfg key set taotoken"}
    assert document["exit"] == 4


def test_init_json_on_a_terminal_never_prompts(home: Home, keyring_file: Path, local_server):
    home.write(".qwen/.env", QWEN_ENV)
    term = Terminal(home, "init", "--json")
    try:
        status = term.finish(timeout=40)
    finally:
        term.close()
    assert status == 3, term.text  # qwen keeps its plaintext key (no --yes): nothing switched
    assert "?" not in term.text.split("{", 1)[0].replace("(add --yes", "")  # no question before the document
    assert "[Y/n]" not in term.text and "Switch to which profile" not in term.text


# -- Claude Code without ANTHROPIC_MODEL ------------------------------------------------------------------------------


def test_import_takes_claudes_model_from_its_slots(home: Home, keyring_file: Path):
    claude_settings(home, ANTHROPIC_DEFAULT_SONNET_MODEL=SLOT_MODEL, ANTHROPIC_SMALL_FAST_MODEL="tiny")
    data = json.loads(run(home, "profile", "import", "--yes", "--json").stdout)
    assert [
        (p["name"], p["model"], p["anthropic_base_url"], p["found_in"], p["key_moved"]) for p in data["profiles"]
    ] == [("local-9", SLOT_MODEL, GW_ROOT, ["claude"], True)]
    assert keyring(keyring_file) == {"agentcfg/local-9": TOKEN}
    assert TOKEN not in messy_text(home)


def test_import_takes_claudes_model_from_its_model_setting(home: Home, keyring_file: Path):
    settings = {"model": "opus", "env": {"ANTHROPIC_BASE_URL": GW_ROOT, "ANTHROPIC_AUTH_TOKEN": TOKEN,
                                         "ANTHROPIC_DEFAULT_OPUS_MODEL": "kimi-k2"}}  # fmt: skip
    home.write(".claude/settings.json", json.dumps(settings))
    data = json.loads(run(home, "profile", "import", "--json").stdout)
    assert [(p["model"], p["key_found"], p["key_moved"]) for p in data["profiles"]] == [("kimi-k2", True, False)]


def test_a_script_skips_claude_without_any_model_with_a_note_in_words(home: Home, keyring_file: Path):
    claude_settings(home)
    before = home.snapshot()
    data = json.loads(run(home, "profile", "import", "--yes", "--json").stdout)
    assert data["profiles"] == []
    (note,) = [n for n in data["notes"] if "names no model" in n]
    assert GW_ROOT in note and "~/.claude/settings.json" in note
    assert "run `agentcfg profile import` on a terminal" in note
    assert home.snapshot() == before
    assert not keyring_file.exists()


def test_a_terminal_asks_claudes_model_then_imports_and_moves_the_token(home: Home, keyring_file: Path):
    claude_settings(home)
    term = Terminal(home, "profile", "import")
    try:
        term.expect(
            f"claude (~/.claude/settings.json) points at {GW_ROOT} but names no model. "
            "Which model id should profile local-9 use? (empty: do not import it): "
        )
        term.send(SLOT_MODEL)
        asked = term.expect("Move the key into the keyring? [Y/n]: ").decode()
        assert f"local-9 is {SLOT_MODEL} at {GW_ROOT}/v1; its key is in plaintext in claude" in asked
        term.send("y")
        assert term.finish() == 0, term.text
    finally:
        term.close()
    shown = json.loads(run(home, "profile", "show", "local-9", "--json").stdout)
    assert (shown["model"], shown["anthropic_base_url"]) == (SLOT_MODEL, GW_ROOT)
    assert keyring(keyring_file) == {"agentcfg/local-9": TOKEN}


# -- status after such an import: every suggested command complete, and one that works --------------------------------


def test_status_suggests_a_complete_command_that_takes_the_token_into_the_keyring(home: Home, keyring_file: Path):
    claude_settings(home)
    run(home, "profile", "import", "--yes")  # a script: the endpoint has no model, so it stays as it was
    status = run(home, "status").stdout
    (note,) = [line for line in status.splitlines() if "plaintext" in line]
    commands = re.findall(r"`([^`]+)`", note)
    for command in commands:
        assert not re.search(r"\b(PROFILE|NAME|URL|ID|MODEL)\b|<|\.\.\.", command), command
    assert commands[0] == "agentcfg profile import"  # `--yes` could not import it: no model to import it with
    assert "on a terminal" in note and "model id" in note
    # ...and that command does it.
    term = Terminal(home, *commands[0].split()[1:])
    try:
        term.expect("(empty: do not import it): ")
        term.send(SLOT_MODEL)
        term.expect("Move the key into the keyring? [Y/n]: ")
        term.send("y")
        assert term.finish() == 0, term.text
    finally:
        term.close()
    after = run(home, "status").stdout
    assert "plaintext" not in after, after
    assert TOKEN not in messy_text(home)


def messy_text(home: Home) -> str:
    """What the agents' live files hold (the journal's backups left out: rollback needs them)."""
    return "".join(
        p.read_text(errors="replace")
        for p in home.root.rglob("*")
        if p.is_file() and "journal" not in p.parts and ".config/agentcfg" not in str(p)
    )


@pytest.mark.parametrize("flag", ["--yes", "--keep-keys"])
def test_import_without_a_keyring_checks_it_once_and_changes_nothing(home: Home, flag: str):
    home.write(".qwen/.env", QWEN_ENV)
    before = home.snapshot()
    data = json.loads(run(home, "profile", "import", flag, "--json", **NO_KEYRING).stdout)
    assert [p["key_moved"] for p in data["profiles"]] == [False]
    assert home.snapshot() == before
    stays = [n for n in data["notes"] if "stays in its file" in n]
    assert len(stays) == (1 if flag == "--yes" else 0)


def test_a_terminal_never_asks_for_the_key_it_is_moving_itself(home: Home, keyring_file: Path):
    home.write(".qwen/.env", QWEN_ENV)
    term = Terminal(home, "init", "--agents", "qwen")
    try:
        term.expect("Move the key into the keyring? [Y/n]: ")
        term.send("y")
        term.expect("Switch to which profile? (local, local-9, taotoken) [local]: ")
        term.send("local-9")
        status = term.finish()
    finally:
        term.close()
    assert status == 0, term.text
    assert "Key for local-9" not in term.text
    assert "3. local-9: key already stored" in term.text
    assert keyring(keyring_file) == {"agentcfg/local-9": KEY_A}


# -- found by the review of issue 15 --------------------------------------------------------------------

FAIL_BACKEND = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


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
