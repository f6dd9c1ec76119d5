"""Each agent's edits, applied to plain strings: what lands in the files, and what `read` sees."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentcfg import budget, edit
from agentcfg.agents import AGENTS, claude, cline, codex, copilot, droid, gemini, opencode, qwen
from agentcfg.agents.base import AgentFile, Binding, KeySource
from agentcfg.edit import MISSING
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PLACEHOLDER_KEY, Profile
from tests.agents.samples import ENVIRON, GATEWAY_ANTHROPIC, NO_KEYS, switch

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


LOCAL = Profile(
    name="local",
    base_url="http://127.0.0.1:8000/v1",
    model="qwen3-coder",
    anthropic_base_url="http://127.0.0.1:8000/",
    context_window=65536,
)
GATEWAY = Profile(
    name="gw",
    base_url="https://gw.example/v1",
    model="glm-4.6",
    key_env="GW_API_KEY",
    description="Gateway — EU",
)
LOCAL_KEYED = Profile(  # the same name as LOCAL, redefined with a key
    name="local",
    base_url="http://127.0.0.1:8000/v1",
    model="qwen3-coder",
    key_env="VLLM_API_KEY",
    context_window=65536,
)


def files(agent) -> list[AgentFile]:
    return agent.files(ENVIRON)


def shown(binding: Binding) -> Binding:
    """What `status` shows (doctor's extra fields are tested in test_key_wiring and the doctor tests)."""
    return Binding(base_url=binding.base_url, model=binding.model, key=binding.key)


def test_every_agent_is_registered():
    assert {
        "codex": codex, "qwen": qwen, "opencode": opencode, "claude": claude, "cline": cline, "copilot": copilot,
        "gemini": gemini, "droid": droid,
    } == AGENTS  # fmt: skip


# --- Codex ---------------------------------------------------------------------------------------

CODEX_CONFIG = """# my Codex settings — ünïcødé
approval_policy = "on-request"

[mcp_servers.docs]
command = "npx"
args = ["-y", "@docs/server"]

[projects."/home/u/x"]
trust_level = "trusted"
"""


def _codex(profile: Profile, text: str | None) -> str:
    (config,) = files(codex)
    out, notes = switch(codex, profile, {config: text})
    assert notes == ()
    return out[config]


def test_codex_file_is_config_toml_in_codex_home(tmp_path):
    (config,) = files(codex)
    assert config == AgentFile(Path("/home/u/.codex/config.toml"), "toml")
    (moved,) = codex.files({**ENVIRON, "CODEX_HOME": str(tmp_path)})
    assert moved.path == tmp_path / "config.toml"
    with pytest.raises(AgentcfgError, match="CODEX_HOME"):
        codex.files({**ENVIRON, "CODEX_HOME": str(tmp_path / "missing")})


def test_codex_keyless_profile():
    data = tomllib.loads(_codex(LOCAL, None))
    assert data == {
        "model": "qwen3-coder",
        "model_provider": "agentcfg-local",
        "model_context_window": 65536,
        "model_providers": {
            "agentcfg-local": {
                "name": "agentcfg: local",
                "base_url": "http://127.0.0.1:8000/v1",
                "wire_api": "responses",
            }
        },
    }


def test_codex_keyed_profile_writes_env_key_and_no_window():
    data = tomllib.loads(_codex(GATEWAY, CODEX_CONFIG))
    assert data["model_provider"] == "agentcfg-gw"
    assert data["model_providers"]["agentcfg-gw"] == {
        "name": "agentcfg: Gateway — EU",
        "base_url": "https://gw.example/v1",
        "wire_api": "responses",
        "env_key": "GW_API_KEY",
    }
    assert "model_context_window" not in data
    assert data["mcp_servers"] == {"docs": {"command": "npx", "args": ["-y", "@docs/server"]}}
    assert data["projects"] == {"/home/u/x": {"trust_level": "trusted"}}
    assert data["approval_policy"] == "on-request"


@pytest.mark.parametrize("profile", [LOCAL, GATEWAY, LOCAL_KEYED, GATEWAY_ANTHROPIC])
def test_codex_provider_id_is_prefixed(profile):
    assert codex.provider_id(profile) == f"agentcfg-{profile.name}"
    assert not codex.provider_id(profile).startswith(tuple(codex.BUILT_IN_PROVIDERS))
    data = tomllib.loads(_codex(profile, None))
    assert data["model_provider"].startswith("agentcfg-")
    assert list(data["model_providers"]) == [codex.provider_id(profile)]


def test_codex_switch_to_a_keyless_profile_removes_env_key_and_a_stale_window():
    keyed = _codex(LOCAL_KEYED, CODEX_CONFIG)
    assert tomllib.loads(keyed)["model_providers"]["agentcfg-local"]["env_key"] == "VLLM_API_KEY"
    keyless = _codex(LOCAL, keyed)
    assert "env_key" not in tomllib.loads(keyless)["model_providers"]["agentcfg-local"]
    assert "env_key" not in keyless
    gateway = _codex(GATEWAY, keyless)
    data = tomllib.loads(gateway)
    assert "model_context_window" not in data  # the gateway has no window: the local one goes
    assert set(data["model_providers"]) == {"agentcfg-local", "agentcfg-gw"}


def test_codex_keeps_the_rest_of_the_file():
    out = _codex(LOCAL, CODEX_CONFIG)
    for block in (
        "# my Codex settings — ünïcødé\n",
        '[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "@docs/server"]\n',
        '[projects."/home/u/x"]\ntrust_level = "trusted"\n',
    ):
        assert block in out


def test_codex_second_switch_changes_nothing():
    once = _codex(GATEWAY, CODEX_CONFIG)
    assert _codex(GATEWAY, once) is once


def test_codex_read():
    (config,) = files(codex)
    assert shown(codex.read({config: None})) == Binding()
    written = _codex(GATEWAY, CODEX_CONFIG)
    assert shown(codex.read({config: written})) == Binding(
        base_url="https://gw.example/v1", model="glm-4.6", key="env GW_API_KEY"
    )
    assert shown(codex.read({config: _codex(LOCAL, None)})) == Binding(
        base_url="http://127.0.0.1:8000/v1", model="qwen3-coder"
    )
    # no provider named: Codex's built-in openai
    assert shown(codex.read({config: 'model = "gpt-5"\n'})) == Binding(
        base_url="https://api.openai.com/v1", model="gpt-5"
    )


# --- qwen-code -----------------------------------------------------------------------------------

QWEN_ENV = """# my qwen env
export OPENAI_BASE_URL='https://old.example/v1'  # old gateway
TAVILY_API_KEY=tvly-123
"""
QWEN_SETTINGS = """{
  "ui": { "theme": "GitHub" },
  "model": {
    "name": "old-model",
    "generationConfig": { "timeout": 60000 }
  },
  "mcpServers": { "fs": { "command": "npx" } }
}
"""


def _qwen(profile: Profile, env_text: str | None, settings_text: str | None):
    dotenv_file, settings_file = files(qwen)
    out, notes = switch(qwen, profile, {dotenv_file: env_text, settings_file: settings_text})
    return out[dotenv_file], json.loads(out[settings_file]), out[settings_file], notes


def test_qwen_files():
    dotenv_file, settings_file = files(qwen)
    assert dotenv_file == AgentFile(Path("/home/u/.qwen/.env"), "dotenv")
    assert settings_file == AgentFile(Path("/home/u/.qwen/settings.json"), "json", '{\n  "$version": 4\n}\n')
    assert qwen.files({**ENVIRON, "QWEN_HOME": "/q"})[0].path == Path("/q/.env")


def test_qwen_keyless_profile_gets_the_placeholder_key():
    env_text, settings, _, notes = _qwen(LOCAL, None, None)
    assert edit.load("dotenv", env_text) == {
        "OPENAI_API_KEY": PLACEHOLDER_KEY,
        "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
        "OPENAI_MODEL": "qwen3-coder",
    }
    assert notes == ()
    assert settings == {
        "$version": 4,  # a new file starts at the version qwen stamps: its first run leaves it as it is
        "security": {"auth": {"selectedType": "openai"}},
        "model": {"name": "qwen3-coder", "baseUrl": "http://127.0.0.1:8000/v1"},  # qwen 0.24 picks the entry by it
        "modelProviders": {
            "openai": [
                {
                    "id": "qwen3-coder",
                    "name": "agentcfg: local",
                    "baseUrl": "http://127.0.0.1:8000/v1",
                    "envKey": "OPENAI_API_KEY",  # the placeholder in .env
                    "generationConfig": {"samplingParams": {"max_tokens": 21768}, "contextWindowSize": 65536},
                }
            ]
        },
    }


def test_qwen_max_tokens_is_bounded_by_the_window():
    _, settings, _, _ = _qwen(LOCAL, None, None)
    max_tokens = settings["modelProviders"]["openai"][0]["generationConfig"]["samplingParams"]["max_tokens"]
    assert 0 < max_tokens <= (65536 - 22000) // 2


def test_qwen_keeps_the_users_lines_and_settings():
    env_text, settings, settings_text, _ = _qwen(LOCAL, QWEN_ENV, QWEN_SETTINGS)
    assert env_text == (
        "# my qwen env\n"
        "export OPENAI_BASE_URL='http://127.0.0.1:8000/v1'  # old gateway\n"
        "TAVILY_API_KEY=tvly-123\n"
        f"OPENAI_API_KEY={PLACEHOLDER_KEY}\n"
        "OPENAI_MODEL=qwen3-coder\n"
    )
    assert settings["ui"] == {"theme": "GitHub"}
    assert settings["mcpServers"] == {"fs": {"command": "npx"}}
    assert settings["model"]["generationConfig"]["timeout"] == 60000
    assert settings["model"]["name"] == "qwen3-coder"
    assert '  "ui": { "theme": "GitHub" },\n' in settings_text


def test_qwen_keyed_profile_removes_the_placeholder():
    keyless_env, _, keyless_settings, _ = _qwen(LOCAL, QWEN_ENV, QWEN_SETTINGS)
    env_text, settings, _, notes = _qwen(GATEWAY, keyless_env, keyless_settings)
    assert "OPENAI_API_KEY" not in env_text
    assert edit.get("dotenv", env_text, ("OPENAI_BASE_URL",)) == "https://gw.example/v1"
    assert edit.get("dotenv", env_text, ("OPENAI_MODEL",)) == "glm-4.6"
    assert notes == ()
    (entry,) = settings["modelProviders"]["openai"]  # the keyless profile's entry is gone
    assert entry["envKey"] == "GW_API_KEY" and entry["baseUrl"] == "https://gw.example/v1"
    assert "contextWindowSize" not in entry["generationConfig"]  # the gateway has no window
    assert entry["generationConfig"]["samplingParams"]["max_tokens"] == budget.CEILING_UNKNOWN_WINDOW


def test_qwen_keyed_profile_removes_a_plaintext_key_and_notes_it():
    # qwen falls back to OPENAI_API_KEY when the profile's variable is unset: it would go to the gateway.
    text = "OPENAI_API_KEY=sk-mine # personal\nTAVILY_API_KEY=tvly-1\n"
    env_text, _, _, notes = _qwen(GATEWAY, text, None)
    assert edit.get("dotenv", env_text, ("OPENAI_API_KEY",)) is MISSING
    assert env_text.startswith("TAVILY_API_KEY=tvly-1\n")
    (note,) = notes
    assert "/home/u/.qwen/.env" in note and "OPENAI_API_KEY" in note and "https://gw.example/v1" in note
    assert "GW_API_KEY" in note and "rollback" in note
    assert "sk-mine" not in note


def test_qwen_second_switch_changes_nothing():
    env_once, _, settings_once, _ = _qwen(LOCAL, QWEN_ENV, QWEN_SETTINGS)
    dotenv_file, settings_file = files(qwen)
    again, _ = switch(qwen, LOCAL, {dotenv_file: env_once, settings_file: settings_once})
    assert again[dotenv_file] is env_once
    assert again[settings_file] is settings_once


def test_qwen_read():
    dotenv_file, settings_file = files(qwen)
    assert shown(qwen.read({dotenv_file: None, settings_file: None})) == Binding()
    env_text, _, settings_text, _ = _qwen(LOCAL, None, None)
    assert shown(qwen.read({dotenv_file: env_text, settings_file: settings_text})) == Binding(
        base_url="http://127.0.0.1:8000/v1", model="qwen3-coder", key="placeholder"
    )
    own = qwen.read({dotenv_file: "OPENAI_API_KEY=sk-x\nOPENAI_MODEL=m\n", settings_file: None})
    assert shown(own) == Binding(model="m", key="in .env")


# --- opencode ------------------------------------------------------------------------------------

OPENCODE_JSONC = """{
  // mine
  "$schema": "https://opencode.ai/config.json",
  "provider": {
    "ollama": { "npm": "@ai-sdk/openai-compatible", "options": { "baseURL": "http://localhost:11434/v1" } },
  },
  "mcp": { "fs": { "type": "local", "command": ["npx", "fs"] } },
}
"""


def _opencode(profile: Profile, text: str | None) -> str:
    (config,) = files(opencode)
    out, notes = switch(opencode, profile, {config: text})
    assert notes == ()
    return out[config]


def test_opencode_files(tmp_path):
    (config,) = files(opencode)
    assert config.path == Path("/home/u/.config-does-not-exist/opencode/opencode.json")
    assert config.format == "json" and config.seed == opencode.SEED
    (named,) = opencode.files({**ENVIRON, "OPENCODE_CONFIG": str(tmp_path / "x.json")})
    assert named.path == tmp_path / "x.json"
    (tmp_path / "opencode").mkdir()
    for name in ("config.json", "opencode.jsonc"):
        (tmp_path / "opencode" / name).write_text("{}")
    (winner,) = opencode.files({"HOME": "/home/u", "XDG_CONFIG_HOME": str(tmp_path)})
    assert winner.path == tmp_path / "opencode" / "opencode.jsonc"  # the file opencode merges last


def test_opencode_keyed_profile():
    data = json.loads(_opencode(GATEWAY, None))
    assert data == {
        "$schema": "https://opencode.ai/config.json",
        "model": "agentcfg-gw/glm-4.6",
        "provider": {
            "agentcfg-gw": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "agentcfg: Gateway — EU",
                "options": {"baseURL": "https://gw.example/v1", "apiKey": "{env:GW_API_KEY}"},
                "models": {
                    "glm-4.6": {
                        "name": "glm-4.6",
                        "tool_call": True,
                        "limit": {"context": budget.ASSUMED_WINDOW, "output": budget.CEILING_UNKNOWN_WINDOW},
                    }
                },
            }
        },
    }


