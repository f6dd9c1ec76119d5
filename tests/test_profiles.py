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
    data = profiles.tomllib.loads(path.read_text(encoding="utf-8"))
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
