"""Facts about vLLM processes on this host, read from /proc (Linux): their flags, their ports, and
engine processes whose `vllm serve` parent is gone; and the systemd units that start vLLM (serve.unit reads
them). The parsing and the rules are pure; `processes()` is the only I/O.

/proc shows every user's processes. A server on the agents' port is the one they talk to, whoever started
it; a stray engine is this user's to stop only if it is this user's (the real uid in /proc/PID/status):
another user's is neither counted nor given a `kill` line.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from agentcfg import fixes
from agentcfg.doctor.model import FAIL, WARN, Finding
from agentcfg.lazyclass import dataclass
from agentcfg.serve.procs import real_uid, stat_fields
from agentcfg.serve.unit import UnitInfo, disable_command

ENGINE_NAMES = ("VLLM::EngineCore", "VLLM::Worker", "VLLM::EngineCor")


@dataclass(frozen=True)
class Process:
    """A process as doctor lists it: enough to tell a local server and who started it."""

    pid: int
    ppid: int
    args: tuple[str, ...]
    uid: int | None = None  # its real uid; None: not known (a `ps` listing), taken as this user's

    @property
    def is_server(self) -> bool:
        """`vllm serve ...` (the executable, maybe behind an interpreter) or the old `-m ...api_server`."""
        if "vllm.entrypoints.openai.api_server" in self.args:
            return True
        for i, arg in enumerate(self.args[:3]):
            if os.path.basename(arg) == "vllm":
                return self.args[i + 1 : i + 2] == ("serve",)
        return False

    @property
    def is_engine(self) -> bool:
        return bool(self.args) and self.args[0].startswith(ENGINE_NAMES)


def own_uid() -> int | None:
    """This process's real uid (None where the OS has none: no /proc there either)."""
    return os.getuid() if hasattr(os, "getuid") else None


