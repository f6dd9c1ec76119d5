"""agentcfg.importer, the pure half of `profile import`: what the agents' Bindings become as candidates."""

from __future__ import annotations

import signal

import pytest

from agentcfg.agents.base import Binding
from agentcfg.importer import PLACEHOLDERS, Candidate, candidates, claude_model, name_for
from agentcfg.profiles import NAME_RE, PLACEHOLDER_KEY, Profile

KEY = "sk-test-0123456789abcdef"
OTHER_KEY = "sk-other-fedcba9876543210"
ROOT = "http://127.0.0.1:9"
BASE = f"{ROOT}/v1"


def qwen(base: str = BASE, model: str = "m", key: str | None = KEY) -> Binding:
    """What qwen.read() gives for a .env with OPENAI_BASE_URL/OPENAI_MODEL/OPENAI_API_KEY."""
    return Binding(
        base_url=base, model=model, key=None if key is None else "in .env", key_env="OPENAI_API_KEY", key_value=key
    )


def claude(base: str = ROOT, model: str = "m", token: str | None = KEY) -> Binding:
    """What claude.read() gives for an env block with ANTHROPIC_BASE_URL/ANTHROPIC_MODEL/ANTHROPIC_AUTH_TOKEN."""
    return Binding(base_url=base, model=model, key=None if token is None else "in file", key_value=token)


def summary(found: list[Candidate]) -> list[tuple]:
    return [
        (c.name, c.base_url, c.model, c.anthropic_base_url, c.key_env, c.key, c.found_in, c.known_as) for c in found
    ]


# -- name_for -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("http://127.0.0.1:8000/v1", "local-8000"),
        ("http://localhost:11434/v1", "local-11434"),
        ("http://LOCALHOST:1234/v1", "local-1234"),
        ("http://[::1]:8000/v1", "local-8000"),
        ("http://127.0.0.2:30000/v1", "local-30000"),  # all of 127/8 is this machine
        ("http://localhost/v1", "local-80"),
        ("http://127.0.0.1:99999/v1", "local-80"),  # not a port: as if none were given
    ],
)
def test_name_for_this_machine_is_local_and_the_port(url, name):
    assert name_for(url, set()) == name


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://api.deepseek.com/v1", "deepseek"),
        ("https://api.deepseek.com", "deepseek"),
        ("https://openrouter.ai/api/v1", "openrouter"),
        ("https://taotoken.net/api", "taotoken"),
        ("https://gateway.example.org/v1", "example"),
        ("https://www.Moonshot.CN/v1", "moonshot"),
        ("http://127.0.0.1.example.com/v1", "example"),  # a DNS name, not the loopback address
        ("not a url", "endpoint"),
    ],
)
def test_name_for_a_host_is_its_domain(url, name):
    assert name_for(url, set()) == name


def test_name_for_a_taken_name_counts_up():
    assert name_for("https://api.deepseek.com/v1", {"deepseek"}) == "deepseek-2"
    assert name_for("https://api.deepseek.com/v1", {"deepseek", "deepseek-2"}) == "deepseek-3"
    assert name_for("https://api.deepseek.com/v1", {"deepseek-2"}) == "deepseek"
    assert name_for("http://localhost:8000/v1", {"local-8000"}) == "local-8000-2"


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("http://we!rd.example/v1", "we-rd"),
        ("http://!!corp.example/v1", "corp"),  # no leading '-' left
        ("http://my~gw..example/v1", "endpoint"),  # an empty label: nothing usable
        ("http://gw_1.example/v1", "gw_1"),
    ],
)
def test_name_for_replaces_characters_a_profile_name_cannot_have(url, name):
    got = name_for(url, set())
    assert got == name
    assert NAME_RE.match(got)


def test_name_for_openai_itself_is_openai():
    assert name_for("https://api.openai.com/v1", set()) == "openai"


def test_name_for_a_host_starting_with_an_underscore_terminates():
    def too_slow(signum, frame):
        raise TimeoutError("name_for did not return within 1 s")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        name = name_for("http://_internal.lan/v1", set())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert NAME_RE.match(name)


def test_name_for_an_ip_address_names_the_address():
    first, second = name_for("http://192.168.1.5:8000/v1", set()), name_for("http://10.0.1.7:8000/v1", {"1"})
    assert "192-168-1-5" in first and "10-0-1-7" in second, (first, second)


# -- candidates ------------------------------------------------------------------------------------------------


