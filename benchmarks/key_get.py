#!/usr/bin/env python3
"""How fast `agentcfg key get` answers (Claude Code and Codex run it on every start), as a ratio to a bare
interpreter start, outside a project and inside one with a set of project profiles.

Same method as benchmarks/startup.py: N interleaved runs in a throw-away HOME, medians, ratio to
`python -c pass` measured in the same run. The key comes from the profile's exported variable (no keyring
backend is asked for a value), so the figure is agentcfg's own cost.

    python benchmarks/key_get.py [--runs 30] [--json] [--baseline SRC]

--baseline SRC also times another checkout's source (e.g. `git archive d4aecd6 | tar -x -C /tmp/old`),
run as `python -m agentcfg` with PYTHONPATH=SRC, interleaved with this one's: a before/after ratio.
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


def timed(argv: list[str], environ: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=environ, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


# The profile lookup alone, in one process (start-up noise left out): `find` where the tree has it (yours and
# the built-ins first, no project file read), else `get` (every profile file, the project's included).
_LOOKUP = """
import os, statistics, sys, time
from agentcfg import profiles
lookup = getattr(profiles, "find", profiles.get)
environ = dict(os.environ)
lookup("taotoken", environ)
samples = []
for _ in range(int(sys.argv[1])):
    start = time.perf_counter()
    lookup("taotoken", environ)
    samples.append(time.perf_counter() - start)
print(statistics.median(samples) * 1000)
"""


def lookup_ms(tree: str, environ: dict[str, str], cwd: str, runs: int) -> float:
    argv = [sys.executable, "-c", _LOOKUP, str(runs)]
    variables = {**environ, "PYTHONPATH": tree}
    done = subprocess.run(argv, env=variables, cwd=cwd, capture_output=True, text=True, check=True)
    return round(float(done.stdout), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--baseline", metavar="SRC", help="Another checkout's source tree to time beside this one.")
    args = parser.parse_args()

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
        # `python -m agentcfg` for both trees, so that the console script's own cost is alike.
        get = [sys.executable, "-m", "agentcfg", "key", "get", "taotoken"]
        here = str(Path(__file__).resolve().parents[1])
        trees = {"": here} | ({" [baseline]": args.baseline} if args.baseline else {})
        commands: dict[str, tuple[list[str], str, dict[str, str]]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], root, environ)
        }
        for label, tree in trees.items():
            with_tree = {**environ, "PYTHONPATH": tree}
            commands[f"key get taotoken, no project{label}"] = (get, str(home), with_tree)
            commands[f"key get taotoken, in a project{label}"] = (get, str(project), with_tree)
        for argv, cwd, variables in commands.values():
            timed(argv, variables, cwd)  # first run: fill caches
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (argv, cwd, variables) in commands.items():
                samples[name].append(timed(argv, variables, cwd))

        lookups = {
            f"profile lookup, {where}{label} (ms per call)": lookup_ms(tree, environ, cwd, 200)
            for label, tree in trees.items()
            for where, cwd in (("no project", str(home)), ("in a project", str(project)))
        }

    base = statistics.median(samples["python -c pass"])
    result = {
        name: {"median_ms": round(statistics.median(s) * 1000, 1), "ratio": round(statistics.median(s) / base, 2)}
        for name, s in samples.items()
    }
    if args.json:
        print(json.dumps({"runs": args.runs, "results": result, "lookups_ms": lookups}, indent=2))
        return
    print(f"{args.runs} runs each, interleaved; ratio = median / median of `python -c pass`")
    for name, figures in result.items():
        print(f"  {name:<54} {figures['median_ms']:>7.1f} ms   {figures['ratio']:>5.2f}x")
    for name, ms in lookups.items():
        print(f"  {name:<54} {ms:>7.3f} ms")


if __name__ == "__main__":
    main()
