"""The LiteLLM process of a route: its files in agentcfg's private runtime directory, start, wait, stop.

Each route has `routes/NAME/` there (0700): `litellm.yaml` (the config, no key in it), `litellm.log` and
`process.json` (pid, address, the config's digest). The legs' keys reach only the LiteLLM process, in its
environment; the environment it gets is built here from scratch, so no other variable of the user's (another
provider's key, OPENAI_API_KEY that LiteLLM would send by default) goes along.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

from agentcfg import env, redact
from agentcfg.errors import AgentcfgError, Exit
from agentcfg.fsutil import write_private
from agentcfg.lazyclass import dataclass
from agentcfg.route import litellm

TESTED_LITELLM = "1.108.7"  # what the realservers tier runs; the `route` extra pins it
READY_TIMEOUT = 180.0  # s: LiteLLM imports for 10-15 s on two idle cores, far longer on a loaded one
STOP_TIMEOUT = 15.0
# What LiteLLM's process keeps of the user's environment: how to find programs and certificates, the locale,
# and the proxy settings a gateway may need. Nothing else: no key of anyone's.
KEPT = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TMPDIR", "SYSTEMROOT", "SSL_CERT_FILE", "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
        "http_proxy", "https_proxy", "all_proxy")  # fmt: skip
QUIET = {
    # Else LiteLLM fetches each of these from the internet at start (litellm/__init__.py)
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "LITELLM_LOCAL_AUTOROUTER_PRESETS": "True",
    "LITELLM_LOCAL_POLICY_TEMPLATES": "True",
    "LITELLM_LOCAL_BLOG_POSTS": "True",
    "PYTHONUNBUFFERED": "1",  # the log is written as it happens
}


@dataclass(frozen=True)
class Files:
    """Where a route's router keeps its config, log and process record."""

    directory: Path
    config: Path
    log: Path
    process: Path


def files(name: str, environ: env.Environ) -> Files:
    directory = env.runtime_dir(environ) / "routes" / name
    return Files(directory, directory / "litellm.yaml", directory / "litellm.log", directory / "process.json")


def litellm_command(environ: env.Environ) -> list[str]:
    """How to run LiteLLM's proxy: $AGENTCFG_LITELLM (a `litellm` program), else the one installed beside
    agentcfg (the `route` extra); LiteLLM missing: what to install."""
    if given := environ.get("AGENTCFG_LITELLM"):
        if not (os.path.isfile(given) and os.access(given, os.X_OK)):
            raise AgentcfgError(
                f"AGENTCFG_LITELLM is {given}, which is not an executable file",
                hint="Point it at LiteLLM's `litellm` program, or unset it to use the one beside agentcfg.",
            )
        return [given]
    import importlib.util

    if importlib.util.find_spec("litellm") is None:
        raise AgentcfgError(
            "LiteLLM is not installed beside agentcfg: a route's router is LiteLLM's proxy",
            hint=f"Install agentcfg's `route` extra into the Python that runs it: `{install_command()}` "
            f"(LiteLLM {TESTED_LITELLM}, the version agentcfg is tested with), or point AGENTCFG_LITELLM at a "
            "`litellm` program.",
        )
    script = Path(sys.executable).parent / ("litellm.exe" if os.name == "nt" else "litellm")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from litellm import run_server; sys.exit(run_server())"]


def route_requirements() -> list[str]:
    """The `route` extra's requirements, from the installed agentcfg's metadata (so never other than pyproject's)."""
    import importlib.metadata
    import re

    try:
        declared = importlib.metadata.requires("agentcfg") or []
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return []
    extra = re.compile(r"""extra\s*==\s*["']route["']""")
    split = (requirement.partition(";") for requirement in declared)
    return [requirement.strip() for requirement, _, marker in split if extra.search(marker)]


