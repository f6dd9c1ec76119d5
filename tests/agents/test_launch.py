"""Each agent's `launch`: what `agentcfg exec PROFILE -- AGENT ARGS` gives the one process, computed on plain
strings (no process is run). The key is never in a Launch: the CLI adds it to the process's environment.
Research behind each mechanism: /work/briefs/16/research-{codex,claude,opencode,qwen}.md."""

from __future__ import annotations

import dataclasses
import json
import shlex
from pathlib import Path

import pytest
import tomllib

from agentcfg import budget
from agentcfg.agents import claude, codex, opencode, qwen
from agentcfg.agents.base import Launch, LaunchContext, runtime_name
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PLACEHOLDER_KEY, Profile
from tests.agents.samples import ENVIRON, GATEWAY_ANTHROPIC

RUNTIME = Path("/run/user/1000/agentcfg")
HELPER = ("/usr/bin/agentcfg", "key", "get", "gw")
SECRET = "sk-secret0123456789abcdef"  # what the user's files and shell hold: never in a Launch
KEY = "sk-profile-key-0123456789abcdef"  # the profile's key as exec found it: only ever in Launch.key_files
RUN = "4242-0a1b2c3d"
LOCAL = Profile(
    name="local",
    base_url="http://127.0.0.1:8000/v1",
    model="qwen3-coder",
    anthropic_base_url="http://127.0.0.1:8000/",
)


def context(
    agent, texts: dict[str, str] | None = None, environ=None, version=None, helper=HELPER, key=None
) -> LaunchContext:
    """A LaunchContext on the agent's files, each `texts[file name]` or absent; `key`: the one exec found."""
    files = agent.files(ENVIRON)
    current = {f: (texts or {}).get(f.path.name) for f in files}
    return LaunchContext(current, {**ENVIRON, **(environ or {})}, version, RUNTIME, helper, key, RUN)


def overrides(launch: Launch) -> tuple[dict[str, object], tuple[str, ...]]:
    """Codex's `-c key=value` pairs (values parsed as Codex does: TOML) and the arguments after them."""
    args, parsed = list(launch.args), {}
    while args[:1] == ["-c"]:
        key, _, value = args[1].partition("=")
        parsed[key] = tomllib.loads(f"v = {value}")["v"]
        args = args[2:]
    return parsed, tuple(args)


def carries(launch: Launch, secret: str) -> bool:
    """Whether any part of the Launch (args, env, files, notes) holds `secret`."""
    return secret in json.dumps(dataclasses.asdict(launch))


# --- Codex: `-c` overrides ------------------------------------------------------------------------------


def test_codex_gets_a_provider_of_its_own_by_overrides_before_the_users_args():
    launch = codex.launch(GATEWAY_ANTHROPIC, ("exec", "say hi"), context(codex))
    given, rest = overrides(launch)
    ident = "agentcfg_exec-gw"
    assert given == {
        "model": "glm-4.6",
        "model_provider": ident,
        f"model_providers.{ident}": {
            "name": "agentcfg: gw",
            "base_url": "https://gw.example/v1",
            "wire_api": "responses",
            "env_key": "GW_API_KEY",
        },
        "model_context_window": 200_000,
        # the key's variable is kept from the commands the model runs (Codex passes its environment on)
        "shell_environment_policy.exclude": ["GW_API_KEY"],
    }
    assert rest == ("exec", "say hi")
    assert (launch.env, launch.files, launch.key_files, launch.key_in_env) == ({}, {}, {}, True)


def test_codex_exec_id_is_not_the_one_a_switch_writes_nor_reserved():
    """A table of the same id in config.toml would lend its headers (and `auth` next to env_key is an error)."""
    given, _ = overrides(codex.launch(GATEWAY_ANTHROPIC, (), context(codex)))
    assert given["model_provider"] != codex.provider_id(GATEWAY_ANTHROPIC)
    assert given["model_provider"] not in codex.RESERVED_IDS


