"""What every format editor shares: key paths, the REMOVE marker, and parse errors with a line."""

from __future__ import annotations

import re
from typing import Any

from agentcfg.lazyclass import dataclass

KeyPath = tuple[str, ...]


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


MISSING: Any = _Marker("MISSING")  # get(): the key is not there
REMOVE: Any = _Marker("REMOVE")  # an assignment that deletes the key

Assignment = tuple[KeyPath, Any]


@dataclass(frozen=True)
class Verbatim:
    """An assignment's value given as its exact source text (from `edit.raw`), so that putting a value
    back restores its literal: quoting, `1_000_000`, escapes. `value` is what `text` parses to; the
    check after an edit compares against it."""

    value: Any
    text: str


def matched(pattern: re.Pattern[str], text: str, pos: int = 0) -> re.Match[str]:
    """`pattern.match` where it cannot fail: the pattern matches the empty string, or a parser has accepted
    the text already (the editors scan only what parses)."""
    m = pattern.match(text, pos)
    assert m is not None, (pattern.pattern, pos)  # never the text: it may hold a key
    return m


def plain(value: Any) -> Any:
    """The value an assignment sets, without its Verbatim wrapper."""
    return value.value if isinstance(value, Verbatim) else value


class EditError(ValueError):
    """A file does not parse. Carries the 1-based line and column for the user."""

    def __init__(self, message: str, line: int | None = None, col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col

    @classmethod
    def at(cls, text: str, pos: int, message: str) -> EditError:
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        return cls(message, line, col)


class WrongTypeError(EditError):
    """The file parses, but a parent of an owned key is not a table/object (an array, a string...).

    agentcfg never replaces it: the user's data there would be lost."""
