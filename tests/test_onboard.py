"""`agentcfg profile import` and `agentcfg init` through the installed console script, in messy HOMEs.

The seeded HOME is what a user who configured each agent by hand has: qwen-code's ~/.qwen/.env with a
plaintext OPENAI_API_KEY for gateway A (beside an unrelated TAVILY_API_KEY), opencode with a provider
of its own for gateway B holding a literal apiKey, Claude Code's settings.json env pointing at
gateway A's Anthropic root with the same key, and no Codex. Every URL is on 127.0.0.1: the gateways
are ports nothing answers on (import sends no request), and `local` is overridden to point at a
FaultServer, so the doctor run that ends `init` probes loopback only and its verdict is known.

Keys live in tests/fake_keyring.py's FileKeyring (outside HOME), so a scan of HOME finds any copy
agentcfg leaves behind; "no keyring" runs have no PYTHON_KEYRING_BACKEND and a dead session bus.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

import pytest
import tomllib

from tests.conftest import AGENTCFG, Home
from tests.fault_server import MODEL, FaultServer

KEY_A = "sk-gatewayA-0123456789abcdef"  # gateway A's key: in qwen's .env and Claude's settings
KEY_B = "sk-gatewayB-fedcba9876543210"  # gateway B's key: in opencode's own provider
TAVILY_LINE = "TAVILY_API_KEY=tvly-dev-4f3e2d1c0b9a8877"  # not a provider key: never touched
GW_A_ROOT = "http://127.0.0.1:9"  # discard port: nothing answers
GW_A = f"{GW_A_ROOT}/v1"
GW_B = "http://127.0.0.1:19/v1"
MODEL_A = "qwen3-coder-plus"
MODEL_B = "glm-4.6"
NO_BUS = {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"}
PROFILES = ".config/agentcfg/profiles"
BACKUP = re.compile(r"^\.config/agentcfg/state/journal/\d{6}/\d+\.bak$")
# `agentcfg doctor`'s own count; its warnings are named (an agent started plainly without the key exec gives)
DOCTOR_OK = re.compile(r"^5\. doctor: 0 failed, \d+ warnings?, [1-9]\d* passed(?:$| \()", re.MULTILINE)

QWEN_ENV = f"""\
# qwen-code: the team gateway
OPENAI_API_KEY={KEY_A}
OPENAI_BASE_URL={GW_A}
OPENAI_MODEL={MODEL_A}
{TAVILY_LINE}
"""
OPENCODE = {
    "$schema": "https://opencode.ai/config.json",
    "theme": "tokyonight",
    "model": f"team/{MODEL_B}",
    "provider": {
        "team": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Team gateway",
            "options": {"baseURL": GW_B, "apiKey": KEY_B},
            "models": {MODEL_B: {"name": "GLM 4.6"}},
        },
        "ollama": {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": "http://127.0.0.1:11434/v1"},
            "models": {"llama3.2": {}},
        },
    },
}
CLAUDE = {
    "env": {
        "ANTHROPIC_BASE_URL": GW_A_ROOT,
        "ANTHROPIC_AUTH_TOKEN": KEY_A,
        "ANTHROPIC_MODEL": MODEL_A,
        "DISABLE_TELEMETRY": "1",
    },
    "permissions": {"allow": ["Bash(git status)"]},
    "includeCoAuthoredBy": False,
}
AGENT_FILES = (".qwen/.env", ".config/opencode/opencode.json", ".claude/settings.json")

IMPORTED_A = {
    "name": "local-9",
    "base_url": GW_A,
    "model": MODEL_A,
    "anthropic_base_url": GW_A_ROOT,
    "key_env": "LOCAL_9_API_KEY",
    "found_in": ["qwen", "claude"],
    "known_as": None,
}
IMPORTED_B = {
    "name": "local-19",
    "base_url": GW_B,
    "model": MODEL_B,
    "anthropic_base_url": None,
    "key_env": "LOCAL_19_API_KEY",
    "found_in": ["opencode"],
    "known_as": None,
}


# -- helpers -----------------------------------------------------------------------------------------


def run(
    home: Home, *args: str, input: str | None = None, check: int | None = 0, timeout: float = 30, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    """`agentcfg ARGS` in the test HOME; stdin is /dev/null (not a terminal) unless `input` is given."""
    stdin = {"input": input.encode("utf-8")} if input is not None else {"stdin": subprocess.DEVNULL}
    result = subprocess.run(
        [AGENTCFG, *args], env={**home.env, **extra_env}, capture_output=True, timeout=timeout, **stdin
    )
    done = subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode("utf-8"), result.stderr.decode("utf-8")
    )
    if check is not None:
        assert done.returncode == check, (done.returncode, done.stdout, done.stderr)
    return done


def run_json(home: Home, *args: str, **extra_env: str):
    return json.loads(run(home, *args, "--json", **extra_env).stdout)


def seed(home: Home) -> None:
    home.write(".qwen/.env", QWEN_ENV)
    home.write(".config/opencode/opencode.json", json.dumps(OPENCODE, indent=2) + "\n")
    home.write(".claude/settings.json", json.dumps(CLAUDE, indent=2) + "\n")


def files_holding(root: Path, secret: str) -> list[str]:
    """Every file under `root` (agentcfg's own state included) whose bytes contain `secret`."""
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and secret.encode() in p.read_bytes()
    )


