#!/usr/bin/env python3
"""How fast `agentcfg key get` answers (Claude Code and Codex run it on every start), as a ratio to a bare
interpreter start, outside a project and inside one with a set of project profiles.

Same method as benchmarks/startup.py: N interleaved runs in a throw-away HOME, medians, ratio to
`python -c pass` measured in the same run. The key comes from the profile's exported variable (no keyring
backend is asked for a value), so the figure is agentcfg's own cost.

    python benchmarks/key_get.py [--runs 30] [--json]
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


def timed(argv: list[str], environ: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=environ, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    agentcfg = shutil.which("agentcfg") or str(Path(sys.executable).with_name("agentcfg"))
    with tempfile.TemporaryDirectory() as root:
        home = Path(root, "home")
        project = Path(root, "repo")
        environ = {
            "HOME": str(home),
            "AGENTCFG_HOME": f"{home}/agentcfg",
            "XDG_CONFIG_HOME": f"{home}/.config",
            "PATH": os.environ.get("PATH", ""),
            "TAOTOKEN_API_KEY": "sk-bench-0123456789abcdef",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",  # no OS keyring: the variable answers
        }
        user = home / "agentcfg" / "profiles"
        user.mkdir(parents=True)
        for i in range(20):  # a user with a few profiles of their own
            (user / f"mine{i}.toml").write_text(f'base_url = "http://127.0.0.1:{8100 + i}/v1"\nmodel = "m{i}"\n')
        team = project / ".agentcfg" / "profiles"
        team.mkdir(parents=True)
        for i in range(20):  # and a repository with a set of its own
            (team / f"team{i}.toml").write_text(
                f'base_url = "http://127.0.0.1:{8200 + i}/v1"\nmodel = "t{i}"\nkey_env = "TEAM{i}_KEY"\n'
            )
        get = [agentcfg, "key", "get", "taotoken"]
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], root),
            "agentcfg key get taotoken (no project)": (get, str(home)),
            "agentcfg key get taotoken (in a project)": (get, str(project)),
        }
        for argv, cwd in commands.values():
            timed(argv, environ, cwd)  # first run: fill caches
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (argv, cwd) in commands.items():
                samples[name].append(timed(argv, environ, cwd))

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
        print(f"  {name:<44} {figures['median_ms']:>7.1f} ms   {figures['ratio']:>5.2f}x")


if __name__ == "__main__":
    main()