def test_opencode_keyless_profile_has_no_api_key_and_a_bounded_output():
    data = edit.load("json", _opencode(LOCAL, OPENCODE_JSONC))
    provider = data["provider"]["agentcfg-local"]
    assert "apiKey" not in provider["options"]
    model = provider["models"]["qwen3-coder"]
    assert model["tool_call"] is True
    assert model["limit"]["context"] == 65536
    assert model["limit"]["output"] == 27768
    assert model["limit"]["output"] <= (model["limit"]["context"] - opencode.TRAITS.prompt_tokens) / 2
    assert data["provider"]["ollama"]["options"] == {"baseURL": "http://localhost:11434/v1"}
    assert data["mcp"] == {"fs": {"type": "local", "command": ["npx", "fs"]}}


def test_opencode_keeps_comments_and_trailing_commas():
    out = _opencode(LOCAL, OPENCODE_JSONC)
    assert out.startswith('{\n  // mine\n  "$schema": "https://opencode.ai/config.json",\n  "provider": {\n')
    assert (
        '"ollama": { "npm": "@ai-sdk/openai-compatible", "options": { "baseURL": "http://localhost:11434/v1" } },\n'
        in out
    )
    assert out.endswith('  "model": "agentcfg-local/qwen3-coder",\n}\n')