def test_claude_joins_the_openai_candidate_of_its_host_and_model():
    found = candidates({"qwen": qwen(), "claude": claude(ROOT + "/")}, {}, {})
    assert summary(found) == [("local-9", BASE, "m", ROOT, "LOCAL_9_API_KEY", KEY, ["qwen", "claude"], None)]
    profile = found[0].profile()
    assert profile == Profile(
        name="local-9",
        base_url=BASE,
        model="m",
        key_env="LOCAL_9_API_KEY",
        anthropic_base_url=ROOT,
        description="imported from qwen, claude",
    )


def test_claude_on_another_model_or_host_is_a_candidate_of_its_own():
    found = candidates(
        {"qwen": qwen(key=None), "claude": claude(model="claude-x", token=OTHER_KEY)},
        {},
        {},
    )
    assert summary(found) == [
        ("local-9", BASE, "m", None, None, None, ["qwen"], None),
        ("local-9-2", BASE, "claude-x", ROOT, "LOCAL_9_2_API_KEY", OTHER_KEY, ["claude"], None),
    ]
    alone = candidates({"claude": claude("http://127.0.0.1:19/", token=None)}, {}, {})
    assert summary(alone) == [
        ("local-19", "http://127.0.0.1:19/v1", "m", "http://127.0.0.1:19", None, None, ["claude"], None)
    ]


def test_the_key_claude_brings_fills_a_keyless_openai_candidate():
    found = candidates({"qwen": qwen(key=PLACEHOLDER_KEY), "claude": claude()}, {}, {})
    assert summary(found) == [("local-9", BASE, "m", ROOT, "LOCAL_9_API_KEY", KEY, ["qwen", "claude"], None)]


@pytest.mark.parametrize("placeholder", [*sorted(PLACEHOLDERS), "EMPTY", "Dummy", ""])
def test_placeholder_keys_are_not_keys(placeholder):
    found = candidates({"qwen": qwen(key=placeholder), "claude": claude(token=placeholder)}, {}, {})
    assert [(c.key, c.key_env) for c in found] == [(None, None)]  # on this machine: no key, no variable
    remote = candidates({"qwen": qwen("https://api.deepseek.com/v1", key=placeholder)}, {}, {})
    assert [(c.name, c.key, c.key_env) for c in remote] == [("deepseek", None, "DEEPSEEK_API_KEY")]


def test_a_profile_with_the_same_base_url_and_model_is_known():
    existing = {
        "team": Profile(name="team", base_url=BASE + "/", model="m", key_env="TEAM_KEY"),
        "local-9": Profile(name="local-9", base_url=BASE, model="other"),
    }
    found = candidates({"qwen": qwen(), "opencode": Binding(base_url=BASE, model="third")}, {}, existing)
    assert [(c.name, c.known_as, c.found_in) for c in found] == [
        ("team", "team", ["qwen"]),
        ("local-9-2", None, ["opencode"]),  # the name is taken by a profile for another model
    ]


def test_a_builtin_profile_is_known_too():
    taotoken = Profile(name="taotoken", base_url="https://taotoken.net/api", model="deepseek-chat", key_env="T")
    found = candidates(
        {
            "qwen": qwen("https://taotoken.net/api", "deepseek-chat"),
            "opencode": Binding(base_url="https://taotoken.net/api", model="glm-4.6"),
        },
        {},
        {"taotoken": taotoken},
    )
    assert [(c.name, c.known_as, c.key_env) for c in found] == [
        ("taotoken", "taotoken", "TAOTOKEN_API_KEY"),
        ("taotoken-2", None, "TAOTOKEN_2_API_KEY"),
    ]


def test_a_bindings_own_key_variable_is_kept():
    opencode = Binding(base_url="https://openrouter.ai/api/v1", model="x/y", key="{env:OR_KEY}", key_env="OR_KEY")
    codex = Binding(base_url=BASE, model="m", key="env LOCAL_GW_TOKEN", key_env="LOCAL_GW_TOKEN")
    found = candidates({"codex": codex, "opencode": opencode, "qwen": qwen("http://127.0.0.1:19/v1")}, {}, {})
    assert [(c.name, c.key_env, c.key) for c in found] == [
        ("local-9", "LOCAL_GW_TOKEN", None),
        ("openrouter", "OR_KEY", None),
        ("local-19", "LOCAL_19_API_KEY", KEY),  # qwen's OPENAI_API_KEY is nobody's own: a variable per profile
    ]


def test_one_endpoint_in_two_agents_is_one_candidate_with_the_first_key():
    found = candidates(
        {
            "qwen": qwen(key=KEY),
            "opencode": Binding(base_url=BASE + "/", model="m", key="in file", key_value=OTHER_KEY),
        },
        {},
        {},
    )
    assert summary(found) == [("local-9", BASE, "m", None, "LOCAL_9_API_KEY", KEY, ["qwen", "opencode"], None)]


