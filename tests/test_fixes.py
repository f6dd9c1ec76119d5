"""Every fix line doctor, switch and status print runs as pasted: the harness.

For each real situation (a temporary HOME, fault servers on 127.0.0.1, fake vLLM processes), the
command under test prints its fixes; each must hold no placeholder (PROFILE, NAME, `...`, `<key>`, a
masked `****`), pass `bash -n`, and, RUN with bash in that HOME, exit 0. Where a fix claims to fix
the finding, doctor no longer reports it afterwards.

Running a fix: PATH has this venv's `agentcfg` and stubs for every agent (never a real agent:
`agentcfg exec t -- codex` runs a stub that exits 0), stdin holds the key for a command that reads one,
and a `kill` is only ever run on a process this test started.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentcfg.agents import AGENTS
from tests.conftest import AGENTCFG, REPO, Home, keyring_env, make_home
from tests.doctor.test_doctor import (  # noqa: F401 - _processes_lock and spawn are fixtures used here
    TOOL_FLAGS,
    _processes_lock,
    add_profile,
    fake_vllm,
    serve,
    serve_args,
    spawn,
    store_key,
    switch_to,
)
from tests.fault_server import MODEL, FaultServer, dead_port

KEY = "sk-harness-key-0123456789"
WRONG_KEY = "sk-harness-wrong-987654321"
VENV_BIN = Path(AGENTCFG).parent
AGENT_BINARIES = tuple(agent.TRAITS.binary for agent in AGENTS.values())

# -- what a pasteable command is -----------------------------------------------------------------------

# Words that stand for something the user must fill in; `...`/`…`, and < > outside quotes (`<key>`).
PLACEHOLDER_WORDS = re.compile(r"(?<![\w./:-])(PROFILE|NAME|VAR|URL|ID|KEY|VALUE|PID|PORT|TOKENS|N|P)(?![\w./-])")
COMMAND_WORDS = ("agentcfg", "eval", "unset", "export", "env", "kill", "claude", "systemctl")


def placeholders(command: str) -> list[str]:
    """What in `command` a user would have to replace before it runs (empty: it runs as pasted)."""
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "''", command)
    found = PLACEHOLDER_WORDS.findall(unquoted)
    found += [mark for mark in ("...", "…", "****", "/path/to/") if mark in command]
    found += ["< or >"] if re.search(r"[<>]", unquoted) else []
    found += ["$KEY"] if re.search(r"\$\{?KEY\b", command) else []
    return found


def assert_pasteable(command: str) -> None:
    assert command.strip(), "an empty fix"
    assert not placeholders(command), (command, placeholders(command))
    syntax = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True, timeout=10)
    assert syntax.returncode == 0, (command, syntax.stderr)


def backticked(text: str) -> list[str]:
    """The commands in a note or hint: `...` spans that start with a command."""
    return [c for c in re.findall(r"`([^`]+)`", text) if c.split()[0] in COMMAND_WORDS]


@dataclass
class World:
    """One situation's HOME, its server, and the processes the test started (the only ones `kill` may end)."""

    home: Home
    server: FaultServer | None = None
    stubs: Path | None = None
    own_pids: set[int] = field(default_factory=set)

    def fix_env(self) -> dict[str, str]:
        assert self.stubs is not None
        return {**self.home.env, "PATH": f"{self.stubs}:{VENV_BIN}:{self.home.env['PATH']}"}


def make_world(tmp_path: Path, server: FaultServer | None = None) -> World:
    home = make_home(tmp_path)
    home.env.update(keyring_env(tmp_path / "keyring.json"))
    stubs = tmp_path / "agent-stubs"
    stubs.mkdir()
    for binary in AGENT_BINARIES:  # the agents a fix may start: never the real ones
        (stubs / binary).write_text("#!/bin/sh\nexit 0\n")
        (stubs / binary).chmod(0o755)
    return World(home, server, stubs)