def install_command() -> str:
    """What installs the `route` extra beside agentcfg: its requirements themselves, never the extra by the
    distribution's name (on the package index the name agentcfg is another project's)."""
    import shlex

    if requirements := route_requirements():
        return shlex.join([sys.executable, "-m", "pip", "install", *requirements])
    source = Path(__file__).resolve().parents[2]  # agentcfg's checkout: its pyproject.toml names the extra
    return shlex.join([sys.executable, "-m", "pip", "install", f"{source}[route]"])


def litellm_version(environ: env.Environ) -> str | None:
    """The installed LiteLLM's version (from its metadata, without importing it); None for AGENTCFG_LITELLM's."""
    if environ.get("AGENTCFG_LITELLM"):
        return None
    import importlib.metadata

    try:
        return importlib.metadata.version("litellm")
    except importlib.metadata.PackageNotFoundError:
        return None


def process_env(environ: env.Environ, keys: dict[str, str]) -> dict[str, str]:
    """LiteLLM's environment: KEPT of the user's, QUIET, loopback never proxied, and `keys` (the keys by variable,
    and the route's own settings)."""
    child = {name: environ[name] for name in KEPT if name in environ}
    loopback = ["127.0.0.1", "localhost", "::1"]
    for name in ("NO_PROXY", "no_proxy"):
        given = [h for h in environ.get(name, "").split(",") if h.strip()]
        child[name] = ",".join(dict.fromkeys([*given, *loopback]))
    return {**child, **QUIET, **keys}


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- the process record ---------------------------------------------------------------------------------------


def read_process(where: Files) -> dict[str, Any] | None:
    """The record of the route's LiteLLM when that process still runs (a record left by a dead one: None)."""
    try:
        record = json.loads(where.process.read_text(encoding="utf-8"))
        pid = int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if _ours(pid, where.config) else None


def started_keyless(where: Files, record: dict[str, Any]) -> bool:
    """Whether the running router of `record` (read_process) was started without the router key: the config it was
    started with (still on disk: its digest is the record's) names none. False when that cannot be told."""
    try:
        text = where.config.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return record.get("config") == digest(text) and litellm.requires_key(text) is False


