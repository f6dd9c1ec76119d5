"""A served profile's files: what the user told `serve` (kept in the config directory, `serve/NAME.json`, so that
`restart` and the unit start the same server) and the process record in the private runtime directory
(`serve/NAME/process.json`: the server's pid, process group and start time, its command without the key, the engine
processes seen under it), with which processes that record proves to be the server's (pure over a process table).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

from agentcfg import env, fields, fsutil
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.serve import command as commands
from agentcfg.serve import procs


@dataclass(frozen=True)
class Files:
    """Where a served profile keeps its log and process record."""

    directory: Path
    log: Path
    process: Path


def _checked(name: str) -> str:
    """A profile's name, or the error: a name that is a path must never become one of serve's files."""
    if problem := fields.name_problem(name):
        raise AgentcfgError(f"{name!r} is not a profile's name: {problem}")
    return name


def files(name: str, environ: env.Environ) -> Files:
    directory = env.runtime_dir(environ) / "serve" / _checked(name)
    return Files(directory, directory / "vllm.log", directory / "process.json")


def settings_path(name: str, environ: env.Environ) -> Path:
    return env.config_dir(environ) / "serve" / f"{_checked(name)}.json"


SAVED = ("weights", "vllm", "host", "port", "family", "gpus", "enforce_eager", "extra")


def load_options(name: str, environ: env.Environ) -> commands.Options | None:
    path = settings_path(name, environ)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise AgentcfgError(
            f"agentcfg's serve settings for {name!r} cannot be read: {exc}",
            where=str(path),
            hint=f"Remove the file and give the options again: `agentcfg serve start {name} --weights ...`.",
        ) from None
    if not isinstance(data, dict):
        raise AgentcfgError(f"agentcfg's serve settings for {name!r} are not a JSON object", where=str(path))
    try:
        given = {k: data[k] for k in SAVED if k in data}
        for key in ("gpus", "extra"):
            if given.get(key) is not None:
                given[key] = tuple(str(v) for v in given[key])
        return commands.Options(**given)
    except TypeError as exc:
        raise AgentcfgError(f"agentcfg's serve settings for {name!r} are not valid: {exc}", where=str(path)) from None


def save_options(name: str, options: commands.Options, environ: env.Environ) -> None:
    path = settings_path(name, environ)
    data = {k: getattr(options, k) for k in SAVED}
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if path.read_text(encoding="utf-8") == text:
            return  # the same: not a byte written
    fsutil.save(path, text.encode("utf-8"), 0o600, env.display(path, environ))


def merged(saved: commands.Options | None, given: dict[str, Any]) -> commands.Options:
    """The options given now over the ones kept (an option not given keeps its kept value)."""
    base = saved or commands.Options()
    return dataclasses.replace(base, **{k: v for k, v in given.items() if v is not None})


def read_record(where: Files) -> dict[str, Any] | None:
    try:
        record = json.loads(where.process.read_text(encoding="utf-8"))
        int(record["pid"]), int(record["pgid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if isinstance(record, dict) else None


def write_record(where: Files, record: dict[str, Any]) -> None:
    fsutil.write_private(where.process, json.dumps(record) + "\n")


def _same(proc: procs.Proc, pid: int, start: int | None) -> bool:
    return proc.pid == pid and (start is None or proc.start == start)


def server_alive(record: dict[str, Any], table: list[procs.Proc]) -> procs.Proc | None:
    """The recorded server, if that very process (pid and start time) still runs."""
    pid, start = int(record["pid"]), record.get("start")
    return next((p for p in table if _same(p, pid, start)), None)


def leftovers(record: dict[str, Any], table: list[procs.Proc], uid: int) -> list[procs.Proc]:
    """This user's processes that belong to the recorded server (the server itself included while it runs): its
    descendants and process group while it runs; once it is gone, the engines recorded under it (pid and start time)
    and the members of its group that started with it, not after its engines (a pid and so a group id can be reused
    once all of a group is gone: a later group of that id is not the server's)."""
    pid, pgid = int(record["pid"]), int(record["pgid"])
    start = record.get("start")
    recorded = {(int(p), s) for p, s in record.get("engines", [])}
    latest = max((s for _, s in recorded if s is not None), default=None)
    found: dict[int, procs.Proc] = {}
    if (server := server_alive(record, table)) is not None:
        for proc in [server, *procs.in_group(table, pgid), *procs.descendants(table, pid)]:
            found[proc.pid] = proc
    else:
        for proc in procs.in_group(table, pgid):
            if (start is None or proc.start >= start) and (latest is None or proc.start <= latest):
                found[proc.pid] = proc
    for proc in table:
        if (proc.pid, proc.start) in recorded:
            found[proc.pid] = proc
    return [p for p in found.values() if p.uid == uid]


def engines(record: dict[str, Any], table: list[procs.Proc]) -> list[list[int]]:
    """The server's descendants now (vLLM's EngineCore and workers), as [pid, start time] to record."""
    return sorted([p.pid, p.start] for p in procs.descendants(table, int(record["pid"])))


def make_directory(where: Files) -> None:
    where.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(where.directory, 0o700)


def new_record(name: str, built: commands.Command, pid: int, pgid: int) -> dict[str, Any]:
    """What `process.json` holds of a server just started: enough to prove later which processes are its."""
    return {"pid": pid, "pgid": pgid, "start": _start_time(pid), "started": time.time(), "argv": list(built.argv),
            "host": built.host, "port": built.port, "profile": name}  # fmt: skip


def _start_time(pid: int) -> int | None:
    found = procs.read(pid)
    return found.start if found else None
