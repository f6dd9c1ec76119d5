"""A plan is every file a command will change, before and after, computed before anything is written.

`--dry-run`, `--json` and the real run share it: the dry run prints it, the real run hands it to
the one writer (apply.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcfg import edit, env
from agentcfg.agents.base import AgentFile, looks_like_key
from agentcfg.edit import MISSING, REMOVE, Assignment
from agentcfg.profiles import Profile
from agentcfg.redact import is_secret, mask_text


@dataclass(frozen=True)
class FileChange:
    """One file's text before and after a switch or rollback."""

    agent: str
    file: AgentFile
    before: str | None  # None: the file does not exist
    after: str | None  # None: the file is removed (only a rollback removes files)
    owned: tuple[Assignment, ...] = ()  # what agentcfg set, to tell later whether someone edited it
    private: bool = False  # holds a key (`--store-key-in-files`): written readable by its owner only

    @property
    def path(self) -> Path:
        return self.file.path

    @property
    def action(self) -> str:
        if self.before == self.after:
            return "unchanged"
        if self.before is None:
            return "create"
        return "remove" if self.after is None else "modify"


@dataclass
class Plan:
    """What a switch or rollback would write, and what it leaves alone."""

    profile: Profile | None
    changes: list[FileChange] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # agent -> why it was left alone
    notes: list[str] = field(default_factory=list)

    @property
    def pending(self) -> list[FileChange]:
        return [c for c in self.changes if c.action != "unchanged"]

    @property
    def agents(self) -> list[str]:
        """The agents whose files the plan sets (unchanged ones too: they already point where asked), in order."""
        return list(dict.fromkeys(c.agent for c in self.changes))


def digest(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(value: Any) -> str:
    """A value as one string, for its digest: a string as it is, anything else as sorted compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _holds_key(value: Any) -> bool:
    """A list or table with a key somewhere in it: one agentcfg knows, or a string that looks like one (an
    owned list of an agent's models carries the user's own entries, with whatever keys they hold)."""
    if isinstance(value, dict):
        return any(_holds_key(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_key(item) for item in value)
    return isinstance(value, str) and (is_secret(value) or looks_like_key(value))


def owned_to_json(owned: tuple[Assignment, ...]) -> list[dict[str, Any]]:
    """What agentcfg set, for the journal; a key's value (or a list or table that holds one) is kept only as
    its digest."""
    items: list[dict[str, Any]] = []
    for key, value in owned:
        if value is REMOVE:
            items.append({"key": list(key), "absent": True})
        elif (isinstance(value, str) and is_secret(value)) or (isinstance(value, dict | list) and _holds_key(value)):
            items.append({"key": list(key), "sha256": digest(_canonical(value))})
        else:
            items.append({"key": list(key), "value": value})
    return items


def drifted(fmt: str, text: str | None, owned: list[dict[str, Any]], shown: str) -> list[str]:
    """The owned keys whose value in `text` is no longer what agentcfg wrote."""
    data = edit.load(fmt, text or "", path=shown)  # parsed once, not once per key
    changed = []
    for item in owned:
        got = edit.lookup(data, tuple(item["key"]))
        if "sha256" in item:
            same = got is not MISSING and digest(_canonical(got)) == item["sha256"]
        elif item.get("absent"):
            same = got is MISSING
        else:
            same = got is not MISSING and got == item["value"]
        if not same:
            changed.append(".".join(item["key"]))
    return changed


def unified_diff(change: FileChange, environ: env.Environ) -> str:
    """The change as a unified diff; known keys and secret-shaped values are masked (redact.mask_text).

    The diff is masked as a whole, not line by line: a list such as `"--token",` / `"…"` spans two lines."""
    import difflib

    shown = env.display(change.path, environ)
    before = (change.before or "").splitlines(keepends=True)
    after = (change.after or "").splitlines(keepends=True)
    lines = difflib.unified_diff(
        before,
        after,
        fromfile="/dev/null" if change.before is None else f"a/{shown}",
        tofile="/dev/null" if change.after is None else f"b/{shown}",
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return mask_text("".join(out))
