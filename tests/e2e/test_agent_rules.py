"""Each of doctor's offline agent rules (agentcfg/doctor/agentfiles.py) against the real agent: on a file
that triggers the rule, the agent does what the finding says (refuses the file, or ignores agentcfg's
provider); on the fixed file it does not, and doctor's rule is quiet.

The agents' own config checks are test_config_loads.load (codex `mcp list`, opencode `debug config
--pure`, headless qwen with no prompt, `claude doctor`), run offline; two rules need more: opencode's
dropped provider shows in `opencode models`, and an undefined model only when `opencode run` tries it
(against the project's test server, so the fixed file really answers).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pytest

from agentcfg.agents import claude, codex, copilot, droid, opencode, qwen
from agentcfg.current import read_current
from agentcfg.doctor.agentfiles import check
from agentcfg.profiles import Profile
from tests.conftest import REPO, Home
from tests.e2e import agents
from tests.e2e.test_config_loads import at_least, load, release_in
from tests.fault_server import MODEL, FaultServer

pytestmark = pytest.mark.e2e
T = TypeVar("T", str, bytes)

MODULES = {"codex": codex, "opencode": opencode, "qwen": qwen, "claude": claude, "copilot": copilot, "droid": droid}
FILE = {
    "codex": ".codex/config.toml",
    "opencode": ".config/opencode/opencode.json",
    "qwen": ".qwen/settings.json",
    "claude": ".claude/settings.json",
    "copilot": ".copilot/providers.json",
    "droid": ".factory/settings.json",
}
PROVIDER = '[model_providers.agentcfg-local]\nname = "agentcfg: local"\nbase_url = "http://127.0.0.1:9/v1"\n'
CODEX_OK = f'model = "M"\nmodel_provider = "agentcfg-local"\n{PROVIDER}'
LOOP = "http://127.0.0.1:9/v1"
OPENAI = {"security": {"auth": {"selectedType": "openai"}}}
QWEN_ENV = "OPENAI_API_KEY=agentcfg-no-key\nOPENAI_BASE_URL=http://127.0.0.1:9/v1\nOPENAI_MODEL=M\n"


def opencode_file(model: str = "agentcfg-local/M", limit: object = None, **top: object) -> str:
    spec: dict = {"name": "M"} if limit is None else {"name": "M", "limit": limit}
    entry = {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": "http://127.0.0.1:9/v1"}, "models": {"M": spec}}
    return json.dumps({"model": model, "provider": {"agentcfg-local": entry}, **top})


COPILOT_PROVIDER = {"name": "agentcfg-local", "type": "openai", "baseUrl": LOOP}
COPILOT_OK = json.dumps({"providers": [COPILOT_PROVIDER], "models": [{"id": "M", "provider": "agentcfg-local"}]})
COPILOT_SELECTS = {".copilot/settings.json": '{"model": "agentcfg-local/M"}'}


def droid_file(default: str = "custom:agentcfg-local", **entry: object) -> str:
    """Droid's settings.json with agentcfg's entry (its keys replaced or removed, None, by `entry`)."""
    ours = {"model": "M", "id": "custom:agentcfg-local", "displayName": "agentcfg: local", "baseUrl": LOOP,
            "provider": "generic-chat-completion-api", **entry}  # fmt: skip
    model = {k: v for k, v in ours.items() if v is not None}
    return json.dumps({"customModels": [model], "sessionDefaultSettings": {"model": default}})


def claude_file(**settings: object) -> str:
    block = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_AUTH_TOKEN": "agentcfg-no-key"}
    return json.dumps({"env": block, **settings})


@dataclass(frozen=True)
class Rule:
    agent: str
    what: str
    broken: str  # the agent's main file (FILE[agent]) that triggers the finding
    finding: str  # its id
    says: str | dict[str, str]  # what the agent prints on the broken file (a regex), or {first release seen: regex}
    fixed: str  # the same file, fixed as the finding says
    extra: dict[str, str] = field(default_factory=dict)  # other files, the same in both


RULES = [
    Rule("codex", "integer TOML cannot hold", "model_context_window = 999999999999999999999\n" + CODEX_OK,
         "codex-config-rejected", r"integer `999999999999999999999` as i128",
         "model_context_window = 131072\n" + CODEX_OK),
    Rule("codex", "a window of the wrong type", 'model_context_window = "big"\n' + CODEX_OK,
         "codex-config-rejected", r"expected i64", CODEX_OK),
    Rule("codex", "provider without name", CODEX_OK.replace('name = "agentcfg: local"\n', ""),
         "codex-config-rejected", r"provider name must not be empty", CODEX_OK),
    Rule("codex", "reserved provider id", CODEX_OK + '[model_providers.openai]\nname = "x"\nbase_url = "http://h/v1"\n',
         "codex-config-rejected", r"reserved built-in provider IDs: `openai`", CODEX_OK),
    Rule("codex", "legacy profile selector", 'profile = "work"\n' + CODEX_OK, "codex-config-rejected",
         r'legacy `profile = "work"` config is no longer supported', CODEX_OK),
    Rule("codex", "provider not defined", 'model_provider = "gateway"\n', "codex-config-rejected",
         r"Model provider `gateway` not found", CODEX_OK),
    Rule("codex", "ollama-chat", 'model_provider = "ollama-chat"\n', "codex-config-rejected",
         r"`ollama-chat` is no longer supported", 'model_provider = "ollama"\n'),
    Rule("codex", "auth with env_key",
         CODEX_OK + 'env_key = "K"\n[model_providers.agentcfg-local.auth]\ncommand = "x"\n', "codex-config-rejected",
         r"provider auth cannot be combined with env_key", CODEX_OK + 'env_key = "K"\n'),
    Rule("codex", "negative retries", CODEX_OK + "request_max_retries = -1\n", "codex-config-rejected",
         r"expected u64", CODEX_OK + "request_max_retries = 1\n"),
    Rule("opencode", "limit without output", opencode_file(limit={"context": 1000}), "opencode-config-rejected",
         r"Missing key provider\.agentcfg-local\.models\.M\.limit\.output",
         opencode_file(limit={"context": 1000, "output": 100})),
    Rule("opencode", "model of the wrong type", '{"small_model": 5}', "opencode-config-rejected",
         r"Expected string \| undefined, got 5 small_model", "{}"),
    Rule("qwen", "Qwen OAuth selected", json.dumps({"security": {"auth": {"selectedType": "qwen-oauth"}}}),
         "qwen-oauth-selected", r"Qwen OAuth free tier was discontinued",
         json.dumps({"security": {"auth": {"selectedType": "openai"}}}), {".qwen/.env": QWEN_ENV}),
    Rule("qwen", "unknown auth type", json.dumps({"security": {"auth": {"selectedType": "bogus"}}}),
         "qwen-auth-type", r"TypeError: Cannot read properties of undefined",
         json.dumps({"security": {"auth": {"selectedType": "openai"}}}), {".qwen/.env": QWEN_ENV}),
    Rule("qwen", "provider entry without id",
         json.dumps({**OPENAI, "modelProviders": {"openai": [{"name": "x", "baseUrl": "http://127.0.0.1:9/v1"}]}}),
         "qwen-config-rejected", r"missing required field: id",
         json.dumps({**OPENAI, "modelProviders": {"openai": [{"id": "M", "name": "x", "baseUrl": LOOP}]}}),
         {".qwen/.env": QWEN_ENV}),
    # `claude doctor`: 2.1.197 draws "Invalid settings ✘" (ignored) / <file> / "└ <field>: <why>"; 2.1.332
    # prints "⚠ Invalid settings" / "- <file> › <field>: <why>" (test_config_loads.CLAUDE_FLAT_DOCTOR).
    Rule("claude", "model of the wrong type", claude_file(model=5), "claude-settings-invalid",
         {"2.1.197": r"Invalid settings ✘.*model: Expected string, but received number",
          "2.1.332": r"⚠ Invalid settings - ~/\.claude/settings\.json › model: Expected string, but received number"},
         claude_file(model="M")),
    Rule("claude", "permissions.allow not a list", claude_file(permissions={"allow": "Bash"}),
         "claude-settings-invalid",
         {"2.1.197": r"Invalid settings ✘.*permissions\.allow: Expected array",
          "2.1.332": r"⚠ Invalid settings - ~/\.claude/settings\.json › permissions\.allow: Expected array"},
         claude_file(permissions={"allow": ["Bash"]})),
    Rule("copilot", "providers not a list", '{"providers": {"agentcfg-local": {}}}', "copilot-config-rejected",
         r"Invalid providers config at \S+: `providers` is not an array", COPILOT_OK, COPILOT_SELECTS),
    Rule("copilot", "provider without name", json.dumps({"providers": [{"type": "openai", "baseUrl": LOOP}]}),
         "copilot-config-rejected", r"Invalid named provider configuration: missing field `name`", COPILOT_OK,
         COPILOT_SELECTS),
    Rule("copilot", "limit not a number",
         json.dumps({"providers": [COPILOT_PROVIDER],
                     "models": [{"id": "M", "provider": "agentcfg-local", "maxOutputTokens": "2048"}]}),
         "copilot-config-rejected", r"invalid type: string \"2048\", expected u32", COPILOT_OK, COPILOT_SELECTS),
    Rule("copilot", "model of an unknown provider",
         json.dumps({"providers": [COPILOT_PROVIDER], "models": [{"id": "M", "provider": "gone"}]}),
         "copilot-config-rejected", r'BYOK model "M" references unknown provider "gone"', COPILOT_OK, COPILOT_SELECTS),
    Rule("copilot", "selected model not listed",
         json.dumps({"providers": [COPILOT_PROVIDER], "models": [{"id": "other", "provider": "agentcfg-local"}]}),
         "copilot-config-rejected", r"Provider model 'agentcfg-local/M' is not registered", COPILOT_OK,
         COPILOT_SELECTS),
    # Droid drops a settings.json with a provider it does not know, saying so only in its log; it leaves out an
    # entry without provider or baseUrl (or with the legacy config.json's snake_case keys) without a word, so
    # the model it was for is "Invalid model" (test_config_loads._droid_load).
    Rule("droid", "an unknown provider", droid_file(provider="chat"), "droid-settings-rejected",
         r"Unsupported custom model provider", droid_file()),
    Rule("droid", "snake_case keys", droid_file(baseUrl=None, base_url=LOOP), "droid-model-dropped",
         r"Invalid model: custom:agentcfg-local", droid_file()),
    Rule("droid", "no provider", droid_file(provider=None), "droid-model-dropped",
         r"Invalid model: custom:agentcfg-local", droid_file()),
]  # fmt: skip


def says_at(says: T | dict[str, T], version: str) -> T:
    """The regex for `version`: that of the latest release keyed at or before it."""
    if not isinstance(says, dict):
        return says
    known = [first for first in says if at_least(version, first)]
    assert known, f"no expectation for release {version} (only {', '.join(says)})"
    return says[max(known, key=lambda v: tuple(map(int, v.split("."))))]


def findings(home: Home, agent: str) -> list[str]:
    """The ids of what agentfiles.check says of the agent's files in `home`."""
    module = MODULES[agent]
    return [f.id for f in check(agent, read_current(module, home.env), home.env, {})]