def every_file(root: Path) -> dict[str, bytes]:
    """Every file under `root`, agentcfg's state included (Home.snapshot leaves that out)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def keyring(path: Path) -> dict[str, str]:
    """The keys in the FileKeyring (the hosts each is bound to, service agentcfg-origins, left out)."""
    entries = json.loads(path.read_text()) if path.exists() else {}
    return {name: value for name, value in entries.items() if not name.startswith("agentcfg-origins/")}


def bound_to(path: Path, profile: str) -> list[str] | None:
    entry = json.loads(path.read_text()).get(f"agentcfg-origins/{profile}") if path.exists() else None
    return json.loads(entry) if entry else None


def agents_by_name(rows: list[dict]) -> dict[str, dict]:
    return {row.get("agent") or row["name"]: row for row in rows}


@pytest.fixture
def local_server(home: Home):
    """The user's `local` profile: a healthy FaultServer on loopback (overrides the built-in localhost:8000)."""
    with FaultServer() as server:
        home.write(
            f"{PROFILES}/local.toml",
            f'description = "vLLM on this machine"\nbase_url = "{server.base_url}"\n'
            f'anthropic_base_url = "{server.root}"\nmodel = "{MODEL}"\ncontext_window = 131072\n',
        )
        yield server


@pytest.fixture
def messy(home: Home, keyring_file: Path, local_server: FaultServer) -> Home:
    seed(home)
    return home


# -- init, the scripted way ---------------------------------------------------------------------------


def test_init_imports_moves_the_keys_switches_and_checks(messy: Home, keyring_file: Path, local_server):
    home = messy
    result = run(home, "init", "--profile", "local", "--yes")
    out = result.stdout.splitlines()
    assert out[:2] == ["1. agentcfg's config: ~/.config/agentcfg", "2. endpoints the agents already use:"]
    # what the machine has, shown before anything is written; then what the import did
    assert out[2] == f"  {'local-9':<14} {MODEL_A} at {GW_A}  (qwen, claude; new · plaintext key found)"
    assert out[3] == f"  {'local-19':<14} {MODEL_B} at {GW_B}  (opencode; new · plaintext key found)"
    assert out[4] == "   added local-9, local-19 · keys moved into the keyring: local-9, local-19"
    assert out[5] == "3. local: needs no key"
    assert out[6] == "4. switched to local: qwen, opencode, claude (undo: agentcfg rollback, again for each key moved)"
    assert out[7].startswith("   codex: skipped, not installed (no `codex` on PATH) and no config file")
    assert DOCTOR_OK.search(result.stdout), result.stdout
    assert [line[:2] for line in out if re.match(r"^\d\. ", line)] == ["1.", "2.", "3.", "4.", "5."]
    for secret in (KEY_A, KEY_B):
        assert secret not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr

    # The imported profiles are what the agents pointed at.
    shown_a = run_json(home, "profile", "show", "local-9")
    assert shown_a == {
        "name": "local-9",
        "base_url": GW_A,
        "model": MODEL_A,
        "anthropic_base_url": GW_A_ROOT,
        "key_env": "LOCAL_9_API_KEY",
        "description": "imported from qwen, claude",
        "source": str(home.path(f"{PROFILES}/local-9.toml")),
        "key_in_environment": False,
    }
    shown_b = run_json(home, "profile", "show", "local-19")
    assert shown_b == {
        "name": "local-19",
        "base_url": GW_B,
        "model": MODEL_B,
        "key_env": "LOCAL_19_API_KEY",
        "description": "imported from opencode",
        "source": str(home.path(f"{PROFILES}/local-19.toml")),
        "key_in_environment": False,
    }
    assert sorted(p.name for p in home.path(PROFILES).iterdir()) == ["local-19.toml", "local-9.toml", "local.toml"]

    # Both keys are in the keyring, and no plaintext copy is left but rollback's backups.
    assert keyring(keyring_file) == {"agentcfg/local-9": KEY_A, "agentcfg/local-19": KEY_B}
    # each moved key is bound to the host the agent used it for (keystore.origin: loopback names are one)
    assert bound_to(keyring_file, "local-9") == [GW_A.removesuffix("/v1").replace("127.0.0.1", "loopback")]
    for secret in (KEY_A, KEY_B):
        holding = files_holding(home.root, secret)
        assert holding, f"no backup holds {secret}: rollback could not bring it back"
        assert all(BACKUP.match(path) for path in holding), holding

    # The user's own content stays.
    qwen_env = home.read(".qwen/.env")
    assert "# qwen-code: the team gateway\n" in qwen_env
    assert TAVILY_LINE + "\n" in qwen_env
    assert "OPENAI_API_KEY=agentcfg-no-key\n" in qwen_env
    opencode = json.loads(home.read(".config/opencode/opencode.json"))
    assert opencode["theme"] == "tokyonight"
    assert opencode["provider"]["team"]["options"] == {"baseURL": GW_B, "apiKey": "{env:LOCAL_19_API_KEY}"}
    assert opencode["provider"]["team"]["models"] == {MODEL_B: {"name": "GLM 4.6"}}
    assert opencode["provider"]["ollama"] == OPENCODE["provider"]["ollama"]
    assert opencode["provider"]["agentcfg-local-19"]["options"]["apiKey"] == "{env:LOCAL_19_API_KEY}"
    assert opencode["model"] == f"agentcfg-local/{MODEL}"
    claude = json.loads(home.read(".claude/settings.json"))
    assert claude["permissions"] == CLAUDE["permissions"]
    assert claude["includeCoAuthoredBy"] is False
    assert claude["env"]["DISABLE_TELEMETRY"] == "1"
    assert claude["env"]["ANTHROPIC_BASE_URL"] == local_server.root
    assert claude["env"]["ANTHROPIC_AUTH_TOKEN"] == "agentcfg-no-key"
    assert "apiKeyHelper" not in claude  # the move's helper went when init switched to the keyless local
    assert not home.path(".codex").exists()

    # Every configured agent is on local now.
    status = agents_by_name(run_json(home, "status")["agents"])
    assert {name: row["profile"] for name, row in status.items()} == {
        "codex": None,
        "qwen": "local",
        "opencode": "local",
        "claude": "local",
        "cline": None,  # neither installed nor configured here: init leaves it alone
        "copilot": None,
        "gemini": None,  # a plain profile: Gemini CLI runs on a route only
        "droid": None,
    }


