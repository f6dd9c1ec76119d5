#!/usr/bin/env python3
"""How fast agentcfg's everyday commands start, as a ratio to a bare `python -c pass` timed beside each run.

Rows: a switch with nothing to change (checked: no file under HOME changes) and `status`, each answered from
fingerprints (agentcfg.replay: the same command has run once since the files last changed) and as the full run
(AGENTCFG_NO_REPLAY=1), a switch that rewrites every agent's files, a switch to a keyed profile, `--help`,
`key get` (Claude Code and Codex run it on every start) and `exec`; for reference `import click` and the floor
(click plus the standard library a full switch imports). Every agentcfg row runs twice: as users have it
(platform directories under a throw-away HOME and XDG_* directories) and with AGENTCFG_HOME set. All rows
interleaved; method: benchmarks/_timing.py.

    python benchmarks/startup.py [--runs 30] [--json | --markdown] [--secret-service] [--peer CMD ...]

--secret-service adds `key get` against a real Secret Service (the session's, else a private
gnome-keyring-daemon): a key stored for a profile of the benchmark's own, removed again afterwards.
--peer CMD (repeatable) times another tool's command in the same loop, for context (e.g. --peer 'codex --version'):
in the same throw-away HOME, with this PATH; any exit status.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _timing
from _timing import Row

# The standard-library modules agentcfg itself imports on the `switch local --all` path beyond what click
# imports (found with `python -X importtime`: the modules whose importer is an agentcfg module; those that
# platformdirs pulls in are its own cost, not the floor's). `floor_drift` checks this list on every run.
# agentcfg reads TOML with tomli (a dependency: compiled, faster) where it is installed, else with tomllib.
FLOOR = ("_blake2", "array", "dataclasses", "fcntl", "gc", "hashlib", "heapq", "json", "locale", "pathlib", "shlex")
TOML = "tomli" if importlib.util.find_spec("tomli") else "tomllib"
FLOOR_CODE = "import " + ", ".join(("click", *FLOOR, TOML))

# The files `switch --all` owns in every agent; a changing switch must rewrite each of them.
AGENT_FILES = (".codex/config.toml", ".qwen/.env", ".qwen/settings.json", ".config/opencode/opencode.json",
               ".claude/settings.json")  # fmt: skip

# A second keyless profile that every agent can take (Claude needs the Anthropic URL; a window, so no note).
OTHER = 'base_url = "http://127.0.0.1:8001/v1"\nanthropic_base_url = "http://127.0.0.1:8001"\nmodel = "other"\n'
OTHER += "context_window = 65536\n"


def no_change(files: list[str]) -> str | None:
    return f"{len(files)} files changed by a switch that should change none" if files else None


def writes_nothing(files: list[str]) -> str | None:
    return f"{len(files)} files changed by a command that only reads" if files else None


def rewrites(*names: str) -> Callable[[list[str]], str | None]:
    def check(files: list[str]) -> str | None:
        missing = [name for name in names if name not in files]
        return f"not rewritten: {', '.join(missing)}" if missing else None

    return check


def answered(words: list[str], environ: dict[str, str]) -> bool:
    """Whether agentcfg would answer `agentcfg WORDS` from fingerprints now (agentcfg.replay.lookup, asked in a
    process started as the timed runs are: same environment, directory and standard streams)."""
    probe = "import os, sys; from agentcfg import replay; print(replay.lookup(sys.argv[1:], os.environ) is not None)"
    done = subprocess.run([sys.executable, "-c", probe, *words], env=environ, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True, check=True)  # fmt: skip
    return done.stdout.strip() == "True"


def floor_drift(agentcfg: str, environ: dict[str, str]) -> tuple[list[str], list[str]]:
    """(FLOOR modules a switch does not import, standard-library modules agentcfg imports that FLOOR lacks)."""

    def imported(argv: list[str]) -> list[tuple[int, str, str | None]]:
        lines = subprocess.run(argv, env=environ, capture_output=True, text=True, check=True).stderr.splitlines()
        names = [line.split("|")[2] for line in lines if line.startswith("import time:") and "cumulative" not in line]
        depth = [(len(name) - len(name.lstrip())) // 2 for name in names]
        rows = []
        for i, name in enumerate(names):  # a module is listed after what it imported: its importer comes later
            parent = next((names[j].strip() for j in range(i + 1, len(names)) if depth[j] < depth[i]), None)
            rows.append((depth[i], name.strip(), parent))
        return rows

    python = [sys.executable, "-X", "importtime"]
    before = {name for _, name, _ in imported([*python, "-c", "import click"])}
    mine: set[str] = set()
    for _, name, parent in imported([*python, agentcfg, "switch", "local", "--all"]):  # environ: no replay
        top = name.split(".")[0]
        by_agentcfg = parent is None or parent.startswith("agentcfg")  # depth 0: imported inside a function
        if name not in before and "." not in name and top in {*sys.stdlib_module_names, TOML} and by_agentcfg:
            mine.add(name)
    mine -= {"encodings"}  # a codec looked up by name, not an import of agentcfg's
    return sorted({*FLOOR, TOML} - mine), sorted(mine - {*FLOOR, TOML})


def main() -> None:
    parser = _timing.arguments(__doc__, runs=30)
    parser.add_argument("--secret-service", action="store_true", help="Also `key get` from a real Secret Service.")
    parser.add_argument("--peer", action="append", default=[], metavar="CMD", help="Another tool's command to time.")
    args = parser.parse_args()
    agentcfg = _timing.agentcfg_script()
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        root = Path(tmp)
        # A stand-in codex that answers --version and exits: `exec` then costs agentcfg's part only.
        (root / "bin").mkdir()
        fake = root / "bin" / "codex"
        fake.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "codex-cli 0.171.0"\nexit 0\n')
        fake.chmod(0o755)
        envs = _timing.environments(root, f"{root}/bin{os.pathsep}" + os.environ.get("PATH", ""), _timing.chosen(args))
        on: dict[str, str] = {}  # the profile every agent is on now, per environment
        changes: dict[str, int] = {}  # how many times a row or a preparation changed the files, per environment
        settled: dict[tuple[str, ...], int] = {}  # a command's last untimed run, at that count

        def put_on(env: str, profile: str, then: str | None = None) -> Callable[[], None]:
            """Untimed, before a row: every agent on `profile`; `then`: where the row itself leaves them."""

            def prepare() -> None:
                if on.get(env) != profile:
                    subprocess.run([agentcfg, "switch", profile, "--all"], env=envs[env], check=True,
                                   capture_output=True)  # fmt: skip
                    changes[env] = changes.get(env, 0) + 1
                if then and then != profile:
                    changes[env] = changes.get(env, 0) + 1
                on[env] = then or profile

            return prepare

        def settle(env: str, profile: str, argv: list[str]) -> Callable[[], None]:
            """Untimed, before a row: every agent on `profile`, and `argv` run once since the files last changed (the
            run that agentcfg.replay records), so that the timed run is answered from fingerprints."""
            on_profile = put_on(env, profile)

            def prepare() -> None:
                on_profile()
                if settled.get((env, *argv)) != changes.get(env, 0):
                    subprocess.run(argv, env=envs[env], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    settled[(env, *argv)] = changes.get(env, 0)
                    if not answered(argv[1:], envs[env]):
                        raise _timing.BenchError(f"[{env}] {shlex.join(argv[1:])}: not answered from fingerprints")

            return prepare

        service, where = (None, "")
        if args.secret_service:
            service, where = stack.enter_context(_timing.secret_service(root))
            if service is None:
                notes.append(f"--secret-service: left out ({where})")
        bench_profile = f"agentcfg-bench-{secrets.token_hex(4)}"  # never a name the keyring already holds
        stored: list[dict[str, str]] = []

        def remove_keys() -> None:  # leave nothing behind in a real keyring, even when a run fails
            for environ in stored:
                done = subprocess.run([agentcfg, "key", "rm", bench_profile], env=environ, capture_output=True)
                if done.returncode:
                    print(f"could not remove the key of {bench_profile}: {done.stderr!r}", file=sys.stderr)

        stack.callback(remove_keys)

        reference = next(iter(envs))  # python -c runs alike in either
        rows: list[Row] = [
            Row("import click (the CLI framework alone)", [sys.executable, "-c", "import click"], reference,
                markdown="`python -c 'import click'` (the CLI framework alone)"),
            Row("floor: click + the standard library a switch imports", [sys.executable, "-c", FLOOR_CODE], reference,
                markdown=f"the floor: `python -c` importing click, {', '.join(FLOOR)} and {TOML}"),
        ]  # fmt: skip
        for peer in args.peer:
            argv = shlex.split(peer)
            if not shutil.which(argv[0]):
                notes.append(f"--peer {peer!r}: left out ({argv[0]} is not on PATH)")
                continue
            rows.append(
                Row(f"peer: {peer}", argv, reference, extra={"PATH": os.environ.get("PATH", "")}, codes=None,
                    markdown=f"`{peer}` (another tool, for context)")
            )  # fmt: skip
        for env, environ in envs.items():
            home = Path(environ["HOME"])
            profiles = _timing.profile_dir(environ)
            profiles.mkdir(parents=True)
            (profiles / "other.toml").write_text(OTHER)
            keyring = {
                "PYTHON_KEYRING_BACKEND": "tests.fake_keyring.FileKeyring",
                "AGENTCFG_TEST_KEYRING": f"{root}/keyring-{env}.json",
                "PYTHONPATH": str(_timing.REPO),
            }
            # taotoken's key stored (so agentcfg records it: the keyed switch exits 0 and asks no keyring)
            _timing.stored_key([agentcfg], {**environ, **keyring}, "taotoken")
            if service is not None:
                (profiles / f"{bench_profile}.toml").write_text(
                    'base_url = "https://gateway.example/v1"\nmodel = "m"\nkey_env = "BENCH_GATEWAY_API_KEY"\n'
                )
                stored.append({**environ, **service})
                _timing.stored_key([agentcfg], {**environ, **service}, bench_profile)
            put_on(env, "local")()
            full = {"AGENTCFG_NO_REPLAY": "1"}
            switch_local, status = [agentcfg, "switch", "local", "--all"], [agentcfg, "status"]
            rows += [
                Row("switch local --all, nothing to change (answered from fingerprints)", switch_local, env,
                    prepare=settle(env, "local", switch_local), watch=home, check=no_change,
                    markdown="`agentcfg switch local --all`, every agent already on local (checked: no file changes), "
                    "answered from fingerprints (agentcfg.replay)"),
                Row("switch local --all, nothing to change, the full run", switch_local, env, extra=full,
                    prepare=put_on(env, "local"), watch=home, check=no_change,
                    markdown="the same, the full run (`AGENTCFG_NO_REPLAY=1`: every file read and parsed; "
                    "the first no-change switch after a change runs so)"),
                Row("switch other --all, from local (every file rewritten)", [agentcfg, "switch", "other", "--all"],
                    env, prepare=put_on(env, "local", then="other"), watch=home, check=rewrites(*AGENT_FILES),
                    markdown="`agentcfg switch other --all` from local (two keyless profiles: every file rewritten)"),
                Row("switch taotoken --all, from local (keyed profile)", [agentcfg, "switch", "taotoken", "--all"],
                    env, prepare=put_on(env, "local", then="taotoken"), watch=home, check=rewrites(*AGENT_FILES[:-1]),
                    markdown="`agentcfg switch taotoken --all` from local (keyed, the keyring not asked; "
                    "Claude skipped: no Anthropic URL)"),
                Row("status (answered from fingerprints)", status, env, prepare=settle(env, "local", status),
                    watch=home, check=writes_nothing,
                    markdown="`agentcfg status`, nothing changed since the last one (answered from fingerprints)"),
                Row("status, the full run", status, env, extra=full, prepare=put_on(env, "local"), watch=home,
                    check=writes_nothing, markdown="`agentcfg status`, the full run (`AGENTCFG_NO_REPLAY=1`)"),
                Row("--help", [agentcfg, "--help"], env, markdown="`agentcfg --help`"),
                Row("key get taotoken (file keyring)", [agentcfg, "key", "get", "taotoken"], env, extra=keyring,
                    markdown="`agentcfg key get taotoken` (tests' file keyring backend)"),
            ]  # fmt: skip
            if service is not None:
                rows.append(
                    Row(f"key get (Secret Service: {where})", [agentcfg, "key", "get", bench_profile], env,
                        extra=service, markdown=f"`agentcfg key get PROFILE` (Secret Service, {where})")
                )  # fmt: skip
            rows += [
                Row("exec local -- true", [agentcfg, "exec", "local", "--", "true"], env,
                    markdown="`agentcfg exec local -- true` (a plain program)"),
                Row("exec local -- codex", [agentcfg, "exec", "local", "--", "codex"], env,
                    markdown="`agentcfg exec local -- codex` (+ the agent's launch; a stand-in codex)"),
            ]  # fmt: skip
        # Interleave the two environments command by command (their files are apart, so neither disturbs the other).
        order = {label: i for i, label in enumerate(dict.fromkeys(row.label for row in rows))}
        rows.sort(key=lambda row: order[row.label])
        _timing.measure(rows, envs, args.runs, args.warm_up)
        first = next(iter(envs))
        put_on(first, "local")()  # the floor is a no-change switch's
        stale, missing = floor_drift(agentcfg, {**envs[first], "AGENTCFG_NO_REPLAY": "1"})  # the full run's floor
        if stale or missing:
            notes.append(
                f"floor check: FLOOR lists {stale or 'nothing'} that a switch no longer imports, and lacks "
                f"{missing or 'nothing'} that agentcfg imports: update FLOOR in benchmarks/startup.py"
            )
        result = _timing.report("benchmarks/startup.py", rows, envs, root, agentcfg, args.runs, notes)
        result["floor_check"] = {"listed_not_imported": stale, "imported_not_listed": missing}

    _timing.emit(
        args,
        result,
        lambda: _timing.markdown(result, rows, "startup-benchmark", _timing.ENV_LABELS, notes),
    )


if __name__ == "__main__":
    _timing.main(main)