def _ours(pid: int, config: Path) -> bool:
    """Whether `pid` runs and is the route's LiteLLM (on Linux: its command line names the route's config, so
    a pid reused by another program is never signalled)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process now has that pid
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not cmdline.parent.is_dir():
        return True  # no /proc (macOS): the pid and the port are what there is
    try:
        words = cmdline.read_bytes().split(b"\0")
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if status.rpartition(")")[2].split()[:1] == ["Z"]:
        return False
    return os.fsencode(str(config)) in words


def port_in_use(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError:
            return True
    return False


# -- start, wait, stop ------------------------------------------------------------------------------------------


def make_directory(where: Files) -> None:
    where.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(where.directory, 0o700)


def write_config(where: Files, text: str) -> None:
    write_private(where.config, text)


def argv(command: list[str], where: Files, host: str, port: int) -> list[str]:
    return [*command, "--config", str(where.config), "--host", host.strip("[]"), "--port", str(port),
            "--num_workers", "1"]  # fmt: skip


def start(command: list[str], where: Files, host: str, port: int, child_env: dict[str, str], text: str) -> int:
    """Start LiteLLM in its own session (a Ctrl-C in this terminal does not reach it); returns its pid."""
    with open(where.log, "wb") as log:  # this run's lines only: an old run's error must not pass for this one's
        os.chmod(where.log, 0o600)
        process = subprocess.Popen(
            argv(command, where, host, port),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=child_env,
            cwd=where.directory,
            start_new_session=True,
        )
    record = {"pid": process.pid, "host": host, "port": port, "config": digest(text), "started": time.time()}
    try:
        write_private(where.process, json.dumps(record) + "\n")
    except BaseException:  # not recorded (a full disk), so `stop` could not find it: never left running
        _signal(process.pid, signal.SIGKILL)
        process.wait()
        raise
    return process.pid


def exec_foreground(
    command: list[str], where: Files, host: str, port: int, child_env: dict[str, str], text: str
) -> NoReturn:
    """Become LiteLLM (a service manager then watches the router itself, and its signals reach it)."""
    record = {"pid": os.getpid(), "host": host, "port": port, "config": digest(text), "started": time.time()}
    write_private(where.process, json.dumps(record) + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    full = argv(command, where, host, port)
    os.chdir(where.directory)
    os.execve(full[0], full, child_env)


@contextlib.contextmanager
def ctrl_c_as_flag() -> Iterator[Callable[[], None]]:
    """Ctrl-C held as a flag while LiteLLM starts, raised as KeyboardInterrupt only where the check it yields
    runs. Raised where the signal lands, it can land in a finalizer (Popen.__del__ as `start` returns), where
    Python prints and drops it: serve then went on waiting for a router nobody wanted (seen in CI)."""
    seen: list[int] = []

    def check() -> None:
        if seen:
            raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGINT, lambda number, frame: seen.append(number))
    except ValueError:  # not the main thread (an embedding program): Ctrl-C is not this code's to take
        yield lambda: None
        return
    try:
        yield check
    finally:
        signal.signal(signal.SIGINT, previous)


def wait_ready(
    url: str,
    pid: int,
    where: Files,
    timeout: float = READY_TIMEOUT,
    tick: Callable[[float], None] | None = None,
    *,
    stop_on_timeout: bool = True,
    interrupted: Callable[[], None] = lambda: None,
) -> float:
    """Poll the router's liveness until it answers while `pid` still runs (seconds it took); its process gone or
    too slow: the log's end (and, when it is this call's to stop, the process stopped). `interrupted` raises
    KeyboardInterrupt after a Ctrl-C that `ctrl_c_as_flag` held back."""
    import urllib.error
    import urllib.request

    started = time.monotonic()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
    while (elapsed := time.monotonic() - started) < timeout:
        interrupted()
        if not _ours(pid, where.config):
            raise AgentcfgError(
                f"LiteLLM exited before it answered; the end of its log:\n{log_tail(where)}",
                where=str(where.log),
                hint="Fix what the log names, then run `agentcfg route serve` again.",
            )
        try:
            with opener.open(url + "/health/liveliness", timeout=2) as response:
                if response.status == 200 and _ours(pid, where.config):  # the answer is its, not a process gone
                    return elapsed
        except (OSError, urllib.error.URLError):
            pass
        if tick:
            tick(elapsed)
        time.sleep(0.25)
    if stop_on_timeout:
        stop(where)
    raise AgentcfgError(
        f"LiteLLM did not answer within {timeout:.0f} s{' (stopped it)' if stop_on_timeout else ''}; "
        f"the end of its log:\n{log_tail(where)}",
        where=str(where.log),
        hint="Run `agentcfg route serve NAME --foreground` to watch it start.",
    )


def log_tail(where: Files, lines: int = 15) -> str:
    return redact.file_tail(where.log, lines)


def stop(where: Files, timeout: float = STOP_TIMEOUT) -> int | None:
    """SIGTERM the route's LiteLLM (its whole session), SIGKILL what is left after `timeout`; the pid, or None
    when none ran."""
    record = read_process(where)
    with contextlib.suppress(OSError):
        if record is None:
            where.process.unlink()
    if record is None:
        return None
    pid = int(record["pid"])
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        _signal(pid, sig)
        deadline = time.monotonic() + wait
        while _ours(pid, where.config) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not _ours(pid, where.config):
            break
    else:
        raise AgentcfgError(f"LiteLLM (pid {pid}) did not stop", exit_code=Exit.FAILED)
    with contextlib.suppress(OSError):
        where.process.unlink()
    return pid


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(pid) == pid:  # started by `serve`: its own session, with LiteLLM's workers in it
            os.killpg(pid, sig)
        else:  # `serve --foreground` under a service manager: the process itself
            os.kill(pid, sig)