def test_opencode_switch_to_the_keyless_profile_of_the_same_name_removes_the_key():
    keyed = _opencode(LOCAL_KEYED, OPENCODE_JSONC)
    assert edit.get("json", keyed, ("provider", "agentcfg-local", "options", "apiKey")) == "{env:VLLM_API_KEY}"
    keyless = _opencode(LOCAL, keyed)
    assert "apiKey" not in keyless
    assert edit.get("json", keyless, ("provider", "agentcfg-local", "options")) == {
        "baseURL": "http://127.0.0.1:8000/v1"
    }


def test_opencode_second_switch_changes_nothing():
    once = _opencode(GATEWAY, OPENCODE_JSONC)
    assert _opencode(GATEWAY, once) is once


def test_opencode_read():
    (config,) = files(opencode)
    assert shown(opencode.read({config: None})) == Binding()
    assert shown(opencode.read({config: _opencode(GATEWAY, None)})) == Binding(
        base_url="https://gw.example/v1", model="glm-4.6", key="{env:GW_API_KEY}"
    )
    assert shown(opencode.read({config: _opencode(LOCAL, None)})) == Binding(
        base_url="http://127.0.0.1:8000/v1", model="qwen3-coder"
    )
    slashed = Profile(name="hf", base_url="http://h/v1", model="Qwen/Qwen3-Coder-30B", key_env="HF_TOKEN")
    assert opencode.read({config: _opencode(slashed, None)}).model == "Qwen/Qwen3-Coder-30B"
    assert shown(opencode.read({config: '{"model": "anthropic/claude-x"}'})) == Binding(model="claude-x")
    inline = '{"model": "p/m", "provider": {"p": {"options": {"apiKey": "sk-1", "baseURL": "u"}}}}'
    assert shown(opencode.read({config: inline})) == Binding(base_url="u", model="m", key="in file")


