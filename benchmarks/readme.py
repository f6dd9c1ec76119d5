#!/usr/bin/env python3
"""Regenerate the figures in README.md's "Speed" section from the benchmark scripts themselves.

Runs benchmarks/startup.py (with the real Secret Service rows), benchmarks/doctor_deadline.py and
benchmarks/scaling.py (1 to 40 MB files) with --markdown and puts each block between its markers in README.md
(`<!-- startup-benchmark -->`, ...).
Run it on an idle machine: the ratios are to a `python -c pass` in the same run, but a busy machine
still widens them.

    python benchmarks/readme.py [--runs 30] [--doctor-runs 15] [--scaling-runs 3] [--check]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE.parent / "README.md"


def block(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(HERE / script), *args, "--markdown"], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"benchmarks/{script} failed:\n{done.stderr}")
    return done.stdout.strip()


def replace(text: str, new: str) -> str:
    marker = re.match(r"<!-- ([\w-]+) -->", new)
    assert marker, new[:80]
    name = marker.group(1)
    pattern = re.compile(rf"<!-- {name} -->.*?<!-- /{name} -->", re.S)
    if not pattern.search(text):
        sys.exit(f"README.md has no <!-- {name} --> block")
    return pattern.sub(lambda _: new, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="30", help="startup.py's rounds (default 30).")
    parser.add_argument("--doctor-runs", default="15", help="doctor_deadline.py's rounds (default 15).")
    parser.add_argument("--scaling-runs", default="3", help="scaling.py's switches per file (default 3).")
    parser.add_argument("--check", action="store_true", help="Print the blocks; leave README.md as it is.")
    args = parser.parse_args()
    blocks = [
        block("startup.py", "--runs", args.runs, "--secret-service"),
        block("doctor_deadline.py", "--runs", args.doctor_runs),
        block("scaling.py", "--cases", "codex,opencode,qwen,claude", "--runs", args.scaling_runs),
    ]
    if args.check:
        print("\n\n".join(blocks))
        return
    text = README.read_text(encoding="utf-8")
    for new in blocks:
        text = replace(text, new)
    README.write_text(text, encoding="utf-8")
    print(f"README.md: {len(blocks)} blocks regenerated")


if __name__ == "__main__":
    main()