def test_agents_json_after_init_shows_the_switched_agents(messy: Home, local_server):
    home = messy
    run(home, "init", "--profile", "local", "--yes")
    rows = agents_by_name(run_json(home, "agents"))
    assert list(rows) == ["codex", "qwen", "opencode", "claude", "cline", "copilot", "gemini", "droid"]
    assert rows["codex"]["configured"] is False and rows["codex"]["profile"] is None
    for name in ("qwen", "opencode", "claude"):
        row = rows[name]
        assert (row["configured"], row["profile"], row["model"], row["path"], row["error"]) == (
            True,
            "local",
            MODEL,
            None,  # none installed: the test PATH holds no agent
            None,
        ), row
    assert rows["qwen"]["base_url"] == local_server.base_url
    assert rows["opencode"]["base_url"] == local_server.base_url
    assert rows["claude"]["base_url"] == local_server.root
    assert rows["qwen"]["files"] == ["~/.qwen/.env", "~/.qwen/settings.json"]


def test_rollback_after_init_restores_every_agent_file_byte_for_byte(messy: Home, keyring_file: Path):
    home = messy
    seeded = home.snapshot()
    assert sorted(seeded) == sorted(AGENT_FILES)
    run(home, "init", "--profile", "local", "--yes")
    assert home.snapshot() != seeded

    # 1: init's switch. The agents are back on the imported profiles, the keys still out of the files.
    first = run(home, "rollback")
    assert first.stdout.startswith("Rolled back the switch to local ")
    qwen = json.loads(home.read(".qwen/settings.json"))
    assert qwen["modelProviders"]["openai"][0]["envKey"] == "LOCAL_9_API_KEY"
    assert json.loads(home.read(".config/opencode/opencode.json"))["model"] == f"agentcfg-local-19/{MODEL_B}"
    assert KEY_A not in home.read(".qwen/.env") and KEY_B not in home.read(".config/opencode/opencode.json")

    # 2: the move of gateway B's key: opencode holds it again.
    second = run(home, "rollback")
    assert second.stdout.startswith("Rolled back the switch to local-19 ")
    assert home.read(".config/opencode/opencode.json") == json.dumps(OPENCODE, indent=2) + "\n"
    assert KEY_A not in home.read(".qwen/.env")

    # 3: the move of gateway A's key: every file is what the user had.
    third = run(home, "rollback")
    assert third.stdout.startswith("Rolled back the switch to local-9 ")
    assert home.snapshot() == seeded
    assert not home.path(".qwen/settings.json").exists()  # created by the move, removed again

    nothing = run(home, "rollback", check=3)
    assert "nothing to roll back: the journal is empty" in nothing.stderr
    # Rolling back files does not take the keys out of the keyring (the user may still want them).
    assert keyring(keyring_file) == {"agentcfg/local-9": KEY_A, "agentcfg/local-19": KEY_B}


# -- profile import without a terminal ------------------------------------------------------------------