def outcome(agent: str, home: Home) -> tuple[bool, str]:
    """Whether the agent loads its files (and would use them), and all it printed, on one line."""
    seen = load(agent, home)
    printed = " ".join(" ".join(run.output.split()) for run in seen.runs)
    if agent == "qwen":  # qwen carries on past some problems: loaded means it got as far as the prompt
        return "No input provided" in printed, printed
    if agent == "claude":
        return seen.accepted, seen.outcome
    if agent == "droid":  # loads, and has agentcfg's model (an entry it leaves out is "Invalid model")
        return seen.accepted and not seen.outcome.startswith("Invalid model"), seen.outcome
    return seen.accepted, printed


@pytest.mark.parametrize(
    ("rule", "release"), agents.matrix([pytest.param(r, id=f"{r.agent}-{r.what}") for r in RULES], lambda v: v[0].agent)
)
def test_the_agent_refuses_what_the_rule_names_and_loads_the_fixed_file(rule: Rule, agent_home: Home) -> None:
    for relative, text in rule.extra.items():
        agent_home.write(relative, text)
    agent_home.write(FILE[rule.agent], rule.broken)
    assert rule.finding in findings(agent_home, rule.agent)
    accepted, said = outcome(rule.agent, agent_home)
    assert not accepted, f"{rule.agent} accepts what {rule.finding} says it refuses: {said}"
    assert re.search(says_at(rule.says, release_in(agent_home, rule.agent)), said, re.S), said

    agent_home.write(FILE[rule.agent], rule.fixed)
    assert findings(agent_home, rule.agent) == []
    accepted, said = outcome(rule.agent, agent_home)
    assert accepted, f"{rule.agent} refuses the fixed file: {said}"


