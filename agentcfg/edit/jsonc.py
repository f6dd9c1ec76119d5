"""JSON and JSONC (comments, trailing commas) edited in place.

The parser records where every member starts and ends, so an edit splices new text into the
original: comments, key order, indentation style, trailing commas and non-ASCII text outside the
changed member keep every byte. Pure: text in, text out.

Big files: reading takes the C json module when the text is plain JSON; an edit reads objects only
along the key paths it sets (a value it does not enter is skipped, by the C decoder when it can) and
plans every assignment on that one reading, so its cost grows with the file's size, not with the
number of keys set times the size.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

from agentcfg.edit.common import REMOVE, Assignment, EditError, KeyPath, Verbatim, WrongTypeError, matched, plain
from agentcfg.patterns import lazy

_NONE: Any = ()  # what a node the full parser did not fill holds: nothing, and nothing can be appended to it


@dataclass(slots=True)
class Node:
    """A JSONC value and where its text is. Slotted, and without lists of its own unless the full parser fills
    them: the lazy reader makes one per member of a big object (a `provider` map of 30,000 entries)."""

    kind: str  # "object", "array", "string", "number", "literal"
    start: int
    end: int
    members: list[Member] = _NONE  # the parser gives an object its own list
    items: list[Node] = _NONE  # and an array
    scalar: Any = None

    def value(self) -> Any:
        if self.kind == "object":
            return {m.key: m.node.value() for m in self.members}
        if self.kind == "array":
            return [item.value() for item in self.items]
        return self.scalar

    def member(self, key: str) -> Member | None:
        """The member a JSON reader sees: the last one of that name."""
        found = [m for m in self.members if m.key == key]
        return found[-1] if found else None


@dataclass(slots=True)
class Member:
    """An object's `"key": value` and where its text is."""

    key: str
    key_start: int
    node: Node
    comma: int | None = None  # offset of the comma that follows the member, if any


