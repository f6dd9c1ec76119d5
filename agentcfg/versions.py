"""Which version of an agent is installed: `BINARY --version`, cached by the program file's identity.

Running a Node-based agent costs a few hundred milliseconds, so the answer is kept in the state dir
until the program file changes (an upgrade replaces it).
"""

from __future__ import annotations

import json
import os
import re

from agentcfg import env
from agentcfg.fsutil import private_dir, write_private

Version = tuple[int, ...]
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def proven(releases_proven: tuple[str, ...], version: Version | None) -> str | None:
    """Whether agentcfg is proven with an agent at `version`, given the releases CI ran it against (its
    Traits.proven): None when it is not installed, "proven", or what is known instead ("newer than 0.24.4,
    the newest proven", ...)."""
    if version is None:
        return None
    releases = sorted(parse(r) or () for r in releases_proven)
    if version in releases:
        return "proven"
    if not releases:
        return "not proven"
    if version > releases[-1]:
        return f"newer than {'.'.join(map(str, releases[-1]))}, the newest proven"
    if version < releases[0]:
        return f"older than {'.'.join(map(str, releases[0]))}, the oldest proven"
    return "not proven (proven: " + ", ".join(releases_proven) + ")"


def parse(output: str) -> Version | None:
    """The first x.y.z in a `--version` output, e.g. `codex-cli 0.171.0` -> (0, 171, 0)."""
    match = _VERSION.search(output)
    return tuple(int(part) for part in match.groups()) if match else None


def installed(binary: str, environ: env.Environ, timeout: float = 10.0) -> Version | None:
    """The version of `binary` on PATH, or None when it is not installed or does not say."""
    path = env.which(binary, environ)
    return of_program(path, environ, timeout) if path else None


def of_program(path: str, environ: env.Environ, timeout: float = 10.0) -> Version | None:
    """The version the program at `path` reports (`PATH --version`), cached until the file changes."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    identity = f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"
    cache_path = env.state_dir(environ) / "versions.json"
    try:
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cache = {}
    if not isinstance(cache, dict):
        cache = {}
    if identity in cache:
        return parse(cache[identity]) if cache[identity] else None
    import subprocess

    try:
        result = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env=dict(environ),
        )
        output = result.stdout if result.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return None  # not cached: a timeout may not repeat
    cache = {k: v for k, v in cache.items() if not k.startswith(os.path.realpath(path) + ":")}
    cache[identity] = output.strip()[:200]

    try:
        private_dir(cache_path.parent)
        write_private(cache_path, json.dumps(cache, indent=1))
    except OSError:
        pass  # only a cache
    return parse(output)
