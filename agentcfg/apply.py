"""The only writer of agent files: lock, self-verifying journal, atomic replace, all-or-nothing, rollback.

A change is applied as one transaction:
  1. under an exclusive lock, each target is checked to hold what was planned on; then an entry
     appears in the journal (`journal/NNNNNN/`, staged and renamed into place, fsynced) holding a
     copy of every file before (`N.bak`) and after (`N.after`), their sha256 and sizes, and a
     manifest marked "pending" (see agentcfg/manifest.py);
  2. each file is replaced atomically (temp file beside it, fsync, re-check that nobody changed the
     target since, rename);
  3. the entry is marked "committed" by renaming its ready-made committed manifest over the pending
     one: a rename needs no free space, so a full disk cannot leave a switch done but unrecorded.
If a write fails, every file written so far is put back. If the process is killed, the next
command that takes the lock finds the pending entry and puts back every file that still holds what
agentcfg wrote; a file changed since by someone else is kept as it is, and its backup is saved under
`state/recovered/` and named (never restored over later work). `rollback` is itself a transaction
that restores an entry's backups, then drops both entries; the journal keeps the last MAX_ENTRIES.

Nothing read back from the journal is trusted (agentcfg.journal reads it: entries, their checks, the
rollback plan). An entry that fails is never acted on and never stops a command that does not need it:
it is named, with `agentcfg rollback --discard N` to set it aside (Journal.discard). A switch checks its
own entry by the same rules before writing anything, so it never records one it could not read back.
State is private: directories 0700, files 0600, since backups copy files that can hold keys.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agentcfg import env, fsutil, managed, manifest
from agentcfg.errors import AgentcfgError
from agentcfg.journal import (
    COMMITTED,
    MANIFEST,
    NEW_DIR_MODE,
    NEW_FILE_MODE,
    Entry,
    JournalReader,
    Unusable,
    check_writable,
    destination,
    encode,
    grouped,
    missing_dirs,
    owner_of,
    rmtree,
    sha256_of,
    target_of,
    utf8_size,
)
from agentcfg.plan import FileChange, owned_to_json

MAX_ENTRIES = 20


class Journal(JournalReader):
    """The journal, read (JournalReader) and written: one transaction at a time, under its lock."""

    # -- the transaction -------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self, recover: bool = True) -> Iterator[list[str]]:
        """Hold the lock; first finish whatever a killed run left (unless not `recover`). Yields notes on what was
        recovered (`warnings()` has those on the entries agentcfg cannot use, once recovery has run)."""
        with contextlib.ExitStack() as stack:
            step = self.state
            try:
                fsutil.private_dir(self.state)
                step = self.root
                fsutil.private_dir(self.root)
                step = self.state / "lock"
                stack.enter_context(fsutil.exclusive_lock(step))
            except OSError as exc:
                raise self._disk_error(exc, "could not set up agentcfg's state, so it changed nothing", step) from None
            yield self.recover() if recover else []

    def commit(self, changes: list[FileChange], meta: dict[str, Any]) -> Entry | None:
        """Apply every change or none. Call inside `locked()`."""
        changes = [c for c in changes if c.action != "unchanged"]
        if not changes:
            return None
        seen = []
        for change in changes:
            shown = env.display(change.path, self.environ)
            seen.append(self._unchanged_since_planning(change, shown))
            check_writable(change, shown)
        record, copies = self._record(changes, meta)
        if problem := self._unreadable(record):
            raise AgentcfgError(
                f"agentcfg could not roll this change back, so nothing was written: {problem}",
                hint="The agents' files are found by HOME, XDG_CONFIG_HOME, "
                f"{', '.join(env.AGENT_LOCATIONS)} (an opencode config must be named *.json or *.jsonc): fix the one "
                "that names this file, or leave that agent out with --agent.",
            )
        entry = self._begin(record, copies)
        del copies  # written: the entry's copies are read back from its directory when needed
        attempted, doing = 0, entry.directory / MANIFEST
        try:
            for change, item, fingerprint in zip(changes, entry.files, seen, strict=True):
                attempted, doing = attempted + 1, Path(item["target"])
                self._write(change, item, fingerprint)
            doing = entry.directory / MANIFEST
            self._mark_committed(entry)
        except BaseException as exc:
            if isinstance(exc, fsutil.ChangedMeanwhile):
                attempted -= 1  # its rename never happened: the other program's text stays, untouched
            raise self._failed(entry, changes[:attempted], exc, doing) from None
        with contextlib.suppress(AgentcfgError, OSError):
            self._prune()  # best effort: the switch is committed; what is left is pruned next time
        return entry

    def _unreadable(self, record: dict[str, Any]) -> str | None:
        """Why the journal would not use this entry once written (None: it would): the loader's own checks."""
        try:
            manifest.check(json.loads(json.dumps(record)))
        except manifest.Invalid as exc:
            return str(exc)
        return managed.entry_problem(record, self.environ)

    def _unchanged_since_planning(self, change: FileChange, shown: str) -> fsutil.Fingerprint | None:
        """The target still holds what the plan was computed from; its fingerprint, for the re-check
        just before the rename."""
        target = target_of(change.path)
        try:
            now, seen = fsutil.digest_with_fingerprint(target)
        except IsADirectoryError:
            now, seen = "", None
        except OSError as exc:
            raise AgentcfgError(f"cannot read it: {exc.strerror}", where=shown, hint="Check its permissions.") from None
        if now != sha256_of(change.before) or (now is None) != (seen is None):
            raise AgentcfgError(
                "changed while agentcfg was planning its edit; nothing was written",
                where=shown,
                hint="Run the command again.",
            )
        return seen

    def _record(self, changes: list[FileChange], meta: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """The entry's manifest (pending) and the copies to keep beside it (`N.bak`, `N.after`), by name: the texts
        themselves, encoded as they are written."""
        files, copies = [], {}
        for index, change in enumerate(changes):
            target = target_of(change.path)
            before, after = change.before, change.after
            item: dict[str, Any] = {
                "agent": change.agent,
                "path": str(change.path),
                "target": str(target),
                "format": change.file.format,
                "backup": None,
                "written": None,
                "mode": None,
                "owner": None,
                "sha_before": sha256_of(before),
                "sha_after": sha256_of(after),
                "size_before": utf8_size(before),
                "size_after": utf8_size(after),
                "created_dirs": [str(d) for d in missing_dirs(target.parent)],
                "owned": owned_to_json(change.owned),
            }
            if before is not None:
                try:
                    st = target.stat()
                except OSError as exc:
                    raise self._disk_error(exc, "could not read it, so agentcfg changed nothing", target) from None
                item["backup"] = f"{index}.bak"
                item["mode"] = stat.S_IMODE(st.st_mode)
                item["owner"] = [st.st_uid, st.st_gid]
                copies[item["backup"]] = before
            # What was written, for a three-way undo later; not for a file holding a key's value
            # (--store-key-in-files): no more copies of a secret than the user asked for.
            if after is not None and not change.private:
                item["written"] = f"{index}.after"
                copies[item["written"]] = after
            files.append(item)
        # Where the agents' files were found (a rollback's: those of the entry it undoes, in `meta`), so that a
        # rollback from another shell or directory still knows them for the agents' files (agentcfg.managed).
        locations = env.locations(self.environ)
        record = {"version": manifest.VERSION, "status": "pending", "time": time.time(), "files": files}
        return {**record, "locations": locations, **meta}, copies

    def _begin(self, record: dict[str, Any], copies: dict[str, str]) -> Entry:
        """Write the entry (staged, fsynced, renamed into place): its copies, the pending manifest, and the
        committed one ready to rename over it."""
        existing = [int(p.name) for p in self.root.iterdir() if p.name.isdigit()]
        number = max(existing, default=0) + 1
        staging = self.root / f".new-{number:06d}-{os.getpid()}"
        final = self.root / f"{number:06d}"
        doing = staging
        try:
            fsutil.private_dir(staging)
            for name, data in copies.items():
                doing = staging / name
                fsutil.write_new(doing, data)
            doing = staging / MANIFEST
            fsutil.write_new(doing, json.dumps(record, indent=1).encode("utf-8"))
            doing = staging / COMMITTED
            fsutil.write_new(doing, json.dumps({**record, "status": "committed"}, indent=1).encode("utf-8"))
            doing = staging
            fsutil.fsync_dir(staging)
            doing = final
            os.replace(staging, final)
        except OSError as exc:
            rmtree(staging)
            raise self._disk_error(exc, "could not write agentcfg's journal, so it changed nothing", doing) from None
        entry = Entry(final, record, self.environ)
        try:
            fsutil.fsync_dir(self.root)
        except OSError as exc:
            self._drop(entry)
            raise self._disk_error(exc, "could not write agentcfg's journal, so it changed nothing", final) from None
        return entry

    def _write(self, change: FileChange, item: dict[str, Any], seen: fsutil.Fingerprint | None) -> None:
        target = Path(item["target"])

        def unchanged() -> Callable[[], None]:
            """The last check before the rename, after every backup is durable: same file, same bytes, no
            other program writing it. Returns the check right after it: a write into the old file (in place)
            meanwhile is put back."""
            watch = fsutil.Watch(target)
            if watch.fingerprint != seen or watch.digest != item["sha_before"] or not watch.quiet():
                watch.close()
                raise fsutil.ChangedMeanwhile(target)

            def after_rename() -> None:
                try:
                    late = watch.written_since()
                finally:
                    watch.close()
                if late is None:
                    return
                # Someone wrote into the file just replaced: their text goes back (unless yet another
                # program replaced agentcfg's since), and this file counts as changed by them.
                data, _ = fsutil.read_with_fingerprint(target)
                if sha256_of(data) == item["sha_after"]:
                    fsutil.atomic_write(target, late, item["mode"] or NEW_FILE_MODE, owner_of(item))
                raise fsutil.ChangedMeanwhile(target)

            return after_rename

        if change.after is None:
            unchanged()()  # (a removal: rollback of a created file) nothing can be written into it after
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
            return
        for directory in item["created_dirs"]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(directory, NEW_DIR_MODE)
        mode = item["mode"] or NEW_FILE_MODE
        if change.private:
            mode &= ~0o077
        fsutil.atomic_write(target, change.after, mode, owner_of(item), check=unchanged)

    def _mark_committed(self, entry: Entry) -> None:
        os.replace(entry.directory / COMMITTED, entry.directory / MANIFEST)
        entry.manifest["status"] = "committed"
        # Not durable yet is still true: after a power loss the entry reads "pending" again and
        # recovery puts the old files back, all of them. So a failed fsync here fails nothing.
        with contextlib.suppress(OSError):
            fsutil.fsync_dir(entry.directory)

    def _failed(self, entry: Entry, attempted: list[FileChange], exc: BaseException, doing: Path) -> BaseException:
        """Put back what this transaction wrote; the error to raise, saying what happened to the files."""
        known = {index: encode(change.before) for index, change in enumerate(attempted)}
        try:
            kept, failed = self._restore(entry, upto=len(attempted), known=known, after="agentcfg wrote it")
            unrestored = grouped(failed)
        except AgentcfgError as problem:  # a backup it needed is damaged: the entry stays, pending
            kept, unrestored = [], str(problem)
        if not unrestored:
            self._drop(entry)
        if isinstance(exc, fsutil.ChangedMeanwhile):
            what = "was changed by another program while agentcfg was writing"
            where, hint = exc.path, "Run the command again (if a program keeps rewriting it, close it first)."
        elif isinstance(exc, OSError):
            step = (
                "could not record the change as done in the journal" if doing.name == MANIFEST else "could not write it"
            )
            what, where = f"{step} ({exc.strerror or exc})", doing
            hint = fsutil.space_hint(exc, self._near(doing))
        else:
            return exc  # KeyboardInterrupt, SystemExit, a bug: the files are back (or the entry says not)
        if unrestored:
            what += (
                f"; agentcfg could not put back {unrestored} either. The journal keeps this change as "
                f"interrupted (entry {entry.id}): once that is fixed, any `agentcfg switch` or `agentcfg rollback` "
                "restores every file first"
            )
        else:
            what += "; every file was restored to what it was"
        if kept:
            hint = "\n  ".join([*kept, hint])
        return AgentcfgError(what, where=self._shown(where), hint=hint)

    def _restore(
        self,
        entry: Entry,
        *,
        upto: int | None = None,
        known: dict[int, bytes | None] | None = None,
        after: str = "",
    ) -> tuple[list[str], list[tuple[str, OSError, Path]]]:
        """Put every file of an entry (its first `upto`) back as it was before the entry's change.

        Three cases per file: it already holds the old bytes (nothing to do); it holds what agentcfg
        wrote (restore the backup, or remove a file the change created); anything else means someone
        changed it after `after`, and their work wins: it is kept and the unapplied backup saved.
        Every backup needed is read and verified, and every file checked to be where agentcfg wrote
        (_destination), before anything is written. Returns notes on the files kept, and the files it
        could not put back (a full disk)."""
        known = known or {}
        plan = []
        for index, item in enumerate(entry.files[:upto]):
            target = destination(item)
            try:
                current: bytes | None = target.read_bytes()
            except FileNotFoundError:
                current = None
            except OSError:
                current = b""  # unreadable now: certainly not what agentcfg wrote; keep it
            now = sha256_of(current)
            if now == item["sha_before"]:
                action = "none"
            elif now == item["sha_after"]:
                action = "restore"
            else:
                action = "keep"
            backup = None
            if action != "none":
                backup = known[index] if index in known else entry.backup(item)
            plan.append((index, item, target, action, backup))
        kept: list[str] = []
        failed: list[tuple[str, OSError, Path]] = []
        for index, item, target, action, backup in plan:
            shown = self._shown(item["path"])
            try:
                fsutil.remove_stale_temps(target)
                if action == "restore":
                    if backup is None:
                        with contextlib.suppress(FileNotFoundError):
                            target.unlink()
                    else:
                        fsutil.atomic_write(target, backup, item["mode"] or NEW_FILE_MODE, owner_of(item))
                elif action == "keep":
                    kept.append(self._keep(entry, index, item, backup, after))
            except OSError as exc:
                failed.append((shown, exc, target))
                continue
            for directory in reversed(item["created_dirs"]):
                with contextlib.suppress(OSError):
                    os.rmdir(directory)  # only when empty
        return kept, failed

    def _keep(self, entry: Entry, index: int, item: dict[str, Any], backup: bytes | None, after: str) -> str:
        """Leave a file someone changed as it is; save the backup that was not applied, and say where."""
        shown = self._shown(item["path"])
        note = f"{shown} changed after {after}: kept as it is now, not restored"
        if backup is None:
            return note + " (agentcfg had created it)"
        fsutil.private_dir(self.recovered)
        # entry numbers are reused once an entry is dropped: the time keeps the names apart
        stem = f"{time.strftime('%Y%m%d-%H%M%S')}-{entry.id}-{index}-{Path(item['path']).name}"
        saved = self.recovered / stem
        for n in range(1, 1000):
            if not saved.exists():
                break
            saved = self.recovered / f"{stem}.{n}"
        fsutil.write_private(saved, backup)
        return note + f"; the backup agentcfg did not apply is {self._shown(saved)} (copy it over the file to go back)"

    def _drop(self, entry: Entry | Unusable) -> bool:
        """Delete an entry: renamed out of the journal first, so a kill mid-delete leaves no half entry.
        False when it could not be renamed (it stays, and tells the truth: the next command sees it)."""
        doomed = entry.directory.with_name(f".drop-{entry.id}-{os.getpid()}")
        try:
            os.replace(entry.directory, doomed)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        rmtree(doomed)
        return True

    def _prune(self) -> None:
        """Keep the last MAX_ENTRIES. Best effort: the switch is committed; what is left is pruned next time."""
        for entry in self.entries()[:-MAX_ENTRIES]:
            self._drop(entry)

    def recover(self) -> list[str]:
        """Finish what a killed run left: restore a pending entry; complete a committed rollback.
        Returns what the user should be told."""
        notes: list[str] = []
        with contextlib.suppress(FileNotFoundError):
            for stale in [*self.root.glob(".new-*"), *self.root.glob(".drop-*")]:
                rmtree(stale)
        for entry in self.pending():
            if entry.manifest["status"] == "pending":
                label = f"{entry.manifest['kind']} ({entry.manifest.get('label') or entry.id})"
                try:
                    kept, failed = self._restore(entry, after=f"the interrupted {label}")
                except AgentcfgError as problem:  # a damaged backup, a link moved: nothing was written
                    where = Path(problem.where) if problem.where else entry.directory
                    self._unrecovered.append(Unusable(entry.directory, f"cannot finish it: {problem.message}", where))
                    continue
                if failed:
                    shown, error, target = failed[0]
                    raise AgentcfgError(
                        f"could not finish an interrupted {label}: could not put back {grouped(failed)}; "
                        "the journal keeps the entry, so the next command tries again",
                        where=shown,
                        hint=fsutil.space_hint(error, self._near(target)),
                    )
                others = "its other files were" if kept else "its files were"
                notes.append(f"recovered an interrupted {label}: {others} restored")
                notes.extend(kept)
            elif not self._forget(self._load(self.root / entry.manifest["undoes"])):
                continue  # a committed rollback whose clean-up was cut short, and still is: keep its record
            self._drop(entry)
        return notes

    def rollback(self, entry: Entry, changes: list[FileChange]) -> None:
        """Apply a rollback plan as its own transaction, then drop both entries."""
        # Its files are the undone entry's, found by that entry's locations: recorded with them.
        meta = {"kind": "rollback", "undoes": entry.id, "label": f"rollback of {entry.id}"}
        done = self.commit(changes, {**meta, "locations": entry.locations})
        # The rollback's own entry goes only once the entry it undid is gone: while both are there,
        # the next command knows the rollback committed and finishes the clean-up.
        if self._forget(entry) and done:
            self._drop(done)

    def _forget(self, entry: Entry | Unusable | None) -> bool:
        """Drop an undone entry, and the directories its switch created once they are empty (not those an
        entry agentcfg cannot use names: it is only dropped)."""
        if entry is None:
            return True
        for item in entry.files if isinstance(entry, Entry) else ():
            for directory in reversed(item["created_dirs"]):
                with contextlib.suppress(OSError):
                    os.rmdir(directory)
        return self._drop(entry)

    # -- setting an entry aside ------------------------------------------------------------------

    def discard(self, name: str, *, dry_run: bool = False) -> tuple[Path | None, Entry | Unusable]:
        """Set journal entry `name` aside: renamed to `NNNNNN.discarded-TIME` beside the entries, where no
        command reads it (only all-digit names are entries); the files it names stay as they are. Returns
        where it went (None: `dry_run`), and what it was. Call inside `locked(recover=False)`: recovery may
        be what fails."""
        found = None
        if re.fullmatch(r"[0-9]{1,12}", name):
            found = next((e for e in self._scan() if int(e.id) == int(name)), None)
        if found is None:
            known = ", ".join(e.id for e in self._scan()) or "none"
            raise AgentcfgError(
                f"there is no journal entry {name!r} (entries: {known})",
                where=self._shown(self.root),
                hint="`agentcfg status` names the entries agentcfg cannot use, with the command for each.",
            )
        if dry_run:
            return None, found
        stem = f"{found.id}.discarded-{time.strftime('%Y%m%d-%H%M%S')}"
        moved = found.directory.with_name(stem)
        for n in range(2, 1000):
            if not moved.exists():
                break
            moved = found.directory.with_name(f"{stem}-{n}")
        try:
            os.replace(found.directory, moved)
        except OSError as exc:
            raise self._disk_error(exc, "could not set the entry aside", found.directory) from None
        with contextlib.suppress(OSError):
            fsutil.fsync_dir(self.root)
        return moved, found
