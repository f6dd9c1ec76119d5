"""agentcfg's journal as it is read back: an entry, one agentcfg cannot use, and the reading (and the rollback
plan, which only reads). Nothing read back is trusted: a manifest is checked for shape when loaded, its files must
be the agents' own (agentcfg.managed), a backup is checked against its size and sha256 before it is restored.
agentcfg.apply writes it (the transaction, recovery, rollback)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import field
from pathlib import Path
from typing import Any

from agentcfg import env, fixes, fsutil, managed, manifest, undo
from agentcfg.agents import AGENTS
from agentcfg.agents.base import AgentFile
from agentcfg.errors import AgentcfgError, Exit
from agentcfg.lazyclass import dataclass
from agentcfg.plan import FileChange, digest, drifted

NEW_FILE_MODE = 0o600  # agent config files have no reason to be readable by others
NEW_DIR_MODE = 0o700
MANIFEST = "manifest.json"
COMMITTED = "committed.json"  # the manifest as it will read once committed, written with the backups
UNDOABLE = ("switch", "mcp")  # the kinds of entry rollback undoes (a rollback's own is not)


def encode(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")


def sha256_of(data: bytes | str | None) -> str | None:
    """The sha256 of bytes, or of text as UTF-8 (encoded a chunk at a time: no second copy of a big file)."""
    if data is None:
        return None
    if isinstance(data, bytes):
        return hashlib.sha256(data).hexdigest()
    digest = hashlib.sha256()
    for chunk in fsutil.text_chunks(data):
        digest.update(chunk)
    return digest.hexdigest()


def utf8_size(text: str | None) -> int | None:
    return None if text is None else sum(len(chunk) for chunk in fsutil.text_chunks(text))


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
        if sha256_of(data) != sha:
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


def destination(item: dict[str, Any]) -> Path:
    """Where a rollback or recovery writes an entry's file: the file itself, or the file its symlink points to,
    which must be the one it pointed to when agentcfg switched it (a link planted or moved since is not followed)."""
    path = Path(item["path"])
    where = target_of(path)
    if where != path and str(where) != item["target"]:
        raise AgentcfgError(
            f"is a symlink to {where} now, not to {item['target']} as when agentcfg switched it: agentcfg does not "
            "write through it, so nothing was written",
            where=str(path),
            hint="Point the link back (or replace it with the file) and run again.",
        )
    return where


def grouped(failed: list[tuple[str, OSError, Path]]) -> str:
    """`a, b (No space left on device), c (Permission denied)`: each reason said once."""
    by_reason: dict[str, list[str]] = {}
    for shown, error, _ in failed:
        by_reason.setdefault(str(error.strerror or error), []).append(shown)
    return ", ".join(f"{', '.join(names)} ({reason})" for reason, names in by_reason.items())


def target_of(path: Path) -> Path:
    """Where the bytes go: a symlinked config (dotfile managers) stays a link; its target changes."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def rmtree(path: Path) -> None:
    import shutil  # not at the top: it imports bz2, lzma and zlib, which a switch rarely needs

    shutil.rmtree(path, ignore_errors=True)


def owner_of(item: dict[str, Any]) -> tuple[int, int] | None:
    """The recorded owner, to give back when root rewrites someone's file (others cannot chown)."""
    return tuple(item["owner"]) if item["owner"] and hasattr(os, "geteuid") and os.geteuid() == 0 else None


def missing_dirs(directory: Path) -> list[Path]:
    missing = []
    while not directory.exists():
        missing.append(directory)
        directory = directory.parent
    return list(reversed(missing))


def check_writable(change: FileChange, shown: str) -> None:
    target = target_of(change.path)
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
        agent = AGENTS.get(item["agent"])
        return bool(drifted(item["format"], current, item["owned"], shown, agent.TRAITS.stamps if agent else ()))
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


class JournalReader:
    """The journal's entries as they are on disk; agentcfg.apply.Journal adds what writes."""

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
        committed = [e for e in usable if e.manifest["status"] == "committed" and e.manifest["kind"] in UNDOABLE]
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
        """Committed entries rollback can undo (a switch's, `agentcfg mcp`'s), oldest first."""
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
            current = fsutil.read_text(destination(item), shown)
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
