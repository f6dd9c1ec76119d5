"""TOML: read with the standard library, edited by splicing text into the original.

A scanner records where every table header, `key = value` statement and inline-table member
starts and ends (one pass, linear in the file). An edit then replaces, inserts or deletes only the
bytes of the keys agentcfg owns, in whichever layout the user wrote them: `[a.b]` headers, super
tables, dotted keys (`a.b.c = 1`), inline tables, arrays of tables elsewhere. New top-level keys go
before the first table header, a new table after the last table of its family with a blank line on
either side, new lines with the file's newline and indentation. The scanner trusts its input: the
text has already been read by tomllib (edit.apply does that), which reports malformed files.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import sys
from dataclasses import field
from typing import Any, Literal, overload

from agentcfg.edit.common import REMOVE, Assignment, EditError, KeyPath, Verbatim, WrongTypeError, matched
from agentcfg.lazyclass import dataclass
from agentcfg.patterns import lazy

# tomli is the stdlib's tomllib, but its wheels are compiled (mypyc): twice as fast to read a file,
# and quicker to import. Without a wheel for this platform, the stdlib's copy does the same work.
try:
    import tomli as tomllib
except ImportError:  # pragma: no cover
    import tomllib  # type: ignore[no-redef, import-not-found]  # checked as 3.10, which has no tomllib

_WHERE = lazy(r"\s*\(at line (\d+), column (\d+)\)$")


def loads(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except RecursionError:  # tomli's own limit on nesting (400 levels), raised as RecursionError
        raise EditError("arrays or inline tables are nested too deeply (tomli reads at most 400 levels)") from None
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        where = _WHERE.search(message)
        if where:
            raise EditError(message[: where.start()], int(where.group(1)), int(where.group(2))) from None
        if message.endswith("(at end of document)"):
            raise EditError(message[: -len(" (at end of document)")], text.count("\n") + 1) from None
        raise EditError(message) from None


def loads_keeping(text: str, keep: frozenset[str]) -> tuple[dict[str, Any], int]:
    """loads(text), exactly as strict, but of a big text only the top-level statements' keys and those in
    `keep` are built (agentcfg.edit.tomlparts): a fraction of the memory. With the number of characters read into it."""
    from agentcfg.edit import tomlparts  # lazy: only a big file needs it

    return tomlparts.read(text, keep, loads)


def forget() -> None:
    """Let go of what big files' readings remember (agentcfg.edit.forget)."""
    if (parts := sys.modules.get("agentcfg.edit.tomlparts")) is not None:
        parts._ACCEPTED.clear()


# --- scanning --------------------------------------------------------------------------------------

_WS = lazy(r"[ \t]*")
_BARE = lazy(r"[A-Za-z0-9_-]+")
_BASIC = lazy(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL = lazy(r"'[^'\n]*'")
_ML_BASIC = lazy(r'"""(?:[^"\\]|\\.|""?(?!"))*"""(?:""?)?', re.S)
_ML_LITERAL = lazy(r"'''(?:[^']|''?(?!'))*'''(?:''?)?", re.S)
_SCALAR = lazy(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})?|[A-Za-z0-9_+\-.:]+")
_GAP = lazy(r"(?:[ \t\r\n]+|#[^\n]*)*")  # inside arrays (and lenient inline tables)
_TAIL = lazy(r"[ \t]*(?:#[^\n]*)?(?:\r?\n|\Z)")  # the rest of a statement's line
_EMPTY_LINE = lazy(r"[ \t]*(?:#[^\n]*)?\r?\n")
# The common lines in one match each (most of a big file): a header or `key = scalar` whose keys have
# no escapes. Anything else (arrays, inline tables, multi-line strings, escapes) takes the full path.
_PART = r"""(?:[A-Za-z0-9_-]+|"[^"\\\n]*"|'[^'\n]*')"""
_KEYS = rf"{_PART}(?:[ \t]*\.[ \t]*{_PART})*"
_FAST_HEADER = lazy(rf"[ \t]*\[[ \t]*({_KEYS})[ \t]*\][ \t]*(?:#[^\n]*)?(?:\r?\n|\Z)")
_FAST_ENTRY = lazy(
    rf"""[ \t]*({_KEYS})[ \t]*=[ \t]*("[^"\\\n]*"|'[^'\n]*'|[A-Za-z0-9_+\-.:]+)[ \t]*(?:#[^\n]*)?(?:\r?\n|\Z)"""
)
_PARTS = lazy(r"""([A-Za-z0-9_-]+)|"([^"\\\n]*)"|'([^'\n]*)'""")
_LINE_END = r"[ \t]*(?:#[^\n]*)?(?:\r?\n|\Z)"
_SKIP_LINE = (
    rf"""[ \t]*(?:#[^\n]*)?\r?\n|[ \t]*{_KEYS}[ \t]*=[ \t]*(?:"[^"\\\n]*"|'[^'\n]*'|[A-Za-z0-9_+\-.:]+){_LINE_END}"""
)


