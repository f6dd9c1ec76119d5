"""JSON and JSONC (comments, trailing commas) edited in place.

The parser records where every member starts and ends, so an edit splices new text into the
original: comments, key order, indentation style, trailing commas and non-ASCII text outside the
changed member keep every byte. Pure: text in, text out. Text uses "\n" newlines (see `edit.apply`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentcfg.edit.common import REMOVE, Assignment, EditError, KeyPath


@dataclass
class Node:
    kind: str  # "object", "array", "string", "number", "literal"
    start: int
    end: int
    members: list[Member] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)
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


@dataclass
class Member:
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
        node = Node("object", self.pos, -1)
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
        node = Node("array", self.pos, -1)
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


def parse(text: str) -> Node:
    """Parse JSON/JSONC; an empty text is an empty object (a file about to be created)."""
    root = _Parser(text).document() if text.strip() else Node("object", 0, 0)
    if root.kind != "object":
        raise EditError.at(text, root.start, "the top-level value is not an object")
    return root


def loads(text: str) -> dict[str, Any]:
    return parse(text).value()


def apply(text: str, assignments: list[Assignment]) -> str:
    for keypath, value in assignments:
        text = _remove(text, keypath) if value is REMOVE else _set(text, keypath, value)
    return text


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, and of the same JSON type (1 is not true, 1 is not 1.0)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _nest(keys: KeyPath, value: Any) -> Any:
    for key in reversed(keys):
        value = {key: value}
    return value


def _set(text: str, keypath: KeyPath, value: Any) -> str:
    if not text.strip():
        text = "{}\n"
    node = parse(text)
    for i, key in enumerate(keypath):
        member = node.member(key)
        rest = keypath[i + 1 :]
        if member is None:
            return _insert(text, node, key, _nest(rest, value))
        if not rest or member.node.kind != "object":
            new = _nest(rest, value)
            if _same(member.node.value(), new):
                return text
            rendered = _dumps(new, text, _line_indent(text, member.key_start))
            return text[: member.node.start] + rendered + text[member.node.end :]
        node = member.node
    return text


def _remove(text: str, keypath: KeyPath) -> str:
    if not text.strip():
        return text
    node = parse(text)
    for key in keypath[:-1]:
        member = node.member(key)
        if member is None or member.node.kind != "object":
            return text
        node = member.node
    target = node.member(keypath[-1])
    if target is None:
        return text
    index = node.members.index(target)
    cuts = []  # (start, end) spans to delete, applied right to left
    if target.comma is not None:
        end = target.comma + 1
    else:
        end = target.node.end
        if index > 0 and node.members[index - 1].comma is not None:
            prev_comma = node.members[index - 1].comma
            cuts.append((prev_comma, prev_comma + 1))
    cuts.append(_whole_line(text, target.key_start, end))
    for start, stop in sorted(cuts, reverse=True):
        text = text[:start] + text[stop:]
    if sum(m.key == target.key for m in node.members) > 1:  # a JSON reader sees the earlier copy now
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
        rest = text.find("\n", rest) if "\n" in text[rest:] else len(text)
    if rest >= len(text):
        return line_start, rest
    if text[rest] == "\n":
        return line_start, rest + 1
    return start, end


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    line = text[line_start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _indent_unit(text: str) -> str:
    """The file's indentation step: a tab, or the smallest run of leading spaces (2 if none)."""
    widths = []
    for line in text.split("\n"):
        if line.startswith("\t"):
            return "\t"
        stripped = line.lstrip(" ")
        if stripped.startswith(("*", "/*", "//")):  # inside or of a comment: not the data's indentation
            continue
        if stripped and len(stripped) < len(line):
            widths.append(len(line) - len(stripped))
    return " " * min(widths) if widths else "  "


def _dumps(value: Any, text: str, indent: str) -> str:
    rendered = json.dumps(value, ensure_ascii=False, indent=_indent_unit(text))
    return rendered.replace("\n", "\n" + indent)


def _insert(text: str, obj: Node, key: str, value: Any) -> str:
    obj_indent = _line_indent(text, obj.start)
    if not obj.members:
        child = obj_indent + _indent_unit(text)
        member = json.dumps(key, ensure_ascii=False) + ": " + _dumps(value, text, child)
        inner = text[obj.start + 1 : obj.end - 1]
        if not inner.strip():
            inner = "\n" + obj_indent
        return text[: obj.start + 1] + "\n" + child + member + inner + text[obj.end - 1 :]

    last = obj.members[-1]
    trailing = last.comma is not None
    anchor = last.comma + 1 if trailing else last.node.end
    if "\n" not in text[obj.start : last.key_start]:  # a one-line object stays on one line
        member = json.dumps(key, ensure_ascii=False) + ": " + json.dumps(value, ensure_ascii=False)
        insert = f" {member}," if trailing else f", {member}"
        return text[:anchor] + insert + text[anchor:]

    indent = _line_indent(text, last.key_start)
    if text[text.rfind("\n", 0, last.key_start) + 1 : last.key_start].strip():
        indent = obj_indent + _indent_unit(text)
    member = json.dumps(key, ensure_ascii=False) + ": " + _dumps(value, text, indent)
    eol = _end_of_line(text, anchor)
    insert = "\n" + indent + member + ("," if trailing else "")
    if trailing:
        return text[:eol] + insert + text[eol:]
    return text[:anchor] + "," + text[anchor:eol] + insert + text[eol:]


def _end_of_line(text: str, pos: int) -> int:
    """Where the line of `pos` ends, if only blanks and comments follow it there; else `pos`."""
    i = pos
    while i < len(text):
        if text[i] in " \t":
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            return len(text) if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0 or "\n" in text[i:end]:
                return pos
            i = end + 2
        elif text[i] == "\n":
            return i
        else:
            return pos
    return i
