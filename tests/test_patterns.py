"""agentcfg.patterns: a pattern compiled at its first use, and then the same as re.compile's."""

from __future__ import annotations

import re

from agentcfg.patterns import lazy


def test_nothing_is_compiled_until_it_is_used() -> None:
    pattern = lazy(r"(?P<word>[a-z]+)\s+(", re.IGNORECASE)  # broken: compiling it would raise
    assert pattern._compiled is None
    try:
        pattern.search("x")
    except re.error:
        pass
    else:
        raise AssertionError("compiled at the first use")


def test_it_answers_as_the_compiled_pattern() -> None:
    pattern = lazy(r"(?P<key>[A-Z_]+)=(?P<value>\S+)", re.IGNORECASE)
    compiled = re.compile(r"(?P<key>[A-Z_]+)=(?P<value>\S+)", re.IGNORECASE)
    text = "a=1 B_c=two; d e=f"
    assert pattern.sub("<>", text) == compiled.sub("<>", text)
    assert [m.groupdict() for m in pattern.finditer(text)] == [m.groupdict() for m in compiled.finditer(text)]
    assert pattern.fullmatch("k=v") and not pattern.fullmatch("k v")
    assert (pattern.pattern, pattern.flags) == (compiled.pattern, compiled.flags)
