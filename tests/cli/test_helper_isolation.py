"""Every command agentcfg hands an agent runs the installed agentcfg, wherever it runs and whatever it inherits.

Claude Code runs its apiKeyHelper, Codex its provider's `auth` command, systemd the route's unit, each in a
directory agentcfg does not choose: often a repository the user just cloned. Such a repository may hold its
own `agentcfg/` (or `click/`, `keyring/`, a `sitecustomize.py`): `python -m agentcfg` imports from the current
directory first, and so does the console script when PYTHONPATH has an empty or relative entry (`export
PYTHONPATH=$PYTHONPATH:/x` with PYTHONPATH unset gives one). Here every such command, exactly as written,
runs in a directory of planted packages that leave a marker when imported: the marker never appears and the
real key is printed. agentcfg itself is run both ways a user may run it: its console script and
`python -m agentcfg` (which wrote `python -m agentcfg key get P`, the original hole).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from agentcfg.attribution import profile_file_id
from tests.cli.test_keys_backends import KEY, add_gw, fake_codex, store
from tests.conftest import AGENTCFG, Home
from tests.route import fake_litellm

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the agents' helpers are run through sh here")

# What a hostile repository plants: agentcfg itself, what agentcfg imports first, the tests' keyring backend
# (PYTHON_KEYRING_BACKEND names tests.fake_keyring), and the modules Python's site imports at start.
PLANTED = (
    "agentcfg/__init__.py",
    "agentcfg/__main__.py",
    "agentcfg/cli/__init__.py",
    "agentcfg/cli/hotpath.py",
    "click/__init__.py",
    "keyring/__init__.py",
    "tests/__init__.py",
    "tests/fake_keyring.py",
    "sitecustomize.py",
    "usercustomize.py",
)
INVOCATIONS = {"console-script": [AGENTCFG], "python-m": [sys.executable, "-m", "agentcfg"]}


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A cloned repository's directory whose every planted module appends its name to MARKER and prints a lie."""
    repo = tmp_path / "cloned-repo"
    marker = tmp_path / "MARKER"
    for relative in PLANTED:
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\nprint('sk-planted-by-the-repo')\n")
    return repo


def pythonpaths(repo: Path) -> list[str]:
    """PYTHONPATH as users have it: an empty entry (`$PYTHONPATH:/x` with it unset), `.`, the directory itself."""
    return [":", ".", str(repo)]


