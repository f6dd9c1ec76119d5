"""What doctor reads from the agents' files (collect.targets_from_files): the profile each agent belongs to,
the window its files tell it, a file it cannot read said as what it is, and fix lines that work when pasted.

Plain files in a temporary HOME, written by the real switch code (plan_switch, and the real journal where
a test needs one), then targets_from_files directly; no request is sent. One CLI scenario at the end.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from agentcfg import budget, profiles, switch
from agentcfg.agents import AGENTS
from agentcfg.apply import Journal
from agentcfg.doctor import collect
from agentcfg.doctor.model import FAIL, WARN, Finding, Target
from agentcfg.profiles import Profile
from agentcfg.status import status as agent_status
from tests.conftest import Home, make_home

URL, ANTHROPIC, MODEL = "http://127.0.0.1:9/v1", "http://127.0.0.1:9", "qwen3-coder"
# An imported profile and a team's profile (`profile add team --from team.toml`): same endpoint and model.
IMPORTED = Profile("imported", URL, MODEL, ANTHROPIC, key_env="TEAM_KEY", description="imported from codex")
TEAM = Profile("team", URL, MODEL, ANTHROPIC, key_env="TEAM_KEY", description="the team's vLLM")
BOTH = {"imported": IMPORTED, "team": TEAM}
# The agents a switch to these profiles configures (one that refuses such a profile, Gemini CLI, is left alone)
TAKING = tuple(name for name, agent in AGENTS.items() if agent.unsupported(TEAM) is None)
AGENT_MODULES = [AGENTS[name] for name in TAKING]


def listed(profile: str) -> dict[str, str | None]:
    """What status and doctor list after a switch to `profile`: every agent, those it left alone with none."""
    return {**dict.fromkeys(AGENTS), **dict.fromkeys(TAKING, profile)}


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


def switched(home: Home, profile: Profile, agents: tuple[str, ...] = TAKING, *, journal: bool = True) -> None:
    """What `agentcfg switch PROFILE --agent ...` writes; without `journal` the files only (copied dotfiles)."""
    modules = [AGENTS[name] for name in agents]
    keys, _ = switch.key_source(profile, modules, home.env)
    if journal:
        with Journal(home.env).locked():
            Journal(home.env).commit(switch.plan_switch(profile, modules, home.env, keys).changes, _meta(profile))
        return
    for change in switch.plan_switch(profile, modules, home.env, keys).changes:
        change.path.parent.mkdir(parents=True, exist_ok=True)
        change.path.write_text(change.after)


def _meta(profile: Profile) -> dict[str, str]:
    return {"kind": "switch", "profile": profile.name, "label": "test"}


def targets(home: Home, profiles: dict[str, Profile], agents: tuple[str, ...] = TAKING) -> dict[str, Target]:
    found = collect.targets_from_files([AGENTS[n] for n in agents], home.env, profiles, home.root)
    check_pasteable(found, profiles)
    return {t.agent: t for t in found}


def findings(target: Target, fid: str) -> list[Finding]:
    return [f for f in target.static if f.id == fid]


def one(target: Target, fid: str, status: str | None = None) -> Finding:
    matches = [f for f in findings(target, fid) if status is None or f.status == status]
    assert len(matches) == 1, (target.agent, fid, [(f.id, f.status, f.summary) for f in target.static])
    return matches[0]


PLACEHOLDERS = ("PROFILE", "NAME", "...", "<", ">")


def check_pasteable(found: list[Target], profiles: dict[str, Profile]) -> None:
    """Every fix is shell command(s) that parse, with no placeholder, naming only profiles that exist."""
    for target in found:
        for finding in target.static:
            assert not any(word in finding.fix for word in PLACEHOLDERS), finding
            for command in filter(None, finding.fix.split(" && ")):
                words = shlex.split(command)
                if words[0] != "agentcfg":
                    continue
                name = (
                    words[3] if words[1:3] in (["key", "set"], ["profile", "set"], ["profile", "unset"]) else words[2]
                )
                assert name in profiles, finding


def fix_profiles(target: Target) -> set[str]:
    """The profile names the agent's fix lines name."""
    names = set()
    for finding in target.static:
        for command in filter(None, finding.fix.split(" && ")):
            words = shlex.split(command)
            if words[:2] in (["agentcfg", "switch"], ["agentcfg", "exec"]):
                names.add(words[2])
            elif words[:3] == ["agentcfg", "key", "set"]:
                names.add(words[3])
    return names


