"""What the benchmark scripts share: rows timed interleaved, each against a `python -c pass` of its own.

Every timed command runs right after a bare `python -c pass` in the same environment, and its ratio is
taken to that neighbour: load from other processes on a shared machine moves both alike, so the ratio
holds still where absolute times swing. A row's figure is the median of its ratios, its spread their
25th to 75th percentile. Rows run in a fixed order, round after round (never all runs of one row, then
the next), after one untimed round that creates files and fills caches.

Each row names the environment it runs in (printed once, in full) and the variables it adds, so the
exact command of every figure is printed beside it: `--json` gives the same, `--markdown` the README's table.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PASS = "python -c pass"
KEY = "sk-bench-0123456789abcdef"  # what the benchmarks store and `key get` hands back


class BenchError(Exception):
    """A row did not do what its label says (wrong exit status, files changed or not): no figure is printed."""


def agentcfg_script() -> str:
    """The console script installed beside this interpreter (the one users run), else the one on PATH."""
    beside = Path(sys.executable).with_name("agentcfg")
    return str(beside) if beside.exists() else (shutil.which("agentcfg") or "agentcfg")


def user_environment(root: Path, path: str) -> dict[str, str]:
    """A throw-away user: HOME and every XDG directory agentcfg or platformdirs reads are under `root`."""
    return {
        "HOME": str(root),
        "XDG_CONFIG_HOME": f"{root}/.config",
        "XDG_STATE_HOME": f"{root}/.local/state",
        "XDG_DATA_HOME": f"{root}/.local/share",
        "XDG_CACHE_HOME": f"{root}/.cache",
        "XDG_RUNTIME_DIR": f"{root}/run",
        "PATH": path,
        "LANG": "C.UTF-8",
    }


ENVIRONMENTS = ("user", "agentcfg-home")
ENV_LABELS = {"user": "as users run it (no `AGENTCFG_HOME`)", "agentcfg-home": "`AGENTCFG_HOME` set"}


def environments(root: Path, path: str, names: Sequence[str] = ENVIRONMENTS) -> dict[str, dict[str, str]]:
    """The two ways agentcfg finds its own directories: the platform's (`user`: what users have, AGENTCFG_HOME
    unset) and `agentcfg-home` (AGENTCFG_HOME set, as the tests and the benchmarks used to have it)."""
    envs = {}
    for name in names:
        home = root / name
        (home / "run").mkdir(parents=True, mode=0o700)
        envs[name] = user_environment(home, path)
        if name == "agentcfg-home":
            envs[name]["AGENTCFG_HOME"] = f"{home}/agentcfg"
    return envs


Snapshot = dict[str, tuple[int, int, str]]


def profile_dir(environ: Mapping[str, str]) -> Path:
    """Where agentcfg keeps the user's own profiles in `environ` (agentcfg/env.py's rule)."""
    if "AGENTCFG_HOME" in environ:
        return Path(environ["AGENTCFG_HOME"], "profiles")
    return Path(environ["XDG_CONFIG_HOME"], "agentcfg", "profiles")


def stored_key(agentcfg: Sequence[str], environ: Mapping[str, str], profile: str, key: str = KEY) -> None:
    """Store `key` for `profile` (`agentcfg`: the command that runs it), and check that `key get` hands it back."""
    done = subprocess.run([*agentcfg, "key", "set", profile], input=f"{key}\n", text=True, env=dict(environ),
                          capture_output=True)  # fmt: skip
    got = subprocess.run([*agentcfg, "key", "get", profile], env=dict(environ), capture_output=True, text=True)
    if done.returncode or got.stdout.strip() != key:
        raise BenchError(f"key set/get {profile} did not hand back the key: {done.stderr}{got.stderr}")


def snapshot(root: Path) -> Snapshot:
    """Every file under `root`: size, modification time and digest (a rewrite of the same bytes counts)."""
    files: Snapshot = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            stat, digest = path.stat(), hashlib.sha1(path.read_bytes()).hexdigest()
            files[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns, digest)
    return files


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


@dataclass
class Row:
    label: str  # what it measures, for people
    argv: list[str]
    env: str  # the name of one of the bench's environments
    extra: dict[str, str] = field(default_factory=dict)  # variables beyond that environment's
    cwd: str | None = None
    codes: tuple[int, ...] | None = (0,)  # None: any exit status (another program's, e.g. a peer's)
    prepare: Callable[[], None] | None = None  # untimed, right before each run (e.g. put every agent on local)
    watch: Path | None = None  # count the files each run changes under this directory
    check: Callable[[list[str]], str | None] | None = None  # the files one run changed -> what is wrong, or None
    markdown: str | None = None  # the README table's first cell; None: not in the table
    ratio: bool = True  # False: no `python -c pass` beside it (a deadline, not a start-up, is measured)
    deadline: float | None = None  # seconds: report how far past it each run returned
    seconds: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)  # the `python -c pass` right before each run
    files_changed: list[int] = field(default_factory=list)

    def environ(self, envs: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
        return {**envs[self.env], **self.extra}


def run(argv: Sequence[str], environ: Mapping[str, str], cwd: str | None = None) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=dict(environ), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, done.returncode


def _fail(row: Row, environ: Mapping[str, str], why: str) -> BenchError:
    again = subprocess.run(row.argv, env=dict(environ), cwd=row.cwd, capture_output=True, text=True)
    return BenchError(f"{row.label}: {why}\n  stdout: {again.stdout[-800:]}\n  stderr: {again.stderr[-800:]}")


def measure(rows: Sequence[Row], envs: Mapping[str, Mapping[str, str]], runs: int, warm_up: bool = True) -> None:
    """One untimed round (unless `warm_up` is False), then `runs` rounds of every row in order, each run after
    its own `python -c pass`."""
    for round_ in range(0 if warm_up else 1, runs + 1):
        timed = round_ > 0
        for row in rows:
            environ = row.environ(envs)
            if row.prepare:
                row.prepare()
            if row.ratio:
                base, _ = run([sys.executable, "-c", "pass"], environ, row.cwd)
            before = snapshot(row.watch) if row.watch else None
            seconds, code = run(row.argv, environ, row.cwd)
            if row.codes is not None and code not in row.codes:
                raise _fail(row, environ, f"exit status {code}, expected {' or '.join(map(str, row.codes))}")
            if row.watch and before is not None:
                files = changed(before, snapshot(row.watch))
                if row.check and (wrong := row.check(files)):
                    raise BenchError(f"{row.label}: {wrong} (files changed: {files or 'none'})")
                if timed:
                    row.files_changed.append(len(files))
            if timed:
                row.seconds.append(seconds)
                if row.ratio:
                    row.baseline.append(base)


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """25th percentile, median, 75th percentile (one value: all three the same)."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    low, mid, high = statistics.quantiles(values, n=4, method="inclusive")
    return low, mid, high