# --- Claude Code ---------------------------------------------------------------------------------

CLAUDE_SETTINGS = """{
  "env": {
    "DISABLE_TELEMETRY": "1"
  },
  "permissions": {
    "allow": ["Bash(npm run lint)", "Read(~/.zshrc)"],
    "deny": ["Read(./.env)"]
  },
  "hooks": {
    "PostToolUse": [{ "matcher": "Edit", "hooks": [{ "type": "command", "command": "ruff format" }] }]
  },
  "statusLine": { "type": "command", "command": "echo ✓ ünïcødé" }
}
"""


HELPER = KeySource(helper=("/opt/agentcfg/bin/agentcfg", "key", "get", "gw"), runs_helper=frozenset({"claude"}))


def _claude(profile: Profile, text: str | None, keys: KeySource = NO_KEYS):
    (settings,) = files(claude)
    out, notes = switch(claude, profile, {settings: text}, keys)
    return out[settings], notes


def test_claude_file():
    (settings,) = files(claude)
    assert settings == AgentFile(Path("/home/u/.claude/settings.json"), "json")
    assert claude.files({**ENVIRON, "CLAUDE_CONFIG_DIR": "/c"})[0].path == Path("/c/settings.json")


def test_claude_keyless_profile():
    out, notes = _claude(LOCAL, CLAUDE_SETTINGS)
    data = json.loads(out)
    assert data["env"] == {
        "DISABLE_TELEMETRY": "1",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:8000",  # no trailing slash
        "ANTHROPIC_AUTH_TOKEN": PLACEHOLDER_KEY,
        "ANTHROPIC_MODEL": "qwen3-coder",
        "ANTHROPIC_DEFAULT_OPUS_MODEL": "qwen3-coder",
        "ANTHROPIC_DEFAULT_SONNET_MODEL": "qwen3-coder",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": "qwen3-coder",
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "16768",
        "CLAUDE_CODE_MAX_CONTEXT_TOKENS": "65536",  # 2.1.332 assumes 1M for a model it does not know
    }
    assert notes == ()
    original = json.loads(CLAUDE_SETTINGS)
    for key in ("permissions", "hooks", "statusLine"):
        assert data[key] == original[key]
    assert "echo ✓ ünïcødé" in out
    assert out.startswith('{\n  "env": {\n    "DISABLE_TELEMETRY": "1",\n    "ANTHROPIC_BASE_URL"')


