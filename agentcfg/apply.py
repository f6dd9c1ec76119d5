"""The only writer of agent files: lock, journal with backups, atomic replace, all-or-nothing, rollback.

A change is applied as one transaction:
  1. under an exclusive lock, an entry appears in the journal (`journal/NNNNNN/`) holding a copy of
     every file it will touch and a manifest marked "pending";
  2. each file is replaced atomically (temp file beside it, fsync, rename);
  3. the manifest is marked "committed".
If a write fails, every file is restored from the entry. If the process is killed, the next command
that takes the lock finds the pending entry and restores every file, so files are always all as
before or all as after. `rollback` is itself a transaction that restores an entry's backups, then
drops both entries; the journal keeps the last MAX_ENTRIES transactions.

State is private: directories 0700, files 0600, since backups copy files that can hold keys.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcfg import env, fsutil, undo
from agentcfg.errors import AgentcfgError
from agentcfg.plan import FileChange, digest, drifted, owned_to_json

MAX_ENTRIES = 20
NEW_FILE_MODE = 0o600  # agent config files have no reason to be readable by others
NEW_DIR_MODE = 0o700


@dataclass
class Entry:
    """One transaction in the journal."""

    directory: Path
    manifest: dict[str, Any]

    @property
    def id(self) -> str:
        return self.directory.name

    @property
    def files(self) -> list[dict[str, Any]]:
        return self.manifest["files"]

    def backup(self, item: dict[str, Any]) -> bytes | None:
        return None if item["backup"] is None else (self.directory / item["backup"]).read_bytes()


def _target(path: Path) -> Path:
    """Where the bytes go: a symlinked config (dotfile managers) stays a link; its target changes."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _rmtree(path: Path) -> None:
    import shutil  # not at the top: it imports bz2, lzma and zlib, which a switch rarely needs

    shutil.rmtree(path, ignore_errors=True)


def _owner(item: dict[str, Any]) -> tuple[int, int] | None:
    """The recorded owner, to give back when root rewrites someone's file (others cannot chown)."""
    return tuple(item["owner"]) if item["owner"] and hasattr(os, "geteuid") and os.geteuid() == 0 else None


def _missing_dirs(directory: Path) -> list[Path]:
    missing = []
    while not directory.exists():
        missing.append(directory)
        directory = directory.parent
    return list(reversed(missing))


def _check_writable(change: FileChange, shown: str) -> None:
    target = _target(change.path)
    if target.exists():
        st = target.stat()
        if not stat.S_ISREG(st.st_mode):
            raise AgentcfgError("is not a regular file", where=shown)
        if not (st.st_mode & stat.S_IWUSR) or not os.access(target, os.W_OK):
            raise AgentcfgError(
                "is read-only, so agentcfg changed nothing",
                where=shown,
                hint=f"Make it writable (chmod u+w {target}) or leave this agent out with --agent.",
            )
    parent = target.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise AgentcfgError(
            f"cannot create files in {parent}, so agentcfg changed nothing",
            where=shown,
            hint="Check that directory's permissions, or leave this agent out with --agent.",
        )


def _owned_edited(item: dict[str, Any], current: str, shown: str) -> bool:
    """Someone changed a key agentcfg owns (or the file no longer parses): only --force may undo that."""
    try:
        return bool(drifted(item["format"], current, item["owned"], shown))
    except AgentcfgError:
        return True


def _revert(entry: Entry, item: dict[str, Any], current: str, shown: str) -> undo.Reverted:
    from agentcfg.agents import AGENTS

    before = entry.backup(item)
    written = entry.written(item) if hasattr(entry, "written") else None
    agent = AGENTS.get(item["agent"])
    return undo.revert(
        item["format"],
        None if before is None else before.decode("utf-8"),
        None if written is None else written.decode("utf-8"),
        current,
        [tuple(owned["key"]) for owned in item["owned"]],
        stamps=agent.STAMPS if agent else (),
        shown=shown,
    )