def command_text(row: Row, names: Mapping[str, str]) -> str:
    """`[env] VAR=value ... argv`, with the temporary directory and the programs' paths written short."""
    words = [f"{key}={value}" for key, value in row.extra.items()] + list(row.argv)
    text = f"[{row.env}] " + " ".join(shlex.quote(word) for word in words)
    if row.cwd:
        text += f"   (in {row.cwd})"
    for long, short in names.items():
        text = text.replace(long, short)
    return text


def summary(row: Row, names: Mapping[str, str]) -> dict[str, object]:
    low, mid, high = quartiles(row.seconds)
    figures: dict[str, object] = {
        "label": row.label,
        "command": command_text(row, names),
        "env": row.env,
        "runs": len(row.seconds),
        "median_ms": round(mid * 1000, 1),
        "p25_ms": round(low * 1000, 1),
        "p75_ms": round(high * 1000, 1),
    }
    if row.ratio:
        ratios = [seconds / base for seconds, base in zip(row.seconds, row.baseline, strict=True)]
        r_low, r_mid, r_high = quartiles(ratios)
        figures |= {
            "ratio": round(r_mid, 2),
            "ratio_p25": round(r_low, 2),
            "ratio_p75": round(r_high, 2),
            "ratio_of_medians": round(mid / statistics.median(row.baseline), 2),
        }
    if row.deadline is not None:
        past = [seconds - row.deadline for seconds in row.seconds]
        figures |= {
            "median_past_deadline_s": round(statistics.median(past), 2),
            "worst_past_deadline_s": round(max(past), 2),
        }
        figures["note"] = f"past the deadline: median {statistics.median(past):+.2f} s, worst {max(past):+.2f} s"
        figures["markdown_cell"] = (
            f"worst {max(past):+.2f} s past the deadline (median {statistics.median(past):+.2f} s)"
        )
    if row.watch is not None:
        figures["files_changed"] = sorted(set(row.files_changed))
    return figures


