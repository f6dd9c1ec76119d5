"""The vLLM units on this host, found by scanning systemd's unit directories (no systemctl call), and the
installing of agentcfg's own among them: the I/O beside agentcfg.serve.unit, which reads and writes a unit's
text (pure)."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from agentcfg import env, fsutil
from agentcfg.errors import AgentcfgError
from agentcfg.serve.unit import SYSTEM, USER, UnitInfo, conflicts, describe, next_command, parse_unit, unit_name


def default_dirs(environ: env.Environ) -> list[tuple[str, Path]]:
    """systemd's unit directories, in its order of precedence (the first holding a name wins)."""
    home = env.home(environ)
    config = environ.get("XDG_CONFIG_HOME", "")
    data = environ.get("XDG_DATA_HOME", "")
    config_home = Path(config) if config.startswith("/") else home / ".config"
    data_home = Path(data) if data.startswith("/") else home / ".local" / "share"
    user = [config_home / "systemd" / "user", Path("/etc/systemd/user"), data_home / "systemd" / "user",
            Path("/usr/local/lib/systemd/user"), Path("/usr/lib/systemd/user")]  # fmt: skip
    system = [Path("/etc/systemd/system"), Path("/run/systemd/system"), Path("/usr/local/lib/systemd/system"),
              Path("/usr/lib/systemd/system"), Path("/lib/systemd/system")]  # fmt: skip
    return [(USER, d) for d in user] + [(SYSTEM, d) for d in system]


def _entries(directory: str | Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as found:
            return list(found)
    except OSError:
        return []


def _listing(directory: Path, suffix: str) -> list[Path]:
    """`directory.glob("*" + suffix)`, sorted (one directory: by name). Without pathlib's glob, which made this
    most of `find_units` (doctor reads every unit directory at each run)."""
    return [directory / name for name in sorted(e.name for e in _entries(directory) if e.name.endswith(suffix))]


def _linked(directory: Path) -> set[str]:
    """The names in its *.wants/ and *.requires/ directories (what `glob("*.wants/*")` and `*.requires/*` list)."""
    names: set[str] = set()
    for entry in _entries(directory):
        if entry.name.endswith((".wants", ".requires")):  # one that is no directory lists nothing
            names.update(e.name for e in _entries(entry.path))
    return names


def find_units(dirs: Sequence[tuple[str, Path]] | None = None, environ: env.Environ | None = None) -> list[UnitInfo]:
    """Every vLLM unit in the unit directories (`dirs`: (scope, directory) in precedence order; default
    systemd's), each marked enabled when a *.wants/ or *.requires/ directory of its scope links to it.
    A masked unit (a link to /dev/null) or one that cannot be read is left out.

    With `environ`, the unit files seen to run no server are remembered in agentcfg's state directory by their
    stat (device, inode, size, mtime_ns, ctime_ns), and not read again while that is unchanged: a distribution
    ships a hundred or more, and reading them was a twentieth of `doctor --offline`. A file is remembered only
    once its times are two seconds old (a write in the same timestamp tick could leave them as they were); any
    later write gives it new times (and a rename a new inode), so it is read again."""
    dirs = default_dirs(os.environ if environ is None else environ) if dirs is None else dirs
    enabled: dict[str, set[str]] = {}
    for scope, directory in dirs:
        enabled.setdefault(scope, set()).update(_linked(directory))
    memo = None if environ is None else env.state_dir(environ) / _PLAIN_UNITS
    known = {} if memo is None else _plain_units(memo)
    plain: dict[str, list[int]] = {}
    settled = time.time_ns() - _SETTLED_NS
    found: list[UnitInfo] = []
    seen: set[tuple[str, str]] = set()
    for scope, directory in dirs:
        for path in _listing(directory, ".service"):
            if (scope, path.name) in seen or path.name.endswith("@.service"):
                continue
            seen.add((scope, path.name))
            try:
                st = os.stat(path)
            except OSError:
                continue
            stamp = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
            if known.get(str(path)) == stamp:
                plain[str(path)] = stamp
                continue
            try:
                content = fsutil.read_text(path, str(path), limit=1 << 20)
            except (AgentcfgError, OSError):
                continue
            info = parse_unit(path, content or "")
            if info is not None:
                found.append(replace(info, scope=scope, enabled=path.name in enabled.get(scope, set())))
            elif stat.S_ISREG(st.st_mode) and max(st.st_mtime_ns, st.st_ctime_ns) < settled:
                plain[str(path)] = stamp
    if memo is not None and plain != known:
        with contextlib.suppress(OSError):  # a read-only state directory: read them all again next time
            fsutil.private_dir(memo.parent)
            fsutil.write_private(memo, json.dumps({"version": 1, "plain": plain}))
    return found


_PLAIN_UNITS = "plain-units.json"  # in the state directory: the unit files that run no server (find_units)
_SETTLED_NS = 2_000_000_000


def _plain_units(memo: Path) -> dict[str, list[int]]:
    """What find_units remembered; {} for none, or for a file it did not write (it is only ever a hint)."""
    try:
        data = json.loads(memo.read_bytes())
    except (OSError, ValueError):
        return {}
    plain = data.get("plain") if isinstance(data, dict) and data.get("version") == 1 else None
    if not isinstance(plain, dict):
        return {}
    return {k: v for k, v in plain.items() if isinstance(v, list) and len(v) == 5 and all(type(n) is int for n in v)}


def install(
    profile: str,
    unit_text: str,
    *,
    system: bool,
    environ: env.Environ,
    force: bool,
    dirs: Sequence[tuple[str, Path]] | None = None,
    say: Callable[[str], None] | None = None,
) -> Path:
    """Write the unit (`text`'s) into the first unit directory of its scope, atomically, replacing agentcfg's
    own unit for the profile; refuse while another vLLM unit has its port or GPUs (`force`: write anyway,
    saying which). Then say what to run: agentcfg runs no systemctl."""
    import sys

    say = say or (lambda line: print(line, file=sys.stderr))
    scope = SYSTEM if system else USER
    dirs = default_dirs(environ) if dirs is None else dirs
    directory = next(d for s, d in dirs if s == scope)
    name = unit_name(profile)
    target = directory / name
    own = parse_unit(target, unit_text)
    if own is None:
        raise AgentcfgError("not a unit that runs `agentcfg serve start`", where=str(target))
    others = conflicts(own.port, own.gpus, find_units(dirs), name, scope)
    listed = "\n".join(f"  {describe(u)}" for u in others)
    if others and not force:
        raise AgentcfgError(
            f"not written: other vLLM units use port {own.port} or the same GPUs, and with two enabled each "
            f"crashes on the other's port and restarts, holding the GPUs:\n{listed}",
            where=str(target),
            hint="Disable the ones you do not want (the commands above) and run again, or install anyway with --force.",
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fsutil.atomic_write(target, unit_text.encode("utf-8"), 0o644)
    except OSError as exc:
        raise AgentcfgError(
            f"could not write it ({exc.strerror or exc})",
            where=str(target),
            hint="A system unit is written as root (sudo)." if system else fsutil.space_hint(exc, str(directory)),
        ) from None
    if others:
        say(f"written beside other vLLM units for port {own.port} or the same GPUs (--force):\n{listed}")
    say(f"wrote {target}\nnext: {next_command(name, system)}")
    return target