def test_codex_legacy_profile_tables_make_codex_profile_refuse(agent_home: Home) -> None:
    agent_home.write(FILE["codex"], CODEX_OK + '[profiles.work]\nmodel = "x"\n')
    assert findings(agent_home, "codex") == ["codex-legacy-profiles"]
    assert load("codex", agent_home).accepted  # loads without --profile: the table is inert
    run = agents.run(agents.offline(["codex", "--profile", "work", "mcp", "list"]), agent_home.env, agent_home.root, 60)
    assert run.returncode == 1 and "cannot be used while" in run.output and "[profiles.work]" in run.output, run
    agent_home.write(FILE["codex"], CODEX_OK)
    agent_home.write(".codex/work.config.toml", 'model = "x"\n')  # moved as the hint says
    assert findings(agent_home, "codex") == []
    run = agents.run(agents.offline(["codex", "--profile", "work", "mcp", "list"]), agent_home.env, agent_home.root, 60)
    assert run.returncode == 0, run


def opencode_models(home: Home) -> str:
    run = agents.run(agents.offline(["opencode", "models"]), home.env, home.root, 90, "opencode")
    assert run.returncode == 0, run
    return run.stdout


@pytest.mark.parametrize(
    "top", [{"enabled_providers": ["openai"]}, {"disabled_providers": ["agentcfg-local"]}], ids=["enabled", "disabled"]
)
def test_opencode_drops_the_provider_the_rule_names(top: dict, agent_home: Home) -> None:
    agent_home.write(FILE["opencode"], opencode_file(**top))
    assert findings(agent_home, "opencode") == ["opencode-provider-disabled"]
    assert "agentcfg-local/M" not in opencode_models(agent_home).split()
    fixed = {"enabled_providers": ["openai", "agentcfg-local"]} if "enabled_providers" in top else {}
    agent_home.write(FILE["opencode"], opencode_file(**fixed))
    assert findings(agent_home, "opencode") == []
    assert "agentcfg-local/M" in opencode_models(agent_home).split()


