#!/usr/bin/env python3
"""How fast `agentcfg switch`, `status` and `exec` start, as a ratio to a bare interpreter start.

Runs each command N times, interleaved (so machine noise hits all alike), in a throw-away HOME, and
prints medians and the ratio to `python -c pass` measured in the same run. Absolute times on shared
machines are noise; the ratio is what the README quotes.

    python benchmarks/startup.py [--runs 30] [--json]
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


def timed(argv: list[str], environ: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    agentcfg = shutil.which("agentcfg") or str(Path(sys.executable).with_name("agentcfg"))
    with tempfile.TemporaryDirectory() as home:
        environ = {
            "HOME": home,
            "AGENTCFG_HOME": f"{home}/agentcfg",
            "XDG_CONFIG_HOME": f"{home}/.config",
            "XDG_RUNTIME_DIR": f"{home}/run",
            "PATH": f"{home}/bin{os.pathsep}" + os.environ.get("PATH", ""),
        }
        # A stand-in codex that answers --version and exits: `exec` then costs agentcfg's part only.
        Path(home, "bin").mkdir()
        fake = Path(home, "bin", "codex")
        fake.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "codex-cli 0.171.0"\nexit 0\n')
        fake.chmod(0o755)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import click'": [sys.executable, "-c", "import click"],  # the CLI framework alone
            "agentcfg switch local --all": [agentcfg, "switch", "local", "--all"],
            "agentcfg switch (alternating)": None,
            "agentcfg switch taotoken --all": [agentcfg, "switch", "taotoken", "--all"],  # keyed, key recorded
            "agentcfg status": [agentcfg, "status"],
            "agentcfg exec local -- true": [agentcfg, "exec", "local", "--", "true"],  # a plain program
            "agentcfg exec local -- codex": [agentcfg, "exec", "local", "--", "codex"],  # + the agent's launch
        }
        # taotoken's key counts as stored (agentcfg's record of stored keys): the keyring is not asked, and the
        # switch exits 0, not 4 (switched, key missing)
        Path(home, "agentcfg", "state").mkdir(parents=True)
        Path(home, "agentcfg", "state", "stored-keys").write_text("taotoken\n")
        profiles = Path(home, "agentcfg", "profiles")
        profiles.mkdir(parents=True)
        (profiles / "other.toml").write_text('base_url = "http://127.0.0.1:8001/v1"\nmodel = "other"\n')
        timed(commands["agentcfg switch local --all"], environ)  # first run: create files, fill caches
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for i in range(args.runs):
            for name, argv in commands.items():
                if argv is None:  # a real switch that changes every file each time (both profiles keyless)
                    argv = [agentcfg, "switch", "other" if i % 2 == 0 else "local", "--all"]
                samples[name].append(timed(argv, environ))

    base = statistics.median(samples["python -c pass"])
    result = {
        name: {"median_ms": round(statistics.median(s) * 1000, 1), "ratio": round(statistics.median(s) / base, 2)}
        for name, s in samples.items()
    }
    if args.json:
        print(json.dumps({"runs": args.runs, "results": result}, indent=2))
        return
    print(f"{args.runs} runs each, interleaved; ratio = median / median of `python -c pass`")
    for name, figures in result.items():
        print(f"  {name:<32} {figures['median_ms']:>7.1f} ms   {figures['ratio']:>5.2f}x")


if __name__ == "__main__":
    main()
