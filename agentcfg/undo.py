"""Undo one switch in a file that may have changed since: pure, the same for TOML, JSON and .env.

The result is always "the file as it was before the switch, plus every edit made since" — the
agents' own (Codex appends `[projects."/path"]`, qwen-code stamps `$version`) and the user's. Two
ways to get there, tried in this order:

1. A three-way merge of text: agentcfg's change (what it wrote -> the file before) replayed onto the
   file as it is now, line by line, where nobody else touched those lines. The user's bytes come back
   exactly, with agentcfg's blank lines and containers gone with its keys.
2. A structural undo, when later edits touch the same lines (an agent that rewrites its whole file,
   a key added inside agentcfg's table): each owned key gets its original text back (`edit.Verbatim`),
   or is removed; then the containers the switch created that now hold nothing are removed.

Either result must parse to the data we expect (the file now, with each owned key as before and
agentcfg's empty containers gone), or it is not used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentcfg import edit
from agentcfg.edit import MISSING, REMOVE, Assignment, KeyPath
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass

RESTORED, MERGED, REMOVED, KEPT = "restored", "merged", "removed", "kept"


@dataclass(frozen=True)
class Reverted:
    """A file's text after a rollback, and how it was reached."""

    text: str | None  # None: remove the file
    how: str  # RESTORED (byte for byte), MERGED (later edits kept), REMOVED (created, nothing else left), KEPT


def revert(
    fmt: str,
    before: str | None,
    written: str | None,
    current: str,
    owned: Sequence[KeyPath],
    *,
    stamps: Iterable[KeyPath] = (),
    moves: Mapping[KeyPath, KeyPath] | None = None,
    shown: str = "",
) -> Reverted:
    """`current` without the switch that turned `before` into `written`.

    `owned` are the keys the switch set; `stamps` are keys the agent writes into any file it reads
    (a created file holding only those is still agentcfg's to remove); `moves` are keys the agent
    moves on its own when it migrates its format (old path -> new path): an owned key that was absent
    before but whose old form the agent moved away gets the user's value back in its new place.
    `written` may be None (a journal entry older than the copy of what was written, or a file holding
    a key's value): then only the structural undo is possible.
    Raises AgentcfgError when neither way gives the expected data (the caller offers --force)."""
    if current == written:
        return Reverted(before, RESTORED if before is not None else REMOVED)
    base = edit.load(fmt, before or "", path=shown)
    now = edit.load(fmt, current, path=shown)
    created = created_containers(base, owned)
    originals = _originals(base, now, owned, moves)
    expected = _expected(now, originals, created)
    if before is None and _only(expected, stamps):
        return Reverted(None, REMOVED)
    how = KEPT if before is None else MERGED
    if written is not None:
        merged = three_way(written, current, before or "")
        if merged is not None and _same(edit.load(fmt, merged, path=shown), expected):
            return Reverted(merged, how)
    undone = _structural(fmt, before or "", current, originals, created, shown)
    if _same(edit.load(fmt, undone, path=shown), expected):
        return Reverted(undone, how)
    raise AgentcfgError(
        "changed since the switch in a way agentcfg cannot separate from its own edit; nothing was written",
        where=shown,
        hint="Run `agentcfg rollback --force` to restore the file as it was before the switch (losing later edits).",
    )


def created_containers(base: Any, owned: Sequence[KeyPath]) -> list[KeyPath]:
    """The tables/objects above the owned keys that did not exist before the switch, deepest first."""
    found: set[KeyPath] = set()
    for key in owned:
        for depth in range(1, len(key)):
            prefix = tuple(key[:depth])
            if edit.lookup(base, prefix) is MISSING:
                found.add(prefix)
    return sorted(found, key=len, reverse=True)


Originals = dict[KeyPath, tuple[Any, KeyPath]]  # owned key -> (its value before, where its text was)


def _originals(base: Any, now: Any, owned: Sequence[KeyPath], moves: Mapping[KeyPath, KeyPath] | None) -> Originals:
    """Each owned key's value before the switch (MISSING: absent), and where that value's text was:
    its own place, or the old place the agent moved it from since (qwen-code's settings migration)."""
    originals: Originals = {}
    for key in owned:
        value, place = edit.lookup(base, key), key
        for old in (old for old, new in (moves or {}).items() if new == key):
            if value is MISSING and edit.lookup(now, old) is MISSING:
                value, place = edit.lookup(base, old), old
        originals[key] = (value, place)
    return originals


