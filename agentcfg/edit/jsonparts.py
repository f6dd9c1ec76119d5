"""Reading a big JSON file member by member: exactly json.loads' verdict, only the top-level keys asked for built.

json.loads builds the whole document (a 10 MB opencode.json of providers is some 12 times the text in
dicts and strings); a switch reads a few top-level keys. Here the top-level object, and the objects and
arrays that are the values of the keys not asked for, are walked with the C decoder's own pieces
(`scanstring` for keys, `raw_decode` for each value below): each value is built, checked and dropped,
and only the members asked for are kept. An array among those values is walked too, not built (a
permissions.allow list of 10 MB in Claude Code's settings was built whole to be checked, twice the text): a
run of strings, numbers and literals in one regular-expression match (their JSON grammar is regular; what
the expression takes json takes, and the rest is decoded item by item), an array inside it walked the same
way. The walk accepts only what json.loads accepts (the same
scanner on every value, the same whitespace, the grammar of objects and arrays); anything it does not
accept (comments, trailing commas, an error) goes to the full reading, which gives its verdict, its
JSONC reading or its error with a line, as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.decoder import scanstring  # type: ignore[attr-defined]  # the C scanner of json.loads
from typing import Any

from agentcfg.patterns import lazy

_WS = lazy(r"[ \t\n\r]*")  # json's whitespace
_DECODER = json.JSONDecoder()
SMALL = 512_000  # below this, the whole text is read: walking gains little
# Scalars as json.loads reads them, and only such (a subset: NaN, an integer of thousands of digits and the like
# are left to raw_decode, which decides): a string without control characters and with JSON's escapes only, a
# number, a literal; each item followed by its comma.
_SCALAR = (
    r'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"'
    r"|-?(?:0|[1-9][0-9]{0,19})(?:\.[0-9]{1,20})?(?:[eE][-+]?[0-9]{1,5})?(?![0-9.eE])|true|false|null"
)
# At most a hundred items a match: an unbounded repeat keeps a backtracking state per item (14 times a 10 MB
# list's size), and Python 3.10 has no possessive quantifier to drop them.
_ITEMS = lazy(rf"(?:(?:{_SCALAR})[ \t\n\r]*,[ \t\n\r]*){{0,100}}")


class Whole(Exception):
    """Not read member by member: the full reading decides."""


def read(text: str, keep: frozenset[str], loads: Callable[[str], dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """The members of `text`'s top-level object under the keys in `keep`, after checking that json.loads accepts
    the whole text, and how many characters they were built from; anything else (and a small text) is
    `loads(text)`: its value, or what it raises."""
    if len(text) < SMALL:
        return loads(text), len(text)
    try:
        return _read(text.lstrip("\ufeff"), keep)
    except (Whole, ValueError, RecursionError, IndexError):
        return loads(text), len(text)


def _read(text: str, keep: frozenset[str]) -> tuple[dict[str, Any], int]:
    kept: dict[str, Any] = {}
    built = [0]
    pos = _object(text, _WS.match(text).end(), keep, kept, built)  # type: ignore[union-attr]
    if _WS.match(text, pos).end() != len(text):  # type: ignore[union-attr]
        raise Whole
    return kept, built[0]


def _object(
    text: str, pos: int, keep: frozenset[str] | None, kept: dict[str, Any] | None, built: list[int] | None = None
) -> int:
    """Walk the object at `pos`; the members whose key is in `keep` go in `kept` (the last of duplicates, as
    json.loads). `keep` None: a value not kept, whose members are each decoded and dropped. Its end."""
    if text[pos] != "{":
        raise Whole
    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
    if text[pos] == "}":
        return pos + 1
    while True:
        if text[pos] != '"':
            raise Whole
        key, pos = scanstring(text, pos + 1, True)
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos] != ":":
            raise Whole
        pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
        if kept is not None and keep is not None and key in keep:
            start = pos
            kept[key], pos = _DECODER.raw_decode(text, pos)
            if built is not None:
                built[0] += pos - start
        elif kept is not None or text[pos] == "[":  # a top-level member not kept, an array: walked
            pos = _walk(text, pos)
        else:
            pos = _DECODER.raw_decode(text, pos)[1]
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos] == "}":
            return pos + 1
        if text[pos] != ",":
            raise Whole
        pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]


def _walk(text: str, pos: int) -> int:
    """Check the value at `pos` without keeping it: an object or array one member or item at a time."""
    if text[pos] == "{":
        return _object(text, pos, None, None)
    if text[pos] != "[":
        return _DECODER.raw_decode(text, pos)[1]
    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
    if text[pos] == "]":
        return pos + 1
    while True:
        while (end := _ITEMS.match(text, pos).end()) != pos:  # type: ignore[union-attr]  # runs of scalars
            pos = end
        pos = _walk(text, pos) if text[pos] == "[" else _DECODER.raw_decode(text, pos)[1]
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos] == "]":
            return pos + 1
        if text[pos] != ",":
            raise Whole
        pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
