"""What every format editor shares: key paths, the REMOVE marker, and parse errors with a line."""

from __future__ import annotations

from typing import Any

KeyPath = tuple[str, ...]


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


MISSING: Any = _Marker("MISSING")  # get(): the key is not there
REMOVE: Any = _Marker("REMOVE")  # an assignment that deletes the key

Assignment = tuple[KeyPath, Any]


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
