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

Nothing read back from the journal is trusted: a manifest is checked for shape when loaded, its files
must be the agents' own (agentcfg.managed), and a backup is checked against its size and sha256 before
it is restored. An entry that fails is never acted on and never stops a command that does not need it:
it is named, with `agentcfg rollback --discard N` to set it aside (Journal.discard). A switch checks its
own entry by the same rules before writing anything, so it never records one it could not read back.
State is private: directories 0700, files 0600, since backups copy files that can hold keys.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcfg import env, fixes, fsutil, managed, manifest, undo
from agentcfg.agents import AGENTS
from agentcfg.agents.base import AgentFile
from agentcfg.errors import AgentcfgError, Exit
from agentcfg.plan import FileChange, digest, drifted, owned_to_json

MAX_ENTRIES = 20
NEW_FILE_MODE = 0o600  # agent config files have no reason to be readable by others
NEW_DIR_MODE = 0o700
MANIFEST = "manifest.json"
COMMITTED = "committed.json"  # the manifest as it will read once committed, written with the backups


def _encode(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


@dataclass
class Entry:
    """One transaction in the journal."""

    directory: Path
    manifest: dict[str, Any]
    environ: env.Environ | None = field(default=None, repr=False, compare=False)

    @property
    def id(self) -> str:
        return self.directory.name

    @property
    def files(self) -> list[dict[str, Any]]:
        return self.manifest["files"]

    def _shown(self, path: Path | str) -> str:
        return env.display(Path(path), self.environ) if self.environ is not None else str(path)

    @property
    def locations(self) -> dict[str, str]:
        """Where the agents' files were when this entry was made (recorded; an older entry: this environment's)."""
        return self.manifest.get("locations") or env.locations(self.environ or {})

    def backup(self, item: dict[str, Any]) -> bytes | None:
        """The file's bytes before the change (None: it did not exist), checked against the journal."""
        if item["backup"] is None:
            return None
        return self._verified(item["backup"], item["sha_before"], item.get("size_before"), "backup", item)

    def written(self, item: dict[str, Any]) -> bytes | None:
        """The bytes agentcfg wrote, checked against the journal; None when the change removed the
        file, the file holds a key's value (no extra copy of a secret is kept), or the entry
        predates these copies (journal format 1). `item["sha_after"]` still verifies the file."""
        if item.get("written") is None:
            return None
        return self._verified(item["written"], item["sha_after"], item.get("size_after"), "copy", item)

    def _verified(self, name: str, sha: str, size: int | None, what: str, item: dict[str, Any]) -> bytes:
        path = self.directory / name
        about = f"the journal's {what} of {self._shown(item['path'])}"
        hint = (
            f"agentcfg changed nothing. Entry {self.id} cannot restore that file: check the files it lists by hand, "
            f"then set it aside with `{fixes.discard(self.id)}`."
        )
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise AgentcfgError(f"{about} is missing", where=self._shown(path), hint=hint) from None
        except OSError as exc:
            raise AgentcfgError(f"cannot read {about}: {exc.strerror}", where=self._shown(path), hint=hint) from None
        if size is not None and len(data) != size:
            raise AgentcfgError(
                f"{about} is truncated or damaged: {len(data)} bytes, the journal recorded {size}",
                where=self._shown(path),
                hint=hint,
            )
        if _sha(data) != sha:
            raise AgentcfgError(
                f"{about} is corrupt: its sha256 does not match the journal's", where=self._shown(path), hint=hint
            )
        return data


@dataclass(frozen=True)
class Unusable:
    """A journal entry agentcfg cannot use: no readable manifest, the wrong shape, a newer format, files that are
    not the agents' (agentcfg.managed), or a backup that fails its check. Never acted on; named with the command
    that sets it aside."""

    directory: Path
    problem: str
    where: Path  # the file the problem is in (its manifest, a backup) or the entry

    @property
    def id(self) -> str:
        return self.directory.name

    @property
    def fix(self) -> str:
        return fixes.discard(self.id)

    def note(self, environ: env.Environ) -> str:
        return (
            f"journal entry {self.id} cannot be used ({env.display(self.where, environ)}: {self.problem}); agentcfg "
            f"leaves it and the files it names alone. Check those by hand, then set it aside with `{self.fix}`"
        )


def _destination(item: dict[str, Any]) -> Path:
    """Where a rollback or recovery writes an entry's file: the file itself, or the file its symlink points to,
    which must be the one it pointed to when agentcfg switched it (a link planted or moved since is not followed)."""
    path = Path(item["path"])
    where = _target(path)
    if where != path and str(where) != item["target"]:
        raise AgentcfgError(
            f"is a symlink to {where} now, not to {item['target']} as when agentcfg switched it: agentcfg does not "
            "write through it, so nothing was written",
            where=str(path),
            hint="Point the link back (or replace it with the file) and run again.",
        )
    return where


def _grouped(failed: list[tuple[str, OSError, Path]]) -> str:
    """`a, b (No space left on device), c (Permission denied)`: each reason said once."""
    by_reason: dict[str, list[str]] = {}
    for shown, error, _ in failed:
        by_reason.setdefault(str(error.strerror or error), []).append(shown)
    return ", ".join(f"{', '.join(names)} ({reason})" for reason, names in by_reason.items())


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
        if st.st_nlink > 1:
            # An atomic replace gives this name a new inode: the other names would keep the old text,
            # silently. Writing in place instead would not be atomic (a reader or a crash could see half).
            raise AgentcfgError(
                f"has {st.st_nlink} hard links: replacing it atomically would leave the other names with the "
                "old text, so agentcfg changed nothing",
                where=shown,
                hint=f"Replace the hard link with a symlink (`ln -sf OTHER_NAME {target}`), or leave this agent "
                "out with --agent.",
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


def _revert(entry: Entry, item: dict[str, Any], before: str | None, current: str, shown: str) -> undo.Reverted:
    written = entry.written(item)
    agent = AGENTS.get(item["agent"])
    return undo.revert(
        item["format"],
        before,
        None if written is None else written.decode("utf-8"),
        current,
        [tuple(owned["key"]) for owned in item["owned"]],
        stamps=agent.TRAITS.stamps if agent else (),
        moves=agent.TRAITS.moves if agent else None,
        shown=shown,
    )


class Journal:
    def __init__(self, environ: env.Environ) -> None:
        self.environ = environ
        self.state = env.state_dir(environ)
        self.root = self.state / "journal"
        self.recovered = self.state / "recovered"  # backups a recovery did not apply, kept for the user
        self._unrecovered: list[Unusable] = []  # interrupted entries this run's recovery could not finish

    def _shown(self, path: Path | str) -> str:
        return env.display(Path(path), self.environ)

    def _near(self, path: Path) -> str:
        """The closest existing directory holding `path`, as shown: where `df` tells what is free."""
        near = path if path.is_dir() else path.parent
        while not near.exists() and near != near.parent:
            near = near.parent
        return self._shown(near)

    def _disk_error(self, exc: OSError, message: str, path: Path) -> AgentcfgError:
        """A failed write as the user should see it: which file, why, what to free or check."""
        return AgentcfgError(
            f"{message} ({exc.strerror or exc})", where=self._shown(path), hint=fsutil.space_hint(exc, self._near(path))
        )

    # -- reading ---------------------------------------------------------------------------------

    def _scan(self) -> list[Entry | Unusable]:
        """Every entry, oldest first, each usable or not. Only all-digit names are entries: one set aside
        (`NNNNNN.discarded-…`, or `NNNNNN.broken` by hand) is not."""
        try:
            names = sorted(p for p in self.root.iterdir() if p.name.isdigit())
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise AgentcfgError(
                f"cannot read agentcfg's journal: {exc.strerror}",
                where=self._shown(self.root),
                hint="Check that it is a directory you can read (ls -ld), then run again.",
            ) from None
        return [e for e in map(self._load, names) if e is not None]

    def survey(self) -> tuple[list[Entry], list[Entry], list[Unusable]]:
        """`entries()`, `pending()` and `unusable()` from one read of the journal (status wants all three)."""
        scanned = self._scan()
        usable = [e for e in scanned if isinstance(e, Entry)]
        committed = [e for e in usable if e.manifest["status"] == "committed" and e.manifest["kind"] == "switch"]
        pending = [e for e in usable if e.manifest["status"] == "pending" or e.manifest["kind"] == "rollback"]
        found = [e for e in scanned if isinstance(e, Unusable)] + self._unrecovered
        return committed, pending, sorted({u.id: u for u in found}.values(), key=lambda u: int(u.id))

    def unusable(self) -> list[Unusable]:
        """The entries agentcfg cannot use, oldest first (see Unusable): also an interrupted one whose recovery
        failed in this run (its backups or files did not pass the checks)."""
        return self.survey()[2]

    def warnings(self) -> list[str]:
        """A note for each entry agentcfg cannot use: what is wrong, and the command that sets it aside."""
        return [u.note(self.environ) for u in self.unusable()]

    def entries(self) -> list[Entry]:
        """Committed switch entries, oldest first."""
        return self.survey()[0]

    def pending(self) -> list[Entry]:
        """Entries a killed run left unfinished: a pending transaction, or a rollback not yet cleaned up."""
        return self.survey()[1]

    def _load(self, directory: Path) -> Entry | Unusable | None:
        """The entry in `directory`, its manifest checked for shape and its files for being the agents' own;
        Unusable when either fails; None when it is gone (dropped meanwhile by another agentcfg: entries
        leave by rename, so never half)."""
        path = directory / MANIFEST
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return Unusable(directory, f"it has no {MANIFEST}", directory) if directory.is_dir() else None
        except OSError as exc:
            return Unusable(directory, f"cannot read it: {exc.strerror}", path)
        try:
            data = manifest.check(json.loads(raw.decode("utf-8")))
        except UnicodeDecodeError:
            return Unusable(directory, "damaged journal manifest: not UTF-8", path)
        except ValueError as exc:  # json.JSONDecodeError and manifest.Invalid
            return Unusable(directory, f"damaged journal manifest: {exc}", path)
        if problem := managed.entry_problem(data, self.environ):
            return Unusable(directory, f"names a file agentcfg does not write: {problem}", path)
        return Entry(directory, data, self.environ)

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
            _check_writable(change, shown)
        record, copies = self._record(changes, meta)
        if problem := self._unreadable(record):
            raise AgentcfgError(
                f"agentcfg could not roll this change back, so nothing was written: {problem}",
                hint="The agents' files are found by HOME, XDG_CONFIG_HOME, "
                f"{', '.join(env.AGENT_LOCATIONS)} (an opencode config must be named *.json or *.jsonc): fix the one "
                "that names this file, or leave that agent out with --agent.",
            )
        entry = self._begin(record, copies)
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
        target = _target(change.path)
        try:
            data, seen = fsutil.read_with_fingerprint(target)
        except IsADirectoryError:
            data, seen = b"", None
        except OSError as exc:
            raise AgentcfgError(f"cannot read it: {exc.strerror}", where=shown, hint="Check its permissions.") from None
        if data != _encode(change.before) or (data is None) != (seen is None):
            raise AgentcfgError(
                "changed while agentcfg was planning its edit; nothing was written",
                where=shown,
                hint="Run the command again.",
            )
        return seen

    def _record(self, changes: list[FileChange], meta: dict[str, Any]) -> tuple[dict[str, Any], dict[str, bytes]]:
        """The entry's manifest (pending) and the copies to keep beside it (`N.bak`, `N.after`), by name."""
        files, copies = [], {}
        for index, change in enumerate(changes):
            target = _target(change.path)
            before, after = _encode(change.before), _encode(change.after)
            item: dict[str, Any] = {
                "agent": change.agent,
                "path": str(change.path),
                "target": str(target),
                "format": change.file.format,
                "backup": None,
                "written": None,
                "mode": None,
                "owner": None,
                "sha_before": _sha(before),
                "sha_after": _sha(after),
                "size_before": None if before is None else len(before),
                "size_after": None if after is None else len(after),
                "created_dirs": [str(d) for d in _missing_dirs(target.parent)],
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

    def _begin(self, record: dict[str, Any], copies: dict[str, bytes]) -> Entry:
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
            _rmtree(staging)
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
            if watch.fingerprint != seen or _sha(watch.data) != item["sha_before"] or not watch.quiet():
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
                if _sha(data) == item["sha_after"]:
                    fsutil.atomic_write(target, late, item["mode"] or NEW_FILE_MODE, _owner(item))
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
        fsutil.atomic_write(target, change.after.encode("utf-8"), mode, _owner(item), check=unchanged)

    def _mark_committed(self, entry: Entry) -> None:
        os.replace(entry.directory / COMMITTED, entry.directory / MANIFEST)
        entry.manifest["status"] = "committed"
        # Not durable yet is still true: after a power loss the entry reads "pending" again and
        # recovery puts the old files back, all of them. So a failed fsync here fails nothing.
        with contextlib.suppress(OSError):
            fsutil.fsync_dir(entry.directory)

    def _failed(self, entry: Entry, attempted: list[FileChange], exc: BaseException, doing: Path) -> BaseException:
        """Put back what this transaction wrote; the error to raise, saying what happened to the files."""
        known = {index: _encode(change.before) for index, change in enumerate(attempted)}
        try:
            kept, failed = self._restore(entry, upto=len(attempted), known=known, after="agentcfg wrote it")
            unrestored = _grouped(failed)
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
            target = _destination(item)
            try:
                current: bytes | None = target.read_bytes()
            except FileNotFoundError:
                current = None
            except OSError:
                current = b""  # unreadable now: certainly not what agentcfg wrote; keep it
            now = _sha(current)
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
                        fsutil.atomic_write(target, backup, item["mode"] or NEW_FILE_MODE, _owner(item))
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
        _rmtree(doomed)
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
                _rmtree(stale)
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
                        f"could not finish an interrupted {label}: could not put back {_grouped(failed)}; "
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

    # -- rollback --------------------------------------------------------------------------------

    def rollback_plan(self, force: bool) -> tuple[Entry, list[FileChange], list[tuple[str, str]]]:
        """The changes that restore the latest switch, and the files whose edits since it are kept.
        Call inside `locked()`.

        A file edited since the switch only outside the keys agentcfg owns (Codex appends trusted
        projects, qwen-code stamps `$version`) gets agentcfg's change undone and keeps the other edits
        (agentcfg.undo says how); a file whose owned keys were edited, or that no longer parses,
        needs --force, which restores the backup byte for byte."""
        entries = self.entries()
        blocking = [u for u in self.unusable() if not entries or int(u.id) > int(entries[-1].id)]
        if blocking:
            newest = blocking[-1]
            raise AgentcfgError(
                f"the latest journal entry ({newest.id}) cannot be used, so agentcfg cannot roll it back; nothing "
                f"was written: {newest.problem}",
                where=self._shown(newest.where),
                hint="Check the files it names by hand (`agentcfg status` shows what each agent points at now), "
                f"then set it aside with `{newest.fix}`; the next `agentcfg rollback` undoes the switch before it.",
            )
        if not entries:
            raise AgentcfgError(
                "nothing to roll back: the journal is empty (no switch was made with agentcfg here, or every one "
                "was rolled back already)",
                hint="`agentcfg status` shows what each agent points at now.",
                exit_code=Exit.NOTHING,
            )
        entry = entries[-1]
        changes, edited, kept = [], [], []
        for item in entry.files:
            path = Path(item["path"])
            shown = env.display(path, self.environ)
            current = fsutil.read_text(_destination(item), shown)
            before = entry.backup(item)
            after = None if before is None else before.decode("utf-8")
            if digest(current) != item["sha_after"] and not force:
                if current is None or _owned_edited(item, current, shown):
                    edited.append(shown)
                else:
                    reverted = _revert(entry, item, after, current, shown)
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
