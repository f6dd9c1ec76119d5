#!/usr/bin/env python3
"""The scaling curve: time and peak memory of `agentcfg switch` per agent file format and file size.

For each case (an agent and the file of it that is made big) and each size, builds the file in a
throw-away HOME (AGENTCFG_HOME and XDG_* inside it) in the shape real users grow it, then runs
`agentcfg switch local --agent AGENT` twice as a child process: the first switch (every owned key
written) and the second (nothing to change). Reported per size: seconds of each, seconds per MB (flat
means linear), and the peak memory of the first switch.

Peak memory is the switch process's own high-water mark of resident memory (VmHWM in /proc/self/status,
read as it exits; ru_maxrss where there is no /proc, which on Linux also counts what the process had
before exec, i.e. this script's memory) minus the same figure for the same first switch on a tiny file
of the same case (the interpreter, click and agentcfg's modules): what the big file costs. It is also
shown as a multiple of the file's size on disk (goal: <= 5x).

Cases:
    codex       ~/.codex/config.toml: a few keys, then thousands of `[projects."..."]` tables
    opencode    opencode.json: a huge `provider` map and as many `mcp` servers
    qwen        ~/.qwen/settings.json: a long file (many mcpServers, a long ui/history section)
    claude      ~/.claude/settings.json: a long permissions.allow list and many hooks
    qwen-env    ~/.qwen/.env: many KEY=value lines

    python benchmarks/scaling.py [--sizes 1,5,10,20,40] [--cases codex,opencode,...] [--json|--markdown]
    python benchmarks/scaling.py --sizes 10,40 --cases codex --runs 7   # medians and p25–p75 of 7 runs
    python benchmarks/scaling.py --profile codex:5     # one first switch in-process under cProfile
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import platform
import pstats
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MB = 1_000_000


def _grow(size: int, head: str, item: Callable[[int], str], tail: str = "", sep: str = "") -> str:
    parts, total, i = [head], len(head) + len(tail), 0
    while total < size:
        part = (sep if i else "") + item(i)
        parts.append(part)
        total += len(part)
        i += 1
    parts.append(tail)
    return "".join(parts)


def opencode_json(size: int) -> str:
    """An opencode.json of about `size` bytes, laid out as opencode writes it (2-space JSON)."""
    config: dict = {"$schema": "https://opencode.ai/config.json", "provider": {}, "mcp": {}}
    sample = {"provider": {f"provider-{i:06d}": _provider(i) for i in range(100)}}
    sample["mcp"] = {f"server-{i:06d}": _mcp(i) for i in range(100)}
    one = len(json.dumps(sample, indent=2)) / 100  # the bytes of one provider and one server, as nested
    for i in range(max(1, int(size / one))):
        config["provider"][f"provider-{i:06d}"] = _provider(i)
        config["mcp"][f"server-{i:06d}"] = _mcp(i)
    return json.dumps(config, indent=2) + "\n"


def _provider(i: int) -> dict:
    return {
        "npm": "@ai-sdk/openai-compatible",
        "name": f"Provider {i}",
        "options": {"baseURL": f"https://gw{i}.example.invalid/v1", "apiKey": "{env:GW_KEY}"},
        "models": {f"model-{i}": {"name": f"Model {i}", "limit": {"context": 131072, "output": 8192}}},
    }


def _mcp(i: int) -> dict:
    return {"type": "local", "command": ["npx", "-y", f"@example/server-{i}"], "enabled": i % 2 == 0}


def codex_toml(size: int) -> str:
    """A config.toml of about `size` bytes: a few top-level keys, then trusted project tables."""
    head = '# big config\nmodel = "gpt-5"\napproval_policy = "on-request"\n\n[tui]\nnotifications = true\n'
    return _grow(size, head, lambda i: f'\n[projects."/home/user/src/some-project-{i:07d}"]\ntrust_level = "trusted"\n')


def qwen_settings(size: int) -> str:
    """A long qwen settings.json: many MCP servers (4-space indent, as hand-edited files often are)."""
    head = '{\n    "ui": {\n        "theme": "GitHub"\n    },\n    "mcpServers": {\n'

    def server(i: int) -> str:
        return (
            f'        "server-{i:07d}": {{\n            "command": "node",\n'
            f'            "args": ["/opt/mcp/server-{i}/index.js", "--port", "{9000 + i % 1000}"],\n'
            f'            "env": {{"TOKEN": "$TOKEN_{i % 97}"}},\n            "timeout": 30000\n        }}'
        )

    return _grow(size, head, server, "\n    }\n}\n", ",\n")


def claude_settings(size: int) -> str:
    """A long Claude settings.json: a permissions.allow list of thousands of rules."""
    head = '{\n  "model": "sonnet",\n  "permissions": {\n    "allow": [\n'
    return _grow(size, head, lambda i: f'      "Bash(npm run task-{i:07d}:*)"', "\n    ]\n  }\n}\n", ",\n")


def qwen_env(size: int) -> str:
    """A long ~/.qwen/.env: many variables, some quoted, some commented."""

    def line(i: int) -> str:
        if i % 10 == 0:
            return f"# group {i // 10}\n"
        return f'PROJECT_{i:07d}_URL="https://svc{i}.example.invalid/api"\n' if i % 2 else f"FLAG_{i:07d}=on\n"

    return _grow(size, "", line)


# case -> (agent, file under HOME, builder)
CASES: dict[str, tuple[str, str, Callable[[int], str]]] = {
    "codex": ("codex", ".codex/config.toml", codex_toml),
    "opencode": ("opencode", ".config/opencode/opencode.json", opencode_json),
    "qwen": ("qwen", ".qwen/settings.json", qwen_settings),
    "claude": ("claude", ".claude/settings.json", claude_settings),
    "qwen-env": ("qwen", ".qwen/.env", qwen_env),
}


def environment(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "AGENTCFG_HOME": str(home / ".config" / "agentcfg"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "NO_PROXY": "127.0.0.1,localhost",
    }


def seed(home: Path, case: str, megabytes: float) -> int:
    _, relative, build = CASES[case]
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    data = build(int(megabytes * MB)).encode()
    path.write_bytes(data)
    return len(data)


# `agentcfg ARGS`, as the console script runs it, that writes its peak resident memory (KiB) to $SCALING_PEAK
_PEAK = """
import atexit, os, re, sys

