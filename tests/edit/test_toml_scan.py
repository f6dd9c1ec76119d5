"""The TOML scanner's fast skip over other people's tables (thousands of `[projects."..."]` in a big
config.toml) finds exactly what the line-by-line scan finds: same edit, byte for byte, on any layout."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agentcfg import edit
from agentcfg.edit import REMOVE, toml

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ASSIGNMENTS = [
    (("model",), "qwen3"),
    (("model_provider",), "agentcfg-local"),
    (("model_providers", "agentcfg-local", "base_url"), "http://127.0.0.1:8000/v1"),
    (("model_providers", "agentcfg-local", "name"), "agentcfg: local"),
    (("model_providers", "old", "env_key"), REMOVE),
    (("projects",), REMOVE),  # a root that is a table of headers: cut whole
]

_NAME = st.sampled_from(["a", "b-c", "x_1", "model_providers", "model", "projects", "tui", "agentcfg-local", "old"])
_SCALAR = st.sampled_from(['"v"', "'lit'", "1", "true", "1979-05-27T07:32:00Z", '"a\\"b"', "[1, 2]", "{ k = 1 }"])


def _key(name: str, quoted: bool) -> str:
    return f'"{name}"' if quoted else name


@st.composite
def _line(draw) -> str:
    kind = draw(st.sampled_from(["header", "header", "entry", "entry", "blank", "comment", "aot", "ml", "dotted"]))
    first, second = draw(_NAME), draw(_NAME)
    q = draw(st.booleans())
    sp = draw(st.sampled_from(["", " ", "\t"]))
    if kind == "header":
        keys = _key(first, q) + (f"{sp}.{sp}{_key(second, draw(st.booleans()))}" if draw(st.booleans()) else "")
        return f"{sp}[{sp}{keys}{sp}]" + draw(st.sampled_from(["", "  # c"]))
    if kind == "aot":
        return f"[[{first}]]"
    if kind == "entry":
        return f"{sp}{_key(first, q)}{sp}={sp}{draw(_SCALAR)}" + draw(st.sampled_from(["", " # c"]))
    if kind == "dotted":
        return f"{first}.{second} = {draw(_SCALAR)}"
    if kind == "ml":  # a multi-line string whose lines look like headers
        return f'{first} = """\n[model_providers.fake]\n[{second}]\nmodel = 1\n"""'
    return "" if kind == "blank" else "# a comment [model_providers.x]"


@st.composite
def _document(draw) -> str:
    lines = draw(st.lists(_line(), max_size=30))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(lines) + draw(st.sampled_from(["", newline]))
    try:
        toml.loads(text)
    except edit.EditError:
        assume(False)
    return text


def _scan(text: str, roots: set[str], *, skip: bool) -> toml.Layout:
    with pytest.MonkeyPatch.context() as patch:
        if not skip:
            patch.setattr(toml, "_skipper", lambda roots: re.compile(""))
        return toml.Layout(text, roots)


def _apply(text: str, assignments: list, *, skip: bool) -> str:
    with pytest.MonkeyPatch.context() as patch:
        if not skip:
            patch.setattr(toml, "_skipper", lambda roots: re.compile(""))
        try:
            return toml.apply(text, assignments)
        except edit.EditError as exc:
            return f"EditError: {exc}"


def _ours(layout: toml.Layout, roots: set[str]) -> list:
    return [
        (s.path, s.start, s.body, [(e.keys, e.start, e.end) for e in s.entries])
        for s in layout.sections
        if not s.path or s.path[0] in roots
    ]


@SETTINGS
@given(_document(), st.lists(st.sampled_from(ASSIGNMENTS), min_size=1, max_size=4, unique=True))
def test_the_skip_finds_what_the_line_by_line_scan_finds(text, assignments):
    roots = {k[0] for k, _ in assignments}
    fast, slow = _scan(text, roots, skip=True), _scan(text, roots, skip=False)
    assert {k: (d.kind, d.pos) for k, d in fast.defs.items()} == {k: (d.kind, d.pos) for k, d in slow.defs.items()}
    assert _ours(fast, roots) == _ours(slow, roots)
    assert _apply(text, assignments, skip=True) == _apply(text, assignments, skip=False)


def test_a_big_file_of_others_tables_is_skipped_in_a_few_matches(monkeypatch):
    """67,000 `[projects."..."]` tables: a thousand lines a match, not three matches a line."""
    text = "".join(f'\n[projects."/src/p{i}"]\ntrust_level = "trusted"\n' for i in range(3000))
    layout = toml.Layout('model = "m"\n' + text, {"model"})
    assert [e.keys for e in layout.sections[0].entries] == [("model",)]
    assert len(layout.sections) <= 2 + 3 * 3000 // 1000  # the top level, then one section per skip
