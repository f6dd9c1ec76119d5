"""Format-preserving editors, pure (text in, text out), one module per format.

Each module offers `loads(text)`, `apply(text, assignments, newline)` and `raw(text, keypath)`. This
package adds what is the same for all of them: the byte-order mark and the file's line endings survive
an edit (new lines get the ending most of the file uses), a file that does not parse becomes a
ParseError naming the file and line, a parent of the wrong type an AgentcfgError, and every edit is
checked after the fact.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import sys
from collections.abc import Collection, Iterator
from types import ModuleType
from typing import Any

from agentcfg.edit.common import MISSING, REMOVE, Assignment, EditError, KeyPath, Verbatim, WrongTypeError, plain
from agentcfg.errors import AgentcfgError, ParseError

__all__ = ["MISSING", "REMOVE", "Assignment", "KeyPath", "Verbatim", "apply", "get", "load", "raw"]

FORMATS = {"toml": "agentcfg.edit.toml", "json": "agentcfg.edit.jsonc", "dotenv": "agentcfg.edit.dotenv"}
_BOM = "\ufeff"


def editor(fmt: str) -> ModuleType:
    """The editor module for a format, imported on first use."""
    return importlib.import_module(FORMATS[fmt])


def _split(text: str) -> tuple[str, str, str, bool]:
    """(BOM, body, the newline new text uses, whether the body was CRLF-only and is now LF).

    A CRLF-only file is edited as LF and converted back; a file with mixed endings is edited as it
    is, new lines taking the ending that most of its lines have."""
    bom = _BOM if text.startswith(_BOM) else ""
    body = text[len(bom) :]
    crlf = body.count("\r\n")
    if not crlf:
        return bom, body, "\n", False
    lf = body.count("\n") - crlf
    if not lf:
        return bom, body.replace("\r\n", "\n"), "\n", True
    return bom, body, "\r\n" if crlf > lf else "\n", False


def _parse_error(fmt: str, exc: EditError, path: str) -> AgentcfgError:
    if isinstance(exc, WrongTypeError):
        where = path + (f":{exc.line}" if exc.line else "")
        return AgentcfgError(
            exc.message,
            where=where or None,
            hint="agentcfg changed nothing. Move or rename that key, or leave this agent out "
            "(switch --agent with the other agents).",
        )
    return ParseError(f"does not parse as {fmt.upper()}: {exc.message}", path=path, line=exc.line, col=exc.col)


# Each text parsed once: a switch reads one file's text in edit.apply (before and after the edit), in the
# agent's `edits`, `foreign_format` and `read` (header_notes, before and after). Keyed by the text itself (the
# same object or an equal one): (the top-level keys built, None for all; what was read; characters it was
# built from). What it returns is shared by every caller: read it, never change it. A text that does not parse
# raises each time (nothing kept). What is kept is bounded: entries go, oldest first, once what they were
# built from passes half the text being read (one big opencode.json's providers at a time, not two).
_MEMO: dict[tuple[str, str], tuple[frozenset[str] | None, Any, int]] = {}
_ENTRIES = 8


@contextlib.contextmanager
def _no_cycle_collector() -> Iterator[None]:
    """While a big file is parsed: its tens of thousands of dicts set off the cycle collector again and again,
    each pass over everything the process holds (a 40 MB file's reading took a third longer, the more the
    bigger). A parse makes trees, never cycles: reference counting frees all of it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def forget() -> None:
    """Let go of every text read (a switch's plan is made: the parsed files are not needed any more)."""
    _MEMO.clear()
    for name in FORMATS.values():
        if (module := sys.modules.get(name)) is not None and hasattr(module, "forget"):
            module.forget()


