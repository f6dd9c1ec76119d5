"""What each agent's read() takes from its files for doctor and status: agentcfg's own id and label
(whose files these are), the window the files tell the agent, and any file's values of the wrong
type read as unset, never as an exception (`status` and `doctor` read whatever a user's file holds)."""

from __future__ import annotations

import json

import pytest

from agentcfg.agents import AGENTS, claude, codex, opencode, qwen
from agentcfg.agents.base import KeySource
from agentcfg.agents.keyhelper import helper_profile_name, is_helper
from agentcfg.profiles import Profile
from tests.agents.samples import ENVIRON, switch

TEAM = Profile("team", "http://127.0.0.1:9/v1", "m", "http://127.0.0.1:9", key_env="TEAM_KEY", context_window=65536)
KEYLESS = Profile("lab", "http://127.0.0.1:9/v1", "m", "http://127.0.0.1:9", description="the lab's vLLM")
NO_KEYS = KeySource()
HELPER = KeySource(helper=("/opt/bin/agentcfg", "key", "get", "team"), runs_helper=frozenset({"claude", "codex"}))


def written(agent, profile: Profile, keys: KeySource = NO_KEYS):
    """The agent's files after `agentcfg switch PROFILE`, read back."""
    texts = {f: None for f in agent.files(ENVIRON)}
    out, _ = switch(agent, profile, texts, keys)
    return agent.read({f: out.get(f) for f in texts})


@pytest.mark.parametrize("keys", [NO_KEYS, HELPER], ids=["env-key", "helper"])
def test_codex_and_opencode_carry_the_profiles_id(keys):
    for agent in (codex, opencode):
        binding = written(agent, TEAM, keys)
        assert (binding.profile, binding.label) == ("team", "team"), agent.TRAITS.name
        assert written(agent, KEYLESS).profile == "lab"
        assert written(agent, KEYLESS).label == "the lab's vLLM"


def test_claude_carries_the_id_only_in_its_key_helper():
    assert written(claude, TEAM, HELPER).profile == "team"
    assert written(claude, KEYLESS).profile is None  # a keyless switch writes a stand-in token, no helper
    assert claude.read({claude.files(ENVIRON)[0]: json.dumps({"apiKeyHelper": "~/bin/key.sh"})}).profile is None


HELPERS = {
    "console script (earlier versions)": ("/opt/bin/agentcfg",),
    "python -m (earlier versions)": ("/usr/bin/python3", "-m", "agentcfg"),
    "isolated -m": ("/venv/bin/python", "-I", "-m", "agentcfg"),
    "isolated -c": (
        "/venv/bin/python",
        "-I",
        "-c",
        'import sys; sys.path[:0] = ["/src"]; from agentcfg.cli import main; main()',
    ),
}


@pytest.mark.parametrize("command", HELPERS.values(), ids=HELPERS)
def test_every_helper_agentcfg_writes_or_wrote_is_its_own(command):
    """status and doctor attribute the file to the profile, and a switch replaces the helper (not the user's)."""
    keys = KeySource(helper=(*command, "key", "get", "team"), runs_helper=frozenset({"claude", "codex"}))
    for agent in (claude, codex):
        binding = written(agent, TEAM, keys)
        assert binding.profile == "team" and is_helper(binding.helper), agent.TRAITS.name
        assert helper_profile_name(binding.helper) == "team"


def test_qwen_carries_only_the_label():
    binding = written(qwen, KEYLESS)
    assert (binding.profile, binding.label) == (None, "the lab's vLLM")


def test_context_window_as_the_switch_writes_it():
    assert [written(a, TEAM).context_window for a in (codex, qwen, claude)] == [65536, 65536, None]
    assert written(opencode, TEAM).context_window == 65536
    assert written(codex, KEYLESS).context_window is None and written(qwen, KEYLESS).context_window is None


HOSTILE = {
    "codex": [
        "model_provider = 5\n",
        "model_provider = []\n",
        'model_providers = "x"\n',
        'model_provider = "p"\n[model_providers]\np = "not a table"\n',
        'model_provider = "p"\nmodel = 3\n[model_providers.p]\nbase_url = 7\nenv_key = []\n'
        "experimental_bearer_token = 1\nwire_api = 2\n",
        'model_provider = "p"\n[model_providers.p.auth]\ncommand = "x"\nargs = "not-a-list"\n',
        "model_context_window = 1.5\n",
    ],
    "opencode": [
        '{"model": "p/m", "provider": []}',
        '{"model": "p/m", "provider": {"p": "x"}}',
        '{"model": "p/m", "provider": {"p": {"options": [], "models": "x"}}}',
        '{"model": "p/m", "provider": {"p": {"options": {"apiKey": 5, "baseURL": []},'
        ' "models": {"m": {"limit": []}}}}}',
    ],
    "qwen": [
        '{"model": "name"}',
        '{"model": {"name": 5}, "modelProviders": []}',
        '{"model": {"name": "m"}, "modelProviders": {"openai": [{"id": "m", "baseUrl": 1, "envKey": [],'
        ' "generationConfig": []}]}}',
        '{"model": {"name": "m"}, "modelProviders": {"openai": [{"id": "m",'
        ' "generationConfig": {"samplingParams": 3}}]}}',
    ],
    "claude": [
        '{"env": []}',
        '{"env": {"ANTHROPIC_BASE_URL": 5, "ANTHROPIC_MODEL": [], "ANTHROPIC_AUTH_TOKEN": 1}, "apiKeyHelper": 3}',
    ],
}


@pytest.mark.parametrize(
    ("name", "text"), [(name, text) for name, texts in HOSTILE.items() for text in texts], ids=lambda v: str(v)[:40]
)
def test_values_of_the_wrong_type_read_as_unset(name, text):
    agent = AGENTS[name]
    files = agent.files(ENVIRON)
    texts = {f: (text if f.format != "dotenv" else None) for f in files}
    binding = agent.read(texts)
    for value in (binding.base_url, binding.model, binding.key_env, binding.key_value, binding.helper):
        assert value is None or isinstance(value, str), binding
    for value in (binding.output_tokens, binding.context_window):
        assert value is None or (isinstance(value, int) and not isinstance(value, bool)), binding
