"""The installed `agentcfg` command, run in a temporary HOME: switch, rollback, status, profiles."""

from __future__ import annotations

import json
import os
import stat

import pytest
import tomllib

CODEX = """\
# My Codex config — hand-written, keep these comments
model = "gpt-5.1"   # the default I use at work
approval_policy = "on-request"

[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_TOKEN_FILE = "~/.gh-token" }

[projects."/home/me/src/été"]
trust_level = "trusted"

[model_providers.mine]
name = "My proxy"
base_url = "https://proxy.example.invalid/v1"
wire_api = "responses"
"""

OPENCODE_JSONC = """\
{
    // opencode config with comments — and a trailing comma
    "$schema": "https://opencode.ai/config.json",
    "theme": "tokyonight",
    "mcp": {
        "fs": {"type": "local", "command": ["npx", "fs-server"]}, /* inline */
    },
    "provider": {
        "other": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": "http://10.9.9.9/v1"}},
    },
}
"""

QWEN_ENV = """\
# qwen environment
export GEMINI_API_KEY='not-used'
OPENAI_BASE_URL="https://old.example.invalid/v1"  # old gateway
MULTI="line one
line two"
OPENAI_MODEL=old-model
"""

QWEN_SETTINGS = """\
{
  "ui": {"theme": "GitHub"},
  "model": {"name": "old-model", "summarizeToolOutput": {"run_shell_command": {"tokenBudget": 2000}}},
  "mcpServers": {"x": {"command": "x-server"}}
}
"""

CLAUDE = """\
{
  "permissions": {
    "allow": ["Bash(npm run lint)", "Read(~/.zshrc)"],
    "deny": ["Bash(curl:*)"]
  },
  "hooks": {
    "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}]
  },
  "env": {"DISABLE_TELEMETRY": "1", "ANTHROPIC_MODEL": "claude-sonnet"},
  "statusLine": {"type": "command", "command": "echo ✓"}
}
"""

SEEDS = {
    ".codex/config.toml": CODEX,
    ".config/opencode/opencode.jsonc": OPENCODE_JSONC,
    ".qwen/.env": QWEN_ENV,
    ".qwen/settings.json": QWEN_SETTINGS,
    ".claude/settings.json": CLAUDE,
}

# Lines of each seed that belong to the user and must survive every switch verbatim.
UNOWNED = {
    ".codex/config.toml": [
        "# My Codex config — hand-written, keep these comments",
        'approval_policy = "on-request"',
        'env = { GITHUB_TOKEN_FILE = "~/.gh-token" }',
        '[projects."/home/me/src/été"]',
        'base_url = "https://proxy.example.invalid/v1"',
    ],
    ".config/opencode/opencode.jsonc": [
        "// opencode config with comments — and a trailing comma",
        '"fs": {"type": "local", "command": ["npx", "fs-server"]}, /* inline */',
        '"other": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": "http://10.9.9.9/v1"}},',
    ],
    ".qwen/.env": ["# qwen environment", "export GEMINI_API_KEY='not-used'", 'MULTI="line one\nline two"'],
    ".qwen/settings.json": ['"ui": {"theme": "GitHub"}', '"mcpServers": {"x": {"command": "x-server"}}'],
    ".claude/settings.json": ['"deny": ["Bash(curl:*)"]', '"command": "prettier --write"', '"command": "echo ✓"'],
}


def seed(home) -> dict[str, bytes]:
    for relative, text in SEEDS.items():
        home.write(relative, text)
    return home.snapshot()


def assert_unowned_kept(home) -> None:
    for relative, lines in UNOWNED.items():
        text = home.read(relative)
        for line in lines:
            assert line in text, (relative, line)


