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


def test_what_was_asked_for_is_kept_so_a_scanner_pays_no_lookup_again() -> None:
    pattern = lazy(r"[a-z]+")
    assert "match" not in vars(pattern)
    first = pattern.match("abc 1")
    assert first is not None and first.group() == "abc"
    assert vars(pattern)["match"] == pattern._compiled.match  # type: ignore[attr-defined]  # the bound method
    assert "search" not in vars(pattern)  # only what was asked for
    assert pattern.match("zz").group() == "zz"  # type: ignore[union-attr]


def test_the_editors_patterns_wait_for_their_first_use() -> None:
    """A reading of an agent's file (doctor, status) never scans it as the editors do: their patterns, dozens of
    them, are not compiled until an edit asks (on every start, compiling them was a tenth of doctor --offline)."""
    import json
    import subprocess
    import sys

    probe = (
        "import json, re, sys\n"
        "from agentcfg.edit import jsonc, jsonparts, toml, tomlparts\n"
        "waiting = [n for m in (jsonc, jsonparts, toml, tomlparts) for n, v in vars(m).items()\n"
        "           if isinstance(v, re.Pattern) and not n.startswith('__')]\n"
        "print(json.dumps(waiting))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []
