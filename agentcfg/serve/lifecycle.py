"""The vLLM server of a profile: start, stop, restart, status, logs, and the sweep a unit runs after a stop.

Each served profile has `serve/NAME/` in agentcfg's private runtime directory (0700): `vllm.log` and
`process.json` (the server's pid, process group and start time, the command without the key, the engine
processes seen under it). What the user told `serve` about the weights is kept in the config directory
(`serve/NAME.json`), so `restart` and the unit start the same server (both in records.py; the checks before a
start in checks.py; the waits on its HTTP side in waits.py).

agentcfg ends only what it can prove belongs to the server it started: the recorded pid (its start time
checked, so a reused pid is never signalled), the members of its process group and the engine processes
recorded under it, this user's only. Never a name pattern across the machine.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import time
from pathlib import Path
from typing import Any, NoReturn

from agentcfg import env, fsutil, keystore, profile_edit, profiles, redact
from agentcfg.doctor import localserver
from agentcfg.errors import AgentcfgError, Exit
from agentcfg.profiles import Profile
from agentcfg.route.server import ctrl_c_as_flag
from agentcfg.serve import checks, gpus, procs, records, waits
from agentcfg.serve import command as commands
from agentcfg.serve.records import Files
from agentcfg.serve.waits import Tick

READY_TIMEOUT = 1200.0  # s: a large model loads its weights and compiles for minutes; the tiny CPU one in ~1
STOP_TIMEOUT = 120.0  # s after SIGINT: vLLM frees the engines and the GPU memory; a large model takes a while
TERM_TIMEOUT = 15.0  # s after SIGTERM, before SIGKILL
ENGINE_GRACE = 10.0  # s the engines may take to exit after their server did, before they count as left behind
RELEASE_TIMEOUT = 60.0  # s for nvidia-smi to stop listing the ended processes
DRAIN_TIMEOUT = 30.0  # s `restart` waits for requests in flight to finish before it stops the server


def options_of(name: str, given: dict[str, Any], environ: env.Environ) -> commands.Options:
    """The options given now over the ones kept for the profile (records.merged)."""
    return records.merged(records.load_options(name, environ), given)


def profile_of(name: str, environ: env.Environ) -> Profile:
    return profiles.get(name, environ)


def gpu_count(options: commands.Options, environ: env.Environ, found: list[gpus.Gpu] | None) -> int:
    """How many GPUs the server may use: those given, else CUDA_VISIBLE_DEVICES's, else every one nvidia-smi lists."""
    if options.gpus:
        return len(options.gpus)
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip() and d.strip() != "-1"])
    return len(found or [])


def build(name: str, options: commands.Options, environ: env.Environ) -> tuple[Profile, commands.Command]:
    """The server's command for profile `name`: its key from the keyring (only towards the profile's own host)."""
    profile = profile_of(name, environ)
    commands.check_profile(profile)  # not this machine's server: said before the keyring is asked anything
    key = None
    if profile.needs_key:
        key = keystore.resolve_key(profile, dict(environ)).value
    vllm = commands.resolve_vllm(options.vllm, environ)
    found = gpus.query_gpus()
    built = commands.build(
        profile, dataclasses.replace(options, vllm=vllm), environ, gpu_count=gpu_count(options, environ, found), key=key
    )
    return profile, built


def _log_tail(where: Files, lines: int = 20) -> str:
    return redact.file_tail(where.log, lines)


def _result(name: str, profile: Profile, built: commands.Command, where: Files, environ: env.Environ) -> dict[str, Any]:
    return {
        "profile": name,
        "url": profile.base_url,
        "host": built.host,
        "port": built.port,
        "model": profile.model,
        "context_window": profile.context_window,
        "family": built.family.name if built.family else None,
        "log": str(where.log),
        **commands.shown(built, environ),
    }