def test_switch_local_taotoken_rollback_rollback_restores_every_byte(home):
    start = seed(home)

    home.run("switch", "local", "--all")
    assert_unowned_kept(home)
    codex = tomllib.loads(home.read(".codex/config.toml"))
    assert codex["model"] == "DeepSeek-V4-Flash"
    assert codex["model_provider"] == "agentcfg-local"
    assert codex["model_providers"]["agentcfg-local"]["wire_api"] == "responses"
    assert "env_key" not in codex["model_providers"]["agentcfg-local"]
    assert codex["mcp_servers"]["github"]["command"] == "npx"
    assert not home.path(".config/opencode/opencode.json").exists()  # the .jsonc is edited where it is
    assert 'OPENAI_BASE_URL="http://localhost:8000/v1"  # old gateway' in home.read(".qwen/.env")

    home.run("switch", "taotoken", "--all", check=4)  # switched; no key stored for taotoken
    assert_unowned_kept(home)
    codex = tomllib.loads(home.read(".codex/config.toml"))
    assert codex["model_provider"] == "agentcfg-taotoken"
    assert codex["model_providers"]["agentcfg-taotoken"]["env_key"] == "TAOTOKEN_API_KEY"
    assert "OPENAI_API_KEY" not in home.read(".qwen/.env")  # the local placeholder is gone again
    assert '"apiKey": "{env:TAOTOKEN_API_KEY}"' in home.read(".config/opencode/opencode.jsonc")

    home.run("rollback")
    assert tomllib.loads(home.read(".codex/config.toml"))["model_provider"] == "agentcfg-local"
    home.run("rollback")
    assert home.snapshot() == start
    assert "nothing to roll back" in home.run("rollback", check=3).stderr


def test_switch_creates_files_and_rollback_removes_them(home):
    home.run("switch", "local", "--all")
    created = home.snapshot()
    assert set(created) == {
        ".codex/config.toml",
        ".codex/agentcfg-local.config.toml",  # Codex not installed: the profile file is there for 0.134+
        ".qwen/.env",
        ".qwen/settings.json",
        ".config/opencode/opencode.json",
        ".claude/settings.json",
        ".cline/data/settings/providers.json",
        ".cline/data/settings/global-settings.json",
        ".copilot/providers.json",
        ".copilot/settings.json",
        ".factory/settings.json",
    }
    for relative in created:
        assert stat.S_IMODE(home.path(relative).stat().st_mode) == 0o600, relative
    home.run("rollback")
    assert home.snapshot() == {}
    assert not home.path(".codex").exists() and not home.path(".qwen").exists()


def test_second_identical_switch_changes_zero_bytes(home):
    seed(home)
    home.run("switch", "local", "--all")
    before = home.snapshot()
    mtimes = {r: home.path(r).stat().st_mtime_ns for r in before}
    result = home.run("switch", "local", "--all")
    assert "nothing to change" in result.stdout
    assert home.snapshot() == before
    assert {r: home.path(r).stat().st_mtime_ns for r in before} == mtimes
    entries = home.path(".config/agentcfg/state/journal")
    assert len([p for p in entries.iterdir() if p.name.isdigit()]) == 1


def test_default_switches_installed_or_configured_agents_and_says_why_others_are_skipped(home, tmp_path):
    fake = tmp_path / "bin" / "codex"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    home.write(".claude/settings.json", CLAUDE)
    data = home.json("switch", "local")
    assert sorted({c["agent"] for c in data["changes"]}) == ["claude", "codex"]
    assert set(data["skipped"]) == {"qwen", "opencode", "cline", "copilot", "gemini", "droid"}
    assert "not installed" in data["skipped"]["qwen"]


def test_nothing_installed_or_configured_says_so(home):
    result = home.run("switch", "local", check=3)
    assert "No agent to switch" in result.stdout and "--all" in result.stdout
    assert home.snapshot() == {}


def test_dry_run_prints_diff_and_writes_nothing(home):
    start = seed(home)
    result = home.run("switch", "local", "--all", "--dry-run")
    assert home.snapshot() == start
    assert '+model = "DeepSeek-V4-Flash"' in result.stdout
    assert "would modify" in result.stdout
    assert "\033[" not in result.stdout  # not a TTY: no colour
    data = home.json("switch", "local", "--all", "--dry-run")
    assert data["dry_run"] is True and data["changed"] is False
    assert any('+model_provider = "agentcfg-local"' in c.get("diff", "") for c in data["changes"])
    assert not home.path(".config/agentcfg/state/journal").exists() or not any(
        p.name.isdigit() for p in home.path(".config/agentcfg/state/journal").iterdir()
    )


def test_switch_json_reports_each_file(home):
    data = home.json("switch", "local", "--agent", "codex", "--agent", "claude")
    assert data["profile"] == "local" and data["changed"] is True and data["journal_entry"]
    assert {(c["agent"], c["action"]) for c in data["changes"]} == {("codex", "create"), ("claude", "create")}