def processes(proc: Path = Path("/proc")) -> list[Process]:
    """Every process whose command line mentions vLLM (empty off Linux or when /proc is unreadable); one
    that ends while it is read, or whose owner cannot be read, is left out."""
    found = []
    try:
        entries = [p for p in proc.iterdir() if p.name.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            raw = (entry / "cmdline").read_bytes()
            if b"vllm" not in raw.lower():
                continue
            stat = stat_fields((entry / "stat").read_text())
            uid = real_uid((entry / "status").read_text())
        except OSError:
            continue
        if uid is None or stat is None or len(stat[1]) < 2 or not stat[1][1].isdigit():
            continue
        args = tuple(a.decode("utf-8", "replace") for a in raw.split(b"\0") if a)
        ppid = int(stat[1][1])
        found.append(Process(int(entry.name), ppid, args, uid))
    return found


def parse_ps(text: str) -> list[Process]:
    """`ps -eo pid,ppid,comm,args` output (as in the captured fixtures) -> processes."""
    found = []
    for line in text.splitlines():
        match = re.match(r"\s*(\d+)\s+(\d+)\s+\S+\s+(.*)$", line)
        if match:
            found.append(Process(int(match[1]), int(match[2]), tuple(shlex.split(match[3]))))
    return found


def values(args: tuple[str, ...], name: str) -> list[str]:
    """Every value of a flag that takes several (`--served-model-name A B`, `--api-key K1 K2`)."""
    found: list[str] = []
    for i, arg in enumerate(args):
        if arg.startswith(name + "="):
            found.append(arg.split("=", 1)[1])
        elif arg == name:
            for value in args[i + 1 :]:
                if value.startswith("--"):
                    break
                found.append(value)
    return found


def flag(args: tuple[str, ...], name: str) -> str | None:
    """The value of `--name V` or `--name=V`; "" for a bare flag; None when absent."""
    for i, arg in enumerate(args):
        if arg == name:
            nxt = args[i + 1] if i + 1 < len(args) else ""
            return "" if nxt.startswith("--") else nxt
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def port_of(server: Process) -> int:
    value = flag(server.args, "--port")
    # Another user's command line: isdigit() is also true for '²' or '①', which int() refuses; int() takes
    # the other Unicode decimal digits ('٣٣' -> 33), as vLLM's own argparse does.
    return int(value) if value and value.isdecimal() else 8000


def redacted(args: tuple[str, ...]) -> str:
    """The command line with the --api-key value masked (the cmdline shows it in clear text)."""
    out, hide = [], False
    for arg in args:
        if hide and not arg.startswith("--"):
            out.append("****")  # every value: --api-key takes several keys
            continue
        hide = arg == "--api-key"
        if hide:
            out.append(arg)
        elif arg.startswith("--api-key="):
            out.append("--api-key=****")
        else:
            out.append(arg)
    return shlex.join(out)


def without(args: tuple[str, ...], name: str) -> tuple[str, ...]:
    """The command line without the bare flag `name` (for the hint that shows how to restart)."""
    return tuple(a for a in args if a != name)


def findings(
    procs: list[Process],
    port: int,
    model: str | None,
    profile: str | None = None,
    uid: int | None = None,
    *,
    window: int | None = None,
) -> list[Finding]:
    """What the vLLM processes on this host say about the server on `port` (`profile`: the agents' profile,
    for a fix that changes it; `uid`: this user's, default this process's real uid). A restart is never a
    fix line: how vLLM runs (a systemd unit, a container, its working directory and environment) is not on
    its command line, and the --api-key there is masked. Only `kill PID` of this user's worker whose server
    is gone is a command that works as pasted. `window`: the one the agents' files give them."""
    uid = own_uid() if uid is None else uid
    by_pid = {p.pid: p for p in procs}
    servers = [p for p in procs if p.is_server]
    on_port = [s for s in servers if port_of(s) == port]
    result: list[Finding] = []
    for engine in (p for p in procs if p.is_engine and p.uid in (None, uid)):
        parent, seen = by_pid.get(engine.ppid), set()
        while parent is not None and not parent.is_server and parent.pid not in seen:
            seen.add(parent.pid)
            parent = by_pid.get(parent.ppid)
        if parent is None:
            result.append(
                Finding(
                    "vllm-stray-workers",
                    FAIL,
                    None,
                    f"{engine.args[0]} (pid {engine.pid}) has no live `vllm serve` parent: it holds GPU "
                    "memory and makes the next start fail",
                    f"pid {engine.pid}, parent pid {engine.ppid}",
                    f"kill {engine.pid}",
                )
            )
    if len(on_port) > 1:
        pids = ", ".join(str(s.pid) for s in on_port)
        result.append(
            Finding(
                "vllm-duplicate-servers",
                WARN,
                None,
                f"{len(on_port)} `vllm serve` processes for port {port} (pids {pids}): they fight for the port",
                pids,
                "",
                "stop all but one: two systemd units (or a unit and a shell) that both start vLLM restart each other's "
                "victim, so check `systemctl list-units '*vllm*'` before killing one",
            )
        )
    for server in on_port[:1]:
        evidence = f"pid {server.pid}: {redacted(server.args)}"
        if flag(server.args, "--enforce-eager") is not None:
            result.append(
                Finding(
                    "vllm-enforce-eager",
                    WARN,
                    None,
                    "vLLM runs with --enforce-eager: decoding is much slower (about 13x on a large MoE model)",
                    evidence,
                    "",
                    "restart vLLM without --enforce-eager (keep it only to debug CUDA graphs): "
                    + redacted(without(server.args, "--enforce-eager")),
                )
            )
        if flag(server.args, "--enable-auto-tool-choice") is None or not flag(server.args, "--tool-call-parser"):
            result.append(
                Finding(
                    "tool-parser-missing",
                    FAIL,
                    None,
                    "vLLM was started without --enable-auto-tool-choice --tool-call-parser: every agent sends tools",
                    evidence,
                    "",
                    "restart vLLM with --enable-auto-tool-choice and --tool-call-parser set to your model's parser "
                    "(hermes, qwen3_coder, deepseek_v31, ...: see vLLM's tool calling docs)",
                )
            )
        result += _against_profile(server, evidence, window, profile) + _against_family(server, evidence)
        names = values(server.args, "--served-model-name")
        if model and names and model not in names:
            result.append(
                Finding(
                    "model-not-found",
                    FAIL,
                    None,
                    f"vLLM serves {', '.join(names)}, the agents ask for {model}",
                    evidence,
                    fixes.then(fixes.profile_set(profile, model=names[0]), fixes.switch(profile)) if profile else "",
                    f"point the agents at {names[0]}"
                    + (" (the fix)" if profile else " (a profile with that model, then `agentcfg switch` to it)")
                    + f", or restart vLLM with --served-model-name {model}",
                )
            )
    return result


def weights(args: tuple[str, ...]) -> str | None:
    """The model `vllm serve` was given: its first positional argument (or --model)."""
    if given := flag(args, "--model"):
        return given
    for i, arg in enumerate(args[:3]):
        if os.path.basename(arg) == "vllm" and args[i + 1 : i + 2] == ("serve",):
            rest = args[i + 2 : i + 3]
            return rest[0] if rest and not rest[0].startswith("-") else None
    return None


def _against_profile(server: Process, evidence: str, window: int | None, profile: str | None) -> list[Finding]:
    """A server window larger than the one the agents were given: they compact early and waste it. (Smaller is
    `context-window-too-large`, from the server's own answer.)"""
    value = flag(server.args, "--max-model-len")
    if not window or not value or not value.isdecimal() or int(value) <= window:
        return []
    served = int(value)
    fix = fixes.then(fixes.profile_set(profile, context_window=served), fixes.switch(profile)) if profile else ""
    return [
        Finding(
            "vllm-window-differs",
            WARN,
            None,
            f"vLLM runs with --max-model-len {served:,}, the agents were given a window of {window:,}: they compact "
            "early and waste the rest",
            evidence,
            fix,
            f"give the profile the server's window (the fix), or serve the profile's: `agentcfg serve restart "
            f"{profile or 'PROFILE'}` builds --max-model-len from it",
        )
    ]


def _against_family(server: Process, evidence: str) -> list[Finding]:
    """The server's parsers against its model family's (families.py), the family read from the weights it serves (a
    served name is only a label)."""
    from agentcfg.serve import families  # lazy: only for a vLLM process found serving the agents' port

    family = families.detect(weights(server.args))
    parser = flag(server.args, "--tool-call-parser")
    if family is None or not parser:
        return []
    wrong = []
    if parser != family.tool_parser:
        wrong.append(f"--tool-call-parser {parser} (the family's is {family.tool_parser})")
    reasoning = flag(server.args, "--reasoning-parser")
    if family.reasoning_parser and reasoning != family.reasoning_parser:
        wrong.append(f"--reasoning-parser {reasoning or '(none)'} (the family's is {family.reasoning_parser})")
    if not wrong:
        return []
    return [
        Finding(
            "vllm-parser-differs",
            WARN,
            None,
            f"vLLM serves a {family.name} model with " + "; ".join(wrong) + ": tool calls come back as text, or the "
            "reasoning mixed into the answer",
            evidence,
            "",
            f"restart vLLM with the family's flags: {' '.join(family.flags())} (source: {family.source}); "
            "`agentcfg serve` sets them",
        )
    ]


def unit_findings(units: Sequence[UnitInfo], port: int) -> list[Finding]:
    """The systemd units that start vLLM on the agents' `port`: two enabled (FAIL) crash on each other's busy
    port and, with Restart=, come back every few seconds holding the GPUs; one enabled beside another that
    exists (WARN) is that waiting to happen. agentcfg's own unit is the one kept, else the first found."""
    on_port = [u for u in units if u.port == port]
    enabled = [u for u in on_port if u.enabled]
    if not enabled or len(on_port) < 2:
        return []
    keep = next((u for u in enabled if u.ours), enabled[0])
    extras = [u for u in (enabled if len(enabled) > 1 else on_port) if u is not keep]
    evidence = "; ".join(f"{u.path} ({u.scope}, {'enabled' if u.enabled else 'not enabled'})" for u in on_port)
    summary = (
        f"{len(enabled)} enabled systemd units start vLLM on port {port}: each crashes on the other's busy port "
        "and restarts, holding the GPUs"
        if len(enabled) > 1
        else f"{len(on_port)} systemd units start vLLM on port {port}, {keep.name} enabled: starting another fights it"
    )
    return [
        Finding(
            "vllm-duplicate-units",
            FAIL if len(enabled) > 1 else WARN,
            None,
            summary,
            evidence,
            fixes.then(*(disable_command(u) for u in extras)),
            f"keeps {keep.name}; if you mean another, disable that one instead",
        )
    ]
