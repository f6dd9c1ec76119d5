"""Codex profile files (`$CODEX_HOME/agentcfg-NAME.config.toml`, Codex 0.134+) and the legacy `[profiles.x]`
notes, computed on plain strings (research: /work/briefs/16/research-codex.md section 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

from agentcfg import budget, edit
from agentcfg.agents import codex
from agentcfg.agents.base import AgentFile, KeySource
from agentcfg.edit import REMOVE, toml
from agentcfg.profiles import Profile
from tests.agents.samples import ENVIRON, GATEWAY_ANTHROPIC, NO_KEYS

FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
HELPER = ("/usr/bin/agentcfg", "key", "get", "gw")
FETCHES = KeySource(helper=HELPER, runs_helper=frozenset({"codex"}))
LOCAL = Profile(name="local", base_url="http://127.0.0.1:8000/v1", model="qwen3-coder")


def _written(file: AgentFile, assignments, before: str | None = None) -> str:
    return edit.apply("toml", file.seed if before is None else before, assignments, path="f")


def test_the_profile_file_is_named_for_codex_profile_agentcfg_name():
    assert codex.profile_file("gw", ENVIRON) == AgentFile(Path("/home/u/.codex/agentcfg-gw.config.toml"), "toml")
    assert codex.profile_file("gw", {**ENVIRON, "CODEX_HOME": "/"}).path == Path("/agentcfg-gw.config.toml")


def test_the_profile_file_is_the_fixture_agentcfg_writes():
    """tests/fixtures/formats/codex-profile-file.toml is what `codex --profile agentcfg-gw` reads: keep it stable."""
    file = codex.profile_file("gw", ENVIRON)
    text = _written(file, codex.profile_edits(GATEWAY_ANTHROPIC, file, FETCHES).assignments)
    assert text == (FORMATS / "codex-profile-file.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    assert data["model_provider"] == "agentcfg_profile-gw" and data["model"] == "glm-4.6"
    assert data["model_providers"]["agentcfg_profile-gw"]["auth"] == {"command": HELPER[0], "args": list(HELPER[1:])}


@pytest.mark.parametrize(
    "keys",
    [NO_KEYS, FETCHES, KeySource(literal="sk-literal-0123456789")],
    ids=["env_key", "helper", "literal"],
)
@pytest.mark.parametrize("profile", [LOCAL, GATEWAY_ANTHROPIC], ids=["keyless", "keyed"])
def test_the_profile_file_sets_exactly_what_a_switch_sets_in_config_toml(profile, keys):
    """One `_assignments` for both: whatever config.toml says, `codex --profile agentcfg-NAME` runs on NAME."""
    (config,) = codex.files(ENVIRON)
    (switch_edit,) = codex.edits(profile, {config: None}, keys)
    file_edit = codex.profile_edits(profile, codex.profile_file(profile.name, ENVIRON), keys)
    ours, theirs = codex.profile_file_id(profile), codex.provider_id(profile)

    def same(key: tuple, value: object) -> tuple:  # the file's own id, and a window always (config.toml's would stay)
        key = tuple(ours if part == theirs else part for part in key)
        value = ours if value == theirs else value
        return key, budget.window(profile) if key == ("model_context_window",) else value

    *assignments, earlier = file_edit.assignments
    assert assignments == [same(k, v) for k, v in switch_edit.assignments]
    assert earlier == (("model_providers", f"agentcfg-profile-{profile.name}"), REMOVE)  # an earlier version's id
    assert ours != theirs  # config.toml keeps its table of `theirs` after a switch elsewhere: Codex would merge them
    assert file_edit.notes == ()


def test_refreshing_a_profile_file_sets_every_key_agentcfg_owns():
    """Codex deep-merges the profile file over config.toml: every key agentcfg owns is set in it, so none of
    config.toml's selects another provider, model or window (a profile without one gets agentcfg's assumed one)."""
    file = codex.profile_file("local", ENVIRON)
    old = 'model = "gpt-5"\nmodel_context_window = 99999\n[model_providers.agentcfg_profile-local]\nenv_key = "OLD"\n'
    data = tomllib.loads(_written(file, codex.profile_edits(LOCAL, file, NO_KEYS).assignments, old))
    assert data["model"] == "qwen3-coder" and data["model_provider"] == "agentcfg_profile-local"
    assert data["model_context_window"] == budget.window(LOCAL)
    assert "env_key" not in data["model_providers"]["agentcfg_profile-local"]


def test_a_profile_file_of_an_earlier_version_moves_to_the_new_id_and_keeps_nothing_of_the_old():
    """Earlier versions named the file's table `agentcfg-profile-NAME`, the id config.toml gives a switched profile
    `profile-NAME`: Codex would merge the two (and refuse a token there next to this file's `auth`). The refresh
    moves it: the old table goes (with its `auth` subtable), the file then reads as a fresh one, and refreshing
    it again changes no byte."""
    file = codex.profile_file("gw", ENVIRON)
    earlier = (FORMATS / "codex-profile-file-earlier-id.toml").read_text(encoding="utf-8")
    assignments = codex.profile_edits(GATEWAY_ANTHROPIC, file, FETCHES).assignments
    moved = _written(file, assignments, earlier)
    fresh = (FORMATS / "codex-profile-file.toml").read_text(encoding="utf-8")
    assert tomllib.loads(moved) == tomllib.loads(fresh)
    assert "agentcfg-profile-gw" not in moved
    assert _written(file, assignments, moved) == moved


def test_profile_file_names_lists_agentcfgs_files_only(tmp_path):
    environ = {"HOME": str(tmp_path), "CODEX_HOME": str(tmp_path)}
    for name in ("agentcfg-gw.config.toml", "agentcfg-local.config.toml", "work.config.toml", "config.toml"):
        (tmp_path / name).write_text("")
    (tmp_path / "agentcfg-.config.toml").write_text("")  # no name: not a profile's
    (tmp_path / "agentcfg-notes.toml").write_text("")  # not a profile file
    assert codex.profile_file_names(environ) == ["gw", "local"]


def test_profile_file_names_without_a_codex_directory_is_empty(tmp_path):
    assert codex.profile_file_names({"HOME": str(tmp_path)}) == []


# --- legacy profiles ----------------------------------------------------------------------------------


def _notes(text: str | None) -> tuple[str, ...]:
    (config,) = codex.files(ENVIRON)
    return codex.legacy_profile_notes({config: text})


def test_legacy_profile_selector_and_table_get_a_note_each_with_the_fix():
    notes = _notes((FORMATS / "codex-legacy-profiles.toml").read_text(encoding="utf-8"))
    assert len(notes) == 2, notes
    selector, table = notes
    assert 'legacy `profile = "work"`' in selector and "refuses to start" in selector
    assert "/home/u/.codex/work.config.toml" in selector and "codex --profile work" in selector
    assert "[profiles.work]" in table and "/home/u/.codex/NAME.config.toml" in table
    assert "(without the [profiles.NAME] header)" in table


def test_a_legacy_table_alone_gets_one_note():
    (note,) = _notes('[profiles.fast]\nmodel = "m"\n[profiles.slow]\nmodel = "n"\n')
    assert "[profiles.fast]" in note and "`codex --profile fast` refuses to start" in note


@pytest.mark.parametrize(
    "text",
    [None, "", 'model = "m"\n', "profile = 3\n", "profiles = 1\n", '[model_providers.profiles]\nname = "x"\n'],
)
def test_no_legacy_profile_no_note(text):
    assert _notes(text) == ()


def test_a_switch_carries_the_legacy_notes_and_leaves_the_users_profiles_alone():
    (config,) = codex.files(ENVIRON)
    text = (FORMATS / "codex-legacy-profiles.toml").read_text(encoding="utf-8")
    (file_edit,) = codex.edits(GATEWAY_ANTHROPIC, {config: text}, NO_KEYS)
    assert file_edit.notes == _notes(text)
    after = tomllib.loads(edit.apply("toml", text, file_edit.assignments, path="f"))
    assert after["profile"] == "work" and after["profiles"]["work"]["model_provider"] == "work-proxy"


# --- ids -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["openai", "ollama", "lmstudio", "amazon-bedrock", "local", "a", "x" * 64])
def test_agentcfg_ids_are_never_reserved(name):
    """Codex refuses a `[model_providers.X]` with a reserved id (config_toml.rs RESERVED_MODEL_PROVIDER_IDS)."""
    profile = Profile(name=name, base_url="http://127.0.0.1:1/v1", model="m")
    assert codex.provider_id(profile) not in codex.RESERVED_IDS
    assert codex.profile_file_id(profile) not in codex.RESERVED_IDS


def test_reserved_ids_are_built_in_providers_for_reading():
    assert set(codex.RESERVED_IDS) <= set(codex.BUILT_IN_PROVIDERS)


@pytest.mark.parametrize(
    "value",
    ["plain", 'quo"te', "back\\slash", "new\nline", "ünï", 65536, True, ["A", 'B"'], {"k": 'v"', "n": 1}],
)
def test_toml_literals_parse_back_to_the_value(value):
    """`-c key=VALUE`: Codex parses VALUE as TOML; what agentcfg passes must parse to exactly the value."""
    assert tomllib.loads(f"v = {toml.render(value)}")["v"] == value
