"""The four real agent programs from npm: install them once into a cache outside the repo, run them
headless in a test HOME, bounded by a timeout (codex and claude wait forever on a dead server).

`python -m tests.e2e.agents` resolves the latest releases, installs the pinned and the latest ones
and prints where (`.ci/run` does this before the tests run without network)."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentcfg.agents import AGENTS as REGISTRY

# Each agent runs at two releases: the pinned one (the last one proven, so a format change
# arrives as one deliberate bump here) and whatever npm serves as latest when CI runs (`python -m
# tests.e2e.agents` resolves it into the cache, before the tests run without network). A release
# that equals the pinned one runs once and is reported for both.
NPM = {
    "codex": "@openai/codex",
    "qwen": "@qwen-code/qwen-code",
    "opencode": "opencode-ai",
    "claude": "@anthropic-ai/claude-code",
    "copilot": "@github/copilot",
    "droid": "@factory/cli",
    "cline": "cline",
    "gemini": "@google/gemini-cli",
}
# Packages an agent needs besides its own, pinned beside it: @factory/cli 0.225.1 names a platform binary
# (@factory/cli-linux-x64@0.225.1) that npm does not have, so npm skips it silently and `droid` cannot start.
COMPANIONS = {"droid": {"@factory/cli-linux-x64": "0.225.2"}}
# Moved to the releases of 2026-12-01 once they passed (were: qwen 0.15.10, claude 2.1.197; still in PROVEN).
PINNED = {
    "codex": "0.171.0",
    "qwen": "0.24.4",
    "opencode": "1.18.33",
    "claude": "2.1.332",
    "copilot": "1.0.102",
    "droid": "0.225.1",
    "cline": "3.0.65",
    "gemini": "0.61.0",
}
# The agents the e2e tests run: those agentcfg has a module for (an agent installed here before its module is
# registered is run by its own tests alone).
AGENTS = tuple(agent for agent in NPM if agent in REGISTRY)
RELEASES = ("pinned", "latest")
PROMPT = "Reply with the single word: ready"
TEST_SERVER = "agentcfg test server (tests/fault_server.py)"  # how the compatibility table names it


def cache_root() -> Path:
    return Path(os.environ.get("AGENTCFG_CI_CACHE") or Path.home() / ".cache" / "agentcfg-ci")


def _latest_file() -> Path:
    return cache_root() / "latest.json"


def resolve_latest() -> dict[str, str]:
    """Ask npm for each agent's latest release (and its companions') and remember them for the test run
    (which has no network)."""
    import json

    found = {}
    for name, package in [*NPM.items(), *((c, c) for companions in COMPANIONS.values() for c in companions)]:
        out = subprocess.run(
            ["npm", "view", package, "version"], capture_output=True, text=True, check=True, timeout=120,
            stdin=subprocess.DEVNULL,
        ).stdout.strip()  # fmt: skip
        if not re.fullmatch(r"\d+\.\d+\.\d+", out):
            raise SystemExit(f"npm view {package} version answered {out!r}, not a release number")
        found[name] = out
    cache_root().mkdir(parents=True, exist_ok=True)
    _latest_file().write_text(json.dumps(found, indent=1) + "\n")
    return found


def versions(release: str) -> dict[str, str]:
    """Each agent's version at `release`; "latest" is what resolve_latest() found (the pinned ones if it
    never ran here: a local run without network tests the pinned releases only)."""
    if release == "pinned":
        return dict(PINNED)
    latest = _latest()
    return {agent: latest.get(agent, pinned) for agent, pinned in PINNED.items()}


def _latest() -> dict[str, str]:
    import json

    try:
        found = json.loads(_latest_file().read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _specs(release: str) -> list[str]:
    """The npm packages of every agent at `release`, companions included."""
    latest = _latest() if release == "latest" else {}
    specs = [f"{NPM[agent]}@{version}" for agent, version in versions(release).items()]
    for companions in COMPANIONS.values():
        specs += [f"{package}@{latest.get(package, pinned)}" for package, pinned in companions.items()]
    return specs


def releases_of(agent: str) -> list[tuple[str, ...]]:
    """The distinct releases `agent` runs at, each as the names it stands for: [("pinned", "latest")]
    when latest is the pinned one, else [("pinned",), ("latest",)]."""
    if versions("latest")[agent] == PINNED[agent]:
        return [RELEASES]
    return [("pinned",), ("latest",)]


def matrix(params: list | tuple = AGENTS, agent_of: Callable[[tuple], str] = lambda values: values[0]) -> list:
    """Each test case at every distinct release of its agent, the release's first name ("pinned" or
    "latest") added as the last value: `@pytest.mark.parametrize(("agent", "release"), matrix())`, or
    `matrix(cases, lambda values: values[1])` for cases that are pytest.params; ids end in the version."""
    import pytest

    out = []
    for case in params:
        values, marks, name = (case.values, case.marks, case.id) if hasattr(case, "values") else ((case,), (), case)
        agent = agent_of(values)
        for names in releases_of(agent):
            out.append(pytest.param(*values, names[0], marks=marks, id=f"{name}-{versions(names[0])[agent]}"))
    return out


def install(release: str = "pinned") -> Path:
    """npm-install the agents at `release` (once per set of versions; a lock keeps xdist
    workers from racing) and return their bin dir."""
    specs = _specs(release)
    prefix = cache_root() / ("agents-" + hashlib.sha256(" ".join(specs).encode()).hexdigest()[:12])
    bin_dir = prefix / "node_modules" / ".bin"
    done = prefix / ".complete"
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
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


_CODEX_OFF = ("analytics.enabled", "check_for_update_on_startup", "features.plugins")
CODEX_QUIET = tuple(arg for setting in _CODEX_OFF for arg in ("-c", f"{setting}=false"))


def command(agent: str, prompt: str = PROMPT) -> list[str]:
    return {
        # Codex has no variables for these: its analytics (ab.chatgpt.com), update check (api.github.com) and
        # plugin marketplace sync (github.com) go out whatever the provider (tests/e2e/test_no_phone_home.py).
        "codex": ["codex", "exec", "--skip-git-repo-check", *CODEX_QUIET, prompt],
        "qwen": ["qwen", "-p", prompt],
        "opencode": ["opencode", "run", prompt],
        "claude": ["claude", "-p", prompt],
        # a prompt of one word would be taken for a subcommand ("Unknown command or unquoted prompt")
        "cline": ["cline", prompt],
        "copilot": ["copilot", "-p", prompt, "--allow-all-tools", "-s", "--no-auto-update"],
        "gemini": ["gemini", "-p", prompt],
        "droid": ["droid", "exec", prompt],
    }[agent]


# Copilot CLI 1.0.102 sends temperature 0, and the realservers tier's tiny random model's greedy first token is its
# end of turn: the answer is empty (vLLM: content "", completion_tokens 1; at temperature 1 it is gibberish), and
# Copilot CLI exits 1 "No response was returned". The model's, not the setup's: such a turn is an expected failure.
EMPTY_AT_TEMPERATURE_0 = "Copilot CLI sends temperature 0: the tiny random model then answers nothing"


def on_tiny_model(agents_: tuple[str, ...]) -> list:
    """`agents_` as pytest params, the ones whose turn the tiny random model cannot answer marked xfail(strict)."""
    import pytest

    return [
        pytest.param(a, marks=pytest.mark.xfail(strict=True, reason=EMPTY_AT_TEMPERATURE_0)) if a == "copilot" else a
        for a in agents_
    ]


def plain_profile_refused(agent: str) -> str | None:
    """Why `agent` cannot run on a plain profile (a server's own endpoint), as its module says (Agent.unsupported:
    Gemini CLI speaks only the Gemini API, which a route's router serves); None: it can. A test of a plain profile
    skips such an agent with this reason."""
    from agentcfg.profiles import Profile

    server = Profile("local", "http://127.0.0.1:8000/v1", "m", anthropic_base_url="http://127.0.0.1:8000")
    module = REGISTRY.get(agent)  # (an agent installed before its module is registered: none to ask)
    reason = module.unsupported(server) if module else None
    return f"{agent} refuses a plain profile: {reason}" if reason else None


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
        QWEN_USAGE_STATISTICS_ENABLED="false",  # its usage statistics (Aliyun RUM), on unless told
        # cline: no update check; E2E_TEST keeps it from asking PostHog (data.cline.bot) for feature flags, which
        # its global settings' telemetryOptOut does not stop (agentcfg does not set it for users: docs/cline.md)
        CLINE_NO_AUTO_UPDATE="1",
        E2E_TEST="true",
        # cline leaves a hub daemon on 127.0.0.1:25463 that serves later runs with the settings it started
        # with, another test's HOME included: each run does its own work instead
        CLINE_SESSION_BACKEND_MODE="local",
        # Gemini CLI: headless in a folder it does not trust, it exits 55 (and reads no ~/.gemini/.env); the test
        # HOME is the harness's own. No relaunch of itself in a child Node (a second process to outlive a timeout).
        # Its vendor calls are off in the settings switch and exec write (privacy, telemetry, auto-update).
        GEMINI_CLI_TRUST_WORKSPACE="true",
        GEMINI_CLI_NO_RELAUNCH="true",
        # Droid: no call to Factory (9 to api.factory.ai, 1 to telemetry.factory.ai without it), no update
        # check, no keyring.
        FACTORY_AIRGAP_ENABLED="1",
        FACTORY_DROID_AUTO_UPDATE_ENABLED="false",
        FACTORY_DISABLE_KEYRING="1",
        # opencode starts `npm install @opencode-ai/plugin` in the background on every run: npm gets no
        # network (cache only) and a registry on a dead loopback port, so outside the CI's network
        # namespace too nothing leaves this machine.
        npm_config_offline="true",
        npm_config_registry="http://127.0.0.1:9/",
        # Copilot CLI: no GitHub contact at all (policy, telemetry, update), and the ~235 MB it unpacks on its
        # first run in a HOME goes to one directory of the CI cache (sea-loader.js reads COPILOT_PKG_CACHE_HOME).
        COPILOT_OFFLINE="true",
        COPILOT_AUTO_UPDATE="false",
        COPILOT_PKG_CACHE_HOME=str(cache_root() / "copilot-pkg"),
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


def run_tty(argv: list[str], env: dict[str, str], cwd: Path, timeout: float, until: str, agent: str = "") -> Run:
    """Run on a pseudo-terminal (for a screen only an interactive command draws, e.g. `claude doctor`)
    until its output matches `until` or `timeout` passes, then kill its process group (returncode
    None unless it exited first). The screen comes back as stdout, as plain text (`screen_text`)."""
    import pty
    import struct
    import termios

    started = time.monotonic()
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 200, 0, 0))
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    raw = b""
    try:
        while time.monotonic() - started < timeout:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    data = b""
                if not data:
                    break
                raw += data
                if re.search(until, screen_text(raw)):
                    break
            elif proc.poll() is not None:
                break
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        os.close(master)
        code = proc.wait()
    return Run(
        agent or Path(argv[0]).name, None if code < 0 else code, screen_text(raw), "", time.monotonic() - started
    )


def screen_text(raw: bytes) -> str:
    """A terminal program's output as plain lines: the cursor moves that place words on a line
    (`ESC[nG` to column n, `ESC[nC` forward, `\\r`) are followed; colours and other escapes dropped."""
    lines = []
    for line in raw.decode("utf-8", "replace").split("\n"):
        cells: list[str] = []
        col = 0
        for token in re.finditer(
            r"\x1b\[([0-9;?<>=]*)([a-zA-Z])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b.|\r|[^\x1b\r]", line
        ):
            text, (arg, command) = token.group(0), token.groups()[:2]
            if command in ("G", "C"):
                n = int(arg) if arg.isdigit() else 1
                col = n - 1 if command == "G" else col + n
            elif text == "\r":
                col = 0
            elif not text.startswith("\x1b") and text.isprintable():
                cells.extend(" " * (col + 1 - len(cells)))
                cells[col] = text
                col += 1
        lines.append("".join(cells).rstrip())
    return "\n".join(lines)


def _root_flag() -> list[str]:
    return [] if os.geteuid() == 0 else ["--map-root-user"]  # a user namespace lets a non-root user unshare


@functools.cache
def _can_unshare() -> bool:
    if shutil.which("unshare") is None:
        return False
    try:
        return (
            subprocess.run(["unshare", "--net", *_root_flag(), "true"], capture_output=True, timeout=10).returncode == 0
        )
    except (OSError, subprocess.SubprocessError):
        return False


def offline(argv: list[str]) -> list[str]:
    """`argv` in a network namespace of its own with only loopback up, where one can be made
    (`unshare --net`, as root or through a user namespace); else `argv` unchanged. For commands that
    need no server at all: a config from the wild (MCP servers, plugins, update checks) reaches nothing."""
    if not _can_unshare():
        return argv
    return ["unshare", "--net", *_root_flag(), "sh", "-c", 'ip link set lo up 2>/dev/null; exec "$@"', "sh", *argv]


def version(agent: str, bin_dir: Path) -> str:
    """The version the program reports of itself, e.g. "0.171.0"."""
    out = subprocess.run(
        [str(bin_dir / agent), "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    ).stdout
    found = re.search(r"\d+\.\d+\.\d+", out)
    return found.group(0) if found else out.strip()


if __name__ == "__main__":
    resolve_latest()
    for release in RELEASES:
        print(f"{release}: " + ", ".join(f"{a} {v}" for a, v in versions(release).items()) + f" in {install(release)}")