def _expected(now: Any, originals: Originals, created: list[KeyPath]) -> Any:
    """The data the undone file must hold: `now`, owned keys as before, agentcfg's empty containers gone."""
    data = _copy(now)
    for key, (value, _) in originals.items():
        _put(data, key, value)
    for prefix in created:
        if edit.lookup(data, prefix) == {}:
            _put(data, prefix, MISSING)
    return data


def _structural(fmt: str, before: str, current: str, originals: Originals, created: list[KeyPath], shown: str) -> str:
    undo: list[Assignment] = []
    for key, (value, place) in originals.items():
        if value is MISSING:
            undo.append((key, REMOVE))
        else:
            raw = edit.raw(fmt, before, place)
            undo.append((key, value if raw is None else edit.Verbatim(value, raw)))
    text = edit.apply(fmt, current, undo, path=shown)
    for prefix in created:  # deepest first, so a parent emptied by its child's removal goes too
        if edit.get(fmt, text, prefix, path=shown) == {}:
            text = edit.apply(fmt, text, [(prefix, REMOVE)], path=shown)
    return text


# -- the three-way merge of lines ------------------------------------------------------------------


def three_way(base: str, ours: str, theirs: str) -> str | None:
    """`ours` with the change base -> theirs applied, or None when both changed the same lines.

    A change that only touches the edge of the other (an insertion right after a block the other
    deleted) is not a conflict: the result is validated structurally by the caller."""
    b = _lines(base)
    mine, others = _hunks(b, _lines(theirs)), _hunks(b, _lines(ours))
    if any(_clash(m[:2], o[:2]) for m in mine for o in others):  # mine: agentcfg's few hunks
        return None
    out: list[str] = []
    pos = 0
    for i1, i2, lines in sorted(mine + others, key=lambda h: (h[0], h[1])):
        out += b[pos:i1]
        if lines and out and not out[-1].endswith("\n"):  # a last line without its newline, now followed
            out[-1] += "\n"
        out += lines
        pos = i2
    out += b[pos:]
    return "".join(out)


def _clash(a: tuple[int, int], b: tuple[int, int]) -> bool:
    (a1, a2), (b1, b2) = a, b
    if a1 == a2 == b1 == b2:  # two insertions at one place: no order is right for sure
        return True
    if a1 == a2:
        return b1 < a1 < b2
    if b1 == b2:
        return a1 < b1 < a2
    return a1 < b2 and b1 < a2


def _hunks(base: list[str], other: list[str]) -> list[tuple[int, int, list[str]]]:
    """Where `other` differs from `base`: (start, end) in base and the lines in their place.

    The common head and tail are stripped first: an agent's or agentcfg's edit is local, and
    SequenceMatcher on a whole 10 MB file would be the slowest step of a rollback."""
    head = 0
    limit = min(len(base), len(other))
    while head < limit and base[head] == other[head]:
        head += 1
    tail = 0
    while tail < limit - head and base[-1 - tail] == other[-1 - tail]:
        tail += 1
    b, o = base[head : len(base) - tail], other[head : len(other) - tail]
    from difflib import SequenceMatcher  # here: only a rollback merges, and every switch imports this module

    matcher = SequenceMatcher(None, b, o, autojunk=False)
    return [(head + i1, head + i2, o[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _lines(text: str) -> list[str]:
    """Lines with their "\\n" (a CR stays part of its line); not str.splitlines, which also splits at
    U+2028 and form feeds inside strings."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


# -- plain data helpers ----------------------------------------------------------------------------


def _copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_copy(v) for v in data]
    return data


def _put(data: Any, key: KeyPath, value: Any) -> None:
    """Set (or, for MISSING, delete) `key`, creating parents as needed."""
    for part in key[:-1]:
        if not isinstance(data.get(part), dict):
            if value is MISSING:
                return
            data[part] = {}
        data = data[part]
    if value is MISSING:
        data.pop(key[-1], None)
    else:
        data[key[-1]] = _copy(value)


def _only(data: Any, stamps: Iterable[KeyPath]) -> bool:
    """Whether `data` holds nothing but empty containers and the agent's own stamps."""
    rest = _copy(data)
    for key in stamps:
        _put(rest, key, MISSING)
    return _empty(rest)


def _empty(data: Any) -> bool:
    return isinstance(data, dict) and all(_empty(v) for v in data.values())


def _same(a: Any, b: Any) -> bool:
    """Equal as data of the same types (1 is not 1.0 is not true), dict order aside."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b
