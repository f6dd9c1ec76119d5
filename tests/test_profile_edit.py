"""profile_edit.change: what `profile set/unset` decide, without the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcfg import profile_edit
from agentcfg.errors import AgentcfgError


def _environ(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path), "AGENTCFG_HOME": str(tmp_path / "agentcfg"), "CODEX_HOME": str(tmp_path / "c")}


def test_a_built_in_changed_becomes_a_file_of_yours_with_only_the_difference(tmp_path: Path):
    done = profile_edit.change("local", ("context_window=65536",), (), False, _environ(tmp_path))
    assert done.built_in and done.differences == {"context_window": (1_048_576, 65_536)}
    assert done.path == tmp_path / "agentcfg" / "profiles" / "local.toml"
    assert "context_window = 65536" in done.path.read_text()
    assert done.pointing == []  # no agent was switched to it


def test_the_same_values_again_write_nothing(tmp_path: Path):
    environ = _environ(tmp_path)
    profile_edit.change("local", ("context_window=65536",), (), False, environ)
    before = (tmp_path / "agentcfg" / "profiles" / "local.toml").stat().st_mtime_ns
    done = profile_edit.change("local", ("context_window=65536",), (), False, environ)
    assert done.differences == {} and done.notes == []
    assert (tmp_path / "agentcfg" / "profiles" / "local.toml").stat().st_mtime_ns == before


def test_an_out_of_range_value_is_refused_before_any_file_exists(tmp_path: Path):
    with pytest.raises(AgentcfgError) as caught:
        profile_edit.change("local", ("context_window=999999999999999999999",), (), False, _environ(tmp_path))
    assert "100,000,000" in str(caught.value)
    assert not (tmp_path / "agentcfg").exists()
