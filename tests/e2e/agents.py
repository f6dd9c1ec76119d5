"""The four real agent programs from npm: install them once into a cache outside the repo, run them
headless in a test HOME, bounded by a timeout (codex and claude wait forever on a dead server).

`python -m tests.e2e.agents` installs them and prints the bin dir (`.ci/run` does this before the
tests run without network)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# Pinned to the versions agents.md was verified with: a new release that changes a format shows up
# as one deliberate bump here, not as a red CI on an unrelated change. AGENTCFG_E2E_AGENTS=latest
# tries whatever npm serves today.
PACKAGES = {
    "codex": "@openai/codex@0.171.0",
    "qwen": "@qwen-code/qwen-code@0.15.10",
    "opencode": "opencode-ai@1.18.33",
    "claude": "@anthropic-ai/claude-code@2.1.197",
}
AGENTS = tuple(PACKAGES)
PROMPT = "Reply with the single word: ready"
TEST_SERVER = "agentcfg test server (tests/fault_server.py)"  # how the compatibility table names it


def cache_root() -> Path:
    return Path(os.environ.get("AGENTCFG_CI_CACHE") or Path.home() / ".cache" / "agentcfg-ci")


def _specs() -> list[str]:
    if os.environ.get("AGENTCFG_E2E_AGENTS") == "latest":
        return [spec.rsplit("@", 1)[0] + "@latest" for spec in PACKAGES.values()]
    return list(PACKAGES.values())


def install() -> Path:
    """npm-install the agents (once per set of versions; a lock keeps xdist workers from racing)."""
    specs = _specs()
    prefix = cache_root() / ("agents-" + hashlib.sha256(" ".join(specs).encode()).hexdigest()[:12])
    bin_dir = prefix / "node_modules" / ".bin"
    done = prefix / ".complete"
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists() or "latest" in " ".join(specs):
            started = time.monotonic()
            subprocess.run(
                ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", *specs],
                check=True,
                stdin=subprocess.DEVNULL,
                timeout=900,
            )
            done.write_text(" ".join(specs) + "\n")
            print(f"installed {' '.join(specs)} in {time.monotonic() - started:.0f}s", file=sys.stderr)
    return bin_dir


def command(agent: str, prompt: str = PROMPT) -> list[str]:
    return {
        "codex": ["codex", "exec", "--skip-git-repo-check", prompt],
        "qwen": ["qwen", "-p", prompt],
        "opencode": ["opencode", "run", prompt],
        "claude": ["claude", "-p", prompt],
    }[agent]


def environment(base: dict[str, str], bin_dir: Path) -> dict[str, str]:
    """What an agent run gets: the test HOME's variables, the agents first on PATH, and every switch
    that keeps an agent from calling home (telemetry, update checks, public model lists)."""
    env = dict(base)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env.update(
        TERM="dumb",
        CI="1",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_SHARE="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        QWEN_TELEMETRY_ENABLED="false",
    )
    return env


@dataclass
class Run:
    agent: str
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + "\n" + self.stderr

    def __str__(self) -> str:
        tail = self.output.strip()[-1500:]
        return f"{self.agent}: rc={self.returncode} after {self.seconds:.1f}s\n{tail}"


def run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float, agent: str = "") -> Run:
    """Run headless: stdin from /dev/null, in its own process group so a timeout kills every child."""
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        code = None
    return Run(agent or Path(argv[0]).name, code, out, err, time.monotonic() - started)


def version(agent: str, bin_dir: Path) -> str:
    """The version the program reports of itself, e.g. "0.171.0"."""
    out = subprocess.run(
        [str(bin_dir / agent), "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    ).stdout
    found = re.search(r"\d+\.\d+\.\d+", out)
    return found.group(0) if found else out.strip()


if __name__ == "__main__":
    print(install())
