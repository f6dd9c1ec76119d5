"""The shape of a journal entry's manifest.json, checked when it is loaded (pure: data in, data or error out).

Nothing in the state directory is trusted: a manifest that is not JSON, lacks a field, has a field
of the wrong type or an unknown value, or names a backup outside its entry is reported by path, so
no command can fail on it with an internal error (KeyError, TypeError...) or act on half of it.

Format (VERSION 2; entries without "version" are version 1, written before sizes and copies):
  {"version": 2, "status": "pending"|"committed", "kind": "switch"|"rollback"|"mcp", "time": float,
   "undoes": "000003" (rollback only), "label": str, "profile": str, ...other meta, ignored,
   "locations": {"HOME": "/home/u", "CODEX_HOME": ..., ...} (where the agents' files were: env.locations;
                 absent in entries written before it, which are checked against the current environment),
   "files": [{"agent", "path", "target", "format", "backup": "0.bak"|null, "written": "0.after"|null,
              "sha_before", "sha_after", "size_before", "size_after", "mode", "owner": [uid, gid],
              "created_dirs": [...], "owned": [{"key": [...], "value"|"sha256"|"absent": ...}]}]}
sha_before / sha_after are the sha256 of the file's bytes before / after (null: absent), so they
verify the backup and the copy of what was written; version 1 entries are verified by them too.
Every path is absolute and clean (no `.` or `..` part, no doubled slash): the path a rollback writes is
the one checked (agentcfg.managed), never one the file system would resolve to another file.
"""

from __future__ import annotations

import os
from pathlib import PurePath
from typing import Any

from agentcfg.env import AGENT_LOCATIONS
from agentcfg.patterns import lazy

VERSION = 2
STATUSES = ("pending", "committed")
KINDS = ("switch", "rollback", "mcp")  # mcp: `agentcfg mcp` (agentcfg.mcp.ops)
FORMATS = ("toml", "json", "dotenv")
# Every file entry has these (null where they do not apply), in both formats; 2 adds "written",
# "size_before" and "size_after", which readers treat as optional.
REQUIRED = (
    "agent",
    "path",
    "target",
    "format",
    "backup",
    "mode",
    "owner",
    "sha_before",
    "sha_after",
    "created_dirs",
    "owned",
)
_SHA = lazy(r"[0-9a-f]{64}")
_BACKUP = lazy(r"[0-9]{1,4}\.bak")  # a plain name inside the entry: never a path
_WRITTEN = lazy(r"[0-9]{1,4}\.after")
_ENTRY_ID = lazy(r"[0-9]{1,12}")
LOCATIONS = ("HOME", "XDG_CONFIG_HOME", *AGENT_LOCATIONS)  # the variables "locations" may name


class Invalid(ValueError):
    """What is wrong with a manifest, in words for the user (the caller adds the path)."""


def _absolute(path: str) -> bool:
    return os.path.isabs(path) and "\0" not in path


