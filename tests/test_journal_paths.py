"""Where the journal writes (issue 27, item 4).

- Agent locations given by variables are made absolute before planning (a relative CODEX_HOME once gave a
  manifest its own loader rejected, which then stopped every command).
- No manifest is written that its loader would reject.
- A journal entry agentcfg cannot use is reported with the command that sets it aside, and blocks nothing else.
- Rollback and recovery write only to the agents' files, never where an edited manifest says.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest

from agentcfg import env, profiles
from agentcfg.agents import AGENTS
from agentcfg.apply import Journal
from agentcfg.errors import AgentcfgError
from agentcfg.switch import plan_switch
from tests.conftest import REPO, Home

ROLLBACK_SCHEMA = json.loads((REPO / "schemas" / "cli" / "rollback.schema.json").read_text())
STATUS_SCHEMA = json.loads((REPO / "schemas" / "cli" / "status.schema.json").read_text())
CODEX_TOML = b'# mine\nmodel = "gpt-5"  # the default\n'
BASHRC = b"# ~/.bashrc of the test's HOME\nexport PATH=$HOME/bin:$PATH\n"


def journal_root(home: Home) -> Path:
    return Path(home.env["AGENTCFG_HOME"]) / "state" / "journal"


def entry_names(home: Home) -> list[str]:
    root = journal_root(home)
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def tree(directory: Path) -> dict[str, bytes]:
    """Every file under `directory`: relative path -> bytes."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest_of(home: Home, name: str) -> dict:
    return json.loads((journal_root(home) / name / "manifest.json").read_text())


def write_manifest(home: Home, name: str, data: dict) -> None:
    directory = journal_root(home) / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "manifest.json").write_text(json.dumps(data, indent=1))


# -- 1. relative locations ----------------------------------------------------------------------------------

RELATIVE = {  # agent -> (variable, relative value, the file it names under the working directory, its text)
    "codex": ("CODEX_HOME", "cx", "cx/config.toml", CODEX_TOML),
    "claude": ("CLAUDE_CONFIG_DIR", "cc", "cc/settings.json", b'{\n  "env": {"MY_VAR": "1"}\n}\n'),
    "opencode": ("OPENCODE_CONFIG", "oc.json", "oc.json", b'{\n  "theme": "dark"\n}\n'),
}


@pytest.mark.parametrize("agent", list(RELATIVE))
def test_a_relative_location_switches_and_rolls_back_from_another_directory(home: Home, agent: str) -> None:
    variable, value, file, text = RELATIVE[agent]
    work, elsewhere = home.root / "work", home.root / "elsewhere"
    home.write(f"work/{file}", text.decode())
    elsewhere.mkdir()
    before = tree(work)
    done = home.run("switch", "local", "--agent", agent, cwd=work, **{variable: value})
    assert tree(work)[file] != text
    assert "changed nothing" not in done.stderr
    # the user is told where the relative value led, since an agent started elsewhere reads another file
    assert f"{variable}={value}" in done.stderr and str(work / value) in done.stderr, done.stderr
    entry = manifest_of(home, "000001")
    assert all(Path(item["path"]).is_absolute() for item in entry["files"])
    # from anywhere, with the variable still set (where it names nothing, or something else)
    home.run("status", cwd=elsewhere, **{variable: value})
    home.run("rollback", cwd=elsewhere, **{variable: value})
    assert tree(work) == before


