"""What agentcfg remembers about the keyring between runs, so `key get` and `switch` need not ask it: the backend
keyring chose (and what that choice depended on), and the names (never values) of the keys agentcfg stored.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

from agentcfg import env
from agentcfg.fsutil import private_dir, write_private


def backend_name(backend: Any) -> str:
    return f"{type(backend).__module__}.{type(backend).__qualname__}"


# -- the backend keyring chose, remembered ------------------------------------------------------------
# Without PYTHON_KEYRING_BACKEND or a keyringrc.cfg, keyring chooses a backend on every start: it scans the
# installed packages' entry points, imports every backend (on Linux even the macOS one, which runs ldconfig
# and gcc looking for a library) and asks each whether it works (the Secret Service: a D-Bus connection).
# That is half of `agentcfg key get`. The choice depends on what is installed, the desktop session and the
# platform, so it is remembered with those and used while they are the same; a remembered backend that
# fails is forgotten and the choice made again (KeyStore._call), so the outcome is keyring's own.

# What keyring's modules import but agentcfg's calls never use (agentcfg.deferred): jaraco.context's
# download helpers (urllib.request brings http.client, email and ssl; its tarfile it uses at import),
# jaraco.functools' more_itertools, the entry-point scan's metadata (loaded when a backend is chosen), the
# keyringrc.cfg parser (loaded when there is one), logging's traceback (only to print a logging error), and
# shutil's zlib, bz2 and lzma (imported only to learn that they exist). tests/cli/test_hotpath.py checks `key get`
# loads none.
_UNUSED_BY_KEYRING = (
    "urllib.request", "subprocess", "tempfile", "more_itertools", "importlib_metadata", "importlib.metadata",
    "configparser", "traceback", "bz2", "lzma", "zlib",
)  # fmt: skip


# bz2 and lzma import (and shutil counts them) only where Python was built with their compiled part.
_BUILT_WITH = {"bz2": "_bz2", "lzma": "_lzma"}


# keyring's backends that are no keyring: none, a chain (of none, or of several), the null one.
NOT_A_KEYRING = ("keyring.backends.fail.Keyring", "keyring.backends.chainer.ChainerBackend",
                 "keyring.backends.null.Keyring")  # fmt: skip


def loaded(*names: str) -> tuple[type, ...]:
    """The classes named `module.Class` whose module is loaded. No object (nor subclass) of a class that was never
    created exists, so isinstance and issubclass answer against these as against all, without importing the rest
    (keyring.backends.chainer and null, which a named or remembered backend never loads: part of `key get`)."""
    found = []
    for name in names:
        module, _, attribute = name.rpartition(".")
        if (where := sys.modules.get(module)) is not None:
            found.append(getattr(where, attribute))
    return tuple(found)


def _backend_record(environ: env.Environ) -> Any:
    return env.state_dir(environ) / "keyring-backend"


def _backend_basis() -> dict[str, Any] | None:
    """What keyring's choice depends on, or None when keyring does not choose (the user named a backend)."""
    import os

    from keyring.util import platform_

    if "PYTHON_KEYRING_BACKEND" in os.environ or (platform_.config_root() / "keyringrc.cfg").exists():
        return None
    # Backends are found by the entry points of installed distributions, whose metadata lives in the
    # site-packages directories (an editable install's too): installing or removing one changes its mtime.
    # Not every sys.path entry: the first is the script's or the working directory.
    installed = []
    for entry in sys.path:
        if entry.endswith(("site-packages", "dist-packages")):
            with contextlib.suppress(OSError):
                installed.append([entry, os.stat(entry).st_mtime_ns])
    session = ("DBUS_SESSION_BUS_ADDRESS", "XDG_CURRENT_DESKTOP", "XDG_SESSION_TYPE", "DISPLAY", "WAYLAND_DISPLAY")
    return {
        "python": sys.executable,
        "platform": sys.platform,
        "installed": installed,
        "session": {name: os.environ.get(name) for name in session},
    }


# Only the OS keyrings that ship with keyring are remembered (a plugin's backend is chosen each time): the
# record is a file, and what it names is imported, so it may name nothing else, nor a backend _open refuses.
REMEMBERED_MODULES = ("keyring.backends.",)


def _remembered_backend(environ: env.Environ) -> Any:
    """The backend remembered for this basis, made as keyring makes it; None when there is none."""
    import importlib

    from keyring.backend import KeyringBackend

    try:
        record = json.loads(_backend_record(environ).read_text(encoding="utf-8"))
        if record.get("basis") != _backend_basis() or not record["backend"].startswith(REMEMBERED_MODULES):
            return None
        module, _, name = record["backend"].rpartition(".")
        backend = getattr(importlib.import_module(module), name)
        if (
            not isinstance(backend, type)
            or not issubclass(backend, KeyringBackend)
            or issubclass(backend, loaded(*NOT_A_KEYRING))
        ):
            return None
        return backend()
    except Exception:  # no record, an old or broken one, a backend gone: keyring chooses
        return None


def _remember_backend(environ: env.Environ, backend: Any) -> None:
    """Remember the single backend keyring chose (a chain of several is chosen again each time)."""
    chain = isinstance(backend, loaded("keyring.backends.chainer.ChainerBackend"))
    if chain or not backend_name(backend).startswith(REMEMBERED_MODULES):
        return
    if (basis := _backend_basis()) is None:
        return
    record = _backend_record(environ)
    if not record.parent.is_dir():  # only into a state dir agentcfg made (`key set` makes it)
        return
    with contextlib.suppress(OSError):  # only a cache
        write_private(record, json.dumps({"backend": backend_name(backend), "basis": basis}) + "\n")


def _forget_backend(environ: env.Environ) -> None:
    with contextlib.suppress(OSError):
        _backend_record(environ).unlink()


# -- which profiles have a stored key, without asking the keyring ----------------------------------------
# Importing keyring and finding its backend costs ~200 ms; `switch` only needs to know whether to
# remind the user to store a key, so agentcfg records the names (never values) of keys it stored.


def _record(environ: env.Environ) -> Any:
    return env.state_dir(environ) / "stored-keys"


def remembered(environ: env.Environ) -> set[str]:
    """Profiles whose key agentcfg stored or last found in the keyring on this machine."""
    try:
        return set(_record(environ).read_text(encoding="utf-8").split())
    except (OSError, UnicodeDecodeError):
        return set()


def remember(environ: env.Environ, name: str, stored: bool) -> None:
    names = remembered(environ)
    if (name in names) == stored:
        return
    names = names | {name} if stored else names - {name}
    try:
        private_dir(_record(environ).parent)
        write_private(_record(environ), "".join(f"{n}\n" for n in sorted(names)))
    except OSError:
        pass  # only a reminder
