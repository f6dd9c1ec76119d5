"""Codex profile files kept by `agentcfg switch` (Codex 0.134+ or not installed): `codex --profile agentcfg-NAME`
runs on NAME whatever config.toml points at (agentcfg.switch.profile_file_edits)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import tomllib

from agentcfg import profiles
from agentcfg.agents import codex
from agentcfg.agents.base import KeySource
from agentcfg.invocation import self_command
from agentcfg.switch import plan_switch
from tests.conftest import Home

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the fake codex is a POSIX shell script")

FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"
KEY = "sk-test-a-0123456789abcdef"


def auth_of(name: str) -> dict:
    """The auth table that fetches `name`'s key: agentcfg's `key get`, run isolated (invocation.self_command)."""
    command = self_command()
    return {"command": command[0], "args": [*command[1:], "key", "get", name]}


def fake_codex(home: Home, version: str = "0.171.0") -> None:
    """A `codex` on PATH that answers `--version` (agentcfg.versions runs it once per program file)."""
    path = Path(home.env["PATH"].split(os.pathsep)[0]) / "codex"
    path.write_text(f'#!/bin/sh\necho "codex-cli {version}"\n')
    path.chmod(0o755)


def add_profile(home: Home, name: str, text: str) -> None:
    home.write(f".config/agentcfg/profiles/{name}.toml", text)


@pytest.fixture
def codex_home(home: Home) -> Home:
    """Codex 0.171.0 installed; profiles a (keyed), b and c (keyless)."""
    fake_codex(home)
    add_profile(home, "a", 'base_url = "http://127.0.0.1:9001/v1"\nmodel = "model-a"\nkey_env = "A_API_KEY"\n')
    add_profile(home, "b", 'base_url = "http://127.0.0.1:9002/v1"\nmodel = "model-b"\n')
    add_profile(home, "c", 'base_url = "http://127.0.0.1:9003/v1"\nmodel = "model-c"\ncontext_window = 65536\n')
    home.env["A_API_KEY"] = KEY  # exported: not missing (exit 0), and Codex 0.171 still fetches it by `key get`
    return home


def profile_file(home: Home, name: str) -> Path:
    return home.path(f".codex/agentcfg-{name}.config.toml")


def toml(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def provider(data: dict) -> dict:
    return data["model_providers"][data["model_provider"]]


def codex_files(home: Home) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(home.path(".codex").glob("*.toml"))}


def test_a_switch_writes_the_profile_file_of_the_profile_switched_to(codex_home):
    codex_home.run("switch", "b", "--agent", "codex")
    assert sorted(codex_files(codex_home)) == ["agentcfg-b.config.toml", "config.toml"]
    data = toml(profile_file(codex_home, "b"))
    assert data["model"] == "model-b" and data["model_provider"] == "agentcfg_profile-b"  # not config.toml's id
    assert provider(data)["base_url"] == "http://127.0.0.1:9002/v1"
    # the same keys as config.toml's switch, under the file's own id, and a window always: --profile agentcfg-b
    # overrides whatever config.toml says
    config = toml(codex_home.path(".codex/config.toml"))
    assert config["model_providers"]["agentcfg-b"] == data["model_providers"]["agentcfg_profile-b"]
    assert data["model_context_window"] == config.get("model_context_window", 131072)
    assert stat.S_IMODE(profile_file(codex_home, "b").stat().st_mode) == 0o600


def test_a_keyed_profile_file_fetches_its_key_and_never_holds_it(codex_home):
    codex_home.run("switch", "a", "--agent", "codex")
    table = provider(toml(profile_file(codex_home, "a")))
    assert table["auth"] == auth_of("a")
    assert "env_key" not in table and "experimental_bearer_token" not in table
    assert KEY not in profile_file(codex_home, "a").read_text()


def test_a_previously_switched_profile_keeps_its_file_byte_for_byte(codex_home):
    codex_home.run("switch", "a", "--agent", "codex")
    kept = profile_file(codex_home, "a").read_bytes()
    codex_home.run("switch", "b", "--agent", "codex")
    assert profile_file(codex_home, "a").read_bytes() == kept
    assert profile_file(codex_home, "b").exists()
    assert toml(codex_home.path(".codex/config.toml"))["model_provider"] == "agentcfg-b"


def test_a_previously_switched_profile_file_is_refreshed_when_that_profile_changed(codex_home):
    codex_home.run("switch", "c", "--agent", "codex")
    add_profile(codex_home, "c", 'base_url = "http://127.0.0.1:9333/v1"\nmodel = "model-c2"\n')
    codex_home.run("switch", "b", "--agent", "codex")
    data = toml(profile_file(codex_home, "c"))
    assert data["model"] == "model-c2" and provider(data)["base_url"] == "http://127.0.0.1:9333/v1"
    assert data["model_context_window"] == 131072  # the profile has none now: the assumed one, not config.toml's


def test_another_profiles_file_fetches_its_own_key_whichever_profile_is_switched_to(codex_home):
    """Switching to a keyless profile (no key helper for it) must not turn a's file from its own
    `agentcfg key get a` into an env_key that only works in a shell that exports A_API_KEY."""
    codex_home.run("switch", "a", "--agent", "codex")
    kept = profile_file(codex_home, "a").read_bytes()
    codex_home.run("switch", "b", "--agent", "codex")
    assert provider(toml(profile_file(codex_home, "a")))["auth"] == auth_of("a")
    assert profile_file(codex_home, "a").read_bytes() == kept


def test_store_key_in_files_writes_the_key_into_the_switched_profiles_file_only(codex_home):
    codex_home.run("switch", "c", "--agent", "codex")
    codex_home.run("switch", "a", "--agent", "codex", "--store-key-in-files")
    assert provider(toml(profile_file(codex_home, "a")))["experimental_bearer_token"] == KEY
    codex_home.run("switch", "b", "--agent", "codex", "--store-key-in-files")  # keyless: no literal key
    table = provider(toml(profile_file(codex_home, "a")))  # a's own file now names its own `key get`
    assert "experimental_bearer_token" not in table and table["auth"] == auth_of("a")
    for name, text in codex_files(codex_home).items():  # (config.toml keeps a's old table: status flags it)
        assert name == "config.toml" or KEY.encode() not in text, name


def test_codex_profile_files_all_writes_one_for_every_profile(codex_home):
    codex_home.run("switch", "b", "--agent", "codex", "--codex-profile-files", "all")
    every = sorted(profiles.load_all(codex_home.env))
    assert {"a", "b", "c", "local", "taotoken"} <= set(every)
    assert codex.profile_file_names(codex_home.env) == every
    assert provider(toml(profile_file(codex_home, "taotoken")))["auth"] == auth_of("taotoken")
    # and the next plain switch keeps them all current (the default: the profiles that have a file)
    before = codex_files(codex_home)
    codex_home.run("switch", "b", "--agent", "codex")
    assert codex_files(codex_home) == before


@pytest.mark.parametrize("version", ["0.133.0", "0.119.0"])
def test_no_profile_file_before_codex_0_134(codex_home, version):
    fake_codex(codex_home, version)
    codex_home.run("switch", "b", "--agent", "codex")
    assert sorted(codex_files(codex_home)) == ["config.toml"]


def test_codex_0_134_gets_profile_files(codex_home):
    fake_codex(codex_home, "0.134.0")
    codex_home.run("switch", "b", "--agent", "codex")
    assert profile_file(codex_home, "b").exists()


def test_codex_not_installed_gets_the_profile_file_for_when_it_is(codex_home):
    Path(codex_home.env["PATH"].split(os.pathsep)[0], "codex").unlink()
    codex_home.run("switch", "b", "--agent", "codex")
    assert profile_file(codex_home, "b").exists()


def test_no_codex_in_the_switch_no_profile_file(codex_home):
    codex_home.run("switch", "b", "--agent", "qwen")
    assert not codex_home.path(".codex").exists()


def test_rollback_removes_the_profile_file_the_switch_created(codex_home):
    codex_home.run("switch", "a", "--agent", "codex")
    codex_home.run("switch", "b", "--agent", "codex")
    codex_home.run("rollback")
    assert not profile_file(codex_home, "b").exists()
    assert profile_file(codex_home, "a").exists()
    assert toml(codex_home.path(".codex/config.toml"))["model_provider"] == "agentcfg-a"
    codex_home.run("rollback")
    assert codex_files(codex_home) == {}


def test_rollback_restores_a_refreshed_profile_file(codex_home):
    codex_home.run("switch", "c", "--agent", "codex")
    old = profile_file(codex_home, "c").read_bytes()
    add_profile(codex_home, "c", 'base_url = "http://127.0.0.1:9333/v1"\nmodel = "model-c2"\n')
    codex_home.run("switch", "b", "--agent", "codex")
    assert profile_file(codex_home, "c").read_bytes() != old
    codex_home.run("rollback")
    assert profile_file(codex_home, "c").read_bytes() == old


def test_a_second_identical_switch_writes_zero_bytes(codex_home):
    codex_home.run("switch", "a", "--agent", "codex")
    codex_home.run("switch", "c", "--agent", "codex")
    codex_home.run("switch", "b", "--agent", "codex")
    before = codex_files(codex_home)
    mtimes = {p.name: p.stat().st_mtime_ns for p in codex_home.path(".codex").glob("*.toml")}
    result = codex_home.run("switch", "b", "--agent", "codex")
    assert "nothing to change" in result.stdout
    assert codex_files(codex_home) == before
    assert {p.name: p.stat().st_mtime_ns for p in codex_home.path(".codex").glob("*.toml")} == mtimes
    journal = codex_home.path(".config/agentcfg/state/journal")
    assert len([p for p in journal.iterdir() if p.name.isdigit()]) == 3


def test_an_earlier_versions_profile_file_moves_to_the_new_id_once(codex_home):
    """`agentcfg-profile-b` was the file's id: the id config.toml gives a switched profile `profile-b`. With that
    profile switched to (its key in config.toml) Codex would merge the two and refuse to start. The switch
    moves the file's table to its own id and leaves no table of the old one; the same switch again: no byte."""
    add_profile(codex_home, "profile-b", 'base_url = "http://127.0.0.1:9004/v1"\nmodel = "model-pb"\n')
    codex_home.run("switch", "b", "--agent", "codex")
    earlier = profile_file(codex_home, "b").read_text().replace("agentcfg_profile-b", "agentcfg-profile-b")
    profile_file(codex_home, "b").write_text(earlier)  # as an earlier version wrote it
    codex_home.run("switch", "profile-b", "--agent", "codex")
    config, moved = toml(codex_home.path(".codex/config.toml")), toml(profile_file(codex_home, "b"))
    assert config["model_provider"] == "agentcfg-profile-b"
    assert list(moved["model_providers"]) == ["agentcfg_profile-b"] and moved["model_provider"] == "agentcfg_profile-b"
    assert provider(moved)["base_url"] == "http://127.0.0.1:9002/v1"
    assert not set(config["model_providers"]) & set(moved["model_providers"])  # nothing for Codex to merge
    before = codex_files(codex_home)
    assert "nothing to change" in codex_home.run("switch", "profile-b", "--agent", "codex").stdout
    assert codex_files(codex_home) == before


