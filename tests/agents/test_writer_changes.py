"""The writers' changes for issue 16, on plain strings: qwen's model.baseUrl (and read() choosing as qwen 0.24
does), its `$version` 4 seed; Claude Code's window variable and a user's apiKeyHelper; opencode's one config
shared by switch and exec."""

from __future__ import annotations

import json

import pytest

from agentcfg import edit
from agentcfg.agents import base, claude, opencode, qwen
from agentcfg.agents.base import KeySource
from agentcfg.edit import REMOVE
from agentcfg.profiles import Profile
from tests.agents.samples import ENVIRON, GATEWAY_ANTHROPIC, NO_KEYS, switch

LOCAL = Profile(
    name="local", base_url="http://127.0.0.1:8000/v1", model="m", anthropic_base_url="http://127.0.0.1:8000"
)


# --- qwen -------------------------------------------------------------------------------------------------


def _qwen_texts(settings: str | None, dotenv: str | None = None):
    dotenv_file, settings_file = qwen.files(ENVIRON)
    return {dotenv_file: dotenv, settings_file: settings}


def _user_entry(base_url: str, name: str = "mine") -> dict:
    return {"id": "m", "name": name, "baseUrl": base_url, "envKey": "MY_KEY"}


def test_qwen_switch_points_model_base_url_at_the_profile():
    """qwen 0.24 picks the entry whose baseUrl is model.baseUrl: a user's entry of the same id on another host
    would win without it (research-qwen.md, section 4)."""
    texts = _qwen_texts(json.dumps({"model": {"name": "m", "baseUrl": "http://other/v1"},
                                    "modelProviders": {"openai": [_user_entry("http://other/v1")]}}))  # fmt: skip
    out, _ = switch(qwen, LOCAL, texts)
    settings = json.loads(out[list(texts)[1]])
    assert settings["model"]["baseUrl"] == "http://127.0.0.1:8000/v1"
    assert [e["baseUrl"] for e in settings["modelProviders"]["openai"]] == [
        "http://127.0.0.1:8000/v1",
        "http://other/v1",
    ]
    assert qwen.read(_qwen_texts(json.dumps(settings))).base_url == "http://127.0.0.1:8000/v1"


def test_qwen_read_prefers_the_entry_model_base_url_names():
    ours = {**_user_entry("http://a/v1", "agentcfg: a"), "envKey": "A_KEY"}
    theirs = _user_entry("http://b/v1")
    settings = {"model": {"name": "m", "baseUrl": "http://b/v1"}, "modelProviders": {"openai": [ours, theirs]}}
    binding = qwen.read(_qwen_texts(json.dumps(settings)))
    assert (binding.base_url, binding.key_env, binding.label) == ("http://b/v1", "MY_KEY", None)


@pytest.mark.parametrize("pinned", [None, "http://nowhere/v1"])
def test_qwen_read_without_a_matching_base_url_takes_the_first_of_the_id(pinned):
    model = {"name": "m", **({"baseUrl": pinned} if pinned else {})}
    entries = [_user_entry("http://a/v1", "agentcfg: a"), _user_entry("http://b/v1")]
    binding = qwen.read(_qwen_texts(json.dumps({"model": model, "modelProviders": {"openai": entries}})))
    assert binding.base_url == "http://a/v1" and binding.label == "a"


def test_qwen_new_settings_start_at_version_4():
    """The `$version` qwen stamps: its first run then leaves the new file as agentcfg wrote it."""
    out, _ = switch(qwen, LOCAL, _qwen_texts(None))
    assert json.loads(out[qwen.files(ENVIRON)[1]])["$version"] == qwen.SETTINGS_VERSION == 4


# --- Claude Code ---------------------------------------------------------------------------------------


def _claude(profile: Profile, text: str | None, keys: KeySource = NO_KEYS):
    (settings,) = claude.files(ENVIRON)
    out, notes = switch(claude, profile, {settings: text}, keys)
    return json.loads(out[settings]), notes


def test_claude_window_variable_follows_the_profile():
    settings, _ = _claude(GATEWAY_ANTHROPIC, None, KeySource(helper=("agentcfg", "key", "get", "gw"),
                                                            runs_helper=frozenset({"claude"})))  # fmt: skip
    assert settings["env"][claude.MAX_CONTEXT] == "200000"
    # a profile without a window: the variable another profile's switch wrote goes (2.1.332 then says it assumes 1M)
    settings, _ = _claude(LOCAL, json.dumps(settings))
    assert claude.MAX_CONTEXT not in settings["env"]


def test_claude_no_helper_before_means_no_note():
    settings, notes = _claude(LOCAL, '{"env": {"X": "1"}}')
    assert "apiKeyHelper" not in settings and notes == ()


def test_claude_its_own_helper_is_replaced_without_a_note():
    own = '{"apiKeyHelper": "/usr/bin/agentcfg key get gw"}'
    settings, notes = _claude(LOCAL, own)
    assert "apiKeyHelper" not in settings
    assert not [n for n in notes if "apiKeyHelper" in n]


def test_claude_a_users_helper_is_removed_with_a_note_naming_the_host_and_rollback():
    _, notes = _claude(LOCAL, '{"apiKeyHelper": "pass show anthropic"}')
    (note,) = [n for n in notes if "apiKeyHelper" in n]
    assert "http://127.0.0.1:8000" in note and "agentcfg rollback" in note


def test_claude_a_users_helper_is_replaced_by_agentcfgs_when_claude_fetches_the_key():
    keys = KeySource(helper=("/usr/bin/agentcfg", "key", "get", "gw"), runs_helper=frozenset({"claude"}))
    settings, _ = _claude(GATEWAY_ANTHROPIC, '{"apiKeyHelper": "pass show anthropic"}', keys)
    assert settings["apiKeyHelper"] == "/usr/bin/agentcfg key get gw"


# --- opencode ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", [LOCAL, GATEWAY_ANTHROPIC], ids=["keyless", "keyed"])
def test_opencode_switch_writes_the_leaves_of_the_config_exec_passes(profile):
    """One `_config`: a switch's file and exec's OPENCODE_CONFIG_CONTENT point at the same provider."""
    (config,) = opencode.files(ENVIRON)
    (file_edit,) = opencode.edits(profile, {config: None}, NO_KEYS)
    api_key = f"{{env:{profile.key_env}}}" if profile.key_env else REMOVE
    assert file_edit.assignments == base.flatten(opencode._config(profile, api_key, opencode.provider_id(profile)))
    written = edit.load("json", edit.apply("json", config.seed, file_edit.assignments, path="f"), path="f")
    assert written["model"] == f"agentcfg-{profile.name}/{profile.model}"


def test_flatten_makes_a_leaf_of_lists_and_empty_tables():
    assert base.flatten({"a": {"b": 1, "c": [1, {"d": 2}], "e": {}}, "f": None}) == [
        (("a", "b"), 1),
        (("a", "c"), [1, {"d": 2}]),
        (("a", "e"), {}),
        (("f",), None),
    ]