def test_import_without_yes_and_without_a_terminal_leaves_the_keys_and_says_so(messy: Home, keyring_file: Path):
    home = messy
    seeded = home.snapshot()
    result = run(home, "profile", "import", timeout=20)  # stdin is /dev/null: must not wait for an answer
    assert result.stdout.splitlines()[0] == "Endpoints found:"
    assert "(qwen, claude; added · plaintext key left)" in result.stdout
    assert "(opencode; added · plaintext key left)" in result.stdout
    assert result.stderr.splitlines() == [
        "note: local-9: a plaintext key stays in qwen, claude (add --yes to move it into the keyring)",
        "note: local-19: a plaintext key stays in opencode (add --yes to move it into the keyring)",
    ]
    assert home.snapshot() == seeded  # endpoints imported, agent files untouched
    assert sorted(p.name for p in home.path(PROFILES).iterdir()) == ["local-19.toml", "local-9.toml", "local.toml"]
    assert not keyring_file.exists()
    assert not home.path(".config/agentcfg/state/journal").exists()
    for secret in (KEY_A, KEY_B):
        assert secret not in result.stdout + result.stderr


def test_import_keep_keys_never_moves_even_with_yes(messy: Home, keyring_file: Path):
    home = messy
    seeded = home.snapshot()
    data = run_json(home, "profile", "import", "--keep-keys", "--yes")
    assert data == {
        "profiles": [
            {**IMPORTED_A, "created": True, "key_found": True, "key_moved": False},
            {**IMPORTED_B, "created": True, "key_found": True, "key_moved": False},
        ],
        "notes": [],
    }
    assert home.snapshot() == seeded
    assert not keyring_file.exists()


def test_import_json_with_yes_reports_the_moves_and_never_a_key(messy: Home, keyring_file: Path):
    home = messy
    result = run(home, "profile", "import", "--yes", "--json")
    data = json.loads(result.stdout)
    assert data["profiles"] == [
        {**IMPORTED_A, "created": True, "key_found": True, "key_moved": True},
        {**IMPORTED_B, "created": True, "key_found": True, "key_moved": True},
    ]
    # What happened to the old plaintext copies (qwen's .env and Claude's settings for A).
    plaintext = [n for n in data["notes"] if "plaintext" in n]
    assert len(plaintext) == 2 and all("rollback" in n for n in plaintext)
    # qwen and opencode cannot fetch a key from the keyring: what starts them now
    assert sorted(n for n in data["notes"] if n not in plaintext) == [
        "opencode reads the key from LOCAL_19_API_KEY: start it with `agentcfg exec local-19 -- opencode` "
        '(or once per shell: `eval "$(agentcfg env local-19)"`)',
        "qwen reads the key from LOCAL_9_API_KEY: start it with `agentcfg exec local-9 -- qwen` "
        '(or once per shell: `eval "$(agentcfg env local-9)"`)',
    ]
    for secret in (KEY_A, KEY_B):
        assert secret not in result.stdout + result.stderr
        assert secret[-8:] not in result.stdout  # not even a tail
    assert keyring(keyring_file) == {"agentcfg/local-9": KEY_A, "agentcfg/local-19": KEY_B}
    assert all(BACKUP.match(p) for p in files_holding(home.root, KEY_A) + files_holding(home.root, KEY_B))
    assert TAVILY_LINE in home.read(".qwen/.env")


@pytest.mark.parametrize("first", [["--yes"], ["--keep-keys"]], ids=["moved", "kept"])
def test_a_second_import_knows_the_profiles_the_first_created(messy: Home, keyring_file: Path, first):
    home = messy
    run(home, "profile", "import", *first)
    before, keys_before = every_file(home.root), keyring(keyring_file)
    data = run_json(home, "profile", "import", *first)
    moved = first == ["--yes"]
    assert [(p["name"], p["known_as"], p["created"], p["key_moved"]) for p in data["profiles"]] == [
        ("local-9", "local-9", False, False),
        ("local-19", "local-19", False, False),
    ]
    # After a move the agents read the key from LOCAL_*_API_KEY: nothing plaintext is found again.
    assert [p["key_found"] for p in data["profiles"]] == [not moved, not moved]
    cache = ".config/agentcfg/state/validated-profiles"  # the profiles' schema cache may be written: no data
    after = every_file(home.root)
    assert {k: v for k, v in after.items() if k != cache} == {k: v for k, v in before.items() if k != cache}
    assert keyring(keyring_file) == keys_before


# -- dedup and the environment --------------------------------------------------------------------------