def baseline_summary(rows: Sequence[Row]) -> dict[str, object]:
    pooled = [base for row in rows for base in row.baseline]
    low, mid, high = quartiles(pooled)
    return {
        "label": PASS,
        "command": f"{PASS} (right before every timed command, in its environment)",
        "runs": len(pooled),
        "median_ms": round(mid * 1000, 1),
        "p25_ms": round(low * 1000, 1),
        "p75_ms": round(high * 1000, 1),
    }


def names(root: Path, agentcfg: str) -> dict[str, str]:
    """Long strings printed short; the legend says what each stands for."""
    return {str(root): "$T", agentcfg: "agentcfg", sys.executable: "python", str(REPO): "$REPO"}


def legend(root: Path, agentcfg: str) -> list[str]:
    return [
        f"python = {sys.executable} (Python {platform.python_version()})",
        f"agentcfg = {agentcfg}",
        f"$REPO = {REPO}",
        "$T = a fresh temporary directory, removed afterwards (the real HOME is never read or written)",
    ]


def report(
    title: str,
    rows: Sequence[Row],
    envs: Mapping[str, Mapping[str, str]],
    root: Path,
    agentcfg: str,
    runs: int,
    notes: Sequence[str] = (),
) -> dict[str, object]:
    short = names(root, agentcfg)
    return {
        "title": title,
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores",
        "runs": runs,
        "method": (
            "rows interleaved round after round after one untimed round; every timed command right after a "
            "`python -c pass` in its environment; ratio = median of command / that `python -c pass`, "
            "spread = 25th-75th percentile of the same ratios"
        ),
        "legend": legend(root, agentcfg),
        "environments": {
            name: " ".join(f"{key}={shlex.quote(value)}" for key, value in sorted(env.items()))
            .replace(str(root), "$T")
            .replace(os.environ.get("PATH", "\0"), "$PATH")
            for name, env in envs.items()
        },
        "baseline": baseline_summary([row for row in rows if row.ratio]),
        "rows": [summary(row, short) for row in rows],
        "notes": list(notes),
    }


def print_text(result: Mapping[str, object]) -> None:
    runs = f"{result['runs']} run{'s' * (result['runs'] != 1)}"
    print(f"{result['title']}: {runs} of each row, {result['date']}, {result['machine']}")
    print(f"method: {result['method']}")
    for line in result["legend"]:  # type: ignore[attr-defined]
        print(f"  {line}")
    print("environments:")
    for name, text in result["environments"].items():  # type: ignore[attr-defined]
        print(f"  [{name}] {text}")
    base = result["baseline"]
    assert isinstance(base, dict)
    print(
        f"\n{'row':<76} {'median ms (p25-p75)':>22}  {'ratio (p25-p75)':>18}\n"
        f"{base['label']:<76} {_ms(base):>22}  {'1.00x':>18}   ({base['runs']} runs)"
    )
    for row in result["rows"]:  # type: ignore[attr-defined]
        ratio = f"{row['ratio']:.2f}x ({row['ratio_p25']:.2f}-{row['ratio_p75']:.2f})" if "ratio" in row else ""
        extra = f"   files changed per run: {row['files_changed']}" if "files_changed" in row else ""
        extra += f"   {row['note']}" if row.get("note") else ""
        print(f"{row['label'] + ' [' + row['env'] + ']':<76} {_ms(row):>22}  {ratio:>18}{extra}")
        print(f"    $ {row['command']}")
    for note in result["notes"]:  # type: ignore[attr-defined]
        print(note)


def _ms(figures: Mapping[str, object]) -> str:
    return f"{figures['median_ms']:.1f} ({figures['p25_ms']:.1f}-{figures['p75_ms']:.1f})"


