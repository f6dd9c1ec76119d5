"""How an agent, a systemd unit or a route runs this agentcfg: the argv of its key helpers and services."""

from __future__ import annotations

import os
import sys

# What `key get` and `route serve` import at run time: agentcfg and the top-level packages of its dependencies.
RUNTIME_PACKAGES = ("agentcfg", "click", "dotenv", "jsonschema", "keyring", "httpx", "platformdirs", "tomli")


def self_command() -> tuple[str, ...]:
    """How an agent (or systemd) runs this agentcfg, wherever it runs it and whatever it inherits.

    Agents run their key helper in the user's project, often a repository just cloned. The interpreter runs
    isolated (`-I`: neither the current directory nor PYTHONPATH, PYTHONHOME, PYTHONSTARTUP or the user's site
    is searched), so a planted `agentcfg/`, `click/` or `sitecustomize.py` is never imported; the directories
    this process imports agentcfg and its dependencies from that isolation would not search (an editable or
    `--user` install, a checkout) are put back by absolute path."""
    import site

    return isolated_command(sys.executable, _import_dirs(), site.getsitepackages())


def isolated_command(python: str, dirs: list[str], site_packages: list[str]) -> tuple[str, ...]:
    """`python -I -m agentcfg`, or where `dirs` are not all in the interpreter's own `site_packages`,
    `python -I -c CODE` with CODE putting them first on sys.path before it imports agentcfg."""
    searched = {os.path.normcase(os.path.realpath(d)) for d in site_packages}
    extra = [d for d in dirs if os.path.normcase(os.path.realpath(d)) not in searched]
    if not extra:
        return (python, "-I", "-m", "agentcfg")
    import json  # a JSON list of strings is a Python literal, and its double quotes read well in a shell's '...'

    code = f"import sys; sys.path[:0] = {json.dumps(extra)}; from agentcfg.cli import main; main()"
    return (python, "-I", "-c", code)


def _import_dirs() -> list[str]:
    """The directories this process imports RUNTIME_PACKAGES from, in sys.path order (agentcfg first if its own
    is not on sys.path: a meta path finder's editable install)."""
    import importlib.util

    found: list[str] = []
    for name in RUNTIME_PACKAGES:
        spec = importlib.util.find_spec(name)
        where = list(spec.submodule_search_locations or ()) if spec else []
        if spec and not where and spec.origin:  # a single-file module
            where = [spec.origin]
        for location in where[:1]:
            directory = os.path.dirname(os.path.abspath(location))
            if directory not in found:
                found.append(directory)
    order = {os.path.abspath(p or os.curdir): i for i, p in reversed(list(enumerate(sys.path)))}
    return sorted(found, key=lambda d: order.get(d, -1))
