"""TOML: read with the standard library, edited with tomlkit (which keeps comments, order, unknown tables).

tomlkit is imported only when a value really changes: a switch that finds everything in place
does not pay for it.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from agentcfg.edit.common import REMOVE, Assignment, EditError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_WHERE = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def loads(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        where = _WHERE.search(message)
        if where:
            raise EditError(message[: where.start()], int(where.group(1)), int(where.group(2))) from None
        if message.endswith("(at end of document)"):
            raise EditError(message[: -len(" (at end of document)")], text.count("\n") + 1) from None
        raise EditError(message) from None


def _same(item: Any, value: Any) -> bool:
    plain = item.unwrap() if hasattr(item, "unwrap") else item
    return type(plain) is type(value) and plain == value


def apply(text: str, assignments: list[Assignment]) -> str:
    import tomlkit
    from tomlkit.items import InlineTable

    doc = tomlkit.parse(text)
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
