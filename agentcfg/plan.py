"""A plan is every file a command will change, before and after, computed before anything is written.

`--dry-run`, `--json` and the real run share it: the dry run prints it, the real run hands it to
the one writer (apply.py).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import field
from pathlib import Path
from typing import Any

from agentcfg import edit, env
from agentcfg.agents.base import AgentFile, Header, is_credential, looks_like_key
from agentcfg.edit import MISSING, REMOVE, Assignment, KeyPath
from agentcfg.lazyclass import dataclass
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
    import hashlib  # lazy: doctor and status import this module and need no digest

    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _holds_key(value: Any, name: str = "") -> bool:
    """Whether a list or table holds a key: a string agentcfg knows as one, that looks like one, or that a
    credential's name (`apiKey`, `token`) holds."""
    if isinstance(value, dict):
        return any(_holds_key(item, str(key)) for key, item in value.items())
    if isinstance(value, list):
        return any(_holds_key(item, name) for item in value)
    if not isinstance(value, str):
        return False
    return is_secret(value) or looks_like_key(value) or bool(name and is_credential(Header(name, "", value)))


def owned_to_json(owned: tuple[Assignment, ...]) -> list[dict[str, Any]]:
    """What agentcfg set, for the journal; a key's value is kept only as its digest, and so is a whole list or
    table set as one value that holds a key (a user's beside agentcfg's: Copilot CLI's `providers` list)."""
    items: list[dict[str, Any]] = []
    for key, value in owned:
        if value is REMOVE:
            items.append({"key": list(key), "absent": True})
        elif isinstance(value, str) and is_secret(value):
            items.append({"key": list(key), "sha256": digest(value)})
        elif isinstance(value, (list, dict)) and _holds_key(value):
            items.append({"key": list(key), "sha256": digest(_canonical(value)), "json": True})
        else:
            items.append({"key": list(key), "value": value})
    return items


def drifted(
    fmt: str, text: str | None, owned: list[dict[str, Any]], shown: str, stamps: Collection[KeyPath] = ()
) -> list[str]:
    """The owned keys whose value in `text` is no longer what agentcfg wrote. An owned key that is also one of
    the agent's `stamps` (Traits.stamps: it writes a new value itself whenever it runs, as Cline CLI's
    `updatedAt`) is the agent's to change, not an edit."""
    data = edit.load(fmt, text or "", path=shown)  # parsed once, not once per key
    changed = []
    for item in owned:
        if tuple(item["key"]) in stamps:
            continue
        got = edit.lookup(data, tuple(item["key"]))
        if "sha256" in item and item.get("json"):
            same = isinstance(got, (list, dict)) and digest(_canonical(got)) == item["sha256"]
        elif "sha256" in item:
            same = isinstance(got, str) and digest(got) == item["sha256"]
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
