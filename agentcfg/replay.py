"""`switch` and `status` with nothing new to say, answered from fingerprints instead of parsing.

Most of a no-change switch is reading and parsing every agent's files, the profiles and the journal to find out
that nothing changed. So a run of `switch` or `status` that changed nothing is recorded: what it printed, its
exit status, and the fingerprint (agentcfg.fingerprint) of every path it looked at, taken by watching the run
itself rather than by a list that could miss one: every file opened (the audit hook's "open"), every directory
listed ("os.listdir", "os.scandir"), every path stat'ed or tested (os.stat, os.lstat and os.access, wrapped for
the run: Path.exists, os.path.isfile and PATH lookups go through them), plus every loaded module's file (the
code that answered) and /etc/localtime. The next run with the same words, directory, environment (a salted
digest), Python, user and terminals whose every fingerprint still matches prints the same and exits the same,
without importing the rest of agentcfg.

A run is not recorded when anything it looked at changed while it ran (it wrote a file: a real switch, a
journal entry, a lock file made), when it ran a program, opened a socket, asked whether a process lives (a
route's router) or loaded keyring (what those answer is not a file), or ended in anything but 0, 3 or 4. Any
doubt when answering (no record, one that does not read, one mismatch) falls back to the full run.
AGENTCFG_NO_REPLAY=1 turns both halves off.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from agentcfg import env, fingerprint
from agentcfg.errors import AgentcfgError

TYPE_CHECKING = False  # typing itself is not imported: on the answering path it costs a tenth of the answer
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO

COMMANDS = ("switch", "status")
VERSION = 1
_RECORDED_EXITS = (0, 3, 4)
# What a run may learn without a file: from a program, the network, or whether a process lives (a route's router).
_SPOILERS = (
    "subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork", "os.system", "socket.connect", "socket.getaddrinfo",
    "os.kill", "os.killpg",
)  # fmt: skip
_OFF = "AGENTCFG_NO_REPLAY"


def _wanted(words: list[str], environ: Mapping[str, str]) -> bool:
    return bool(words) and words[0] in COMMANDS and not environ.get(_OFF) and sys.version_info >= (3, 11)


def _directory(environ: Mapping[str, str]) -> str:
    """The records' directory (an AgentcfgError, a relative location and no working directory: the full run says
    it)."""
    return str(env.state_dir(env.absolute_locations(environ)) / "replay")


def _situation(words: list[str], environ: Mapping[str, str], salt: bytes) -> dict[str, Any]:
    """Everything besides the paths that a recorded answer must match: words, directory, user, terminals, and
    the environment as a salted digest (its values may be keys; `_` is the shell's, the command's own path)."""
    terminals = [os.isatty(fd) for fd in (0, 1, 2)]
    try:
        size = list(os.get_terminal_size(1)) if terminals[1] else None
    except OSError:
        size = None
    variables = sorted(f"{k}={v}" for k, v in environ.items() if k != "_")
    return {
        "words": words,
        "python": sys.version,
        "cwd": os.getcwd(),
        "uid": os.getuid() if hasattr(os, "getuid") else None,
        "terminals": terminals,
        "size": size,
        "environ": fingerprint.digest(*variables, salt=salt),
    }


def _record_path(words: list[str], environ: Mapping[str, str]) -> str:
    name = fingerprint.digest(*words, "\0cwd", os.getcwd())
    return os.path.join(_directory(environ), name + ".json")


class Answer:
    """A recorded run's output (stream number, text, in order) and exit status."""

    def __init__(self, output: list[tuple[int, str]], code: int) -> None:
        self.output, self.code = output, code

    def play(self) -> int:
        """Write it as it was written; the exit status."""
        streams = {1: sys.stdout, 2: sys.stderr}
        try:
            for fd, text in self.output:
                streams[fd].write(text)
                streams[fd].flush()
        except BrokenPipeError:  # as agentcfg.cli.common.run: the reader went away
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            return 1
        return self.code


def lookup(words: list[str], environ: Mapping[str, str]) -> Answer | None:
    """The recorded answer to `words` if everything it was recorded from is as it was, else None."""
    if not _wanted(words, environ) or sys.stdout is None or sys.stderr is None:
        return None
    try:
        with open(_record_path(words, environ), encoding="utf-8") as file:
            record = json.load(file)
        if not isinstance(record, dict) or record.get("version") != VERSION:
            return None
        if record["situation"] != _situation(words, environ, bytes.fromhex(record["salt"])):
            return None
        for how, path, seen in record["paths"]:
            if fingerprint.take(how, path) != seen:
                return None
        output = [(fd, text) for fd, text in record["output"] if fd in (1, 2) and isinstance(text, str)]
        code = record["code"]
        if len(output) != len(record["output"]) or code not in _RECORDED_EXITS:
            return None
        return Answer(output, code)
    except (OSError, ValueError, KeyError, TypeError, AgentcfgError):
        return None


