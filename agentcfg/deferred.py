"""Modules that a dependency imports but a command never uses, loaded only when something touches them.

keyring's helpers import, at their top, modules for features agentcfg never calls: jaraco.context pulls in
urllib.request (and with it http.client, email and ssl), subprocess and tempfile for its download-and-extract
helpers; jaraco.functools imports more_itertools; keyring imports importlib_metadata for its backend scan,
which a remembered backend skips (keystore). Together they were most of the cost of `import keyring`, and
`agentcfg key get` runs on every start of Claude Code and Codex.

`defer(name)` puts a stand-in module in sys.modules: the `import` statement binds it without loading anything.
The first name looked up on it imports the real module (through the import system, with its own locks), which
then takes the stand-in's place in sys.modules; from then on the stand-in forwards every lookup and every
assignment to the real module, so code that kept the stand-in sees one module, not a copy.
(importlib.util.LazyLoader does not do here: `import x` reads a lazy module's __spec__, which loads it.)
"""

from __future__ import annotations

import _thread
import importlib
import sys
import types
from collections.abc import Mapping
from importlib.machinery import ModuleSpec, PathFinder
from typing import Any


class _Deferred(types.ModuleType):
    """Stands in for a module (`__getattr__` runs only for a name the stand-in itself does not hold)."""

    def __getattr__(self, attribute: str) -> Any:
        return getattr(load(self.__name__), attribute)

    def __setattr__(self, attribute: str, value: Any) -> None:
        if attribute.startswith("__") or isinstance(value, types.ModuleType):
            real = sys.modules.get(self.__name__)
            if real is None or real is self:  # the import system's bookkeeping (__path__, a submodule)
                super().__setattr__(attribute, value)
                return
        # `tempfile.tempdir = ...`, before or after the first use: on the module whose functions read it
        setattr(load(self.__name__), attribute, value)


_swap = _thread.allocate_lock()  # held only to take a stand-in out of sys.modules, never across an import


def load(name: str) -> types.ModuleType:
    """The real module `name`, importing it now if its stand-in is still in sys.modules."""
    stand_in = sys.modules.get(name)
    if isinstance(stand_in, _Deferred):
        parent, _, child = name.rpartition(".")
        if parent:
            load(parent)  # a package runs before its modules, as in a plain import
        with _swap:
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
        try:
            real = importlib.import_module(name)  # two threads here: the import system runs it once
        except BaseException:
            sys.modules.setdefault(name, stand_in)  # to be tried again; nothing half-loaded stays
            raise
        if parent:
            setattr(sys.modules[parent], child, real)
        return real
    return importlib.import_module(name)


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


def defer(*names: str, needs: Mapping[str, str] | None = None) -> None:
    """Stand-ins for each of `names` not imported yet that exists (one that does not is left alone, so that
    `try: import x / except ImportError` still takes its except branch), and whose `needs[name]` exists too (bz2
    imports only where _bz2 was built). Parents not imported get one too, with the package's `__path__`, so
    that `from package import module` binds the module's stand-in."""
    for name in names:
        if name in sys.modules or _spec(name) is None:
            continue
        if needs and name in needs and needs[name] not in sys.modules and _spec(needs[name]) is None:
            continue
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):
            prefix = ".".join(parts[:depth])
            if prefix in sys.modules:
                continue
            stand_in = _Deferred(prefix)
            spec = _spec(prefix)
            stand_in.__spec__ = spec  # importlib.util.find_spec(name) answers as for the real module
            if spec is not None and spec.submodule_search_locations is not None:
                stand_in.__path__ = list(spec.submodule_search_locations)
            sys.modules[prefix] = stand_in
            if depth > 1:
                setattr(sys.modules[".".join(parts[: depth - 1])], parts[depth - 1], stand_in)
