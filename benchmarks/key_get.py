#!/usr/bin/env python3
"""How fast `agentcfg key get` answers (Claude Code and Codex run it on every start), as a ratio to a bare
interpreter start, outside a project and inside one with a set of project profiles.

Same method as benchmarks/startup.py: N interleaved runs in a throw-away HOME, medians, ratio to
`python -c pass` measured in the same run. By default the key comes from the profile's exported variable
(no keyring backend is asked for a value), so the figure is agentcfg's own cost; `--keyring file` stores it
in tests/fake_keyring.py's FileKeyring and `--keyring system` in the keyring this environment chooses (a
Secret Service: the key and the hosts it is bound to are two entries, so two lookups).

    python benchmarks/key_get.py [--runs 30] [--json] [--keyring none|file|system] [--baseline SRC]

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

KEY = "sk-bench-0123456789abcdef"


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
    parser.add_argument("--keyring", choices=["none", "file", "system"], default="none", help="Where the key is.")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as root:
        home = Path(root, "home")
        project = Path(root, "repo")
        environ = {
            "HOME": str(home),
            "AGENTCFG_HOME": f"{home}/agentcfg",
            "XDG_CONFIG_HOME": f"{home}/.config",
            "PATH": os.environ.get("PATH", ""),
        }
        here = str(Path(__file__).resolve().parents[1])
        if args.keyring == "none":  # no OS keyring: the variable answers
            environ |= {"TAOTOKEN_API_KEY": KEY, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
        elif args.keyring == "file":
            environ |= {
                "PYTHON_KEYRING_BACKEND": "tests.fake_keyring.FileKeyring",
                "AGENTCFG_TEST_KEYRING": f"{root}/keyring.json",
                "PYTHONPATH": here,
            }
        else:
            environ |= {
                k: v for k, v in os.environ.items() if k in ("DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND")
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
        agentcfg = [sys.executable, "-m", "agentcfg"]
        get = [*agentcfg, "key", "get", "taotoken"]
        if args.keyring != "none":
            stored = {**environ, "PYTHONPATH": environ.get("PYTHONPATH", here)}
            subprocess.run(
                [*agentcfg, "key", "set", "taotoken"],
                input=f"{KEY}\n".encode(),
                env=stored,
                check=True,
                stdout=subprocess.DEVNULL,
            )
        trees = {"": here} | ({" [baseline]": args.baseline} if args.baseline else {})
        commands: dict[str, tuple[list[str], str, dict[str, str]]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], root, environ)
        }
        for label, tree in trees.items():
            with_tree = {
                **environ,
                "PYTHONPATH": os.pathsep.join(dict.fromkeys([tree, environ.get("PYTHONPATH", tree)])),
            }
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
        if args.keyring == "system":  # leave nothing behind in the user's keyring
            subprocess.run([*agentcfg, "key", "rm", "taotoken"], env=stored, stdout=subprocess.DEVNULL, check=True)

    base = statistics.median(samples["python -c pass"])
    result = {
        name: {"median_ms": round(statistics.median(s) * 1000, 1), "ratio": round(statistics.median(s) / base, 2)}
        for name, s in samples.items()
    }
    if args.json:
        print(
            json.dumps({"runs": args.runs, "keyring": args.keyring, "results": result, "lookups_ms": lookups}, indent=2)
        )
        return
    print(
        f"{args.runs} runs each, interleaved, key from: {args.keyring if args.keyring != 'none' else 'the variable'}; "
        "ratio = median / median of `python -c pass`"
    )
    for name, figures in result.items():
        print(f"  {name:<54} {figures['median_ms']:>7.1f} ms   {figures['ratio']:>5.2f}x")
    for name, ms in lookups.items():
        print(f"  {name:<54} {ms:>7.3f} ms")


if __name__ == "__main__":
    main()
