"""`agentcfg exec PROFILE -- AGENT ARGS` through the installed `agentcfg`, with FAKE agents on PATH.

Each fake (a Python script named codex, claude, opencode or qwen) answers `--version` with its pinned
release and otherwise dumps what it was started with to a JSON file: argv, its whole environment, the
text of the --settings / QWEN_CODE_SYSTEM_SETTINGS_PATH file, and (claude) what its apiKeyHelper prints
when run the way Claude Code runs it (through the shell). So each test sees exactly what one agent process
gets, and that none of the agents' files under HOME changed. Keys live in tests/fake_keyring.py's
FileKeyring, outside HOME and the runtime dir, so a scan of both finds any copy exec leaves behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest
import tomllib

from agentcfg.errors import Exit
from tests.cli.test_keys_backends import KEY, add_gw, assert_clean_error, run, store
from tests.conftest import Home
from tests.e2e.agents import PINNED, plain_profile_refused

VERSIONS = {"codex": f"codex-cli {PINNED['codex']}", "claude": f"{PINNED['claude']} (Claude Code)"}
FAKE = """\
#!{python}
import json, os, subprocess, sys
if sys.argv[1:] == ["--version"]:
    print({version!r})
    sys.exit(0)
out = {{"argv": sys.argv[1:], "env": dict(os.environ)}}
args = sys.argv[1:]
if "--settings" in args:
    out["settings_path"] = args[args.index("--settings") + 1]
    out["settings"] = open(out["settings_path"]).read()
    helper = json.loads(out["settings"]).get("apiKeyHelper")
    if helper:  # Claude Code runs it through the shell, with its own environment
        done = subprocess.run(helper, shell=True, capture_output=True, text=True, timeout=60)
        out["helper"] = {{"status": done.returncode, "stdout": done.stdout, "stderr": done.stderr}}
if os.environ.get("QWEN_CODE_SYSTEM_SETTINGS_PATH"):
    out["settings_path"] = os.environ["QWEN_CODE_SYSTEM_SETTINGS_PATH"]
    out["settings"] = open(out["settings_path"]).read()
    out["settings_mode"] = oct(os.stat(out["settings_path"]).st_mode & 0o777)
with open({dump!r}, "w") as f:
    json.dump(out, f)
"""
OTHER_PROFILE = 'base_url = "http://127.0.0.1:7/v1"\nanthropic_base_url = "http://127.0.0.1:7"\nmodel = "other-model"\n'


@pytest.fixture
def agents(home: Home, tmp_path: Path) -> dict[str, Path]:
    """The four fake agents in HOME's bin dir; returns agent -> the JSON file its run writes."""
    bin_dir = Path(home.env["PATH"].split(os.pathsep)[0])
    dumps = {}
    for agent in PINNED:
        dumps[agent] = tmp_path / f"{agent}-run.json"
        script = bin_dir / agent
        version = VERSIONS.get(agent, PINNED[agent])
        script.write_text(FAKE.format(python=sys.executable, version=version, dump=str(dumps[agent])))
        script.chmod(0o755)
    return dumps


def ran(dump: Path) -> dict:
    return json.loads(dump.read_text())


