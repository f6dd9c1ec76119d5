"""Reading a big TOML file in parts: exactly tomli's verdict, but only the top-level keys asked for are built.

tomli builds the whole document (a 10 MB config.toml of `[projects."..."]` tables is 67,000 dicts, about
15 times the text at its peak); a switch needs a few top-level keys. The file is cut at its table
headers into parts that cannot conflict with each other, each part is read by tomli on its own (a
megabyte at a time, then dropped), and only the part holding the top-level statements and the tables
of the keys asked for is kept.

Why the verdict is tomli's:
- Syntax. A TOML document is read line by line, and a table header starts afresh (the tables it opens
  are named in full). Every cut is at the start of a line that starts with `[`; if that line is not
  really a header (it is inside a multi-line string or array), the text before the cut ends inside that
  string or array and tomli refuses it. So every part parses only when every cut is a header.
- Conflicts (a table defined twice, a header over a value or an inline or dotted-key table, `[a]` and
  `[[a]]`) are between definitions whose paths share a first key, or, when no header of that first key
  has only one key and the top level does not define it, share the first two. Such a "unit" is read in
  one part, in file order; a unit seen again in a later part sends the whole text to tomli.
- Anything else (a header with an escape in a key, a part tomli refuses) also sends the whole text to
  tomli, which gives the verdict and the error message with its line, as before.
"""

from __future__ import annotations

import functools
import heapq
import re
from array import array
from collections.abc import Callable, Iterator
from typing import Any

from agentcfg.fingerprint import blake2b  # not hashlib's: that loads OpenSSL first (doctor reads, never writes)
from agentcfg.patterns import lazy

_PART = r"""(?:[A-Za-z0-9_-]+|"[^"\\\n]*"|'[^'\n]*')"""
# a line that starts with `[`: a header, or the line of a multi-line string or array (see above)
_CANDIDATE = lazy(r"^[ \t]*\[", re.M)
_HEADER = lazy(rf"[ \t]*(\[\[?)[ \t]*({_PART}(?:[ \t]*\.[ \t]*{_PART})*)[ \t]*\]")
_KEY = lazy(r"""([A-Za-z0-9_-]+)|"([^"\\\n]*)"|'([^'\n]*)'""")
# Whole-text scans start with the newline before a line (the regex engine then looks only at newlines);
# the first line is matched on its own (_lines).
_ESCAPE = r"[ \t]*\[[^\n]*\\"  # a line starting with `[` that has a backslash
_SHORT = rf"[ \t]*\[\[?[ \t]*({_PART})[ \t]*\]"  # `[a]`, `[[a]]`
BATCH = 64_000  # characters read by tomli at a time (its peak is about 15 times that: 1 MB, whatever the file)
SMALL = 512_000  # below this, tomli reads the whole text: parts would gain little


class Whole(Exception):
    """The text cannot be read in parts: tomli reads all of it."""


def _keys(header: str) -> list[str]:
    return [a or b or c for a, b, c in _KEY.findall(header)]


@functools.lru_cache(maxsize=8)
def _kept_headers(kept: frozenset[str]) -> str:
    """The header lines of tables under the kept keys, however the first key is written."""
    forms = []
    for key in sorted(kept):
        if re.fullmatch(r"[A-Za-z0-9_-]+", key):
            forms.append(re.escape(key) + r"(?![A-Za-z0-9_-])")
        if not re.search(r'["\\\x00-\x1f\x7f]', key):
            forms.append(re.escape(f'"{key}"'))
        if not re.search(r"['\n]", key):
            forms.append(re.escape(f"'{key}'"))
    alternatives = "|".join(forms) or "(?!)"
    return rf"[ \t]*\[\[?[ \t]*(?:{alternatives})[ \t]*[.\]]"


