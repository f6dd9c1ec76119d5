"""agentcfg.profiles: the built-in profiles, which are not validated when read (they are agentcfg's own
files), are held to the schema and the field rules here, and reading one reads nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from agentcfg import fields, profile_parse, profiles
from agentcfg.resources import data_dir

BUILT_INS = sorted(data_dir("profiles").glob("*.toml"))


def test_there_are_built_ins() -> None:
    assert [p.stem for p in BUILT_INS] == ["local", "taotoken"]


@pytest.mark.parametrize("path", BUILT_INS, ids=lambda p: p.stem)
def test_every_built_in_passes_the_schema_and_the_field_rules(path: Path) -> None:
    data = profiles.toml_reader().loads(path.read_text(encoding="utf-8"))
    schema = json.loads(profiles.schema_text())
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(data)) == []
    fields.check(data, str(path), name=path.stem)
    profiles.validate(data, profiles.schema_text(), str(path))


def test_a_built_in_is_read_without_the_schema_or_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    environ = {"HOME": str(tmp_path), "AGENTCFG_HOME": str(tmp_path / "agentcfg")}
    (tmp_path / "agentcfg" / "state").mkdir(parents=True)

    def no(*_args: object) -> str:
        raise AssertionError("read the schema")

    monkeypatch.setattr(profile_parse, "schema_text", no)
    found = profiles.find("taotoken", environ)
    assert found.source == profiles.BUILT_IN and found.key_env
    assert not (tmp_path / "agentcfg" / "state" / "validated-profiles").exists()


def test_a_users_profile_is_still_validated_once(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path), "AGENTCFG_HOME": str(tmp_path / "agentcfg")}
    (tmp_path / "agentcfg" / "state").mkdir(parents=True)
    (tmp_path / "agentcfg" / "profiles").mkdir()
    (tmp_path / "agentcfg" / "profiles" / "mine.toml").write_text('base_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n')
    assert profiles.find("mine", environ).model == "m"
    assert len((tmp_path / "agentcfg" / "state" / "validated-profiles").read_text().split()) == 1
    (tmp_path / "agentcfg" / "profiles" / "mine.toml").write_text('base_url = "http://127.0.0.1:1/v1"\nmodel = 5\n')
    with pytest.raises(profiles.AgentcfgError, match="model"):
        profiles.find("mine", environ)


def _no_reader() -> object:
    raise AssertionError("read the TOML again")


def test_a_profile_text_read_before_needs_no_toml_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    environ = {"HOME": str(tmp_path), "AGENTCFG_HOME": str(tmp_path / "agentcfg")}
    (tmp_path / "agentcfg" / "state").mkdir(parents=True)
    (tmp_path / "agentcfg" / "profiles").mkdir()
    route = '[route]\nprimary = "local"\nfallbacks = ["taotoken"]\n'
    mine = tmp_path / "agentcfg" / "profiles" / "mine.toml"
    mine.write_text(f'base_url = "http://127.0.0.1:1/v1"\nmodel = "m"\nkey_env = "MINE_API_KEY"\n{route}')
    first = [profiles.find(name, environ) for name in ("taotoken", "mine")]
    assert (tmp_path / "agentcfg" / "state" / "parsed-profiles").stat().st_mode & 0o777 == 0o600
    monkeypatch.setattr(profile_parse, "toml_reader", _no_reader)
    assert [profiles.find(name, environ) for name in ("taotoken", "mine")] == first
    assert first[1].route is not None and first[1].route.fallbacks == ("taotoken",)


def test_a_changed_text_is_read_and_checked_anew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    environ = {"HOME": str(tmp_path), "AGENTCFG_HOME": str(tmp_path / "agentcfg")}
    (tmp_path / "agentcfg" / "state").mkdir(parents=True)
    (tmp_path / "agentcfg" / "profiles").mkdir()
    mine = tmp_path / "agentcfg" / "profiles" / "mine.toml"
    mine.write_text('base_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n')
    assert profiles.find("mine", environ).model == "m"
    mine.write_text('base_url = "http://127.0.0.1:1/v1"\nmodel = "m" x\n')  # no longer TOML
    with pytest.raises(profiles.AgentcfgError, match="does not parse as TOML"):
        profiles.find("mine", environ)
    mine.write_text('base_url = "http://127.0.0.1:1/v1"\nmodel = "n"\ncontext_window = -1\n')  # TOML, refused
    with pytest.raises(profiles.AgentcfgError, match="context_window"):
        profiles.find("mine", environ)
    monkeypatch.setattr(profile_parse, "toml_reader", _no_reader)
    mine.write_text('base_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n')  # the first text again: remembered
    assert profiles.find("mine", environ).model == "m"


@pytest.mark.parametrize("cached", ["", "not json", "[1]", '{"x": 1}', "\xff"])
def test_a_damaged_cache_is_read_past(tmp_path: Path, cached: str) -> None:
    environ = {"HOME": str(tmp_path), "AGENTCFG_HOME": str(tmp_path / "agentcfg")}
    (tmp_path / "agentcfg" / "state").mkdir(parents=True)
    (tmp_path / "agentcfg" / "state" / "parsed-profiles").write_text(cached, encoding="latin-1")
    assert profiles.find("taotoken", environ).key_env == "TAOTOKEN_API_KEY"
    assert profiles.find("taotoken", environ).key_env == "TAOTOKEN_API_KEY"


def test_the_cache_keeps_only_what_json_gives_back_and_the_newest(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path), "AGENTCFG_HOME": str(tmp_path / "agentcfg")}
    cache = profile_parse._ParsedCache(environ)
    cache.put("d = 1979-05-27", {"d": __import__("datetime").date(1979, 5, 27)})
    assert cache.get("d = 1979-05-27") is None and not cache.added
    for n in range(cache.LIMIT + 3):
        cache.put(f"n = {n}", {"n": n, "f": 0.5, "b": True, "l": [{"s": "x"}]})
    cache.save()  # no state dir: a reading command creates none
    assert not (tmp_path / "agentcfg").exists()
    (tmp_path / "agentcfg" / "state").mkdir(parents=True)
    cache.save()
    again = profile_parse._ParsedCache(environ)
    assert len(again.entries) == cache.LIMIT and again.get("n = 0") is None
    newest = cache.LIMIT + 2
    assert again.get(f"n = {newest}") == {"n": newest, "f": 0.5, "b": True, "l": [{"s": "x"}]}


def test_a_reading_command_creates_no_state_dir(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path), "AGENTCFG_HOME": str(tmp_path / "agentcfg")}
    assert profiles.find("taotoken", environ).key_env
    assert not (tmp_path / "agentcfg").exists()
