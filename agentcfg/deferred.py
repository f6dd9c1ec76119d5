"""Modules that a dependency imports but a command never uses, loaded only when something touches them.

keyring's helpers import, at their top, modules for features agentcfg never calls: jaraco.context pulls in
urllib.request (and with it http.client, email and ssl), subprocess and tempfile for its download-and-extract
helpers; jaraco.functools imports more_itertools; keyring imports importlib_metadata for its backend scan,
which a remembered backend skips (keystore). Together they were most of the cost of `import keyring`, and
`agentcfg key get` runs on every start of Claude Code and Codex.

`defer(name)` puts a stand-in module in sys.modules: the `import` statement binds it without loading
anything, and the first attribute looked up on it loads the real module (under the import lock) and
copies it in, so code that does use the module works as before, only later.
"""

from __future__ import annotations

import _imp
import importlib
import sys
import types
from importlib.machinery import ModuleSpec, PathFinder
from typing import Any


class _Deferred(types.ModuleType):
    """Stands in for a module until an attribute is asked of it (`__getattr__` runs only for a missing one)."""

    def __getattr__(self, attribute: str) -> Any:
        return getattr(load(self.__name__), attribute)


def load(name: str) -> types.ModuleType:
    """The real module `name`, loaded now in place of its stand-in (which then holds the same names)."""
    _imp.acquire_lock()  # reentrant: the real import below takes it again
    try:
        stand_in = sys.modules.get(name)
        if not isinstance(stand_in, _Deferred):  # loaded already (by another thread, or never deferred)
            return importlib.import_module(name)
        parent, _, child = name.rpartition(".")
        if parent:
            load(parent)  # a package runs before its modules, as in a plain import
        del sys.modules[name]
        try:
            real = importlib.import_module(name)
        except BaseException:
            sys.modules[name] = stand_in
            raise
        if parent:
            setattr(sys.modules[parent], child, real)
        stand_in.__dict__.update(real.__dict__)
        stand_in.__class__ = types.ModuleType  # a plain module from now on: no second load, no __getattr__
        return real
    finally:
        _imp.release_lock()


def _spec(name: str) -> ModuleSpec | None:
    """Where `name` would be imported from, found without importing it or its parent packages."""
    parent, _, _ = name.rpartition(".")
    if not parent:
        return PathFinder.find_spec(name)
    module = sys.modules.get(parent)
    if module is not None and not isinstance(module, _Deferred):
        locations = getattr(module, "__path__", None)
    else:
        found = _spec(parent)
        locations = found.submodule_search_locations if found else None
    return PathFinder.find_spec(name, list(locations)) if locations else None


def defer(*names: str) -> None:
    """Stand-ins for each of `names` not imported yet that exists (one that does not is left alone, so that
    `try: import x / except ImportError` still takes its except branch). Parents not imported get one too,
    with the package's `__path__`, so that `from package import module` binds the module's stand-in."""
    for name in names:
        if name in sys.modules or _spec(name) is None:
            continue
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):
            prefix = ".".join(parts[:depth])
            if prefix in sys.modules:
                continue
            stand_in = sys.modules[prefix] = _Deferred(prefix)
            spec = _spec(prefix)
            if spec is not None and spec.submodule_search_locations is not None:
                stand_in.__path__ = list(spec.submodule_search_locations)
            if depth > 1:
                setattr(sys.modules[".".join(parts[: depth - 1])], parts[depth - 1], stand_in)