@functools.lru_cache(maxsize=16)
def _skipper(roots: frozenset[str]) -> re.Pattern[str]:
    """Up to 1,000 lines of someone else's tables in one match: blank and comment lines, `key = scalar`
    lines and `[header]` lines whose first key is bare and not one of `roots` (a big file is mostly these:
    thousands of `[projects."..."]` tables). Bounded, so that the regex engine keeps few states."""
    bare = "|".join(re.escape(r) for r in sorted(roots) if _BARE.fullmatch(r))
    others = rf"(?!(?:{bare})(?![A-Za-z0-9_-]))" if bare else ""
    header = rf"[ \t]*\[[ \t]*{others}[A-Za-z0-9_-]+(?:[ \t]*\.[ \t]*{_PART})*[ \t]*\]{_LINE_END}"
    return re.compile(rf"(?:{_SKIP_LINE}|{header}){{0,1000}}")


def _parts(keys: str) -> KeyPath:
    if _BARE.fullmatch(keys):
        return (keys,)
    return tuple(a or b or c for a, b, c in _PARTS.findall(keys))


@dataclass
class Value:
    """A TOML value and where its text is."""

    start: int
    end: int
    kind: str  # "inline", "array" or "scalar" (strings, numbers, dates, booleans)
    members: list[Entry] = field(default_factory=list)  # an inline table's `key = value` members


@dataclass
class Entry:
    """A `key = value` statement or inline-table member and where its text is."""

    keys: KeyPath  # the (dotted) key, relative to its table
    start: int  # a statement: its line start; an inline member: its key
    value: Value
    end: int  # a statement: past its newline; an inline member: value.end


@dataclass
class Section:
    """A table (or the top level) and its statements."""

    # () for the top level, before the first header. Of a table not under the keys asked about (see
    # Layout) only the first key is kept, and none of its statements: enough to know it is not ours.
    path: KeyPath
    array: bool  # a `[[header]]`
    start: int  # the header line's start
    body: int  # past the header line
    entries: list[Entry] = field(default_factory=list)

    def content_end(self) -> int:
        """Where the section's own statements end (trailing comments and blank lines are not in it)."""
        return self.entries[-1].end if self.entries else self.body


