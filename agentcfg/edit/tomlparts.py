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

import re
from array import array
from collections.abc import Callable, Iterator
from typing import Any

_PART = r"""(?:[A-Za-z0-9_-]+|"[^"\\\n]*"|'[^'\n]*')"""
# a line that starts with `[`: a header, or the line of a multi-line string or array (see above)
_CANDIDATE = re.compile(r"^[ \t]*\[", re.M)
_HEADER = re.compile(rf"[ \t]*(\[\[?)[ \t]*({_PART}(?:[ \t]*\.[ \t]*{_PART})*)[ \t]*\]")
_KEY = re.compile(r"""([A-Za-z0-9_-]+)|"([^"\\\n]*)"|'([^'\n]*)'""")
BATCH = 256_000  # characters read by tomli at a time (its peak is about 15 times that)
SMALL = 512_000  # below this, tomli reads the whole text: parts would gain little


class Whole(Exception):
    """The text cannot be read in parts: tomli reads all of it."""


def _keys(header: str) -> list[str]:
    return [a or b or c for a, b, c in _KEY.findall(header)]


def _headers(text: str) -> Iterator[tuple[int, list[str], bool]]:
    """(line start, keys, whether `[[...]]`) of each line that starts with `[`."""
    for m in _CANDIDATE.finditer(text):
        header = _HEADER.match(text, m.start())
        if header is None:
            raise Whole  # an escape in a key, or not a header at all: tomli decides
        yield m.start(), _keys(header.group(2)), header.group(1) == "[["


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
    starts = array("q")
    short = set()  # `[a]`, `[[a]]`: every table under `a` is one unit
    for start, keys, _ in _headers(text):
        starts.append(start)
        if len(keys) == 1:
            short.add(keys[0])
    if not starts:
        raise Whole
    top_end = starts[0]
    try:
        top = loads(text[:top_end])
    except Exception:
        raise Whole from None
    kept = keep | top.keys()

    mine: list[str] = [text[:top_end]]  # the top level and the tables of the kept keys: read together
    batch: list[str] = []
    size = 0
    done: set[int] = set()  # hashes of the units read in earlier batches (a collision only costs time)
    current: set[int] = set()
    last: tuple[str, ...] = ()
    for index, (start, keys, _) in enumerate(_headers(text)):
        end = starts[index + 1] if index + 1 < len(starts) else len(text)
        piece = text[start:end]
        if not piece.endswith("\n"):
            piece += "\n"
        if keys[0] in kept:
            mine.append(piece)
            continue
        unit = (keys[0],) if keys[0] in short else (keys[0], keys[1])
        if size >= BATCH and unit != last:  # a unit whose parts are next to each other is not split
            _check(batch, loads)
            done |= current
            batch, size, current = [], 0, set()
        key = hash(unit)
        if key in done:
            raise Whole  # a unit in two batches: its conflicts would go unseen
        current.add(key)
        batch.append(piece)
        size += len(piece)
        last = unit
    _check(batch, loads)
    kept_text = "".join(mine)
    try:
        return loads(kept_text), len(kept_text)
    except Exception:
        raise Whole from None


def _check(batch: list[str], loads: Callable[[str], dict[str, Any]]) -> None:
    if batch:
        try:
            loads("".join(batch))
        except Exception:
            raise Whole from None
