"""Format-preserving editors, pure (text in, text out), one module per format.

Each module offers `get(text, keypath)` and `apply(text, assignments)`. This package adds what is
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
        return editor(fmt).get(_split(text)[1], keypath)
    except EditError as exc:
        raise _parse_error(fmt, exc, path) from None


def load(fmt: str, text: str, *, path: str = "") -> Any:
    """Parse only (for reading what an agent points at)."""
    try:
        return editor(fmt).loads(_split(text)[1])
    except EditError as exc:
        raise _parse_error(fmt, exc, path) from None


def apply(fmt: str, text: str, assignments: list[Assignment], *, path: str = "") -> str:
    """Apply owned-key assignments; unchanged values leave the text byte-identical."""
    bom, body, crlf = _split(text)
    module = editor(fmt)
    try:
        module.loads(body)  # refuse to touch a file that does not parse, even if no key changes
        new = module.apply(body, assignments)
        for keypath, value in assignments:  # an editor bug must never reach the disk
            got = module.get(new, keypath)
            if (value is REMOVE and got is not MISSING) or (value is not REMOVE and got != value):
                raise AssertionError(f"{path}: editing {'.'.join(keypath)} did not take")
    except EditError as exc:
        raise _parse_error(fmt, exc, path) from None
    if new == body:
        return text
    return bom + (new.replace("\n", "\r\n") if crlf else new)