def test_the_variables_are_made_absolute_in_one_place(tmp_path: Path) -> None:
    environ = {
        "HOME": "/home/u",
        "CODEX_HOME": "cx",
        "CLAUDE_CONFIG_DIR": "~/cc",
        "QWEN_HOME": "./q//h/",
        "OPENCODE_CONFIG": "../oc.json",
        "AGENTCFG_HOME": "state",
        "XDG_CONFIG_HOME": "rel",
        "PATH": "bin",  # not a location: left alone
    }
    work = tmp_path / "work"
    work.mkdir()
    fixed = env.absolute_locations(environ, str(work))
    assert fixed == {
        **environ,
        "CODEX_HOME": str(work / "cx"),
        "CLAUDE_CONFIG_DIR": "/home/u/cc",  # Claude Code expands ~ (so did agentcfg)
        "QWEN_HOME": str(work / "q" / "h"),
        "OPENCODE_CONFIG": str(tmp_path / "oc.json"),
        "AGENTCFG_HOME": str(work / "state"),
    }
    assert env.absolute_locations(fixed, "/") == fixed  # absolute values stay as they are
    notes = env.location_notes(environ, str(work))
    assert any(n.startswith(f"CODEX_HOME=cx is a relative path: agentcfg used {work / 'cx'}") for n in notes), notes
    assert not any(n.startswith("CLAUDE_CONFIG_DIR") for n in notes)  # ~ is not relative
    # XDG_CONFIG_HOME: agentcfg's own directory ignores a relative value (the XDG spec), opencode does not
    assert env.config_dir({"HOME": "/home/u", "XDG_CONFIG_HOME": "rel"}) == Path("/home/u/.config/agentcfg")
    assert any(n.startswith("XDG_CONFIG_HOME=rel is a relative path") for n in notes), notes


def test_a_relative_xdg_config_home_is_where_opencode_reads_it(home: Home) -> None:
    """opencode 1.18 run with XDG_CONFIG_HOME=rel reads ./rel/opencode/opencode.json (seen with `opencode debug
    config`); agentcfg's own files ignore a relative XDG_CONFIG_HOME, as the XDG spec says."""
    work = home.root / "work"
    home.write("work/rel/opencode/opencode.json", '{\n  "theme": "dark"\n}\n')
    home.run("switch", "local", "--agent", "opencode", cwd=work, XDG_CONFIG_HOME="rel")
    assert b"DeepSeek-V4-Flash" in (work / "rel/opencode/opencode.json").read_bytes()
    home.run("rollback", cwd=home.root, XDG_CONFIG_HOME="rel")
    assert (work / "rel/opencode/opencode.json").read_bytes() == b'{\n  "theme": "dark"\n}\n'


# -- 2. no manifest its loader rejects ----------------------------------------------------------------------


def test_a_manifest_the_loader_would_reject_is_refused_before_any_file_is_written(tmp_path, monkeypatch) -> None:
    """Journal.commit checks the manifest with the loader's rules before writing: a relative path (here from an
    environment that bypassed the command line's seam) is refused, and nothing is written."""
    root = tmp_path / "home"
    work = tmp_path / "work"
    (work / "cx").mkdir(parents=True)
    (work / "cx" / "config.toml").write_bytes(CODEX_TOML)
    monkeypatch.chdir(work)
    environ = {"HOME": str(root), "AGENTCFG_HOME": str(root / "agentcfg"), "CODEX_HOME": "cx", "PATH": "/usr/bin"}
    journal = Journal(environ)
    with pytest.raises(AgentcfgError, match="nothing was written") as info, journal.locked():
        plan = plan_switch(profiles.get("local", environ), [AGENTS["codex"]], environ)
        journal.commit(plan.changes, {"kind": "switch", "profile": "local", "label": "switch local"})
    assert "absolute" in str(info.value)
    assert tree(work) == {"cx/config.toml": CODEX_TOML}
    assert [p.name for p in journal.root.iterdir()] == []


def test_an_opencode_config_that_is_not_json_by_name_is_refused(home: Home) -> None:
    """Rollback writes only files named for their format; so a switch does not write one it could not roll back."""
    conf = home.write("opencode.conf", '{\n  "theme": "dark"\n}\n')  # JSON, by another name
    out = home.run("switch", "local", "--agent", "opencode", check=2, OPENCODE_CONFIG=str(conf))
    assert "OPENCODE_CONFIG" in out.stderr and ".json" in out.stderr, out.stderr
    assert "nothing was written" in out.stderr
    assert conf.read_bytes() == b'{\n  "theme": "dark"\n}\n'
    assert entry_names(home) == []


# -- 3. an entry agentcfg cannot use ------------------------------------------------------------------------

REJECTED = {  # what the old agentcfg wrote for `CODEX_HOME=cx agentcfg switch local --agent codex`
    "version": 2,
    "status": "committed",
    "time": 1700000000.0,
    "files": [
        {
            "agent": "codex",
            "path": "cx/config.toml",
            "target": "cx/config.toml",
            "format": "toml",
            "backup": None,
            "written": None,
            "mode": None,
            "owner": None,
            "sha_before": None,
            "sha_after": sha(b"x"),
            "size_before": None,
            "size_after": 1,
            "created_dirs": [],
            "owned": [],
        }
    ],
    "kind": "switch",
    "profile": "local",
    "label": "switch local",
}


