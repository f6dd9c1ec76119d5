"""The vLLM server of a profile: start, stop, restart, status, logs, and the sweep a unit runs after a stop.

Each served profile has `serve/NAME/` in agentcfg's private runtime directory (0700): `vllm.log` and
`process.json` (the server's pid, process group and start time, the command without the key, the engine
processes seen under it). What the user told `serve` about the weights is kept in the config directory
(`serve/NAME.json`), so `restart` and the unit start the same server.

agentcfg ends only what it can prove belongs to the server it started: the recorded pid (its start time
checked, so a reused pid is never signalled), the members of its process group and the engine processes
recorded under it, this user's only. Never a name pattern across the machine.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from agentcfg import env, keyuse
from agentcfg.errors import AgentcfgError, Exit
from agentcfg.profiles import Profile
from agentcfg.serve import command as commands
from agentcfg.serve import gpus, procs

READY_TIMEOUT = 1200.0  # s: a large model loads its weights and compiles for minutes; the tiny CPU one in ~1
STOP_TIMEOUT = 120.0  # s after SIGINT: vLLM frees the engines and the GPU memory; a large model takes a while
TERM_TIMEOUT = 15.0  # s after SIGTERM, before SIGKILL
ENGINE_GRACE = 10.0  # s the engines may take to exit after their server did, before they count as left behind
RELEASE_TIMEOUT = 60.0  # s for nvidia-smi to stop listing the ended processes
DRAIN_TIMEOUT = 30.0  # s `restart` waits for requests in flight to finish before it stops the server
COMPLETION_TRIES = 5  # one-token requests that fail with a 5xx before the engine is taken for dead
DEFAULT_UTILIZATION = 0.9  # vLLM's --gpu-memory-utilization default: the share of each GPU it takes

Tick = Callable[[str, float], None]  # (phase, seconds so far) for progress on a terminal


@dataclass(frozen=True)
class Files:
    directory: Path
    log: Path
    process: Path


def _checked(name: str) -> str:
    """A profile's name, or the error: a name that is a path must never become one of serve's files."""
    from agentcfg import fields

    if problem := fields.name_problem(name):
        raise AgentcfgError(f"{name!r} is not a profile's name: {problem}")
    return name


def files(name: str, environ: env.Environ) -> Files:
    directory = env.runtime_dir(environ) / "serve" / _checked(name)
    return Files(directory, directory / "vllm.log", directory / "process.json")


def settings_path(name: str, environ: env.Environ) -> Path:
    return env.config_dir(environ) / "serve" / f"{_checked(name)}.json"


# -- what the user told serve, kept -----------------------------------------------------------------------------

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
    from agentcfg import fsutil

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


# -- the command ------------------------------------------------------------------------------------------------


def profile_of(name: str, environ: env.Environ) -> Profile:
    from agentcfg import profiles

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
        key = keyuse.resolve_key(profile, dict(environ)).value
    vllm = commands.resolve_vllm(options.vllm, environ)
    found = gpus.query_gpus()
    built = commands.build(
        profile, dataclasses.replace(options, vllm=vllm), environ, gpu_count=gpu_count(options, environ, found), key=key
    )
    return profile, built


# -- the process record -------------------------------------------------------------------------------------------


def read_record(where: Files) -> dict[str, Any] | None:
    try:
        record = json.loads(where.process.read_text(encoding="utf-8"))
        int(record["pid"]), int(record["pgid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if isinstance(record, dict) else None


def _write_record(where: Files, record: dict[str, Any]) -> None:
    from agentcfg.fsutil import write_private

    write_private(where.process, json.dumps(record) + "\n")


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


def _engines(record: dict[str, Any], table: list[procs.Proc]) -> list[list[int]]:
    """The server's descendants now (vLLM's EngineCore and workers), as [pid, start time] to record."""
    return sorted([p.pid, p.start] for p in procs.descendants(table, int(record["pid"])))


# -- checks before a start ----------------------------------------------------------------------------------------


def check_port(host: str, port: int) -> None:
    from agentcfg.route.server import port_in_use

    if not port_in_use(host, port):
        return
    holders = procs.port_holders(port)
    if holders:
        who = "; ".join(_holder_text(h) for h in holders)
    else:
        who = "a process this user cannot see (another user's, or another network namespace)"
    raise AgentcfgError(
        f"port {port} is in use: {who}",
        hint="Stop that program, or serve on another port (a profile whose base_url names it, or --port N with "
        "a profile that agrees).",
    )


def _holder_text(holder: procs.Holder) -> str:
    from agentcfg.doctor.localserver import redacted

    if holder.pid is None:
        return f"a process of uid {holder.uid}" if holder.uid is not None else "a process this user cannot see"
    found = procs.read(holder.pid)
    return f"pid {holder.pid} ({redacted(found.args)[:200] if found and found.args else holder.name or '?'})"


def utilization(argv: tuple[str, ...]) -> float:
    from agentcfg.doctor.localserver import flag

    value = flag(argv, "--gpu-memory-utilization")
    try:
        return float(value) if value else DEFAULT_UTILIZATION
    except ValueError:
        return DEFAULT_UTILIZATION


def memory_problem(
    found: list[gpus.Gpu], apps: list[gpus.App], visible: tuple[str, ...] | None, share: float
) -> str | None:
    """Why the GPUs the server may use have too little free memory for it (vLLM takes `share` of each GPU's total
    and fails its memory check when less is free), naming the processes that hold it; None when there is enough."""
    chosen = [g for g in found if visible is None or str(g.index) in visible or g.uuid in visible]
    short = [g for g in chosen if g.free_mib < share * g.total_mib]
    if not short:
        return None
    parts = []
    for gpu in short:
        holders = [a for a in apps if a.gpu_uuid == gpu.uuid]
        held = ", ".join(f"pid {a.pid} {a.name} ({a.used_mib} MiB)" for a in holders) or "no process nvidia-smi lists"
        parts.append(
            f"GPU {gpu.index} has {gpu.free_mib} MiB free of {gpu.total_mib} MiB, vLLM takes "
            f"{share:.0%} ({int(share * gpu.total_mib)} MiB); held by {held}"
        )
    return "; ".join(parts)


def check_memory(built: commands.Command) -> None:
    found = gpus.query_gpus()
    if not found:
        return  # no NVIDIA GPU here (the CPU build, another vendor): vLLM checks for itself
    visible = built.env.get("CUDA_VISIBLE_DEVICES")
    chosen = tuple(v.strip() for v in visible.split(",")) if visible else None
    if why := memory_problem(found, gpus.query_apps() or [], chosen, utilization(built.argv)):
        raise AgentcfgError(
            f"too little free GPU memory for vLLM: {why}",
            hint="Stop what holds it (`agentcfg serve stop PROFILE` for a server agentcfg started; an engine left by "
            "a killed server: `agentcfg doctor` names it), or lower -- --gpu-memory-utilization.",
        )


# -- waits ----------------------------------------------------------------------------------------------------


def _request(url: str, key: str | None, timeout: float, body: dict[str, Any] | None = None) -> tuple[int, bytes]:
    """GET (or POST `body` as JSON) to the server on loopback, never through a proxy: its status and body."""
    import urllib.error
    import urllib.request

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    data = None if body is None else json.dumps(body).encode()
    if data is not None:
        headers["Content-Type"] = "application/json"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(urllib.request.Request(url, data, headers=headers), timeout=timeout) as response:
            return response.status, response.read(1 << 20)
    except urllib.error.HTTPError as error:
        return error.code, error.read(1 << 16)


def served(root: str, key: str | None, timeout: float = 10) -> dict[str, Any] | None:
    """The first model /v1/models lists (id, max_model_len), or None when it does not answer so."""
    try:
        status, body = _request(root + "/v1/models", key, timeout)
        data = json.loads(body)["data"] if status == 200 else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else None


def compare(profile: Profile, model: dict[str, Any]) -> list[str]:
    """Where what the server serves differs from the profile (pure)."""
    problems = []
    if model.get("id") != profile.model:
        problems.append(f"it serves {model.get('id')!r}, the profile's model is {profile.model!r}")
    window = model.get("max_model_len")
    if profile.context_window and isinstance(window, int) and window != profile.context_window:
        problems.append(f"its window is {window:,} tokens, the profile's {profile.context_window:,}")
    return problems


def one_token(root: str, model: str, key: str | None, timeout: float = 60) -> str | None:
    """Why a one-token chat completion fails (None: it answered): /health can say 200 while the engine is dead."""
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1, "stream": False}
    try:
        status, text = _request(root + "/v1/chat/completions", key, timeout, body)
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"
    if status != 200:
        from agentcfg import redact

        return f"HTTP {status}: {redact.terminal_safe(text.decode('utf-8', 'replace'))[:300]}"
    return None


def wait_ready(
    root: str,
    profile: Profile,
    key: str | None,
    alive: Callable[[], bool],
    timeout: float,
    tick: Tick | None = None,
    interrupted: Callable[[], None] = lambda: None,
) -> dict[str, float]:
    """Wait for /health, then /v1/models (the served name and window checked), then a one-token completion: the
    seconds each was reached at. The process gone or too slow: AgentcfgError (the caller stops what it started)."""
    started = time.monotonic()
    reached: dict[str, float] = {}
    failures: list[str] = []
    phase = "health"
    while (elapsed := time.monotonic() - started) < timeout:
        interrupted()
        if not alive():
            raise AgentcfgError(f"vLLM exited before it was ready (waiting for {phase})")
        if phase == "health":
            with contextlib.suppress(OSError):
                if _request(root + "/health", None, 5)[0] == 200:
                    reached["health"], phase = elapsed, "models"
                    continue
        elif phase == "models":
            model = served(root, key)
            if model is not None:
                if model.get("id") != profile.model:
                    raise AgentcfgError(
                        f"vLLM serves {model.get('id')!r}, not the profile's model {profile.model!r}: the agents "
                        "would get 404s",
                        hint="Remove the --served-model-name given after `--`: agentcfg sets it from the profile.",
                    )
                reached["models"], phase = time.monotonic() - started, "completion"
                continue
        else:
            why = one_token(root, profile.model, key, timeout=max(5.0, min(120.0, timeout - elapsed)))
            if why is None:
                reached["completion"] = time.monotonic() - started
                return reached
            failures.append(why)
            # /health and /v1/models answered: the engine should serve now. A 4xx is final; a 5xx or a dropped
            # connection a few times over means an engine that is dead while /health still says 200.
            if not why.startswith(("HTTP 5", "URLError", "RemoteDisconnected", "ConnectionRe", "TimeoutError")) or (
                len(failures) >= COMPLETION_TRIES
            ):
                raise AgentcfgError(f"vLLM answers /health but a one-token completion failed: {why}")
        if tick:
            tick(phase, elapsed)
        time.sleep(0.5)
    raise AgentcfgError(f"vLLM was not ready within {timeout:.0f} s (waiting for {phase})")


# -- start ----------------------------------------------------------------------------------------------------


def root_url(built: commands.Command) -> str:
    return _root(built.host, built.port)


def _root(host: str, port: int) -> str:
    """Where to reach a server listening on `host` (every interface: through loopback)."""
    host = host if host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def _log_tail(where: Files, lines: int = 20) -> str:
    from agentcfg import redact

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
    options = merged(load_options(name, environ), given)
    profile, built = build(name, options, environ)
    where = files(name, environ)
    _make_directory(where)
    from agentcfg import fsutil
    from agentcfg.route.server import ctrl_c_as_flag

    with fsutil.exclusive_lock(where.directory / "lock", timeout=30):
        record = read_record(where)
        if record is not None and server_alive(record, procs.snapshot()) is not None:
            if list(record.get("argv", [])) != list(built.argv):
                raise AgentcfgError(
                    f"the server of {name!r} runs already (pid {record['pid']}) with another command",
                    hint=f"Restart it to apply the new one: `agentcfg serve restart {name}`.",
                )
            pid, running = int(record["pid"]), record
            still = lambda: server_alive(running, procs.snapshot()) is not None  # noqa: E731
            reached = wait_ready(root_url(built), profile, built.env.get("VLLM_API_KEY"), still, timeout, tick)
            return {**_result(name, profile, built, where, environ), "pid": pid, "already_running": True,
                    "ready_seconds": {k: round(v, 1) for k, v in reached.items()}}  # fmt: skip
        if record is not None:
            _sweep(record, where)  # a server killed hard: its engines first, or the new one runs out of memory
        check_port(built.host, built.port)
        check_memory(built)
        save_options(name, options, environ)
        result = _result(name, profile, built, where, environ)
        with ctrl_c_as_flag() as interrupted:
            import subprocess

            with open(where.log, "wb") as log:
                os.chmod(where.log, 0o600)
                process = subprocess.Popen(
                    list(built.argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    env=built.env, cwd=where.directory, start_new_session=True,
                )  # fmt: skip
            record = _new_record(name, built, process.pid, process.pid)
            try:
                _write_record(where, record)
                reached = wait_ready(root_url(built), profile, built.env.get("VLLM_API_KEY"),
                                     lambda: process.poll() is None, timeout, tick, interrupted)  # fmt: skip
                interrupted()
            except BaseException as exc:
                _stop(record, where, timeout=30)
                if isinstance(exc, AgentcfgError):
                    exc.message = f"{exc.message} (stopped it); the end of its log:\n{_log_tail(where)}"
                    exc.where = exc.where or str(where.log)
                raise
            record["engines"] = _engines(record, procs.snapshot())
            _write_record(where, record)
    model = served(root_url(built), built.env.get("VLLM_API_KEY"))
    problems = compare(profile, model) if model else []
    return {**result, "pid": process.pid, "already_running": False, "problems": problems,
            "ready_seconds": {k: round(v, 1) for k, v in reached.items()}}  # fmt: skip


def start_foreground(name: str, given: dict[str, Any], environ: dict[str, str]) -> NoReturn:
    """Become the server (for a service manager: its main pid is vLLM's API server, its signals reach vLLM)."""
    import sys

    options = merged(load_options(name, environ), given)
    _, built = build(name, options, environ)
    where = files(name, environ)
    _make_directory(where)
    check_port(built.host, built.port)
    check_memory(built)
    save_options(name, options, environ)
    record = _new_record(name, built, os.getpid(), os.getpgid(0))
    _write_record(where, record)
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(where.directory)
    os.execve(built.argv[0], list(built.argv), built.env)


def _make_directory(where: Files) -> None:
    where.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(where.directory, 0o700)


def _new_record(name: str, built: commands.Command, pid: int, pgid: int) -> dict[str, Any]:
    """What `process.json` holds of a server just started: enough to prove later which processes are its."""
    return {"pid": pid, "pgid": pgid, "start": _start_time(pid), "started": time.time(), "argv": list(built.argv),
            "host": built.host, "port": built.port, "profile": name}  # fmt: skip


def _start_time(pid: int) -> int | None:
    found = procs.read(pid)
    return found.start if found else None


# -- stop -----------------------------------------------------------------------------------------------------


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
    server = server_alive(record, procs.snapshot())
    if server is not None and server.uid == uid and server.pgid == pgid:
        for sig, wait in ((signal.SIGINT, timeout), (signal.SIGTERM, TERM_TIMEOUT), (signal.SIGKILL, 5.0)):
            _signal_group(pgid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and server_alive(record, procs.snapshot()) is not None:
                if tick:
                    tick("stopping", time.monotonic() - started)
                time.sleep(0.1)
            phases["signal"] = signal.Signals(sig).name
            if server_alive(record, procs.snapshot()) is None:
                break
        phases["server_seconds"] = round(time.monotonic() - started, 2)
        # Its engines got the signal too and may still be freeing memory: what is gone within the grace left
        # on its own; only what is still there after it is an orphan to end
        deadline = time.monotonic() + ENGINE_GRACE
        while time.monotonic() < deadline and leftovers(record, procs.snapshot(), uid):
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
    left = [p for p in leftovers(record, table, uid)]
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
    from agentcfg.doctor import localserver

    return [p for p in localserver.processes() if p.is_server and localserver.port_of(p) == port and p.pid not in ours]


def stop(name: str, environ: dict[str, str], *, timeout: float = STOP_TIMEOUT, tick: Tick | None = None) -> dict:
    """Stop the profile's server and what it left; from the runtime record alone (so a profile changed or removed
    since can be stopped). Nothing recorded: exit 3, naming a vLLM on the port that agentcfg did not start."""
    from agentcfg import fsutil

    where = files(name, environ)

    _make_directory(where)
    with fsutil.exclusive_lock(where.directory / "lock", timeout=timeout + 60):
        record = read_record(where)
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
    where = files(name, environ)
    record = read_record(where)
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
    options = merged(load_options(name, environ), given)
    build(name, options, environ)  # a bad option or a missing key stops us before the running server is touched
    where = files(name, environ)
    record = read_record(where)
    stopped: dict[str, Any] | None = None
    if record is not None:
        drained = drain_requests(record, environ, drain, tick)
        stopped = {**stop(name, environ, timeout=stop_timeout, tick=tick), "drain_seconds": drained}
    started = start(name, given, environ, timeout=timeout, tick=tick)
    return {**started, "stopped": stopped}


def drain_requests(record: dict[str, Any], environ: env.Environ, limit: float, tick: Tick | None) -> float | None:
    """Seconds until vLLM's /metrics shows no request running or waiting (at most `limit`); None: no metrics."""
    root = _root(str(record.get("host") or ""), int(record["port"]))
    started = time.monotonic()
    while (elapsed := time.monotonic() - started) < limit:
        busy = in_flight(root)  # a server busy streaming answers /metrics late: the time is taken after it
        if busy is None:
            return None
        if busy == 0:
            return round(time.monotonic() - started, 2)
        if tick:
            tick(f"waiting for {busy} request(s) in flight", elapsed)
        time.sleep(0.25)
    return round(limit, 2)


def in_flight(root: str) -> int | None:
    try:
        status, body = _request(root + "/metrics", None, 5)
    except OSError:
        return None
    if status != 200:
        return None
    return requests_in_flight(body.decode("utf-8", "replace"))


def requests_in_flight(metrics: str) -> int | None:
    """vllm:num_requests_running + vllm:num_requests_waiting from Prometheus text (pure)."""
    total, seen = 0.0, False
    for line in metrics.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in ("vllm:num_requests_running", "vllm:num_requests_waiting"):  # not ..._waiting_by_reason
            with contextlib.suppress(ValueError, IndexError):
                total += float(line.rsplit(None, 1)[1])
                seen = True
    return int(total) if seen else None


# -- status, logs ---------------------------------------------------------------------------------------------


def status(name: str, environ: dict[str, str]) -> dict[str, Any]:
    """What runs for the profile, with which flags, since when, whether it serves what the profile says, and which
    agents point at it."""
    from agentcfg import profile_edit
    from agentcfg.doctor.localserver import redacted

    profile = profile_of(name, environ)
    where = files(name, environ)
    record = read_record(where)
    table = procs.snapshot()
    server = server_alive(record, table) if record else None
    uid = os.getuid()
    left = [p for p in leftovers(record, table, uid) if p.pid != int(record["pid"])] if record is not None else []
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
        "argv": redacted(server.args) if server else None,
        "uptime_seconds": round(time.time() - float(record["started"])) if server and record else None,
        "started_at": _iso(float(record["started"])) if server and record else None,
        "log": str(where.log),
        "orphans": [{"pid": p.pid, "name": p.name, "gpu_devices": procs.gpu_devices(p.pid)} for p in left]
        if server is None
        else [],
        "unmanaged": [{"pid": p.pid, "argv": redacted(p.args)} for p in unmanaged(port, ours)]
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
                key = keyuse.resolve_key(profile, environ).value
        model = served(root, key)
        result["serving"] = model and {"id": model.get("id"), "max_model_len": model.get("max_model_len")}
        result["problems"] = compare(profile, model) if model else ["it does not answer /v1/models"]
    return result


def _iso(epoch: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")


def log_lines(name: str, environ: env.Environ, lines: int) -> tuple[Path, list[str]]:
    from agentcfg import redact

    where = files(name, environ)
    try:
        text = where.log.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise AgentcfgError(
            f"no log of a server of {name!r}", hint=f"Start one: `agentcfg serve start {name}`.", exit_code=Exit.NOTHING
        ) from None
    return where.log, [redact.terminal_safe(redact.scrub(line)) for line in text.splitlines()[-lines:]]
