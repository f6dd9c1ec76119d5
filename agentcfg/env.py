"""Where things live: the environment a command runs with, and agentcfg's own directories.

Everything takes an explicit `environ` mapping so tests (and pure code) never read the real one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from agentcfg.errors import AgentcfgError

Environ = Mapping[str, str]

# The variables that move an agent's files. Each agent resolves a relative value against the directory it starts
# in (seen with each: Codex 0.171 canonicalizes CODEX_HOME; Claude Code 2.1, qwen-code 0.24 and opencode 1.18 open
# cc/settings.json, qh/settings.json and ./oc.json under their working directory), so agentcfg resolves it
# against its own: the file it plans on is the one that agent reads when started here, and the journal records a
# path that means the same from any directory. A leading ~ is the home directory for the agents that expand it.
AGENT_LOCATIONS = (
    "CODEX_HOME",
    "CLAUDE_CONFIG_DIR",
    "QWEN_HOME",
    "OPENCODE_CONFIG",
    # Cline CLI's, the most specific first (it takes them as they are: no `~`)
    "CLINE_PROVIDER_SETTINGS_PATH",
    "CLINE_GLOBAL_SETTINGS_PATH",
    "CLINE_DATA_DIR",
    "CLINE_DIR",
    "COPILOT_HOME",
    "COPILOT_PROVIDERS_CONFIG",
    # Droid's stands for the home directory (its `.factory` is used; relative: from the working directory, `~` not
    # expanded, seen with Droid 0.225)
    "FACTORY_HOME_OVERRIDE",
    "GEMINI_CLI_HOME",  # Gemini CLI's, the same (taken as it is: no `~`)
)
_TILDE = ("CLAUDE_CONFIG_DIR", "QWEN_HOME", "OPENCODE_CONFIG")
# Made absolute at the command line's seam (agentcfg.cli.environ), so every command sees one meaning. AGENTCFG_HOME
# too: the journal and the profiles must not move with the directory a later command runs in. HOME and
# XDG_CONFIG_HOME are not rewritten there: agentcfg's own directories ignore a relative value of theirs (as
# platformdirs and the XDG spec do), while the agents use it (see home() and xdg_config_home()).
_MADE_ABSOLUTE = ("AGENTCFG_HOME", *AGENT_LOCATIONS)


def _absolute(value: str, cwd: str | None, variable: str) -> str:
    """`value` as a clean absolute path: joined to `cwd` (default: the current directory) when relative; `..`
    resolved as the kernel resolves it (through symlinks); `.` and doubled slashes dropped."""
    if not os.path.isabs(value):
        if cwd is None:
            try:
                cwd = os.getcwd()
            except OSError:
                raise AgentcfgError(
                    f"{variable}={value} is a relative path, and the current directory no longer exists",
                    hint=f"Run agentcfg from an existing directory, or set {variable} to an absolute path.",
                ) from None
        value = os.path.join(cwd, value)
    if ".." in Path(value).parts:
        return os.path.realpath(value)
    return os.path.normpath(value)


def _expand_tilde(value: str, environ: Environ) -> str:
    if value == "~" or value.startswith("~/"):
        return str(home(environ)) + value[1:]
    return os.path.expanduser(value) if value.startswith("~") else value  # ~user


def absolute_locations(environ: Environ, cwd: str | None = None) -> dict[str, str]:
    """`environ` with the agents' location variables and AGENTCFG_HOME made absolute (see AGENT_LOCATIONS); an
    empty value stays empty (unset, for every agent). The one place this is done: agentcfg.cli.environ()."""
    fixed = dict(environ)
    for variable in _MADE_ABSOLUTE:
        value = environ.get(variable)
        if value:
            if variable in _TILDE:
                value = _expand_tilde(value, environ)
            fixed[variable] = _absolute(value, cwd, variable)
    return fixed


def location_notes(environ: Environ, cwd: str | None = None) -> list[str]:
    """What to tell the user about relative location variables in `environ` (as exported, before the seam)."""
    notes = []
    for variable in ("HOME", *_MADE_ABSOLUTE):
        value = environ.get(variable) or ""
        if value and not os.path.isabs(value) and not (variable in _TILDE and value.startswith("~")):
            import shlex

            used = _absolute(value, cwd, variable)
            notes.append(
                f"{variable}={value} is a relative path: agentcfg used {used}, as a program started in this "
                "directory does; one started in another directory reads another one "
                f"(`export {variable}={shlex.quote(used)}` fixes it)"
            )
    for variable, what, where in (("XDG_CONFIG_HOME", "config", config_dir), ("XDG_STATE_HOME", "state", state_dir)):
        value = environ.get(variable) or ""
        if value and not os.path.isabs(value):
            opencode = f"; opencode does not ignore it: its config is under {_absolute(value, cwd, variable)}"
            notes.append(
                f"{variable}={value} is a relative path, which the XDG spec says to ignore: agentcfg's own {what} "
                f"is in {display(where(environ), environ)}" + (opencode if variable == "XDG_CONFIG_HOME" else "")
            )
    return notes


def locations(environ: Environ) -> dict[str, str]:
    """Where the agents' files are for `environ`, as a journal entry records it (agentcfg.managed reads it back):
    HOME, XDG_CONFIG_HOME (when set) and the agents' own variables (when set), each a clean absolute path."""
    found = {"HOME": str(home(environ))}
    if environ.get("XDG_CONFIG_HOME"):
        found["XDG_CONFIG_HOME"] = str(xdg_config_home(environ))
    fixed = absolute_locations(environ)
    found.update((variable, fixed[variable]) for variable in AGENT_LOCATIONS if fixed.get(variable))
    return found


def home(environ: Environ) -> Path:
    """The home the agents use: HOME as set (a relative one from the current directory, as they resolve it)."""
    value = environ.get("HOME") or environ.get("USERPROFILE")
    return Path(_absolute(value, None, "HOME")) if value else Path.home()


def xdg_config_home(environ: Environ) -> Path:
    """Where opencode looks for its config directory: XDG_CONFIG_HOME as set, a relative value from the current
    directory too (opencode 1.18 does not ignore one), else ~/.config."""
    value = environ.get("XDG_CONFIG_HOME")
    return Path(_absolute(value, None, "XDG_CONFIG_HOME")) if value else home(environ) / ".config"


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