def start(
    name: str,
    given: dict[str, Any],
    environ: dict[str, str],
    *,
    timeout: float = READY_TIMEOUT,
    tick: Tick | None = None,
) -> dict[str, Any]:
    """Start the profile's vLLM in its own session and wait until it serves; the options kept for restart."""
    options = options_of(name, given, environ)
    profile, built = build(name, options, environ)
    where = records.files(name, environ)
    records.make_directory(where)
    with fsutil.exclusive_lock(where.directory / "lock", timeout=30):
        record = records.read_record(where)
        if record is not None and records.server_alive(record, procs.snapshot()) is not None:
            if list(record.get("argv", [])) != list(built.argv):
                raise AgentcfgError(
                    f"the server of {name!r} runs already (pid {record['pid']}) with another command",
                    hint=f"Restart it to apply the new one: `agentcfg serve restart {name}`.",
                )
            pid, running = int(record["pid"]), record
            still = lambda: records.server_alive(running, procs.snapshot()) is not None  # noqa: E731
            reached = waits.wait_ready(
                waits.root_url(built), profile, built.env.get("VLLM_API_KEY"), still, timeout, tick
            )
            return {**_result(name, profile, built, where, environ), "pid": pid, "already_running": True,
                    "ready_seconds": {k: round(v, 1) for k, v in reached.items()}}  # fmt: skip
        if record is not None:
            _sweep(record, where)  # a server killed hard: its engines first, or the new one runs out of memory
        checks.check_port(built.host, built.port)
        checks.check_memory(built)
        records.save_options(name, options, environ)
        result = _result(name, profile, built, where, environ)
        with ctrl_c_as_flag() as interrupted:
            import subprocess

            with open(where.log, "wb") as log:
                os.chmod(where.log, 0o600)
                process = subprocess.Popen(
                    list(built.argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    env=built.env, cwd=where.directory, start_new_session=True,
                )  # fmt: skip
            record = records.new_record(name, built, process.pid, process.pid)
            try:
                records.write_record(where, record)
                reached = waits.wait_ready(waits.root_url(built), profile, built.env.get("VLLM_API_KEY"),
                                     lambda: process.poll() is None, timeout, tick, interrupted)  # fmt: skip
                interrupted()
            except BaseException as exc:
                _stop(record, where, timeout=30)
                if isinstance(exc, AgentcfgError):
                    exc.message = f"{exc.message} (stopped it); the end of its log:\n{_log_tail(where)}"
                    exc.where = exc.where or str(where.log)
                raise
            record["engines"] = records.engines(record, procs.snapshot())
            records.write_record(where, record)
    model = waits.served(waits.root_url(built), built.env.get("VLLM_API_KEY"))
    problems = waits.compare(profile, model) if model else []
    return {**result, "pid": process.pid, "already_running": False, "problems": problems,
            "ready_seconds": {k: round(v, 1) for k, v in reached.items()}}  # fmt: skip


def start_foreground(name: str, given: dict[str, Any], environ: dict[str, str]) -> NoReturn:
    """Become the server (for a service manager: its main pid is vLLM's API server, its signals reach vLLM)."""
    import sys

    options = options_of(name, given, environ)
    _, built = build(name, options, environ)
    where = records.files(name, environ)
    records.make_directory(where)
    checks.check_port(built.host, built.port)
    checks.check_memory(built)
    records.save_options(name, options, environ)
    record = records.new_record(name, built, os.getpid(), os.getpgid(0))
    records.write_record(where, record)
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(where.directory)
    os.execve(built.argv[0], list(built.argv), built.env)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _stop(
    record: dict[str, Any], where: Files, *, timeout: float = STOP_TIMEOUT, tick: Tick | None = None
) -> dict[str, Any]:
    """SIGINT to the server's process group (what vLLM expects), SIGTERM, then SIGKILL; then the sweep. The seconds
    each phase took, and the pids ended."""
    uid = os.getuid()
    pid, pgid = int(record["pid"]), int(record["pgid"])
    started = time.monotonic()
    phases: dict[str, Any] = {}
    server = records.server_alive(record, procs.snapshot())
    if server is not None and server.uid == uid and server.pgid == pgid:
        for sig, wait in ((signal.SIGINT, timeout), (signal.SIGTERM, TERM_TIMEOUT), (signal.SIGKILL, 5.0)):
            _signal_group(pgid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and records.server_alive(record, procs.snapshot()) is not None:
                if tick:
                    tick("stopping", time.monotonic() - started)
                time.sleep(0.1)
            phases["signal"] = signal.Signals(sig).name
            if records.server_alive(record, procs.snapshot()) is None:
                break
        phases["server_seconds"] = round(time.monotonic() - started, 2)
        # Its engines got the signal too and may still be freeing memory: what is gone within the grace left
        # on its own; only what is still there after it is an orphan to end
        deadline = time.monotonic() + ENGINE_GRACE
        while time.monotonic() < deadline and records.leftovers(record, procs.snapshot(), uid):
            time.sleep(0.1)
    else:
        phases["server_seconds"] = None  # gone already (a kill -9, a crash): only its leftovers
    swept = _sweep(record, where, tick=tick)
    return {"pid": pid, **phases, **swept, "stop_seconds": round(time.monotonic() - started, 2)}


def _sweep(record: dict[str, Any], where: Files, tick: Tick | None = None) -> dict[str, Any]:
    """End what the server left (its group, its recorded engines), by pid; wait until the GPUs no longer list them."""
    uid = os.getuid()
    started = time.monotonic()
    table = procs.snapshot()
    left = [p for p in records.leftovers(record, table, uid)]
    ended = procs.end(left, uid=uid, timeout=TERM_TIMEOUT) if left else []
    pids = {int(record["pid"]), *ended, *(int(p) for p, _ in record.get("engines", []))}
    with contextlib.suppress(OSError):
        where.process.unlink()  # nothing of its is left running: the record has done its work
    try:
        release = gpus.wait_released(pids, RELEASE_TIMEOUT, (lambda s: tick("gpu memory", s)) if tick else None)
    except gpus.NotReleased as late:
        held = ", ".join(f"pid {a.pid} {a.name} ({a.used_mib} MiB)" for a in late.apps)
        raise AgentcfgError(
            f"the server's processes are gone, but after {late.waited:.0f} s nvidia-smi still lists GPU memory of "
            f"theirs: {held}",
            hint="A process in uninterruptible sleep (a driver call) holds it until the call returns: run "
            "`nvidia-smi` to see when it is released, then start again.",
            exit_code=Exit.FAILED,
        ) from None
    return {
        "orphans_ended": sorted(p.pid for p in left if p.pid != int(record["pid"]) and p.pid in ended),
        "gpu_release_seconds": None if release is None else round(release, 2),
        "sweep_seconds": round(time.monotonic() - started, 2),
    }


def unmanaged(port: int, ours: set[int] | frozenset[int] = frozenset()) -> list[Any]:
    """`vllm serve` processes on `port` that agentcfg did not start (`ours`: pids it did), for the message that says
    so."""
    return [p for p in localserver.processes() if p.is_server and localserver.port_of(p) == port and p.pid not in ours]


def stop(name: str, environ: dict[str, str], *, timeout: float = STOP_TIMEOUT, tick: Tick | None = None) -> dict:
    """Stop the profile's server and what it left; from the runtime record alone (so a profile changed or removed
    since can be stopped). Nothing recorded: exit 3, naming a vLLM on the port that agentcfg did not start."""
    where = records.files(name, environ)

    records.make_directory(where)
    with fsutil.exclusive_lock(where.directory / "lock", timeout=timeout + 60):
        record = records.read_record(where)
        if record is None:
            raise _not_running(name, environ)
        return {"profile": name, "stopped": True, **_stop(record, where, timeout=timeout, tick=tick)}


def _not_running(name: str, environ: dict[str, str]) -> AgentcfgError:
    hint = f"Start it with `agentcfg serve start {name}`."
    with contextlib.suppress(AgentcfgError):
        profile = profile_of(name, environ)
        port = commands.url_port(profile)
        others = unmanaged(port) if port else []
        if others:
            pids = ", ".join(str(p.pid) for p in others)
            hint = (f"A vLLM that agentcfg did not start serves port {port} (pid {pids}): stop it where it was "
                    "started (its terminal, its systemd unit); agentcfg ends only servers it started.")  # fmt: skip
    return AgentcfgError(f"agentcfg runs no server for {name!r}", hint=hint, exit_code=Exit.NOTHING)


def sweep(name: str, environ: dict[str, str]) -> dict[str, Any]:
    """What a unit runs after its stop: the engines the server left, ended by pid, and the GPU memory waited for."""
    where = records.files(name, environ)
    record = records.read_record(where)
    if record is None:
        return {"profile": name, "orphans_ended": [], "gpu_release_seconds": None, "sweep_seconds": 0.0}
    return {"profile": name, **_sweep(record, where)}


def restart(
    name: str,
    given: dict[str, Any],
    environ: dict[str, str],
    *,
    timeout: float = READY_TIMEOUT,
    stop_timeout: float = STOP_TIMEOUT,
    drain: float = DRAIN_TIMEOUT,
    tick: Tick | None = None,
) -> dict[str, Any]:
    """Stop (after the requests in flight finish, at most `drain` s) and start with the same waits."""
    options = options_of(name, given, environ)
    build(name, options, environ)  # a bad option or a missing key stops us before the running server is touched
    where = records.files(name, environ)
    record = records.read_record(where)
    stopped: dict[str, Any] | None = None
    if record is not None:
        drained = waits.drain_requests(record, environ, drain, tick)
        stopped = {**stop(name, environ, timeout=stop_timeout, tick=tick), "drain_seconds": drained}
    started = start(name, given, environ, timeout=timeout, tick=tick)
    return {**started, "stopped": stopped}


def status(name: str, environ: dict[str, str]) -> dict[str, Any]:
    """What runs for the profile, with which flags, since when, whether it serves what the profile says, and which
    agents point at it."""
    profile = profile_of(name, environ)
    where = records.files(name, environ)
    record = records.read_record(where)
    table = procs.snapshot()
    server = records.server_alive(record, table) if record else None
    uid = os.getuid()
    left = (
        [p for p in records.leftovers(record, table, uid) if p.pid != int(record["pid"])] if record is not None else []
    )
    ours = {p.pid for p in left}  # a forked engine keeps its server's command line until it renames itself
    port = commands.url_port(profile)
    result: dict[str, Any] = {
        "profile": name,
        "url": profile.base_url,
        "model": profile.model,
        "context_window": profile.context_window,
        "managed": record is not None,
        "running": server is not None,
        "pid": server.pid if server else None,
        "argv": localserver.redacted(server.args) if server else None,
        "uptime_seconds": round(time.time() - float(record["started"])) if server and record else None,
        "started_at": _iso(float(record["started"])) if server and record else None,
        "log": str(where.log),
        "orphans": [{"pid": p.pid, "name": p.name, "gpu_devices": procs.gpu_devices(p.pid)} for p in left]
        if server is None
        else [],
        "unmanaged": [{"pid": p.pid, "argv": localserver.redacted(p.args)} for p in unmanaged(port, ours)]
        if port and not server
        else [],
        "agents": profile_edit.pointing_agents(name, environ),
        "serving": None,
        "problems": [],
    }
    if server is not None:
        root = profile.base_url.removesuffix("/").removesuffix("/v1")
        key = None
        if profile.needs_key:
            with contextlib.suppress(AgentcfgError):  # no key to be had: /v1/models says 401, status says so
                key = keystore.resolve_key(profile, environ).value
        model = waits.served(root, key)
        result["serving"] = model and {"id": model.get("id"), "max_model_len": model.get("max_model_len")}
        result["problems"] = waits.compare(profile, model) if model else ["it does not answer /v1/models"]
    return result


def _iso(epoch: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")


def log_lines(name: str, environ: env.Environ, lines: int) -> tuple[Path, list[str]]:
    where = records.files(name, environ)
    try:
        text = where.log.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise AgentcfgError(
            f"no log of a server of {name!r}", hint=f"Start one: `agentcfg serve start {name}`.", exit_code=Exit.NOTHING
        ) from None
    return where.log, [redact.terminal_safe(redact.scrub(line)) for line in text.splitlines()[-lines:]]
