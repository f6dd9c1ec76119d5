"""Format-preserving editors, pure (text in, text out), one module per format.

Each module offers `loads(text)` and `apply(text, assignments)`. This package adds what is
the same for all of them: the byte-order mark and CRLF line endings survive an edit, a file that does
not parse becomes a ParseError naming the file and line, and every edit is checked after the fact.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from agentcfg.edit.common import MISSING, REMOVE, Assignment, EditError, KeyPath
from agentcfg.errors import ParseError

__all__ = ["MISSING", "REMOVE", "Assignment", "KeyPath", "apply", "get", "load"]

FORMATS = {"toml": "agentcfg.edit.toml", "json": "agentcfg.edit.jsonc", "dotenv": "agentcfg.edit.dotenv"}
_BOM = "\ufeff"


def editor(fmt: str) -> ModuleType:
    """The editor module for a format, imported on first use (tomlkit is slow to import)."""
    return importlib.import_module(FORMATS[fmt])


def _split(text: str) -> tuple[str, str, bool]:
    bom = _BOM if text.startswith(_BOM) else ""
    body = text[len(bom) :]
    crlf = "\r\n" in body and "\n" not in body.replace("\r\n", "")
    return bom, body.replace("\r\n", "\n") if crlf else body, crlf


def _parse_error(fmt: str, exc: EditError, path: str) -> ParseError:
    return ParseError(f"does not parse as {fmt.upper()}: {exc.message}", path=path, line=exc.line, col=exc.col)


def get(fmt: str, text: str, keypath: KeyPath, *, path: str = "") -> Any:
    try:
        return lookup(editor(fmt).loads(_split(text)[1]), keypath)
    except EditError as exc:
        raise _parse_error(fmt, exc, path) from None


def load(fmt: str, text: str, *, path: str = "") -> Any:
    """Parse only (for reading what an agent points at)."""
    try:
        return editor(fmt).loads(_split(text)[1])
    except EditError as exc:
        raise _parse_error(fmt, exc, path) from None


def lookup(data: Any, keypath: KeyPath) -> Any:
    """The value at `keypath` in parsed data, or MISSING."""
    for key in keypath:
        if not isinstance(data, dict) or key not in data:
            return MISSING
        data = data[key]
    return data


def _holds(data: Any, keypath: KeyPath, value: Any) -> bool:
    got = lookup(data, keypath)
    if value is REMOVE:
        return got is MISSING
    return got is not MISSING and type(got) is type(value) and got == value


def apply(fmt: str, text: str, assignments: list[Assignment], *, path: str = "") -> str:
    """Apply owned-key assignments; values already in place leave the text byte-identical."""
    bom, body, crlf = _split(text)
    module = editor(fmt)
    try:
        # parsing first also refuses to touch a file that does not parse, even if no key changes
        current = module.loads(body) if body.strip() else {}
        todo = [(k, v) for k, v in assignments if not _holds(current, k, v)]
        if not todo:
            return text
        new = module.apply(body, todo)
        done = module.loads(new)
    except EditError as exc:
        raise _parse_error(fmt, exc, path) from None
    wrong = [".".join(k) for k, v in assignments if not _holds(done, k, v)]
    if wrong:  # an editor bug must never reach the disk
        raise AssertionError(f"{path}: editing {', '.join(wrong)} did not take")
    return bom + (new.replace("\n", "\r\n") if crlf else new)