def by_files(name: str) -> dict[str, str]:
    """Each agent's profile when its files decide: the one their id names, or for an agent whose files keep no id
    of agentcfg's (Traits.keeps_ids: Cline CLI rewrites its file to its schema) the first of that endpoint and
    model, as without a journal (here: imported)."""
    return {agent: name if AGENTS[agent].TRAITS.keeps_ids else IMPORTED.name for agent in TAKING}


# == 1. the right profile ===================================================================================


@pytest.mark.parametrize("chosen", [IMPORTED, TEAM], ids=lambda p: p.name)
def test_each_agent_belongs_to_the_profile_it_was_switched_to(home, keyring, chosen):
    switched(home, chosen)
    found = targets(home, BOTH)
    assert {agent: t.profile for agent, t in found.items()} == dict.fromkeys(TAKING, chosen.name)
    # the key is missing everywhere: every fix names the profile switched to, never the other one
    for agent in ("codex", "qwen", "opencode"):
        finding = one(found[agent], "key-missing")
        assert finding.fix == f"agentcfg key set {chosen.name} && agentcfg exec {chosen.name} -- {agent}"
    assert one(found["claude"], "key-missing", FAIL).fix == f"agentcfg key set {chosen.name}"
    assert all(fix_profiles(t) == {chosen.name} for t in found.values())


def test_the_files_own_id_decides_without_a_journal(home, keyring):
    switched(home, TEAM, journal=False)  # the files copied from another machine: no journal entry here
    found = targets(home, BOTH)
    assert {agent: t.profile for agent, t in found.items()} == by_files("team")
    keyring["team"] = "sk-team-key-0123456789"  # the key doctor would send is team's own
    found = targets(home, BOTH)
    # (an agent whose files keep no id belongs to imported here, whose key is not stored)
    assert {t.key for a, t in found.items() if AGENTS[a].TRAITS.keeps_ids} == {"sk-team-key-0123456789"}


def test_the_id_in_the_files_wins_over_the_journal(home, keyring):
    switched(home, IMPORTED)
    switched(home, TEAM, journal=False)  # rewritten since, without agentcfg's journal
    found = targets(home, BOTH)
    assert {agent: t.profile for agent, t in found.items()} == by_files("team")


def test_a_keyless_claude_belongs_to_its_last_switch(home, keyring):
    """A keyless switch leaves no id in Claude's settings (no apiKeyHelper): the journal decides."""
    # the same endpoint and model; their windows differ, so a switch between them changes Claude's file
    first = Profile("first", URL, MODEL, ANTHROPIC, context_window=65536, description="vLLM")
    second = Profile("second", URL, MODEL, ANTHROPIC, description="vLLM")
    profiles = {"first": first, "second": second}
    switched(home, second)
    assert {t.profile for t in targets(home, profiles).values()} == {"second"}
    switched(home, first, ("claude",))
    found = targets(home, profiles)
    assert found["claude"].profile == "first"
    assert found["qwen"].profile == "second"  # its last switch is still the one to second


def test_the_journal_does_not_outlive_a_hand_edit(home, keyring):
    switched(home, TEAM, ("qwen",))
    other = Profile("other", URL, "other-model", key_env="TEAM_KEY")
    settings = home.path(".qwen/settings.json")
    data = json.loads(settings.read_text())
    data["model"]["name"] = "other-model"  # by hand: qwen now asks for other's model
    data["modelProviders"]["openai"][0]["id"] = "other-model"
    settings.write_text(json.dumps(data))
    assert targets(home, {**BOTH, "other": other}, ("qwen",))["qwen"].profile == "other"