def test_agents_on_one_endpoint_make_one_candidate_and_the_environment_is_one_source(home: Home, keyring_file):
    home.write(".qwen/.env", f"OPENAI_API_KEY=EMPTY\nOPENAI_BASE_URL={GW_A}\nOPENAI_MODEL={MODEL_A}\n")
    home.write(
        ".config/opencode/opencode.json",
        json.dumps(
            {
                "model": f"box/{MODEL_A}",
                "provider": {"box": {"options": {"baseURL": GW_A + "/"}, "models": {MODEL_A: {}}}},
            }
        ),
    )
    home.write(
        ".codex/config.toml",
        f'model = "other-model"\nmodel_provider = "box"\n\n[model_providers.box]\nbase_url = "{GW_A}"\n',
    )
    environment = {"OPENAI_BASE_URL": GW_B, "OPENAI_MODEL": MODEL_B}
    data = run_json(home, "profile", "import", **environment)
    rows = [
        (p["name"], p["base_url"], p["model"], p["found_in"], p["key_found"], p["key_env"]) for p in data["profiles"]
    ]
    assert rows == [
        ("local-9", GW_A, "other-model", ["codex"], False, None),
        ("local-9-2", GW_A, MODEL_A, ["qwen", "opencode"], False, None),  # EMPTY is a placeholder, not a key
        ("local-19", GW_B, MODEL_B, ["environment"], False, None),
    ]
    assert data["notes"] == []
    assert sorted(p.name for p in home.path(PROFILES).iterdir()) == ["local-19.toml", "local-9-2.toml", "local-9.toml"]
    assert 'description = "imported from environment"' in home.read(f"{PROFILES}/local-19.toml")


def test_the_environment_joins_an_agent_on_the_same_endpoint(home: Home, keyring_file):
    home.write(".qwen/.env", f"OPENAI_BASE_URL={GW_A}\nOPENAI_MODEL={MODEL_A}\n")
    data = run_json(home, "profile", "import", OPENAI_BASE_URL=GW_A + "/", OPENAI_MODEL=MODEL_A)
    assert [(p["name"], p["found_in"]) for p in data["profiles"]] == [("local-9", ["qwen", "environment"])]


def test_a_found_key_for_a_keyless_profile_is_left_with_a_note(home: Home, keyring_file: Path):
    home.write(f"{PROFILES}/box.toml", f'base_url = "{GW_A}"\nmodel = "{MODEL_A}"\n')
    home.write(".qwen/.env", QWEN_ENV)
    seeded = home.snapshot()
    data = run_json(home, "profile", "import", "--yes")
    assert [(p["name"], p["known_as"], p["key_found"], p["key_moved"]) for p in data["profiles"]] == [
        ("box", "box", True, False)
    ]
    assert data["notes"] == ["box: a key was found, but the profile reads none; it was left in place"]
    assert home.snapshot() == seeded
    assert not keyring_file.exists()


def test_codex_bearer_token_of_its_own_provider_becomes_an_env_key(home: Home, keyring_file: Path):
    home.write(
        ".codex/config.toml",
        f'model = "{MODEL_A}"\nmodel_provider = "team"\n\n[model_providers.team]\nname = "Team"\n'
        f'base_url = "{GW_A}"\nexperimental_bearer_token = "{KEY_A}"\n',
    )
    data = run_json(home, "profile", "import", "--yes")
    assert [(p["name"], p["found_in"], p["key_moved"]) for p in data["profiles"]] == [("local-9", ["codex"], True)]
    config = tomllib.loads(home.read(".codex/config.toml"))
    assert config["model_providers"]["team"] == {"name": "Team", "base_url": GW_A, "env_key": "LOCAL_9_API_KEY"}
    assert config["model_provider"] == "agentcfg-local-9"
    assert config["model_providers"]["agentcfg-local-9"]["env_key"] == "LOCAL_9_API_KEY"
    assert keyring(keyring_file) == {"agentcfg/local-9": KEY_A}
    assert all(BACKUP.match(p) for p in files_holding(home.root, KEY_A))


# -- no usable keyring ------------------------------------------------------------------------------------


def test_init_without_a_keyring_completes_and_moves_no_key(home: Home, local_server):
    seed(home)
    assert "PYTHON_KEYRING_BACKEND" not in home.env
    # every agent keeps its plaintext key, so none is switched: nothing was done (Exit.NOTHING)
    result = run(home, "init", "--profile", "local", "--yes", check=3, **NO_BUS)
    assert "(qwen, claude; new · plaintext key found)" in result.stdout
    assert "(opencode; new · plaintext key found)" in result.stdout
    assert "   added local-9, local-19\n" in result.stdout
    # A switch would replace the keys that stayed out of the keyring: those agents are left as they are.
    for agent in ("qwen", "opencode", "claude"):
        assert f"{agent}: skipped, its file holds a plaintext key that stayed out of the keyring" in result.stdout
    assert "5. doctor: no agent was switched" in result.stdout
    notes = result.stderr.splitlines()
    for name in ("local-9", "local-19"):
        assert any(n.startswith(f"note: {name}: the key stays in its file: no usable keyring") for n in notes), notes
    for secret in (KEY_A, KEY_B):
        assert secret not in result.stdout + result.stderr
    # Not silently written to some plaintext store of agentcfg's own...
    assert not home.path(".config/agentcfg/state/stored-keys").exists()
    assert all(not p.startswith(".config/agentcfg/") or BACKUP.match(p) for p in files_holding(home.root, KEY_A))
    # ...and nothing lost: every file still holds its key, untouched.
    assert json.loads(home.read(".config/opencode/opencode.json"))["provider"]["team"]["options"]["apiKey"] == KEY_B
    assert home.read(".qwen/.env") == QWEN_ENV
    assert json.loads(home.read(".claude/settings.json")) == CLAUDE