class Journal:
    def __init__(self, environ: env.Environ) -> None:
        self.environ = environ
        self.state = env.state_dir(environ)
        self.root = self.state / "journal"

    # -- reading ---------------------------------------------------------------------------------

    def _all(self) -> list[Entry]:
        with contextlib.suppress(FileNotFoundError):
            return [e for e in map(self._load, sorted(self.root.iterdir())) if e]
        return []

    def entries(self) -> list[Entry]:
        """Committed switch entries, oldest first."""
        return [e for e in self._all() if e.manifest["status"] == "committed" and e.manifest["kind"] == "switch"]

    def pending(self) -> list[Entry]:
        """Entries a killed run left unfinished: a pending transaction, or a rollback not yet cleaned up."""
        return [e for e in self._all() if e.manifest["status"] == "pending" or e.manifest["kind"] == "rollback"]

    @staticmethod
    def _load(directory: Path) -> Entry | None:
        if directory.name.startswith("."):
            return None
        try:
            manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return Entry(directory, manifest)

    # -- the transaction -------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[list[str]]:
        """Hold the lock; first finish whatever a killed run left. Yields what was recovered."""
        fsutil.private_dir(self.state)
        fsutil.private_dir(self.root)
        with fsutil.exclusive_lock(self.state / "lock"):
            yield self.recover()

    def commit(self, changes: list[FileChange], meta: dict[str, Any]) -> Entry | None:
        """Apply every change or none. Call inside `locked()`."""
        changes = [c for c in changes if c.action != "unchanged"]
        if not changes:
            return None
        for change in changes:
            shown = env.display(change.path, self.environ)
            current = fsutil.read_text(_target(change.path), shown)
            if current != change.before:
                raise AgentcfgError(
                    "changed while agentcfg was planning its edit; nothing was written",
                    where=shown,
                    hint="Run the command again.",
                )
            _check_writable(change, shown)
        entry = self._begin(changes, meta)
        try:
            for change, item in zip(changes, entry.files, strict=True):
                self._write(change, item)
        except BaseException as exc:
            self._restore(entry)
            self._drop(entry)
            if isinstance(exc, OSError):
                raise AgentcfgError(
                    f"could not write it ({exc.strerror or exc}); every file was restored to what it was",
                    where=str(exc.filename or ""),
                ) from None
            raise
        entry.manifest["status"] = "committed"
        self._save(entry)
        self._prune()
        return entry

    def _begin(self, changes: list[FileChange], meta: dict[str, Any]) -> Entry:
        existing = [int(p.name) for p in self.root.iterdir() if p.name.isdigit()]
        number = max(existing, default=0) + 1
        staging = fsutil.private_dir(self.root / f".new-{number:06d}-{os.getpid()}")
        files = []
        for index, change in enumerate(changes):
            target = _target(change.path)
            item: dict[str, Any] = {
                "agent": change.agent,
                "path": str(change.path),
                "target": str(target),
                "format": change.file.format,
                "backup": None,
                "mode": None,
                "owner": None,
                "sha_before": digest(change.before),
                "sha_after": digest(change.after),
                "created_dirs": [str(d) for d in _missing_dirs(target.parent)],
                "owned": owned_to_json(change.owned),
            }
            if change.before is not None:
                st = target.stat()
                item["backup"] = f"{index}.bak"
                item["mode"] = stat.S_IMODE(st.st_mode)
                item["owner"] = [st.st_uid, st.st_gid]
                fsutil.write_private(staging / item["backup"], change.before)
            files.append(item)
        manifest = {"status": "pending", "time": time.time(), "files": files, **meta}
        fsutil.write_private(staging / "manifest.json", json.dumps(manifest, indent=1))
        final = self.root / f"{number:06d}"
        os.replace(staging, final)
        fsutil.fsync_dir(self.root)
        return Entry(final, manifest)

    def _write(self, change: FileChange, item: dict[str, Any]) -> None:
        target = Path(item["target"])
        if change.after is None:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
            return
        for directory in item["created_dirs"]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(directory, NEW_DIR_MODE)
        mode = item["mode"] or NEW_FILE_MODE
        if change.private:
            mode &= ~0o077
        fsutil.atomic_write(target, change.after.encode("utf-8"), mode, _owner(item))

    def _restore(self, entry: Entry) -> None:
        """Put every file of an entry back as it was before the entry's change."""
        for item in entry.files:
            target = Path(item["target"])
            fsutil.remove_stale_temps(target)
            before = entry.backup(item)
            try:
                current: bytes | None = target.read_bytes()
            except FileNotFoundError:
                current = None
            if before is not None:
                if current != before:
                    fsutil.atomic_write(target, before, item["mode"] or NEW_FILE_MODE, _owner(item))
            elif current is not None and digest(current.decode("utf-8", "replace")) == item["sha_after"]:
                target.unlink()
            for directory in reversed(item["created_dirs"]):
                with contextlib.suppress(OSError):
                    os.rmdir(directory)  # only when empty

    def _save(self, entry: Entry) -> None:
        fsutil.write_private(entry.directory / "manifest.json", json.dumps(entry.manifest, indent=1))

    def _drop(self, entry: Entry) -> None:
        """Delete an entry: renamed out of the journal first, so a kill mid-delete leaves no half entry."""
        doomed = entry.directory.with_name(f".drop-{entry.id}-{os.getpid()}")
        try:
            os.replace(entry.directory, doomed)
        except FileNotFoundError:
            return
        _rmtree(doomed)

    def _prune(self) -> None:
        for entry in self.entries()[:-MAX_ENTRIES]:
            self._drop(entry)

    def recover(self) -> list[str]:
        """Finish what a killed run left: restore a pending entry; complete a committed rollback."""
        recovered = []
        with contextlib.suppress(FileNotFoundError):
            for stale in [*self.root.glob(".new-*"), *self.root.glob(".drop-*")]:
                _rmtree(stale)
        for entry in self.pending():
            if entry.manifest["status"] == "pending":
                self._restore(entry)
                recovered.append(f"an interrupted {entry.manifest['kind']} ({entry.manifest.get('label', '')})")
            else:  # a committed rollback whose clean-up was cut short
                self._forget(self._load(self.root / entry.manifest["undoes"]))
            self._drop(entry)
        return recovered

    # -- rollback --------------------------------------------------------------------------------

    def rollback_plan(self, force: bool) -> tuple[Entry, list[FileChange], list[tuple[str, str]]]:
        """The changes that restore the latest switch, and the files whose edits since it are kept.
        Call inside `locked()`.

        A file edited since the switch only outside the keys agentcfg owns (qwen-code stamps
        `$version` into settings.json on its first run) gets those keys restored in place, keeping
        the other edits; a file whose owned keys were edited, or that no longer parses, needs
        --force, which restores the backup byte for byte."""
        from agentcfg.agents.base import AgentFile

        entries = self.entries()
        if not entries:
            raise AgentcfgError("nothing to roll back: the journal is empty", hint="Run `agentcfg status`.")
        entry = entries[-1]
        changes, edited, kept = [], [], []
        for item in entry.files:
            path = Path(item["path"])
            shown = env.display(path, self.environ)
            current = fsutil.read_text(_target(path), shown)
            before = entry.backup(item)
            after = None if before is None else before.decode("utf-8")
            if digest(current) != item["sha_after"] and not force:
                if current is None or _owned_edited(item, current, shown):
                    edited.append(shown)
                else:
                    reverted = _revert(entry, item, current, shown)
                    after = reverted.text
                    kept.append((shown, reverted.how))
            changes.append(FileChange(item["agent"], AgentFile(path, item["format"]), current, after))
        if edited:
            raise AgentcfgError(
                f"edited since agentcfg wrote it, so rolling back would lose those edits: {', '.join(edited)}",
                hint="Run `agentcfg rollback --force` to restore it anyway.",
            )
        return entry, changes, kept

    def rollback(self, entry: Entry, changes: list[FileChange]) -> None:
        """Apply a rollback plan as its own transaction, then drop both entries."""
        done = self.commit(changes, {"kind": "rollback", "undoes": entry.id, "label": f"rollback of {entry.id}"})
        self._forget(entry)
        if done:
            self._drop(done)

    def _forget(self, entry: Entry | None) -> None:
        """Drop an undone entry, and the directories its switch created once they are empty."""
        if entry is None:
            return
        for item in entry.files:
            for directory in reversed(item["created_dirs"]):
                with contextlib.suppress(OSError):
                    os.rmdir(directory)
        self._drop(entry)
