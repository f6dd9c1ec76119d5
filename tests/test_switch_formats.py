"""Files in a format agentcfg does not write are refused whole (exit 2, nothing written): opencode's V2 config
and qwen-code's short-lived settings v5 shape (agentcfg.switch.foreign_format_refusal). The fixtures in
tests/fixtures/formats/ follow /work/briefs/16/research-{opencode,qwen}.md."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentcfg.agents import opencode, qwen
from tests.conftest import Home

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the fake agents are POSIX shell scripts")

FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"
ENVIRON = {"HOME": "/home/u"}


def fixture(name: str) -> str:
    return (FORMATS / name).read_text(encoding="utf-8")


def fake_agent(home: Home, binary: str, output: str) -> None:
    path = Path(home.env["PATH"].split(os.pathsep)[0]) / binary
    path.write_text(f'#!/bin/sh\necho "{output}"\n')
    path.chmod(0o755)


# --- what gives a format away (pure) ------------------------------------------------------------------


def _opencode(text: str | None):
    (config,) = opencode.files(ENVIRON)
    return opencode.foreign_format({config: text})


def _qwen(text: str | None):
    dotenv, settings = qwen.files(ENVIRON)
    return qwen.foreign_format({dotenv: None, settings: text})


def test_opencode_v2_fixture_is_named_by_its_markers():
    _, what = _opencode(fixture("opencode-v2.jsonc"))
    assert what.startswith("opencode V2 config")
    assert "top-level `providers`" in what and "top-level `permissions`" in what
    assert "config.v2.json" not in what  # its $schema is the V1 URL, as V2 files in the wild keep


def test_opencode_v2_schema_fixture_is_named_by_its_schema_and_mcp_servers():
    _, what = _opencode(fixture("opencode-v2-schema.json"))
    assert "$schema https://opencode.ai/config.v2.json" in what and "`mcp.servers`" in what


def test_opencode_v2_provider_shape_inside_provider():
    _, what = _opencode('{"provider": {"gw": {"package": "aisdk:@ai-sdk/openai-compatible", "settings": {}}}}')
    assert "provider `gw` with `package`/`settings`" in what


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        '{"$schema": "https://opencode.ai/config.json", "model": "a/b"}',
        '{"provider": {"gw": {"npm": "@ai-sdk/openai-compatible", "options": {}, "settings": 1}}}',  # V1: has npm
        '{"mcp": {"fs": {"type": "local", "command": ["x"]}}}',  # V1 mcp: servers by name
        '{"mcp": {"servers": {"type": "local", "command": ["x"]}}}',  # V1: an MCP server named "servers"
    ],
)
def test_opencode_v1_files_are_not_foreign(text):
    assert _opencode(text) is None


def test_qwen_v5_fixture_is_named_by_its_version_and_shape():
    file, what = _qwen(fixture("qwen-settings-v5.json"))
    assert file.path.name == "settings.json"
    assert "qwen-code settings v5 shape" in what
    assert "`$version` 5" in what and "modelProviders.openai = {protocol, models}" in what


def test_qwen_v5_shape_without_a_version_is_foreign():
    _, what = _qwen('{"modelProviders": {"openai": {"protocol": "openai", "models": []}}}')
    assert "modelProviders.openai" in what and "$version" not in what


@pytest.mark.parametrize("text", [None, "", fixture("qwen-settings-v4.json"), '{"$version": 3}', '{"$version": "5"}'])
def test_qwen_v4_and_older_are_not_foreign(text):
    assert _qwen(text) is None


# --- a switch on each: refused whole, nothing written -----------------------------------------------------


@pytest.mark.parametrize(
    ("binary", "version", "relative", "name", "format"),
    [
        ("opencode", "1.18.33", ".config/opencode/opencode.jsonc", "opencode-v2.jsonc", "opencode V2 config"),
        ("opencode", "1.18.33", ".config/opencode/opencode.json", "opencode-v2-schema.json", "opencode V2 config"),
        ("qwen", "0.15.10", ".qwen/settings.json", "qwen-settings-v5.json", "qwen-code settings v5 shape"),
        ("qwen", "0.24.4", ".qwen/settings.json", "qwen-settings-v5.json", "qwen-code settings v5 shape"),
    ],
)
def test_a_switch_refuses_a_foreign_format_and_writes_nothing(home, binary, version, relative, name, format):
    fake_agent(home, binary, version)
    home.write(relative, fixture(name))
    before = home.snapshot()
    result = home.run("switch", "local", "--all", check=2)
    assert format in result.stderr
    assert f"{binary} {version} is installed" in result.stderr
    assert f"~/{relative}" in result.stderr and "nothing was changed" in result.stderr
    others = [a for a in ("codex", "qwen", "opencode", "claude") if a != binary]
    assert "agentcfg switch local " + " ".join(f"--agent {a}" for a in others) in result.stderr  # the way on
    assert result.stderr.count(relative) == 1  # named once, where it is
    assert "Traceback" not in result.stderr
    assert home.snapshot() == before  # no agent's file, not even the other three agents' new ones
    assert not home.path(".codex").exists()


def test_the_refusal_says_when_the_agent_is_not_installed(home):
    home.write(".qwen/settings.json", fixture("qwen-settings-v5.json"))
    before = home.snapshot()
    result = home.run("switch", "local", "--agent", "qwen", check=2)
    assert "it is not installed" in result.stderr and "Switch the others" not in result.stderr  # none to switch
    assert home.snapshot() == before


def test_the_refusal_as_json_is_one_error_document(home):
    home.write(".config/opencode/opencode.jsonc", fixture("opencode-v2.jsonc"))
    result = home.run("switch", "local", "--agent", "opencode", "--json", check=2)
    text = json.dumps(json.loads(result.stdout))
    assert "opencode V2 config" in text


def test_switching_the_other_agents_leaves_the_foreign_file_alone(home):
    home.write(".config/opencode/opencode.jsonc", fixture("opencode-v2.jsonc"))
    home.run("switch", "local", "--agent", "codex", "--agent", "qwen")
    assert home.read(".config/opencode/opencode.jsonc") == fixture("opencode-v2.jsonc")
    assert home.path(".codex/config.toml").exists()


def test_a_qwen_v4_file_is_switched_and_stays_v4(home):
    """The v4 fixture (a user's gateway entry, model.baseUrl on it): agentcfg's entry first, model.baseUrl moved
    to the profile's so qwen 0.24 picks agentcfg's, `$version` 4 kept (qwen leaves the file as it is)."""
    fake_agent(home, "qwen", "0.24.4")
    home.write(".qwen/settings.json", fixture("qwen-settings-v4.json"))
    home.run("switch", "local", "--agent", "qwen")
    settings = json.loads(home.read(".qwen/settings.json"))
    assert settings["$version"] == 4 and settings["ui"] == {"theme": "GitHub"}
    assert settings["model"] == {"name": "DeepSeek-V4-Flash", "baseUrl": "http://localhost:8000/v1"}
    ours, theirs = settings["modelProviders"]["openai"]
    assert ours["id"] == "DeepSeek-V4-Flash" and ours["baseUrl"] == "http://localhost:8000/v1"
    assert theirs["name"] == "My gateway" and theirs["envKey"] == "GATEWAY_KEY"
    home.run("rollback")
    assert home.read(".qwen/settings.json") == fixture("qwen-settings-v4.json")


def test_a_new_qwen_settings_file_starts_at_version_4(home):
    home.run("switch", "local", "--agent", "qwen")
    assert json.loads(home.read(".qwen/settings.json"))["$version"] == qwen.SETTINGS_VERSION == 4