def test_a_profile_that_no_longer_matches_is_not_the_agents(home, keyring):
    """A hand edit of the model after a switch: the id names team, but the agent no longer uses team's model
    (a fix naming team would undo the edit)."""
    switched(home, TEAM, ("codex",))
    config = home.path(".codex/config.toml")
    config.write_text(config.read_text().replace(f'model = "{MODEL}"', 'model = "my-own-model"'))
    assert targets(home, BOTH, ("codex",))["codex"].profile is None


def test_qwen_is_told_apart_by_the_label_agentcfg_wrote(home, keyring):
    switched(home, TEAM, ("qwen",), journal=False)
    assert targets(home, BOTH, ("qwen",))["qwen"].profile == "team"
    same_label = {"imported": IMPORTED, "team": TEAM, "twin": Profile("twin", URL, MODEL, description=TEAM.label)}
    assert targets(home, same_label, ("qwen",))["qwen"].profile == "imported"  # two with that label: the first


def test_a_removed_profile_is_said_and_the_matching_one_is_named(home, keyring):
    switched(home, TEAM)
    found = targets(home, {"imported": IMPORTED})  # `agentcfg profile remove team`
    for agent in ("codex", "opencode", "claude"):
        finding = one(found[agent], "profile-removed")
        assert "team" in finding.summary and "no profile team" in finding.summary
        assert finding.fix == f"agentcfg switch imported --agent {agent}"
        assert found[agent].profile == "imported"
    assert one(found["codex"], "profile-removed").status == WARN
    # Claude runs `agentcfg key get team`, which fails: a FAIL, and no second finding about the key
    claude = one(found["claude"], "profile-removed", FAIL)
    assert "apiKeyHelper" in claude.summary and "agentcfg key get team" in claude.summary
    assert not findings(found["claude"], "key-missing")
    assert found["claude"].key is None
    assert not findings(found["qwen"], "profile-removed")  # its files carry no id, only a label


def test_a_removed_profile_without_another_match_gets_a_hint(home, keyring):
    switched(home, TEAM, ("codex", "claude"))
    found = targets(home, {})
    for agent in ("codex", "claude"):
        finding = one(found[agent], "profile-removed")
        assert finding.fix == "" and "agentcfg profile add team" in finding.hint
        assert found[agent].profile is None
    assert not findings(found["claude"], "key-missing")


def test_status_attributes_like_doctor(home):
    switched(home, TEAM)
    entries = Journal(home.env).entries()
    assert {s.name: s.profile for s in agent_status(home.env, BOTH, entries)} == listed("team")
    assert {s.name: s.profile for s in agent_status(home.env, BOTH, [])} == {
        **dict.fromkeys(AGENTS),
        **by_files("team"),
    }


# == 2. the window the files tell the agent ===================================================================


def test_context_window_from_the_files(home, keyring):
    windowed = Profile("w", URL, MODEL, ANTHROPIC, context_window=65536)
    switched(home, windowed)
    found = targets(home, {"w": windowed})
    assert {a: t.context_window for a, t in found.items()} == {
        "codex": 65536,
        "qwen": 65536,
        "opencode": budget.window(windowed),
        "claude": None,  # Claude Code is told no window
        "cline": 65536,
        "copilot": 65536,
        "droid": 65536,
    }
    # the same as `doctor PROFILE` says the switch would write
    by_profile = {t.agent: t.context_window for t in collect.targets_from_profile(windowed, AGENT_MODULES, home.env)}
    assert by_profile == {a: t.context_window for a, t in found.items()}