def test_init_without_a_keyring_keeps_the_key_where_its_note_says(home: Home, local_server):
    seed(home)
    run(home, "init", "--profile", "local", "--yes", check=3, **NO_BUS)
    live = [p for p in files_holding(home.root, KEY_A) if not BACKUP.match(p)]
    assert live == [".claude/settings.json", ".qwen/.env"]


def test_import_yes_without_a_keyring_changes_no_file(home: Home):
    seed(home)
    seeded = home.snapshot()
    data = run_json(home, "profile", "import", "--yes", **NO_BUS)
    assert [(p["name"], p["key_found"], p["key_moved"]) for p in data["profiles"]] == [
        ("local-9", True, False),
        ("local-19", True, False),
    ]
    assert [n.split(": no usable keyring")[0] for n in data["notes"]] == [
        "local-9: the key stays in its file",
        "local-19: the key stays in its file",
    ]
    assert home.snapshot() == seeded
    assert not home.path(".config/agentcfg/state/journal").exists()


# -- init with a key on stdin -----------------------------------------------------------------------------

GW_KEY = "gw-secret-5f1e9a7c3b2d4e60"


@pytest.fixture
def keyed_gateway(home: Home, keyring_file: Path):
    """Profile gw: a FaultServer that checks GW_KEY, as `profile add gw ... --key-env GW_KEY` writes it."""
    with FaultServer(key=GW_KEY) as server:
        run(home, "profile", "add", "gw", "--base-url", server.base_url, "--model", MODEL, "--key-env", "GW_KEY")
        yield server


def test_init_key_stdin_stores_the_key_switches_and_doctor_passes(home: Home, keyring_file: Path, keyed_gateway):
    args = ("init", "--profile", "gw", "--key-stdin", "--yes", "--agents", "qwen", "--agents", "opencode")
    result = run(home, *args, input=GW_KEY + "\n")
    out = result.stdout.splitlines()
    assert out[1:3] == ["2. endpoints the agents already use:", "  (no endpoint to import)"]
    assert out[3] == "3. stored the key for gw in the keyring"
    assert out[4] == "4. switched to gw: qwen, opencode (undo: agentcfg rollback)"
    assert DOCTOR_OK.search(result.stdout), result.stdout
    # started plainly, neither has the key (the keyring holds it; `agentcfg exec gw -- qwen` gives it)
    assert "(opencode: key-missing (warning); qwen: key-missing (warning))" in result.stdout
    assert GW_KEY not in result.stdout + result.stderr
    assert keyring(keyring_file) == {"agentcfg/gw": GW_KEY}
    assert files_holding(home.root, GW_KEY) == []  # neither agent file holds it
    assert json.loads(home.read(".config/opencode/opencode.json"))["provider"]["agentcfg-gw"]["options"] == {
        "baseURL": keyed_gateway.base_url,
        "apiKey": "{env:GW_KEY}",
    }
    assert not home.path(".claude").exists() and not home.path(".codex").exists()  # only the agents asked for
    authorized = {
        headers.get("authorization") or headers.get("Authorization") for _, _, headers, _ in keyed_gateway.requests
    }
    assert authorized == {f"Bearer {GW_KEY}"}  # doctor sent the stored key, and only to gw


def test_init_key_stdin_refuses_a_malformed_key(home: Home, keyring_file: Path, keyed_gateway):
    result = run(
        home, "init", "--profile", "gw", "--key-stdin", "--yes", "--agents", "qwen", input="Bearer x\n", check=2
    )
    assert result.stderr.startswith("agentcfg: error: not storing the key for gw: it starts with 'Bearer '")
    assert "Traceback" not in result.stderr
    assert "4. switched" not in result.stdout
    assert not keyring_file.exists()
    assert not home.path(".qwen").exists()
    assert keyed_gateway.requests == []


# -- init on a terminal -----------------------------------------------------------------------------------