def test_codex_exec_id_is_none_config_toml_has():
    """A table of exec's id in config.toml (written by hand: no switch writes one) would merge with exec's (its
    `auth` next to exec's env_key is a hard error in Codex, its headers would go along): the next free one."""
    config = (
        '[model_providers.agentcfg_exec-gw]\nname = "mine"\n'
        '[model_providers.agentcfg_exec-gw.auth]\ncommand = "agentcfg"\n'
        '[model_providers.agentcfg_exec2-gw]\nname = "mine too"\n'
    )
    given, _ = overrides(codex.launch(GATEWAY_ANTHROPIC, (), context(codex, {"config.toml": config})))
    assert given["model_provider"] == "agentcfg_exec3-gw"
    assert given["model_providers.agentcfg_exec3-gw"]["env_key"] == "GW_API_KEY"


def test_codex_exec_on_x_never_takes_the_table_of_a_switched_exec_x():
    """Profile `exec-gw` is switched to as agentcfg-exec-gw (earlier versions' exec id for `gw`)."""
    config = '[model_providers.agentcfg-exec-gw]\nname = "agentcfg: exec-gw"\n[model_providers.agentcfg-exec-gw.auth]\n'
    given, _ = overrides(codex.launch(GATEWAY_ANTHROPIC, (), context(codex, {"config.toml": config})))
    assert given["model_provider"] == "agentcfg_exec-gw"


def test_codex_appends_the_key_variable_to_the_users_excludes():
    """`-c` replaces an array: the user's own excludes are carried over."""
    config = '[shell_environment_policy]\nexclude = ["AWS_*", "GITHUB_TOKEN"]\ninherit = "core"\n'
    given, _ = overrides(codex.launch(GATEWAY_ANTHROPIC, (), context(codex, {"config.toml": config})))
    assert given["shell_environment_policy.exclude"] == ["AWS_*", "GITHUB_TOKEN", "GW_API_KEY"]


@pytest.mark.parametrize("config", ["shell_environment_policy = 1\n", '[shell_environment_policy]\nexclude = "x"\n'])
def test_codex_odd_shell_policies_give_just_the_key_variable(config):
    given, _ = overrides(codex.launch(GATEWAY_ANTHROPIC, (), context(codex, {"config.toml": config})))
    assert given["shell_environment_policy.exclude"] == ["GW_API_KEY"]


def test_codex_keyless_profile_names_no_key_variable():
    given, _ = overrides(codex.launch(LOCAL, (), context(codex)))
    assert "env_key" not in given["model_providers.agentcfg_exec-local"]
    assert "shell_environment_policy.exclude" not in given
    assert "model_context_window" not in given  # neither the profile nor config.toml has one


def test_codex_always_gives_a_window_when_config_toml_has_one():
    """`-c` merges: config.toml's window (another profile's) would stay unless the override sets one."""
    given, _ = overrides(codex.launch(LOCAL, (), context(codex, {"config.toml": "model_context_window = 99999\n"})))
    assert given["model_context_window"] == budget.ASSUMED_WINDOW


def test_codex_refuses_a_legacy_profile_selector():
    """Codex itself refuses every start with a top-level `profile = "x"` (0.134+)."""
    with pytest.raises(AgentcfgError) as caught:
        codex.launch(LOCAL, (), context(codex, {"config.toml": 'profile = "work"\n[profiles.work]\nmodel = "m"\n'}))
    assert caught.value.exit_code == 2
    assert 'profile = "work"' in caught.value.message
    assert "/home/u/.codex/work.config.toml" in (caught.value.hint or "")


def test_codex_a_legacy_table_alone_is_no_reason_to_refuse():
    """[profiles.x] only stops `--profile x`; exec passes no --profile."""
    launch = codex.launch(LOCAL, ("exec", "hi"), context(codex, {"config.toml": '[profiles.work]\nmodel = "m"\n'}))
    assert overrides(launch)[1] == ("exec", "hi")


