"""`agentcfg exec` with the real agents: one process on one profile while the global files point at
another, several at once on several profiles, each to its own server with its own key, and no
agent's config file in HOME changed. Also the version-specific formats as the real agents see them:
Codex profile files (`codex --profile agentcfg-NAME`) and an opencode V2 file.

Every profile here has a key (kept in tests/fake_keyring.py's store, outside HOME), a model, a
window and an output bound of its own, so a value that leaked from another profile shows."""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentcfg.errors import Exit
from tests.conftest import AGENTCFG, Home
from tests.e2e import agents
from tests.e2e.agents import PROMPT, TEST_SERVER, matrix
from tests.fault_server import FaultServer

pytestmark = pytest.mark.e2e

TIMEOUT = 300  # one agent turn; opencode alone takes ~40 s here, and two agents at once share 2 cores

PATHS = {
    "codex": "/v1/responses",
    "qwen": "/v1/chat/completions",
    "opencode": "/v1/chat/completions",
    "claude": "/v1/messages",
    "cline": "/v1/chat/completions",
    "copilot": "/v1/chat/completions",
    "droid": "/v1/chat/completions",
}


@dataclass(frozen=True)
class Spec:
    model: str
    key: str
    window: int
    output: int  # --max-output-tokens: the max_tokens the agents that send one must send


PROFILES = {
    "a": Spec("model-a", "sk-e2e-side-aaaa-0123456789abcdef", 131072, 3001),
    "b": Spec("model-b", "sk-e2e-side-bbbb-0123456789abcdef", 65536, 2002),
    "c": Spec("model-c", "sk-e2e-side-cccc-0123456789abcdef", 98304, 4004),
}

# The agents' config files as `switch b` writes them: exec must leave each byte for byte as it was.
CONFIG_FILES = {
    "codex": (".codex/config.toml", ".codex/agentcfg-b.config.toml"),
    "qwen": (".qwen/settings.json", ".qwen/.env"),
    "opencode": (".config/opencode/opencode.json",),
    "claude": (".claude/settings.json",),
    "cline": (".cline/data/settings/providers.json", ".cline/data/settings/global-settings.json"),
    "copilot": (".copilot/providers.json", ".copilot/settings.json"),
    "droid": (".factory/settings.json",),
}

