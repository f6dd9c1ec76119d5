"""`agentcfg init` after it moves a plaintext key, and its closing check (issue 27's walkthrough).

qwen-code (like opencode) cannot run a command to fetch a key: once init moves its plaintext key into the
keyring, plain `qwen` has none ("Missing API key"), and init must say what to run instead, or keep the key
where qwen reads it when the user prefers. Init's closing check said "1 failed" where `agentcfg doctor`, run
right after, said "2 failed, 2 warnings": init checked the profile as `exec` would run the agents, doctor
checks the agents as they start now. `--no-check` skips that check.

Every URL is a FaultServer on loopback; keys live in tests/fake_keyring.py's FileKeyring.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.fault_server import FaultServer
from tests.test_onboard import MODEL_A, PROFILES, Terminal, keyring, run

KEY = "sk-gatewayA-0123456789abcdef"


@pytest.fixture
def gateway(home: Home, keyring_file: Path) -> Iterator[FaultServer]:
    """qwen-code and Claude Code set up by hand on one keyed gateway (a FaultServer), the key in plaintext."""
    with FaultServer(key=KEY, model=MODEL_A) as server:
        home.write(".qwen/.env", f"OPENAI_API_KEY={KEY}\nOPENAI_BASE_URL={server.base_url}\nOPENAI_MODEL={MODEL_A}\n")
        settings = {"env": {"ANTHROPIC_BASE_URL": server.root, "ANTHROPIC_AUTH_TOKEN": KEY, "ANTHROPIC_MODEL": MODEL_A}}
        home.write(".claude/settings.json", json.dumps(settings, indent=2) + "\n")
        yield server


def imported_name(server: FaultServer) -> str:
    return f"local-{server.base_url.split(':')[2].split('/')[0]}"  # named after the host: local-PORT


def _check(document: dict) -> dict:
    """What a check reported: the counts and the agents' failing and warning finding ids."""
    findings = document.get("findings")
    if findings is None:  # init's summary of it
        return {
            "counts": {k: document[k] for k in ("fail", "warn", "pass")},
            "problems": sorted(document["failed"] + document.get("warned", [])),
        }
    return {
        "counts": {k: document["summary"][k] for k in ("fail", "warn", "pass")},
        "problems": sorted(f"{f['agent'] or 'server'}: {f['id']}" for f in findings if f["status"] in ("fail", "warn")),
    }


# -- init's check is doctor's ----------------------------------------------------------------------------------


def test_inits_closing_check_is_what_doctor_says_right_after(home: Home, gateway: FaultServer):
    name = imported_name(gateway)
    done = json.loads(run(home, "init", "--profile", name, "--yes", "--json").stdout)
    after = json.loads(run(home, "doctor", "--json", check=None).stdout)
    assert _check(done["doctor"]) == _check(after)
    # and what both say: plain qwen has no key now (the keyring holds it; exec gives it)
    assert "qwen: key-missing" in _check(after)["problems"]


def test_inits_check_of_some_agents_is_doctors_check_of_them(home: Home, gateway: FaultServer):
    name = imported_name(gateway)
    done = run(home, "init", "--profile", name, "--yes", "--agents", "qwen", "--json")
    after = json.loads(run(home, "doctor", "--agent", "qwen", "--json", check=None).stdout)
    assert _check(json.loads(done.stdout)["doctor"]) == _check(after)
    text = run(home, "init", "--profile", name, "--yes", "--agents", "qwen")
    assert "details: agentcfg doctor --agent qwen" in text.stdout


# -- qwen after its key moved ----------------------------------------------------------------------------------


@pytest.mark.parametrize("agents", [(), ("--agents", "claude")], ids=["all", "claude-only"])
def test_init_says_how_to_start_qwen_once_its_key_is_in_the_keyring(
    home: Home, keyring_file: Path, gateway: FaultServer, agents: tuple[str, ...]
):
    """Whether or not init then switches qwen itself (the move did), it says what starts qwen with its key."""
    name = imported_name(gateway)
    result = run(home, "init", "--profile", name, "--yes", *agents)
    assert keyring(keyring_file) == {f"agentcfg/{name}": KEY}
    said = result.stdout + result.stderr
    assert f"agentcfg exec {name} -- qwen" in said, said
    assert f'eval "$(agentcfg env {name})"' in said, said
    assert KEY not in home.read(".qwen/.env")


def test_the_move_question_says_qwen_then_needs_exec_and_no_keeps_its_key(
    home: Home, keyring_file: Path, gateway: FaultServer
):
    name = imported_name(gateway)
    before = home.read(".qwen/.env")
    term = Terminal(home, "init")
    try:
        asked = term.expect("Move the key into the keyring? [Y/n]: ").decode()
        question = " ".join(asked.replace("\r\n", "\n").split())
        assert "qwen cannot fetch a key from the keyring" in question, question
        assert f"`agentcfg exec {name} -- qwen`" in question and "keeps it in qwen's file" in question, question
        term.send("n")
        term.expect(f"Switch to which profile? (local, {name}, taotoken) [local]: ")
        term.send(name)
        term.expect(f"Key for {name} (input hidden): ")  # not moved, so not stored: asked, and left empty here
        term.send("")
        status = term.finish()
    finally:
        term.close()
    assert home.read(".qwen/.env") == before  # the key stays where plain `qwen` reads it
    assert keyring(keyring_file) == {}
    assert status == 3, term.text  # init switched neither (their files keep the key): they work as before
    assert "qwen: skipped, its file holds a plaintext key" in term.text


# -- --no-check ------------------------------------------------------------------------------------------------


def test_init_no_check_sends_nothing_and_says_how_to_check(home: Home, keyring_file: Path):
    (home.root / ".codex").mkdir()  # one agent to switch
    with FaultServer() as server:
        home.write(f"{PROFILES}/local.toml", f'base_url = "{server.base_url}"\nmodel = "M"\ncontext_window = 131072\n')
        result = run(home, "init", "--profile", "local", "--yes", "--agents", "codex", "--no-check")
        assert "5. doctor: not run (--no-check); check with `agentcfg doctor --agent codex`" in result.stdout
        args = ("init", "--profile", "local", "--yes", "--agents", "codex", "--json")
        document = json.loads(run(home, *args, "--no-check").stdout)
        assert document["doctor"] is None and document["checked"] is False
        assert server.requests == []  # no probe, not even to loopback
        checked = json.loads(run(home, *args).stdout)
        assert checked["checked"] is True and checked["doctor"]["pass"] > 0
        assert server.requests != []


def test_init_help_names_no_check(home: Home):
    assert "--no-check" in run(home, "init", "--help").stdout
