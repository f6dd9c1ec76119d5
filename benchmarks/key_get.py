#!/usr/bin/env python3
"""How fast `agentcfg key get` answers (Claude Code and Codex run it on every start), as a ratio to a bare
interpreter start, outside a project and inside one with a set of project profiles.

Same method as benchmarks/startup.py (benchmarks/_timing.py): throw-away HOMEs, every row as users have it
(platform directories) and with AGENTCFG_HOME set, all interleaved, each run right after a `python -c pass` of
its own; medians and the 25th-75th percentile of the ratios. By default the key comes from the profile's
exported variable (no keyring backend is asked for a value), so the figure is agentcfg's own cost;
`--keyring file` stores it in tests/fake_keyring.py's FileKeyring and `--keyring system` in a real Secret
Service (the session's, else a private gnome-keyring-daemon): under a profile of the benchmark's own, removed
again afterwards. The key and the hosts it is bound to are two entries, so two lookups.

    python benchmarks/key_get.py [--runs 30] [--json | --markdown] [--keyring none|file|system] [--baseline SRC]

--baseline SRC also times another checkout's source (e.g. `git archive d4aecd6 | tar -x -C /tmp/old`),
run as `python -m agentcfg` with PYTHONPATH=SRC, interleaved with this one's: a before/after ratio.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _timing
from _timing import KEY, Row

WHERE = {"none": "the profile's variable", "file": "tests' file keyring", "system": "a Secret Service"}

# The profile lookup alone, in one process (start-up noise left out): `find` where the tree has it (yours and
# the built-ins first, no project file read), else `get` (every profile file, the project's included).
_LOOKUP = """
import os, statistics, sys, time
from agentcfg import profiles
lookup = getattr(profiles, "find", profiles.get)
environ = dict(os.environ)
lookup(sys.argv[2], environ)
samples = []
for _ in range(int(sys.argv[1])):
    start = time.perf_counter()
    lookup(sys.argv[2], environ)
    samples.append(time.perf_counter() - start)
print(statistics.median(samples) * 1000)
"""


def lookup_ms(environ: dict[str, str], cwd: str, profile: str, runs: int) -> float:
    argv = [sys.executable, "-c", _LOOKUP, str(runs), profile]
    done = subprocess.run(argv, env=environ, cwd=cwd, capture_output=True, text=True, check=True)
    return round(float(done.stdout), 3)


def main() -> None:
    parser = _timing.arguments(__doc__, runs=30)
    parser.add_argument("--baseline", metavar="SRC", help="Another checkout's source tree to time beside this one.")
    parser.add_argument("--keyring", choices=list(WHERE), default="none", help="Where the key is.")
    args = parser.parse_args()
    here = str(_timing.REPO)
    # `python -m agentcfg` for both trees, so that the console script's own cost is alike.
    agentcfg = [sys.executable, "-m", "agentcfg"]
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        root = Path(tmp)
        envs = _timing.environments(root, os.environ.get("PATH", ""), _timing.chosen(args))
        project = root / "repo"
        team = project / ".agentcfg" / "profiles"
        team.mkdir(parents=True)
        for i in range(20):  # a repository with a set of profiles of its own
            (team / f"team{i}.toml").write_text(
                f'base_url = "http://127.0.0.1:{8200 + i}/v1"\nmodel = "t{i}"\nkey_env = "TEAM{i}_KEY"\n'
            )
        profile = "taotoken"
        if args.keyring == "none":  # no OS keyring: the variable answers
            keyring = {"TAOTOKEN_API_KEY": KEY, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
        elif args.keyring == "file":
            keyring = {
                "PYTHON_KEYRING_BACKEND": "tests.fake_keyring.FileKeyring",
                "AGENTCFG_TEST_KEYRING": f"{root}/keyring.json",
            }
        else:
            service, where = stack.enter_context(_timing.secret_service(root))
            if service is None:
                raise SystemExit(f"--keyring system: {where}")
            notes.append(f"key stored in {where}")
            keyring = service
            profile = f"agentcfg-bench-{secrets.token_hex(4)}"  # never a name the keyring already holds
        for environ in envs.values():
            user = _timing.profile_dir(environ)
            user.mkdir(parents=True)
            for i in range(20):  # a user with a few profiles of their own
                (user / f"mine{i}.toml").write_text(f'base_url = "http://127.0.0.1:{8100 + i}/v1"\nmodel = "m{i}"\n')
            if profile != "taotoken":
                (user / f"{profile}.toml").write_text(
                    'base_url = "https://gateway.example/v1"\nmodel = "m"\nkey_env = "BENCH_GATEWAY_API_KEY"\n'
                )
        shown = "PROFILE" if profile != "taotoken" else profile  # the benchmark's own name changes every run
        trees = {"": here} | ({" [baseline]": args.baseline} if args.baseline else {})
        rows: list[Row] = []
        for label, tree in trees.items():
            extra = {**keyring, "PYTHONPATH": tree}
            for env, environ in envs.items():
                if args.keyring != "none" and not label:
                    if args.keyring == "system":  # leave nothing behind in a real keyring, even when a run fails
                        stack.callback(
                            subprocess.run, [*agentcfg, "key", "rm", profile], env={**environ, **extra}, check=False,
                            capture_output=True,
                        )  # fmt: skip
                    _timing.stored_key(agentcfg, {**environ, **extra}, profile)
                for where, cwd in (("no project", str(environ["HOME"])), ("in a project", str(project))):
                    rows.append(
                        Row(f"key get {shown}, {where}{label}", [*agentcfg, "key", "get", profile], env,
                            extra=extra, cwd=cwd,
                            markdown=f"`agentcfg key get {shown}`, {where}{label} (key from {WHERE[args.keyring]})")
                    )  # fmt: skip
        order = {label: i for i, label in enumerate(dict.fromkeys(row.label for row in rows))}
        rows.sort(key=lambda row: order[row.label])  # the two environments interleaved command by command
        _timing.measure(rows, envs, args.runs, args.warm_up)
        lookups = {
            f"profile lookup, {where}{label} [{env}] (ms per call, in one process)": lookup_ms(
                {**environ, **keyring, "PYTHONPATH": tree}, cwd, profile, 200
            )
            for label, tree in trees.items()
            for env, environ in envs.items()
            for where, cwd in (("no project", environ["HOME"]), ("in a project", str(project)))
        }
        result = _timing.report("benchmarks/key_get.py", rows, envs, root, " ".join(agentcfg), args.runs, notes)
        result["keyring"] = args.keyring
        result["lookups_ms"] = lookups
        result["notes"] = [*notes, *(f"{name}: {ms:.3f} ms" for name, ms in lookups.items())]

    _timing.emit(
        args,
        result,
        lambda: _timing.markdown(
            result,
            rows,
            "key-get-benchmark",
            _timing.ENV_LABELS,
        ),
    )


if __name__ == "__main__":
    _timing.main(main)