def test_opencode_cannot_run_an_undefined_model_and_the_fix_answers(agent_home: Home) -> None:
    with FaultServer(max_model_len=131072) as server:
        agent_home.run(
            "profile", "add", "local", "--force", "--base-url", server.base_url, "--model", MODEL,
            "--context-window", "131072",
        )  # fmt: skip
        agent_home.write(FILE["opencode"], json.dumps({"model": f"agentcfg-local/{MODEL}"}))
        module = MODULES["opencode"]
        profiles = {"local": Profile("local", server.base_url, MODEL)}
        found = check("opencode", read_current(module, agent_home.env), agent_home.env, profiles)
        assert [f.id for f in found] == ["opencode-model-undefined"]
        command = agents.command("opencode")
        broken = agents.run(command, agent_home.env, agent_home.root, 120, "opencode")
        assert broken.returncode != 0 and "ready" not in broken.stdout.lower(), broken
        assert not [r for r in server.requests if r[0] == "POST"], "opencode sent a request for an undefined model"
        agent_home.run(*found[0].fix.split()[1:])  # agentcfg switch local --agent opencode
        assert check("opencode", read_current(module, agent_home.env), agent_home.env, profiles) == []
        fixed = agents.run(command, agent_home.env, agent_home.root, 120, "opencode")
    assert fixed.returncode == 0 and "ready" in fixed.stdout.lower(), fixed