def test_an_entry_the_loader_rejects_blocks_nothing_and_is_set_aside_by_a_command(home: Home) -> None:
    write_manifest(home, "000001", REJECTED)
    discard = "agentcfg rollback --discard 000001"

    switched = home.run("switch", "local", "--agent", "claude")
    assert "000001" in switched.stderr and discard in switched.stderr, switched.stderr
    status = home.run("status")
    assert "000001" in status.stderr and discard in status.stderr
    document = home.json("status")
    jsonschema.validate(document, STATUS_SCHEMA)
    assert [(p["entry"], p["fix"]) for p in document["journal_problems"]] == [("000001", discard)]
    assert "'path' must be an absolute path" in document["journal_problems"][0]["problem"]
    home.run("agents")

    home.run("rollback")  # the switch just made is the newest entry: it rolls back
    assert not (home.root / ".claude" / "settings.json").exists()
    refused = home.run("rollback", check=2)  # the newest is now the unusable one: refused, by name
    assert "000001" in refused.stderr and discard in refused.stderr
    assert "changed nothing" not in refused.stderr or "nothing was written" in refused.stderr

    out = home.run("rollback", "--discard", "000001", "--json")
    document = json.loads(out.stdout)
    jsonschema.validate(document, ROLLBACK_SCHEMA)
    moved = Path(document["discarded"]["moved_to"])
    assert document["discarded"]["entry"] == "000001" and moved.parent == journal_root(home)
    assert json.loads((moved / "manifest.json").read_text()) == REJECTED  # kept, for the user to look at
    assert home.run("status").stderr == ""
    assert home.run("rollback", check=3).returncode == 3  # nothing left to roll back


def test_discard_of_an_entry_that_is_not_there_is_refused(home: Home) -> None:
    out = home.run("rollback", "--discard", "000007", check=2)
    assert "000007" in out.stderr


def test_a_pending_entry_that_cannot_be_recovered_does_not_stop_a_switch(home: Home) -> None:
    """A damaged interrupted entry: recovery cannot use it, says so with the command, and the switch goes on."""
    write_manifest(home, "000001", {**REJECTED, "status": "pending"})
    out = home.run("switch", "local", "--agent", "claude")
    assert "000001" in out.stderr and "agentcfg rollback --discard 000001" in out.stderr
    assert b"localhost:8000" in (home.root / ".claude" / "settings.json").read_bytes()


# -- 4. rollback and recovery write only to agent files -----------------------------------------------------


def _switched_codex(home: Home) -> tuple[dict, int]:
    home.write(".codex/config.toml", CODEX_TOML.decode())
    home.run("switch", "local", "--agent", "codex")
    manifest = manifest_of(home, "000001")
    index = next(i for i, item in enumerate(manifest["files"]) if item["path"].endswith("/.codex/config.toml"))
    return manifest, index


def _aim(item: dict, path: Path, current: bytes) -> None:
    """Edit a manifest's file entry to name `path`, as if agentcfg had written what it holds now."""
    item.update(path=str(path), target=str(path), sha_after=sha(current), size_after=len(current), written=None)


EDITS = {
    "bashrc": lambda home: home.root / ".bashrc",
    "dot-dot": lambda home: home.root / ".codex" / ".." / ".bashrc",
    "not-an-agent-file": lambda home: home.root / ".codex" / "notes.toml",
}


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
@pytest.mark.parametrize("edit", list(EDITS))
def test_rollback_refuses_a_manifest_that_names_another_file(home: Home, edit: str, force: bool) -> None:
    manifest, index = _switched_codex(home)
    victim = EDITS[edit](home)
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_bytes(BASHRC)
    _aim(manifest["files"][index], victim, BASHRC)
    write_manifest(home, "000001", manifest)
    codex = (home.root / ".codex" / "config.toml").read_bytes()

    out = home.run("rollback", *(["--force"] if force else []), check=2)
    assert "000001" in out.stderr and "agentcfg rollback --discard 000001" in out.stderr, out.stderr
    assert "internal error" not in out.stderr
    assert victim.read_bytes() == BASHRC
    assert (home.root / ".codex" / "config.toml").read_bytes() == codex  # nothing else written either


