#!/usr/bin/env python3
"""How long `agentcfg doctor` takes: all four agents against a healthy local server, and against a
black hole (accepts connections, never answers) with several deadlines.

Runs the real console script in a throw-away HOME against the tests' fault server on 127.0.0.1 and
prints medians, the ratio to `python -c pass` in the same run, and for the black hole how far past
its deadline doctor returned (the promise: less than one second).

    python benchmarks/doctor_deadline.py [--runs 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fault_server import BlackHole, FaultServer


def timed(argv: list[str], environ: dict[str, str]) -> tuple[float, int]:
    start = time.perf_counter()
    result = subprocess.run(argv, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, result.returncode


def setup(agentcfg: str, environ: dict[str, str], base_url: str, root: str) -> None:
    add = [
        agentcfg,
        "profile",
        "add",
        "bench",
        "--base-url",
        base_url,
        "--model",
        "DeepSeek-V4-Flash",
        "--anthropic-base-url",
        root,
        "--no-key",
        "--context-window",
        "65536",
        "--force",
    ]
    subprocess.run(add, env=environ, check=True, capture_output=True)
    subprocess.run([agentcfg, "switch", "bench", "--all"], env=environ, check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    agentcfg = shutil.which("agentcfg") or str(Path(sys.executable).with_name("agentcfg"))
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as home:
        environ = {
            "HOME": home,
            "AGENTCFG_HOME": f"{home}/agentcfg",
            "XDG_CONFIG_HOME": f"{home}/.config",
            "PATH": os.environ.get("PATH", ""),
            "NO_PROXY": "127.0.0.1,localhost",
        }
        base = [timed([sys.executable, "-c", "pass"], environ)[0] for _ in range(args.runs)]
        with FaultServer() as server:
            setup(agentcfg, environ, server.base_url, server.root)
            healthy = []
            for _ in range(args.runs):
                elapsed, code = timed([agentcfg, "doctor"], environ)
                assert code == 0, "doctor found a failure against the healthy server"
                healthy.append(elapsed)
        results["python -c pass"] = {"median_s": statistics.median(base)}
        results["doctor, 4 agents, healthy local server"] = {"median_s": statistics.median(healthy)}
        with BlackHole() as hole:
            setup(agentcfg, environ, hole.base_url, hole.base_url.removesuffix("/v1"))
            for deadline in (1, 2, 4):
                runs = [timed([agentcfg, "doctor", "--timeout", str(deadline)], environ) for _ in range(3)]
                worst = max(elapsed for elapsed, _ in runs)
                assert all(code == 1 for _, code in runs), "doctor did not report the black hole"
                results[f"doctor --timeout {deadline}, black hole"] = {
                    "median_s": statistics.median(e for e, _ in runs),
                    "worst_over_deadline_s": worst - deadline,
                }
    floor = results["python -c pass"]["median_s"]
    for figures in results.values():
        figures["ratio"] = figures["median_s"] / floor
    if args.json:
        print(json.dumps({"runs": args.runs, "results": results}, indent=2))
        return
    print(f"{args.runs} runs (black hole: 3 per deadline); ratio = median / median of `python -c pass`")
    for name, figures in results.items():
        over = figures.get("worst_over_deadline_s")
        extra = f"   worst {over:+.2f} s past the deadline" if over is not None else ""
        print(f"  {name:<42} {figures['median_s'] * 1000:>8.1f} ms  {figures['ratio']:>6.1f}x{extra}")


if __name__ == "__main__":
    main()
