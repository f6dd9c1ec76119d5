#!/usr/bin/env python3
"""How long `agentcfg doctor` takes: four agents against a healthy local server, `--offline`, and against
a black hole (accepts connections, never answers) with several deadlines.

Four agents: the four agentcfg first supported (FOUR) are switched to the server, as a user of those four has
them; every other agent has no file, and doctor reports it not configured (the rows keep the meaning they had
when there were four agents in all).

Runs the real console script in throw-away HOMEs against the tests' fault server on 127.0.0.1. The healthy
and offline rows run as users have it (platform directories) and with AGENTCFG_HOME set, interleaved, each
run right after a `python -c pass` of its own (method: benchmarks/_timing.py). The black-hole rows report
how far past its deadline doctor returned (the promise: less than one second); the deadlines interleaved.

    python benchmarks/doctor_deadline.py [--runs 10] [--hole-runs 3] [--json | --markdown]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _timing
from _timing import Row

from tests.fault_server import BlackHole, FaultServer

FOUR = ("codex", "qwen", "opencode", "claude")


def setup(agentcfg: str, environ: dict[str, str], base_url: str, root: str) -> None:
    """The FOUR agents on a profile `bench` at `base_url` (its Anthropic side at `root`)."""
    add = [agentcfg, "profile", "add", "bench", "--base-url", base_url, "--model", "DeepSeek-V4-Flash",
           "--anthropic-base-url", root, "--no-key", "--context-window", "65536", "--force"]  # fmt: skip
    subprocess.run(add, env=environ, check=True, capture_output=True)
    agents = [word for agent in FOUR for word in ("--agent", agent)]
    subprocess.run([agentcfg, "switch", "bench", *agents], env=environ, check=True, capture_output=True)


def main() -> None:
    parser = _timing.arguments(__doc__, runs=10)
    parser.add_argument("--hole-runs", type=int, default=3, help="Runs per deadline against the black hole.")
    parser.add_argument("--deadlines", default="1,2,4", help="doctor --timeout against the black hole (seconds).")
    args = parser.parse_args()
    agentcfg = _timing.agentcfg_script()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        envs = _timing.environments(root, os.environ.get("PATH", ""), _timing.chosen(args))
        for environ in envs.values():
            environ["NO_PROXY"] = "127.0.0.1,localhost"
        healthy: list[Row] = []
        for env in envs:
            healthy += [
                Row("doctor, 4 agents, healthy local server", [agentcfg, "doctor"], env,
                    markdown="`agentcfg doctor`: all four agents against a healthy local server"),
                Row("doctor --offline", [agentcfg, "doctor", "--offline"], env,
                    markdown="`agentcfg doctor --offline` (files, environment and processes; no request)"),
            ]  # fmt: skip
        order = {label: i for i, label in enumerate(dict.fromkeys(row.label for row in healthy))}
        healthy.sort(key=lambda row: order[row.label])  # the two environments interleaved command by command
        with FaultServer() as server:
            for environ in envs.values():
                setup(agentcfg, environ, server.base_url, server.root)
            _timing.measure(healthy, envs, args.runs, args.warm_up)
        hole_env = next(iter(envs))  # users' own set-up where it runs
        hole_rows = [
            Row(f"doctor --timeout {deadline:g}, black hole", [agentcfg, "doctor", "--timeout", f"{deadline:g}"],
                hole_env, codes=(1,), ratio=False, deadline=deadline,
                markdown=f"`agentcfg doctor --timeout {deadline:g}` against a black hole")
            for deadline in map(float, args.deadlines.split(","))
        ]  # fmt: skip
        with BlackHole() as hole:
            setup(agentcfg, envs[hole_env], hole.base_url, hole.base_url.removesuffix("/v1"))
            _timing.measure(hole_rows, envs, args.hole_runs, warm_up=False)  # warm already
        rows = healthy + hole_rows
        notes = [
            f"black hole: {args.hole_runs} runs per deadline, [{hole_env}] only; exit status 1 expected "
            "(doctor reports the server that never answers)"
        ]
        result = _timing.report("benchmarks/doctor_deadline.py", rows, envs, root, agentcfg, args.runs, notes)

    _timing.emit(
        args,
        result,
        lambda: _timing.markdown(
            result,
            rows,
            "doctor-benchmark",
            _timing.ENV_LABELS,
            notes,
        ),
    )


if __name__ == "__main__":
    _timing.main(main)