def test_the_provider_ids_written_are_never_reserved(codex_home):
    """Codex refuses a [model_providers.X] with a reserved id; a profile named like one gets agentcfg-X."""
    for name in ("openai", "ollama", "lmstudio", "amazon-bedrock"):
        add_profile(codex_home, name, f'base_url = "http://127.0.0.1:9009/v1"\nmodel = "m-{name}"\n')
    codex_home.run("switch", "openai", "--agent", "codex", "--codex-profile-files", "all")
    for name in codex_files(codex_home):
        data = toml(codex_home.path(f".codex/{name}"))
        assert data["model_provider"] not in codex.RESERVED_IDS, name
        assert not set(data["model_providers"]) & set(codex.RESERVED_IDS), name


def test_legacy_profiles_are_noted_in_the_switch_output_and_kept(codex_home):
    legacy = (FORMATS / "codex-legacy-profiles.toml").read_text(encoding="utf-8")
    codex_home.write(".codex/config.toml", legacy)
    result = codex_home.run("switch", "b", "--agent", "codex")
    assert 'legacy `profile = "work"`' in result.stderr and "refuses to start" in result.stderr
    assert "[profiles.work]" in result.stderr
    data = toml(codex_home.path(".codex/config.toml"))
    assert data["profile"] == "work" and data["profiles"]["work"]["model"] == "gpt-5.1-codex"  # the user's to move
    assert "profiles" not in toml(profile_file(codex_home, "b"))