# What each agent writes into HOME by itself on every run, with or without agentcfg (seen at both
# releases; research-*.md in the briefs). Only these may change while an agent runs; any other file
# in HOME that changes fails the test.
STATE = {
    "codex": (  # codex 0.171.0, in CODEX_HOME
        ".codex/installation_id",
        ".codex/.sandbox_migration",
        ".codex/*.sqlite",
        ".codex/*.sqlite-wal",
        ".codex/*.sqlite-shm",
        ".codex/sessions/*",  # the rollout of each session
        ".codex/shell_snapshots/*",
        ".codex/skills/.system/*",  # the system skills it unpacks on first start
        ".codex/.tmp/*",
        ".codex/thread-writer-locks/*",
        ".codex/log/*",
    ),
    "qwen": (  # qwen-code 0.15.10 and 0.24.4, in ~/.qwen
        ".qwen/installation_id",
        ".qwen/output-language.md",
        ".qwen/projects/*",  # chats, extract-cursor.json, memory/, meta.json per working directory
        ".qwen/debug/*",  # 0.15
        ".qwen/tmp/*",
        ".qwen/.openai-logs-cleanup-*",  # 0.24
        ".qwen/extension-store/*",  # 0.24
        ".qwen/extensions/extension-enablement.json",  # 0.24
        ".qwen/memories/*",  # 0.24
        ".qwen/usage/*",  # 0.24
        ".qwen/usage_record.jsonl",  # 0.24
    ),
    "opencode": (  # opencode 1.18.33
        ".config/opencode/.gitignore",  # Config.ensureGitignore, made when absent
        ".config/opencode/package.json",  # its background `npm install @opencode-ai/plugin`
        ".config/opencode/package-lock.json",
        ".config/opencode/bun.lock",
        ".config/opencode/node_modules/*",
        ".npm/*",  # the same install's npm cache
        ".local/share/opencode/*",  # opencode.db and log/
        ".local/state/opencode/*",  # locks/
        ".cache/opencode/*",
    ),
    "claude": (  # Claude Code 2.1.197 and 2.1.332
        ".claude.json",  # its state (first start, user id, migrations), not settings
        ".claude/backups/*",  # copies of .claude.json
        ".claude/projects/*",  # the session transcript
        ".claude/sessions/*",
        ".claude/plugins/store/*",  # 2.1.332: its built-in plugin's record
        ".claude/statsig/*",
        ".claude/todos/*",
        ".claude/shell-snapshots/*",
    ),
    "cline": (  # cline 3.0.65, in ~/.cline/data (its providers and global settings are exec's own files)
        ".cline/data/sessions/*",
        ".cline/data/db/*",
        ".cline/data/logs/*",
        ".cline/data/locks/*",
        ".cline/data/cache/*",
    ),
    "copilot": (  # GitHub Copilot CLI 1.0.102, in COPILOT_HOME
        ".copilot/config.json",  # firstLaunchAt only ("User settings belong in settings.json")
        ".copilot/settings.json.lock",
        ".copilot/session-store.db*",
        ".copilot/session-state/*",
        ".copilot/logs/*",
        ".cache/Microsoft/DeveloperTools/deviceid",
        ".cache/copilot/*",  # its unpacked package, where COPILOT_PKG_CACHE_HOME does not move it
    ),
    "droid": (  # Droid 0.225.2, in ~/.factory
        ".factory/telemetry/*",  # droid-installation-id
        ".factory/sessions/*",  # the session's .jsonl and .settings.json per working directory
        ".factory/logs/*",
        ".factory/state/*",
        ".factory/cache/*",
        ".factory/certs/*",
        ".factory/droids/*",  # the built-in droids it unpacks on first start
        ".factory/host.json",
    ),
}
# agentcfg's own caches: the installed agents' versions (exec reads the version to pick the mechanism), and the
# profile texts the agent's `agentcfg key get` read (profile_parse._ParsedCache: what the TOML reader made of them,
# no key; tests/cli/test_keys_exec.py's CACHES).
AGENTCFG_STATE = (".config/agentcfg/state/versions.json", ".config/agentcfg/state/parsed-profiles")


# -- helpers ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def servers(*names: str) -> Iterator[dict[str, FaultServer]]:
    """A keyed server per profile, each serving only that profile's model."""
    with contextlib.ExitStack() as stack:
        yield {
            name: stack.enter_context(
                FaultServer(key=PROFILES[name].key, model=PROFILES[name].model, max_model_len=131072)
            )
            for name in names
        }


