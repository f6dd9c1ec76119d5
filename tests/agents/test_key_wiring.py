"""How a keyed profile's key reaches each agent (KeySource), applied to plain strings.

Helper command (Claude's apiKeyHelper, Codex's auth table), a variable name (env_key, envKey,
{env:VAR}) or, with --store-key-in-files, the key itself: never two of them at once.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from agentcfg import current, edit, invocation, plan, redact, switch
from agentcfg.agents import claude, codex, opencode, qwen
from agentcfg.agents.base import KeySource
from agentcfg.agents.keyhelper import helper_command, helper_exposure, is_helper
from agentcfg.edit import REMOVE
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PLACEHOLDER_KEY, Profile
from tests.agents.samples import ENVIRON, GATEWAY_ANTHROPIC, NO_KEYS
from tests.agents.samples import switch as run_switch

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

GW = GATEWAY_ANTHROPIC
LOCAL = Profile(
    name="local",
    base_url="http://127.0.0.1:8000/v1",
    model="qwen3-coder",
    anthropic_base_url="http://127.0.0.1:8000",
    context_window=65536,
)
ARGV = ("/opt/agentcfg/bin/agentcfg", "key", "get", "gw")
HELPER = KeySource(helper=ARGV, runs_helper=frozenset({"claude", "codex"}))
ENV_ONLY = KeySource(helper=ARGV, runs_helper=frozenset({"claude"}))  # an older Codex: reads GW_API_KEY
LITERAL_KEY = "sk-literal-0123456789abcdef"
LITERAL = KeySource(literal=LITERAL_KEY)
CODEX_KEYS = ("env_key", "experimental_bearer_token", "auth")
SITE = "/venv/lib/python3.12/site-packages"
USER_SITE = "/home/u/.local/lib/python3.12/site-packages"


def _code(*dirs: str) -> str:
    """The -c program invocation.isolated_command writes for `dirs`."""
    return f"import sys; sys.path[:0] = {json.dumps(list(dirs))}; from agentcfg.cli import main; main()"


def one(agent, profile: Profile, text: str | None, keys: KeySource) -> str:
    (file,) = agent.files(ENVIRON)
    out, _ = run_switch(agent, profile, {file: text}, keys)
    return out[file]


# --- the helper command line ---------------------------------------------------------------------------


@pytest.mark.skipif(os.name == "nt", reason="POSIX shell quoting")
def test_helper_command_round_trips_through_shlex():
    argv = ('/home/u/my tools/it\'s "agentcfg"/bin/agentcfg', "key", "get", "gw")
    command = helper_command(argv)
    assert command == shlex.join(argv)
    assert tuple(shlex.split(command)) == argv
    assert is_helper(command)


@pytest.mark.skipif(os.name == "nt", reason="POSIX shell")
def test_helper_command_runs_through_sh(tmp_path):
    """Claude Code runs apiKeyHelper with the system shell: spaces, quotes and $ in the path survive it."""
    directory = tmp_path / "my tools" / 'it\'s "q" $HOME `x`'
    directory.mkdir(parents=True)
    script = directory / "agentcfg"
    script.write_text('#!/bin/sh\nprintf "<%s>" "$@"\n')
    script.chmod(0o755)
    command = helper_command((str(script), "key", "get", "gw"))
    result = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, env={}, timeout=10)
    assert (result.returncode, result.stdout, result.stderr) == (0, "<key><get><gw>", "")


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("/opt/agentcfg/bin/agentcfg key get gw", True),
        ("/usr/bin/python3 -m agentcfg key get local", True),  # written before -I: still agentcfg's, replaced
        ("/venv/bin/python -I -m agentcfg key get gw", True),
        (shlex.join(("/venv/bin/python", "-I", "-c", _code("/src/agentcfg"), "key", "get", "gw")), True),
        ("~/bin/key.sh", False),
        ("agentcfg-key", False),
        ("pass show gw key get x", False),
        (None, False),
        (["agentcfg", "key", "get", "gw"], False),
    ],
)
def test_is_helper(command, ours):
    assert is_helper(command) is ours


@pytest.mark.parametrize(
    ("command", "exposure"),
    [
        # what invocation.isolated_command writes: neither the current directory nor PYTHONPATH is searched
        ("/venv/bin/python -I -m agentcfg key get gw", None),
        (shlex.join(("/venv/bin/python", "-I", "-c", _code(USER_SITE), "key", "get", "gw")), None),
        ("/venv/bin/python -Im agentcfg key get gw", None),
        ("/venv/bin/python -X utf8 -I -m agentcfg key get gw", None),
        # earlier versions': `-m` (and `-c`) put the current directory first on sys.path
        ("/usr/bin/python3 -m agentcfg key get local", "cwd"),
        ("'/my venv/bin/python' -m agentcfg key get local", "cwd"),
        ("/usr/bin/python3 -s -E -m agentcfg key get local", "cwd"),  # -E keeps PYTHONPATH out, not the cwd
        (shlex.join(("/usr/bin/python3", "-c", _code(SITE), "key", "get", "gw")), "cwd"),
        ("/usr/bin/python3 -W ignore -m agentcfg key get gw", "cwd"),  # -W's argument is no flag of its own
        ("/usr/bin/python3 -Wi -m agentcfg key get gw", "cwd"),
        # the console script: its own directory first, but PYTHONPATH honoured (an empty entry is the cwd)
        ("/opt/agentcfg/bin/agentcfg key get gw", "pythonpath"),
        ("/usr/bin/python3 -P -m agentcfg key get gw", "pythonpath"),  # -P: no cwd, PYTHONPATH still read
        ("/usr/bin/python3 -P -E -m agentcfg key get gw", None),
        # not agentcfg's helper: the user's own command is theirs
        ("~/bin/key.sh", None),
        ("pass show gw", None),
        (None, None),
    ],
)
def test_helper_exposure(command, exposure):
    assert helper_exposure(command) == exposure


@pytest.mark.parametrize("dirs", [[SITE], [USER_SITE], ["/src/agentcfg", SITE]])
def test_every_helper_switch_writes_is_isolated(dirs):
    argv = (*invocation.isolated_command("/venv/bin/python", dirs, [SITE]), "key", "get", "gw")
    assert helper_exposure(helper_command(argv)) is None


# --- Claude --------------------------------------------------------------------------------------------


def _claude(profile: Profile, text: str | None, keys: KeySource) -> dict:
    return json.loads(one(claude, profile, text, keys))


def test_claude_keyed_with_a_helper():
    settings = _claude(GW, None, HELPER)
    assert settings["apiKeyHelper"] == shlex.join(ARGV)
    assert "ANTHROPIC_AUTH_TOKEN" not in settings["env"] and "ANTHROPIC_API_KEY" not in settings["env"]
    (file,) = claude.files(ENVIRON)
    assert claude.read({file: json.dumps(settings)}).key == "helper command"


def test_claude_keyed_with_a_helper_replaces_plaintext_tokens():
    text = json.dumps({"env": {"ANTHROPIC_AUTH_TOKEN": "sk-mine-123456", "ANTHROPIC_API_KEY": "sk-api-123456"}})
    settings = _claude(GW, text, HELPER)
    assert settings == {
        "env": {
            "ANTHROPIC_BASE_URL": "https://gw.example/anthropic",
            "ANTHROPIC_MODEL": "glm-4.6",
            "ANTHROPIC_DEFAULT_OPUS_MODEL": "glm-4.6",
            "ANTHROPIC_DEFAULT_SONNET_MODEL": "glm-4.6",
            "ANTHROPIC_DEFAULT_HAIKU_MODEL": "glm-4.6",
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "32000",
            "CLAUDE_CODE_MAX_CONTEXT_TOKENS": "200000",
        },
        "apiKeyHelper": shlex.join(ARGV),
    }


def test_claude_keyless_writes_the_placeholder_and_removes_our_helper():
    keyed = one(claude, GW, '{"theme": "dark"}', HELPER)
    settings = _claude(LOCAL, keyed, NO_KEYS)
    assert settings["env"]["ANTHROPIC_AUTH_TOKEN"] == PLACEHOLDER_KEY
    assert "apiKeyHelper" not in settings
    assert settings["theme"] == "dark"


def test_claude_keyless_removes_the_users_own_helper_whose_key_would_go_along():
    # A token does not outrank a helper: Claude Code runs it and sends its key as x-api-key next to the token
    # (seen with 2.1.197 and 2.1.332), so the user's key would reach the keyless profile's host.
    settings = _claude(LOCAL, '{"apiKeyHelper": "~/bin/key.sh"}', NO_KEYS)
    assert "apiKeyHelper" not in settings
    assert settings["env"]["ANTHROPIC_AUTH_TOKEN"] == PLACEHOLDER_KEY
    (file,) = claude.files(ENVIRON)
    (change,) = claude.edits(LOCAL, {file: '{"apiKeyHelper": "~/bin/key.sh"}'}, NO_KEYS)
    assert any("removed your apiKeyHelper" in note for note in change.notes), change.notes


def test_claude_literal_writes_the_token_and_removes_our_helper():
    keyed = one(claude, GW, None, HELPER)
    settings = _claude(GW, keyed, LITERAL)
    assert settings["env"]["ANTHROPIC_AUTH_TOKEN"] == LITERAL_KEY
    assert "ANTHROPIC_API_KEY" not in settings["env"]
    assert "apiKeyHelper" not in settings
    (file,) = claude.files(ENVIRON)
    assert claude.read({file: json.dumps(settings)}).key == "in file"


def test_claude_literal_removes_the_users_own_helper():
    settings = _claude(GW, '{"apiKeyHelper": "~/bin/key.sh"}', LITERAL)
    assert "apiKeyHelper" not in settings
    assert settings["env"]["ANTHROPIC_AUTH_TOKEN"] == LITERAL_KEY


def test_claude_back_from_literal_to_helper_removes_the_token():
    literal = one(claude, GW, None, LITERAL)
    settings = _claude(GW, literal, HELPER)
    assert "ANTHROPIC_AUTH_TOKEN" not in settings["env"]
    assert settings["apiKeyHelper"] == shlex.join(ARGV)


# --- Codex ---------------------------------------------------------------------------------------------


def _provider(text: str, name: str = "gw") -> dict:
    return tomllib.loads(text)["model_providers"][f"agentcfg-{name}"]


def _codex_key_fields(provider: dict) -> set[str]:
    present = {k for k in CODEX_KEYS if k in provider}
    assert len(present) <= 1, f"Codex rejects {present} together"
    return present


def test_codex_runs_the_helper():
    text = one(codex, GW, None, HELPER)
    provider = _provider(text)
    assert _codex_key_fields(provider) == {"auth"}
    assert provider["auth"] == {"command": ARGV[0], "args": list(ARGV[1:])}
    (file,) = codex.files(ENVIRON)
    assert codex.read({file: text}).key == "helper command"


def test_codex_without_the_helper_reads_the_variable():
    text = one(codex, GW, None, ENV_ONLY)
    provider = _provider(text)
    assert _codex_key_fields(provider) == {"env_key"}
    assert provider["env_key"] == "GW_API_KEY"
    (file,) = codex.files(ENVIRON)
    assert codex.read({file: text}).key == "env GW_API_KEY"


def test_codex_from_the_auth_table_to_env_key():
    with_auth = one(codex, GW, None, HELPER)
    assert "[model_providers.agentcfg-gw.auth]" in with_auth
    text = one(codex, GW, with_auth, ENV_ONLY)
    provider = _provider(text)
    assert _codex_key_fields(provider) == {"env_key"}
    assert "auth" not in text.replace("agentcfg", "")  # neither the table nor its keys are left


def test_codex_literal():
    text = one(codex, GW, one(codex, GW, None, HELPER), LITERAL)
    provider = _provider(text)
    assert _codex_key_fields(provider) == {"experimental_bearer_token"}
    assert provider["experimental_bearer_token"] == LITERAL_KEY
    (file,) = codex.files(ENVIRON)
    assert codex.read({file: text}).key == "in file"


@pytest.mark.parametrize("keys", [NO_KEYS, HELPER, ENV_ONLY, LITERAL], ids=["none", "helper", "env", "literal"])
def test_codex_keyless_has_no_key_field(keys):
    for previous in (None, one(codex, GW, None, HELPER), one(codex, GW, None, LITERAL)):
        text = one(codex, LOCAL, previous, keys)
        assert _codex_key_fields(_provider(text, "local")) == set()


@pytest.mark.parametrize("first", [HELPER, ENV_ONLY, LITERAL], ids=["helper", "env", "literal"])
@pytest.mark.parametrize("then", [HELPER, ENV_ONLY, LITERAL], ids=["helper", "env", "literal"])
def test_codex_never_has_two_key_fields(first, then):
    text = one(codex, GW, one(codex, GW, None, first), then)
    assert len(_codex_key_fields(_provider(text))) == 1


# --- opencode ------------------------------------------------------------------------------------------


def _opencode_key(text: str, name: str = "gw"):
    return json.loads(text)["provider"][f"agentcfg-{name}"]["options"].get("apiKey")


def test_opencode_literal_and_variable():
    assert _opencode_key(one(opencode, GW, None, LITERAL)) == LITERAL_KEY
    for keys in (HELPER, ENV_ONLY, NO_KEYS):
        assert _opencode_key(one(opencode, GW, None, keys)) == "{env:GW_API_KEY}"
    back = one(opencode, GW, one(opencode, GW, None, LITERAL), HELPER)
    assert _opencode_key(back) == "{env:GW_API_KEY}"
    assert LITERAL_KEY not in back


def test_opencode_keyless_has_no_api_key():
    assert _opencode_key(one(opencode, LOCAL, None, LITERAL), "local") is None


# --- qwen ----------------------------------------------------------------------------------------------


def _qwen(profile: Profile, env_text: str | None, settings_text: str | None, keys: KeySource):
    env_file, settings_file = qwen.files(ENVIRON)
    out, notes = run_switch(qwen, profile, {env_file: env_text, settings_file: settings_text}, keys)
    return out[env_file], out[settings_file], notes


def _ours(settings_text: str) -> list[dict]:
    return [e for e in json.loads(settings_text)["modelProviders"]["openai"] if e["name"].startswith("agentcfg:")]


def test_qwen_keyed_names_the_variable():
    env_text, settings_text, notes = _qwen(GW, None, None, HELPER)
    assert "OPENAI_API_KEY" not in edit.load("dotenv", env_text)
    entries = json.loads(settings_text)["modelProviders"]["openai"]
    assert entries[0]["envKey"] == "GW_API_KEY"
    assert entries[0]["id"] == "glm-4.6" and entries[0]["baseUrl"] == "https://gw.example/v1"
    assert notes == ()
    env_file, settings_file = qwen.files(ENVIRON)
    binding = qwen.read({env_file: env_text, settings_file: settings_text})
    assert binding.key == "env GW_API_KEY"
    assert (binding.base_url, binding.model) == ("https://gw.example/v1", "glm-4.6")


def test_qwen_keyed_removes_the_placeholder():
    env_text, _, notes = _qwen(GW, f"OPENAI_API_KEY={PLACEHOLDER_KEY}\n", None, HELPER)
    assert "OPENAI_API_KEY" not in edit.load("dotenv", env_text)
    assert notes == ()


def test_qwen_keeps_the_users_own_entries_after_ours():
    mine = [
        {"id": "gpt-4o", "name": "my OpenAI", "baseUrl": "https://api.openai.com/v1", "envKey": "OPENAI_API_KEY"},
        {"id": "glm-4.6", "name": "my own glm", "baseUrl": "https://elsewhere/v1"},
    ]
    text = json.dumps({"modelProviders": {"openai": mine}, "ui": {"theme": "dark"}})
    _, settings_text, _ = _qwen(GW, None, text, HELPER)
    settings = json.loads(settings_text)
    entries = settings["modelProviders"]["openai"]
    assert entries[0]["name"] == "agentcfg: gw" and entries[0]["envKey"] == "GW_API_KEY"
    assert entries[1:] == mine
    assert settings["ui"] == {"theme": "dark"}


def test_qwen_two_switches_leave_one_entry_of_ours():
    mine = {"id": "gpt-4o", "name": "my OpenAI"}
    _, first, _ = _qwen(GW, None, json.dumps({"modelProviders": {"openai": [mine]}}), HELPER)
    env_text, second, _ = _qwen(LOCAL, None, first, NO_KEYS)
    ours = _ours(second)
    assert len(ours) == 1
    assert ours[0]["id"] == "qwen3-coder" and ours[0]["envKey"] == "OPENAI_API_KEY"
    assert json.loads(second)["modelProviders"]["openai"][1:] == [mine]
    assert edit.load("dotenv", env_text)["OPENAI_API_KEY"] == PLACEHOLDER_KEY


@pytest.mark.parametrize("value", ['{"x": 1}', '"gpt-4o"', "null"])
def test_qwen_refuses_a_model_providers_entry_that_is_not_a_list(value):
    text = f'{{"modelProviders": {{"openai": {value}}}}}'
    with pytest.raises(AgentcfgError, match=r"modelProviders\.openai is not a list") as caught:
        _qwen(GW, None, text, HELPER)
    assert caught.value.where is not None and caught.value.where.endswith("settings.json")


def test_qwen_literal():
    env_text, settings_text, _ = _qwen(GW, None, None, LITERAL)
    assert edit.load("dotenv", env_text)["OPENAI_API_KEY"] == LITERAL_KEY
    (ours,) = _ours(settings_text)
    assert ours["envKey"] == "OPENAI_API_KEY"
    env_file, settings_file = qwen.files(ENVIRON)
    assert qwen.read({env_file: env_text, settings_file: settings_text}).key == "in .env"


# --- a second identical switch -------------------------------------------------------------------------


@pytest.mark.parametrize("keys", [HELPER, ENV_ONLY, LITERAL, NO_KEYS], ids=["helper", "env", "literal", "none"])
@pytest.mark.parametrize("agent", [claude, codex, opencode, qwen], ids=lambda a: a.TRAITS.name)
def test_a_second_identical_switch_changes_nothing(agent, keys):
    texts = {file: None for file in agent.files(ENVIRON)}
    once, _ = run_switch(agent, GW, texts, keys)
    again, notes = run_switch(agent, GW, dict(once), keys)
    for file, text in once.items():
        assert again[file] is text, file.path
    assert notes == ()


# --- the journal keeps a digest of a key, not the key ---------------------------------------------------


def test_owned_to_json_keeps_only_a_digest_of_a_known_key():
    redact.register(LITERAL_KEY)
    (file_edit,) = claude.edits(GW, {claude.files(ENVIRON)[0]: None}, LITERAL)
    owned = plan.owned_to_json(tuple(file_edit.assignments))
    token = next(item for item in owned if item["key"] == ["env", "ANTHROPIC_AUTH_TOKEN"])
    assert token == {"key": ["env", "ANTHROPIC_AUTH_TOKEN"], "sha256": plan.digest(LITERAL_KEY)}
    assert {"key": ["env", "ANTHROPIC_API_KEY"], "absent": True} in owned
    assert {"key": ["env", "ANTHROPIC_MODEL"], "value": "glm-4.6"} in owned
    assert LITERAL_KEY not in json.dumps(owned)


def test_owned_to_json_keeps_values_that_are_not_keys():
    owned = plan.owned_to_json(((("a", "b"), "not-registered-0123"), (("c",), REMOVE), (("n",), 3), (("l",), [1])))
    assert owned == [
        {"key": ["a", "b"], "value": "not-registered-0123"},
        {"key": ["c"], "absent": True},
        {"key": ["n"], "value": 3},
        {"key": ["l"], "value": [1]},
    ]


def test_drifted_with_a_secret():
    redact.register(LITERAL_KEY)
    (file,) = claude.files(ENVIRON)
    (file_edit,) = claude.edits(GW, {file: None}, LITERAL)
    text = edit.apply("json", "", file_edit.assignments)
    owned = json.loads(json.dumps(plan.owned_to_json(tuple(file_edit.assignments))))  # as the journal stores it
    assert plan.drifted("json", text, owned, "f") == []
    rotated = text.replace(LITERAL_KEY, "sk-someone-else-0123456789")
    assert plan.drifted("json", rotated, owned, "f") == ["env.ANTHROPIC_AUTH_TOKEN"]
    with_api_key = edit.apply("json", text, [(("env", "ANTHROPIC_API_KEY"), "sk-added")])
    assert plan.drifted("json", with_api_key, owned, "f") == ["env.ANTHROPIC_API_KEY"]
    removed = edit.apply("json", text, [(("env", "ANTHROPIC_AUTH_TOKEN"), REMOVE)])
    assert plan.drifted("json", removed, owned, "f") == ["env.ANTHROPIC_AUTH_TOKEN"]


# --- which agents run the helper ----------------------------------------------------------------------


@pytest.fixture
def bin_environ(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "bin").mkdir()
    return {"PATH": str(tmp_path / "bin"), "AGENTCFG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}


def _install(environ: dict[str, str], name: str, output: str) -> None:
    path = Path(environ["PATH"]) / name
    path.write_text(f'#!/bin/sh\necho "{output}"\n')
    path.chmod(0o755)


@pytest.mark.skipif(os.name == "nt", reason="fake agents are POSIX shell scripts")
@pytest.mark.parametrize(
    ("output", "runs"),
    [("codex-cli 0.119.0", True), ("codex-cli 0.171.0", True), ("codex-cli 0.118.9", False), ("codex-cli", False)],
)
def test_runs_helper_follows_the_codex_version(bin_environ, output, runs):
    _install(bin_environ, "codex", output)
    assert current.runs_helper(codex, bin_environ) is runs


def test_runs_helper_without_running_anything(bin_environ):
    assert current.runs_helper(codex, bin_environ) is False  # not installed
    assert current.runs_helper(claude, bin_environ) is True  # every version
    assert current.runs_helper(qwen, bin_environ) is False
    assert current.runs_helper(opencode, bin_environ) is False


@pytest.mark.parametrize(
    ("dirs", "expected"),
    [
        ([SITE], ("-m", "agentcfg")),  # pip install into a venv or the system: isolation searches its site
        ([f"{SITE}/../site-packages"], ("-m", "agentcfg")),  # the same directory, spelled otherwise
        (["/src/agentcfg", SITE], ("-c", _code("/src/agentcfg"))),  # editable install, checkout: deps in the venv
        ([USER_SITE], ("-c", _code(USER_SITE))),  # pip install --user: its dependencies are there too
        (["/src/agentcfg", USER_SITE, SITE], ("-c", _code("/src/agentcfg", USER_SITE))),  # --user editable
        (["/dir with 'quotes' and \\"], ("-c", _code("/dir with 'quotes' and \\"))),
    ],
    ids=["site", "site-spelled-otherwise", "editable", "user-site", "user-editable", "odd-path"],
)
def test_isolated_command(dirs, expected):
    """Always -I: neither the current directory, PYTHONPATH nor the user's site decide what runs."""
    command = invocation.isolated_command("/venv/bin/python", dirs, [SITE, "/usr/lib/python3/dist-packages"])
    assert command == ("/venv/bin/python", "-I", *expected)