# --- Claude Code: --settings FILE -------------------------------------------------------------------------


def _only_file(launch: Launch, stem: str) -> str:
    """The one runtime file's name: STEM-<digest of its text>.settings.json (agents.base.runtime_name)."""
    (name,) = launch.files
    assert name == runtime_name(stem, launch.files[name])
    return name


def _claude_settings(launch: Launch, stem: str = "claude-gw") -> dict:
    name = _only_file(launch, stem)
    assert launch.args[:2] == ("--settings", str(RUNTIME / name))
    return json.loads(launch.files[name])


def test_claude_settings_file_sets_every_variable_a_lower_layer_could_hold():
    launch = claude.launch(GATEWAY_ANTHROPIC, ("-p", "say hi"), context(claude))
    settings = _claude_settings(launch)
    assert launch.args[2:] == ("-p", "say hi")
    assert settings == {
        "env": {
            "ANTHROPIC_BASE_URL": "https://gw.example/anthropic",
            "ANTHROPIC_AUTH_TOKEN": "",  # "" reads as unset: a user token below does not go along
            "ANTHROPIC_API_KEY": "",
            **dict.fromkeys(claude.EVERY_MODEL_SLOT, "glm-4.6"),
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(budget.output_tokens(GATEWAY_ANTHROPIC, claude.TRAITS.prompt_tokens)),
            "CLAUDE_CODE_MAX_CONTEXT_TOKENS": "200000",
            # a user's headers may carry another host's key; the switches would send every request to a cloud
            **dict.fromkeys((claude.CUSTOM_HEADERS, *claude.OTHER_PROVIDERS), ""),
        },
        "apiKeyHelper": shlex.join(HELPER),  # fetched from the keyring: the key is in no variable
        "model": "glm-4.6",
    }
    assert launch.key_in_env is False and launch.env == {}
    assert {"ANTHROPIC_DEFAULT_FABLE_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL"} <= set(
        settings["env"]
    )


def test_claude_project_profile_helper_prints_this_runs_key_file():
    """`key get` reads no project profile: its helper prints a key file of this run (Claude Code runs it again
    every 5 minutes), so the key is in no variable the model's commands inherit; the settings naming that
    file are this run's too, and both go when the run has ended (agentcfg.launch)."""
    launch = claude.launch(GATEWAY_ANTHROPIC, ("-p", "hi"), context(claude, helper=(), key=KEY))
    key_file, settings_file = f"claude-gw-run{RUN}.key", f"claude-gw-run{RUN}.settings.json"
    assert launch.key_files.keys() == {key_file, settings_file} and launch.files == {}
    assert launch.key_files[key_file] == KEY and KEY not in launch.key_files[settings_file]
    assert json.loads(launch.key_files[settings_file])["apiKeyHelper"] == shlex.join(["cat", str(RUNTIME / key_file)])
    assert launch.args == ("--settings", str(RUNTIME / settings_file), "-p", "hi")
    assert launch.key_in_env is False


def test_claude_keyring_profile_fetches_its_key_and_writes_no_key_file():
    launch = claude.launch(GATEWAY_ANTHROPIC, (), context(claude, key=KEY))
    assert _claude_settings(launch)["apiKeyHelper"] == shlex.join(HELPER)
    assert launch.key_files == {} and launch.key_in_env is False and not carries(launch, KEY)


