"""`.env` files edited line by line.

python-dotenv's parser hands back each binding with its exact original text (multi-line quoted
values, `export` prefixes, comments and malformed lines included), so the file is rebuilt from those
pieces and only the owned bindings' text changes.
"""

from __future__ import annotations

import io
import re
from functools import cache
from types import ModuleType
from typing import Any

from agentcfg.edit.common import REMOVE, Assignment, KeyPath, Verbatim, matched, plain

_PREFIX = re.compile(r"^(\s*(?:export\s+)?[^=\s]+\s*=[ \t]*)", re.S)
_EXPORT = re.compile(r"\s*(?:export\s+)?")
_SAFE = re.compile(r"^[A-Za-z0-9_./:@+,~-]*$")


@cache
def _parser() -> ModuleType:
    """python-dotenv's parser, loaded without running `dotenv/__init__`.

    The package's __init__ imports its loader (logging, tempfile, shutil, bz2, lzma...), which
    costs a switch more than the parsing itself; the parser module needs only `re` and `codecs`.
    """
    import importlib.util
    import os

    spec = importlib.util.find_spec("dotenv")  # finds the package without importing it
    assert spec and spec.submodule_search_locations
    location = os.path.join(spec.submodule_search_locations[0], "parser.py")
    parser_spec = importlib.util.spec_from_file_location("dotenv.parser", location)
    assert parser_spec and parser_spec.loader
    module = importlib.util.module_from_spec(parser_spec)
    parser_spec.loader.exec_module(module)
    return module


def _bindings(text: str) -> list[Any]:
    bindings = list(_parser().parse_stream(io.StringIO(text)))
    assert "".join(b.original.string for b in bindings) == text
    return bindings


def loads(text: str) -> dict[str, Any]:
    """KEY -> value, the last binding winning (as the agents' dotenv loaders do)."""
    return {b.key: b.value for b in _bindings(text) if b.key and not b.error}


def _quote(value: str | Verbatim, like: str) -> str:
    """Quote a value the way the existing line did, or not at all when nothing needs it."""
    if isinstance(value, Verbatim):
        return value.text
    if like == "'" and "'" not in value and "\n" not in value:
        return f"'{value}'"
    if not like and _SAFE.match(value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _closing_quote(rest: str) -> int:
    """Index of the quote that closes the value opened by rest[0] (backslash escapes skipped)."""
    i = 1
    while i < len(rest):
        if rest[i] == "\\":
            i += 2
        elif rest[i] == rest[0]:
            return i
        else:
            i += 1
    return len(rest) - 1


_LEADING_BLANKS = re.compile(r"(?:[ \t]*\r?\n)*")


def _blank_lines_before(original: str) -> str:
    """python-dotenv counts the blank lines above a binding as part of it: they are not ours."""
    return matched(_LEADING_BLANKS, original).group(0)


def _value_span(original: str) -> tuple[int, int] | None:
    """Where the value is in one binding's text (blank lines above it included): quotes kept,
    the `export` prefix, spacing and a trailing comment left out. None for a bare `KEY` line."""
    blanks = len(_blank_lines_before(original))
    prefix = _PREFIX.match(original[blanks:])
    if prefix is None:
        return None
    start = blanks + prefix.end()
    end = len(original) - (1 if original.endswith("\n") else 0)
    end -= 1 if original[:end].endswith("\r") else 0
    rest = original[start:end]
    if rest[:1] in ("'", '"'):
        return start, start + _closing_quote(rest) + 1
    comment = re.search(r"\s+#", rest)
    return start, start + (comment.start() if comment else len(rest.rstrip(" \t")))


def raw(text: str, keypath: KeyPath) -> str | None:
    mine = [b for b in _bindings(text) if b.key == keypath[0] and not b.error] if len(keypath) == 1 else []
    if not mine:
        return None
    span = _value_span(mine[-1].original.string)
    return None if span is None else mine[-1].original.string[span[0] : span[1]]


def _rewrite(original: str, key: str, value: str | Verbatim) -> str:
    """Replace the value in one binding's original text, keeping `export`, spacing and a comment."""
    blanks = _blank_lines_before(original)
    original = original[len(blanks) :]
    newline = "\r\n" if original.endswith("\r\n") else "\n" if original.endswith("\n") else ""
    prefix = _PREFIX.match(original)
    if prefix is None:  # a bare `KEY` line
        export = matched(_EXPORT, original).group(0)
        return f"{blanks}{export}{key}={_quote(value, '')}{newline}"
    rest = original[prefix.end() :]
    rest = rest[: len(rest) - len(newline)]
    quote = rest[:1] if rest[:1] in ("'", '"') else ""
    if quote:
        tail = rest[_closing_quote(rest) + 1 :]
    else:
        comment = re.search(r"\s+#", rest)
        tail = rest[comment.start() :] if comment else ""
    return blanks + prefix.group(1) + _quote(value, quote) + tail + newline


def apply(text: str, assignments: list[Assignment], newline: str = "\n") -> str:
    bindings = _bindings(text)
    pieces = [b.original.string for b in bindings]
    for (key, *_), value in assignments:
        mine = [i for i, b in enumerate(bindings) if b.key == key and not b.error]
        if value is REMOVE:
            for i in mine:
                pieces[i] = _blank_lines_before(pieces[i])
        elif mine:
            last = mine[-1]
            if bindings[last].value != plain(value):
                pieces[last] = _rewrite(bindings[last].original.string, key, value)
        else:
            if pieces and not "".join(pieces).endswith("\n") and "".join(pieces):
                pieces.append(newline)
            pieces.append(f"{key}={_quote(value, '')}{newline}")
    return "".join(pieces)