class Terminal:
    """A child process on a pseudo-terminal; `expect` fails (never hangs) when the text does not come."""

    def __init__(self, home: Home, *args: str) -> None:
        self.controller, terminal = pty.openpty()
        # A session of its own: no controlling terminal, so a hidden prompt reads this pty, not the runner's.
        self.process = subprocess.Popen(
            [AGENTCFG, *args],
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            env={**home.env, "TERM": "dumb"},
            start_new_session=True,
        )
        os.close(terminal)
        self.seen = b""

    def expect(self, marker: str, timeout: float = 20.0) -> bytes:
        start = len(self.seen)
        deadline = time.monotonic() + timeout
        while marker.encode() not in self.seen[start:] and time.monotonic() < deadline:
            ready, _, _ = select.select([self.controller], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(self.controller, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                self.seen += chunk
        assert marker.encode() in self.seen[start:], (marker, self.seen.decode("utf-8", "replace"))
        return self.seen[start:]

    def send(self, line: str) -> None:
        os.write(self.controller, line.encode() + b"\r")

    def finish(self, timeout: float = 20.0) -> int:
        """Read what is left until the child closes the terminal; its exit status."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.controller], [], [], 0.1)
            if not ready:
                if self.process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(self.controller, 4096)
            except OSError:
                break
            if not chunk:
                break
            self.seen += chunk
        return self.process.wait(max(1.0, deadline - time.monotonic()))

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        os.close(self.controller)

    @property
    def text(self) -> str:
        return self.seen.decode("utf-8", "replace").replace("\r\n", "\n")


def test_init_on_a_terminal_asks_to_move_the_key_and_which_profile(home: Home, keyring_file: Path, local_server):
    home.write(".qwen/.env", QWEN_ENV)
    term = Terminal(home, "init")
    try:
        term.expect(
            f"local-9 is {MODEL_A} at {GW_A}; its key is in plaintext in qwen (~/.qwen/.env). qwen cannot fetch a "
            "key from the keyring: after a move, start it with `agentcfg exec local-9 -- qwen` (or run "
            '`eval "$(agentcfg env local-9)"` once per shell); n keeps it in qwen\'s file, where plain `qwen` reads '
            "it. Move the key into the keyring? [Y/n]: "
        )
        term.send("y")
        term.expect("Switch to which profile? (local, local-9, taotoken) [local]: ")
        term.send("local")
        term.expect("5. doctor: ")
        assert term.finish() == 0, term.text
    finally:
        term.close()
    assert "3. local: needs no key" in term.text
    assert "4. switched to local: qwen (undo: agentcfg rollback, again for each key moved)" in term.text
    assert DOCTOR_OK.search(term.text), term.text
    assert KEY_A not in term.text
    assert keyring(keyring_file) == {"agentcfg/local-9": KEY_A}
    assert home.read(".qwen/.env").splitlines()[1:] == [
        f"OPENAI_BASE_URL={local_server.base_url}",
        f"OPENAI_MODEL={MODEL}",
        TAVILY_LINE,
        "OPENAI_API_KEY=agentcfg-no-key",
    ]


def test_init_on_a_terminal_asks_for_a_keyed_profiles_key_without_echo(home: Home, keyring_file: Path, keyed_gateway):
    term = Terminal(home, "init", "--agents", "qwen")
    try:
        term.expect("Switch to which profile? (gw, local, taotoken) [local]: ")
        term.send("gw")
        prompt = term.expect("Key for gw (input hidden): ")
        assert b"gw\r\n" in term.seen  # the profile name was echoed, as typed
        term.send(GW_KEY)
        rest = term.expect("5. doctor: ")
        assert term.finish() == 0, term.text
    finally:
        term.close()
    assert GW_KEY.encode() not in prompt + rest  # the key was neither echoed nor printed
    assert GW_KEY not in term.text
    assert "3. stored the key for gw in the keyring" in term.text
    assert "4. switched to gw: qwen (undo: agentcfg rollback)" in term.text
    assert DOCTOR_OK.search(term.text), term.text
    assert keyring(keyring_file) == {"agentcfg/gw": GW_KEY}


# -- bugs -----------------------------------------------------------------------------------------------------


def test_import_of_an_env_reference_base_url_leaves_agentcfg_usable(home: Home, keyring_file: Path):
    home.write(
        ".config/opencode/opencode.json",
        json.dumps(
            {
                "model": "lite/gpt-x",
                "provider": {
                    "lite": {"options": {"baseURL": "{env:LITELLM_URL}", "apiKey": "{env:LITELLM_KEY}"}, "models": {}}
                },
            }
        ),
    )
    run(home, "profile", "import", check=None)
    listed = run(home, "profile", "list", check=None)
    assert listed.returncode == 0, listed.stderr


def test_an_opencode_file_reference_is_not_a_plaintext_key(home: Home, keyring_file: Path):
    config = {
        "model": "or/gpt-x",
        "provider": {
            "or": {"options": {"baseURL": GW_A, "apiKey": "{file:~/.secrets/or-key}"}, "models": {"gpt-x": {}}}
        },
    }
    home.write(".config/opencode/opencode.json", json.dumps(config))
    home.write(".secrets/or-key", KEY_A + "\n")
    seeded = home.snapshot()
    data = run_json(home, "profile", "import", "--yes")
    assert [(p["key_found"], p["key_moved"]) for p in data["profiles"]] == [(False, False)]
    assert home.snapshot() == seeded
    assert not keyring_file.exists()


def test_import_does_not_overwrite_a_key_already_in_the_keyring(home: Home, keyring_file: Path):
    rotated, stale = "sk-rotated-0123456789abcd", "sk-stale-9876543210dcba"
    keyring_file.write_text(json.dumps({"agentcfg/team": rotated}))
    home.write(f"{PROFILES}/team.toml", f'base_url = "{GW_A}"\nmodel = "{MODEL_A}"\nkey_env = "TEAM_API_KEY"\n')
    home.write(".qwen/.env", f"OPENAI_API_KEY={stale}\nOPENAI_BASE_URL={GW_A}\nOPENAI_MODEL={MODEL_A}\n")
    data = run_json(home, "profile", "import", "--yes")
    assert [(p["name"], p["known_as"]) for p in data["profiles"]] == [("team", "team")]
    assert keyring(keyring_file) == {"agentcfg/team": rotated}


# -- init's decisions, from plain values (agentcfg.onboard) ------------------------------------------------------

from agentcfg import onboard  # noqa: E402 - the pure half, tested without a process
from agentcfg.errors import AgentcfgError, Exit  # noqa: E402
from agentcfg.importer import Candidate  # noqa: E402
from agentcfg.profiles import Profile  # noqa: E402

KEYED = Profile(name="gw", base_url="https://gw.example.com/v1", model="m", key_env="GW_API_KEY")
KEYLESS = Profile(name="local", base_url="http://localhost:8000/v1", model="m")
NO_KEYRING = AgentcfgError("no usable keyring: keyring found no backend", hint="Ways out: ...")


@pytest.mark.parametrize(
    ("profile", "needs", "key_stdin", "interactive", "keyring", "state", "refused"),
    [
        (KEYLESS, False, True, False, NO_KEYRING, "not needed", False),  # a keyless profile never asks the keyring
        (KEYED, False, True, False, NO_KEYRING, "already", False),  # stored or exported: nothing to read
        (KEYED, True, False, False, None, "missing", False),  # a script without --key-stdin: NO_KEY at the end
        (KEYED, True, False, False, NO_KEYRING, "missing", False),  # ... keyring or not: nothing would be read
        (KEYED, True, True, False, None, "read", False),
        (KEYED, True, False, True, None, "read", False),  # a terminal asks
        (KEYED, True, True, False, NO_KEYRING, "missing", True),  # read, then lost: refused before stdin is read
        (KEYED, True, False, True, NO_KEYRING, "missing", False),  # a terminal is not asked: switch, then NO_KEY
    ],
)
def test_plan_key(profile, needs, key_stdin, interactive, keyring, state, refused):
    plan = onboard.plan_key(profile, needs=needs, key_stdin=key_stdin, interactive=interactive, keyring=keyring)
    assert plan.state == state
    assert (plan.refusal is not None) == refused
    if refused:
        assert plan.refusal.message.startswith("cannot store the key for gw: no usable keyring")
        assert plan.refusal.hint.startswith("Nothing was written and no key was read. Ways out")


@pytest.mark.parametrize(
    ("switched", "key", "status"),
    [
        ([], "not needed", Exit.NOTHING),
        ([], "missing", Exit.NOTHING),  # nothing switched says more than the key
        (["qwen"], "missing", Exit.NO_KEY),
        (["qwen"], "stored", Exit.OK),
        (["qwen", "claude"], "already", Exit.OK),
        (["qwen"], "not needed", Exit.OK),
    ],
)
def test_exit_status(switched, key, status):
    assert onboard.exit_status(switched=switched, key=key) == status


def test_moves_are_offered_only_with_a_keyring_and_without_keep_keys():
    with_key = Candidate("a", "http://127.0.0.1:9/v1", "m", key=KEY_A, found_in=["qwen"])
    without = Candidate("b", "http://127.0.0.1:19/v1", "m", found_in=["opencode"])
    found = onboard.Survey([with_key, without])
    assert onboard.moves_offered(found, keep=False, keyring=None) == [with_key]
    assert onboard.moves_offered(found, keep=True, keyring=None) == []
    assert onboard.moves_offered(found, keep=False, keyring=NO_KEYRING) == []


def test_an_unknown_profile_lists_the_known_ones_and_a_complete_command():
    known = {"local": KEYLESS, "local-9": KEYED}
    problem = onboard.unknown_profile("lcal-9", known)
    assert problem.message == (
        "unknown profile 'lcal-9' (did you mean 'local-9'?); known, with the ones this import would add: local, local-9"
    )
    assert problem.hint == "Nothing was written. Run it again with one of them, e.g. `agentcfg init --profile local-9`."
    assert onboard.choose("local", known) is KEYLESS
    with pytest.raises(AgentcfgError, match="unknown profile 'nope'"):
        onboard.choose("nope", known)


def test_survey_new_names_only_the_profiles_an_import_adds():
    found = onboard.Survey(
        [
            Candidate("local-9", "http://127.0.0.1:9/v1", "m", found_in=["qwen"]),
            Candidate("team", "http://127.0.0.1:19/v1", "m", found_in=["opencode"], known_as="team"),
        ]
    )
    assert list(found.new) == ["local-9"]