def peak():
    try:
        with open("/proc/self/status") as status:
            kib = re.search(r"VmHWM:\\s*(\\d+)", status.read()).group(1)
    except OSError:
        import resource
        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with open(os.environ["SCALING_PEAK"], "w") as out:
        out.write(str(kib))

atexit.register(peak)
from agentcfg.cli import main
sys.argv[0] = "agentcfg"
main()
"""


def run(argv: list[str], environ: dict[str, str]) -> tuple[float, int]:
    """(seconds, peak resident bytes) of one `agentcfg` process."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "peak"
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-c", _PEAK, *argv], env={**environ, "SCALING_PEAK": str(report)}, capture_output=True
        )
        elapsed = time.perf_counter() - start
        if result.returncode:
            raise SystemExit(f"agentcfg {' '.join(argv)} failed ({result.returncode}):\n{result.stderr.decode()}")
        return elapsed, int(report.read_text()) * 1024


def switch_twice(case: str, megabytes: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        size = seed(home, case, megabytes)
        environ = environment(home)
        argv = ["switch", "local", "--agent", CASES[case][0]]
        files = sorted(p for p in home.rglob("*") if p.is_file() and "agentcfg" not in str(p.relative_to(home)))
        seeded = [p.read_bytes() for p in files]
        first, peak = run(argv, environ)
        switched = [p.read_bytes() for p in files]
        again, _ = run(argv, environ)
        unchanged = [p.read_bytes() for p in files] == switched
        return {
            "case": case,
            "bytes": size,
            "first_s": first,
            "again_s": again,
            "rss": peak,
            "first_changed": switched != seeded,  # the big file got the owned keys
            "again_unchanged": unchanged,  # the second switch changed 0 bytes
        }


def profile(case: str, megabytes: float) -> None:
    from agentcfg import cli

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        seed(home, case, megabytes)
        os.environ.update(environment(home))
        profiler = cProfile.Profile()
        profiler.enable()
        with contextlib.suppress(SystemExit):  # click exits when the command is done
            cli.main(["switch", "local", "--agent", CASES[case][0]])
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(30)


def repeated(case: str, megabytes: float, runs: int) -> dict:
    """`runs` first and no-change switches: the medians, with p25 and p75 when there are several."""
    each = [switch_twice(case, megabytes) for _ in range(runs)]
    row = dict(each[0])
    for key in ("first_s", "again_s", "rss"):
        values = [r[key] for r in each]
        row[key] = statistics.median(values)
        if runs > 1:
            row[key.replace("_s", "") + "_p25"], _, row[key.replace("_s", "") + "_p75"] = statistics.quantiles(
                values, n=4
            )
    row["first_changed"] = all(r["first_changed"] for r in each)
    row["again_unchanged"] = all(r["again_unchanged"] for r in each)
    return row


def _seconds(row: dict, key: str) -> str:
    spread = f" ({row[key + '_p25']:.2f}–{row[key + '_p75']:.2f})" if key + "_p25" in row else ""
    return f"{row[key + '_s']:.2f}{spread}"


def markdown(rows: list[dict], runs: int) -> str:
    """The README block between `<!-- scaling-benchmark -->` markers."""
    regenerate = shlex.join(["python", "benchmarks/scaling.py", *sys.argv[1:]])
    spread = f"; of {runs} runs each, the median and in brackets the 25th–75th percentile" if runs > 1 else ""
    lines = [
        "<!-- scaling-benchmark -->",
        f"Measured {time.strftime('%Y-%m-%d')} ({platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}) with `{regenerate}`: `agentcfg switch local --agent AGENT` on one big "
        "file of that agent, the first switch (every owned key written) and the second (0 bytes changed: checked)"
        f"{spread}; peak memory is the switch's own high-water mark of resident memory less the same switch's on a "
        "tiny file ([docs/performance.md](docs/performance.md)).",
        "",
        "| file | MB | first switch s | s/MB | no-change s | peak memory MB | × file |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        mb = r["bytes"] / MB
        lines.append(
            f"| {r['case']} | {mb:.1f} | {_seconds(r, 'first')} | {r['first_s'] / mb:.2f} | {_seconds(r, 'again')} "
            f"| {r['peak'] / MB:.0f} | {r['peak'] / r['bytes']:.1f} |"
        )
    return "\n".join([*lines, "<!-- /scaling-benchmark -->"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,5,10,20,40", help="file sizes in MB, comma-separated")
    parser.add_argument("--cases", default=",".join(CASES), help=f"of {', '.join(CASES)}")
    parser.add_argument("--runs", type=int, default=1, help="switches per case and size: medians (p25–p75)")
    parser.add_argument("--profile", metavar="CASE:MB", help="profile one first switch in-process instead")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="the rows as JSON")
    output.add_argument("--markdown", action="store_true", help="a Markdown table (for the README)")
    args = parser.parse_args()
    if args.profile:
        case, megabytes = args.profile.split(":")
        profile(case, float(megabytes))
        return

    plain = not (args.json or args.markdown)
    if plain:
        print(f"{'file':9} {'MB':>5} {'first s':>8} {'s/MB':>6} {'again s':>8} {'peak MB':>8} {'x file':>6}")
    rows = []
    for case in args.cases.split(","):
        floor = min(switch_twice(case, 0.001)["rss"] for _ in range(3))  # the same switch on a tiny file
        for megabytes in (float(s) for s in args.sizes.split(",")):
            row = repeated(case, megabytes, args.runs)
            row["peak"] = max(0, row["rss"] - floor)
            rows.append(row)
            if plain:
                mb = row["bytes"] / MB
                print(
                    f"{case:9} {mb:5.1f} {row['first_s']:8.2f} {row['first_s'] / mb:6.2f} {row['again_s']:8.2f} "
                    f"{row['peak'] / MB:8.0f} {row['peak'] / row['bytes']:6.1f}"
                    + (
                        f"   first {_seconds(row, 'first')}, no-change {_seconds(row, 'again')}"
                        if args.runs > 1
                        else ""
                    ),
                    flush=True,
                )
    if args.json:
        print(json.dumps(rows, indent=2))
    elif args.markdown:
        print(markdown(rows, args.runs))


if __name__ == "__main__":
    main()