def test_isolated_command_code_puts_back_exactly_the_directories(tmp_path):
    odd = tmp_path / 'it\'s "odd" \\ é'
    (odd / "agentcfg" / "cli").mkdir(parents=True)
    (odd / "agentcfg" / "__init__.py").write_text("")
    (odd / "agentcfg" / "cli" / "__init__.py").write_text("import sys\ndef main():\n    print(sys.argv[1:])\n")
    command = invocation.isolated_command(sys.executable, [str(odd)], [])
    done = subprocess.run([*command, "key", "get", "gw"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "['key', 'get', 'gw']\n", "")


def test_self_command_is_this_interpreter_isolated():
    command = invocation.self_command()
    assert command[:2] == (sys.executable, "-I")
    if command[2] == "-c":  # this checkout (an editable install) is put back by its absolute path
        assert json.dumps(str(Path(invocation.__file__).resolve().parents[1])) in command[3]


def test_import_dirs_are_where_this_process_finds_agentcfg_and_its_dependencies(monkeypatch, tmp_path):
    import keyring

    dirs = invocation._import_dirs()
    assert os.path.dirname(os.path.dirname(os.path.abspath(invocation.__file__))) in dirs
    assert os.path.dirname(os.path.dirname(os.path.abspath(keyring.__file__))) in dirs
    assert str(tmp_path) not in dirs
    (tmp_path / "somedep").mkdir()
    (tmp_path / "somedep" / "__init__.py").write_text("")
    (tmp_path / "single.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))  # where this process finds them: as PYTHONPATH or --user would
    monkeypatch.setattr(invocation, "RUNTIME_PACKAGES", ("agentcfg", "somedep", "single", "not_installed_anywhere"))
    assert invocation._import_dirs()[0] == str(tmp_path)  # in sys.path's order
    assert len(invocation._import_dirs()) == 2


def test_runtime_packages_are_agentcfg_and_its_declared_dependencies():
    import importlib.metadata
    import re

    declared = {re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0].lower() for r in importlib.metadata.requires("agentcfg")
                if "extra ==" not in r}  # fmt: skip
    names = {
        name
        for name, dists in importlib.metadata.packages_distributions().items()
        if {d.lower() for d in dists} & declared and not name.startswith("_") and not name.endswith("__mypyc")
    }  # tomli's compiled helper module is installed beside tomli itself
    assert set(invocation.RUNTIME_PACKAGES) == {"agentcfg"} | names


def test_key_source_for_a_keyless_profile():
    assert switch.key_source(LOCAL, [claude, codex], {}) == (KeySource(), [])
    keys, notes = switch.key_source(LOCAL, [claude], {}, store_in_files=True)
    assert keys == KeySource()
    assert notes == ["profile 'local' needs no key: nothing to store"]