def test_an_agent_without_a_model_or_base_url_is_no_candidate():
    found = candidates({"qwen": Binding(base_url=BASE), "codex": Binding(model="m"), "claude": Binding()}, {}, {})
    assert found == []


def test_the_environment_is_a_source_of_its_own():
    environ = {"OPENAI_BASE_URL": "http://127.0.0.1:19/v1", "OPENAI_MODEL": "m", "OPENAI_API_KEY": KEY}
    found = candidates({"qwen": qwen(key=None)}, environ, {})
    assert summary(found) == [
        ("local-9", BASE, "m", None, None, None, ["qwen"], None),
        ("local-19", "http://127.0.0.1:19/v1", "m", None, "LOCAL_19_API_KEY", KEY, ["environment"], None),
    ]
    joined = candidates({"qwen": qwen(key=None)}, {"OPENAI_BASE_URL": BASE + "/", "OPENAI_MODEL": "m"}, {})
    assert [(c.name, c.found_in) for c in joined] == [("local-9", ["qwen", "environment"])]
    placeholder = candidates({}, {**environ, "OPENAI_API_KEY": "EMPTY"}, {})
    assert [(c.key, c.key_env) for c in placeholder] == [(None, None)]
    assert candidates({}, {"OPENAI_BASE_URL": BASE}, {}) == []  # no model, no candidate


def test_anthropic_variables_join_the_openai_candidate():
    environ = {"ANTHROPIC_BASE_URL": ROOT, "ANTHROPIC_MODEL": "m", "ANTHROPIC_AUTH_TOKEN": KEY}
    found = candidates({"qwen": qwen(key=None)}, environ, {})
    assert summary(found) == [("local-9", BASE, "m", ROOT, "LOCAL_9_API_KEY", KEY, ["qwen", "environment"], None)]


def test_the_key_never_shows_in_a_candidates_repr():
    (found,) = candidates({"qwen": qwen()}, {}, {})
    assert KEY not in repr(found)


# -- claude_model: Claude Code's model without ANTHROPIC_MODEL ------------------------------------------------


@pytest.mark.parametrize(
    ("variables", "setting", "model"),
    [
        ({"ANTHROPIC_MODEL": "a", "ANTHROPIC_DEFAULT_SONNET_MODEL": "b"}, "c", "a"),  # the variable wins
        ({"ANTHROPIC_DEFAULT_SONNET_MODEL": "b"}, "c", "c"),  # then the `model` setting, a model id
        ({"ANTHROPIC_DEFAULT_OPUS_MODEL": "o", "ANTHROPIC_DEFAULT_SONNET_MODEL": "s"}, "opus", "o"),  # an alias: slot
        ({"ANTHROPIC_DEFAULT_SONNET_MODEL": "s"}, "opus", "s"),  # an alias whose slot is unset: the slots
        ({"ANTHROPIC_DEFAULT_HAIKU_MODEL": "h", "ANTHROPIC_DEFAULT_SONNET_MODEL": "s"}, None, "s"),  # main slot first
        ({"ANTHROPIC_DEFAULT_HAIKU_MODEL": "h"}, None, "h"),
        ({"ANTHROPIC_SMALL_FAST_MODEL": "f"}, None, "f"),
        ({"ANTHROPIC_MODEL": "  ", "ANTHROPIC_DEFAULT_OPUS_MODEL": 5}, "sonnet", None),  # blank, not text, alias
        ({}, None, None),
    ],
)
def test_claude_model_reads_the_variable_the_setting_then_the_slots(variables, setting, model):
    assert claude_model(variables, setting) == model


def test_the_environment_anthropic_endpoint_without_a_model_variable_uses_its_slots():
    environ = {"ANTHROPIC_BASE_URL": ROOT, "ANTHROPIC_DEFAULT_SONNET_MODEL": "s", "ANTHROPIC_AUTH_TOKEN": KEY}
    (found,) = candidates({}, environ, {})
    assert (found.base_url, found.model, found.anthropic_base_url, found.found_in) == (BASE, "s", ROOT, ["environment"])


def test_an_agent_speaking_anthropics_messages_is_read_as_an_anthropic_endpoint(monkeypatch):
    """Which bindings are Anthropic endpoints comes from the agent's traits (protocol "messages"), not its name."""
    import types

    from agentcfg import agents

    fifth = types.SimpleNamespace(TRAITS=agents.AGENTS["claude"].TRAITS._replace(name="fifth"))
    monkeypatch.setitem(agents.AGENTS, "fifth", fifth)
    found = candidates({"qwen": qwen(), "fifth": claude(ROOT + "/")}, {}, {})
    assert summary(found) == [("local-9", BASE, "m", ROOT, "LOCAL_9_API_KEY", KEY, ["qwen", "fifth"], None)]
