"""Every command of agentcfg as a user installs it: the wheel built from this checkout, in a venv with no extra
(and one with only `[route]` for `route`), each run in a temporary HOME against servers on loopback only:
tests/fault_server.py plays vLLM and a keyed gateway, keys live in a real Secret Service (a private D-Bus and
gnome-keyring-daemon, tests/secret_service.py), the four agents are the pinned releases from npm.

Each test does the command's real job where it can, and fails on any sign of a bug (conftest.py). Issue 27:
`exec -- codex` crashed on every plain install with ModuleNotFoundError (tomlkit, a test-only dependency),
before Codex even started, while every other tier, on `.[test]`, passed.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from agentcfg.route.server import TESTED_LITELLM
from tests.e2e import agents
from tests.e2e.agents import AGENTS, command
from tests.fault_server import MODEL, FaultServer
from tests.installed.conftest import COVERED, Installed, covers, python_info

pytestmark = pytest.mark.installed

KEY = "sk-installed-tier-0123456789abcdef"
TURN = 300  # s: one agent turn on two busy cores (opencode alone takes ~40 s)
PROFILES = ".config/agentcfg/profiles"
# What the test extra and the route extra bring: none of it may be importable from the plain install.
NOT_IN_A_PLAIN_INSTALL = ("tomlkit", "pytest", "hypothesis", "xdist", "ruff", "litellm", "prisma")
PATHS = {"codex": "/v1/responses", "qwen": "/v1/chat/completions", "opencode": "/v1/chat/completions",
         "claude": "/v1/messages", "droid": "/v1/chat/completions", "copilot": "/v1/chat/completions",
         "cline": "/v1/chat/completions"}  # fmt: skip

WHERE = """
import importlib.util, json, sysconfig, agentcfg
print(json.dumps({"agentcfg": agentcfg.__file__, "purelib": sysconfig.get_paths()["purelib"],
                  "importable": [n for n in %r if importlib.util.find_spec(n) is not None]}))
