"""TOML edited with tomlkit, which keeps comments, key order, blank lines and unknown tables."""

from __future__ import annotations

from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError as TomlParseError
from tomlkit.items import InlineTable, Table

from agentcfg.edit.common import MISSING, REMOVE, Assignment, EditError, KeyPath


def _parse(text: str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except TomlParseError as exc:
        message = str(exc).split(" at line ")[0]
        raise EditError(message, exc.line, exc.col) from None


def loads(text: str) -> dict[str, Any]:
    return _parse(text).unwrap()


def get(text: str, keypath: KeyPath) -> Any:
    node: Any = _parse(text)
    for key in keypath:
        if not isinstance(node, dict) or key not in node:
            return MISSING
        node = node[key]
    return node.unwrap() if hasattr(node, "unwrap") else node


def _same(item: Any, value: Any) -> bool:
    plain = item.unwrap() if hasattr(item, "unwrap") else item
    return type(plain) is type(value) and plain == value


def apply(text: str, assignments: list[Assignment]) -> str:
    doc = _parse(text)
    for keypath, value in assignments:
        container: Any = doc
        for depth, key in enumerate(keypath[:-1]):
            if key not in container or not isinstance(container[key], dict):
                if value is REMOVE:
                    break
                if isinstance(container, InlineTable):
                    container[key] = tomlkit.inline_table()
                else:
                    # `[a.b]` alone, not an empty `[a]` header above it
                    container[key] = tomlkit.table(is_super_table=depth < len(keypath) - 2)
            container = container[key]
        else:
            last = keypath[-1]
            if value is REMOVE:
                if last in container:
                    del container[last]
            elif last not in container or not _same(container[last], value):
                container[last] = value
    return doc.as_string()


def table_is_empty(item: Any) -> bool:
    return isinstance(item, (Table, InlineTable)) and not item