def hashes(root: Path) -> dict[str, str]:
    """Every file under `root` (agentcfg's own included), by relative path, with links shown as links."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            out[str(path.relative_to(root))] = "-> " + os.readlink(path)
        elif path.is_file():
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


# agentcfg's own caches (never an agent's file, never a key): the installed version by program file, and the
# names of the profiles whose key was last found in the keyring (keystore.remember), and the profile texts `key get`
# read (profile_parse._ParsedCache: what the TOML reader made of them, no key).
CACHES = {
    ".config/agentcfg/state/versions.json",
    ".config/agentcfg/state/stored-keys",
    ".config/agentcfg/state/parsed-profiles",
}


def changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}


def runtime(home: Home) -> Path:
    return Path(home.env["XDG_RUNTIME_DIR"]) / "agentcfg"


def wait_until(done, seconds: float = 10) -> bool:
    """Whether `done()` came true within `seconds` (a key file goes when the agent's process has ended)."""
    import time

    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def gone(path: Path) -> bool:
    return wait_until(lambda: not path.exists())


def files_with(root: Path, secret: str) -> list[str]:
    return [
        str(p)
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and secret in p.read_text("utf-8", "replace")
    ]


@pytest.fixture
def switched(home: Home, keyring_file: Path, agents) -> Home:
    """gw (keyed, key in the keyring) and `other`; every agent's files switched to `other` first."""
    add_gw(home)
    store(keyring_file, "gw")
    home.write(".config/agentcfg/profiles/other.toml", OTHER_PROFILE)
    home.run("switch", "other")
    return home


# -- each agent's mechanism, the key only where designed, no file changed ---------------------------------


def test_codex_gets_c_overrides_and_the_key_in_its_variable(switched: Home, agents) -> None:
    before = hashes(switched.root)
    run(switched, "exec", "gw", "--", "codex", "exec", "hi")
    out = ran(agents["codex"])
    argv = out["argv"]
    assert argv[-2:] == ["exec", "hi"]  # the user's words last, after agentcfg's -c
    flags = argv[:-2]
    assert flags[0::2] == ["-c"] * (len(flags) // 2)
    overrides = dict(o.split("=", 1) for o in flags[1::2])
    parsed = {k: tomllib.loads(f"v = {v}")["v"] for k, v in overrides.items()}
    ident = "agentcfg_exec-gw"
    assert parsed["model"] == "m" and parsed["model_provider"] == ident
    assert parsed[f"model_providers.{ident}"] == {
        "name": "agentcfg: gw",
        "base_url": "http://127.0.0.1:9/v1",
        "wire_api": "responses",
        "env_key": "GW_API_KEY",
    }
    assert "GW_API_KEY" in parsed["shell_environment_policy.exclude"]
    assert out["env"]["GW_API_KEY"] == KEY and out["env"]["AGENTCFG_PROFILE"] == "gw"
    assert KEY not in json.dumps(argv)
    assert changed(before, hashes(switched.root)) <= CACHES  # the agents' files, journal, backups: as they were
    assert "other-model" in switched.read(".codex/config.toml")


def test_claude_gets_settings_and_fetches_the_stored_key_itself(switched: Home, agents) -> None:
    before = hashes(switched.root)
    run(switched, "exec", "gw", "--", "claude", "-p", "hi")
    out = ran(agents["claude"])
    path = Path(out["settings_path"])  # claude-gw-<digest of its text>.settings.json
    assert path.parent == runtime(switched) and path.name.startswith("claude-gw-")
    assert out["argv"] == ["--settings", str(path), "-p", "hi"]
    settings = json.loads(out["settings"])
    assert settings["model"] == "m"
    assert settings["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert settings["env"]["ANTHROPIC_AUTH_TOKEN"] == "" and settings["env"]["ANTHROPIC_API_KEY"] == ""
    assert settings["env"]["ANTHROPIC_MODEL"] == "m"
    assert settings["apiKeyHelper"].endswith("key get gw")
    assert out["helper"] == {"status": 0, "stdout": KEY, "stderr": ""} or out["helper"]["stdout"].strip() == KEY
    assert "GW_API_KEY" not in out["env"]  # only its helper has it: not the model's commands
    assert KEY not in json.dumps(out["argv"]) + json.dumps(out["env"])
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert changed(before, hashes(switched.root)) <= CACHES
    assert "127.0.0.1:7" in switched.read(".claude/settings.json")


def test_claude_keeps_a_key_exported_in_the_shell(switched: Home, agents) -> None:
    """Exported, the key is already in the shell's (and so the agent's) environment: exec takes nothing away."""
    run(switched, "exec", "gw", "--", "claude", "-p", "hi", GW_API_KEY=KEY)
    assert ran(agents["claude"])["env"]["GW_API_KEY"] == KEY


def test_claude_never_gets_the_keyrings_key_in_its_environment_beside_an_older_export(switched: Home, agents) -> None:
    """The keyring holds KEY (rotated) and the shell still exports an old one: the model's commands see only
    what the shell already had, never the keyring's key (the helper gives that one to Claude Code itself)."""
    old = "sk-old-export-0123456789abcdef"
    run(switched, "exec", "gw", "--", "claude", "-p", "hi", GW_API_KEY=old)
    env = ran(agents["claude"])["env"]
    assert env["GW_API_KEY"] == old and KEY not in json.dumps(env)


def test_opencode_gets_its_whole_config_in_a_variable_naming_the_key(switched: Home, agents) -> None:
    before = hashes(switched.root)
    run(switched, "exec", "gw", "--", "opencode", "run", "hi")
    out = ran(agents["opencode"])
    assert out["argv"] == ["run", "hi"]
    content = json.loads(out["env"]["OPENCODE_CONFIG_CONTENT"])
    (provider_id,) = content["provider"]
    provider = content["provider"][provider_id]
    assert content["model"] == content["small_model"] == f"{provider_id}/m"
    assert provider["options"] == {"baseURL": "http://127.0.0.1:9/v1", "apiKey": "{env:GW_API_KEY}"}
    assert list(provider["models"]) == ["m"]
    assert out["env"]["GW_API_KEY"] == KEY and KEY not in out["env"]["OPENCODE_CONFIG_CONTENT"]
    # opencode reads GW_API_KEY itself; its plugin keeps the variable from the commands opencode runs
    (plugin,) = content["plugin"]
    assert plugin.startswith(runtime(switched).as_uri() + "/opencode-gw-") and plugin.endswith(".plugin.js")
    assert "GW_API_KEY" in Path(plugin.removeprefix("file://")).read_text()
    assert changed(before, hashes(switched.root)) <= CACHES


def test_qwen_gets_the_key_in_a_settings_file_of_its_own_run_gone_when_it_has_ended(switched: Home, agents) -> None:
    """qwen passes its whole environment on to the commands the model runs: the key is in no variable of its
    process (OPENAI_API_KEY is empty, or qwen would load ~/.qwen/.env's), only in its settings file, which is
    this run's alone, owner-only, and removed once qwen has ended."""
    before = hashes(switched.root)
    run(switched, "exec", "gw", "--", "qwen", "-p", "hi")
    out = ran(agents["qwen"])
    assert out["argv"] == ["-p", "hi"]
    path = Path(out["env"]["QWEN_CODE_SYSTEM_SETTINGS_PATH"])
    assert path.parent == runtime(switched) and path.name.startswith("qwen-gw-run")
    settings = json.loads(out["settings"])
    assert settings["model"] == {"name": "m", "baseUrl": "http://127.0.0.1:9/v1"}
    assert settings["security"]["auth"] == {"selectedType": "openai", "apiKey": KEY}
    (entry,) = settings["modelProviders"]["openai"]
    assert entry["id"] == "m" and entry["baseUrl"] == "http://127.0.0.1:9/v1" and "envKey" not in entry
    assert "GW_API_KEY" not in out["env"] and out["env"]["OPENAI_API_KEY"] == ""
    assert KEY not in json.dumps(out["env"])
    assert out["settings_mode"] == "0o600"
    assert gone(path)
    assert changed(before, hashes(switched.root)) <= CACHES


@pytest.mark.parametrize("agent", list(PINNED))
def test_the_key_is_in_no_variable_but_its_own_and_in_no_file_once_the_agent_has_ended(
    switched: Home, agents, agent: str
) -> None:
    """Where the key is while the agent runs: Codex and opencode read their own variable (and keep it from the
    commands they run), Claude Code fetches it (`key get`), qwen and Droid read this run's settings file."""
    if refused := plain_profile_refused(agent):  # `gw` is a plain profile: it runs on a route only
        pytest.skip(refused)
    run(switched, "exec", "gw", "--", agent, "hi")
    out = ran(agents[agent])
    assert KEY not in json.dumps(out["argv"])
    assert {name for name, value in out["env"].items() if KEY in value} <= {"GW_API_KEY"}
    assert ("GW_API_KEY" in out["env"]) == (agent in ("codex", "opencode"))
    assert (KEY in out.get("settings", "")) == (agent in ("qwen", "droid"))
    assert files_with(switched.root, KEY) == []
    assert wait_until(lambda: files_with(runtime(switched), KEY) == [])


def test_two_profiles_side_by_side_each_get_their_own_file(switched: Home, agents) -> None:
    run(switched, "exec", "gw", "--", "claude")
    gw = ran(agents["claude"])
    run(switched, "exec", "other", "--", "claude")
    other = ran(agents["claude"])
    assert gw["settings_path"] != other["settings_path"]
    assert json.loads(Path(gw["settings_path"]).read_text())["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert json.loads(other["settings"])["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:7"


def test_a_keyless_profile_on_claude_gets_the_placeholder_from_its_helper(switched: Home, agents) -> None:
    run(switched, "exec", "other", "--", "claude")
    out = ran(agents["claude"])
    assert out["helper"]["status"] == 0 and out["helper"]["stdout"].strip()
    assert KEY not in out["helper"]["stdout"]


# -- other programs, paths, refusals ----------------------------------------------------------------------


@pytest.mark.parametrize("program", ["env", "printenv"])
def test_a_non_agent_program_gets_exactly_todays_variables(switched: Home, agents, program: str) -> None:
    result = run(switched, "exec", "gw", "--", program)
    got = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    expected = {**switched.env, "GW_API_KEY": KEY, "AGENTCFG_PROFILE": "gw"}
    assert got == expected
    assert not runtime(switched).exists() or list(runtime(switched).iterdir()) == []


def test_an_agent_by_its_full_path_is_recognised(switched: Home, agents) -> None:
    program = Path(switched.env["PATH"].split(os.pathsep)[0]) / "codex"
    run(switched, "exec", "gw", "--", str(program), "exec", "hi")
    argv = ran(agents["codex"])["argv"]
    assert argv[0] == "-c" and 'model_provider="agentcfg_exec-gw"' in argv


@pytest.mark.parametrize("given", [("--settings", "x.json"), ("--settings=x.json",)])
def test_claude_given_settings_is_refused(switched: Home, agents, given) -> None:
    result = run(switched, "exec", "gw", "--", "claude", *given, check=None)
    assert_clean_error(result, "--settings", status=Exit.REFUSED)
    assert not agents["claude"].exists()


@pytest.mark.parametrize("agent", [*PINNED, "env"])
def test_a_keyed_profile_with_no_key_is_exit_4_and_nothing_runs(home: Home, keyring_file, agents, agent) -> None:
    add_gw(home)
    result = run(home, "exec", "gw", "--", agent, check=None)
    assert_clean_error(result, "gw", status=Exit.NO_KEY)
    assert not any(dump.exists() for dump in agents.values())
    assert not runtime(home).exists() or list(runtime(home).iterdir()) == []


def test_claude_on_a_profile_without_anthropic_base_url_is_refused_with_the_reason(home: Home, agents) -> None:
    home.write(".config/agentcfg/profiles/oa.toml", 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    result = run(home, "exec", "oa", "--", "claude", check=None)
    assert_clean_error(result, "claude", "anthropic_base_url", status=Exit.REFUSED)
    assert not agents["claude"].exists()


def test_codex_with_a_legacy_top_level_profile_is_refused_with_the_fix(home: Home, agents) -> None:
    config = home.write(".codex/config.toml", 'profile = "work"\n\n[profiles.work]\nmodel = "x"\n')
    before = config.read_bytes()
    result = run(home, "exec", "local", "--", "codex", check=None)
    assert_clean_error(result, 'profile = "work"', "work.config.toml", status=Exit.REFUSED)
    assert not agents["codex"].exists() and config.read_bytes() == before


def test_opencode_2_is_refused(home: Home, agents) -> None:
    script = Path(home.env["PATH"].split(os.pathsep)[0]) / "opencode"
    script.write_text(script.read_text().replace(repr(PINNED["opencode"]), repr("2.0.1")))
    result = run(home, "exec", "local", "--", "opencode", check=None)
    assert_clean_error(result, "opencode 2", status=Exit.REFUSED)
    assert not agents["opencode"].exists()
