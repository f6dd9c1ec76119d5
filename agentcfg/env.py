"""Where things live: the environment a command runs with, and agentcfg's own directories.

Everything takes an explicit `environ` mapping so tests (and pure code) never read the real one.
"""

from __future__ import annotations

import os
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
    import platformdirs

    return Path(platformdirs.user_config_dir("agentcfg", appauthor=False))


def state_dir(environ: Environ) -> Path:
    """Journal, backups and lock: `$AGENTCFG_HOME/state`, else the platform's user state dir."""
    if value := environ.get("AGENTCFG_HOME"):
        return Path(value) / "state"
    import platformdirs

    return Path(platformdirs.user_state_dir("agentcfg", appauthor=False))


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