def test_context_window_unset_and_hand_written(home, keyring):
    switched(home, Profile("n", URL, MODEL), ("codex", "qwen"))
    assert {t.context_window for t in targets(home, {}, ("codex", "qwen")).values()} == {None}
    home.write(".codex/config.toml", 'model = "m"\nmodel_context_window = 100000\n')
    home.write(
        ".config/opencode/opencode.json",
        '{"model": "p/m", "provider": {"p": {"models": {"m": {"limit": {"context": 32768}}}}}}',
    )
    found = targets(home, {}, ("codex", "opencode"))
    assert (found["codex"].context_window, found["opencode"].context_window) == (100000, 32768)
    home.write(".codex/config.toml", 'model = "m"\nmodel_context_window = true\n')  # not a number: not a window
    assert targets(home, {}, ("codex",))["codex"].context_window is None


# == 3. a file doctor cannot read, said as what it is ==========================================================


def test_missing_codex_home_is_not_a_parse_error(home, tmp_path):
    missing = tmp_path / "my codex"  # a space: the fix must quote it
    home.env["CODEX_HOME"] = str(missing)
    finding = one(targets(home, {}, ("codex",))["codex"], "config-unreadable", FAIL)
    assert "does not parse" not in finding.summary
    assert finding.summary == f"CODEX_HOME points to {missing}, which does not exist: Codex refuses to start"
    assert finding.fix == f"mkdir -p '{missing}'" and "unset CODEX_HOME" in finding.hint
    subprocess.run(finding.fix, shell=True, check=True, cwd=tmp_path)  # pasted as it is, it works
    assert missing.is_dir()
    assert not findings(targets(home, {}, ("codex",))["codex"], "config-unreadable")


def test_codex_home_that_is_a_file(home, tmp_path):
    home.env["CODEX_HOME"] = str(home.write("codex-home", ""))
    finding = one(targets(home, {}, ("codex",))["codex"], "config-unreadable", FAIL)
    assert "is a file, not a directory" in finding.summary and "Codex refuses to start" in finding.summary
    assert finding.fix == "" and "unset" in finding.hint


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda path: path.mkdir(parents=True), "is a directory, not a file"),
        (lambda path: (path.parent.mkdir(parents=True), path.write_bytes(b'model = "\xff"\n')), "is not UTF-8"),
        (lambda path: (path.parent.mkdir(parents=True), os.mkfifo(path)), "is a named pipe (FIFO)"),
        (lambda path: (path.parent.mkdir(parents=True), path.write_text('model = "m"\n[broken\n')), "does not parse"),
    ],
    ids=["directory", "not-utf8", "fifo", "toml-error"],
)
def test_each_unreadable_file_says_what_it_is(home, make, said):
    make(home.path(".codex/config.toml"))
    finding = one(targets(home, {}, ("codex",))["codex"], "config-unreadable", FAIL)
    assert said in finding.summary
    assert ("does not parse" in finding.summary) == (said == "does not parse")
    assert finding.fix == "" and finding.hint  # what to do is in words: no command fixes a file's content
    assert "config.toml" in finding.evidence + finding.summary


# == 4. fix lines that work when pasted ==========================================================================


def test_claude_without_login_is_pointed_at_the_only_anthropic_profile(home, tmp_path):
    claude = tmp_path / "bin" / "claude"  # installed, no settings, no login
    claude.write_text("#!/bin/sh\nexit 0\n")
    claude.chmod(0o755)
    local = Profile("local", "http://localhost:8000/v1", MODEL, "http://localhost:8000")
    gateway = Profile("gw", "https://gw.example/v1", MODEL, key_env="GW_KEY")  # no Anthropic URL
    finding = one(targets(home, {"local": local, "gw": gateway}, ("claude",))["claude"], "claude-login-required")
    assert finding.fix == "agentcfg switch local --agent claude"
    two = {"local": local, "gw2": Profile("gw2", "https://gw.example/v1", MODEL, "https://gw.example/anthropic")}
    finding = one(targets(home, two, ("claude",))["claude"], "claude-login-required")
    assert finding.fix == "" and "local, gw2" in finding.hint


