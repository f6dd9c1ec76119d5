#!/usr/bin/env python3
"""What `agentcfg key get` costs, as a ratio to a bare interpreter start (the way benchmarks/startup.py does).

`key get` runs inside every Claude Code and qwen-code request that uses a key helper, so its start-up
matters. It now reads two keyring entries (the key and the hosts it is bound to) instead of one. Runs
each command N times, interleaved, in a throw-away HOME, with the keyring the environment chooses
(`--backend file`: tests/fake_keyring.py's FileKeyring, for a machine without a Secret Service).

    python benchmarks/key_get_keyring.py [--runs 30] [--backend file|system] [--json]

To compare with an older tree: PYTHONPATH=/path/to/old/tree python benchmarks/key_get_keyring.py ...
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def timed(argv: list[str], environ: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--backend", choices=["file", "system"], default="file")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    agentcfg = [sys.executable, "-m", "agentcfg"]  # whichever agentcfg PYTHONPATH (or the install) gives
    with tempfile.TemporaryDirectory() as home:
        environ = {
            **{k: v for k, v in os.environ.items() if k in ("PATH", "PYTHONPATH", "DBUS_SESSION_BUS_ADDRESS")},
            "HOME": home,
            "AGENTCFG_HOME": f"{home}/agentcfg",
            "XDG_CONFIG_HOME": f"{home}/.config",
        }
        if args.backend == "file":
            paths = [p for p in (environ.get("PYTHONPATH"), str(REPO)) if p]
            environ |= {
                "PYTHON_KEYRING_BACKEND": "tests.fake_keyring.FileKeyring",
                "AGENTCFG_TEST_KEYRING": f"{home}/keyring.json",
                "PYTHONPATH": os.pathsep.join(paths),
            }
        profiles = Path(home, "agentcfg", "profiles")
        profiles.mkdir(parents=True)
        profile = 'base_url = "http://127.0.0.1:8001/v1"\nmodel = "m"\nkey_env = "WORK_KEY"\n'
        (profiles / "work.toml").write_text(profile)
        subprocess.run([*agentcfg, "key", "set", "work"], input=b"sk-bench-0123456789\n", env=environ, check=True)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "agentcfg --version": [*agentcfg, "--version"],
            "agentcfg key get work": [*agentcfg, "key", "get", "work"],
        }
        timed(commands["agentcfg key get work"], environ)  # first run: fill caches
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                samples[name].append(timed(argv, environ))
        subprocess.run([*agentcfg, "key", "rm", "work"], env=environ, stdout=subprocess.DEVNULL, check=True)

    base = statistics.median(samples["python -c pass"])
    result = {
        name: {"median_ms": round(statistics.median(s) * 1000, 1), "ratio": round(statistics.median(s) / base, 2)}
        for name, s in samples.items()
    }
    if args.json:
        print(json.dumps({"runs": args.runs, "backend": args.backend, "results": result}, indent=2))
        return
    print(f"{args.runs} runs each, interleaved, keyring: {args.backend}; ratio = median / median of `python -c pass`")
    for name, figures in result.items():
        print(f"  {name:<24} {figures['median_ms']:>7.1f} ms   {figures['ratio']:>5.2f}x")


if __name__ == "__main__":
    main()