def test_claude_keyless_profile_helper_prints_the_placeholder():
    """A helper of the user's would otherwise run and send its key as x-api-key (research-claude.md S16)."""
    launch = claude.launch(LOCAL, (), context(claude))
    settings = _claude_settings(launch, "claude-local")
    assert settings["apiKeyHelper"] == f"echo {PLACEHOLDER_KEY}"
    assert settings["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8000"  # no trailing slash
    assert settings["env"]["CLAUDE_CODE_MAX_CONTEXT_TOKENS"] == ""  # no window: none of the user's files' either


@pytest.mark.parametrize("given", [("--settings", "mine.json"), ("-p", "--settings=mine.json", "hi")])
def test_claude_refuses_the_users_own_settings_flag(given):
    """Claude Code reads only the last --settings: the user's would replace the profile's."""
    with pytest.raises(AgentcfgError) as caught:
        claude.launch(GATEWAY_ANTHROPIC, given, context(claude))
    assert caught.value.exit_code == 2 and "--settings" in caught.value.message


# --- opencode: OPENCODE_CONFIG_CONTENT --------------------------------------------------------------------


def _content(launch: Launch) -> dict:
    assert set(launch.env) == {"OPENCODE_CONFIG_CONTENT"}
    return json.loads(launch.env["OPENCODE_CONFIG_CONTENT"])


def test_opencode_content_sets_the_model_small_model_and_provider():
    launch = opencode.launch(GATEWAY_ANTHROPIC, ("run", "hi"), context(opencode, version=(1, 18, 33)))
    assert launch.args == ("run", "hi") and launch.key_in_env  # opencode reads it: `{env:GW_API_KEY}`
    (plugin,) = launch.files
    assert _content(launch) == {
        "$schema": "https://opencode.ai/config.json",
        "plugin": [(RUNTIME / plugin).as_uri()],  # keeps GW_API_KEY from the commands it runs (below)
        "model": "agentcfg_exec-gw/glm-4.6",
        "small_model": "agentcfg_exec-gw/glm-4.6",  # or a global small_model sends the title request elsewhere
        "provider": {
            "agentcfg_exec-gw": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "agentcfg: gw",
                "options": {"baseURL": "https://gw.example/v1", "apiKey": "{env:GW_API_KEY}"},
                "models": {
                    "glm-4.6": {
                        "name": "glm-4.6",
                        "tool_call": True,
                        "limit": {
                            "context": 200_000,
                            "output": budget.output_tokens(GATEWAY_ANTHROPIC, opencode.TRAITS.prompt_tokens),
                        },
                    }
                },
            }
        },
    }


def test_opencode_keyless_profile_sets_a_placeholder_key():
    """opencode deep-merges: without a key of its own a project's entry of the same id would lend its key."""
    content = _content(opencode.launch(LOCAL, (), context(opencode)))
    assert content["provider"]["agentcfg_exec-local"]["options"]["apiKey"] == PLACEHOLDER_KEY


def test_opencode_exec_provider_is_none_the_file_has():
    """The switch's `agentcfg-gw` stays in the file (with the user's headers on it): opencode would merge it into
    exec's provider of the same id, its headers going to whatever host the profile has now. A provider of
    exec's own id in the file (only a hand writes one) is passed over too."""
    mine = {"options": {"headers": {"X-Team-Token": "t"}, "baseURL": "https://old.example/v1"}}
    text = json.dumps({"provider": {"agentcfg-gw": mine, "agentcfg_exec-gw": mine}})
    content = _content(opencode.launch(GATEWAY_ANTHROPIC, (), context(opencode, {"opencode.json": text})))
    assert list(content["provider"]) == ["agentcfg_exec2-gw"]
    assert content["model"] == content["small_model"] == "agentcfg_exec2-gw/glm-4.6"


def test_opencode_keyed_profile_gets_a_plugin_keeping_its_variable_from_the_commands_opencode_runs():
    """opencode gives the bash tool, `!command` and its terminal its environment over what the plugins' `shell.env`
    hook returns: the plugin returns the key's variable unset. The file names the variable, never the key, and
    is named by its text like every shared runtime file."""
    launch = opencode.launch(GATEWAY_ANTHROPIC, (), context(opencode, key=KEY))
    ((name, text),) = launch.files.items()
    assert name == runtime_name("opencode-gw", text, ".plugin.js")
    assert '"shell.env"' in text and '["GW_API_KEY"]' in text and "undefined" in text
    assert launch.key_files == {} and not carries(launch, KEY)
    assert opencode.launch(LOCAL, (), context(opencode)).files == {}  # no key, nothing to keep out


