"""Each agent's own offline rules (agentcfg.doctor.agentfiles): texts in, findings out.

What each rule claims of the real agent (it refuses the file, or ignores agentcfg's settings) is
checked against the real programs in tests/e2e/test_agent_rules.py; here: which text gives which
finding, that its fix is a pasteable command only where `agentcfg switch` really fixes it, and that
the real users' files in tests/corpus give no FAIL the agent would not give itself.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from agentcfg.agents import claude, codex, opencode, qwen
from agentcfg.current import read_current
from agentcfg.doctor.agentfiles import check
from agentcfg.doctor.model import FAIL, WARN, Finding
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import Profile
from tests.bare_home import make_environ
from tests.conftest import Home

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
LOCAL = Profile("local", "http://127.0.0.1:8000/v1", "M", anthropic_base_url="http://127.0.0.1:8000")
PROFILES = {"local": LOCAL}
PROVIDER = '[model_providers.agentcfg-local]\nname = "agentcfg: local"\nbase_url = "http://127.0.0.1:8000/v1"\n'
CODEX_OK = f'model = "M"\nmodel_provider = "agentcfg-local"\n{PROVIDER}'


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    return make_environ(tmp_path)


def run(agent: str, environ: dict[str, str], *texts: str | None, profiles: dict | None = None) -> list[Finding]:
    module = {"codex": codex, "opencode": opencode, "qwen": qwen, "claude": claude}[agent]
    files = module.files(environ)
    return check(agent, dict(zip(files, texts, strict=True)), environ, PROFILES if profiles is None else profiles)


def ids(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.id, f.status) for f in findings]


def only(findings: list[Finding], finding_id: str, status: str) -> Finding:
    assert ids(findings) == [(finding_id, status)], findings
    return findings[0]


# -- Codex ----------------------------------------------------------------------------------------------


def test_codex_agentcfgs_own_file_is_clean(environ):
    assert run("codex", environ, CODEX_OK + 'wire_api = "responses"\nmodel_context_window = 131072\n') == []
    assert run("codex", environ, None) == []


def test_codex_an_integer_toml_cannot_hold_is_rejected_and_switch_fixes_the_window(environ):
    found = only(run("codex", environ, "model_context_window = 999999999999999999999\n" + CODEX_OK),
                 "codex-config-rejected", FAIL)  # fmt: skip
    assert "~/.codex/config.toml" in found.summary and "model_context_window" in found.summary
    assert found.evidence == "model_context_window = 999999999999999999999"
    assert found.fix == "agentcfg switch local --agent codex"  # switch sets (or removes) the window


def test_codex_an_overflow_in_a_key_switch_does_not_write_gets_no_fix(environ):
    found = only(run("codex", environ, CODEX_OK + "[tui]\nx = -99999999999999999999\n"), "codex-config-rejected", FAIL)
    assert found.fix == "" and "tui.x" in found.hint


def test_codex_the_largest_i64_is_fine(environ):
    assert run("codex", environ, f"model_context_window = {2**63 - 1}\n" + CODEX_OK) == []


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('model_context_window = "big"\n', "model_context_window is a string"),
        ("review_model = 5\n", "review_model is a number"),
        ("model_context_window = 1.5\n", "must be a whole number"),
    ],
)
def test_codex_wrong_types_of_top_level_keys(environ, text, says):
    found = only(run("codex", environ, text + CODEX_OK), "codex-config-rejected", FAIL)
    assert says in found.summary


def test_codex_provider_without_name_is_rejected(environ):
    text = 'model_provider = "mine"\n[model_providers.mine]\nbase_url = "http://127.0.0.1:9/v1"\n'
    found = only(run("codex", environ, text), "codex-config-rejected", FAIL)
    assert "[model_providers.mine] has no name" in found.summary
    assert found.fix == "" and 'name = "mine"' in found.hint


def test_codex_agentcfgs_provider_without_name_is_fixed_by_switch(environ):
    text = (
        'model = "M"\nmodel_provider = "agentcfg-local"\n[model_providers.agentcfg-local]\nbase_url = "http://x/v1"\n'
    )
    assert only(run("codex", environ, text), "codex-config-rejected", FAIL).fix == "agentcfg switch local --agent codex"


def test_codex_a_profile_files_table_copied_into_config_toml_gets_no_switch_fix(environ):
    """A switch rewrites its own `agentcfg-NAME` table, never a profile file's `agentcfg_profile-NAME` (nor exec's):
    a fix that switched would leave the nameless table, which Codex still refuses."""
    for ident in ("agentcfg_profile-local", "agentcfg_exec-local"):
        text = f'model = "M"\nmodel_provider = "{ident}"\n[model_providers.{ident}]\nbase_url = "http://x/v1"\n'
        found = only(run("codex", environ, text), "codex-config-rejected", FAIL)
        assert found.fix == "" and f"[model_providers.{ident}]" in found.hint, found


@pytest.mark.parametrize("pid", ["openai", "ollama", "lmstudio"])
def test_codex_reserved_provider_ids(environ, pid):
    text = CODEX_OK + f'[model_providers.{pid}]\nname = "mine"\nbase_url = "http://127.0.0.1:9/v1"\n'
    found = only(run("codex", environ, text), "codex-config-rejected", FAIL)
    assert f"[model_providers.{pid}]" in found.summary and "built-in" in found.summary


def test_codex_oss_is_not_reserved_and_bedrock_takes_only_its_own_keys(environ):
    assert run("codex", environ, CODEX_OK + '[model_providers.oss]\nname = "x"\nbase_url = "http://h/v1"\n') == []
    assert run("codex", environ, CODEX_OK + '[model_providers.amazon-bedrock]\nbase_url = "http://h/v1"\n') == []
    found = only(run("codex", environ, CODEX_OK + '[model_providers.amazon-bedrock]\nname = "x"\n'),
                 "codex-config-rejected", FAIL)  # fmt: skip
    assert "keys name" in found.evidence


def test_codex_legacy_profile_selector_is_rejected_with_a_hint(environ):
    found = only(run("codex", environ, 'profile = "work"\n' + CODEX_OK + '[profiles.work]\nmodel = "x"\n'),
                 "codex-config-rejected", FAIL)  # fmt: skip
    assert 'profile = "work"' in found.summary and found.fix == ""
    assert "~/.codex/work.config.toml" in found.hint and "codex --profile work" in found.hint


def test_codex_legacy_profile_tables_alone_warn(environ):
    found = only(run("codex", environ, CODEX_OK + '[profiles.work]\nmodel = "x"\n'), "codex-legacy-profiles", WARN)
    assert "codex --profile work" in found.summary
    assert "move each [profiles.NAME] table" in found.hint and "without the [profiles.NAME] header" in found.hint


def test_codex_provider_selected_but_not_defined(environ):
    found = only(run("codex", environ, 'model_provider = "gateway"\n'), "codex-config-rejected", FAIL)
    assert 'model_provider = "gateway"' in found.summary
    assert run("codex", environ, 'model_provider = "oss"\n') == []  # a built-in
    found = only(run("codex", environ, 'model_provider = "ollama-chat"\n'), "codex-config-rejected", FAIL)
    assert "no longer supported" in found.summary and 'model_provider = "ollama"' in found.hint


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("request_max_retries = -1\n", "request_max_retries is -1"),
        ("supports_websockets = 1\n", "must be true or false"),
        ("http_headers = { A = 1 }\n", "must be a table of strings"),
        ('env_key = "A"\n[model_providers.agentcfg-local.auth]\ncommand = "x"\n', "cannot be combined with env_key"),
        ("[model_providers.agentcfg-local.auth]\n", "has no command"),
    ],
)
def test_codex_provider_fields_codex_refuses(environ, table, says):
    found = only(run("codex", environ, CODEX_OK + table), "codex-config-rejected", FAIL)
    assert says in found.summary


def test_codex_bearer_token_of_a_wrong_type_is_not_shown(environ):
    found = only(run("codex", environ, CODEX_OK + "experimental_bearer_token = 123456789\n"), "codex-config-rejected",
                 FAIL)  # fmt: skip
    assert "123456789" not in found.evidence + found.summary


def test_codex_review_model_of_the_previous_provider_warns(environ):
    found = only(run("codex", environ, 'review_model = "gpt-5.1-codex"\n' + CODEX_OK), "codex-model-slot", WARN)
    assert "gpt-5.1-codex" in found.summary and "review_model" in found.summary
    assert found.fix == "" and "remove review_model from ~/.codex/config.toml" in found.hint
    assert run("codex", environ, 'review_model = "M"\n' + CODEX_OK) == []
    # the user's own provider: their review model is their business
    assert run("codex", environ, 'model = "a"\nreview_model = "b"\nmodel_provider = "oss"\n') == []


# -- opencode -------------------------------------------------------------------------------------------


def oc(model: str = "agentcfg-local/M", limit: object = None, **top: object) -> str:
    spec: dict = {"name": "M"} if limit is None else {"name": "M", "limit": limit}
    provider = {"agentcfg-local": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": "http://h/v1"},
                                   "models": {"M": spec}}}  # fmt: skip
    return json.dumps({"model": model, "provider": provider, **top})


def test_opencode_agentcfgs_own_file_is_clean(environ):
    assert run("opencode", environ, oc(limit={"context": 131072, "output": 8192})) == []
    assert run("opencode", environ, None) == []


@pytest.mark.parametrize(("limit", "missing"), [({"context": 1000}, "output"), ({}, "context and no output")])
def test_opencode_limit_needs_both_and_switch_writes_both(environ, limit, missing):
    found = only(run("opencode", environ, oc(limit=limit)), "opencode-config-rejected", FAIL)
    assert f"has no {missing}" in found.summary and "provider.agentcfg-local.models.M.limit" in found.summary
    assert found.fix == "agentcfg switch local --agent opencode"


def test_opencode_limit_in_another_provider_gets_no_fix(environ):
    text = json.dumps({"provider": {"mine": {"models": {"X": {"limit": {"output": 5}}}}}})
    found = only(run("opencode", environ, text), "opencode-config-rejected", FAIL)
    assert found.fix == "" and "provider.mine.models.X.limit" in found.hint


@pytest.mark.parametrize(
    "text",
    [
        '{"model": 5}',
        '{"small_model": 5}',
        '{"enabled_providers": "x"}',
        '{"provider": {"x": {"options": {"baseURL": 5}}}}',
        '{"provider": {"x": {"models": "M"}}}',
        '{"provider": {"x": {"models": {"M": {"limit": {"context": "big", "output": 5}}}}}}',
    ],
)
def test_opencode_types_it_validates(environ, text):
    only(run("opencode", environ, text), "opencode-config-rejected", FAIL)


def test_opencode_api_key_of_a_wrong_type_is_not_shown(environ):
    found = only(run("opencode", environ, '{"provider": {"x": {"options": {"apiKey": 1234567}}}}'),
                 "opencode-config-rejected", FAIL)  # fmt: skip
    assert "1234567" not in found.evidence + found.summary


def test_opencode_provider_left_out_of_enabled_providers(environ):
    found = only(run("opencode", environ, oc(enabled_providers=["openai"])), "opencode-provider-disabled", FAIL)
    assert "enabled_providers" in found.summary and "agentcfg-local" in found.summary
    assert found.fix == "" and 'add "agentcfg-local" to enabled_providers' in found.hint
    assert run("opencode", environ, oc(enabled_providers=["agentcfg-local"])) == []


def test_opencode_provider_in_disabled_providers(environ):
    found = only(run("opencode", environ, oc(disabled_providers=["agentcfg-local"])), "opencode-provider-disabled",
                 FAIL)  # fmt: skip
    assert 'remove "agentcfg-local" from disabled_providers' in found.hint


def test_opencode_model_naming_an_undefined_agentcfg_provider_or_model(environ):
    found = only(run("opencode", environ, '{"model": "agentcfg-local/M"}'), "opencode-model-undefined", FAIL)
    assert found.fix == "agentcfg switch local --agent opencode"
    found = only(run("opencode", environ, oc(model="agentcfg-local/Other")), "opencode-model-undefined", FAIL)
    assert "model Other in provider agentcfg-local" in found.summary
    # no profile of that name: no command, words instead
    found = only(run("opencode", environ, '{"model": "agentcfg-gone/M"}'), "opencode-model-undefined", FAIL)
    assert found.fix == "" and found.hint
    # opencode's own catalogue may have it: not doctor's to say offline
    assert run("opencode", environ, '{"model": "anthropic/claude-sonnet-4-5"}') == []


# -- qwen-code ------------------------------------------------------------------------------------------

QWEN_ENV = "OPENAI_API_KEY=agentcfg-no-key\nOPENAI_BASE_URL=http://127.0.0.1:8000/v1\nOPENAI_MODEL=M\n"


def qs(selected: object = "openai", *, legacy: bool = False, entries: object = None) -> str:
    data: dict = {"selectedAuthType": selected} if legacy else {"security": {"auth": {"selectedType": selected}}}
    data["model"] = {"name": "M"}
    if entries is not None:
        data["modelProviders"] = {"openai": entries}
    return json.dumps(data)


OURS = [{"id": "M", "name": "agentcfg: local", "baseUrl": "http://127.0.0.1:8000/v1", "envKey": "OPENAI_API_KEY"}]


def test_qwen_agentcfgs_own_files_are_clean(environ):
    assert run("qwen", environ, QWEN_ENV, qs(entries=OURS)) == []
    assert run("qwen", environ, None, None) == []


@pytest.mark.parametrize("legacy", [False, True])
def test_qwen_oauth_selected_fails_and_switch_fixes_it(environ, legacy):
    found = only(run("qwen", environ, QWEN_ENV, qs("qwen-oauth", legacy=legacy, entries=OURS)), "qwen-oauth-selected",
                 FAIL)  # fmt: skip
    key = "selectedAuthType" if legacy else "security.auth.selectedType"
    assert f'{key} = "qwen-oauth"' in found.summary and "2026-04-15" in found.summary
    assert found.fix == "agentcfg switch local --agent qwen"  # switch writes selectedType = "openai"


def test_qwen_oauth_without_a_profile_says_what_to_set(environ):
    found = only(run("qwen", environ, None, qs("qwen-oauth"), profiles={}), "qwen-oauth-selected", FAIL)
    assert found.fix == "" and 'to "openai"' in found.hint


def test_qwen_unknown_auth_type_fails(environ):
    found = only(run("qwen", environ, None, qs("bogus")), "qwen-auth-type", FAIL)
    assert '"bogus"' in found.summary


def test_qwen_other_auth_type_fails_only_with_agentcfgs_entry(environ):
    found = only(run("qwen", environ, QWEN_ENV, qs("anthropic", entries=OURS)), "qwen-auth-type", FAIL)
    assert "never uses" in found.summary
    assert run("qwen", environ, None, qs("anthropic")) == []  # the user's own choice, nothing of agentcfg's


@pytest.mark.parametrize("entries", [[{"name": "no id"}], ["x"]])
def test_qwen_model_providers_without_ids_stop_it(environ, entries):
    found = only(run("qwen", environ, None, qs(entries=entries)), "qwen-config-rejected", FAIL)
    assert "modelProviders.openai[0]" in found.summary and "stops with an error" in found.summary


# 0.15.10 stops on each; 0.24.4 ignores them, but rewrites an object as its "models" list (the v5 layout)
@pytest.mark.parametrize(
    "entries", ["x", 5, {"id": "M", "baseUrl": "http://h/v1"}, {"protocol": "openai", "models": OURS}]
)
def test_qwen_model_providers_not_a_list_fail_naming_both_releases(environ, entries):
    found = only(run("qwen", environ, None, qs(entries=entries)), "qwen-config-rejected", FAIL)
    assert "modelProviders.openai in" in found.summary and "not a list" in found.summary
    assert "0.15 stops" in found.summary and "0.24 ignores it" in found.summary


# -- Claude Code ----------------------------------------------------------------------------------------


def cs(*, settings: dict | None = None, **variables: str) -> str:
    block = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8000", "ANTHROPIC_AUTH_TOKEN": "agentcfg-no-key"}
    block.update({slot: "M" for slot in claude.MODEL_SLOTS})
    block.update(variables)
    return json.dumps({"env": block, **(settings or {})})


def test_claude_agentcfgs_own_file_is_clean(environ):
    assert run("claude", environ, cs()) == []
    assert run("claude", environ, None) == []


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"model": 5}, "model is a number"),
        ({"apiKeyHelper": 5}, "apiKeyHelper is a number"),
        ({"permissions": {"allow": "x"}}, "permissions.allow must be a list"),
    ],
)
def test_claude_settings_it_rejects_whole(environ, settings, says):
    found = only(run("claude", environ, cs(settings=settings)), "claude-settings-invalid", FAIL)
    assert says in found.summary and "ignores all of ~/.claude/settings.json" in found.summary


def test_claude_env_that_is_not_an_object(environ):
    only(run("claude", environ, '{"env": "x"}'), "claude-settings-invalid", FAIL)


@pytest.mark.parametrize("slot", ["ANTHROPIC_SMALL_FAST_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL"])
def test_claude_slot_left_on_an_anthropic_model_warns(environ, slot):
    found = only(run("claude", environ, cs(**{slot: "claude-3-5-haiku-20241022"})), "claude-model-slot", WARN)
    assert slot in found.summary and "claude-3-5-haiku-20241022" in found.summary
    assert f"remove {slot} from the env block of ~/.claude/settings.json" in found.hint


def test_claude_slot_from_the_shell_warns_too(environ):
    environ["ANTHROPIC_SMALL_FAST_MODEL"] = "haiku"
    found = only(run("claude", environ, cs()), "claude-model-slot", WARN)
    assert "this shell" in found.summary and "unset ANTHROPIC_SMALL_FAST_MODEL" in found.hint


def test_claude_slots_that_are_not_anthropic_models_are_the_users_choice(environ):
    assert run("claude", environ, cs(ANTHROPIC_DEFAULT_HAIKU_MODEL="deepseek-v4-flash")) == []
    assert run("claude", environ, cs(CLAUDE_CODE_SUBAGENT_MODEL="inherit")) == []
    # Anthropic's own API, or no model of agentcfg's: every slot is Anthropic's to serve
    assert run("claude", environ, json.dumps({"env": {"ANTHROPIC_SMALL_FAST_MODEL": "haiku"}})) == []


# An output bound under the 4,096 tokens Claude Code plans with (agentcfg.budget.MIN_OUTPUT): the walkthrough's
# 32,768 window got CLAUDE_CODE_MAX_OUTPUT_TOKENS=384 from switch, and doctor said nothing.


def test_claude_output_bound_below_what_it_needs_warns_and_a_switch_fixes_it(environ):
    found = only(run("claude", environ, cs(CLAUDE_CODE_MAX_OUTPUT_TOKENS="384")), "claude-output-too-small", WARN)
    assert "384" in found.summary and "4,096" in found.summary
    assert found.evidence == "CLAUDE_CODE_MAX_OUTPUT_TOKENS=384 (~/.claude/settings.json)"
    assert found.fix == "agentcfg switch local --agent claude"  # the switch of today writes what it needs


def test_claude_output_bound_what_it_needs_or_more_is_fine(environ):
    assert run("claude", environ, cs(CLAUDE_CODE_MAX_OUTPUT_TOKENS="4096")) == []
    assert run("claude", environ, cs(CLAUDE_CODE_MAX_OUTPUT_TOKENS="32000")) == []
    assert run("claude", environ, cs(CLAUDE_CODE_MAX_OUTPUT_TOKENS="lots")) == []  # Claude Code's default then


def test_claude_output_bound_from_the_profiles_maximum_is_raised_there(environ):
    small = Profile("local", LOCAL.base_url, "M", anthropic_base_url=LOCAL.anthropic_base_url, max_output_tokens=1000)
    found = only(
        run("claude", environ, cs(CLAUDE_CODE_MAX_OUTPUT_TOKENS="1000"), profiles={"local": small}),
        "claude-output-too-small",
        WARN,
    )
    assert found.fix == "agentcfg profile set local max_output_tokens=4096 && agentcfg switch local --agent claude"


def test_claude_output_bound_from_a_project_profile_is_the_projects_to_raise(environ):
    small = Profile(
        "team", LOCAL.base_url, "M", anthropic_base_url=LOCAL.anthropic_base_url, max_output_tokens=1000,
        source="project:/src/repo",
    )  # fmt: skip
    found = only(
        run("claude", environ, cs(CLAUDE_CODE_MAX_OUTPUT_TOKENS="1000"), profiles={"team": small}),
        "claude-output-too-small",
        WARN,
    )
    assert found.fix == "" and "the project's profile team" in found.hint  # `profile set` refuses it


def test_claude_output_bound_from_a_small_window_says_to_grow_the_window(environ):
    tiny = Profile("local", LOCAL.base_url, "M", anthropic_base_url=LOCAL.anthropic_base_url, context_window=8192)
    found = only(
        run("claude", environ, cs(CLAUDE_CODE_MAX_OUTPUT_TOKENS="2048"), profiles={"local": tiny}),
        "claude-output-too-small",
        WARN,
    )
    assert found.fix == "" and "--max-model-len 40,192" in found.hint


def test_claude_output_bound_from_the_shell_or_no_profile_says_where(environ):
    environ["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = "500"
    text = json.dumps({"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_MODEL": "other"}})
    found = only(run("claude", environ, text), "claude-output-too-small", WARN)
    assert found.evidence == "CLAUDE_CODE_MAX_OUTPUT_TOKENS=500 (this shell)"
    assert found.fix == "" and "unset CLAUDE_CODE_MAX_OUTPUT_TOKENS" in found.hint


# -- the real users' files ----------------------------------------------------------------------------------

# Every finding the corpus gives, each checked against the real agent (tests/e2e/test_agent_rules.py runs
# qwen 0.15.10 on 013-dpunj-version3.json: "Qwen OAuth free tier was discontinued", rc 1).
CORPUS_FINDINGS = {
    ("codex", "003-lumenyoung-providers-profiles.toml"): [("codex-legacy-profiles", WARN)],
    ("qwen", "005-aungmyokyaw-legacy.json"): [("qwen-oauth-selected", FAIL)],
    ("qwen", "011-mapringg-legacy-noeol.json"): [("qwen-oauth-selected", FAIL)],
    ("qwen", "012-v1nh1shungry-mcp.json"): [("qwen-oauth-selected", FAIL)],
    ("qwen", "013-dpunj-version3.json"): [("qwen-oauth-selected", FAIL)],
}


def corpus_cases() -> list:
    from tests.e2e.test_config_loads import main_file

    return [
        pytest.param(agent, path, main_file(agent, path.name), id=f"{agent}-{path.name}")
        for agent in ("codex", "qwen", "opencode", "claude")
        if (CORPUS / agent).is_dir()
        for path in sorted((CORPUS / agent).iterdir())
        if path.is_file()
    ]


@pytest.mark.parametrize(("agent", "path", "relative"), corpus_cases())
def test_corpus_files_give_only_the_findings_their_agent_would(agent, path, relative, tmp_path):
    environ = make_environ(tmp_path)
    (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / relative).write_bytes(path.read_bytes())
    module = {"codex": codex, "opencode": opencode, "qwen": qwen, "claude": claude}[agent]
    try:
        current = read_current(module, environ)
        module.read(current)
    except AgentcfgError:  # a file agentcfg refuses: collect reports it (config-unreadable), not these rules
        return
    assert ids(check(agent, current, environ, PROFILES)) == CORPUS_FINDINGS.get((agent, path.name), [])


# -- the CLI ----------------------------------------------------------------------------------------------


BREAK = {  # agent -> (file, what to do to what switch wrote, the finding)
    "codex": (".codex/config.toml", lambda t: "model_context_window = 999999999999999999999\n" + t,
              "codex-config-rejected"),
    "opencode": (".config/opencode/opencode.json", lambda t: t.replace('"output"', '"output_"'),
                 "opencode-config-rejected"),
    "qwen": (".qwen/settings.json", lambda t: t.replace('"selectedType": "openai"', '"selectedType": "qwen-oauth"'),
             "qwen-oauth-selected"),
    "droid": (".factory/settings.json", lambda t: t.replace('"generic-chat-completion-api"', '"chat"'),
              "droid-settings-rejected"),
}  # fmt: skip


@pytest.mark.parametrize("agent", sorted(BREAK))
def test_doctor_offline_json_names_the_agents_own_refusal_and_its_fix_works(home: Home, agent: str):
    home.run(
        "profile", "add", "local", "--force", "--base-url", "http://127.0.0.1:9/v1", "--model", "M",
        "--anthropic-base-url", "http://127.0.0.1:9",
    )  # fmt: skip
    home.run("switch", "local", "--agent", agent)
    relative, breaking, finding_id = BREAK[agent]
    broken = breaking(home.read(relative))
    assert broken != home.read(relative)
    home.write(relative, broken)
    result = home.run("doctor", "--offline", "--json", "--agent", agent, check=None)
    report = json.loads(result.stdout)
    found = [f for f in report["findings"] if f["id"] == finding_id]
    assert result.returncode == 1 and len(found) == 1, report
    assert found[0]["status"] == "fail" and found[0]["agent"] == agent
    assert shlex.split(found[0]["fix"]) == ["agentcfg", "switch", "local", "--agent", agent]
    # the fix, pasted: doctor is clean of it again
    home.run(*shlex.split(found[0]["fix"])[1:])
    report = json.loads(home.run("doctor", "--offline", "--json", "--agent", agent, check=None).stdout)
    assert not [f for f in report["findings"] if f["id"] == finding_id], report


def test_opencode_small_model_left_from_another_setup_warns(environ):
    found = only(run("opencode", environ, oc(small_model="anthropic/claude-haiku-4-5")), "opencode-model-slot", WARN)
    assert "provider anthropic" in found.summary and "small_model" in found.summary
    assert found.fix == "" and "remove small_model from ~/.config/opencode/opencode.json" in found.hint
    found = only(run("opencode", environ, oc(small_model="agentcfg-local/other")), "opencode-model-slot", WARN)
    assert "the server of agentcfg-local" in found.summary
    assert run("opencode", environ, oc(small_model="agentcfg-local/M")) == []
    # the user's own provider: their small model is their business
    assert run("opencode", environ, '{"model": "anthropic/a", "small_model": "openai/b"}') == []