class _Tee:
    """A stream that keeps a copy of what is written through it."""

    def __init__(self, raw: TextIO, fd: int, output: list[tuple[int, str]]) -> None:
        self.raw, self.fd, self.output = raw, fd, output

    def write(self, text: str) -> int:
        self.output.append((self.fd, text))
        return self.raw.write(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, ...
        return getattr(self.raw, name)


class Recorder:
    """Watches one run (see the module's docstring) and records it if it may be answered again."""

    active: Recorder | None = None  # the audit hook is process-wide and permanent: it serves the active one

    def __init__(self, words: list[str], environ: Mapping[str, str]) -> None:
        self.words, self.environ = words, dict(environ)
        self.directory = _directory(environ)
        self.seen: dict[tuple[str, str], fingerprint.Fingerprint] = {}
        self.output: list[tuple[int, str]] = []
        self.spoiled: str | None = None
        self.busy = False
        self.saved: dict[str, Any] = {}
        self.saved_streams: tuple[Any, Any] = (sys.stdout, sys.stderr)

    @classmethod
    def start(cls, words: list[str], environ: Mapping[str, str]) -> Recorder | None:
        """Begin watching this process's run of `words`; None when such a run is never answered again."""
        if not _wanted(words, environ) or cls.active is not None:
            return None
        try:
            recorder = cls(words, environ)
            os.makedirs(recorder.directory, mode=0o700, exist_ok=True)  # made now: it is not a change of the run's
        except (OSError, AgentcfgError):
            return None
        _install_hook()
        cls.active = recorder
        recorder.saved = {"stat": os.stat, "lstat": os.lstat, "access": os.access}
        os.stat, os.lstat, os.access = recorder._stat, recorder._lstat, recorder._access
        sys.stdout = _Tee(sys.stdout, 1, recorder.output)
        sys.stderr = _Tee(sys.stderr, 2, recorder.output)
        return recorder

    # --- watching -----------------------------------------------------------------------------------------

    def touch(self, how: str, path: Any) -> None:
        """Fingerprint `path` the first time the run looks at it (before it does: the audit hook runs first)."""
        if self.busy or isinstance(path, int):
            return
        self.busy = True
        try:
            name = os.path.join(os.getcwd(), os.fsdecode(path))
            if not (name == self.directory or name.startswith(self.directory + os.sep)):
                key = (how, name)
                if key not in self.seen:
                    self.seen[key] = fingerprint.take(how, name)
        except Exception as exc:  # the watch never changes what the run does: it only gives up recording it
            self.spoiled = self.spoiled or f"watch: {type(exc).__name__}"
        finally:
            self.busy = False

    def event(self, name: str, args: tuple[Any, ...]) -> None:
        if name == "open":
            self.touch("read", args[0])
        elif name in ("os.listdir", "os.scandir"):
            self.touch("list", args[0] if args and args[0] is not None else ".")
        elif name in _SPOILERS and self.spoiled is None:
            self.spoiled = name

    def _stat(self, path: Any, *, dir_fd: int | None = None, follow_symlinks: bool = True) -> os.stat_result:
        if dir_fd is None:
            self.touch("stat" if follow_symlinks else "lstat", path)
        return fingerprint._stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)

    def _lstat(self, path: Any, *, dir_fd: int | None = None) -> os.stat_result:
        if dir_fd is None:
            self.touch("lstat", path)
        return fingerprint._lstat(path, dir_fd=dir_fd)

    def _access(self, path: Any, mode: int, **options: Any) -> bool:
        if options.get("dir_fd") is None:
            self.touch("stat", path)
        return bool(self.saved["access"](path, mode, **options))

    # --- the end ------------------------------------------------------------------------------------------

    def finish(self, code: int) -> None:
        """Stop watching; record the run if it may be answered again (a cache: a failure to write is ignored)."""
        os.stat, os.lstat, os.access = self.saved["stat"], self.saved["lstat"], self.saved["access"]
        sys.stdout, sys.stderr = self.saved_streams
        Recorder.active = None
        if self.spoiled or code not in _RECORDED_EXITS or "keyring" in sys.modules:
            return
        with contextlib.suppress(OSError, ValueError):
            self._record(code)

    def _record(self, code: int) -> None:
        self._add_code()
        if any(fingerprint.take(how, name) != seen for (how, name), seen in self.seen.items()):
            return  # something it looked at changed while it ran: it wrote, or someone else did
        salt = os.urandom(16)
        record = {
            "version": VERSION,
            "salt": salt.hex(),
            "situation": _situation(self.words, self.environ, salt),
            "paths": [[how, name, seen] for (how, name), seen in self.seen.items()],
            "output": self.output,
            "code": code,
        }
        from agentcfg.fsutil import write_private  # lazy: only a run that is recorded writes

        write_private(Path(_record_path(self.words, self.environ)), json.dumps(record))

    def _add_code(self) -> None:
        """The code that gave the answer (every module loaded: an upgrade or an edit of agentcfg or a dependency
        changes it) and the local time zone (status shows times), by identity."""
        files = {getattr(module, "__file__", None) for module in list(sys.modules.values())}
        for path in sorted({*(f for f in files if isinstance(f, str)), "/etc/localtime"}):  # no longer watched
            self.seen.setdefault(("stat", path), fingerprint.take("stat", path))


_hooked = False


def _install_hook() -> None:
    global _hooked
    if not _hooked:
        sys.addaudithook(_hook)
        _hooked = True


_WATCHED = frozenset(("open", "os.listdir", "os.scandir", *_SPOILERS))


def _hook(name: str, args: tuple[Any, ...]) -> None:
    recorder = Recorder.active
    if recorder is None or recorder.busy or name not in _WATCHED:
        return  # first: sys._getframe below is an audited event itself
    # What the import system opens and lists is code, not input; agentcfg's own modules are added by identity.
    if not sys._getframe(1).f_code.co_filename.startswith("<frozen"):
        recorder.event(name, args)