def add_profiles(home: Home, by_name: dict[str, FaultServer]) -> None:
    for name, server in by_name.items():
        spec = PROFILES[name]
        home.run(
            "profile", "add", name, "--base-url", server.base_url, "--model", spec.model,
            "--anthropic-base-url", server.root, "--key-env", f"{name.upper()}_API_KEY",
            "--context-window", str(spec.window), "--max-output-tokens", str(spec.output),
        )  # fmt: skip
        home.run("key", "set", name, stdin_text=spec.key + "\n")


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` (agentcfg's own state included), by relative path (one removed meanwhile left out)."""
    found = {}
    for p in sorted(root.rglob("*")) if root.exists() else ():
        with contextlib.suppress(FileNotFoundError):
            if p.is_file() and not p.is_symlink():
                found[str(p.relative_to(root))] = p.read_bytes()
    return found


def changed(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}


def not_state(paths: set[str], *agent_names: str) -> list[str]:
    """The paths no agent of `agent_names` writes as its own state (nor agentcfg as its cache)."""
    allowed = [*AGENTCFG_STATE, *(pattern for name in agent_names for pattern in STATE[name])]
    return sorted(path for path in paths if not any(fnmatch.fnmatch(path, pattern) for pattern in allowed))


def files_with_a_key(*roots: Path) -> list[str]:
    """The files under `roots` that hold a profile's key, once the key files of the runs that have ended are gone
    (qwen's settings file holds it while qwen runs; agentcfg.launch removes it when qwen has ended)."""

    def found() -> list[str]:
        return sorted(
            f"{root}/{path}"
            for root in roots
            for path, data in tree(root).items()
            if any(spec.key.encode() in data for spec in PROFILES.values())
        )

    deadline = time.monotonic() + 10
    while found() and time.monotonic() < deadline:
        time.sleep(0.1)
    return found()


def check_server(server: FaultServer, name: str, agent: str) -> None:
    """`server` (profile `name`'s) saw `agent`'s model requests with `name`'s key, model and output bound,
    and no other profile's key in any request."""
    spec = PROFILES[name]
    others = [other.key for other_name, other in PROFILES.items() if other_name != name]
    for method, path, headers, _ in server.requests:
        leaked = [value for value in headers.values() if any(key in value for key in others)]
        assert not leaked, f"{method} {path} to {name}'s server carried another profile's key"
    calls = [
        ({k.lower(): v for k, v in headers.items()}, body)
        for method, path, headers, body in server.requests
        if method == "POST" and path.split("?")[0] == PATHS[agent]
    ]
    assert calls, f"{agent} sent no {PATHS[agent]} request to {name}'s server: {server.requests}"
    for headers, body in calls:
        assert body["model"] == spec.model, body
        assert headers["authorization"] == f"Bearer {spec.key}", headers.get("authorization")
        if agent == "claude":  # apiKeyHelper's key goes out as both headers
            assert headers["x-api-key"] == spec.key
        # Codex sends no output bound (its window shows in the session, below); cline sizes its own from the window
        if agent not in ("codex", "cline"):
            assert body["max_tokens"] == spec.output, body.get("max_tokens")


def sessions(home: Home) -> set[str]:
    return {str(p) for p in home.path(".codex/sessions").rglob("rollout-*.jsonl")}


def codex_windows(home: Home, sessions_before: set[str]) -> list[str]:
    """Whose window each new Codex session worked with, by profile name. Codex records the window it uses
    (95% of the one configured) in the session's rollout; the profiles' windows are far enough apart."""
    found = []
    for rollout in sorted(sessions(home) - sessions_before):
        seen = {int(n) for n in re.findall(r'"model_context_window":(\d+)', Path(rollout).read_text())}
        owners = {name for name, spec in PROFILES.items() for n in seen if spec.window * 0.9 <= n <= spec.window}
        found.append("+".join(sorted(owners)) or f"none of the profiles' ({sorted(seen)})")
    return found


@dataclass
class Started:
    agent: str
    proc: subprocess.Popen
    out: Path
    err: Path
    started: float


def start(argv: list[str], env: dict[str, str], cwd: Path, logs: Path, agent: str) -> Started:
    """Start `argv` headless (stdin /dev/null, its own process group) with its output in files: two
    running at once cannot block each other on a full pipe."""
    out, err = logs.with_suffix(".out"), logs.with_suffix(".err")
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, start_new_session=True
        )
    return Started(agent, proc, out, err, time.monotonic())


def finish(started: Started, deadline: float) -> agents.Run:
    try:
        code: int | None = started.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(started.proc.pid, 9)
        started.proc.wait()
        code = None
    text = (started.out.read_text(errors="replace"), started.err.read_text(errors="replace"))
    return agents.Run(started.agent, code, *text, time.monotonic() - started.started)


def exec_together(home: Home, runs: list[tuple[str, str]], logs: Path) -> list[agents.Run]:
    """`agentcfg exec PROFILE -- AGENT ...` for each (profile, agent) of `runs`, all started before any
    is waited for; asserts that they did run at the same time (none had ended when the last started)."""
    procs = [
        start([AGENTCFG, "exec", name, "--", *agents.command(agent)], home.env, home.root, logs / f"{i}-{name}", agent)
        for i, (name, agent) in enumerate(runs)
    ]
    overlapped = all(started.proc.poll() is None for started in procs)
    deadline = time.monotonic() + TIMEOUT
    results = [finish(started, deadline) for started in procs]
    assert overlapped, "an agent had ended before the other started: " + "; ".join(map(str, results))
    return results


def exec_agent(home: Home, name: str, agent: str) -> agents.Run:
    return agents.run([AGENTCFG, "exec", name, "--", *agents.command(agent)], home.env, home.root, TIMEOUT, agent)


def answered(run: agents.Run) -> None:
    assert run.returncode == 0, run
    assert "ready" in run.stdout.lower(), run


def toml(text: str) -> dict:
    import tomlkit

    return tomlkit.parse(text).unwrap()


def runtime_dir(home: Home) -> Path:
    return Path(home.env["XDG_RUNTIME_DIR"])


# -- 1. exec on a, the files on b ---------------------------------------------------------------------


@pytest.mark.parametrize(("agent", "release"), matrix())
def test_exec_on_a_while_the_files_point_at_b(agent, agent_home, keyring_file, agent_versions, compat):
    if refused := agents.plain_profile_refused(agent):  # a plain profile: it needs a route
        pytest.skip(refused)
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
        case="`agentcfg exec a` while the files point at b (key in the keyring)",
    )  # fmt: skip
    with servers("a", "b") as by_name:
        add_profiles(agent_home, by_name)
        agent_home.run("switch", "b")  # all four agents are on PATH: all four point at b
        before = tree(agent_home.root)
        codex_sessions = sessions(agent_home)
        result = exec_agent(agent_home, "a", agent)
        after = tree(agent_home.root)
        answered(result)
        check_server(by_name["a"], "a", agent)
        assert by_name["b"].requests == [], by_name["b"].requests

    main = CONFIG_FILES[agent][0]
    assert by_name["b"].root.encode() in before[main], f"{main} does not point at b: the test proves nothing"
    for name in (path for paths in CONFIG_FILES.values() for path in paths):
        assert name in before, name
        assert after.get(name) == before[name], f"{name} changed"
    assert not_state(changed(before, after), agent) == [], "exec changed files in HOME no agent writes as its state"
    if agent == "codex":  # its window is a's too, not the files' (b's is half of a's)
        assert codex_windows(agent_home, codex_sessions) == ["a"]
    assert files_with_a_key(agent_home.root, runtime_dir(agent_home)) == []
    assert not any(spec.key in result.output for spec in PROFILES.values())
    private = runtime_dir(agent_home) / "agentcfg"  # what exec writes (Claude's, qwen's settings file) is private
    assert oct(private.stat().st_mode & 0o777) == oct(0o700)
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in private.iterdir()} == {
        p.name: oct(0o600) for p in private.iterdir()
    }


# -- 2. several at once ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("agent", "release"), matrix())
def test_the_same_agent_twice_at_once_on_two_profiles(
    agent, agent_home, keyring_file, agent_versions, compat, tmp_path
):
    if refused := agents.plain_profile_refused(agent):  # a plain profile: it needs a route
        pytest.skip(refused)
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
        case="two `agentcfg exec` of it at once, on a and c (files on b)",
    )  # fmt: skip
    with servers("a", "b", "c") as by_name:
        add_profiles(agent_home, by_name)
        agent_home.run("switch", "b")
        if agent == "opencode":
            # Two first starts at once race on creating opencode's own database ("Failed query: CREATE TABLE
            # ... REFERENCES `project`", rc 1, seen in CI): a user's opencode has started before.
            warm = agents.run(agents.offline(["opencode", "models"]), agent_home.env, agent_home.root, 120, agent)
            assert warm.returncode == 0, warm
        before = tree(agent_home.root)
        codex_sessions = sessions(agent_home)
        on_a, on_c = exec_together(agent_home, [("a", agent), ("c", agent)], tmp_path)
        after = tree(agent_home.root)
        answered(on_a)
        answered(on_c)
        check_server(by_name["a"], "a", agent)
        check_server(by_name["c"], "c", agent)
        assert by_name["b"].requests == [], by_name["b"].requests

    assert not_state(changed(before, after), agent) == []
    if agent == "codex":  # one session per run, each on its own profile's window
        assert sorted(codex_windows(agent_home, codex_sessions)) == ["a", "c"]
    assert files_with_a_key(agent_home.root, runtime_dir(agent_home)) == []


def _pairs() -> list:
    """(first agent, second agent, release) at each release where at least one of the pair differs. One
    pair: each agent already runs twice at once in the test above, and the file must stay under 6 minutes."""
    out, seen = [], set()
    for first, second in (("codex", "claude"),):
        for release in agents.RELEASES:
            at = agents.versions(release)
            if (first, second, at[first], at[second]) in seen:
                continue
            seen.add((first, second, at[first], at[second]))
            out.append(pytest.param(first, second, release, id=f"{first}-{at[first]}+{second}-{at[second]}"))
    return out


@pytest.mark.parametrize(("first", "second", "release"), _pairs())
def test_two_agents_at_once_on_two_profiles(first, second, agent_home, keyring_file, agent_versions, compat, tmp_path):
    for agent in (first, second):
        compat(
            tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
            case=f"`agentcfg exec` of {first} on a and {second} on c at once (files on b)",
        )  # fmt: skip
    with servers("a", "b", "c") as by_name:
        add_profiles(agent_home, by_name)
        agent_home.run("switch", "b")
        before = tree(agent_home.root)
        runs = exec_together(agent_home, [("a", first), ("c", second)], tmp_path)
        after = tree(agent_home.root)
        for run in runs:
            answered(run)
        check_server(by_name["a"], "a", first)
        check_server(by_name["c"], "c", second)
        assert by_name["b"].requests == [], by_name["b"].requests

    assert not_state(changed(before, after), first, second) == []
    assert files_with_a_key(agent_home.root, runtime_dir(agent_home)) == []


# -- 3. Codex profile files -----------------------------------------------------------------------------


@pytest.mark.parametrize(("agent", "release"), matrix(["codex"]))
def test_codex_profile_file_runs_on_its_profile_while_config_toml_points_elsewhere(
    agent, agent_home, keyring_file, agent_versions, compat
):
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
        case="`switch a`, `switch b`, then `codex --profile agentcfg-a` (no agentcfg exec)",
    )  # fmt: skip
    codex_home = agent_home.path(".codex")
    with servers("a", "b") as by_name:
        add_profiles(agent_home, by_name)
        agent_home.run("switch", "a", "--agent", "codex")
        agent_home.run("switch", "b", "--agent", "codex")
        config = toml((codex_home / "config.toml").read_text())
        profile_a = (codex_home / "agentcfg-a.config.toml").read_text()
        assert config["model_provider"] == "agentcfg-b", config  # a's table stays, unused
        assert config["model_providers"]["agentcfg-b"]["base_url"] == by_name["b"].base_url, config
        assert toml(profile_a)["model"] == "model-a"
        assert by_name["a"].base_url in profile_a, profile_a
        assert (codex_home / "agentcfg-b.config.toml").exists()
        codex_sessions = sessions(agent_home)
        result = agents.run(
            ["codex", "--profile", "agentcfg-a", "exec", "--skip-git-repo-check", PROMPT],
            agent_home.env, agent_home.root, TIMEOUT, agent,
        )  # fmt: skip
        answered(result)
        check_server(by_name["a"], "a", agent)
        assert by_name["b"].requests == [], by_name["b"].requests
    assert codex_windows(agent_home, codex_sessions) == ["a"]
    assert files_with_a_key(agent_home.root) == []

    # Each rollback removes the profile file its switch created (and config.toml goes back with it).
    agent_home.run("rollback")
    assert not (codex_home / "agentcfg-b.config.toml").exists()
    assert (codex_home / "agentcfg-a.config.toml").read_text() == profile_a
    assert toml((codex_home / "config.toml").read_text())["model_provider"] == "agentcfg-a"
    agent_home.run("rollback")
    assert not (codex_home / "agentcfg-a.config.toml").exists()
    assert not (codex_home / "config.toml").exists()


# -- 4. an opencode V2 file -----------------------------------------------------------------------------

# research-opencode.md's V2 fixture (the native `providers` shape of opencode 2), pointed at a loopback
# server instead of the gateway; and the same provider in opencode 1's shape, the control.
V2 = """{
  "$schema": "https://opencode.ai/config.json",
  "model": "newapi/model-a",
  "providers": {
    "newapi": {
      "name": "My gateway",
      "package": "aisdk:@ai-sdk/openai-compatible",
      "settings": { "baseURL": "BASE_URL", "apiKey": "{env:A_API_KEY}" },
      "models": {
        "model-a": { "name": "Model A", "capabilities": { "tools": true },
                     "limit": { "context": 131072, "output": 3001 } }
      }
    }
  },
  "permissions": [{ "action": "*", "resource": "*", "effect": "allow" }]
}
"""
V1 = """{
  "$schema": "https://opencode.ai/config.json",
  "model": "newapi/model-a",
  "small_model": "newapi/model-a",
  "provider": {
    "newapi": {
      "name": "My gateway",
      "npm": "@ai-sdk/openai-compatible",
      "options": { "baseURL": "BASE_URL", "apiKey": "{env:A_API_KEY}" },
      "models": { "model-a": { "name": "Model A", "tool_call": true, "limit": { "context": 131072, "output": 3001 } } }
    }
  }
}
"""


@pytest.mark.parametrize(("agent", "release"), matrix(["opencode"]))
def test_an_opencode_v2_file_is_refused_and_opencode_1_cannot_run_on_it(
    agent, agent_home, keyring_file, agent_versions, compat, run_agent
):
    version = agent_versions[agent]
    compat(
        tier="e2e", agent=agent, agent_version=version, server=TEST_SERVER,
        case="an opencode V2 file: `switch` refuses it, opencode 1 fails on it",
    )  # fmt: skip
    with servers("a", "b") as by_name:
        add_profiles(agent_home, by_name)
        config = agent_home.write(".config/opencode/opencode.json", V2.replace("BASE_URL", by_name["a"].base_url))
        original = config.read_bytes()
        refused = agent_home.run("switch", "b", "--agent", "opencode", check=Exit.REFUSED)
        assert config.read_bytes() == original
        on_v2 = run_agent(agent, timeout=TIMEOUT, A_API_KEY=PROFILES["a"].key)
        v2_calls = list(by_name["a"].requests)
        # The control: the same provider in opencode 1's shape, on the same server, answers.
        config.write_text(V1.replace("BASE_URL", by_name["a"].base_url))
        on_v1 = run_agent(agent, timeout=TIMEOUT, A_API_KEY=PROFILES["a"].key)
        assert by_name["b"].requests == []

    assert "opencode V2" in refused.stderr and f"opencode {version}" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    assert on_v2.returncode not in (0, None), on_v2
    assert "V2 permissions are not supported" in on_v2.output, on_v2  # opencode 1's own words for it
    assert "ready" not in on_v2.stdout.lower(), on_v2
    assert v2_calls == [], v2_calls
    answered(on_v1)
    check_server(by_name["a"], "a", agent)
    assert json.loads(config.read_text())["provider"]["newapi"]["npm"]  # still the control's file