def test_rollback_does_not_follow_a_link_planted_since_the_switch(home: Home) -> None:
    """The agent file is a symlink to ~/.bashrc now, and the manifest says agentcfg wrote there: not restored."""
    manifest, index = _switched_codex(home)
    bashrc = home.write(".bashrc", BASHRC.decode())
    config = home.root / ".codex" / "config.toml"
    config.unlink()
    config.symlink_to(bashrc)
    item = manifest["files"][index]
    item.update(target=str(bashrc), sha_after=sha(BASHRC), size_after=len(BASHRC), written=None)
    write_manifest(home, "000001", manifest)
    out = home.run("rollback", "--force", check=2)
    assert "bashrc" in out.stderr, out.stderr
    assert bashrc.read_bytes() == BASHRC


def test_opencode_config_edited_to_a_shell_file_is_refused(home: Home) -> None:
    """The locations a switch recorded are read back too: an OPENCODE_CONFIG edited to ~/.bashrc is not a
    file agentcfg writes."""
    oc = home.write("oc.json", '{\n  "theme": "dark"\n}\n')
    home.run("switch", "local", "--agent", "opencode", OPENCODE_CONFIG=str(oc))
    manifest = manifest_of(home, "000001")
    bashrc = home.write(".bashrc", BASHRC.decode())
    _aim(manifest["files"][0], bashrc, BASHRC)
    manifest.setdefault("locations", {})["OPENCODE_CONFIG"] = str(bashrc)
    write_manifest(home, "000001", manifest)
    home.run("rollback", "--force", check=2, OPENCODE_CONFIG=str(bashrc))
    assert bashrc.read_bytes() == BASHRC


def test_recovery_does_not_write_where_a_pending_manifest_says(home: Home) -> None:
    """An interrupted switch's entry naming ~/.bashrc: recovery (before every switch) leaves it alone."""
    manifest, index = _switched_codex(home)
    home.run("rollback")
    bashrc = home.write(".bashrc", BASHRC.decode())
    _aim(manifest["files"][index], bashrc, BASHRC)
    manifest["status"] = "pending"
    write_manifest(home, "000001", manifest)
    backup = manifest["files"][index]["backup"]
    (journal_root(home) / "000001" / backup).write_bytes(CODEX_TOML)
    out = home.run("switch", "local", "--agent", "claude")
    assert "000001" in out.stderr and "--discard 000001" in out.stderr, out.stderr
    assert bashrc.read_bytes() == BASHRC


def test_an_entry_made_under_another_codex_home_still_rolls_back(home: Home) -> None:
    """The locations are the switch's own: rolled back from a shell where CODEX_HOME is not set."""
    other = home.root / "other-codex"
    home.write("other-codex/config.toml", CODEX_TOML.decode())
    home.run("switch", "local", "--agent", "codex", CODEX_HOME=str(other))
    assert manifest_of(home, "000001")["locations"]["CODEX_HOME"] == str(other)
    home.run("rollback")
    assert tree(other) == {"config.toml": CODEX_TOML}


def test_the_agent_file_checks_name_each_refusal() -> None:
    """The rule itself, for paths no test may write: /etc/passwd is no agent's file, wherever the agents are."""
    from agentcfg import managed

    locations = {"HOME": "/home/u"}
    good = {"agent": "codex", "path": "/home/u/.codex/config.toml", "format": "toml"}
    assert managed.problem(good, locations) is None
    assert managed.problem({**good, "path": "/home/u/.codex/agentcfg-x.config.toml"}, locations) is None
    for path in ("/etc/passwd", "/home/u/.bashrc", "/home/u/.codex/config.toml.bak", "/home/u/.ssh/config"):
        assert "not one of codex's files" in (managed.problem({**good, "path": path}, locations) or ""), path
    assert "unknown agent" in (managed.problem({**good, "agent": "vim"}, locations) or "")
    assert "format" in (managed.problem({**good, "format": "json"}, locations) or "")
    assert managed.problem({**good, "path": "/etc/passwd"}, {**locations, "CODEX_HOME": "/etc"}) is not None