def read(text: str, keep: frozenset[str], loads: Callable[[str], dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """The top-level statements' keys and the keys in `keep` of `text`, as `loads` (tomli) reads them, after
    checking the whole text is one tomli accepts, and how many characters of it that was built from. Raises
    what `loads` raises on the whole text when it is not (or, in the rare layouts that cannot be read in
    parts, returns all of it)."""
    if len(text) < SMALL:
        return loads(text), len(text)
    try:
        return _read(text, keep, loads)
    except Whole:
        return loads(text), len(text)


def _read(text: str, keep: frozenset[str], loads: Callable[[str], dict[str, Any]]) -> tuple[dict[str, Any], int]:
    first = _CANDIDATE.search(text)
    if first is None or ("\\" in text and next(_lines(_ESCAPE, text), None)):
        raise Whole  # no table at all, or a key with an escape: the regexes below would not see it
    top = _parse(text[: first.start()], loads)
    kept = keep | frozenset(top)
    short = {_keys(m.group(1))[0] for m in _lines(_SHORT, text)}  # `[a]`, `[[a]]`: every table under `a` is one unit
    mine = [text[: first.start()]]  # the top level and the tables of the kept keys: read together
    spans: list[tuple[int, int]] = []  # the rest, in order, between the kept tables
    pos = first.start()
    for m in _lines(_kept_headers(kept), text):
        start = m.start() + (text[m.start()] == "\n")
        end = _next(text, m.end())
        mine.append(_line(text[start:end]))
        spans.append((pos, start))
        pos = end
    spans.append((pos, len(text)))
    seen = _Seen(short, kept)
    batch: list[str] = []
    size = 0
    for start, end in spans:
        while start < end:
            cut = _cut(text, start + BATCH - size, end, short)
            batch.append(_line(text[start:cut]))
            size += cut - start
            start = cut
            if size >= BATCH:
                seen.check(_units("".join(batch), loads))
                batch, size = [], 0
    if batch:
        seen.check(_units("".join(batch), loads))
    seen.finish()
    kept_text = "".join(mine)
    return _parse(kept_text, loads), len(kept_text)


@functools.lru_cache(maxsize=16)
def _compiled(pattern: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    return re.compile(pattern), re.compile("\n" + pattern)


def _lines(pattern: str, text: str) -> Iterator[re.Match[str]]:
    """The lines that start with `pattern`, in order: the first one, then each after a newline."""
    first, rest = _compiled(pattern)
    if m := first.match(text):
        yield m
    yield from rest.finditer(text)


def _parse(text: str, loads: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    try:
        return loads(text)
    except Exception:
        raise Whole from None


def _line(piece: str) -> str:
    return piece if not piece or piece.endswith("\n") else piece + "\n"


def _next(text: str, pos: int) -> int:
    """The start of the next line that starts with `[` after `pos`'s line, or the end."""
    m = _CANDIDATE.search(text, pos)
    return m.start() if m else len(text)


def _unit(text: str, pos: int, short: set[str]) -> tuple[str, ...] | None:
    header = _HEADER.match(text, pos)
    if header is None:
        return None
    keys = _keys(header.group(2))
    return (keys[0],) if keys[0] in short or len(keys) == 1 else (keys[0], keys[1])


def _cut(text: str, at: int, end: int, short: set[str]) -> int:
    """Where a batch ends: the first line starting with `[` from `at` (but not inside a run of tables of one
    unit when it can be seen), else `end`."""
    if at >= end:
        return end
    cut = _next(text, at)
    for _ in range(1000):  # a long run of one unit (`[[a]]` after `[[a]]`) is cut anyway, then read whole
        if cut >= end:
            return end
        before = text.rfind("\n[", max(at - 4096, 0), cut - 1)
        this, last = _unit(text, cut, short), _unit(text, before + 1, short) if before >= 0 else None
        if this is None or this != last:
            return cut
        cut = _next(text, cut + 1)
    return min(cut, end)


# A batch's units: first key -> the hashes of its second keys, sorted (None: not a table, an array of tables).
# Machine integers, not a set of ints: a set of 67,000 hashes held a third of the text's size, an array a twentieth.
Units = dict[str, "array[int] | None"]
# Batches tomli accepted, by digest: the text after an edit is mostly the text before, cut the same way
# (agentcfg's edits are in the kept tables), so its check reads only what changed.
_ACCEPTED: dict[bytes, Units] = {}
_REMEMBERED = 1024  # batches (some 256 MB of text)


def _units(batch: str, loads: Callable[[str], dict[str, Any]]) -> Units:
    digest = blake2b(batch.encode("utf-8", "surrogatepass"), digest_size=20).digest()
    known = _ACCEPTED.get(digest)
    if known is not None:
        return known
    data = _parse(batch, loads)
    units: Units = {
        first: array("q", sorted(hash(second) for second in value)) if isinstance(value, dict) else None
        for first, value in data.items()
    }
    del data
    if len(_ACCEPTED) >= _REMEMBERED:
        del _ACCEPTED[next(iter(_ACCEPTED))]
    _ACCEPTED[digest] = units
    return units


class _Seen:
    """The units read in earlier batches: one in two batches (its conflicts unseen) sends the text to tomli."""

    def __init__(self, short: set[str], kept: frozenset[str]) -> None:
        self.short, self.kept = short, kept
        self.whole: set[str] = set()  # first keys read as one unit
        # first key -> each batch's sorted hashes of its second keys (a collision costs time: tomli reads it all)
        self.pairs: dict[str, list[array[int]]] = {}

    def check(self, units: Units) -> None:
        for first, seconds in units.items():
            if first in self.kept or first in self.whole:
                raise Whole
            if first in self.short or seconds is None:
                if first in self.pairs:
                    raise Whole
                self.whole.add(first)
                continue
            self.pairs.setdefault(first, []).append(seconds)

    def finish(self) -> None:
        """A second key of one first key in two batches (a table defined twice, or under a value)."""
        for batches in self.pairs.values():
            if len(batches) > 1:
                merged = heapq.merge(*batches)
                last = next(merged)
                for now in merged:
                    if now == last:
                        raise Whole
                    last = now
