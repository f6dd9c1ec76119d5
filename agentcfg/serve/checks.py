"""What is checked before a server starts: its port free, and enough free memory on the GPUs it may use (naming
the processes that hold either)."""

from __future__ import annotations

from agentcfg.doctor.localserver import flag, redacted
from agentcfg.errors import AgentcfgError
from agentcfg.route.server import port_in_use
from agentcfg.serve import command as commands
from agentcfg.serve import gpus, procs

DEFAULT_UTILIZATION = 0.9  # vLLM's --gpu-memory-utilization default: the share of each GPU it takes


def check_port(host: str, port: int) -> None:
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
    if holder.pid is None:
        return f"a process of uid {holder.uid}" if holder.uid is not None else "a process this user cannot see"
    found = procs.read(holder.pid)
    return f"pid {holder.pid} ({redacted(found.args)[:200] if found and found.args else holder.name or '?'})"


def utilization(argv: tuple[str, ...]) -> float:
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