def test_claude_max_output_tokens_is_a_string_bounded_by_the_window():
    out, _ = _claude(LOCAL, None)
    value = json.loads(out)["env"]["CLAUDE_CODE_MAX_OUTPUT_TOKENS"]
    assert isinstance(value, str)
    assert 0 < int(value) <= (65536 - claude.TRAITS.prompt_tokens) // 2


def test_claude_keyed_profile_removes_the_placeholder_and_writes_no_token():
    keyless, _ = _claude(LOCAL, CLAUDE_SETTINGS)
    out, notes = _claude(GATEWAY_ANTHROPIC, keyless)
    env = json.loads(out)["env"]
    assert "ANTHROPIC_AUTH_TOKEN" not in env
    assert env["ANTHROPIC_BASE_URL"] == "https://gw.example/anthropic"
    assert env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "32000"
    assert notes == ()


def test_claude_keyed_profile_removes_the_users_plaintext_keys_and_notes_it():
    # Either variable outranks apiKeyHelper and would go to the gateway instead of the profile's key.
    text = '{"env": {"ANTHROPIC_AUTH_TOKEN": "sk-ant-mine", "ANTHROPIC_API_KEY": "sk-ant-api"}}'
    out, notes = _claude(GATEWAY_ANTHROPIC, text, HELPER)
    env = json.loads(out)["env"]
    assert "ANTHROPIC_AUTH_TOKEN" not in env and "ANTHROPIC_API_KEY" not in env
    assert len(notes) == 2
    for note, variable in zip(notes, ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"), strict=True):
        assert f"removed your plaintext {variable}" in note and "https://gw.example/anthropic" in note
        assert "sk-ant" not in note and "rollback" in note


def test_claude_unsupported():
    reason = claude.unsupported(GATEWAY)
    assert reason is not None
    assert "'gw'" in reason and "agentcfg profile set gw anthropic_base_url=" in reason
    assert claude.unsupported(LOCAL) is None
    assert claude.unsupported(GATEWAY_ANTHROPIC) is None
    for agent in (codex, qwen, opencode):
        assert agent.unsupported(GATEWAY) is None


def test_claude_second_switch_changes_nothing():
    once, _ = _claude(LOCAL, CLAUDE_SETTINGS)
    again, _ = _claude(LOCAL, once)
    assert again is once


def test_claude_read():
    (settings,) = files(claude)
    assert shown(claude.read({settings: None})) == Binding()
    out, _ = _claude(LOCAL, CLAUDE_SETTINGS)
    assert shown(claude.read({settings: out})) == Binding(
        base_url="http://127.0.0.1:8000", model="qwen3-coder", key="placeholder"
    )
    assert claude.read({settings: '{"env": {"ANTHROPIC_API_KEY": "sk"}}'}).key == "in file"
    assert claude.read({settings: '{"apiKeyHelper": "~/bin/key.sh"}'}).key == "helper command"


# --- the output budget -----------------------------------------------------------------------------

PROMPTS = {
    "codex": 13_000,
    "opencode": 10_000,
    "qwen": 22_000,
    "claude": 32_000,
    "cline": 8_000,
    "copilot": 12_000,
    "gemini": 10_000,
    "droid": 12_000,
}
EXPECTED_OUTPUT = {  # window -> agent -> tokens
    # 2048: no room, a quarter of the window; 16384: budget.MIN_OUTPUT, what each needs;
    # 32768: claude's is not the 384 of its room
    2048: {
        "codex": 512,
        "opencode": 512,
        "qwen": 512,
        "claude": 512,
        "cline": 512,
        "copilot": 512,
        "gemini": 512,
        "droid": 512,
    },
    16384: {
        "codex": 4096,
        "opencode": 4096,
        "qwen": 4096,
        "claude": 4096,
        "cline": 4192,
        "copilot": 4096,
        "gemini": 4096,
        "droid": 4096,
    },
    32768: {
        "codex": 9884,
        "opencode": 11384,
        "qwen": 5384,
        "claude": 4096,
        "cline": 12384,
        "copilot": 10384,
        "gemini": 11384,
        "droid": 10384,
    },
    65536: {
        "codex": 26268,
        "opencode": 27768,
        "qwen": 21768,
        "claude": 16768,
        "cline": 28768,
        "copilot": 26768,
        "gemini": 27768,
        "droid": 26768,
    },
    1048576: {
        "codex": 32000,
        "opencode": 32000,
        "qwen": 32000,
        "claude": 32000,
        "cline": 32000,
        "copilot": 32000,
        "gemini": 32000,
        "droid": 32000,
    },
    None: {
        "codex": 8192,
        "opencode": 8192,
        "qwen": 8192,
        "claude": 8192,
        "cline": 8192,
        "copilot": 8192,
        "gemini": 8192,
        "droid": 8192,
    },
}


def test_agents_declare_the_prompt_sizes_the_budget_assumes():
    assert {name: agent.TRAITS.prompt_tokens for name, agent in AGENTS.items()} == PROMPTS


@pytest.mark.parametrize("window", list(EXPECTED_OUTPUT), ids=str)
@pytest.mark.parametrize("agent", list(PROMPTS))
def test_output_tokens(window, agent):
    profile = Profile(name="p", base_url="http://h/v1", model="m", context_window=window)
    tokens = budget.output_tokens(profile, PROMPTS[agent])
    assert tokens == EXPECTED_OUTPUT[window][agent]
    if window is not None:
        assert 1 <= tokens < window
        room = (window - PROMPTS[agent]) // 2
        if room >= budget.MIN_OUTPUT:
            assert tokens <= room


@pytest.mark.parametrize(("window", "expected"), [(None, 4000), (65536, 4000), (1048576, 4000), (2048, 512)])
def test_output_tokens_follow_the_profiles_own_maximum(window, expected):
    profile = Profile(name="p", base_url="http://h/v1", model="m", context_window=window, max_output_tokens=4000)
    assert budget.output_tokens(profile, 13_000) == expected


def test_a_large_profile_maximum_is_still_bounded_by_the_window():
    big = Profile(name="p", base_url="http://h/v1", model="m", context_window=1048576, max_output_tokens=100_000)
    assert budget.output_tokens(big, 13_000) == 100_000
    small = Profile(name="p", base_url="http://h/v1", model="m", context_window=65536, max_output_tokens=100_000)
    assert budget.output_tokens(small, 13_000) == (65536 - 13_000) // 2


def test_window_falls_back_to_the_assumed_one():
    assert budget.window(GATEWAY) == budget.ASSUMED_WINDOW == 131072
    assert budget.window(LOCAL) == 65536


def test_keyless_profile_replacing_a_real_key_says_so():
    keyless = Profile(
        name="local", base_url="http://127.0.0.1:8000/v1", model="m", anthropic_base_url="http://127.0.0.1:8000"
    )
    env_file, settings_file = (
        AgentFile(Path("/h/.qwen/.env"), "dotenv"),
        AgentFile(Path("/h/.qwen/settings.json"), "json"),
    )
    texts = {env_file: "OPENAI_API_KEY=sk-mine-123456\n", settings_file: None}
    (env_edit, _) = qwen.edits(keyless, texts, KeySource())
    assert ((("OPENAI_API_KEY",), PLACEHOLDER_KEY) in env_edit.assignments) and "rollback" in env_edit.notes[0]
    claude_file = AgentFile(Path("/h/.claude/settings.json"), "json")
    (claude_edit,) = claude.edits(keyless, {claude_file: '{"env": {"ANTHROPIC_AUTH_TOKEN": "sk-real"}}'}, KeySource())
    assert "placeholder" in claude_edit.notes[0]