def test_a_variable_no_profile_gives_is_a_hint_not_a_placeholder(home, keyring):
    entry = {"id": MODEL, "name": "mine", "baseUrl": URL, "envKey": "MY_VAR"}
    home.write(".qwen/settings.json", json.dumps({"model": {"name": MODEL}, "modelProviders": {"openai": [entry]}}))
    finding = one(targets(home, {}, ("qwen",))["qwen"], "key-missing", FAIL)
    assert finding.fix == "" and "export MY_VAR" in finding.hint


def test_a_stored_key_needs_only_exec(home, keyring):
    switched(home, TEAM, ("codex",))
    keyring["team"] = "sk-team-key-0123456789"
    finding = one(targets(home, BOTH, ("codex",))["codex"], "key-missing", WARN)
    assert finding.fix == "agentcfg exec team -- codex"


def test_stand_in_key_to_a_remote_server(home, keyring):
    remote = Profile("gw", "https://gw.example/v1", MODEL, "https://gw.example/anthropic")  # says: no key
    switched(home, remote, ("qwen", "claude"))
    found = targets(home, {"gw": remote}, ("qwen", "claude"))
    for agent in ("qwen", "claude"):
        finding = one(found[agent], "key-placeholder-to-remote", FAIL)
        assert "stand-in key" in finding.summary and "gw.example" in finding.summary
        assert finding.fix == (
            f"agentcfg profile set gw key_env=GW_API_KEY && agentcfg key set gw && agentcfg switch gw --agent {agent}"
        )


def test_a_stand_in_key_of_the_users_own_is_not_called_agentcfgs(home, keyring):
    home.write(".qwen/.env", "OPENAI_API_KEY=dummy\nOPENAI_BASE_URL=https://gw.example/v1\nOPENAI_MODEL=m\n")
    finding = one(targets(home, {}, ("qwen",))["qwen"], "key-placeholder-to-remote", FAIL)
    assert "agentcfg's" not in finding.summary and "not a real one" in finding.summary
    assert finding.fix == "" and finding.hint  # no profile for gw.example: no command to give


def test_not_configured_has_no_placeholder_fix(home):
    finding = one(targets(home, {}, ("codex",))["codex"], "not-configured")
    assert finding.fix == "" and "--agent codex" in finding.hint


def test_wire_api_fix_names_the_agent(home, keyring):
    switched(home, TEAM, ("codex",))
    config = home.path(".codex/config.toml")
    config.write_text(config.read_text().replace('wire_api = "responses"', 'wire_api = "chat"'))
    finding = one(targets(home, BOTH, ("codex",))["codex"], "codex-wire-api", FAIL)
    assert finding.fix == "agentcfg switch team --agent codex" and 'wire_api = "responses"' in finding.hint


def test_project_endpoint_advice_is_a_hint(home, tmp_path):
    home.write(".claude/settings.json", json.dumps({"env": {"ANTHROPIC_AUTH_TOKEN": "sk-mine-0123456789abcdef"}}))
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:7"}})
    )
    found = collect.targets_from_files([AGENTS["claude"]], home.env, {}, project)
    finding = one(found[0], "key-wrong-host", FAIL)
    assert finding.fix == "" and "remove ANTHROPIC_BASE_URL" in finding.hint and "NAME" not in finding.hint


# == 4b. key helpers an earlier agentcfg wrote (doctor/keyhelpers.py) ========================================


def _codex_profile_file(name: str, helper: list[str]) -> str:
    table = f"agentcfg_profile-{name}"
    return (
        f'model = "{MODEL}"\nmodel_provider = "{table}"\n\n[model_providers.{table}]\nname = "agentcfg: {name}"\n'
        f'base_url = "{URL}"\nwire_api = "responses"\n'
        f"auth = {{ command = {json.dumps(helper[0])}, args = {json.dumps(helper[1:])} }}\n"
    )


