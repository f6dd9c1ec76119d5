"""Factory Droid's module on plain strings: its one customModels entry among the user's, the default model,
what read() finds as Droid finds it, exec's runtime settings, and doctor's offline checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcfg import edit
from agentcfg.agents import droid
from agentcfg.agents.base import KeySource, LaunchContext
from agentcfg.agents.droid import checks
from agentcfg.profiles import Profile
from tests.agents.samples import ENVIRON, GATEWAY_ANTHROPIC, NO_KEYS, switch

LOCAL = Profile(name="local", base_url="http://127.0.0.1:8000/v1", model="qwen3-coder", context_window=65536)
SETTINGS = droid.files(ENVIRON)[0]
USERS = """\
// Factory CLI Settings
{
  "logoAnimation": "off",
  "customModels": [
    {"model": "glm-5.2", "displayName": "GLM", "baseUrl": "https://z.example/v1", "apiKey": "${Z_KEY}",
     "provider": "generic-chat-completion-api"},
    {"model": "gpt-5", "id": "custom:mine", "baseUrl": "https://o.example/v1",
     "apiKey": "sk-users-own-0123456789abcdef", "provider": "openai"}
  ],
  "sessionDefaultSettings": {"model": "custom:GLM-0", "reasoningEffort": "high"}
}
"""


def _switch(profile: Profile, text: str | None, keys: KeySource = NO_KEYS) -> tuple[str, tuple]:
    results, notes = switch(droid, profile, {SETTINGS: text}, keys)
    return results[SETTINGS], notes


def _data(text: str) -> dict:
    return edit.load("json", text, path="settings.json")


def test_files_are_settings_json_in_factory_home():
    assert [f.path for f in droid.files(ENVIRON)] == [Path("/home/u/.factory/settings.json")]
    moved = {**ENVIRON, "FACTORY_HOME_OVERRIDE": "/srv/droid-home"}  # in place of HOME (seen with droid 0.225.2)
    assert [f.path for f in droid.files(moved)] == [Path("/srv/droid-home/.factory/settings.json")]


def test_a_switch_appends_its_entry_keeps_the_users_and_sets_the_default_model():
    out, _ = _switch(GATEWAY_ANTHROPIC, USERS)
    data = _data(out)
    users, ours = data["customModels"][:2], data["customModels"][2]
    assert users == _data(USERS)["customModels"]  # the user's entries as they were, in their places
    assert ours == {
        "model": "glm-4.6",
        "id": "custom:agentcfg-gw",
        "displayName": "agentcfg: gw",
        "baseUrl": "https://gw.example/v1",
        "provider": "generic-chat-completion-api",
        "maxOutputTokens": 32000,
        "maxContextLimit": 200_000,
        "apiKey": "${GW_API_KEY}",
    }
    assert data["sessionDefaultSettings"] == {"model": "custom:agentcfg-gw", "reasoningEffort": "high"}
    assert out.startswith("// Factory CLI Settings\n{\n")  # the comment Droid wrote stays


def test_the_same_switch_again_changes_nothing_and_another_profile_replaces_the_entry_in_place():
    once, _ = _switch(GATEWAY_ANTHROPIC, USERS)
    assert _switch(GATEWAY_ANTHROPIC, once)[0] == once
    other, _ = _switch(LOCAL, once)
    entries = _data(other)["customModels"]
    assert [e.get("id") for e in entries] == [None, "custom:mine", "custom:agentcfg-local"]
    assert "apiKey" not in entries[2]  # keyless: Droid then sends no Authorization header
    assert _data(other)["sessionDefaultSettings"]["model"] == "custom:agentcfg-local"
    # an entry the user added after agentcfg's: agentcfg's keeps its place, so no index behind it moves
    later = {"model": "later", "baseUrl": "https://l.example/v1", "provider": "openai"}
    added = edit.apply("json", once, [(("customModels",), [*_data(once)["customModels"], later])], path="f")
    moved, _ = _switch(LOCAL, added)
    assert [e.get("id", e["model"]) for e in _data(moved)["customModels"]] == [
        "glm-5.2", "custom:mine", "custom:agentcfg-local", "later"
    ]  # fmt: skip


def test_a_keyed_switch_says_how_droid_would_write_the_key_back():
    _, notes = _switch(GATEWAY_ANTHROPIC, None)
    assert any("${GW_API_KEY} expanded" in n and "FACTORY_DISABLE_SETTINGS_PERSISTENCE=true" in n for n in notes)
    assert _switch(LOCAL, None)[1] == ()


def test_a_stored_key_is_written_only_when_asked():
    out, _ = _switch(GATEWAY_ANTHROPIC, None, KeySource(literal="sk-stored-in-files-0123456789"))
    assert _data(out)["customModels"][0]["apiKey"] == "sk-stored-in-files-0123456789"


def test_custom_models_that_is_not_a_list_is_refused():
    with pytest.raises(Exception, match="customModels is not a list"):
        _switch(LOCAL, '{"customModels": {"a": 1}}')


def test_read_finds_the_default_model_as_droid_does():
    users = droid.read({SETTINGS: USERS})  # custom:GLM-0: the first entry named GLM, by Droid's own ids
    assert (users.model, users.base_url, users.key, users.key_env) == (
        "glm-5.2",
        "https://z.example/v1",
        "env Z_KEY",
        "Z_KEY",
    )
    mine = droid.read({SETTINGS: USERS.replace("custom:GLM-0", "custom:mine")})
    assert (mine.model, mine.key, mine.key_value) == ("gpt-5", "in file", "sk-users-own-0123456789abcdef")
    by_model = droid.read({SETTINGS: USERS.replace("custom:GLM-0", "custom:gpt-5")})
    assert by_model.model == "gpt-5"
    ours = droid.read({SETTINGS: _switch(GATEWAY_ANTHROPIC, USERS)[0]})
    assert (ours.profile, ours.label, ours.output_tokens, ours.context_window) == ("gw", "gw", 32000, 200_000)
    assert droid.read({SETTINGS: '{"model": "custom:GLM-0", "customModels": []}'}).model is None
    assert droid.read({SETTINGS: None}).model is None


def test_droid_ids_count_entries_of_the_same_name():
    entries = droid.usable(
        [
            {"model": "a", "displayName": "Local Model", "baseUrl": "u", "provider": "openai"},
            {"model": "b", "displayName": "Local Model", "baseUrl": "u", "provider": "openai"},
            {"model": "c", "baseUrl": "u"},  # no provider: Droid leaves it out
            {"model": "d", "baseUrl": "u", "provider": "openai", "apiKey": "YOUR_API_KEY"},  # left out too
        ]
    )
    assert droid.ids(entries) == ["custom:Local-Model-0", "custom:Local-Model-1"]


def test_key_references_point_the_users_plaintext_key_at_a_variable():
    (change,) = droid.key_references({SETTINGS: USERS}, "sk-users-own-0123456789abcdef", "MINE_API_KEY")
    (path, value), *_ = change.assignments
    assert (
        path == ("customModels",)
        and value[1]["apiKey"] == "${MINE_API_KEY}"
        and value[0] == _data(USERS)["customModels"][0]
    )
    assert droid.key_references({SETTINGS: USERS}, "not-in-the-file", "X") == []


def test_settings_local_json_that_overrides_the_default_is_noted(tmp_path):
    home = {"HOME": str(tmp_path)}
    (tmp_path / ".factory").mkdir()
    (tmp_path / ".factory" / "settings.local.json").write_text('{"sessionDefaultSettings": {"model": "gpt-5"}}')
    settings = droid.files(home)[0]
    (change,) = droid.edits(LOCAL, {settings: None}, KeySource())
    assert any("settings.local.json" in note and "sessionDefaultSettings.model" in note for note in change.notes)


def test_exec_gives_droid_a_runtime_settings_file_and_the_key_in_a_file_of_this_run(tmp_path):
    context = LaunchContext(current={SETTINGS: USERS}, environ=ENVIRON, version=None, runtime=tmp_path,
                            key="sk-exec-key-0123456789abcdef", run="7")  # fmt: skip
    launch = droid.launch(GATEWAY_ANTHROPIC, ("exec", "hi"), context)
    assert launch.args[0] == "--settings" and launch.args[2:] == ("exec", "hi")
    ((name, text),) = launch.key_files.items()  # removed once droid has ended; never in a variable
    assert launch.args[1] == str(tmp_path / name) and "run7" in name and not launch.key_in_env and not launch.files
    content = json.loads(text)
    (entry,) = content["customModels"]
    assert (
        entry["apiKey"] == "sk-exec-key-0123456789abcdef" and entry["id"] == content["sessionDefaultSettings"]["model"]
    )
    assert entry["id"] not in {"custom:mine", "custom:agentcfg-gw"}
    assert launch.env["FACTORY_AIRGAP_ENABLED"] == "1"
    assert launch.env["FACTORY_DISABLE_SETTINGS_PERSISTENCE"] == "true"
    assert "sk-exec-key" not in json.dumps(launch.env)


def test_exec_of_a_keyless_profile_keeps_its_file_and_sends_no_key(tmp_path):
    context = LaunchContext(current={SETTINGS: None}, environ=ENVIRON, version=None, runtime=tmp_path)
    launch = droid.launch(LOCAL, ("exec", "hi"), context)
    ((_name, text),) = launch.files.items()
    assert not launch.key_files and "apiKey" not in json.loads(text)["customModels"][0]


# -- doctor's offline checks ------------------------------------------------------------------------------


def _ids(data: object, tmp_path: Path, profiles: dict | None = None) -> list[tuple[str, str]]:
    settings = droid.files({"HOME": str(tmp_path)})[0]
    found = checks.check([(settings, data)], {"HOME": str(tmp_path)}, profiles or {})
    return [(f.id, f.status) for f in found]


def test_an_unknown_provider_drops_the_whole_file(tmp_path):
    data = {"customModels": [{"model": "m", "baseUrl": "u", "provider": "chat"}]}
    assert _ids(data, tmp_path) == [("droid-settings-rejected", "fail")]


def test_an_entry_droid_leaves_out_warns_and_fails_when_it_is_the_default(tmp_path):
    snake = {"model": "m", "id": "custom:x", "base_url": "u", "api_key": "k", "provider": "generic-chat-completion-api"}
    assert _ids({"customModels": [snake]}, tmp_path) == [("droid-model-dropped", "warn")]
    chosen = {"customModels": [snake], "sessionDefaultSettings": {"model": "custom:x"}}
    assert _ids(chosen, tmp_path) == [("droid-model-dropped", "fail")]
    assert _ids({"customModels": [{"model": "m", "baseUrl": "u"}]}, tmp_path) == [("droid-model-dropped", "warn")]
    fine = {"model": "m", "baseUrl": "u", "provider": "openai"}
    assert _ids({"customModels": [fine]}, tmp_path) == []


def test_settings_local_and_the_legacy_config_are_reported(tmp_path):
    (tmp_path / ".factory").mkdir()
    (tmp_path / ".factory" / "settings.local.json").write_text('{"customModels": []}')
    (tmp_path / ".factory" / "config.json").write_text(
        '{"custom_models": [{"model": "m", "base_url": "u", "api_key": "${K}", "provider": "openai"}]}'
    )
    assert _ids({}, tmp_path) == [("droid-local-override", "warn"), ("droid-legacy-config", "warn")]


# -- import: the user's own Droid entry, its plaintext key moved to the keyring -----------------------------


def test_import_moves_a_plaintext_key_to_the_keyring_and_points_the_entry_at_it(home, keyring_file):
    from tests.test_onboard import BACKUP, GW_A, KEY_A, MODEL_A, files_holding, keyring, run_json

    users = {
        "customModels": [
            {"model": MODEL_A, "displayName": "Team GW", "baseUrl": GW_A, "apiKey": KEY_A,
             "provider": "generic-chat-completion-api", "maxOutputTokens": 8192},
        ],
        "sessionDefaultSettings": {"model": "custom:Team-GW-0"},
    }  # fmt: skip
    home.write(".factory/settings.json", json.dumps(users, indent=2))
    data = run_json(home, "profile", "import", "--yes")
    ((name, found_in, moved),) = [(p["name"], p["found_in"], p["key_moved"]) for p in data["profiles"]]
    assert found_in == ["droid"] and moved, data
    settings = json.loads(home.read(".factory/settings.json"))
    variable = f"{name.upper().replace('-', '_')}_API_KEY"
    assert settings["customModels"][0]["apiKey"] == f"${{{variable}}}"  # Droid expands it from the environment
    assert keyring(keyring_file) == {f"agentcfg/{name}": KEY_A}
    assert [p for p in files_holding(home.root, KEY_A) if not BACKUP.match(p)] == []