class _Scanner:
    def __init__(self, text: str, roots: set[str]) -> None:
        self.text = text
        self.roots = roots

    def ws(self, pos: int) -> int:
        return matched(_WS, self.text, pos).end()

    def key(self, pos: int) -> tuple[KeyPath, int]:
        keys = []
        text = self.text
        while True:
            pos = self.ws(pos)
            ch = text[pos]
            if ch == '"':
                m = matched(_BASIC, text, pos)
                raw = m.group()
                keys.append(raw[1:-1] if "\\" not in raw else tomllib.loads(f"k = {raw}")["k"])
            elif ch == "'":
                m = matched(_LITERAL, text, pos)
                keys.append(m.group()[1:-1])
            else:
                m = matched(_BARE, text, pos)
                keys.append(m.group())
            pos = self.ws(m.end())
            if text.startswith(".", pos):
                pos += 1
                continue
            return tuple(keys), pos

    def value(self, pos: int) -> Value:
        text = self.text
        ch = text[pos]
        if ch == "[":
            node = Value(pos, -1, "array")
            pos += 1
            while True:
                pos = matched(_GAP, text, pos).end()
                if text[pos] == "]":
                    node.end = pos + 1
                    return node
                pos = matched(_GAP, text, self.value(pos).end).end()
                if text[pos] == ",":
                    pos += 1
        if ch == "{":
            node = Value(pos, -1, "inline")
            pos += 1
            while True:
                pos = matched(_GAP, text, pos).end()
                if text[pos] == "}":
                    node.end = pos + 1
                    return node
                start = pos
                keys, pos = self.key(pos)
                value = self.value(self.ws(pos + 1))  # past the "="
                node.members.append(Entry(keys, start, value, value.end))
                pos = matched(_GAP, text, value.end).end()
                if text[pos] == ",":
                    pos += 1
        if text.startswith('"""', pos):
            m = matched(_ML_BASIC, text, pos)
        elif text.startswith("'''", pos):
            m = matched(_ML_LITERAL, text, pos)
        elif ch == '"':
            m = matched(_BASIC, text, pos)
        elif ch == "'":
            m = matched(_LITERAL, text, pos)
        else:
            m = matched(_SCALAR, text, pos)
        return Value(pos, m.end(), "scalar")

    def sections(self) -> list[Section]:
        text, n = self.text, len(self.text)
        current = Section((), False, 0, 0)
        found = [current]
        pos = 0
        ours = True  # the top level's statements are kept (any of them may be one asked about)
        skip = _skipper(frozenset(self.roots))
        while pos < n:
            if not ours:  # past the lines and headers that are not ours, a thousand at a time
                while (end := matched(skip, text, pos).end()) > pos:
                    pos = end
                if pos >= n:
                    break
            m = _EMPTY_LINE.match(text, pos)
            if m:
                pos = m.end()
                continue
            m = _FAST_ENTRY.match(text, pos)
            if m and m.end() > pos:
                if ours:
                    value = Value(m.start(2), m.end(2), "scalar")
                    current.entries.append(Entry(_parts(m.group(1)), pos, value, m.end()))
                pos = m.end()
                continue
            m = _FAST_HEADER.match(text, pos)
            if m and m.end() > pos:
                first = _BARE.match(m.group(1))
                if first and first.group() not in self.roots:  # someone else's table: its first key will do
                    current = Section((first.group(),), False, pos, m.end())
                else:
                    current = Section(_parts(m.group(1)), False, pos, m.end())
                ours = current.path[0] in self.roots
                found.append(current)
                pos = m.end()
                continue
            start = pos
            pos = self.ws(pos)
            if pos >= n or text[pos] == "#":  # a last line without a newline
                break
            if text[pos] == "[":
                array = text.startswith("[[", pos)
                keys, pos = self.key(pos + (2 if array else 1))
                pos = matched(_TAIL, text, pos + (2 if array else 1)).end()
                current = Section(keys, array, start, pos)
                ours = keys[0] in self.roots
                found.append(current)
                continue
            keys, pos = self.key(pos)
            value = self.value(self.ws(pos + 1))
            pos = matched(_TAIL, text, value.end).end()
            if ours:
                current.entries.append(Entry(keys, start, value, pos))
        return found


# --- what each key path is in the file ---------------------------------------------------------------