def test_an_older_helper_in_a_codex_profile_file_is_fixed_by_switching_config_tomls_profile(home):
    """config.toml as today's switch writes it; the profile file of another profile still has `python -m`: a
    switch of config.toml's profile rewrites every profile file of an existing profile."""
    for profile in BOTH.values():  # the user's profiles, as a switch reads them
        home.write(f".config/agentcfg/profiles/{profile.name}.toml", profiles.to_toml(profile))
    switched(home, IMPORTED, ("codex",))
    home.write(".codex/agentcfg-team.config.toml", _codex_profile_file("team", ["/usr/bin/python3", "-m", "agentcfg",
                                                                              "key", "get", "team"]))  # fmt: skip
    finding = one(targets(home, BOTH, ("codex",))["codex"], "key-helper-not-isolated", FAIL)
    assert finding.fix == "agentcfg switch imported --agent codex", finding
    assert finding.evidence == "~/.codex/agentcfg-team.config.toml: /usr/bin/python3 -m agentcfg key get team"
    switched(home, IMPORTED, ("codex",))  # the fix
    assert findings(targets(home, BOTH, ("codex",))["codex"], "key-helper-not-isolated") == []
    assert "-m agentcfg" not in home.read(".codex/agentcfg-team.config.toml")


def test_an_older_helper_in_the_profile_file_of_a_removed_profile_is_a_hint_to_remove_it(home):
    switched(home, IMPORTED, ("codex",))
    home.write(".codex/agentcfg-gone.config.toml", _codex_profile_file("gone", ["/opt/v/bin/agentcfg", "key", "get",
                                                                              "gone"]))  # fmt: skip
    finding = one(targets(home, BOTH, ("codex",))["codex"], "key-helper-not-isolated", WARN)
    assert finding.fix == "" and finding.hint.startswith("remove ~/.codex/agentcfg-gone.config.toml"), finding


def test_todays_helpers_are_not_reported(home, keyring):
    """What switch writes now (python -I), for Claude Code and for Codex (a version that runs auth commands)."""
    codex = home.write("bin/codex", "#!/bin/sh\necho 'codex-cli 0.171.0'\n")
    codex.chmod(0o755)
    home.env["PATH"] = f"{codex.parent}{os.pathsep}{home.env['PATH']}"
    switched(home, TEAM, ("codex", "claude"))
    switched(home, IMPORTED, ("codex", "claude"))  # team keeps its profile file, with its own helper
    assert "auth" in home.read(".codex/agentcfg-team.config.toml")
    found = targets(home, BOTH, ("codex", "claude"))
    assert [f for t in found.values() for f in t.static if f.id == "key-helper-not-isolated"] == []


# == 5. through the CLI =========================================================================================


def test_doctor_json_names_the_profile_switched_to(home, keyring_file):
    for name in ("imported", "team"):  # the same endpoint and model, as `profile add --from` often gives
        home.run("profile", "add", name, "--base-url", URL, "--anthropic-base-url", ANTHROPIC,
                 "--model", MODEL, "--key-env", "TEAM_KEY")  # fmt: skip
    home.run("switch", "team", "--all", check=4)  # switched; TEAM_KEY not stored
    report = json.loads(home.run("doctor", "--json", "--offline", check=1).stdout)
    assert {a["agent"]: a["profile"] for a in report["agents"]} == listed("team")
    fixes = {f["agent"]: f["fix"] for f in report["findings"] if f["id"] == "key-missing"}
    assert fixes["qwen"] == "agentcfg key set team && agentcfg exec team -- qwen"
    assert fixes["claude"] == "agentcfg key set team"
    assert not any("imported" in f["fix"] for f in report["findings"])
    status = json.loads(home.run("status", "--json").stdout)
    assert {a["name"]: a["profile"] for a in status["agents"]} == listed("team")


def test_codex_on_openais_own_api_is_not_probed(home):
    """An empty config.toml: Codex's built-in provider, OpenAI's own API. Probing it would send requests
    off this machine (and a ChatGPT login is no key doctor can send): skipped like Claude's own API."""
    home.write(".codex/config.toml", "")
    report = home.json("doctor", "--agent", "codex", "--json")
    assert report["requests"] == 0 and report["agents"][0]["base_url"] is None
    assert [(f["id"], f["status"]) for f in report["findings"]] == [("not-configured", "skip")]
