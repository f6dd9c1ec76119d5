"""What doctor sends for each agent (probe_plan, _headers) and the targets a profile gives (targets_from_profile).
No network: only the plan and the targets are checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcfg import budget
from agentcfg.agents import AGENTS
from agentcfg.doctor import _headers, probe_plan, probes, targets_from_profile
from agentcfg.doctor.model import FAIL, SKIP, WARN, Finding, Target
from agentcfg.profiles import PLACEHOLDER_KEY, Profile

OPENAI_BASE = "http://127.0.0.1:8000/v1"
ANTHROPIC_BASE = "http://127.0.0.1:8000"
PROXY = "http://127.0.0.1:7890"
KEY = "sk-test-plan-0123456789"


def target(agent: str, **kw: object) -> Target:
    claude = agent == "claude"
    values: dict[str, object] = {
        "protocol": "anthropic" if claude else "openai",
        "base_url": ANTHROPIC_BASE if claude else OPENAI_BASE,
        "model": "DeepSeek-V4-Flash",
        "key": KEY,
    }
    values.update(kw)
    return Target(agent, values.pop("protocol"), values.pop("base_url"), values.pop("model"), **values)


# -- probe_plan ----------------------------------------------------------------------------------------------


def test_codex_plan() -> None:
    plan = probe_plan(target("codex"))
    assert list(plan) == ["models", "models-alt", "responses-stream", "chat"]
    assert plan["models"].url == OPENAI_BASE + "/models" and plan["models"].method == "GET"
    assert plan["models-alt"].url == "http://127.0.0.1:8000/models" and plan["models-alt"].kind == "models-alt"
    responses = plan["responses-stream"]
    assert responses.url == OPENAI_BASE + "/responses" and responses.method == "POST"
    assert responses.kind == "responses-stream" and responses.stream
    assert plan["chat"].url == OPENAI_BASE + "/chat/completions"
    assert plan["chat"].kind == "chat" and not plan["chat"].stream


@pytest.mark.parametrize("agent", ["qwen", "opencode"])
def test_chat_agents_plan(agent: str) -> None:
    plan = probe_plan(target(agent))
    assert list(plan) == ["models", "models-alt", "chat-stream", "chat"]
    assert plan["chat-stream"].url == plan["chat"].url == OPENAI_BASE + "/chat/completions"
    assert plan["chat-stream"].stream and not plan["chat"].stream


def test_claude_plan() -> None:
    plan = probe_plan(target("claude"))
    assert list(plan) == ["models", "messages-stream"]
    assert plan["models"].url == ANTHROPIC_BASE + "/v1/models"
    messages = plan["messages-stream"]
    assert messages.url == ANTHROPIC_BASE + "/v1/messages?beta=true"
    assert messages.stream and messages.method == "POST"
    assert messages.headers[0] == ("anthropic-version", "2023-06-01")


def test_trailing_slash_in_base_url() -> None:
    plan = probe_plan(target("qwen", base_url=OPENAI_BASE + "/"))
    assert plan["models"].url == OPENAI_BASE + "/models"
    assert plan["chat"].url == OPENAI_BASE + "/chat/completions"
    assert plan["models-alt"].url == "http://127.0.0.1:8000/models"
    plan = probe_plan(target("claude", base_url=ANTHROPIC_BASE + "/"))
    assert plan["messages-stream"].url == ANTHROPIC_BASE + "/v1/messages?beta=true"


def test_base_without_v1_gets_v1_as_the_alternative() -> None:
    plan = probe_plan(target("opencode", base_url="https://taotoken.net/api"))
    assert plan["models"].url == "https://taotoken.net/api/models"
    assert plan["models-alt"].url == "https://taotoken.net/api/v1/models"


@pytest.mark.parametrize("agent", ["codex", "qwen", "opencode", "claude"])
def test_plan_through_a_proxy(agent: str) -> None:
    plain = probe_plan(target(agent))
    plan = probe_plan(target(agent, proxy=PROXY))
    assert set(plan) == set(plain) | {"models-direct"}
    for kind, probe in plan.items():
        if kind == "models-direct":
            assert probe.proxy is None
        else:
            assert probe.proxy == PROXY, kind
            assert (probe.url, probe.headers, probe.body) == (plain[kind].url, plain[kind].headers, plain[kind].body)
    direct = plan["models-direct"]
    assert direct.url == plan["models"].url and direct.headers == plan["models"].headers
    assert direct.method == "GET"
    assert all(p.proxy is None for p in plain.values())


@pytest.mark.parametrize(
    "static",
    [
        Finding("config-unreadable", FAIL, "codex", "does not parse"),
        Finding("codex-wire-api", FAIL, "codex", 'wire_api = "chat"'),
        Finding("claude-login-required", FAIL, "claude", "asks for /login"),
    ],
    ids=lambda f: f.id,
)
def test_no_plan_when_blocked(static: Finding) -> None:
    assert probe_plan(target("codex", static=[static])) == {}


def test_no_plan_without_base_url_and_warnings_do_not_block() -> None:
    assert probe_plan(target("qwen", base_url=None)) == {}
    warn = Finding("claude-login-required", WARN, "claude", "onboarding")
    assert list(probe_plan(target("claude", static=[warn]))) == ["models", "messages-stream"]
    skip = Finding("key-missing", SKIP, "qwen", "own helper")
    assert probe_plan(target("qwen", static=[skip]))


# -- headers -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["codex", "qwen", "opencode"])
@pytest.mark.parametrize("key_header", ["bearer", "x-api-key", "both"])
def test_openai_agents_send_bearer(agent: str, key_header: str) -> None:
    t = target(agent, key_header=key_header)
    assert _headers(t) == {"Authorization": f"Bearer {KEY}"}
    for probe in probe_plan(t).values():
        assert dict(probe.headers) == {"Authorization": f"Bearer {KEY}"}


@pytest.mark.parametrize(
    ("key_header", "expected"),
    [
        ("bearer", {"Authorization": f"Bearer {KEY}"}),
        ("x-api-key", {"x-api-key": KEY}),
        ("both", {"x-api-key": KEY, "Authorization": f"Bearer {KEY}"}),
    ],
)
def test_claude_headers(key_header: str, expected: dict[str, str]) -> None:
    t = target("claude", key_header=key_header)
    assert _headers(t) == expected
    plan = probe_plan(t)
    assert dict(plan["models"].headers) == expected
    assert dict(plan["messages-stream"].headers) == {"anthropic-version": "2023-06-01", **expected}


@pytest.mark.parametrize("agent", ["codex", "qwen", "opencode", "claude"])
@pytest.mark.parametrize("key", [None, ""])
def test_no_key_no_auth_header(agent: str, key: str | None) -> None:
    t = target(agent, key=key, key_header="both")
    assert _headers(t) == {}
    for probe in probe_plan(t).values():
        names = {name.lower() for name, _ in probe.headers}
        assert not names & {"authorization", "x-api-key"}


# -- request bodies -------------------------------------------------------------------------------------------


def test_chat_bodies() -> None:
    plan = probe_plan(target("opencode", model="deepseek-chat"))
    stream, plain = plan["chat-stream"].body, plan["chat"].body
    for body in (stream, plain):
        assert body["model"] == "deepseek-chat"
        assert body["tools"] == [probes.TOOL]
        assert body["tools"][0]["type"] == "function"
        assert body["tool_choice"] == "auto"
        assert body["max_tokens"] > 1
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert stream["stream"] is True and stream["stream_options"] == {"include_usage": True}
    assert plain["stream"] is False and "stream_options" not in plain


def test_responses_body() -> None:
    body = probe_plan(target("codex"))["responses-stream"].body
    assert body["stream"] is True
    assert body["model"] == "DeepSeek-V4-Flash"
    assert body["tool_choice"] == "auto"
    (tool,) = body["tools"]
    assert tool["type"] == "function" and tool["name"] == "read_file" and "parameters" in tool
    assert body["input"][0]["role"] == "user"
    assert body.get("max_output_tokens", 256) != 1
    chat = probe_plan(target("codex"))["chat"].body
    assert chat["tools"] and chat["tool_choice"] == "auto" and chat["stream"] is False and chat["max_tokens"] != 1


def test_messages_body() -> None:
    body = probe_plan(target("claude", model="claude-sonnet-4"))["messages-stream"].body
    assert body["stream"] is True and body["model"] == "claude-sonnet-4"
    assert body["max_tokens"] > 1
    (tool,) = body["tools"]
    assert tool["name"] == "Read" and tool["input_schema"]["type"] == "object"
    assert body["messages"][0]["role"] == "user"


def test_no_model_sends_an_empty_model() -> None:
    plan = probe_plan(target("qwen", model=None))
    assert plan["chat"].body["model"] == ""


# -- targets_from_profile --------------------------------------------------------------------------------------

LOCAL = Profile(
    name="local",
    base_url="http://localhost:8000/v1",
    anthropic_base_url="http://localhost:8000",
    model="DeepSeek-V4-Flash",
    context_window=1048576,
    description="vLLM on localhost:8000",
)
TAOTOKEN = Profile(
    name="taotoken",
    base_url="https://taotoken.net/api",
    model="deepseek-chat",
    key_env="TAOTOKEN_API_KEY",
    max_output_tokens=8192,
    description="TaoToken gateway",
)
SMALL = Profile(name="small", base_url="http://127.0.0.1:8000/v1", model="m", context_window=32768)
AGENT_MODULES = list(AGENTS.values())


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {
        "HOME": str(home),
        "AGENTCFG_HOME": str(home / ".config" / "agentcfg"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PATH": "/usr/bin:/bin",
    }


def by_agent(targets: list[Target]) -> dict[str, Target]:
    return {t.agent: t for t in targets}


@pytest.mark.parametrize("profile", [LOCAL, TAOTOKEN, SMALL], ids=lambda p: p.name)
def test_target_shape(profile: Profile, environ: dict[str, str], keyring: dict[str, str]) -> None:
    keyring["taotoken"] = KEY
    targets = targets_from_profile(profile, AGENT_MODULES, environ)
    assert [t.agent for t in targets] == ["codex", "qwen", "opencode", "claude", "droid"]
    for t, module in zip(targets, AGENT_MODULES, strict=True):
        assert t.profile == profile.name
        assert t.model == profile.model
        assert t.prompt_tokens == module.TRAITS.prompt_tokens
        assert t.key_env == profile.key_env
        if t.agent == "codex":
            assert t.output_tokens is None
            assert t.wire_api == "responses"
        else:
            assert t.output_tokens == budget.output_tokens(profile, module.TRAITS.prompt_tokens)
            assert t.wire_api is None
        assert t.protocol == ("anthropic" if t.agent == "claude" else "openai")
        if t.agent != "claude":
            assert t.base_url == profile.base_url


def test_output_tokens_follow_the_window(environ: dict[str, str], keyring: dict[str, str]) -> None:
    targets = by_agent(targets_from_profile(SMALL, AGENT_MODULES, environ))
    assert targets["opencode"].output_tokens == (32768 - 10_000) // 2
    assert targets["qwen"].output_tokens == (32768 - 22_000) // 2
    taotoken = by_agent(targets_from_profile(TAOTOKEN, AGENT_MODULES, environ))
    assert taotoken["opencode"].output_tokens == 8192


def test_claude_skipped_without_anthropic_base_url(environ: dict[str, str], keyring: dict[str, str]) -> None:
    claude = by_agent(targets_from_profile(TAOTOKEN, AGENT_MODULES, environ))["claude"]
    assert claude.base_url is None
    assert [(f.id, f.status) for f in claude.static] == [("not-configured", SKIP)]
    assert "anthropic" in claude.static[0].summary.lower()
    assert probe_plan(claude) == {}


def test_keyless_profile_gets_the_placeholder(environ: dict[str, str], keyring: dict[str, str]) -> None:
    targets = targets_from_profile(LOCAL, AGENT_MODULES, environ)
    for t in targets:  # as `switch` writes it: qwen and Claude Code need some key, codex and opencode send none
        assert t.key == (PLACEHOLDER_KEY if t.agent in ("qwen", "claude") else None)
        assert t.key_source == ("placeholder" if t.agent in ("qwen", "claude") else "none")
        assert t.static == []  # a placeholder to this machine is fine
    claude = by_agent(targets)["claude"]
    assert claude.base_url == "http://localhost:8000"
    assert dict(probe_plan(claude)["messages-stream"].headers)["Authorization"] == f"Bearer {PLACEHOLDER_KEY}"


def test_keyless_remote_profile_warns_of_the_placeholder(environ: dict[str, str], keyring: dict[str, str]) -> None:
    remote = Profile(name="remote", base_url="https://gw.example.com/v1", model="m")
    for t in targets_from_profile(remote, AGENT_MODULES, environ):
        expected = [("key-placeholder-to-remote", FAIL)] if t.agent == "qwen" else []  # claude: skipped (no URL)
        assert [(f.id, f.status) for f in t.static if f.status != SKIP] == expected


def test_keyed_profile_uses_the_keyring(environ: dict[str, str], keyring: dict[str, str]) -> None:
    keyring["taotoken"] = KEY
    targets = by_agent(targets_from_profile(TAOTOKEN, AGENT_MODULES, environ))
    for agent in ("codex", "qwen", "opencode"):
        t = targets[agent]
        assert t.key == KEY
        assert t.key_source == "keyring (as `agentcfg exec` gives it)"
        assert t.static == []  # a profile check runs the agents the way `agentcfg exec` would
        assert dict(probe_plan(t)["models"].headers) == {"Authorization": f"Bearer {KEY}"}


def test_keyed_profile_from_the_environment(environ: dict[str, str], keyring: dict[str, str]) -> None:
    environ["TAOTOKEN_API_KEY"] = KEY
    targets = by_agent(targets_from_profile(TAOTOKEN, AGENT_MODULES, environ))
    for agent in ("codex", "qwen", "opencode"):
        t = targets[agent]
        assert t.key == KEY and t.key_source == "env TAOTOKEN_API_KEY (as `agentcfg exec` gives it)"
        assert t.static == []


def test_keyed_profile_without_a_key(environ: dict[str, str], keyring: dict[str, str]) -> None:
    targets = by_agent(targets_from_profile(TAOTOKEN, AGENT_MODULES, environ))
    status = {agent: [(f.id, f.status) for f in targets[agent].static] for agent in ("codex", "qwen", "opencode")}
    assert status == {agent: [("key-missing", FAIL)] for agent in ("codex", "qwen", "opencode")}
    assert all("agentcfg key set taotoken" in targets[a].static[0].fix for a in status)
    assert all(targets[a].key is None for a in status)
    assert _headers(targets["codex"]) == {}


def test_keyed_profile_prefers_the_keyring_like_exec(environ: dict[str, str], keyring: dict[str, str]) -> None:
    keyring["taotoken"] = KEY
    environ["TAOTOKEN_API_KEY"] = "sk-stale-exported-key"
    codex = by_agent(targets_from_profile(TAOTOKEN, AGENT_MODULES, environ))["codex"]
    assert codex.key == KEY


def test_keyed_profile_for_claude(environ: dict[str, str], keyring: dict[str, str]) -> None:
    profile = Profile(
        name="gw",
        base_url="https://gw.example.com/v1",
        anthropic_base_url="https://gw.example.com",
        model="claude-sonnet-4",
        key_env="GW_KEY",
    )
    claude = by_agent(targets_from_profile(profile, AGENT_MODULES, environ))["claude"]
    assert claude.key is None
    assert [(f.id, f.status) for f in claude.static] == [("key-missing", FAIL)]
    assert claude.static[0].fix == "agentcfg key set gw"
    keyring["gw"] = KEY
    claude = by_agent(targets_from_profile(profile, AGENT_MODULES, environ))["claude"]
    assert claude.key == KEY and claude.static == []
    assert claude.key_header == "both"
    assert claude.key_source == "keyring (as `agentcfg key get` gives it)"
    assert claude.base_url == "https://gw.example.com"
    headers = dict(probe_plan(claude)["messages-stream"].headers)
    assert headers == {"anthropic-version": "2023-06-01", "x-api-key": KEY, "Authorization": f"Bearer {KEY}"}


def test_malformed_key_from_the_environment(environ: dict[str, str], keyring: dict[str, str]) -> None:
    environ["TAOTOKEN_API_KEY"] = KEY + "\n"
    codex = by_agent(targets_from_profile(TAOTOKEN, AGENT_MODULES, environ))["codex"]
    assert [(f.id, f.status) for f in codex.static] == [("key-malformed", FAIL)]
    assert KEY not in codex.static[0].summary + codex.static[0].evidence


def test_one_agent(environ: dict[str, str], keyring: dict[str, str]) -> None:
    (t,) = targets_from_profile(LOCAL, [AGENTS["qwen"]], environ)
    assert t.agent == "qwen" and t.base_url == LOCAL.base_url