@dataclass
class Def:
    """How the file defines one key path."""

    kind: str  # "header", "implicit" (a super table), "aot", "dotted", "value"
    pos: int  # for the line in an error message
    # "header"/"aot": its section; "implicit": the first header under it; "dotted"/"value": the section holding it
    section: Section
    entry: Entry | None = None  # "value": the statement or inline member; "dotted": the last one under it
    inline: Value | None = None  # inside an inline table: that table
    base: KeyPath = ()  # the path of the table the statement or member is written in
    family: int = -1  # "header"/"implicit"/"aot": index of the last section at or under this path

    @property
    def statement(self) -> Entry:
        """The entry of a "value" or "dotted" definition, which always has one."""
        assert self.entry is not None, self.kind
        return self.entry


class Layout:
    """The scanned file, indexed by full key path (only the paths under `roots`, the first keys asked about)."""

    def __init__(self, text: str, roots: set[str]) -> None:
        self.text = text
        self.sections = _Scanner(text, roots).sections()
        self.defs: dict[KeyPath, Def] = {}
        self.holders: dict[int, tuple[KeyPath, Def]] = {}  # id(inline table) -> the key holding it
        for index, section in enumerate(self.sections):
            if not section.path:  # the top level's keys may start with any name
                for entry in section.entries:
                    if entry.keys[0] in roots:
                        self._entry((), entry, section, None)
            elif section.path[0] in roots:
                self._header(index, section)
                for entry in section.entries:
                    self._entry(section.path, entry, section, None)

    def _header(self, index: int, section: Section) -> None:
        path = section.path
        for depth in range(1, len(path)):
            known = self.defs.setdefault(path[:depth], Def("implicit", section.start, section))
            known.family = index
        here = self.defs.get(path)
        if here is None or here.kind == "implicit":
            self.defs[path] = here = Def("aot" if section.array else "header", section.start, section)
        here.family = index

    def _entry(self, base: KeyPath, entry: Entry, section: Section, inline: Value | None) -> None:
        path = base + entry.keys
        for depth in range(len(base) + 1, len(path)):
            known = self.defs.setdefault(path[:depth], Def("dotted", entry.start, section, inline=inline, base=base))
            known.entry = entry
        known = self.defs[path] = Def("value", entry.start, section, entry, inline, base)
        if entry.value.kind == "inline":
            self.holders[id(entry.value)] = (path, known)
            for member in entry.value.members:
                self._entry(path, member, section, entry.value)

    def line(self, pos: int) -> int:
        return self.text.count("\n", 0, pos) + 1


_WHAT = {
    "header": "a table",
    "implicit": "a table",
    "dotted": "a table",
    "aot": "an array of tables",
}


def _describe(layout: Layout, known: Def) -> str:
    if known.kind != "value":
        return _WHAT[known.kind]
    value = known.statement.value
    if value.kind == "inline":
        return "an inline table"
    if value.kind == "array":
        return "an array"
    got = tomllib.loads("v = " + layout.text[value.start : value.end])["v"]
    return {str: "a string", bool: "a boolean", int: "an integer", float: "a float"}.get(type(got), "a date or time")


@overload
def _container(layout: Layout, keypath: KeyPath, *, strict: Literal[True]) -> tuple[KeyPath, Def | None]: ...
@overload
def _container(layout: Layout, keypath: KeyPath, *, strict: bool) -> tuple[KeyPath, Def | None] | None: ...
def _container(layout: Layout, keypath: KeyPath, *, strict: bool) -> tuple[KeyPath, Def | None] | None:
    """The deepest table on the way to `keypath` that the file has: (its path, how it is defined; None
    for the top level). A parent that is not a table: WrongTypeError when `strict`, else None."""
    deepest: tuple[KeyPath, Def | None] = ((), None)
    for depth in range(1, len(keypath)):
        prefix = keypath[:depth]
        known = layout.defs.get(prefix)
        if known is None:
            break
        if known.kind == "aot" or (known.kind == "value" and known.statement.value.kind != "inline"):
            if not strict:
                return None
            line = layout.line(known.pos)
            raise WrongTypeError(
                f"{'.'.join(prefix)} at line {line} is {_describe(layout, known)}; "
                f"agentcfg needs a table there to set {'.'.join(keypath)}",
                line,
            )
        deepest = (prefix, known)
    return deepest