def test_opencode_plugin_unsets_exactly_the_keys_variable(tmp_path):
    """The plugin's hook, run by node as opencode (Bun) runs it: the variables it hands back."""
    import shutil
    import subprocess

    node = shutil.which("node")
    if not node:
        pytest.skip("no node on PATH")
    ((name, text),) = opencode.launch(GATEWAY_ANTHROPIC, (), context(opencode)).files.items()
    plugin = tmp_path / name.replace(".js", ".mjs")
    plugin.write_text(text)
    script = (
        f"const {{ AgentcfgKeyOut }} = await import({json.dumps(plugin.as_uri())});"
        "const output = { env: { OTHER: 'kept' } }; await (await AgentcfgKeyOut({}))['shell.env']({}, output);"
        "const env = { ...{ GW_API_KEY: 'k', PATH: '/bin' }, ...output.env };"
        "console.log(JSON.stringify(Object.entries(env).filter(([, v]) => v !== undefined)))"
    )
    done = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert dict(json.loads(done.stdout)) == {"PATH": "/bin", "OTHER": "kept"}


def test_opencode_content_in_the_shell_is_replaced_with_a_note():
    launch = opencode.launch(LOCAL, (), context(opencode, environ={"OPENCODE_CONFIG_CONTENT": '{"model": "x/y"}'}))
    assert _content(launch)["model"] == "agentcfg_exec-local/qwen3-coder"
    assert launch.notes and "OPENCODE_CONFIG_CONTENT" in launch.notes[0]


def test_opencode_2_is_refused():
    with pytest.raises(AgentcfgError) as caught:
        opencode.launch(LOCAL, (), context(opencode, version=(2, 0, 1)))
    assert caught.value.exit_code == 2 and "opencode 2.0.1" in caught.value.message


# --- qwen-code: QWEN_CODE_SYSTEM_SETTINGS_PATH ----------------------------------------------------------


def test_qwen_gets_the_key_in_its_system_settings_file_of_this_run_only():
    """qwen passes its whole environment on to the commands the model runs: the key goes in the settings file
    (security.auth.apiKey), which is this run's alone; no entry names a variable, and OPENAI_API_KEY is empty
    (qwen prefers it to the file's key, and would load it from ~/.qwen/.env if unset)."""
    launch = qwen.launch(GATEWAY_ANTHROPIC, ("-p", "hi"), context(qwen, key=KEY))
    name = f"qwen-gw-run{RUN}.settings.json"
    assert launch.args == ("-p", "hi") and launch.files == {} and list(launch.key_files) == [name]
    assert launch.env == {
        "QWEN_CODE_SYSTEM_SETTINGS_PATH": str(RUNTIME / name),
        "OPENAI_BASE_URL": "https://gw.example/v1",
        "OPENAI_MODEL": "glm-4.6",
        "OPENAI_API_KEY": "",
    }
    assert launch.key_in_env is False
    assert json.loads(launch.key_files[name]) == {
        "$version": 4,
        "security": {"auth": {"selectedType": "openai", "apiKey": KEY}},
        "model": {"name": "glm-4.6", "baseUrl": "https://gw.example/v1"},
        "modelProviders": {
            "openai": [
                {
                    "id": "glm-4.6",
                    "name": "agentcfg: gw",
                    "baseUrl": "https://gw.example/v1",
                    "generationConfig": {
                        "samplingParams": {
                            "max_tokens": budget.output_tokens(GATEWAY_ANTHROPIC, qwen.TRAITS.prompt_tokens)
                        },
                        "contextWindowSize": 200_000,
                    },
                }
            ]
        },
    }
    assert KEY not in json.dumps([launch.args, launch.env, launch.files, launch.notes])