def run_fix(world: World, command: str) -> subprocess.CompletedProcess[str]:
    """Run one fix with bash in the world's HOME, as a user would paste it; it must exit 0."""
    assert_pasteable(command)
    for words in re.findall(r"\bkill\s+((?:-\w+\s+)?[\d\s]+)", command):
        pids = {int(p) for p in words.split() if p.isdigit()}
        assert pids <= world.own_pids, f"refusing to run {command!r}: not a process this test started"
    result = subprocess.run(
        ["bash", "-c", command],
        env=world.fix_env(),
        cwd=world.home.root,
        input=KEY + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, (command, result.returncode, result.stdout, result.stderr)
    return result


def doctor_report(world: World, *args: str) -> dict[str, Any]:
    result = world.home.run("doctor", "--json", *args, check=None)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


# -- doctor: a table of situations ------------------------------------------------------------------------


@dataclass(frozen=True)
class Situation:
    """A HOME set up by `build`, checked with `doctor ARGS`: every finding `fid` names a fix that runs, and
    (`clears`) doctor no longer reports it once the fixes ran. No fix at all (only a hint) is fine too."""

    name: str
    fid: str
    build: Callable[[World], tuple[str, ...]]
    clears: bool = True
    server: dict[str, Any] = field(default_factory=dict)


def _keyed_profile_without_key(world: World) -> tuple[str, ...]:
    add_profile(world.home, world.server.base_url, world.server.root, key_env="T_KEY")
    return ("t",)


def _keyed_agents_without_key(world: World) -> tuple[str, ...]:
    switch_to(world.home, world.server.base_url, world.server.root, key_env="T_KEY")
    return ()


def _wrong_key_stored(world: World) -> tuple[str, ...]:
    add_profile(world.home, world.server.base_url, world.server.root, key_env="T_KEY")
    store_key(world.home, "t", WRONG_KEY)
    return ("t",)


def _unknown_model(world: World) -> tuple[str, ...]:
    add_profile(world.home, world.server.base_url, world.server.root, name="gpt", model="gpt-4o")
    return ("gpt",)


def _base_url_without_v1(world: World) -> tuple[str, ...]:
    add_profile(world.home, world.server.root, world.server.root, name="nov1")
    return ("nov1",)


def _window_larger_than_the_servers(world: World) -> tuple[str, ...]:
    switch_to(world.home, world.server.base_url, world.server.root, window=65536)
    return ("--agent", "opencode")


def _tool_parser_missing(world: World) -> tuple[str, ...]:
    add_profile(world.home, world.server.base_url, world.server.root)
    return ("t",)


def _dead_port(world: World) -> tuple[str, ...]:
    port = dead_port()
    add_profile(world.home, f"http://127.0.0.1:{port}/v1", f"http://127.0.0.1:{port}")
    return ("t",)


def _placeholder_to_remote(world: World) -> tuple[str, ...]:
    switch_to(world.home, "https://gw.example/v1", "https://gw.example")
    return ("--offline",)


def _nothing_configured(world: World) -> tuple[str, ...]:
    return ("--offline", "--agent", "codex")


def _codex_wire_api_chat(world: World) -> tuple[str, ...]:
    switch_to(world.home, world.server.base_url, world.server.root)
    config = world.home.path(".codex/config.toml")
    config.write_text(config.read_text().replace('wire_api = "responses"', 'wire_api = "chat"'))
    return ("--agent", "codex")


def _proxy_in_front_of_local(world: World) -> tuple[str, ...]:
    switch_to(world.home, world.server.base_url, world.server.root)
    world.home.env.update(HTTP_PROXY=f"http://127.0.0.1:{dead_port()}", NO_PROXY="")
    return ("--agent", "opencode")


def _key_helper_of_an_earlier_agentcfg(world: World) -> tuple[str, ...]:
    switch_to(world.home, world.server.base_url, world.server.root, key_env="T_KEY")
    store_key(world.home, "t", KEY)
    settings = json.loads(world.home.read(".claude/settings.json"))
    settings["apiKeyHelper"] = "/usr/bin/python3 -m agentcfg key get t"  # as `python -m agentcfg switch` wrote it
    world.home.write(".claude/settings.json", json.dumps(settings))
    return ("--offline", "--agent", "claude")


SITUATIONS = [
    pytest.param(Situation("doctor PROFILE, no key stored", "key-missing", _keyed_profile_without_key,
                           server={"key": KEY}), id="key-missing-profile"),
    pytest.param(Situation("agents switched to a keyed profile, no key anywhere", "key-missing",
                           _keyed_agents_without_key, clears=False, server={"key": KEY}),
                 id="key-missing-files"),
    pytest.param(Situation("a wrong key stored", "key-rejected", _wrong_key_stored, server={"key": KEY}),
                 id="key-rejected"),
    pytest.param(Situation("a model the server does not have", "model-not-found", _unknown_model),
                 id="model-not-found"),
    pytest.param(Situation("a base URL without /v1", "base-url-path", _base_url_without_v1),
                 id="base-url-path"),
    pytest.param(Situation("the profile's window larger than the server's", "context-window-too-large",
                           _window_larger_than_the_servers, server={"max_model_len": 16384}),
                 id="context-window-too-large"),
    pytest.param(Situation("vLLM without a tool parser", "tool-parser-missing", _tool_parser_missing,
                           clears=False, server={"fault": "no-tool-parser"}),
                 id="tool-parser-missing"),
    pytest.param(Situation("nothing listens", "server-unreachable", _dead_port, clears=False),
                 id="server-unreachable"),
    pytest.param(Situation("a keyless profile on a remote host", "key-placeholder-to-remote",
                           _placeholder_to_remote),
                 id="key-placeholder-to-remote"),
    pytest.param(Situation("an agent not set up", "not-configured", _nothing_configured, clears=False),
                 id="not-configured"),
    pytest.param(Situation("Codex with wire_api chat", "codex-wire-api", _codex_wire_api_chat),
                 id="codex-wire-api"),
    pytest.param(Situation("a key helper an earlier agentcfg wrote", "key-helper-not-isolated",
                           _key_helper_of_an_earlier_agentcfg),
                 id="key-helper-not-isolated"),
    pytest.param(Situation("a dead proxy in front of a local server", "proxy-unreachable",
                           _proxy_in_front_of_local, clears=False),
                 id="proxy-unreachable"),
]  # fmt: skip


@pytest.mark.parametrize("situation", SITUATIONS)
def test_every_doctor_fix_runs_as_pasted(situation: Situation, tmp_path: Path) -> None:
    options = dict(situation.server)
    with serve(FaultServer(options.pop("fault", "healthy"), **options)) as server:
        world = make_world(tmp_path, server)
        args = situation.build(world)
        report = doctor_report(world, *args)
        findings = [f for f in report["findings"] if f["id"] == situation.fid and f["status"] != "pass"]
        assert findings, (situation.name, [(f["id"], f["status"]) for f in report["findings"]])
        fixed = []
        for finding in findings:
            if not finding["fix"]:
                assert finding["hint"], finding  # no command can do it: then it says what to do
                continue
            run_fix(world, finding["fix"])
            fixed.append((finding["agent"], finding["id"]))
        for finding in findings:  # commands in a hint must run as pasted too
            for command in backticked(finding["hint"]):
                assert_pasteable(command)
        if situation.clears and fixed:
            after = doctor_report(world, *args)
            left = {(f["agent"], f["id"]) for f in after["findings"] if f["status"] in ("fail", "warn")}
            assert not left & set(fixed), (situation.name, left & set(fixed), after["findings"])


# -- doctor: the local vLLM processes (agentcfg/doctor/localserver.py) ------------------------------------


def test_local_vllm_model_fix_points_the_profile_at_the_served_model(tmp_path, spawn):  # noqa: F811
    with serve(FaultServer()) as server:
        world = make_world(tmp_path, server)
        switch_to(world.home, server.base_url, server.root)
        flags = ("--served-model-name", "other-model", *TOOL_FLAGS)
        spawn(serve_args(fake_vllm(tmp_path), server.port, *flags), "vllm")
        (finding,) = [
            f for f in doctor_report(world, "--offline")["findings"] if f["id"] == "model-not-found" and not f["agent"]
        ]
        assert finding["fix"] == "agentcfg profile set t model=other-model && agentcfg switch t"
        run_fix(world, finding["fix"])
        after = doctor_report(world, "--offline")["findings"]
        assert not [f for f in after if f["id"] == "model-not-found" and not f["agent"]], after
        assert world.home.json("profile", "show", "t")["model"] == "other-model"


def test_local_vllm_restarts_are_hints_and_a_stray_worker_is_killed_by_its_pid(tmp_path, spawn):  # noqa: F811
    with serve(FaultServer()) as server:
        world = make_world(tmp_path, server)
        switch_to(world.home, server.base_url, server.root)
        script = fake_vllm(tmp_path)
        spawn(serve_args(script, server.port, "--enforce-eager", "--api-key", "secret-harness"), "vllm")
        stray = spawn(["bash", "-c", "exec -a VLLM::EngineCore sleep 30"], "VLLM::EngineCore")
        world.own_pids.add(stray.pid)
        findings = doctor_report(world, "--offline")["findings"]
        local = {f["id"]: f for f in findings if f["agent"] is None and str(server.port) in f["evidence"] + f["hint"]}
        for fid in ("vllm-enforce-eager", "tool-parser-missing"):
            assert local[fid]["fix"] == "" and local[fid]["hint"], local[fid]
        assert "secret-harness" not in json.dumps(findings)
        (mine,) = [f for f in findings if f["id"] == "vllm-stray-workers" and f"pid {stray.pid}" in f["summary"]]
        run_fix(world, mine["fix"])
        stray.wait(timeout=10)
        after = doctor_report(world, "--offline")["findings"]
        assert not [f for f in after if f["id"] == "vllm-stray-workers" and f"pid {stray.pid}" in f["summary"]]


def test_a_kill_of_a_process_the_test_did_not_start_is_never_run(tmp_path):
    world = make_world(tmp_path)
    with pytest.raises(AssertionError, match="not a process this test started"):
        run_fix(world, "kill 1")


# -- switch and status: the commands in their notes ---------------------------------------------------------


def notes_of(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("note: ")]


def test_switch_notes_for_a_keyed_profile_run_as_pasted(tmp_path):
    with serve(FaultServer(key=KEY)) as server:
        world = make_world(tmp_path, server)
        add_profile(world.home, server.base_url, server.root, key_env="T_KEY")
        first = world.home.run("switch", "t", "--all", check=4)  # switched; no key stored yet
        commands = [c for note in notes_of(first) for c in backticked(note)]
        assert "agentcfg key set t" in commands
        assert {f"agentcfg exec t -- {b}" for b in ("codex", "qwen", "opencode")} <= set(commands)
        # key set first (it gets the key on stdin), then the agents' starts, whichever note says which
        for command in sorted(commands, key=lambda c: not c.startswith("agentcfg key set")):
            run_fix(world, command)
        again = world.home.run("switch", "t", "--all")
        assert not [n for n in notes_of(again) if "stored no key" in n], again.stderr


def test_switch_note_about_the_window_runs_as_pasted_and_goes_away(tmp_path):
    with serve(FaultServer(max_model_len=65536)) as server:
        world = make_world(tmp_path, server)
        add_profile(world.home, server.base_url, server.root, window=None)
        first = world.home.run("switch", "t", "--all")
        (note,) = [n for n in notes_of(first) if "context window" in n]
        commands = backticked(note)
        assert commands == ["agentcfg profile set t --detect"], note
        run_fix(world, commands[0])
        again = world.home.run("switch", "t", "--all")
        assert not [n for n in notes_of(again) if "context window" in n], again.stderr
        assert world.home.json("profile", "show", "t")["context_window"] == 65536


def test_status_note_about_a_plaintext_key_runs_as_pasted_and_goes_away(tmp_path):
    with serve(FaultServer(key=KEY)) as server:
        world = make_world(tmp_path, server)
        settings = {"env": {"ANTHROPIC_BASE_URL": server.root, "ANTHROPIC_AUTH_TOKEN": KEY, "ANTHROPIC_MODEL": MODEL}}
        world.home.write(".claude/settings.json", json.dumps(settings))
        status = world.home.run("status")
        (line,) = [n for n in status.stdout.splitlines() if "plaintext" in n]
        commands = backticked(line)
        assert "agentcfg profile import --yes" in commands, line
        for command in commands[:1]:  # the second is `agentcfg rollback`, which would undo the first
            run_fix(world, command)
        assert "plaintext" not in world.home.run("status").stdout
        assert KEY not in world.home.read(".claude/settings.json")


def test_status_note_about_edited_keys_names_the_switch_that_restores_them(tmp_path):
    world = make_world(tmp_path)
    add_profile(world.home, "http://127.0.0.1:9/v1", "http://127.0.0.1:9")
    world.home.run("switch", "t", "--agent", "qwen")
    settings = world.home.path(".qwen/settings.json")
    data = json.loads(settings.read_text())
    data["model"]["name"] = "edited-by-hand"
    settings.write_text(json.dumps(data))
    (line,) = [n for n in world.home.run("status").stdout.splitlines() if "edited since" in n]
    assert backticked(line) == ["agentcfg switch t --agent qwen"], line
    run_fix(world, "agentcfg switch t --agent qwen")
    assert "edited since" not in world.home.run("status").stdout


# -- the source: no placeholder in any fix doctor can build ------------------------------------------------

DOCTOR = REPO / "agentcfg" / "doctor"


def fix_literals(path: Path) -> list[tuple[int, str]]:
    """Every string literal that can end up in a Finding's fix: its sixth argument or `fix=`, and what
    the module's `*_fix` helpers return (f-strings as their constant parts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Finding":
            nodes += node.args[5:6] + [k.value for k in node.keywords if k.arg == "fix"]
        elif isinstance(node, ast.FunctionDef) and node.name.endswith("_fix"):
            nodes += [n.value for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None]
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", "").startswith("fix") for t in node.targets):
            nodes.append(node.value)
    found = []
    for root in nodes:
        for leaf in ast.walk(root):
            if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str) and leaf.value.strip():
                found.append((leaf.lineno, leaf.value))
    return found


def doctor_module(name: str) -> Any:
    return pytest.param(DOCTOR / name, id=name)


@pytest.mark.parametrize(
    "path",
    [doctor_module(path.name) for path in sorted(DOCTOR.glob("*.py"))],  # a new module is checked too
)
def test_no_fix_literal_in_doctor_holds_a_placeholder(path: Path) -> None:
    bad = []
    for line, text in fix_literals(path):
        words = [w for w in placeholders(text) if w not in ("< or >",)]  # a fragment's quotes may be elsewhere
        prose = re.search(r"\b(restart|start|check|use|set|see|give|wait|fix|keep|stop|run) ", text)
        if words or (prose and not text.lstrip().startswith(("agentcfg", "kill", "export", "unset"))):
            bad.append((line, text))
    assert not bad, bad


def test_the_guard_sees_a_placeholder_and_prose() -> None:
    assert placeholders("agentcfg switch PROFILE") == ["PROFILE"]
    assert placeholders("agentcfg profile add t ... --force") == ["..."]
    assert placeholders("export T_KEY=<key>") == ["< or >"]
    assert placeholders("agentcfg profile set t 'description=a <b>'") == []
    assert placeholders("agentcfg key set t && agentcfg switch t --agent claude") == []
    assert placeholders("kill 123") == []
    assert placeholders("agentcfg profile set t model=other-model") == []


def test_switch_notes_about_the_shells_keys_run_as_pasted(tmp_path):
    with serve(FaultServer(key=KEY)) as server:
        world = make_world(tmp_path, server)
        add_profile(world.home, server.base_url, server.root, name="box")  # keyless
        add_profile(world.home, server.base_url, server.root, key_env="T_KEY")
        store_key(world.home, "t", KEY)
        keyless = world.home.run("switch", "box", "--all", OPENAI_API_KEY="sk-from-the-shell-123")
        keyed = world.home.run("switch", "t", "--all", ANTHROPIC_AUTH_TOKEN="sk-other-token-456")
        commands = [c for r in (keyless, keyed) for note in notes_of(r) for c in backticked(note)]
        assert {"env -u OPENAI_API_KEY qwen", "unset ANTHROPIC_AUTH_TOKEN"} <= set(commands), commands
        for command in commands:
            run_fix(world, command)


def test_profile_rm_note_switches_the_agents_back_to_the_built_in(tmp_path):
    world = make_world(tmp_path)
    world.home.run("profile", "set", "local", "context_window=65536")
    world.home.run("switch", "local", "--agent", "codex")
    removed = world.home.run("profile", "rm", "local")
    (command,) = [c for note in notes_of(removed) for c in backticked(note)]
    assert command == "agentcfg switch local --agent codex"
    run_fix(world, command)
    assert "model_context_window = 1048576" in world.home.read(".codex/config.toml")


# -- errors whose hint is the command to run next -----------------------------------------------------------


def test_detect_on_a_keyless_profile_of_a_server_that_wants_a_key_hints_the_commands_that_work(tmp_path):
    with serve(FaultServer(key=KEY, max_model_len=49152)) as server:
        world = make_world(tmp_path, server)
        add_profile(world.home, server.base_url, server.root, window=None)  # keyless
        refused = world.home.run("profile", "set", "t", "--detect", check=2)
        command = refused.stderr.split("then detect again: ", 1)[1].strip()
        assert command == (
            "agentcfg profile set t key_env=T_API_KEY && agentcfg key set t && agentcfg profile set t --detect"
        )
        run_fix(world, command)
    assert world.home.json("profile", "show", "t")["context_window"] == 49152