def _make_room(key: tuple[str, str]) -> None:
    """Before reading key's text: drop what an earlier reading of it built, then the oldest entries while what
    they hold is more than half this text (or a megabyte). A .env counts for nothing: read whole, it is read
    slowly, and small in practice."""
    _MEMO.pop(key, None)
    budget = max(len(key[1]) // 2, 1_000_000)
    while _MEMO and (len(_MEMO) >= _ENTRIES or sum(built for _, _, built in _MEMO.values()) > budget):
        del _MEMO[next(iter(_MEMO))]


def _loads(fmt: str, body: str) -> Any:
    """The whole of `body` parsed."""
    known = _MEMO.get((fmt, body))
    if known is not None and known[0] is None:
        return known[1]
    _make_room((fmt, body))
    module = editor(fmt)
    with _no_cycle_collector():
        data = module.loads(body)
    _MEMO[(fmt, body)] = (None, data, len(body) if hasattr(module, "loads_keeping") else 0)
    return data


def _kept(fmt: str, body: str) -> frozenset[str]:
    known = _MEMO.get((fmt, body))
    return (known[0] or frozenset()) if known else frozenset()


def _load_some(fmt: str, body: str, keep: frozenset[str]) -> Any:
    """What `body` holds under the top-level keys `keep` (and maybe more), checked to parse as a whole as
    strictly as a full reading; of a big file only those keys are built (toml.loads_keeping). Read once for
    all the keys any reader of that text asked for."""
    module = editor(fmt)
    if not hasattr(module, "loads_keeping"):
        return _loads(fmt, body)
    known = _MEMO.get((fmt, body))
    if known is not None and (known[0] is None or keep <= known[0]):
        return known[1]
    keep |= _kept(fmt, body)
    _make_room((fmt, body))
    with _no_cycle_collector():
        data, built = module.loads_keeping(body, keep)
    # built from all of it (a small text is read whole): every key is there, for any later reader
    _MEMO[(fmt, body)] = (None if built >= len(body) else keep, data, built)
    return data


# A text this long, of a format whose editor reads values from their own text (JSON), has its owned keys read
# alone (after the whole is checked): the keys they are under are not built.
_BIG_FOR_PATHS = 512_000


def _owned(fmt: str, body: str, keypaths: list[KeyPath], roots: frozenset[str]) -> Any:
    """What `body` holds at `keypaths` (at least), checked to parse as a whole: of a big JSON text the values
    at those keys alone (a switch that writes one opencode provider does not build the 10 MB provider map it
    sits in, four times the text); else the top-level keys `roots`, as any reader builds them."""
    module = editor(fmt)
    if len(body) < _BIG_FOR_PATHS or not hasattr(module, "values_at"):
        return _load_some(fmt, body, roots)
    _load_some(fmt, body, frozenset())  # the whole text read and checked, nothing kept
    return module.values_at(body, keypaths)


def values(fmt: str, text: str, keypaths: list[KeyPath], *, path: str = "") -> Any:
    """Parse only, for a reader of a few values deep in a big file: the document as a dict in which `lookup`
    finds each of `keypaths` (and maybe more); the text is checked to parse as a whole."""
    try:
        body = _split(text)[1]
        if not body or body.isspace():
            return _loads(fmt, body)
        return _owned(fmt, body, keypaths, frozenset(k[0] for k in keypaths if k))
    except EditError as exc:
        raise _parse_error(fmt, exc, path) from None


def get(fmt: str, text: str, keypath: KeyPath, *, path: str = "") -> Any:
    try:
        body = _split(text)[1]
        return lookup(_load_some(fmt, body, frozenset(keypath[:1])) if keypath else _loads(fmt, body), keypath)
    except EditError as exc:
        raise _parse_error(fmt, exc, path) from None


def load(fmt: str, text: str, *, path: str = "", keep: Collection[str] | None = None) -> Any:
    """Parse only (for reading what an agent points at). Shared with every reader of the same text: never
    change what it returns. `keep`: the top-level keys the caller reads; of a big file only those (and maybe
    others) are built, the rest only checked."""
    try:
        body = _split(text)[1]
        return _loads(fmt, body) if keep is None else _load_some(fmt, body, frozenset(keep))
    except EditError as exc:
        raise _parse_error(fmt, exc, path) from None


def raw(fmt: str, text: str, keypath: KeyPath, *, path: str = "") -> str | None:
    """The exact source text of the value at `keypath` (quotes, escapes, `1_000_000` and all), for a later
    `Verbatim` assignment; None when it is absent or has no text of its own (a table of headers)."""
    body = _split(text)[1]
    try:
        _loads(fmt, body)  # refuses a text that does not parse (a rollback asks for each owned key: parsed once)
        return editor(fmt).raw(body, tuple(keypath))
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
    value = plain(value)
    if value is REMOVE:
        return got is MISSING
    return got is not MISSING and _same(got, value)


def _same(got: Any, value: Any) -> bool:
    """Equal and of the same type all the way down (1 is not true, 1 is not 1.0)."""
    if type(got) is not type(value):
        return isinstance(got, list) and isinstance(value, tuple) and _same(got, list(value))
    if isinstance(got, dict):
        return got.keys() == value.keys() and all(_same(got[k], value[k]) for k in got)
    if isinstance(got, list):
        return len(got) == len(value) and all(_same(a, b) for a, b in zip(got, value, strict=True))
    return got == value or (got != got and value != value)  # nan


def apply(fmt: str, text: str, assignments: list[Assignment], *, path: str = "") -> str:
    """Apply owned-key assignments; values already in place leave the text byte-identical."""
    bom, body, newline, crlf = _split(text)
    module = editor(fmt)
    try:
        # parsing first also refuses to touch a file that does not parse, even if no key changes
        roots = frozenset(k[0] for k, _ in assignments)
        keypaths = [k for k, _ in assignments]
        current = _owned(fmt, body, keypaths, roots) if body and not body.isspace() else {}  # not .strip(): a copy
        todo = [(k, v) for k, v in assignments if not _holds(current, k, v)]
        del current  # not held while the text after is read
        if not todo:
            return text
        with _no_cycle_collector():  # the JSON editor decodes the values it skips
            new = module.apply(body, todo, newline)
        done = _owned(fmt, new, keypaths, roots | _kept(fmt, body))  # its readers will ask for the same keys
    except EditError as exc:
        raise _parse_error(fmt, exc, path) from None
    wrong = [".".join(k) for k, v in assignments if not _holds(done, k, v)]
    if wrong:  # an editor bug must never reach the disk
        raise AssertionError(f"{path}: editing {', '.join(wrong)} did not take")
    return bom + (new.replace("\n", "\r\n") if crlf else new)