def test_qwen_keyless_profile_sets_the_placeholder_key():
    launch = qwen.launch(LOCAL, (), context(qwen))
    assert launch.env["OPENAI_API_KEY"] == PLACEHOLDER_KEY and launch.key_files == {} and launch.key_in_env
    (entry,) = json.loads(launch.files[_only_file(launch, "qwen-local")])["modelProviders"]["openai"]
    assert entry["envKey"] == "OPENAI_API_KEY"


def test_qwen_system_settings_the_process_takes_the_place_of_stay_under_the_profiles(tmp_path):
    """An administrator's (or the user's own) system file keeps its other settings; only auth, model and
    modelProviders are the profile's (qwen's system layer would otherwise be dropped for this run)."""
    system = tmp_path / "system.json"
    providers = {"openai": [{"id": "x", "baseUrl": "http://elsewhere/v1"}]}
    settings = {"tools": {"sandbox": True}, "model": {"name": "x", "maxSessionTurns": 5}, "modelProviders": providers}
    system.write_text(json.dumps(settings))
    launch = qwen.launch(LOCAL, (), context(qwen, environ={"QWEN_CODE_SYSTEM_SETTINGS_PATH": str(system)}))
    name = _only_file(launch, "qwen-local")
    assert launch.env["QWEN_CODE_SYSTEM_SETTINGS_PATH"] == str(RUNTIME / name)
    data = json.loads(launch.files[name])
    assert data["tools"] == {"sandbox": True} and data["model"]["maxSessionTurns"] == 5
    assert data["model"]["name"] == LOCAL.model and data["security"]["auth"]["selectedType"] == "openai"
    assert [e["baseUrl"] for e in data["modelProviders"]["openai"]] == [LOCAL.base_url]  # replaced, not joined


# --- never the key -----------------------------------------------------------------------------------------

# Files that hold a literal key (as `switch --store-key-in-files` writes them, or the user's own)
WITH_KEYS = {
    "config.toml": f'[model_providers.agentcfg-gw]\nexperimental_bearer_token = "{SECRET}"\n'
    '[shell_environment_policy]\nexclude = ["AWS_*"]\n',
    "settings.json": json.dumps({"env": {"ANTHROPIC_AUTH_TOKEN": SECRET}, "apiKeyHelper": f"echo {SECRET}"}),
    "opencode.json": json.dumps({"provider": {"agentcfg-gw": {"options": {"apiKey": SECRET}}}}),
    ".env": f"OPENAI_API_KEY={SECRET}\n",
}


@pytest.mark.parametrize("agent", [codex, claude, opencode, qwen], ids=lambda a: a.TRAITS.name)
@pytest.mark.parametrize("profile", [GATEWAY_ANTHROPIC, LOCAL], ids=["keyed", "keyless"])
@pytest.mark.parametrize("helper", [HELPER, ()], ids=["keyring", "project"])
def test_no_launch_carries_a_key(agent, profile, helper):
    environ = {"GW_API_KEY": SECRET, "OPENAI_API_KEY": SECRET, "ANTHROPIC_AUTH_TOKEN": SECRET}
    launch = agent.launch(profile, ("run",), context(agent, WITH_KEYS, environ, (1, 18, 33), helper))
    assert not carries(launch, SECRET), launch
    assert launch.args[-1] == "run"


@pytest.mark.parametrize("agent", [codex, claude, opencode, qwen], ids=lambda a: a.TRAITS.name)
@pytest.mark.parametrize("helper", [HELPER, ()], ids=["keyring", "project"])
def test_the_profiles_key_is_only_ever_in_a_key_file_and_then_out_of_the_processs_variables(agent, helper):
    """The key exec found reaches a Launch only in key_files (this run's, removed after it); an agent that
    takes it so gets no variable of it (key_in_env False)."""
    launch = agent.launch(GATEWAY_ANTHROPIC, ("run",), context(agent, version=(1, 18, 33), helper=helper, key=KEY))
    assert not carries(dataclasses.replace(launch, key_files={}), KEY)
    if any(KEY in text for text in launch.key_files.values()):
        assert launch.key_in_env is False