"""


def _local_profile(run: Installed, server: FaultServer) -> None:
    """The user's `local` profile (a built-in) pointed at `server`, as a user's own file overrides it."""
    run.home.write(
        f"{PROFILES}/local.toml",
        f'base_url = "{server.base_url}"\nanthropic_base_url = "{server.root}"\nmodel = "{MODEL}"\n'
        "context_window = 131072\n",
    )


def _keyed_profile(run: Installed, name: str, server: FaultServer, model: str = MODEL) -> None:
    run.run(
        "profile", "add", name, "--base-url", server.base_url, "--anthropic-base-url", server.root, "--model", model,
        "--key-env", f"{name.upper()}_API_KEY", "--context-window", "131072",
    )  # fmt: skip
    run.run("key", "set", name, stdin_text=KEY + "\n")


def _model_calls(server: FaultServer, path: str) -> list[dict[str, str]]:
    """The headers (lower-cased) of each generation request to `path`."""
    return [
        {k.lower(): v for k, v in headers.items()}
        for method, request_path, headers, _ in server.requests
        if method == "POST" and request_path.split("?")[0] == path
    ]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -- the installs ---------------------------------------------------------------------------------------------


def test_the_plain_install_is_the_wheel_alone(plain_python: Path):
    found = python_info(plain_python, WHERE % (NOT_IN_A_PLAIN_INSTALL,))
    assert found["importable"] == [], f"{plain_python}: the plain install has {found['importable']}"
    assert Path(found["agentcfg"]).is_relative_to(found["purelib"]), found  # the wheel's copy, not the checkout


def test_the_route_install_has_the_tested_litellm(route_python: Path):
    found = python_info(route_python, WHERE % (("litellm", "prisma", "pytest", "hypothesis"),))
    assert found["importable"] == ["litellm", "prisma"], found
    assert Path(found["agentcfg"]).is_relative_to(found["purelib"]), found
    version = python_info(route_python, "import importlib.metadata as m, json; print(json.dumps(m.version('litellm')))")
    assert version == TESTED_LITELLM


def test_version_and_help(installed: Installed):
    assert installed.run("--version").stdout.startswith("agentcfg, version ")
    listed = installed.run("--help").stdout
    assert all(f"  {name} " in listed for name in installed.tree), listed


# -- every command --------------------------------------------------------------------------------------------


@covers(
    "profile add", "profile list", "profile show", "profile set", "profile unset", "profile export",
    "key set", "key get", "key list", "key bind", "env", "trust", "key rm", "profile rm",
)  # fmt: skip
def test_profiles_keys_and_a_trusted_project(installed: Installed, real_keyring, tmp_path: Path):
    with FaultServer(key=KEY) as server, FaultServer() as moved:
        _keyed_profile(installed, "gw", server)
        assert "gw" in installed.run("profile", "list").stdout
        assert installed.json("profile", "show", "gw")["base_url"] == server.base_url
        installed.run("profile", "set", "gw", "max_output_tokens=4096")
        assert installed.json("profile", "show", "gw")["max_output_tokens"] == 4096
        installed.run("profile", "unset", "gw", "max_output_tokens")
        assert installed.json("profile", "show", "gw").get("max_output_tokens") is None

        assert installed.run("key", "get", "gw").stdout.strip() == KEY
        assert real_keyring.lookup("gw") == KEY  # the Secret Service itself holds it
        assert KEY not in installed.run("key", "list").stdout  # masked
        # The server moved: the key follows only once it is bound to the new host.
        installed.run("profile", "set", "gw", f"base_url={moved.base_url}", f"anthropic_base_url={moved.root}")
        installed.run("key", "bind", "gw")
        assert installed.run("key", "get", "gw").stdout.strip() == KEY
        assert f"GW_API_KEY={KEY}" in installed.run("env", "gw", "--shell", "bash").stdout.replace("'", "")

        # A team's profile, exported and trusted in a project.
        exported = installed.run("profile", "export", "gw").stdout
        project = tmp_path / "project"
        (project / ".agentcfg" / "profiles").mkdir(parents=True)
        (project / ".agentcfg" / "profiles" / "team.toml").write_text(exported.replace("GW_API_KEY", "TEAM_API_KEY"))
        installed.run("trust", str(project))
        assert "team" in installed.run("profile", "list", cwd=project).stdout

        installed.run("key", "rm", "gw")
        installed.run("key", "get", "gw", check=4)
        installed.run("profile", "rm", "gw")
    assert "gw" not in installed.run("profile", "list").stdout


@covers("agents", "switch", "status", "doctor", "bench", "rollback")
def test_switch_doctor_bench_and_rollback_with_the_four_agents(installed: Installed, agents_bin: Path):
    installed.home.env = agents.environment(installed.home.env, agents_bin)
    with FaultServer(max_model_len=131072) as server:
        _local_profile(installed, server)
        listed = {row["agent"]: row for row in installed.json("agents")}
        assert all(listed[agent]["path"] for agent in AGENTS), listed  # (a version: 10 s at most, not on busy cores)
        before = installed.home.snapshot()
        installed.run("switch", "local")
        assert server.base_url in installed.home.read(".codex/config.toml")
        assert installed.run("status").returncode == 0
        doctor = installed.run("doctor", "--timeout", "30", check=None)
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        bench = installed.json("bench", "local", "-n", "2", "--max-tokens", "8", "--prompt-tokens", "16")
        assert bench, bench
        assert _model_calls(server, "/v1/chat/completions")
        installed.run("rollback")
    after = installed.home.snapshot()
    assert {path: data for path, data in after.items() if path in before} == before


@covers("profile import")
def test_profile_import_moves_a_plaintext_key_into_the_keyring(installed: Installed, real_keyring):
    installed.home.write(
        ".qwen/.env", f"# qwen-code\nOPENAI_API_KEY={KEY}\nOPENAI_BASE_URL=http://127.0.0.1:9/v1\nOPENAI_MODEL=m\n"
    )
    found = installed.json("profile", "import", "--yes")
    (profile,) = found["profiles"]
    assert profile["key_moved"], found
    assert real_keyring.lookup(profile["name"]) == KEY
    assert KEY not in installed.home.read(".qwen/.env")


@covers("init")
def test_init_yes_switches_every_agent_and_checks(installed: Installed, real_keyring, agents_bin: Path):
    installed.home.env = agents.environment(installed.home.env, agents_bin)
    with FaultServer(max_model_len=131072) as server:
        _local_profile(installed, server)
        done = installed.run("init", "--profile", "local", "--yes", timeout=300)
    assert server.base_url in installed.home.read(".codex/config.toml")
    assert "doctor: 0 failed" in done.stdout, done.stdout


@covers("exec")
@pytest.mark.parametrize("agent", AGENTS)
def test_exec_each_agent_answers_with_the_key_from_the_keyring(
    installed: Installed, real_keyring, agents_bin: Path, agent: str
):
    """No switch first: exec alone points the one process at the profile (Codex: `-c` overrides, the crash). An
    agent that runs on a route only is skipped here: tests/e2e/test_route_switch.py runs its exec through one."""
    if refused := agents.plain_profile_refused(agent):
        pytest.skip(refused)
    with FaultServer(key=KEY, max_model_len=131072) as server:
        _keyed_profile(installed, "gw", server)
        result = installed.exec_agent("gw", command(agent), agents_bin, TURN)
        calls = _model_calls(server, PATHS[agent])
    assert result.returncode == 0, result
    assert "ready" in result.stdout.lower(), result
    assert calls, f"{agent} sent no {PATHS[agent]} request: {server.requests}"
    assert all(headers["authorization"] == f"Bearer {KEY}" for headers in calls), calls


@covers("route add", "route serve", "route status", "route stop")
def test_route_serve_from_the_route_install(installed_route: Installed, real_keyring):
    with FaultServer(max_model_len=131072) as primary, FaultServer(key=KEY, model="gw-model") as fallback:
        route = installed_route
        route.run("profile", "add", "near", "--base-url", primary.base_url, "--model", MODEL,
                  "--context-window", "131072")  # fmt: skip
        _keyed_profile(route, "gw", fallback, model="gw-model")
        route.run("route", "add", "home", "--primary", "near", "--fallback", "gw", "--port", str(_free_port()))
        try:
            served = route.json("route", "serve", "home", "--timeout", "300", timeout=360)
            assert served["litellm_version"] == TESTED_LITELLM, served
            route.run("route", "status", "home")
            route.run("bench", "home", "-n", "2", "--max-tokens", "8", "--prompt-tokens", "16")
            assert _model_calls(primary, "/v1/chat/completions")  # through the router, to the primary
        finally:
            stopped = route.run("route", "stop", "home", check=None)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert not any(KEY in output for output in route.outputs)


def test_every_command_is_covered(command_tree: dict[str, set[str]]):
    """A command added to agentcfg fails here until a test of this tier runs it."""
    commands = {f"{top} {sub}" if sub else top for top, subs in command_tree.items() for sub in subs or [""]}
    assert len(commands) > 20, commands
    covered = {command for names in COVERED.values() for command in names}
    assert sorted(commands - covered) == [], "commands no test of the installed tier runs"
    assert sorted(covered - commands) == [], "covered commands that agentcfg does not have"


@covers("serve start", "serve status", "serve logs", "serve restart", "serve unit", "serve stop", "serve sweep")
def test_serve_life_cycle_with_a_stand_in_vllm(installed: Installed, real_keyring, tmp_path: Path):
    """tests/serve/fake_vllm.py plays vLLM (an API server and its engine); the key comes from the Secret Service."""
    import json
    import sys

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    installed.run("profile", "add", "srv", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", MODEL,
                  "--context-window", "8192", "--key-env", "SRV_API_KEY")  # fmt: skip
    installed.run("key", "set", "srv", stdin_text=KEY + "\n")
    program = tmp_path / "vllm"
    program.write_text(f"#!{sys.executable}\n" + (Path(__file__).parents[1] / "serve" / "fake_vllm.py").read_text())
    program.chmod(0o755)
    started = installed.json("serve", "start", "srv", "--weights", str(tmp_path), "--vllm", str(program),
                             "--family", "hermes", "--timeout", "60")  # fmt: skip
    assert started["env"]["set"]["VLLM_API_KEY"] != KEY and KEY not in json.dumps(started)  # masked
    status = installed.json("serve", "status", "srv")
    assert status["running"] and status["serving"] == {"id": MODEL, "max_model_len": 8192}, status
    assert "fake vLLM serving" in installed.run("serve", "logs", "srv").stdout
    restarted = installed.json("serve", "restart", "srv", "--drain", "1")
    assert restarted["stopped"]["pid"] == started["pid"] and restarted["pid"] != started["pid"]
    assert "KillMode=mixed" in installed.run("serve", "unit", "srv", "--print").stdout
    stopped = installed.json("serve", "stop", "srv")
    assert stopped["pid"] == restarted["pid"] and stopped["orphans_ended"] == []
    assert installed.json("serve", "sweep", "srv")["orphans_ended"] == []


@covers("mcp add", "mcp list", "mcp import", "mcp sync", "mcp rm", "mcp secret")
def test_mcp_servers_for_every_agent_with_their_secret_in_the_secret_service(
    installed: Installed, real_keyring, agents_bin: Path
):
    """The registry's server-everything added once for every installed agent, its token in the real Secret
    Service and in no file; doctor starts it; exec gives the token; import moves a plain-text one; rollback
    gives every file back."""
    from tests.e2e import mcp_servers

    installed.home.env = agents.environment(installed.home.env, agents_bin)
    token, other = "mcp-installed-tier-token-5a7c9e", "ghp_installedTierPlainToken0123456789ab"
    before = installed.home.snapshot()
    add = ("mcp", "add", "everything", "--secret", "EVERYTHING_TOKEN", "--", *mcp_servers.stdio_command())
    refused = installed.run(*add, check=2)  # no value exported, no terminal to ask on: nothing written
    assert "EVERYTHING_TOKEN" in refused.stderr and installed.home.snapshot() == before
    installed.home.env["EVERYTHING_TOKEN"] = token
    try:
        installed.run(*add)
    finally:
        del installed.home.env["EVERYTHING_TOKEN"]
    assert real_keyring.lookup("mcp:EVERYTHING_TOKEN") == token
    files = installed.home.snapshot()
    assert not [path for path, data in files.items() if token.encode() in data]
    listed = {row["name"]: row for row in installed.json("mcp", "list")["servers"]}
    assert {copy["agent"] for copy in listed["everything"]["agents"]} == set(AGENTS)
    doctor = installed.json("doctor", "--agent", "codex", "--timeout", "60", check=None)
    assert any(f["id"] == "mcp-ok" and f.get("server") == "everything" for f in doctor["findings"]), doctor
    shown = installed.run("exec", "local", "--", "sh", "-c", 'printf %s "$EVERYTHING_TOKEN"').stdout
    assert shown == token

    # A user's own server with a token in plain text: import moves it to the keyring, sync gives it to all.
    config = installed.home.read(".codex/config.toml")
    own = f'\n[mcp_servers.gh]\ncommand = "gh-mcp"\nenv = {{ GITHUB_TOKEN = "{other}" }}\n'
    installed.home.write(".codex/config.toml", config + own)
    installed.run("mcp", "import")
    assert other not in installed.home.read(".codex/config.toml") and real_keyring.lookup("mcp:GITHUB_TOKEN") == other
    installed.run("mcp", "sync", "--yes")
    assert "gh" in installed.home.read(".config/opencode/opencode.json")
    installed.run("mcp", "rm", "gh")
    installed.run("mcp", "secret", "GITHUB_TOKEN", "--rm")
    assert real_keyring.lookup("mcp:GITHUB_TOKEN") is None
    for _ in range(4):  # rm, sync, import, add: each one entry
        installed.run("rollback")
    after = installed.home.snapshot()
    assert {path: data for path, data in after.items() if path in before} == before
