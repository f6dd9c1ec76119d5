"""A big JSON file read member by member (agentcfg.edit.jsonparts) gets json.loads' verdict on every text:
what the walk accepts, json.loads accepts with the same values under the kept keys; anything else is read
whole, so JSONC, the errors and their lines are as before."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcfg.edit import EditError, jsonc, jsonparts

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_KEYS = st.sampled_from(["provider", "mcp", "model", "env", "a\\u0062", "x"])
_SCALARS = st.sampled_from(["1", "-0.5e3", '"s"', '"\\u00e9"', "true", "null", "NaN", "01", '"a\nb"', "tru", "1."])
# What a run of array items may hold (jsonparts._ITEMS): JSON's scalars and near misses of each
_ITEM_SCALARS = st.sampled_from([
    "0", "-0", "1e5", "0.1e-2", "1E+300", "12345678901234567890", "123456789012345678901234", "-", "2.", "1e", "-01",
    "1.5.", "Infinity", "-Infinity", "NaN", '""', '"\\\\"', '"\\""', '"\\/"', '"\\x"', '"\\u12"', '"\\u00e9"',
    '"\x01"', '"\x7f"', '"\ud800"', '"a\tb"', "true", "false", "null", "nul", "truex", "[]", "[1, 2]", '{"k": 1}',
])  # fmt: skip
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(st.tuples(_KEYS, inner), max_size=4).map(
            lambda members: "{" + ",\n ".join(f'"{k}": {v}' for k, v in members) + "}"
        ),
    ),
    max_leaves=12,
)
_NOISE = st.sampled_from(["", " ", "\n", ",", "// c\n", "/* c */", "}", "]", "\ufeff", "\t"])


@st.composite
def _text(draw) -> str:
    members = draw(st.lists(st.tuples(_KEYS, _JSON), max_size=6))
    body = "{" + ",\n  ".join(f'"{k}": {v}' for k, v in members) + "}"
    if draw(st.booleans()):  # a few bytes changed anywhere: a comment, a trailing comma, junk
        at = draw(st.integers(0, len(body)))
        body = body[:at] + draw(_NOISE) + body[at:]
    return draw(_NOISE.filter(lambda n: n.isspace() or n in ("", "\ufeff"))) + body + draw(st.sampled_from(["", "\n"]))


def _verdict(read, text):
    try:
        return read(text)
    except EditError as exc:
        return ("refused", exc.message, exc.line, exc.col)


@SETTINGS
@given(_text(), st.frozensets(_KEYS.map(lambda k: json.loads(f'"{k}"'))))
def test_read_member_by_member_is_exactly_json_loads(text, keep):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonparts, "SMALL", 0)
        parts = _verdict(lambda t: jsonc.loads_keeping(t, keep)[0], text)
    whole = _verdict(jsonc.loads, text)
    if isinstance(whole, tuple):
        assert parts == whole
        return
    assert isinstance(parts, dict)
    assert parts.keys() <= whole.keys()
    assert all(k in parts for k in keep if k in whole)
    assert json.dumps(parts, sort_keys=True) == json.dumps({k: whole[k] for k in parts}, sort_keys=True)


def test_the_walk_itself_accepts_only_what_json_loads_accepts():
    """The walk, not its fallback: each text it accepts, json.loads accepts."""
    for text in ['{"a": 1}', '{"a": [1, {"b": 2}], "c": {"d": [3]}}', ' {"p": {"x": {"y": 1}}} \n', "{}"]:
        assert jsonparts._read(text, frozenset({"a"}))[0] == {k: v for k, v in json.loads(text).items() if k == "a"}
    for text in ['{"a": 1,}', '{"a": 1} x', '{"a": [1,]}', '{"a": {"b": 1,}}', "[1]", '{"a" 1}', '{"a": 1 // c\n}']:
        with pytest.raises((jsonparts.Whole, ValueError)):
            jsonparts._read(text, frozenset({"a"}))


@SETTINGS
@given(st.lists(_ITEM_SCALARS, max_size=8), st.sampled_from([", ", ",", " ,\n ", ",,", " "]), st.booleans())
def test_a_walked_array_is_accepted_only_where_json_loads_accepts_it(items, comma, trailing):
    """A run of scalars taken in one match (jsonparts._ITEMS): each text json.loads refuses, the walk refuses too,
    and each it accepts, json.loads accepts (items, separators and a trailing comma varied)."""
    text = '{"x": [' + comma.join(items) + (comma if trailing else "") + '], "y": [[' + comma.join(items) + "]]}"
    try:
        json.loads(text)
        accepted = True
    except ValueError:
        accepted = False
    try:
        jsonparts._read(text, frozenset())
        walked = True
    except (jsonparts.Whole, ValueError, IndexError):
        walked = False
    assert walked == accepted, text


def test_a_big_array_below_the_top_level_is_not_built(monkeypatch):
    """Claude Code's permissions.allow of thousands of rules: checked in runs, never held as a list."""
    rules = ",\n".join(f'"Bash(npm run task-{i}:*)"' for i in range(20_000))
    text = '{"model": "m", "permissions": {"allow": [' + rules + '], "deny": []}}'
    built = []
    real = jsonparts._DECODER.raw_decode

    def counted(text, pos):
        value, end = real(text, pos)
        built.append(end - pos)
        return value, end

    monkeypatch.setattr(jsonparts._DECODER, "raw_decode", counted)
    assert jsonparts._read(text, frozenset({"model"}))[0] == {"model": "m"}
    assert max(built) < 100  # item by item at most: the list of 20,000 rules never decoded in one piece


def test_walking_a_big_array_holds_next_to_nothing():
    """The regular-expression engine keeps a backtracking state per repeat of an unbounded group: a run of scalars
    taken in one match held 14 times a 10 MB list. Runs are a thousand items at most."""
    import tracemalloc

    rules = ",\n".join(f'"Bash(npm run task-{i}:*)"' for i in range(40_000))
    text = '{"permissions": {"allow": [' + rules + "]}}"
    tracemalloc.start()
    try:
        jsonparts._read(text, frozenset())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(text) // 4, (peak, len(text))