def test_qwen_refuses_a_real_users_file_with_qwen_oauth(agent_home: Home) -> None:
    """The corpus file the rule FAILs on (tests/doctor/test_agentfiles.py CORPUS_FINDINGS), as found."""
    agent_home.write(FILE["qwen"], (REPO / "tests/corpus/qwen/013-dpunj-version3.json").read_text(encoding="utf-8"))
    agent_home.write(".qwen/.env", QWEN_ENV)
    assert findings(agent_home, "qwen") == ["qwen-oauth-selected"]
    accepted, said = outcome("qwen", agent_home)
    assert not accepted and "Qwen OAuth free tier was discontinued" in said, said


# How the program reads the background model: 2.1.197 `if(process.env.ANTHROPIC_SMALL_FAST_MODEL)return
# uI(…);…if(!process.env.ANTHROPIC_DEFAULT_HAIKU_MODEL&&…)`; 2.1.332 through an environment object,
# `function gx(){let e=s.ANTHROPIC_SMALL_FAST_MODEL;if(e!==void 0)return Sv($N(e));…return
# s.ANTHROPIC_DEFAULT_HAIKU_MODEL!==void 0?…` and `nPe(){let e=s.CLAUDE_CODE_SUBAGENT_MODEL;return
# e&&e!=="inherit"?e:"inherit"}` [the binaries]. Keyed by the first release seen reading it so.
SMALL_FAST_FIRST = {
    "2.1.197": rb"if\(process\.env\.ANTHROPIC_SMALL_FAST_MODEL\)return.{0,300}?ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "2.1.332": rb"\{let (\w+)=[\w$]+\.ANTHROPIC_SMALL_FAST_MODEL;if\(\1!==void 0\)return.{0,500}?"
    rb"[\w$]+\.ANTHROPIC_DEFAULT_HAIKU_MODEL",
}
SUBAGENT_READ = {
    "2.1.197": rb"process\.env\.CLAUDE_CODE_SUBAGENT_MODEL",
    "2.1.332": rb"let (\w+)=[\w$]+\.CLAUDE_CODE_SUBAGENT_MODEL;return \1&&\1!==\"inherit\"\?\1:\"inherit\"",
}


@pytest.mark.parametrize(("agent", "release"), agents.matrix(["claude"]))
def test_claude_reads_the_model_slots_the_rule_checks(agent: str, agents_bin: Path, agent_versions) -> None:
    """Claude Code's background model is ANTHROPIC_SMALL_FAST_MODEL before the HAIKU slot agentcfg writes,
    and CLAUDE_CODE_SUBAGENT_MODEL picks every subagent's; both in the program itself (no request of
    `claude -p` uses them, so a run cannot show it)."""
    program = (agents_bin / "claude").resolve()
    data = program.read_bytes()
    if not data.startswith(b"\x7fELF") and b"process.env" not in data:
        pytest.skip(f"{program} is neither the native build nor its script")
    version = agent_versions["claude"]
    assert re.search(says_at(SMALL_FAST_FIRST, version), data, re.S)
    assert re.search(says_at(SUBAGENT_READ, version), data)
    assert b"ANTHROPIC_DEFAULT_FABLE_MODEL" in data
    assert b"ANTHROPIC_REASONING_MODEL" not in data  # read by no slot: agentfiles does not check it


def test_codex_review_asks_for_the_review_model_the_rule_names(agent_home: Home) -> None:
    """`codex review` sends review_model, not model, to agentcfg's provider; without it, model."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(agent_home.root)], check=True, timeout=30)
    agent_home.write("a.txt", "x\n")
    asked = {}
    for review in ("gpt-5.1-codex", None):
        with FaultServer(max_model_len=131072) as server:
            text = f'model = "{MODEL}"\nmodel_provider = "agentcfg-local"\n'
            text += f'review_model = "{review}"\n' if review else ""
            text += f'[model_providers.agentcfg-local]\nname = "x"\nbase_url = "{server.base_url}"\n'
            text += "request_max_retries = 0\nstream_max_retries = 0\n"  # the 404 once, not six times
            agent_home.write(FILE["codex"], text)
            found = check("codex", read_current(codex, agent_home.env), agent_home.env, {})
            run = agents.run(["codex", "review", "Review a.txt"], agent_home.env, agent_home.root, 120, "codex")
            asked[review] = ([f.id for f in found], run, {b["model"] for m, p, h, b in server.requests if m == "POST"})
    ids, run, models = asked["gpt-5.1-codex"]
    assert ids == ["codex-model-slot"] and models == {"gpt-5.1-codex"}, run
    assert "does not exist" in run.output, run
    ids, run, models = asked[None]
    assert ids == [] and models == {MODEL} and "ready" in run.stdout, run


def test_opencode_asks_the_small_model_the_rule_names(agent_home: Home) -> None:
    asked = {}
    for small in ("agentcfg-local/other-model", None):
        with FaultServer(max_model_len=131072) as server:
            models = {MODEL: {"limit": {"context": 131072, "output": 8000}}, "other-model": {}}
            entry = {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": server.base_url}, "models": models}
            config: dict = {"model": f"agentcfg-local/{MODEL}", "provider": {"agentcfg-local": entry}}
            if small:
                config["small_model"] = small
            agent_home.write(FILE["opencode"], json.dumps(config))
            found = check("opencode", read_current(opencode, agent_home.env), agent_home.env, {})
            run = agents.run(agents.command("opencode"), agent_home.env, agent_home.root, 120, "opencode")
            asked[small] = ([f.id for f in found], run, {b["model"] for m, p, h, b in server.requests if m == "POST"})
    ids, run, models = asked["agentcfg-local/other-model"]
    assert ids == ["opencode-model-slot"] and "other-model" in models, run
    ids, run, models = asked[None]
    assert ids == [] and models == {MODEL} and "ready" in run.stdout.lower(), run


@pytest.mark.parametrize(("agent", "release"), agents.matrix(["codex", "opencode", "qwen", "droid"]))
def test_the_switch_fix_doctor_prints_makes_the_agent_load_again(agent: str, agent_home: Home) -> None:
    from tests.doctor.test_agentfiles import BREAK

    # no --context-window: the codex break adds model_context_window
    agent_home.run(
        "profile", "add", "local", "--force", "--base-url", "http://127.0.0.1:9/v1", "--model", "M",
        "--anthropic-base-url", "http://127.0.0.1:9",
    )  # fmt: skip
    agent_home.run("switch", "local", "--agent", agent)
    relative, breaking, finding_id = BREAK[agent]
    agent_home.write(relative, breaking(agent_home.read(relative)))
    assert not outcome(agent, agent_home)[0], f"{agent} loads the broken file"
    report = agent_home.json("doctor", "--offline", "--agent", agent, check=None)
    (fix,) = [f["fix"] for f in report["findings"] if f["id"] == finding_id]
    agent_home.run(*fix.split()[1:])
    accepted, said = outcome(agent, agent_home)
    assert accepted, f"{agent} still refuses after `{fix}`: {said}"


def test_droid_settings_local_json_replaces_agentcfgs_model(agent_home: Home) -> None:
    """settings.local.json is merged over settings.json and its customModels list replaces the other whole:
    agentcfg's entry is gone (the `droid-local-override` warning), until the list leaves it."""
    agent_home.write(FILE["droid"], droid_file())
    local = {"customModels": [{"model": "other", "displayName": "Other", "baseUrl": LOOP, "provider": "openai"}]}
    agent_home.write(".factory/settings.local.json", json.dumps(local))
    assert "droid-local-override" in findings(agent_home, "droid")
    assert outcome("droid", agent_home) == (False, "Invalid model: custom:agentcfg-local")
    agent_home.write(".factory/settings.local.json", json.dumps({"logoAnimation": "off"}))
    assert findings(agent_home, "droid") == []
    assert outcome("droid", agent_home) == (True, "model=agentcfg: local")