def markdown(
    result: Mapping[str, object],
    rows: Sequence[Row],
    marker: str,
    columns: Mapping[str, str],
    notes: Sequence[str] = (),
) -> str:
    """The README block between `<!-- marker -->` and `<!-- /marker -->`: one line per command, one column per
    environment (`columns`: environment name -> header), each cell the median ratio and its spread."""
    columns = {name: header for name, header in columns.items() if any(row.env == name for row in rows)}
    table: dict[str, dict[str, str]] = {}
    for row, figures in zip(rows, result["rows"], strict=True):  # type: ignore[call-overload]
        if row.markdown is None:
            continue
        cell = (
            f"{figures['ratio']:.1f}× ({figures['ratio_p25']:.1f}–{figures['ratio_p75']:.1f})"
            if "ratio" in figures
            else figures.get("markdown_cell", "")
        )
        table.setdefault(row.markdown, {})[row.env] = cell
    base = result["baseline"]
    assert isinstance(base, dict)
    regenerate = shlex.join(["python", f"benchmarks/{Path(sys.argv[0]).name}", *sys.argv[1:]])
    lines = [
        f"<!-- {marker} -->",
        f"Measured {result['date']} ({result['machine']}, Python {platform.python_version()}) with "
        f"`{regenerate}`: {result['runs']} interleaved runs, each command right after a `python -c pass` of its own "
        f"(median {base['median_ms']:.1f} ms); the median ratio to it, and in brackets the 25th–75th percentile.",
        "",
        "| command | " + " | ".join(columns.values()) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for command, cells in table.items():
        lines.append(f"| {command} | " + " | ".join(cells.get(name, "") for name in columns) + " |")
    lines += [*(["", *notes] if notes else []), f"<!-- /{marker} -->"]
    return "\n".join(lines)


def arguments(doc: str, runs: int) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--runs", type=int, default=runs, help=f"Timed rounds (default {runs}).")
    parser.add_argument(
        "--envs",
        choices=["both", *ENVIRONMENTS],
        default="both",
        help="Run agentcfg as users have it (user), with AGENTCFG_HOME set (agentcfg-home), or both (default).",
    )
    parser.add_argument(
        "--no-warm-up", dest="warm_up", action="store_false", help="No untimed round first (a quick check only)."
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="The figures and commands as JSON.")
    output.add_argument("--markdown", action="store_true", help="The README's block, markers included.")
    return parser


def main(run: Callable[[], None]) -> None:
    """Run a script's main; a row that is not what its label says ends it with the reason, no figures."""
    try:
        run()
    except BenchError as error:
        sys.exit(f"{Path(sys.argv[0]).name}: {error}")


def chosen(args: argparse.Namespace) -> tuple[str, ...]:
    return ENVIRONMENTS if args.envs == "both" else (args.envs,)


def emit(args: argparse.Namespace, result: Mapping[str, object], block: Callable[[], str]) -> None:
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    elif args.markdown:
        print(block())
    else:
        print_text(result)


# A Secret Service for `key get` against the real backend: the session's when one answers, else a private
# bus with gnome-keyring-daemon in the temporary directory (tests/secret_service.py's set-up), else none.


def _has_secrets(environ: Mapping[str, str]) -> bool:
    if not shutil.which("dbus-send"):
        return False
    reply = subprocess.run(
        ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
         "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"],
        env=dict(environ), capture_output=True, text=True, timeout=10,
    )  # fmt: skip
    return reply.returncode == 0 and reply.stdout.split()[-1:] == ["true"]


@contextmanager
def secret_service(root: Path) -> Iterator[tuple[dict[str, str], str] | tuple[None, str]]:
    """(the variables that reach it, where it is), or (None, why there is none)."""
    session = {k: v for k, v in os.environ.items() if k in ("DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR")}
    if "DBUS_SESSION_BUS_ADDRESS" in session and _has_secrets(session):
        yield {"DBUS_SESSION_BUS_ADDRESS": session["DBUS_SESSION_BUS_ADDRESS"]}, "the session's Secret Service"
        return
    sys.path.insert(0, str(REPO))
    from tests.secret_service import BUS_CONFIG, NEEDED, PASSWORD, _wait_for_owner

    if missing := [name for name in NEEDED if not shutil.which(name)]:
        yield None, f"no Secret Service on the session bus, and no {', '.join(missing)} to start one"
        return
    home, runtime = root / "keyring-home", root / "keyring-run"
    home.mkdir()
    runtime.mkdir(mode=0o700)
    (root / "bus.conf").write_text(BUS_CONFIG.format(run=runtime))
    env = {**user_environment(home, os.environ.get("PATH", "/usr/bin:/bin")), "XDG_RUNTIME_DIR": str(runtime)}
    bus = subprocess.Popen(
        ["dbus-daemon", f"--config-file={root / 'bus.conf'}", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True,
    )  # fmt: skip
    assert bus.stdout is not None
    env["DBUS_SESSION_BUS_ADDRESS"] = bus.stdout.readline().strip()
    daemon = subprocess.Popen(
        ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    assert daemon.stdin is not None
    daemon.stdin.write(PASSWORD.encode())
    daemon.stdin.close()
    try:
        _wait_for_owner(env)
        yield {"DBUS_SESSION_BUS_ADDRESS": env["DBUS_SESSION_BUS_ADDRESS"]}, "a private gnome-keyring-daemon"
    finally:
        bus.terminate()  # the daemon exits with its bus
        bus.wait(10)
        daemon.terminate()
        daemon.wait(10)