_LITERALS = {"true": True, "false": False, "null": None}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str, pos: int | None = None) -> EditError:
        return EditError.at(self.text, self.pos if pos is None else pos, message)

    def skip(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated /* comment")
                self.pos = end + 2
            else:
                return

    def document(self) -> Node:
        self.skip()
        node = self.value()
        self.skip()
        if self.pos != len(self.text):
            raise self.fail("unexpected text after the top-level value")
        return node

    def value(self) -> Node:
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of file")
        ch = self.text[self.pos]
        if ch == "{":
            return self.object()
        if ch == "[":
            return self.array()
        if ch == '"':
            start = self.pos
            return Node("string", start, self.string_end(), scalar=self.decode(start))
        return self.scalar()

    def string_end(self) -> int:
        text, i = self.text, self.pos + 1
        while i < len(text):
            ch = text[i]
            if ch == "\\":
                i += 2
            elif ch == '"':
                self.pos = i + 1
                return self.pos
            elif ch == "\n":
                break
            else:
                i += 1
        raise self.fail("unterminated string")

    def decode(self, start: int) -> Any:
        try:
            return json.loads(self.text[start : self.pos])
        except ValueError as exc:
            raise self.fail(f"invalid string ({exc.args[0].split(':')[0]})", start) from None

    def scalar(self) -> Node:
        start, text = self.pos, self.text
        while self.pos < len(text) and (text[self.pos].isalnum() or text[self.pos] in "+-.eE"):
            self.pos += 1
        token = text[start : self.pos]
        if token in _LITERALS:
            return Node("literal", start, self.pos, scalar=_LITERALS[token])
        try:
            return Node("number", start, self.pos, scalar=json.loads(token))
        except ValueError:
            raise self.fail(f"unexpected {token[:20] or text[start]!r}", start) from None

    def object(self) -> Node:
        node = Node("object", self.pos, -1, members=[])
        self.pos += 1
        while True:
            self.skip()
            if self.pos >= len(self.text):
                raise self.fail("unterminated object: missing '}'", node.start)
            if self.text[self.pos] == "}":
                self.pos += 1
                node.end = self.pos
                return node
            if self.text[self.pos] != '"':
                raise self.fail("expected a quoted key or '}'")
            key_start = self.pos
            self.string_end()
            key = self.decode(key_start)
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':' after the key")
            self.pos += 1
            self.skip()
            member = Member(key, key_start, self.value())
            node.members.append(member)
            self.skip()
            if self.text.startswith(",", self.pos):
                member.comma = self.pos
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise self.fail("expected ',' or '}'")

    def array(self) -> Node:
        node = Node("array", self.pos, -1, items=[])
        self.pos += 1
        while True:
            self.skip()
            if self.pos >= len(self.text):
                raise self.fail("unterminated array: missing ']'", node.start)
            if self.text[self.pos] == "]":
                self.pos += 1
                node.end = self.pos
                return node
            node.items.append(self.value())
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("]", self.pos):
                raise self.fail("expected ',' or ']'")


def _blank(text: str) -> bool:
    """Nothing but whitespace (what `not text.strip()` says, without a copy of a big file)."""
    return not text or text.isspace()


def parse(text: str) -> Node:
    """Parse JSON/JSONC; an empty text is an empty object (a file about to be created)."""
    try:
        root = _Parser(text).document() if not _blank(text) else Node("object", 0, 0)
    except RecursionError:
        raise EditError("nested too deeply to read (more than a few hundred levels)") from None
    if root.kind != "object":
        raise EditError.at(text, root.start, "the top-level value is not an object")
    return root


def loads(text: str) -> dict[str, Any]:
    if _blank(text):
        return {}
    try:  # plain JSON, the common case, at the speed of the C decoder
        data = json.loads(text.lstrip("\ufeff"))
    except (ValueError, RecursionError):
        return parse(text).value()  # comments, trailing commas, or an error to report with its line
    if not isinstance(data, dict):
        parse(text)  # raises with the line
    return data


def loads_keeping(text: str, keep: frozenset[str]) -> tuple[dict[str, Any], int]:
    """loads(text), exactly as strict, but of a big text only the top-level members under `keep` are built
    (agentcfg.edit.jsonparts): a fraction of the memory. With the number of characters read into it."""
    from agentcfg.edit import jsonparts  # lazy: only a big file needs it

    return jsonparts.read(text, keep, loads)


# --- reading lazily, for edits ----------------------------------------------------------------------

_STRING = lazy(r'"(?:[^"\\\n]|\\.)*"')
_SCALAR = lazy(r"[A-Za-z0-9+\-.]+")
_GAP = lazy(r"(?:[ \t\r\n\ufeff]+|//[^\n]*|/\*.*?\*/)*", re.S)
# Where a skipped value ends (_Lazy.end). A top-level member's value, or an array, is scanned: its scalars, up
# to the next bracket or slash outside a string, in one match; an object inside it read by json's C decoder
# and dropped (an object built is dropped as soon as it is read); an array inside it scanned the same way.
# So nothing that may be most of the file is built (a provider map, a permissions.allow list of 10 MB were
# built whole, two to four times the text), and the loop runs once per object or array directly inside.
# A hundred strings a match at most: an unbounded repeat keeps a backtracking state per string (14 times a
# 10 MB list), and Python 3.10 has no possessive quantifier to drop them.
_FLAT = lazy(r'[^"/\[\]{}]*(?:"[^"\\\n]*(?:\\.[^"\\\n]*)*"[^"/\[\]{}]*){0,100}')
_COMMENT = lazy(r"//[^\n]*|/\*.*?\*/", re.S)
_SKIPPER = json.JSONDecoder(object_pairs_hook=lambda pairs: None)


def _flat(text: str, pos: int) -> int:
    """Past everything from pos up to the next bracket or slash outside a string (_FLAT, a hundred strings at a
    time)."""
    while (end := matched(_FLAT, text, pos).end()) != pos:
        pos = end
    return pos