# --- rendering -------------------------------------------------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_NEEDS_ESCAPE = lazy(r'["\\\x00-\x1f\x7f]')


def _string(value: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(), f"\\u{ord(m.group()):04X}"), value) + '"'


def _key(keys: KeyPath) -> str:
    return ".".join(k if _BARE.fullmatch(k) else _string(k) for k in keys)


def render(value: Any) -> str:
    """A value as TOML text (dicts as inline tables)."""
    if isinstance(value, Verbatim):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_key((k,))} = {render(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _leaves(keys: KeyPath, value: Any) -> list[tuple[KeyPath, Any]]:
    """A dict as the key/value lines that define it (an empty dict stays `{}`)."""
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in _leaves((*keys, k), v)]
    return [(keys, value)]


# --- editing -----------------------------------------------------------------------------------------


@dataclass
class _NewTable:
    """A table an edit adds, and the lines that go in it."""

    path: KeyPath
    at: int
    indent: str
    lines: list[tuple[KeyPath, Any]] = field(default_factory=list)


class _TableToValue(Exception):
    """A table (of headers or dotted keys) is to become a value: planned as a remove, then a set."""


@dataclass
class _Plan:
    """The splices of a batch of assignments, planned against one scan of the text and applied together."""

    layout: Layout
    newline: str
    cuts: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, replacement)
    # (at, rank) -> new statements (indent, key, value); rank 0, dotted keys next to their siblings, goes first
    lines: dict[tuple[int, int], list[tuple[str, KeyPath, Any]]] = field(default_factory=dict)
    tables: dict[KeyPath, _NewTable] = field(default_factory=dict)
    inline: dict[int, tuple[Value, dict[str, Any]]] = field(default_factory=dict)  # id(table) -> new members
    removed: dict[int, int] = field(default_factory=dict)  # id(section or inline table) -> members cut
    emptied_sections: list[Section] = field(default_factory=list)
    emptied_inline: list[Value] = field(default_factory=list)
    gone: set[int] = field(default_factory=set)  # id() of the sections cut whole

    # -- set

    def set(self, keypath: KeyPath, value: Any) -> None:
        layout = self.layout
        prefix, parent = _container(layout, keypath, strict=True)
        here = layout.defs.get(keypath)
        if here is not None:
            if here.kind != "value":
                raise _TableToValue
            self.cuts.append((here.statement.value.start, here.statement.value.end, render(value)))
            return
        rest = keypath[len(prefix) :]
        if parent is None:
            if len(rest) == 1:
                self._into_section(layout.sections[0], rest, value)
            else:
                self._new_table(None, keypath, value)
        elif parent.kind == "value":  # an inline table
            self._into_inline(parent.statement.value, rest, value)
        elif parent.kind == "dotted" and parent.inline is not None:  # `{ a.b = 1 }`
            self._into_inline(parent.inline, (*prefix[len(parent.base) :], *rest), value)
        elif parent.kind == "dotted":
            self._into_dotted(parent, prefix, rest, value)
        elif parent.kind == "header" and (len(rest) == 1 or any(len(e.keys) > 1 for e in parent.section.entries)):
            # a table whose sub-tables the user wrote as dotted keys gets new ones the same way
            self._into_section(parent.section, rest, value)
        else:
            self._new_table(parent, keypath, value)

    def _indent(self, entry: Entry | None) -> str:
        if entry is None:
            return ""
        return self.layout.text[entry.start : matched(_WS, self.layout.text, entry.start).end()]

    def _into_section(self, section: Section, rest: KeyPath, value: Any) -> None:
        indent = self._indent(section.entries[-1] if section.entries else None)
        at = self._anchor(section)
        for keys, leaf in _leaves(rest, value):
            self.lines.setdefault((at, 1), []).append((indent, keys, leaf))

    def _anchor(self, section: Section) -> int:
        """Where new statements of a section go: after its last one (before comments that follow it)."""
        if section.entries or section.path:
            return section.content_end()
        # the top level has no keys yet: above the first table and the comments attached to it
        if len(self.layout.sections) == 1:
            return len(self.layout.text)
        text, at = self.layout.text, self.layout.sections[1].start
        while at > 0:
            line_start = text.rfind("\n", 0, at - 1) + 1
            if not text[line_start:at].lstrip(" \t").startswith("#"):
                break
            at = line_start
        return at

    def _into_dotted(self, parent: Def, prefix: KeyPath, rest: KeyPath, value: Any) -> None:
        section = parent.section
        base = prefix[len(section.path) :]
        indent = self._indent(parent.statement)
        siblings = [e for e in section.entries if e.keys[: len(base)] == base and len(e.keys) > len(base)]
        if len(rest) > 1 and all(len(e.keys) == len(base) + 1 and e.value.kind == "inline" for e in siblings):
            # `model_providers.x = { ... }` lines: one more line like them
            keys = (*base, rest[0])
            group = next((v for i, k, v in self.lines.get((parent.statement.end, 0), []) if k == keys), None)
            if group is None:
                group = {}
                self.lines.setdefault((parent.statement.end, 0), []).append((indent, keys, group))
            _merge(group, rest[1:], value)
            return
        for keys, leaf in _leaves((*base, *rest), value):
            self.lines.setdefault((parent.statement.end, 0), []).append((indent, keys, leaf))

    def _into_inline(self, node: Value, rest: KeyPath, value: Any) -> None:
        _merge(self.inline.setdefault(id(node), (node, {}))[1], rest, value)

    def _new_table(self, parent: Def | None, keypath: KeyPath, value: Any) -> None:
        table, lines = keypath[:-1], [(keypath[-1:], value)]
        if isinstance(value, dict) and value:  # a table of its own
            table, lines = keypath, [((k,), v) for k, v in value.items()]
        new = self.tables.get(table)
        if new is None:
            layout = self.layout
            at, indent = len(layout.text), ""
            if parent is not None and parent.family >= 0:  # after the last table of its family
                family = layout.sections[parent.family]
                if parent.family + 1 < len(layout.sections):
                    at = family.content_end()
                indent = self._indent(family.entries[0] if family.entries else None)
            new = self.tables[table] = _NewTable(table, at, indent)
        new.lines += lines

    # -- remove

    def remove(self, keypath: KeyPath) -> None:
        layout = self.layout
        if _container(layout, keypath, strict=False) is None:
            return
        here = layout.defs.get(keypath)
        if here is None:
            return
        if here.kind == "value" and here.inline is not None:
            self._cut_member(here.inline, here.statement)
        elif here.kind == "value":
            self._cut_statement(here.section, here.statement)
        elif here.kind == "dotted" and here.inline is not None:
            for member in list(here.inline.members):
                if (*here.base, *member.keys)[: len(keypath)] == keypath:
                    self._cut_member(here.inline, member)
        elif here.kind == "dotted":
            for entry in here.section.entries:
                if (*here.section.path, *entry.keys)[: len(keypath)] == keypath:
                    self._cut_statement(here.section, entry)
        else:  # a table of headers: it and every table under it
            for section in layout.sections:
                if section.path[: len(keypath)] == keypath:
                    self._cut_section(section)

    def _count(self, holder: object, total: int) -> bool:
        """Count one more member cut from `holder`; whether that was its last."""
        self.removed[id(holder)] = self.removed.get(id(holder), 0) + 1
        return self.removed[id(holder)] == total

    def _cut_statement(self, section: Section, entry: Entry) -> None:
        text = self.layout.text
        start, end = entry.start, entry.end
        if end == len(text) and not text.endswith("\n") and start > 0:  # the last line had no newline
            start -= 2 if text.endswith("\r\n", 0, start) else 1
        self.cuts.append((start, end, ""))
        if self._count(section, len(section.entries)):
            self.emptied_sections.append(section)

    def _cut_member(self, node: Value, member: Entry) -> None:
        members = node.members
        i = members.index(member)
        if self._count(node, len(members)):
            self.emptied_inline.append(node)
        elif i + 1 < len(members):
            self.cuts.append((member.start, members[i + 1].start, ""))
        else:
            self.cuts.append((members[i - 1].value.end, member.end, ""))

    def _cut_section(self, section: Section) -> None:
        text = self.layout.text
        start, end = section.start, section.content_end()
        if text.endswith("\n\n", 0, start) or text.endswith("\n\r\n", 0, start):
            start -= 2 if text.endswith("\r\n", 0, start) else 1  # the blank line above it goes with it
        self.cuts.append((start, end, ""))
        self.gone.add(id(section))

    def _prune(self) -> None:
        """A table emptied by agentcfg's removals goes too, unless something is still in it (a comment, a
        new key, a sub-table that needs its header)."""
        text, sections = self.layout.text, self.layout.sections
        added = {at for at, _ in self.lines}
        for section in sorted(self.emptied_sections, key=lambda s: -s.start):  # sub-tables first
            if not section.path:  # the top level: the blank line that set its keys off from the first table
                end = section.content_end()
                if len(sections) > 1 and text.startswith(("\n", "\r\n"), end) and end not in added:
                    self.cuts.append((end, end + (2 if text.startswith("\r", end) else 1), ""))
                continue
            index = sections.index(section)
            after = sections[index + 1].start if index + 1 < len(sections) else len(text)
            gaps = [(section.body, section.entries[0].start)]
            gaps += [(a.end, b.start) for a, b in itertools.pairwise(section.entries)]
            gaps.append((section.content_end(), after))
            deeper = any(
                s.path[: len(section.path)] == section.path and id(s) not in self.gone for s in sections[index + 1 :]
            )
            if any(text[a:b].strip() for a, b in gaps[:-1]) or deeper or section.content_end() in added:
                continue
            self._cut_section(section)
        work = list(self.emptied_inline)
        while work:
            node = work.pop()
            refill = self.inline.get(id(node))
            if refill:  # emptied and refilled: the new members replace the old
                self.cuts.append((node.start + 1, node.end - 1, " " + _members(refill[1]) + " "))
                del self.inline[id(node)]
                continue
            path, holder = self.layout.holders[id(node)]
            if len(path) == 1:  # a top-level `key = {}` stays
                self.cuts.append((node.start + 1, node.end - 1, ""))
            elif holder.inline is not None:
                before = len(self.emptied_inline)
                self._cut_member(holder.inline, holder.statement)
                work += self.emptied_inline[before:]
            else:
                self._cut_statement(holder.section, holder.statement)
                if self.emptied_sections and self.emptied_sections[-1] is holder.section:
                    self.emptied_sections.pop()  # pragma: no cover - one level of pruning is enough

    # -- writing

    def result(self) -> str:
        self._prune()
        text, nl = self.layout.text, self.newline
        cuts = [(start, end, replacement, 1) for start, end, replacement in self.cuts]  # rank 1: after rank 0
        top = self._anchor(self.layout.sections[0]) if not self.layout.sections[0].entries else -1
        for (at, rank), lines in self.lines.items():
            block = nl.join(f"{indent}{_key(keys)} = {render(value)}" for indent, keys, value in lines) + nl
            if at == len(text) and text and not text.endswith("\n"):
                block = nl + block[: -len(nl)]  # the file had no newline at its end: still none
            elif at == top and len(self.layout.sections) > 1:
                block += nl  # a blank line between the new top-level keys and the first table
            cuts.append((at, at, block, rank))
        for node, members in self.inline.values():
            if node.members:
                end = node.members[-1].value.end
                cuts.append((end, end, ", " + _members(members), 1))
            else:
                cuts.append((node.start + 1, node.end - 1, " " + _members(members) + " ", 1))
        tables = list(self.tables.values())
        for i, new in enumerate(tables):
            first = i == 0 or tables[i - 1].at != new.at
            last = i + 1 == len(tables) or tables[i + 1].at != new.at
            cuts.append((new.at, new.at, self._table_text(new, first, last), 1))
        # stable: insertions at one point keep their planned order (after dotted keys' rank 0)
        cuts.sort(key=lambda c: (c[0], c[1], c[3]))
        pieces, pos = [], 0
        for start, end, replacement, _ in cuts:
            if start < pos and end <= pos:
                continue  # inside a span already cut
            pieces.append(text[pos:start])
            pieces.append(replacement)
            pos = max(pos, end)
        pieces.append(text[pos:])
        return "".join(pieces)

    def _table_text(self, new: _NewTable, first: bool, last: bool) -> str:
        """A new table's text; `first`/`last`: of the new tables inserted at one place."""
        text, nl = self.layout.text, self.newline
        body = [f"[{_key(new.path)}]"]
        for keys, value in new.lines:
            body += [f"{new.indent}{_key(k)} = {render(v)}" for k, v in _leaves(keys, value)]
        block = nl.join(body) + nl
        if not first:
            block = nl + block
        elif new.at and not text.endswith("\n", 0, new.at):
            block = nl + nl + block
        elif new.at and not (text.endswith("\n\n", 0, new.at) or text.endswith("\n\r\n", 0, new.at)):
            block = nl + block  # a blank line after what comes before
        if last and new.at < len(text) and not text.startswith(("\n", "\r\n"), new.at):
            block += nl  # and before the table that follows
        return block


