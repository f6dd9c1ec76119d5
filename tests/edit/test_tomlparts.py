"""A big config.toml read in parts (agentcfg.edit.tomlparts) gets tomli's verdict on every document:
the same refusal with the same message and line, or the same values under every key that is kept."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcfg.edit import EditError, toml, tomlparts
from tests.edit.test_jsonparts import _verdict

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_FIRST = st.sampled_from(["projects", "model_providers", "a", "tui", "model"])
_SECOND = st.sampled_from(["x", "y", '"x"', "'y'", "z", "b"])
_VALUE = st.sampled_from(['"v"', "1", "{ k = 1 }", "[1, 2]", "true"])


@st.composite
def _statement(draw) -> str:
    kind = draw(st.sampled_from(["header"] * 4 + ["aot", "short", "entry", "dotted", "ml", "array", "junk", "blank"]))
    first, second, third = draw(_FIRST), draw(_SECOND), draw(_SECOND)
    if kind == "header":
        return f"[{first}.{second}]" + (f"\n{third} = {draw(_VALUE)}" if draw(st.booleans()) else "")
    if kind == "aot":
        return f"[[{first}{'.' + second if draw(st.booleans()) else ''}]]"
    if kind == "short":
        return f"[{first}]"
    if kind == "entry":
        return f"{second} = {draw(_VALUE)}"
    if kind == "dotted":
        return f"{second}.{third} = {draw(_VALUE)}"
    if kind == "ml":  # a line that starts with `[` inside a string: not a header
        return f'{second} = """\n[{first}.{third}]\n"""'
    if kind == "array":  # ... and inside a multi-line array
        return f"{second} = [\n[1], [2],\n]"
    if kind == "junk":
        return draw(st.sampled_from(["[a.'b]", "[ a . b ] # c", '["a\\u0062".x]', "[a]]", "x = ", "[[a]", "[a.b.c]"]))
    return ""


_DOCUMENT = st.lists(_statement(), max_size=25).map(lambda lines: "\n".join(lines) + "\n")
_KEEP = st.frozensets(st.sampled_from(["projects", "model_providers", "a", "tui", "model", "x"]))


@SETTINGS
@given(_DOCUMENT, _KEEP, st.integers(1, 60))
def test_read_in_parts_is_exactly_tomli(text, keep, batch):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tomlparts, "SMALL", 0)
        patch.setattr(tomlparts, "BATCH", batch)
        parts = _verdict(lambda t: toml.loads_keeping(t, keep)[0], text)
    whole = _verdict(toml.loads, text)
    if isinstance(whole, tuple):
        assert parts == whole
        return
    assert isinstance(parts, dict)
    assert parts.keys() <= whole.keys()
    assert all(parts[k] == whole[k] for k in parts)
    assert all(k in parts for k in keep if k in whole)


def test_a_big_file_of_project_tables_keeps_only_what_is_asked(monkeypatch):
    monkeypatch.setattr(tomlparts, "SMALL", 0)
    monkeypatch.setattr(tomlparts, "BATCH", 1000)
    head = 'model = "m"\n\n[model_providers.local]\nbase_url = "u"\n'
    projects = "".join(f'\n[projects."/src/p{i}"]\ntrust_level = "trusted"\n' for i in range(500))
    read, _ = toml.loads_keeping(head + projects, frozenset({"model_providers"}))
    assert read == {"model": "m", "model_providers": {"local": {"base_url": "u"}}}
    twice = head + projects + '\n[projects."/src/p3"]\ntrust_level = "trusted"\n'  # far from its first
    with pytest.raises(EditError) as refused:
        toml.loads_keeping(twice, frozenset({"model_providers"}))
    with pytest.raises(EditError) as whole:
        toml.loads(twice)
    assert (refused.value.message, refused.value.line) == (whole.value.message, whole.value.line)
