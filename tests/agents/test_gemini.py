"""Gemini CLI's module: it speaks the Gemini API only, so it runs on a route (the router serves that API)."""

from __future__ import annotations

import json
from pathlib import Path

from agentcfg import edit, env
from agentcfg.agents import AGENTS
from agentcfg.agents.base import AgentFile, KeySource, LaunchContext
from agentcfg.profile_model import Route
from agentcfg.profiles import Profile
from tests.agents.samples import ENVIRON, switch

ROUTE = Profile(
    name="home",
    base_url="http://127.0.0.1:4000/v1",
    anthropic_base_url="http://127.0.0.1:4000",
    model="DeepSeek-V4-Flash",
    key_env="HOME_ROUTER_KEY",
    context_window=65_536,
    max_output_tokens=8_192,
    route=Route("local", ("taotoken",)),
)
PLAIN = Profile(name="local", base_url="http://localhost:8000/v1", model="m")


def agent():
    return AGENTS["gemini"]


def texts(dotenv: str | None = None, settings: str | None = None) -> dict[AgentFile, str | None]:
    env_file, settings_file = agent().files(ENVIRON)
    return {env_file: dotenv, settings_file: settings}


def test_files_are_the_users_dotenv_and_settings() -> None:
    env_file, settings_file = agent().files(ENVIRON)
    assert env_file.path == Path("/home/u/.gemini/.env") and env_file.format == "dotenv"
    assert settings_file.path == Path("/home/u/.gemini/settings.json") and settings_file.format == "json"
    moved = agent().files({**ENVIRON, "GEMINI_CLI_HOME": "/elsewhere"})
    assert moved[0].path == Path("/elsewhere/.gemini/.env")


def test_gemini_cli_home_is_taken_as_it_is_and_made_absolute_as_the_other_agents_locations() -> None:
    """GEMINI_CLI_HOME moves ~/.gemini; 0.61.0's homedir() returns it as it is (no `~` expansion), so a relative
    one is relative to the directory it starts in, as agentcfg resolves every agent's location (env.AGENT_LOCATIONS)."""
    assert agent().files({**ENVIRON, "GEMINI_CLI_HOME": "~/g"})[0].path == Path("~/g/.gemini/.env")
    moved = env.absolute_locations({**ENVIRON, "GEMINI_CLI_HOME": "g"}, cwd="/work/p")
    assert agent().files(moved)[0].path == Path("/work/p/g/.gemini/.env")


def test_a_plain_profile_is_refused_with_the_route_to_make() -> None:
    reason = agent().unsupported(PLAIN)
    assert reason and "agentcfg route add" in reason and "local" in reason
    assert agent().unsupported(ROUTE) is None