def _members(members: dict[str, Any]) -> str:
    return ", ".join(f"{_key((k,))} = {render(v)}" for k, v in members.items())


def _merge(into: dict[str, Any], keys: KeyPath, value: Any) -> None:
    for key in keys[:-1]:
        into = into.setdefault(key, {})
    into[keys[-1]] = value


def _plan(text: str, assignments: list[Assignment], newline: str) -> str:
    plan = _Plan(Layout(text, {k[0] for k, _ in assignments}), newline)
    for keypath, value in assignments:
        if value is REMOVE:
            plan.remove(keypath)
        else:
            plan.set(keypath, value)
    return plan.result()


def _overlap(assignments: list[Assignment]) -> bool:
    """Two assignments to one key, or to a key and a key under it: their splices would collide."""
    keys = sorted(k for k, _ in assignments)
    return any(b[: len(a)] == a for a, b in itertools.pairwise(keys))


def apply(text: str, assignments: list[Assignment], newline: str = "\n") -> str:
    """One scan for all assignments, the common case; each on its own scan when they overlap or one
    turns a table into a value (it is removed first)."""
    if not _overlap(assignments):
        try:
            return _plan(text, assignments, newline)
        except _TableToValue:
            pass
    for keypath, value in assignments:
        try:
            text = _plan(text, [(keypath, value)], newline)
        except _TableToValue:
            text = _plan(_plan(text, [(keypath, REMOVE)], newline), [(keypath, value)], newline)
    return text


@functools.lru_cache(maxsize=4)
def _layout(text: str, root: str) -> Layout:
    """One scan per text and first key: raw() is asked for each owned key of one file."""
    return Layout(text, {root})


def raw(text: str, keypath: KeyPath) -> str | None:
    """The source text of the value at keypath; None when absent or a table of headers or dotted keys."""
    if not keypath:
        return None
    known = _layout(text, keypath[0]).defs.get(tuple(keypath))
    if known is None or known.kind != "value":
        return None
    return text[known.statement.value.start : known.statement.value.end]
