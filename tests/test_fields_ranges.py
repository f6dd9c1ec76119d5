"""Issue 15 item 1 and 4: every range a profile field has is stated once (agentcfg/fields.py), the schema says
the same, and a refusal says the limit in numbers and in words, never a regex."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from agentcfg import fields, profiles
from agentcfg.errors import AgentcfgError
from tests.test_fields import GOOD, _schema_ok

I64_MAX = 2**63 - 1  # Codex reads model_context_window as an i64


def _refusal(data: dict[str, Any]) -> AgentcfgError:
    with pytest.raises(AgentcfgError) as caught:
        fields.check(data, "test", name="p")
    return caught.value


CASES: list[tuple[dict[str, Any], bool]] = [
    ({"context_window": 256}, True),
    ({"context_window": 100_000_000}, True),
    ({"context_window": 255}, False),
    ({"context_window": 100_000_001}, False),
    ({"context_window": 999999999999999999999}, False),
    ({"max_output_tokens": 16}, True),
    ({"max_output_tokens": 15}, False),
    ({"max_output_tokens": 100_000_001}, False),
    ({"context_window": 4096, "max_output_tokens": 4096}, True),
    ({"context_window": 4096, "max_output_tokens": 4097}, False),
    ({"base_url": "https://gw.example/" + "a" * (fields.URL_MAX - 19)}, True),
    ({"base_url": "https://gw.example/" + "a" * (fields.URL_MAX - 18)}, False),
    ({"anthropic_base_url": "https://gw.example/" + "a" * fields.URL_MAX}, False),
    ({"key_env": "MY_KEY"}, True),
    ({"key_env": "my_key"}, True),
    ({"key_env": "_K1"}, True),
]


@pytest.mark.parametrize(("extra", "passes"), CASES, ids=[str(c)[:60] for c, _ in CASES])
def test_each_range_is_checked_by_fields_and_the_schema_alike(extra: dict[str, Any], passes: bool) -> None:
    data = {**GOOD, **extra}
    try:
        fields.check(data, "test")
        checked = True
    except AgentcfgError as exc:
        assert exc.exit_code == 2
        checked = False
    assert checked is passes
    # The schema has no cross-field rule (max_output_tokens <= context_window): fields.check runs first.
    if "max_output_tokens" not in extra or "context_window" not in extra:
        assert _schema_ok(data) is passes, "schemas/profile.schema.json disagrees with fields.check"


def test_the_schema_states_the_ranges_of_fields_py() -> None:
    props = json.loads(profiles.schema_text())["properties"]
    for field, (least, most) in fields.INT_RANGES.items():
        assert (props[field]["minimum"], props[field]["maximum"]) == (least, most)
        assert f"{least:,}" in props[field]["description"] and f"{most:,}" in props[field]["description"]
    assert props["base_url"]["maxLength"] == props["anthropic_base_url"]["maxLength"] == fields.URL_MAX


def test_the_largest_window_fits_codex_i64() -> None:
    assert max(most for _, most in fields.INT_RANGES.values()) < I64_MAX


def test_a_window_out_of_range_states_the_range_in_words() -> None:
    error = _refusal({**GOOD, "context_window": 999999999999999999999})
    assert "from 256 to 100,000,000" in error.message and "context_window" in error.message
    assert "Fields a profile may have" not in str(error)


def test_an_output_bound_above_the_window_names_both() -> None:
    error = _refusal({**GOOD, "context_window": 4096, "max_output_tokens": 8192})
    assert "8,192" in error.message and "4,096" in error.message


@pytest.mark.parametrize(
    "data",
    [
        {**GOOD, "model": ""},
        {**GOOD, "model": 5},
        {**GOOD, "context_window": "big"},
        {**GOOD, "context_window": True},
        {**GOOD, "base_url": "https://gw..example/v1"},
        {"model": "m"},
        {**GOOD, "extra": 1},
    ],
)
def test_no_message_shows_a_regex_or_the_unrelated_field_list(data: dict[str, Any]) -> None:
    with pytest.raises(AgentcfgError) as caught:
        fields.check(data, "test")
        profiles.validate(data, profiles.schema_text(), "test")
    text = str(caught.value) + (caught.value.hint or "")
    assert "^" not in text and "(?!" not in text and "does not match" not in text
    if "extra" not in data:
        assert "Fields a profile may have" not in text


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("a" * 300, "at most 64 characters"),
        ("UPPER", "did you mean `upper`"),
        ("My-Gpu", "did you mean `my-gpu`"),
        ("gpu box", "letters, digits"),
        ("", "empty"),
    ],
)
def test_a_bad_name_is_explained(name: str, says: str) -> None:
    problem = fields.name_problem(name)
    assert problem is not None and says in problem
    assert "^" not in problem


def test_a_good_name_has_no_problem() -> None:
    assert fields.name_problem("gpu-2") is None and fields.name_problem("n" * 64) is None


@pytest.mark.parametrize("data", [{"key_env": "PATH"}, {"base_url": "https://u:p@gw.example/v1"}, {"model": "m-$KEY"}])
def test_a_hint_without_a_profile_name_has_no_placeholder(data: dict[str, Any]) -> None:
    with pytest.raises(AgentcfgError) as caught:
        fields.check({**GOOD, **data}, "team.toml")
    assert "NAME" not in (caught.value.hint or "").replace("_API_KEY", "")


def test_the_docs_list_every_reserved_variable_and_prefix() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "switch.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"`([A-Z_][A-Z0-9_]*)`", text))
    missing = {v for v in fields.RUNTIME_VARIABLES if v not in listed and not re.fullmatch(r"PS[1-4]", v)}
    assert not missing, missing
    assert all(p in listed for p in fields.RUNTIME_PREFIXES)


@pytest.mark.parametrize(
    ("variable", "reserved"),
    [("LD_PRELOAD", True), ("PYTHONSTARTUP", True), ("LC_ALL", True), ("GIT_MIRROR_API_KEY", False),
     ("PATH", True), ("PATH_API_KEY", False), ("SSH_AUTH_SOCK", True), ("OPENAI_API_KEY", False)],
)  # fmt: skip
def test_a_derived_api_key_name_is_not_caught_by_a_family_prefix(variable: str, reserved: bool) -> None:
    assert fields.reserved(variable) is reserved
