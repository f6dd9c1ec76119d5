#!/usr/bin/env python3
"""How long `agentcfg switch` takes on big agent files: 1, 2, 5 and 10 MB.

Builds an opencode.json (many providers and MCP servers) and a Codex config.toml (many
`[projects."..."]` tables) of each size in a throw-away HOME (AGENTCFG_HOME and XDG_* inside it),
and times `agentcfg switch local --agent opencode` / `--agent codex` end to end: the first switch
(every owned key written) and the second (nothing to change). Prints seconds and seconds per MB,
whose flatness says the cost is linear.

    python benchmarks/big_file.py [--sizes 1,2,5,10] [--agents opencode,codex] [--profile AGENT:MB]

--profile runs one first switch in this process under cProfile and prints where the time goes.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MB = 1_000_000


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
    parts, total, i = [head], len(head), 0
    while total < size:
        part = f'\n[projects."/home/user/src/some-project-{i:07d}"]\ntrust_level = "trusted"\n'
        parts.append(part)
        total += len(part)
        i += 1
    return "".join(parts)


FILES = {
    "opencode": (".config/opencode/opencode.json", opencode_json),
    "codex": (".codex/config.toml", codex_toml),
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


def seed(home: Path, agent: str, megabytes: float) -> int:
    relative, build = FILES[agent]
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    text = build(int(megabytes * MB))
    path.write_text(text, encoding="utf-8")
    return len(text.encode())


def timed(argv: list[str], environ: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, env=environ, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({result.returncode}):\n{result.stderr}")
    return elapsed


def profile(agent: str, megabytes: float) -> None:
    from agentcfg import cli

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        seed(home, agent, megabytes)
        os.environ.update(environment(home))
        profiler = cProfile.Profile()
        profiler.enable()
        with contextlib.suppress(SystemExit):  # click exits when the command is done
            cli.main(["switch", "local", "--agent", agent])
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,2,5,10", help="file sizes in MB, comma-separated")
    parser.add_argument("--agents", default="opencode,codex")
    parser.add_argument("--profile", metavar="AGENT:MB", help="profile one switch in-process instead")
    args = parser.parse_args()
    if args.profile:
        agent, megabytes = args.profile.split(":")
        profile(agent, float(megabytes))
        return

    agentcfg = shutil.which("agentcfg", path=str(Path(sys.executable).parent)) or "agentcfg"
    print(f"{'agent':9} {'MB':>5} {'first s':>8} {'s/MB':>6} {'again s':>8} {'s/MB':>6}")
    for agent in args.agents.split(","):
        for megabytes in (float(s) for s in args.sizes.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                home = Path(tmp)
                size = seed(home, agent, megabytes) / MB
                environ = environment(home)
                argv = [agentcfg, "switch", "local", "--agent", agent]
                first = timed(argv, environ)
                again = timed(argv, environ)
                print(f"{agent:9} {size:5.1f} {first:8.2f} {first / size:6.2f} {again:8.2f} {again / size:6.2f}")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