# --- plan_switch, in process --------------------------------------------------------------------------


def _plan(home: Home, name: str, others=None, keys: KeySource | None = None):
    profile = profiles.get(name, home.env)
    return plan_switch(profile, [codex], home.env, keys or KeySource(), others)


def test_plan_lists_config_toml_then_the_profile_files(codex_home):
    plan = _plan(codex_home, "b")
    assert [c.path.name for c in plan.changes] == ["config.toml", "agentcfg-b.config.toml"]
    assert [c.action for c in plan.changes] == ["create", "create"]
    assert {c.agent for c in plan.changes} == {"codex"}


def test_plan_with_others_given_writes_theirs_and_never_twice_the_switched_one(codex_home):
    others = [profiles.get(n, codex_home.env) for n in ("a", "b", "c")]
    plan = _plan(codex_home, "b", others)
    assert [c.path.name for c in plan.changes] == [
        "config.toml",
        "agentcfg-b.config.toml",
        "agentcfg-a.config.toml",
        "agentcfg-c.config.toml",
    ]


def test_plan_a_literal_key_is_private_and_only_in_the_switched_profiles_file(codex_home):
    others = [profiles.get(n, codex_home.env) for n in ("a", "c")]
    plan = _plan(codex_home, "a", others, KeySource(literal=KEY))
    private = {c.path.name for c in plan.changes if c.private}
    assert private == {"config.toml", "agentcfg-a.config.toml"}
    assert KEY not in (next(c for c in plan.changes if c.path.name == "agentcfg-c.config.toml").after or "")