def test_a_switch_writes_the_router_and_the_model_and_never_the_key() -> None:
    results, notes = switch(agent(), ROUTE, texts())
    dotenv, settings = results.values()
    values = edit.load("dotenv", dotenv)
    assert values["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:4000"
    assert values["GEMINI_MODEL"] == "DeepSeek-V4-Flash"
    assert "GEMINI_API_KEY" not in values
    data = json.loads(settings)
    assert data["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert data["model"]["name"] == "DeepSeek-V4-Flash"
    assert data["privacy"]["usageStatisticsEnabled"] is False and data["telemetry"]["enabled"] is False
    assert data["general"]["enableAutoUpdate"] is False
    alias = data["modelConfigs"]["customAliases"]["DeepSeek-V4-Flash"]
    assert alias["modelConfig"]["generateContentConfig"]["maxOutputTokens"] == 8_192
    # every side call (compression, summaries, classifier) goes to the route's model too
    aliases = data["modelConfigs"]["customAliases"]
    assert aliases["chat-compression-default"]["modelConfig"]["model"] == "DeepSeek-V4-Flash"
    assert any("GEMINI_API_KEY" in n and "agentcfg exec home -- gemini" in n for n in notes)
    binding = agent().read(dict(zip(texts(), results.values(), strict=True)))
    assert binding.base_url == "http://127.0.0.1:4000" and binding.model == "DeepSeek-V4-Flash"
    assert binding.output_tokens == 8_192 and binding.context_window == 65_536
    assert binding.key_env == "GEMINI_API_KEY" and binding.key_value is None


def test_a_plaintext_key_in_its_dotenv_is_removed_and_said() -> None:
    results, notes = switch(agent(), ROUTE, texts("GEMINI_API_KEY=AIzaSyREALKEY0123456789\n"))
    assert "GEMINI_API_KEY" not in edit.load("dotenv", next(iter(results.values())))
    assert any("removed" in n and "rollback" in n for n in notes)


def test_store_key_in_files_writes_it_to_the_dotenv() -> None:
    results, _ = switch(agent(), ROUTE, texts(), KeySource(literal="sk-router"))
    assert edit.load("dotenv", next(iter(results.values())))["GEMINI_API_KEY"] == "sk-router"


def test_exec_gives_the_key_in_its_own_variable_and_a_home_of_its_own(tmp_path: Path) -> None:
    user = '{"mcpServers": {"docs": {"command": "npx"}}, "model": {"name": "gemini-2.5-pro"}}'
    context = LaunchContext(texts(None, user), ENVIRON, None, tmp_path, key="sk-router")
    launch = agent().launch(ROUTE, ("-p", "hi"), context)
    assert launch.args == ("-p", "hi")
    assert launch.env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:4000"
    assert launch.env["GEMINI_MODEL"] == "DeepSeek-V4-Flash"
    assert launch.env["GEMINI_CLI_TRUSTED_FOLDERS_PATH"] == "/home/u/.gemini/trustedFolders.json"
    assert agent().TRAITS.key_variable == "GEMINI_API_KEY" and "sk-router" not in json.dumps(launch.env)
    ((name, text),) = launch.files.items()
    assert str(tmp_path / name) == launch.env["GEMINI_CLI_HOME"] + "/.gemini/settings.json"
    settings = json.loads(text)
    assert settings["model"]["name"] == "DeepSeek-V4-Flash" and "sk-router" not in text
    assert settings["mcpServers"] == {"docs": {"command": "npx"}}  # the user's own settings stay


# -- doctor offline: what Gemini CLI 0.61.0 itself refuses (its own words, captured with the real binary) --------


def _check(dotenv: str | None, settings: str | None) -> list[tuple[str, str, str]]:
    from agentcfg.doctor.agentfiles import check

    found = check("gemini", texts(dotenv, settings), ENVIRON, {"home": ROUTE})
    return [(f.id, f.status, f.summary) for f in found]


def test_agentcfgs_own_files_are_clean() -> None:
    results, _ = switch(agent(), ROUTE, texts())
    assert _check(*results.values()) == []
    assert _check(None, None) == []


def test_an_auth_type_it_refuses_and_a_base_url_that_is_no_url_fail_with_its_words() -> None:
    ((found, status, summary),) = _check(None, '{"security": {"auth": {"selectedType": "openai"}}}')
    assert (found, status) == ("gemini-config-rejected", "fail") and "Invalid auth method selected." in summary
    ((found, status, summary),) = _check("GOOGLE_GEMINI_BASE_URL=not a url\n", None)
    assert (found, status) == ("gemini-config-rejected", "fail") and "Invalid custom base URL: not a url" in summary


def test_a_value_of_the_wrong_type_is_a_warning_naming_the_key() -> None:
    ((found, status, summary),) = _check(None, '{"model": {"compressionThreshold": "x"}}')
    assert (found, status) == ("gemini-config-rejected", "warn") and "model.compressionThreshold" in summary


def test_switch_says_how_its_key_gets_there_not_the_routes_variable() -> None:
    from agentcfg.switch import key_source

    _, notes = key_source(ROUTE, [agent()], ENVIRON)
    assert not any("HOME_ROUTER_KEY" in note for note in notes), notes  # it never reads that variable


def _located(tmp_path: Path, environ: dict[str, str]) -> tuple:
    from types import SimpleNamespace

    from agentcfg.doctor.model import Target

    target = Target("gemini", "generate-content", "http://127.0.0.1:4000", "DeepSeek-V4-Flash")
    doctor = SimpleNamespace(environ=environ, cwd=tmp_path / "home" / "src" / "app", profiles={})
    assert agent().locate(target, agent().read(texts()), doctor)
    return target, [(f.id, f.status) for f in target.static]


def test_doctor_names_a_project_env_that_hides_its_own_or_moves_its_endpoint(tmp_path: Path) -> None:
    home = tmp_path / "home"
    environ = {"HOME": str(home)}
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / ".env").write_text("GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4000\n")
    (home / "src" / "app").mkdir(parents=True)
    target, found = _located(tmp_path, environ)
    assert found == [] and target.base_url == "http://127.0.0.1:4000"

    (home / "src" / ".env").write_text("DATABASE_URL=postgres://x\n")  # a project's: ~/.gemini/.env is not read
    target, found = _located(tmp_path, environ)
    assert found == [("gemini-dotenv-hidden", "warn")] and target.base_url is None

    (home / "src" / ".env").write_text("GOOGLE_GEMINI_BASE_URL=https://elsewhere.example\n")
    target, found = _located(tmp_path, environ)
    assert target.base_url == "https://elsewhere.example" and target.endpoint_project
    assert found == [("gemini-dotenv-hidden", "warn")]

    target, found = _located(tmp_path, {**environ, "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:4000"})
    assert found == [] and target.base_url == "http://127.0.0.1:4000"  # the shell's comes first


def test_a_users_update_choice_in_its_old_form_is_left_to_gemini_to_migrate() -> None:
    results, _ = switch(agent(), ROUTE, texts(None, '{"general": {"disableAutoUpdate": false}}'))
    general = json.loads(list(results.values())[1])["general"]
    assert general == {"disableAutoUpdate": False, "enableAutoUpdateNotification": False}


def test_a_settings_file_that_does_not_parse_is_reported_not_overwritten() -> None:
    import pytest

    from agentcfg.errors import AgentcfgError

    with pytest.raises(AgentcfgError):
        switch(agent(), ROUTE, texts(None, '{"model": {"name": "x"},}x'))


def test_doctor_weighs_its_output_bound_against_the_servers_window() -> None:
    from agentcfg.doctor.limits import context_findings
    from agentcfg.doctor.model import Target

    target = Target("gemini", "generate-content", "http://127.0.0.1:4000", "m", prompt_tokens=10_000)
    target.output_tokens = 60_000
    ((found,),) = [context_findings(target, 65_536)]
    assert found.status != "pass", found
