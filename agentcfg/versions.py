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


def installed_all(binaries: tuple[str, ...], environ: env.Environ, timeout: float = 10.0) -> list[Version | None]:
    """`installed` of each binary, the ones not cached asked at once: a slow start (Cline CLI's 150 MB binary
    takes seconds) is paid once, not once per agent."""
    paths = [env.which(binary, environ) for binary in binaries]
    return _versions([path for path in paths if path], environ, timeout, paths)


def of_program(path: str, environ: env.Environ, timeout: float = 10.0) -> Version | None:
    """The version the program at `path` reports (`PATH --version`), cached until the file changes."""
    return _versions([path], environ, timeout, [path])[0]


def _versions(
    programs: list[str], environ: env.Environ, timeout: float, order: list[str | None]
) -> list[Version | None]:
    """The versions of `programs` (from the cache, else asked concurrently), in `order` (None: not installed)."""
    identities = {}
    for path in programs:
        try:
            st = os.stat(path)
        except OSError:
            continue
        identities[path] = f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"
    cache_path = env.state_dir(environ) / "versions.json"
    try:
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cache = {}
    if not isinstance(cache, dict):
        cache = {}
    todo = [path for path, identity in identities.items() if identity not in cache]
    if todo:
        if len(todo) == 1:
            answers = [_ask(todo[0], environ, timeout)]
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(len(todo)) as pool:
                answers = list(pool.map(lambda path: _ask(path, environ, timeout), todo))
        asked = {path: output for path, output in zip(todo, answers, strict=True) if output is not None}
        for path, output in asked.items():  # an upgraded program's old entry goes
            cache = {k: v for k, v in cache.items() if not k.startswith(os.path.realpath(path) + ":")}
            cache[identities[path]] = output
        if asked:
            try:
                private_dir(cache_path.parent)
                write_private(cache_path, json.dumps(cache, indent=1))
            except OSError:
                pass  # only a cache
    said = {path: cache.get(identity) for path, identity in identities.items()}
    return [parse(said.get(path) or "") if path else None for path in order]


def _ask(path: str, environ: env.Environ, timeout: float) -> str | None:
    """What `PATH --version` prints (empty when it fails); None when it could not run or timed out (not cached:
    a timeout may not repeat)."""
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
    except (OSError, subprocess.SubprocessError):
        return None
    return (result.stdout if result.returncode == 0 else "").strip()[:200]
