"""Field validation of profiles (issue 13 items 2 and 7): nothing agentcfg writes can be expanded by an
agent, no control characters, no credentials in a URL, and whole-string matches only (a trailing
newline never passes). fields.check and schemas/profile.schema.json must give the same verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcfg import fields, profiles
from agentcfg.errors import AgentcfgError
from agentcfg.resources import data_dir

GOOD = {"base_url": "https://gw.example/v1", "model": "qwen3-coder"}
# The template model from the issue: opencode expands {env:}/{file:}, qwen-code $VAR/${VAR}.
ISSUE_MODEL = "qwen3-{env:TAOTOKEN_API_KEY}-${TAOTOKEN_API_KEY}-{file:~/.ssh/id_ed25519}"

# (field, value, passes): every rule with a value that must pass and one that must fail.
CASES: list[tuple[str, Any, bool]] = [
    ("model", "qwen3-coder", True),
    ("model", "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", True),
    ("model", "deepseek-v4:671b@q4", True),
    ("model", "m\n", False),
    ("model", "m\r", False),
    ("model", "two words", False),
    ("model", "", False),
    ("model", "m\x00", False),
    ("model", "m\u2028", False),
    ("model", "qwen3-{env:TAOTOKEN_API_KEY}", False),
    ("model", "qwen3-{ENV:X}", False),
    ("model", "{file:~/.ssh/id_ed25519}", False),
    ("model", "qwen3-${TAOTOKEN_API_KEY}", False),
    ("model", "qwen3-$TAOTOKEN_API_KEY", False),
    ("model", "price$", True),  # a lone $ is expanded by nobody
    ("model", "a{b}", True),
    ("base_url", "http://localhost:8000/v1", True),
    ("base_url", "https://taotoken.net/api", True),
    ("base_url", "http://[::1]:8000/v1", True),
    ("base_url", "http://127.0.0.1:8000", True),
    ("base_url", "https://gw.example./v1", True),
    ("base_url", "https://gw.example/v1\n", False),
    # Node's URL parser reads a backslash as "/": host evil.example for an agent, good.example for urlsplit.
    ("base_url", "https://evil.example\\@good.example/v1", False),
    ("base_url", "https://good.example\\evil/v1", False),
    ("base_url", "https://%65vil.example/v1", False),
    ("base_url", "https://gw..example/v1", False),
    ("base_url", "https://gw.example/v1 ", False),
    ("base_url", "ftp://gw.example/v1", False),
    ("base_url", "file:///etc/passwd", False),
    ("base_url", "HTTP://gw.example/v1", False),
    ("base_url", "https://user:s3cret@gw.example/v1", False),
    ("base_url", "https://token@gw.example/v1", False),
    ("base_url", "https://gw.example:99999/v1", False),
    ("base_url", "https://gw.example:0/v1", False),
    ("base_url", "https://gw.example:/v1", False),
    ("base_url", "https://gw_example!/v1", False),
    ("base_url", "https://gw.example/v1?key=1", False),
    ("base_url", "https://gw.example/{env:HOST}", False),
    ("base_url", "https://gw.example/${HOST}", False),
    ("base_url", "https://gw.example/v1\u202e", False),
    ("anthropic_base_url", "http://localhost:8000", True),
    ("anthropic_base_url", "http://localhost:8000\n", False),
    ("anthropic_base_url", "http://a:b@localhost:8000", False),
    ("key_env", "TAOTOKEN_API_KEY", True),
    ("key_env", "_K1", True),
    ("key_env", "_k1", True),  # any case: a profile of yours may read `my_key`
    ("key_env", "my_key", True),
    ("key_env", "TAOTOKEN_API_KEY\n", False),
    ("key_env", "1KEY", False),
    ("key_env", "KEY-X", False),
    ("key_env", "KÉY", False),
    ("key_env", "${KEY}", False),
    ("description", "TaoToken gateway", True),
    ("description", "vLLM on localhost:8000 · 中文 ok", True),
    ("description", "costs $ 5", True),
    ("description", "gateway\n", False),
    ("description", "tab\there", False),
    ("description", "esc\x1b[31mred", False),
    ("description", "del\x7f", False),
    ("description", "c1\x85", False),
    ("description", "line\u2029sep", False),
    ("description", "bidi \u202eevil", False),
    ("description", "isolate \u2066x\u2069", False),
    ("description", "x" * 201, False),
    ("description", "key {env:GITHUB_TOKEN}", False),
    ("description", "key $GITHUB_TOKEN", False),
]


def _schema_ok(data: dict[str, Any]) -> bool:
    try:
        profiles.validate(data, profiles.schema_text(), "test")
    except AgentcfgError:
        return False
    return True


def _fields_ok(data: dict[str, Any]) -> bool:
    try:
        fields.check(data, "test")
    except AgentcfgError as exc:
        assert exc.exit_code == 2
        return False
    return True


@pytest.mark.parametrize(("field", "value", "passes"), CASES, ids=[f"{f}={v!r}"[:60] for f, v, _ in CASES])
def test_each_rule_passes_and_fails_and_the_schema_agrees(field: str, value: Any, passes: bool):
    data = {**GOOD, field: value}
    assert _fields_ok(data) is passes
    assert _schema_ok(data) is passes, "schemas/profile.schema.json disagrees with fields.check"


def test_the_issue_template_model_names_the_field_the_syntax_and_the_agent():
    with pytest.raises(AgentcfgError) as caught:
        fields.check({**GOOD, "model": ISSUE_MODEL}, "team.toml")
    error = caught.value
    assert error.where == "team.toml" and "'model'" in error.message
    assert "{env:" in error.message and "opencode" in error.message
    assert error.hint


@pytest.mark.parametrize(
    ("value", "syntax", "agent"),
    [
        ("m-{file:~/.ssh/id_ed25519}", "{file:", "opencode"),
        ("m-${TAOTOKEN_API_KEY}", "${", "qwen-code"),
        ("m-$TAOTOKEN_API_KEY", "$TAOTOKEN_API_KEY", "qwen-code"),
    ],
)
def test_each_template_syntax_is_named_with_its_agent(value: str, syntax: str, agent: str):
    with pytest.raises(AgentcfgError) as caught:
        fields.check({**GOOD, "model": value}, "p")
    assert syntax in caught.value.message and agent in caught.value.message


def test_credentials_in_a_url_are_refused_with_key_set_and_never_shown():
    with pytest.raises(AgentcfgError) as caught:
        fields.check({**GOOD, "base_url": "https://alice:s3cret-pass@gw.example/v1"}, "p", name="team")
    text = str(caught.value)
    assert "'base_url'" in text and "credentials" in text and "agentcfg key set team" in text
    assert "s3cret-pass" not in text and "alice" not in text


def test_a_control_character_is_named_by_code_point_not_printed():
    with pytest.raises(AgentcfgError) as caught:
        fields.check({**GOOD, "description": "a\x1b]0;pwned\x07b"}, "p")
    assert "U+001B" in caught.value.message and "\x1b" not in str(caught.value)


def test_the_built_in_profiles_pass():
    found = sorted(data_dir("profiles").glob("*.toml"))
    assert found
    for path in found:
        profile = profiles.parse(path.stem, path.read_text(encoding="utf-8"), profiles.BUILT_IN)
        fields.check(profile.fields(), path.name, name=profile.name)


@pytest.mark.parametrize("name", ["nn\n", "nn\r", "nn ", "Nn", "-nn", "../nn", "n" * 65, ""])
def test_a_profile_name_must_match_whole(name: str):
    assert not fields.valid_name(name)
    assert not profiles.NAME_RE.match(name)  # anchored at the very end, whatever a caller uses
    with pytest.raises(AgentcfgError):
        profiles.parse(name, 'base_url = "http://localhost:8000/v1"\nmodel = "m"\n', "p.toml")


@pytest.mark.parametrize("name", ["nn", "n", "local-8000", "a_b", "0" + "n" * 63])
def test_valid_profile_names_pass(name: str):
    assert fields.valid_name(name) and profiles.NAME_RE.match(name)


@pytest.mark.parametrize(
    "text",
    [
        'base_url = "http://localhost:8000/v1"\nmodel = "m\\n"\n',
        f'base_url = "http://localhost:8000/v1"\nmodel = "{ISSUE_MODEL}"\n',
        'base_url = "http://localhost:8000/v1"\nmodel = "m"\ndescription = "d\\u001b"\n',
        'base_url = "http://u:p@localhost:8000/v1"\nmodel = "m"\n',
    ],
)
def test_parse_checks_every_time_even_when_the_schema_cache_knows_the_text(text: str, tmp_path: Path):
    cache = profiles._ValidatedCache({"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")})
    cache.known.add(cache.digest(text))  # as if an older agentcfg had validated (and cached) it
    with pytest.raises(AgentcfgError):
        profiles.parse("p", text, "p.toml", cache)
    with pytest.raises(AgentcfgError):
        profiles.parse("p", text, "p.toml")


def test_non_string_values_are_left_to_the_schema():
    fields.check({**GOOD, "context_window": 4096, "model": 5}, "p")  # the schema reports the type
    assert not _schema_ok({**GOOD, "model": 5})


def test_the_schema_uses_the_same_pattern_strings_as_fields():
    schema = json.loads(profiles.schema_text())
    end = "(?![\\s\\S])"  # the very end: never `$`, which passes a trailing newline
    props = schema["properties"]
    assert props["base_url"]["pattern"] == props["anthropic_base_url"]["pattern"] == f"^{fields.URL_PATTERN}{end}"
    assert props["model"]["pattern"] == f"^{fields.MODEL_PATTERN}{end}"
    assert props["key_env"]["pattern"] == f"^{fields.KEY_ENV_PATTERN}{end}"
    assert props["description"]["maxLength"] == fields.DESCRIPTION_MAX
    inert = [p["pattern"] for p in schema["$defs"]["inert"]["not"]["anyOf"]]
    assert inert == [fields.CONTROL_CLASS, fields.TEMPLATE_PATTERN]
    assert all(
        props[f].get("$ref") == "#/$defs/inert" for f in ("description", "base_url", "anthropic_base_url", "model")
    )


@pytest.mark.parametrize("variable", ["PATH", "path", "Ld_Preload", "NODE_OPTIONS", "pythonpath"])
def test_a_variable_that_steers_programs_is_refused_whatever_its_case(variable: str):
    assert not _fields_ok({**GOOD, "key_env": variable})


def test_the_schema_cache_is_written_only_into_a_state_dir_a_switch_made(tmp_path: Path):
    environ = {"HOME": str(tmp_path), "AGENTCFG_HOME": str(tmp_path / "agentcfg")}
    cache = profiles._ValidatedCache(environ)
    cache.added.add(cache.digest("x"))
    cache.save()  # reading profiles on a fresh machine (status, a refused init) creates nothing
    assert not (tmp_path / "agentcfg").exists()
    (tmp_path / "agentcfg" / "state").mkdir(parents=True)
    cache.save()
    assert cache.digest("x") in (tmp_path / "agentcfg" / "state" / "validated-profiles").read_text()