def test_claude_skipped_with_a_note_for_a_profile_without_anthropic_url(home):
    data = json.loads(home.run("switch", "taotoken", "--all", "--json", check=4).stdout)  # no key stored
    assert "claude" in data["skipped"] and "Anthropic" in data["skipped"]["claude"]
    assert not home.path(".claude/settings.json").exists()
    assert any("TAOTOKEN_API_KEY" in n and "agentcfg exec taotoken --" in n for n in data["notes"])


def test_symlinked_config_stays_a_symlink(home, tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "settings.json"
    real.write_text(CLAUDE)
    home.path(".claude").mkdir()
    home.path(".claude/settings.json").symlink_to(real)
    home.run("switch", "local", "--agent", "claude")
    assert home.path(".claude/settings.json").is_symlink()
    assert json.loads(real.read_text())["env"]["ANTHROPIC_BASE_URL"] == "http://localhost:8000"
    home.run("rollback")
    assert real.read_text() == CLAUDE and home.path(".claude/settings.json").is_symlink()


def test_existing_file_permissions_are_kept_and_state_is_private(home):
    path = home.write(".codex/config.toml", CODEX)
    path.chmod(0o640)
    home.run("switch", "local", "--agent", "codex")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    state = home.path(".config/agentcfg/state")
    for item in [state, *state.rglob("*")]:
        expected = 0o700 if item.is_dir() else 0o600
        assert stat.S_IMODE(item.stat().st_mode) == expected, item


# -- bad input: one clear message, exit 2, no traceback, nothing written --------------------------------


def assert_clean_error(result, *words):
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, (word, result.stderr)


def test_unknown_profile(home):
    result = home.run("switch", "locl", "--all", check=2)
    assert_clean_error(result, "unknown profile 'locl'", "Did you mean 'local'", "agentcfg profile list")
    assert home.snapshot() == {}


def test_unknown_agent(home):
    result = home.run("switch", "local", "--agent", "cursor", check=2)
    assert "Traceback" not in result.stderr and "cursor" in result.stderr
    assert home.snapshot() == {}


def test_malformed_profile_names_file_and_field_and_blocks_every_command(home):
    home.write(".config/agentcfg/profiles/mine.toml", 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nbase_ur = 1\n')
    result = home.run("switch", "local", "--all", check=2)
    assert_clean_error(result, "mine.toml", "base_ur")
    home.write(
        ".config/agentcfg/profiles/mine.toml", 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\ncontext_window = -5\n'
    )
    assert_clean_error(home.run("profile", "list", check=2), "mine.toml", "context_window")
    home.write(".config/agentcfg/profiles/mine.toml", "base_url = [\n")
    assert_clean_error(home.run("switch", "local", "--all", check=2), "mine.toml", "TOML")
    assert home.snapshot() == {}  # no agent file was written


def test_unparsable_agent_file_is_reported_with_its_line_and_nothing_is_written(home):
    start = seed(home)
    broken = CLAUDE.replace('"deny": ["Bash(curl:*)"]', '"deny": ["Bash(curl:*)"')
    home.write(".claude/settings.json", broken)
    start[".claude/settings.json"] = broken.encode()
    result = home.run("switch", "local", "--all", check=2)
    assert_clean_error(result, ".claude/settings.json:5")
    assert home.snapshot() == start  # the other agents were not switched either


def test_read_only_agent_file_is_refused(home):
    start = seed(home)
    home.path(".qwen/.env").chmod(0o444)
    result = home.run("switch", "local", "--all", check=2)
    assert_clean_error(result, ".qwen/.env", "read-only", "chmod u+w")
    assert home.snapshot() == start


def test_missing_codex_home(home):
    result = home.run("switch", "local", "--agent", "codex", check=2, CODEX_HOME=str(home.path("nope")))
    assert_clean_error(result, "CODEX_HOME", "mkdir -p")


def test_directory_in_place_of_a_file_is_refused(home):
    home.path(".claude/settings.json").mkdir(parents=True)
    assert_clean_error(home.run("switch", "local", "--agent", "claude", check=2), "is a directory")


def test_non_utf8_file_is_refused(home):
    home.path(".qwen").mkdir()
    home.path(".qwen/.env").write_bytes(b"OPENAI_MODEL=caf\xe9\n")
    assert_clean_error(home.run("switch", "local", "--agent", "qwen", check=2), "UTF-8")


# -- agent locations honour their variables ---------------------------------------------------------------


def test_agent_directory_variables_are_honoured(home, tmp_path):
    extra = {
        "CODEX_HOME": str(tmp_path / "codex-home"),
        "QWEN_HOME": str(tmp_path / "qwen-home"),
        "OPENCODE_CONFIG": str(tmp_path / "oc" / "custom.json"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-dir"),
        "CLINE_DIR": str(tmp_path / "cline-dir"),
        "COPILOT_HOME": str(tmp_path / "copilot-home"),
        "FACTORY_HOME_OVERRIDE": str(tmp_path / "droid-home"),
    }
    (tmp_path / "codex-home").mkdir()
    home.run("switch", "local", "--all", **extra)
    moved = ["codex-home/config.toml", "qwen-home/.env", "oc/custom.json", "claude-dir/settings.json"]
    moved += ["cline-dir/data/settings/providers.json", "copilot-home/providers.json", "copilot-home/settings.json"]
    moved += ["droid-home/.factory/settings.json"]
    for path in moved:
        assert (tmp_path / path).is_file(), path
    assert home.snapshot() == {}


# -- status ----------------------------------------------------------------------------------------------


def test_status_names_profile_and_detects_edits(home):
    seed(home)
    data = home.json("status")
    by_agent = {a["name"]: a for a in data["agents"]}
    assert by_agent["codex"]["profile"] == "other" and by_agent["codex"]["model"] == "gpt-5.1"
    home.run("switch", "local", "--all")
    by_agent = {a["name"]: a for a in home.json("status")["agents"] if a["configured"]}  # (Gemini CLI: a route only)
    assert {a["profile"] for a in by_agent.values()} == {"local"}
    assert all(not a["edited"] for a in by_agent.values())
    path = home.path(".codex/config.toml")
    path.write_text(path.read_text().replace('model = "DeepSeek-V4-Flash"', 'model = "other-model"'))
    by_agent = {a["name"]: a for a in home.json("status")["agents"]}
    assert by_agent["codex"]["edited"] == ["model"]
    assert by_agent["codex"]["profile"] == "other"
    assert "edited since agentcfg wrote it: model" in home.run("status").stdout
    assert "agentcfg rollback --force" in home.run("rollback", check=2).stderr


def test_status_reports_unparsable_file_without_failing(home):
    home.write(".codex/config.toml", "model = \n")
    result = home.run("status")
    assert "codex: " in result.stdout and "config.toml:1" in result.stdout


# -- profiles --------------------------------------------------------------------------------------------


def test_profile_list_show_add_rm(home):
    names = {p["name"] for p in home.json("profile", "list")}
    assert {"local", "taotoken"} <= names
    local = home.json("profile", "show", "local")
    assert local["base_url"] == "http://localhost:8000/v1" and local["context_window"] == 1048576
    assert local["anthropic_base_url"] == "http://localhost:8000" and local["source"] == "built-in"
    assert "anthropic_base_url" not in home.json("profile", "show", "taotoken")

    home.run(
        "profile",
        "add",
        "gpu",
        "--base-url",
        "http://127.0.0.1:8001/v1",
        "--model",
        "qwen3",
        "--context-window",
        "65536",
    )
    gpu = home.json("profile", "show", "gpu")
    assert gpu["context_window"] == 65536 and "key_env" not in gpu  # a local server: no key by default
    home.run("profile", "add", "gw", "--base-url", "https://gw.example.invalid/v1", "--model", "m")
    assert home.json("profile", "show", "gw")["key_env"] == "GW_API_KEY"
    assert_clean_error(
        home.run("profile", "add", "gpu", "--base-url", "http://x/v1", "--model", "m", check=2), "--force"
    )
    assert_clean_error(
        home.run("profile", "add", "local", "--base-url", "http://x/v1", "--model", "m", check=2), "built-in"
    )
    result = home.run(
        "profile",
        "add",
        "bad",
        "--base-url",
        "http://x",
        "--model",
        "m",
        "--anthropic-base-url",
        "http://x/v1",
        check=2,
    )
    assert_clean_error(result, "ends in /v1")
    assert_clean_error(
        home.run("profile", "add", "bad", "--base-url", "not a url", "--model", "m", check=2), "base_url"
    )

    home.run("switch", "gpu", "--agent", "qwen")
    settings = json.loads(home.read(".qwen/settings.json"))
    (entry,) = settings["modelProviders"]["openai"]
    assert entry["generationConfig"]["samplingParams"]["max_tokens"] == (65536 - 22000) // 2
    home.run("profile", "rm", "gpu")
    assert "gpu" not in {p["name"] for p in home.json("profile", "list")}
    assert_clean_error(home.run("profile", "rm", "local", check=2), "built-in")


def test_user_profile_overrides_built_in(home):
    home.run("profile", "add", "local", "--base-url", "http://127.0.0.1:8011/v1", "--model", "tiny", "--force")
    home.run("switch", "local", "--agent", "codex")
    assert tomllib.loads(home.read(".codex/config.toml"))["model_providers"]["agentcfg-local"]["base_url"] == (
        "http://127.0.0.1:8011/v1"
    )
    result = home.run("profile", "rm", "local")
    assert "built-in profile local applies again" in result.stdout


def test_no_key_value_reaches_files_or_output(home):
    canary = "sk-canary-3f9c2b7d1e8a4f60"
    home.run(
        "profile", "add", "gw", "--base-url", "https://gw.example.invalid/v1", "--model", "m", "--key-env", "GW_KEY"
    )
    seen = []
    for args in (
        ["switch", "gw", "--all"],
        ["switch", "gw", "--all", "--dry-run"],
        ["status"],
        ["profile", "show", "gw"],
    ):
        for extra in ([], ["--json"]):
            result = home.run(*args, *extra, GW_KEY=canary)
            seen += [result.stdout, result.stderr]
    seen.append(home.run("rollback", GW_KEY=canary).stdout)
    assert not any(canary in text for text in seen)
    for path in home.root.rglob("*"):
        if path.is_file():
            assert canary.encode() not in path.read_bytes(), path


def test_help_and_version(home):
    assert "switch" in home.run("--help").stdout
    assert "--dry-run" in home.run("switch", "--help").stdout
    assert home.run("--version").stdout.startswith("agentcfg, version")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_unwritable_directory_is_refused(home):  # pragma: no cover - CI runs as root
    home.path(".codex").mkdir(mode=0o500)
    assert_clean_error(home.run("switch", "local", "--agent", "codex", check=2), "cannot create files")


def test_detect_against_a_server_that_wants_a_key_names_the_command_that_gives_it(home, keyring_file):
    import shlex
    import subprocess

    from tests.conftest import AGENTCFG
    from tests.fault_server import MODEL, FaultServer

    with FaultServer(key="sk-detect-key-123456", max_model_len=40960) as server:
        refused = home.run("profile", "add", "gw", "--base-url", server.base_url, "--detect", check=2)
        assert "wants a key" in refused.stderr and "NAME" not in refused.stderr
        command = refused.stderr.split("Give --detect its key: ", 1)[1].split(" (it asks", 1)[0]
        assert command == shlex.join(
            ["agentcfg", "profile", "add", "gw", "--base-url", server.base_url, "--detect", "--key-stdin"]
        )  # fmt: skip
        argv = shlex.split(command)
        done = subprocess.run(
            [AGENTCFG, *argv[1:]], env=home.env, input="sk-detect-key-123456\n", capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        wrong = home.run("profile", "add", "gw", "--base-url", server.base_url, "--detect", "--key-stdin", "--force",
                         stdin_text="sk-wrong-key-000000\n", check=2)  # fmt: skip
    assert "refuses the key sent" in wrong.stderr and "Give --detect the right key" in wrong.stderr
    assert "sk-wrong" not in wrong.stderr
    shown = home.json("profile", "show", "gw")
    assert (shown["model"], shown["context_window"], shown["key_env"]) == (MODEL, 40960, "GW_API_KEY")
    assert home.run("key", "get", "gw").stdout == "sk-detect-key-123456\n"  # stored with the profile


def test_status_says_how_each_agent_gets_its_key_in_words(home):
    home.run("switch", "local", "--all")
    text = home.run("status").stdout
    assert "key placeholder" not in text and "key helper command" not in text
    assert "qwen: key not needed (agentcfg's stand-in key)" in text
    assert home.json("status")["agents"][1]["key"] == "placeholder"  # --json keeps the short form