def run_agentcfg(home: Home, invocation: str, *args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess:
    """agentcfg as the user started it (the way it is started decides what it writes), from `cwd`."""
    done = subprocess.run(
        [*INVOCATIONS[invocation], *args],
        cwd=cwd,
        env={**home.env, **extra},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    return done


def assert_runs_the_installed_agentcfg(
    command: list[str], home: Home, hostile: Path, expected: str, *, status: int = 0
) -> list[subprocess.CompletedProcess]:
    """Run `command` from the hostile directory under each PYTHONPATH: nothing planted is imported, and it
    prints `expected` (the real key) on stdout."""
    marker = hostile.parent / "MARKER"
    results = []
    for pythonpath in pythonpaths(hostile):
        environ = {**home.env, "PYTHONPATH": pythonpath, "PYTHONSTARTUP": str(hostile / "sitecustomize.py")}
        done = subprocess.run(
            command, cwd=hostile, env=environ, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60
        )
        planted = marker.read_text().split() if marker.exists() else []
        assert planted == [], (pythonpath, command, planted, done.stdout, done.stderr)
        assert (done.returncode, done.stdout) == (status, expected), (pythonpath, command, done.stdout, done.stderr)
        results.append(done)
    return results


def auth_command(config: str, table: str) -> list[str]:
    auth = tomllib.loads(config)["model_providers"][table]["auth"]
    return [auth["command"], *auth["args"]]


@pytest.fixture
def keyed(home: Home, keyring_file: Path, tmp_path: Path) -> Path:
    """gw keyed (its key in the keyring), a Codex that runs auth commands; returns a neutral directory."""
    add_gw(home)
    store(keyring_file, "gw")
    fake_codex(home, "0.171.0")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return elsewhere


@pytest.mark.parametrize("invocation", INVOCATIONS)
def test_switch_writes_helpers_that_no_directory_or_pythonpath_can_replace(
    home: Home, keyed: Path, hostile: Path, invocation: str
) -> None:
    done = run_agentcfg(home, invocation, "switch", "gw", "--agent", "claude", "--agent", "codex", cwd=keyed)
    assert done.returncode == 0, done.stderr
    claude = json.loads(home.read(".claude/settings.json"))["apiKeyHelper"]
    config = home.read(".codex/config.toml")
    profile_file = home.read(".codex/agentcfg-gw.config.toml")
    commands = {
        "claude apiKeyHelper": ["sh", "-c", claude],  # Claude Code runs it through the shell
        "codex config.toml auth": auth_command(config, "agentcfg-gw"),
        "codex profile file auth": auth_command(profile_file, profile_file_id("gw")),
    }
    for command in commands.values():
        assert_runs_the_installed_agentcfg(command, home, hostile, KEY + "\n")
    before = home.snapshot()
    again = run_agentcfg(home, invocation, "switch", "gw", "--agent", "claude", "--agent", "codex", cwd=hostile)
    assert again.returncode == 0, again.stderr
    assert home.snapshot() == before  # the helper does not depend on where switch ran


@pytest.mark.parametrize("invocation", INVOCATIONS)
def test_exec_hands_claude_a_helper_that_no_directory_or_pythonpath_can_replace(
    home: Home, keyed: Path, hostile: Path, invocation: str, tmp_path: Path
) -> None:
    copy = tmp_path / "claude-settings.json"
    claude = Path(home.env["PATH"].split(os.pathsep)[0]) / "claude"
    claude.write_text(
        '#!/bin/sh\nif [ "$1" = --version ]; then echo "2.1.0 (Claude Code)"; exit 0; fi\n'
        f'[ "$1" = --settings ] && cp "$2" {shlex.quote(str(copy))}\n'
    )
    claude.chmod(0o755)
    done = run_agentcfg(home, invocation, "exec", "gw", "--", "claude", "-p", "hi", cwd=keyed)
    assert done.returncode == 0, done.stderr
    helper = json.loads(copy.read_text())["apiKeyHelper"]
    assert_runs_the_installed_agentcfg(["sh", "-c", helper], home, hostile, KEY + "\n")


def unit_commands(unit: str) -> dict[str, list[str]]:
    """ExecStart and ExecStop as systemd splits them (double quotes, backslash escapes; no `%` or `$` here)."""
    lines = dict(line.split("=", 1) for line in unit.splitlines() if line.startswith("Exec"))
    return {name: shlex.split(lines[name]) for name in ("ExecStart", "ExecStop")}


@pytest.mark.parametrize("invocation", INVOCATIONS)
def test_the_route_unit_runs_the_installed_agentcfg(
    home: Home, keyed: Path, hostile: Path, invocation: str, tmp_path: Path
) -> None:
    home.write(".config/agentcfg/profiles/prim.toml", 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    home.run("route", "add", "home", "--primary", "prim", "--fallback", "gw", "--port", "9")
    unit = run_agentcfg(home, invocation, "route", "serve", "home", "--print-systemd-unit", cwd=keyed)
    assert unit.returncode == 0, unit.stderr
    commands = unit_commands(unit.stdout)
    assert commands["ExecStart"][-4:] == ["route", "serve", "home", "--foreground"]
    assert commands["ExecStop"][-3:] == ["route", "stop", "home"]
    stopped = assert_runs_the_installed_agentcfg(commands["ExecStop"], home, hostile, "", status=3)
    assert all("route 'home' is not running" in done.stderr for done in stopped)  # agentcfg's own answer
    # ExecStart, with a LiteLLM that exits at once: agentcfg got as far as starting it, and nothing planted ran.
    litellm = fake_litellm.program(tmp_path, "exit")
    home.env["AGENTCFG_LITELLM"] = str(litellm)
    started = assert_runs_the_installed_agentcfg(
        commands["ExecStart"], home, hostile, "Exception: the config is not what LiteLLM expects\n", status=1
    )
    assert len(started) == len(pythonpaths(hostile)) and fake_litellm.record(litellm)["argv"]


OLD_HELPERS = {"console-script": [AGENTCFG], "python-m": [sys.executable, "-m", "agentcfg"]}  # before -I


def _old_claude_settings(home: Home, argv: list[str]) -> None:
    """Claude Code's settings.json as an older agentcfg left it: `argv` as its key helper."""
    home.write(
        ".claude/settings.json",
        json.dumps({"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_MODEL": "m"},
                    "apiKeyHelper": shlex.join(argv)}),
    )  # fmt: skip


@pytest.mark.parametrize("old", OLD_HELPERS)
def test_a_helper_an_older_agentcfg_wrote_is_still_its_own_and_a_switch_makes_it_safe(
    home: Home, keyed: Path, hostile: Path, old: str
) -> None:
    argv = [*OLD_HELPERS[old], "key", "get", "gw"]
    _old_claude_settings(home, argv)
    home.write(
        ".codex/config.toml",
        'model = "m"\nmodel_provider = "agentcfg-gw"\n\n[model_providers.agentcfg-gw]\nname = "agentcfg: gw"\n'
        'base_url = "http://127.0.0.1:9/v1"\nwire_api = "responses"\n'
        f"auth = {{ command = {json.dumps(argv[0])}, args = {json.dumps(argv[1:])} }}\n",
    )
    status = json.loads(home.run("status", "--json").stdout)
    assert {a["name"]: a["profile"] for a in status["agents"] if a["name"] in ("claude", "codex")} == {
        "claude": "gw",
        "codex": "gw",
    }
    doctor = json.loads(
        home.run("doctor", "--offline", "--json", "--agent", "claude", "--agent", "codex", check=None).stdout
    )
    sources = {a["agent"]: a["key_source"] for a in doctor["agents"]}
    assert sources == dict.fromkeys(("claude", "codex"), "keyring (through `agentcfg key get`)")  # not "your own"
    home.run("switch", "gw", "--agent", "claude", "--agent", "codex")
    claude = json.loads(home.read(".claude/settings.json"))["apiKeyHelper"]
    assert claude != shlex.join(argv)
    assert_runs_the_installed_agentcfg(["sh", "-c", claude], home, hostile, KEY + "\n")
    assert_runs_the_installed_agentcfg(
        auth_command(home.read(".codex/config.toml"), "agentcfg-gw"), home, hostile, KEY + "\n"
    )
    before = home.snapshot()
    home.run("switch", "gw", "--agent", "claude", "--agent", "codex")
    assert home.snapshot() == before


def test_the_unit_quotes_what_systemd_would_expand() -> None:
    """systemd expands `$VAR` and `%x` inside quotes too: a path holding them stays that path."""
    from agentcfg.shells import systemd_quote as _systemd_quote

    assert _systemd_quote('/opt/py $HOME/100%/"q"\\') == '"/opt/py $$HOME/100%%/\\"q\\"\\\\"'
    assert _systemd_quote("/usr/bin/python3") == "/usr/bin/python3"


def _old_codex_file(argv: list[str], provider: str) -> str:
    return (
        f'model = "m"\nmodel_provider = "{provider}"\n\n[model_providers.{provider}]\nname = "agentcfg: gw"\n'
        'base_url = "http://127.0.0.1:9/v1"\nwire_api = "responses"\n'
        f"auth = {{ command = {json.dumps(argv[0])}, args = {json.dumps(argv[1:])} }}\n"
    )


def _unisolated(home: Home, **extra: str) -> dict[str, dict]:
    report = json.loads(
        home.run("doctor", "--offline", "--json", "--agent", "claude", "--agent", "codex", check=None, **extra).stdout
    )
    return {f["agent"]: f for f in report["findings"] if f["id"] == "key-helper-not-isolated"}


@pytest.mark.parametrize(("old", "severity"), [("console-script", "warn"), ("python-m", "fail")])
def test_doctor_and_status_name_a_helper_an_older_agentcfg_wrote_and_its_fix_makes_it_safe(
    home: Home, keyed: Path, hostile: Path, old: str, severity: str
) -> None:
    """Until the next switch, the older helper stays in the agents' files (config.toml and the Codex profile
    files too): doctor says so offline (fail for `python -m` without -I, which runs a repository's agentcfg/ in
    every such repository; warn for the console script, which needs an empty or relative PYTHONPATH entry, fail
    when this shell has one), status in one line per agent, and the fix they print makes every helper safe."""
    argv = [*OLD_HELPERS[old], "key", "get", "gw"]
    _old_claude_settings(home, argv)
    home.write(".codex/config.toml", _old_codex_file(argv, "agentcfg-gw"))
    home.write(".codex/agentcfg-gw.config.toml", _old_codex_file(argv, profile_file_id("gw")))
    found = _unisolated(home)
    assert sorted(found) == ["claude", "codex"], found
    for agent, finding in found.items():
        assert finding["status"] == severity, finding
        assert finding["fix"] == f"agentcfg switch gw --agent {agent}", finding
    assert "~/.codex/agentcfg-gw.config.toml" in found["codex"]["evidence"], found["codex"]
    if old == "console-script":  # a PYTHONPATH with an empty entry: the agents started from this shell run it
        assert {a: f["status"] for a, f in _unisolated(home, PYTHONPATH=":/opt/x").items()} == {
            "claude": "fail",
            "codex": "fail",
        }
    agents = {a["name"]: a["key_helper_unisolated"] for a in home.json("status")["agents"]}
    exposure = {"console-script": "pythonpath", "python-m": "cwd"}[old]
    assert agents == {
        "codex": exposure,
        "qwen": None,
        "opencode": None,
        "claude": exposure,
        "cline": None,
        "copilot": None,
        "gemini": None,
        "droid": None,
    }, agents
    lines = [line for line in home.run("status").stdout.splitlines() if "key helper" in line]
    assert [line.split(":")[0] for line in lines] == ["codex", "claude"], lines
    for agent, line in zip(("codex", "claude"), lines, strict=True):
        assert f"`agentcfg switch gw --agent {agent}`" in line, line
    for finding in found.values():
        home.run(*shlex.split(finding["fix"])[1:])
    assert _unisolated(home, PYTHONPATH=":") == {}
    assert "key helper" not in home.run("status").stdout
    assert {a["key_helper_unisolated"] for a in home.json("status")["agents"]} == {None}
    helper = json.loads(home.read(".claude/settings.json"))["apiKeyHelper"]
    assert_runs_the_installed_agentcfg(["sh", "-c", helper], home, hostile, KEY + "\n")
    tables = {".codex/config.toml": "agentcfg-gw", ".codex/agentcfg-gw.config.toml": profile_file_id("gw")}
    for file, table in tables.items():
        assert_runs_the_installed_agentcfg(auth_command(home.read(file), table), home, hostile, KEY + "\n")
