"""Where things live: the environment a command runs with, and agentcfg's own directories.

Everything takes an explicit `environ` mapping so tests (and pure code) never read the real one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

Environ = Mapping[str, str]


def home(environ: Environ) -> Path:
    value = environ.get("HOME") or environ.get("USERPROFILE")
    return Path(value) if value else Path.home()


def xdg_config_home(environ: Environ) -> Path:
    value = environ.get("XDG_CONFIG_HOME")
    return Path(value) if value else home(environ) / ".config"


def config_dir(environ: Environ) -> Path:
    """agentcfg's own config dir: `$AGENTCFG_HOME`, else the platform's user config dir."""
    if value := environ.get("AGENTCFG_HOME"):
        return Path(value)
    return _user_dir("XDG_CONFIG_HOME", ".config", "user_config_dir", environ)


def state_dir(environ: Environ) -> Path:
    """Journal, backups and lock: `$AGENTCFG_HOME/state`, else the platform's user state dir."""
    if value := environ.get("AGENTCFG_HOME"):
        return Path(value) / "state"
    return _user_dir("XDG_STATE_HOME", ".local/state", "user_state_dir", environ)


def _user_dir(variable: str, default: str, platformdirs_name: str, environ: Environ) -> Path:
    """The XDG base directory (variable if absolute, else ~/default) + "agentcfg" on Linux and the other Unixes,
    as platformdirs has it (tests/test_env.py compares); platformdirs itself on macOS and Windows. Not on Linux:
    it imports tempfile, shutil, bz2, lzma and random at start-up, about a `python -c pass` on every command."""
    if sys.platform in ("darwin", "win32", "cygwin") or hasattr(sys, "getandroidapilevel"):
        import platformdirs

        return Path(getattr(platformdirs, platformdirs_name)("agentcfg", appauthor=False))
    base = environ.get(variable, "")
    if not base.startswith("/"):
        base = os.path.join(_unix_home(environ), default)
    return Path(base, "agentcfg")


def _unix_home(environ: Environ) -> str:
    """HOME when it is an absolute path, else the user's home in the password database (as expanduser)."""
    home = environ.get("HOME", "")
    if home.startswith("/"):
        return home.rstrip("/") or "/"
    import pwd

    return pwd.getpwuid(os.getuid()).pw_dir


def which(name: str, environ: Environ) -> str | None:
    """The program `name` on `environ`'s PATH (shutil.which without shutil's compression imports)."""
    suffixes = environ.get("PATHEXT", ".EXE;.CMD;.BAT").split(";") if os.name == "nt" else [""]
    for directory in environ.get("PATH", os.defpath).split(os.pathsep):
        for suffix in suffixes:
            candidate = os.path.join(directory or ".", name + suffix)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None


def display(path: Path, environ: Environ) -> str:
    """A path as the user thinks of it: `~/...` under HOME."""
    try:
        return "~/" + str(path.relative_to(home(environ)))
    except ValueError:
        return str(path)


def runtime_dir(environ: Environ) -> Path:
    """agentcfg's private runtime directory: `$XDG_RUNTIME_DIR/agentcfg`, else `agentcfg-UID` in the
    system's temporary directory (not in HOME: exec leaves HOME as it found it). Made mode 0700 (also when it
    was readable by others), and refused when it is a link, another user's (a shared /tmp is where someone
    could have made it first) or writable by others (they could have put a file in it)."""
    if base := environ.get("XDG_RUNTIME_DIR"):
        path = Path(base) / "agentcfg"
    else:
        import tempfile

        path = Path(environ.get("TMPDIR") or tempfile.gettempdir()) / f"agentcfg-{os.getuid()}"
    import stat

    from agentcfg.errors import AgentcfgError

    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError as error:  # a file or a dangling link in its place, a read-only parent
        raise AgentcfgError(
            f"cannot make agentcfg's runtime directory {path}: {error.strerror}",
            where=str(path),
            hint=f"Remove what is there (`rm {path}`) or set XDG_RUNTIME_DIR to a directory of yours, then run again.",
        ) from None
    mine = stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
    if mine and info.st_mode & 0o077 and not info.st_mode & 0o022:  # readable by others, writable by us only:
        os.chmod(path, 0o700)  # nobody else can have put a file in it, so it is made private
        info = os.lstat(path)
    if not mine or info.st_mode & 0o077:
        raise AgentcfgError(
            f"{path} is not a private directory of yours (a link, another user's, or open to others): "
            "agentcfg writes no settings there",
            where=str(path),
            hint=f"Remove it (`rm -r {path}`) or set XDG_RUNTIME_DIR to a directory of yours, then run again.",
        )
    return path