def _path(value: Any, what: str) -> None:
    """An absolute path with nothing the file system would resolve (`..`, `.`, `//`): checked as written."""
    _need(isinstance(value, str) and _absolute(value), f"{what} must be an absolute path")
    _need(os.path.normpath(value) == value, f"{what} must be a clean path (no '.' or '..' part, no '//'): {value!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise Invalid(what)


def _optional(item: dict[str, Any], key: str, check: Any, what: str, where: str) -> None:
    value = item.get(key)
    _need(value is None or check(value), f"{where}: {key!r} must be {what} or null, not {value!r}")


def _file(item: Any, n: int) -> None:
    where = f"files[{n}]"
    _need(isinstance(item, dict), f"{where} must be an object")
    for key in REQUIRED:
        _need(key in item, f"{where}: {key!r} is missing")
    _need(isinstance(item.get("agent"), str) and item["agent"] != "", f"{where}: 'agent' must be a non-empty string")
    for key in ("path", "target"):
        _path(item.get(key), f"{where}: {key!r}")
    _need(item.get("format") in FORMATS, f"{where}: 'format' must be one of {', '.join(FORMATS)}")
    _optional(item, "backup", lambda v: isinstance(v, str) and _BACKUP.fullmatch(v), "a backup name like 0.bak", where)
    _optional(item, "written", lambda v: isinstance(v, str) and _WRITTEN.fullmatch(v), "a name like 0.after", where)
    for key in ("sha_before", "sha_after"):
        _optional(item, key, lambda v: isinstance(v, str) and _SHA.fullmatch(v), "a sha256 in hex", where)
    for key in ("size_before", "size_after"):
        _optional(item, key, lambda v: _is_int(v) and v >= 0, "a size in bytes", where)
    _optional(item, "mode", lambda v: _is_int(v) and 0 <= v <= 0o7777, "a file mode", where)
    _optional(
        item, "owner", lambda v: isinstance(v, list) and len(v) == 2 and all(map(_is_int, v)), "[uid, gid]", where
    )
    _need(item.get("backup") is None or item.get("sha_before") is not None, f"{where}: a backup without 'sha_before'")
    _need(item.get("written") is None or item.get("sha_after") is not None, f"{where}: a copy without 'sha_after'")
    dirs = item.get("created_dirs")
    _need(isinstance(dirs, list), f"{where}: 'created_dirs' must list absolute paths")
    for directory in dirs:
        _path(directory, f"{where}: 'created_dirs'")
        # a directory the switch made for this file: one above it, never elsewhere (a rollback removes it)
        _need(PurePath(directory) in PurePath(item["target"]).parents, f"{where}: {directory!r} is not above the file")
    owned = item.get("owned")
    _need(isinstance(owned, list), f"{where}: 'owned' must be a list")
    for m, key in enumerate(owned):
        here = f"{where}.owned[{m}]"
        _need(isinstance(key, dict), f"{here} must be an object")
        path = key.get("key")
        _need(
            isinstance(path, list) and path != [] and all(isinstance(p, str) for p in path),
            f"{here}: 'key' must be a list of names",
        )
        kinds = [k for k in ("value", "sha256", "absent") if k in key]
        _need(len(kinds) == 1, f"{here}: needs exactly one of 'value', 'sha256', 'absent'")
        _need("sha256" not in key or isinstance(key["sha256"], str), f"{here}: 'sha256' must be a string")
        _need("absent" not in key or key["absent"] is True, f"{here}: 'absent' must be true")


def check(data: Any) -> dict[str, Any]:
    """`data` (a parsed manifest.json) when it has the shape above; else Invalid saying what is wrong."""
    _need(isinstance(data, dict), "is not a JSON object")
    version = data.get("version", 1)
    _need(_is_int(version) and version >= 1, f"'version' must be a whole number, not {version!r}")
    if version > VERSION:
        raise Invalid(f"was written by a newer agentcfg (journal format {version}; this one reads up to {VERSION})")
    _need(data.get("status") in STATUSES, f"'status' must be one of {', '.join(STATUSES)}, not {data.get('status')!r}")
    _need(data.get("kind") in KINDS, f"'kind' must be one of {', '.join(KINDS)}, not {data.get('kind')!r}")
    moment = data.get("time")
    _need((_is_int(moment) or isinstance(moment, float)) and moment >= 0, "'time' must be a number")
    if data["kind"] == "rollback":
        undoes = data.get("undoes")
        _need(isinstance(undoes, str) and bool(_ENTRY_ID.fullmatch(undoes)), "'undoes' must name an entry")
    for key in ("label", "profile"):
        _need(data.get(key) is None or isinstance(data[key], str), f"{key!r} must be a string")
    places = data.get("locations")
    _need(places is None or isinstance(places, dict), "'locations' must be an object")
    for variable, value in (places or {}).items():
        _need(variable in LOCATIONS, f"'locations' names {variable!r}, not one of {', '.join(LOCATIONS)}")
        _path(value, f"'locations': {variable}")
    files = data.get("files")
    _need(isinstance(files, list), "'files' must be a list")
    for n, item in enumerate(files):
        _file(item, n)
    return data