class _Lazy:
    """Members of an object read when asked for; values not entered are skipped, not built."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.objects: dict[int, list[Member]] = {}
        self.ends: dict[int, int] = {}

    def gap(self, pos: int) -> int:
        return matched(_GAP, self.text, pos).end()

    def end(self, pos: int, top: bool = False) -> int:
        """Where the (valid) value starting at pos ends. A top-level member's value may be most of the file (a
        provider map): it is scanned; an object below it is read by the C decoder, an array scanned."""
        text = self.text
        ch = text[pos]
        if ch == "{" and not top:
            try:
                return _SKIPPER.raw_decode(text, pos)[1]
            except (ValueError, RecursionError):  # comments or trailing commas inside (JSONC)
                return self.container_end(pos)
        if ch in "{[":
            return self.container_end(pos)
        if ch == '"':
            return matched(_STRING, text, pos).end()
        return matched(_SCALAR, text, pos).end()

    def container_end(self, pos: int) -> int:
        """Where the object or array starting at pos ends (_FLAT's comment says how it is found)."""
        text = self.text
        at = _flat(text, pos + 1)
        while at < len(text):
            ch = text[at]
            if ch in "}]":
                return at + 1
            if ch == "{":
                try:
                    at = _SKIPPER.raw_decode(text, at)[1]
                except (ValueError, RecursionError):  # comments or trailing commas inside (JSONC)
                    at = self.container_end(at)
            elif ch == "[":
                at = self.container_end(at)
            elif ch == "/":  # a comment, or a stray slash
                at = comment.end() if (comment := _COMMENT.match(text, at)) else at + 1
            else:  # a string that does not end
                break
            at = _flat(text, at)
        raise EditError.at(text, pos, "unterminated value")

    def node(self, pos: int, top: bool = False) -> Node:
        kind = {"{": "object", "[": "array", '"': "string"}.get(self.text[pos], "literal")
        return Node(kind, pos, self.end(pos, top))

    def members(self, node: Node) -> list[Member]:
        found = self.objects.get(node.start)
        if found is not None:
            node.end = self.ends[node.start]
            return found
        text, found = self.text, []
        top = node.start == self.gap(0)  # the root's members: one may be most of the file
        pos = self.gap(node.start + 1)
        while text[pos] != "}":
            key_start = pos
            pos = matched(_STRING, text, pos).end()
            key = json.loads(text[key_start:pos])
            value = self.node(self.gap(self.gap(pos) + 1), top)  # past the ":"
            member = Member(key, key_start, value)
            found.append(member)
            pos = self.gap(value.end)
            if text[pos] == ",":
                member.comma = pos
                pos = self.gap(pos + 1)
        node.end = self.ends[node.start] = pos + 1
        self.objects[node.start] = found
        return found

    def member(self, node: Node, key: str) -> Member | None:
        """The member a JSON reader sees: the last one of that name."""
        found = [m for m in self.members(node) if m.key == key]
        return found[-1] if found else None

    def value(self, node: Node) -> Any:
        span = self.text[node.start : node.end]
        try:
            return json.loads(span)
        except (ValueError, RecursionError):
            return parse(span).value()

    def root(self) -> Node:
        """The top-level object; its end is found when its members are read (not by reading it twice)."""
        start = self.gap(0)
        if not self.text.startswith("{", start):
            raise EditError.at(self.text, start, "the top-level value is not an object")
        return Node("object", start, -1)


_KINDS = {"array": "an array", "string": "a string", "literal": "a number, boolean or null"}


def _wrong_type(lazy: _Lazy, member: Member, keypath: KeyPath, depth: int) -> WrongTypeError:
    kind = member.node.kind
    if kind == "literal":
        literal = lazy.text[member.node.start : member.node.end]
        kind = "null" if literal == "null" else "a boolean" if literal in ("true", "false") else "a number"
    else:
        kind = _KINDS[kind]
    line = lazy.text.count("\n", 0, member.key_start) + 1
    return WrongTypeError(
        f"{'.'.join(keypath[: depth + 1])} at line {line} is {kind}; "
        f"agentcfg needs an object there to set {'.'.join(keypath)}",
        line,
    )


@functools.lru_cache(maxsize=4)
def _lazy(text: str) -> _Lazy:
    """One reading per text: raw() is asked for each owned key of one file, values_at() for all of them
    before an edit and after it, and the edit reads the same text."""
    return _Lazy(text)


def raw(text: str, keypath: KeyPath) -> str | None:
    if _blank(text) or not keypath:
        return None
    lazy = _lazy(text)
    node = lazy.root()
    for key in keypath:
        if node.kind != "object":
            return None
        member = lazy.member(node, key)
        if member is None:
            return None
        node = member.node
    return text[node.start : node.end]


def values_at(text: str, keypaths: list[KeyPath]) -> dict[str, Any]:
    """The values at `keypaths` (those there), nested as in the document and read from their own text alone:
    a switch checks the provider it writes without building the 10 MB provider map around it. The text is
    taken to parse (edit.apply checks the whole of it first)."""
    found: dict[str, Any] = {}
    for keypath in keypaths:
        span = raw(text, keypath)
        if span is not None:
            _merge(found, keypath, _decoded(span))
    return found


def _decoded(span: str) -> Any:
    try:
        return json.loads(span)
    except (ValueError, RecursionError):  # comments or trailing commas inside: the JSONC reading
        return parse(span).value()


# --- editing ---------------------------------------------------------------------------------------


def _overlap(assignments: list[Assignment]) -> bool:
    keys = sorted(k for k, _ in assignments)
    return any(b[: len(a)] == a for a, b in itertools.pairwise(keys))


def apply(text: str, assignments: list[Assignment], newline: str = "\n") -> str:
    """Sets planned together on one reading; removals (rare: a key agentcfg no longer writes) one by
    one, as do assignments that overlap (a key and a key under it)."""
    sets = [(k, v) for k, v in assignments if v is not REMOVE]
    if _overlap(assignments):
        for keypath, value in assignments:
            text = _remove(text, keypath) if value is REMOVE else _set(text, [(keypath, value)], newline)
        return text
    if sets:
        text = _set(text, sets, newline)
    for keypath, value in assignments:
        if value is REMOVE:
            text = _remove(text, keypath)
    return text


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, and of the same JSON type (1 is not true, 1 is not 1.0)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _nest(keys: KeyPath, value: Any) -> Any:
    for key in reversed(keys):
        value = {key: value}
    return value


def _merge(into: dict[str, Any], keys: KeyPath, value: Any) -> None:
    for key in keys[:-1]:
        into = into.setdefault(key, {})
    into[keys[-1]] = value


def _set(text: str, assignments: list[Assignment], newline: str) -> str:
    if _blank(text):
        text = "{}" + newline
    lazy = _lazy(text)
    root = lazy.root()
    cuts: list[tuple[int, int, str]] = []
    inserts: dict[int, tuple[Node, dict[str, Any]]] = {}  # object start -> (object, new members)
    nulls: dict[int, tuple[Member, dict[str, Any]]] = {}  # a null on the way -> the object replacing it
    unit = None
    for keypath, value in assignments:
        node = root
        for i, key in enumerate(keypath):
            member = lazy.member(node, key)
            rest = keypath[i + 1 :]
            if member is None:
                _merge(inserts.setdefault(node.start, (node, {}))[1], (key, *rest), value)
                break
            if not rest:
                if not _same(lazy.value(member.node), plain(value)):
                    unit = unit or _indent_unit(text)
                    rendered = _render(value, unit, _line_indent(text, member.key_start), newline)
                    cuts.append((member.node.start, member.node.end, rendered))
                break
            if member.node.kind != "object":
                if text[member.node.start : member.node.end] != "null":
                    raise _wrong_type(lazy, member, keypath, i)
                # null holds nothing to lose: it becomes the object the key needs
                _merge(nulls.setdefault(member.node.start, (member, {}))[1], rest, value)
                break
            node = member.node
    for member, new in nulls.values():
        unit = unit or _indent_unit(text)
        rendered = _render(new, unit, _line_indent(text, member.key_start), newline)
        cuts.append((member.node.start, member.node.end, rendered))
    for node, members in inserts.values():
        unit = unit or _indent_unit(text)
        cuts.append(_insert(lazy, node, members, unit, newline))
    return _spliced(text, cuts)


def _spliced(text: str, cuts: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end) span replaced, joined once: not a copy of a big file per cut."""
    pieces, pos = [], 0
    for start, end, replacement in sorted(cuts):
        pieces += [text[pos:start], replacement]
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def _remove(text: str, keypath: KeyPath) -> str:
    if _blank(text):
        return text
    lazy = _Lazy(text)
    node = lazy.root()
    for key in keypath[:-1]:
        member = lazy.member(node, key)
        if member is None or member.node.kind != "object":
            return text
        node = member.node
    target = lazy.member(node, keypath[-1])
    if target is None:
        return text
    members = lazy.members(node)
    index = members.index(target)
    cuts = []  # (start, end) spans to delete, applied right to left
    if target.comma is not None:
        end = target.comma + 1
    else:
        end = target.node.end
        if index > 0 and (prev_comma := members[index - 1].comma) is not None:
            cuts.append((prev_comma, prev_comma + 1))
    cuts.append(_whole_line(text, target.key_start, end))
    text = _spliced(text, [(start, stop, "") for start, stop in cuts])
    if sum(m.key == target.key for m in members) > 1:  # a JSON reader sees the earlier copy now
        return _remove(text, keypath)
    return text


def _whole_line(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen [start, end) to its whole line (with a trailing // comment) when nothing else is on it."""
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip():
        return start, end
    rest = end
    while rest < len(text) and text[rest] in " \t":
        rest += 1
    if text.startswith("//", rest):
        rest = text.find("\n", rest)
        rest = len(text) if rest < 0 else rest
        if text[rest - 1 : rest] == "\r":
            rest -= 1
    if rest >= len(text):
        return line_start, rest
    if text.startswith("\r\n", rest):
        return line_start, rest + 2
    if text[rest] == "\n":
        return line_start, rest + 1
    return start, end


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    line = text[line_start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


_SAMPLE_LINES = 2000  # enough lines to see the indentation step; a 50 MB file is not read twice for it


def _indent_unit(text: str) -> str:
    """The file's indentation step: a tab, or the smallest run of leading spaces (2 if none)."""
    widths = []
    for line in text.split("\n", _SAMPLE_LINES)[:_SAMPLE_LINES]:
        if line.startswith("\t"):
            return "\t"
        stripped = line.lstrip(" ")
        if stripped.startswith(("*", "/*", "//")):  # inside or of a comment: not the data's indentation
            continue
        if stripped.strip() and len(stripped) < len(line):
            widths.append(len(line) - len(stripped))
    return " " * min(widths) if widths else "  "


def _render(value: Any, unit: str, indent: str, newline: str, *, compact: bool = False) -> str:
    """JSON text for a value, as json.dumps(indent=unit) would lay it out at `indent`; Verbatim as is."""
    if isinstance(value, Verbatim):
        return value.text
    if isinstance(value, dict) and value:
        if compact:
            return (
                "{"
                + ", ".join(_key(k) + ": " + _render(v, unit, indent, newline, compact=True) for k, v in value.items())
                + "}"
            )
        inner = indent + unit
        items = [inner + _key(k) + ": " + _render(v, unit, inner, newline) for k, v in value.items()]
        return "{" + newline + ("," + newline).join(items) + newline + indent + "}"
    if isinstance(value, (list, tuple)) and value:
        if compact:
            return "[" + ", ".join(_render(v, unit, indent, newline, compact=True) for v in value) + "]"
        inner = indent + unit
        items = [inner + _render(v, unit, inner, newline) for v in value]
        return "[" + newline + ("," + newline).join(items) + newline + indent + "]"
    return json.dumps(value if not isinstance(value, tuple) else list(value), ensure_ascii=False)


def _key(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)


def _insert(lazy: _Lazy, obj: Node, new: dict[str, Any], unit: str, newline: str) -> tuple[int, int, str]:
    """The splice that adds members `new` at the end of object `obj`."""
    text = lazy.text
    members = lazy.members(obj)
    obj_indent = _line_indent(text, obj.start)
    if not members:
        child = obj_indent + unit
        lines = [child + _key(k) + ": " + _render(v, unit, child, newline) for k, v in new.items()]
        inner = text[obj.start + 1 : obj.end - 1]
        if not inner.strip():
            inner = newline + obj_indent
        return obj.start + 1, obj.end - 1, newline + ("," + newline).join(lines) + inner

    last = members[-1]
    trailing = last.comma is not None
    anchor = last.comma + 1 if last.comma is not None else last.node.end
    if "\n" not in text[obj.start : last.key_start]:  # a one-line object stays on one line
        items = [_key(k) + ": " + _render(v, unit, "", newline, compact=True) for k, v in new.items()]
        if trailing:
            return anchor, anchor, "".join(f" {item}," for item in items)
        return anchor, anchor, "".join(f", {item}" for item in items)

    indent = _line_indent(text, last.key_start)
    if text[text.rfind("\n", 0, last.key_start) + 1 : last.key_start].strip():
        indent = obj_indent + unit
    lines = [indent + _key(k) + ": " + _render(v, unit, indent, newline) for k, v in new.items()]
    eol = _end_of_line(text, anchor)
    insert = newline + ("," + newline).join(lines) + ("," if trailing else "")
    if trailing:
        return eol, eol, insert
    return anchor, eol, "," + text[anchor:eol] + insert


def _end_of_line(text: str, pos: int) -> int:
    """Where the line of `pos` ends, if only blanks and comments follow it there; else `pos`."""
    i = pos
    while i < len(text):
        if text[i] in " \t":
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            return end - 1 if text[end - 1 : end] == "\r" else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0 or "\n" in text[i:end]:
                return pos
            i = end + 2
        elif text[i] == "\n" or text.startswith("\r\n", i):
            return i
        else:
            return pos
    return i
