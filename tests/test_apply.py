"""The one writer: agentcfg.apply.Journal (transactions, backups, rollback, bounds) and agentcfg.fsutil.

Every test runs against a temporary HOME passed explicitly as `environ`; the real HOME is never read.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agentcfg.apply as apply_mod
from agentcfg import fsutil, profiles
from agentcfg.agents import AGENTS
from agentcfg.apply import MAX_ENTRIES, Journal
from agentcfg.errors import AgentcfgError
from agentcfg.switch import plan_switch
from tests.bare_home import environ, home, make_environ, write  # noqa: F401 (fixtures)

BIN = Path(sys.executable).with_name("agentcfg")

CODEX_TOML = b"""# my codex config: keep this comment
model = "gpt-5"  # the default
approval_policy = "on-request"

[projects."/src/app"]
trust_level = "trusted"
"""

CLAUDE_JSON = b"""{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo pre"}]}
    ]
  },
  "permissions": {"allow": ["Bash(ls:*)"]},
  "env": {"MY_VAR": "1"}
}
"""

QWEN_ENV = b"# qwen\nFOO=bar\r\nOPENAI_MODEL=old-model\n"


# -- helpers -----------------------------------------------------------------------------------------


def seed(home: Path) -> dict[str, bytes]:
    """Pre-existing files for codex (0640), qwen's .env and claude; qwen settings and opencode are new."""
    write(home / ".codex" / "config.toml", CODEX_TOML, 0o640)
    write(home / ".qwen" / ".env", QWEN_ENV)
    write(home / ".claude" / "settings.json", CLAUDE_JSON)
    return {".codex/config.toml": CODEX_TOML, ".qwen/.env": QWEN_ENV, ".claude/settings.json": CLAUDE_JSON}


def snapshot(home: Path) -> dict[str, object]:
    """Every directory and file under HOME except agentcfg's own dir: path -> (mode, bytes or 'dir')."""
    found: dict[str, object] = {}
    for root, dirs, files in os.walk(home):
        rel_root = Path(root).relative_to(home)
        if rel_root.parts[:1] == ("agentcfg",):
            continue
        for name in dirs:
            p = Path(root) / name
            if not (rel_root == Path(".") and name == "agentcfg"):
                found[str(rel_root / name)] = ("dir", stat.S_IMODE(os.lstat(p).st_mode))
        for name in files:
            p = Path(root) / name
            st = os.lstat(p)
            body = ("link", os.readlink(p)) if stat.S_ISLNK(st.st_mode) else p.read_bytes()
            found[str(rel_root / name)] = (body, stat.S_IMODE(st.st_mode))
    return found


def plan_for(name: str, environ: dict[str, str]):
    return plan_switch(profiles.get(name, environ), list(AGENTS.values()), environ)


def switch(name: str, environ: dict[str, str]):
    journal = Journal(environ)
    with journal.locked():
        plan = plan_for(name, environ)
        return journal.commit(plan.changes, {"kind": "switch", "profile": name, "label": f"switch {name}"})


def rollback(environ: dict[str, str], force: bool = False) -> None:
    journal = Journal(environ)
    with journal.locked():
        entry, changes, _ = journal.rollback_plan(force)
        journal.rollback(entry, changes)


def journal_dirs(environ: dict[str, str]) -> list[str]:
    root = Path(environ["AGENTCFG_HOME"]) / "state" / "journal"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def temps(home: Path) -> list[Path]:
    return sorted(p for p in home.rglob(f"*{fsutil.TMP_SUFFIX}"))


# -- 1. commit: files, backups, modes ---------------------------------------------------------------


def test_commit_writes_every_file_and_backs_up_every_existing_one(home, environ):
    originals = seed(home)
    plan = plan_for("local", environ)
    assert [(c.agent, c.action) for c in plan.pending] == [
        ("codex", "modify"),
        ("codex", "create"),  # ~/.codex/agentcfg-local.config.toml: Codex is not installed, so it may be 0.134+
        ("qwen", "modify"),
        ("qwen", "create"),
        ("opencode", "create"),
        ("claude", "modify"),
        ("cline", "create"),  # providers.json
        ("cline", "create"),  # global-settings.json
        ("copilot", "create"),
        ("copilot", "create"),
        ("droid", "create"),
    ]
    journal = Journal(environ)
    with journal.locked():
        entry = journal.commit(plan.changes, {"kind": "switch", "profile": "local", "label": "switch local"})
    assert entry is not None
    for change in plan.pending:
        assert change.path.read_bytes() == change.after.encode("utf-8")
    assert b"# my codex config: keep this comment\n" in (home / ".codex/config.toml").read_bytes()
    assert b'"PreToolUse"' in (home / ".claude/settings.json").read_bytes()

    on_disk = journal._load(entry.directory)
    assert on_disk is not None
    assert on_disk.manifest["status"] == "committed"
    assert on_disk.manifest["profile"] == "local"
    by_path = {Path(item["path"]).relative_to(home).as_posix(): item for item in on_disk.files}
    assert set(by_path) == {
        ".codex/config.toml",
        ".codex/agentcfg-local.config.toml",
        ".qwen/.env",
        ".qwen/settings.json",
        ".config/opencode/opencode.json",
        ".claude/settings.json",
        ".cline/data/settings/providers.json",
        ".cline/data/settings/global-settings.json",
        ".copilot/providers.json",
        ".copilot/settings.json",
        ".factory/settings.json",
    }
    for rel, original in originals.items():
        item = by_path[rel]
        assert item["backup"] is not None
        assert (entry.directory / item["backup"]).read_bytes() == original
        assert on_disk.backup(item) == original
    assert by_path[".codex/config.toml"]["mode"] == 0o640
    for rel in (".codex/agentcfg-local.config.toml", ".qwen/settings.json", ".config/opencode/opencode.json"):
        assert by_path[rel]["backup"] is None
        assert on_disk.backup(by_path[rel]) is None
    assert by_path[".config/opencode/opencode.json"]["created_dirs"] == [
        str(home / ".config"),
        str(home / ".config" / "opencode"),
    ]
    assert journal.entries()[-1].id == entry.id
    assert journal.pending() == []
    assert temps(home) == []


def test_state_is_private_and_agent_file_modes(home, environ):
    seed(home)
    state = Path(environ["AGENTCFG_HOME"]) / "state"
    state.mkdir(parents=True, mode=0o755)
    os.chmod(state, 0o755)  # too open: must be tightened
    (state / "journal").mkdir(mode=0o755)
    os.chmod(state / "journal", 0o755)

    assert switch("local", environ) is not None
    assert switch("taotoken", environ) is not None

    assert mode(state) == 0o700
    assert mode(state / "journal") == 0o700
    entries = [p for p in (state / "journal").iterdir()]
    assert len(entries) == 2
    checked_files = 0
    for root, dirs, files in os.walk(state):
        for d in dirs:
            assert mode(Path(root) / d) == 0o700, Path(root) / d
        for f in files:
            assert mode(Path(root) / f) == 0o600, Path(root) / f
            checked_files += 1
    # lock, 2 manifests, 3 + 8 backups and 11 + 9 copies of what was written (each switch also creates its Codex
    # profile file, agentcfg-NAME.config.toml; taotoken's leaves claude alone and cline's global-settings.json as
    # the first switch wrote it, and rewrites the files of Copilot CLI (two) and Droid the first one created); no
    # validated-profiles cache: both profiles are built-ins, which are not validated when read
    assert checked_files == 1 + 2 + (3 + 8) + (11 + 9)

    assert mode(home / ".codex/config.toml") == 0o640  # kept
    assert mode(home / ".qwen/.env") == 0o600
    assert mode(home / ".qwen/settings.json") == 0o600  # new
    assert mode(home / ".config/opencode/opencode.json") == 0o600  # new
    assert mode(home / ".config") == 0o700  # directories agentcfg created
    assert mode(home / ".config/opencode") == 0o700


def test_new_files_are_0600_even_with_permissive_umask(home, environ):
    old = os.umask(0)
    try:
        switch("local", environ)
    finally:
        os.umask(old)
    for rel in (".codex/config.toml", ".qwen/.env", ".qwen/settings.json", ".claude/settings.json"):
        assert mode(home / rel) == 0o600, rel
    assert mode(home / ".config/opencode/opencode.json") == 0o600
    assert mode(home / ".codex") == 0o700


def test_existing_mode_0640_kept_across_switch_and_rollback(home, environ):
    write(home / ".qwen" / ".env", QWEN_ENV, 0o640)
    switch("local", environ)
    assert mode(home / ".qwen/.env") == 0o640
    rollback(environ)
    assert (home / ".qwen/.env").read_bytes() == QWEN_ENV
    assert mode(home / ".qwen/.env") == 0o640


# -- 2. all or nothing -------------------------------------------------------------------------------


def _fail_on_agent_write(monkeypatch, environ, n: int, exc: BaseException):
    state = os.path.realpath(Path(environ["AGENTCFG_HOME"]) / "state")
    real = fsutil.atomic_write
    calls: list[Path] = []

    def flaky(target, data, mode, owner=None, check=None):
        if not os.path.realpath(target).startswith(state + os.sep):
            calls.append(Path(target))
            if len(calls) == n:
                raise exc
        return real(target, data, mode, owner, check)

    monkeypatch.setattr(fsutil, "atomic_write", flaky)
    assert apply_mod.fsutil is fsutil  # apply.py writes through fsutil.atomic_write
    return calls


@pytest.mark.parametrize("fail_at", [1, 2, 3, 4, 5])
def test_failed_write_restores_every_file(home, environ, monkeypatch, fail_at):
    seed(home)
    before = snapshot(home)
    profile = profiles.get("local", environ)
    journal = Journal(environ)
    calls = _fail_on_agent_write(monkeypatch, environ, fail_at, OSError(28, "No space left on device", "x"))
    with journal.locked(), pytest.raises(AgentcfgError) as info:
        plan = plan_switch(profile, list(AGENTS.values()), environ)
        journal.commit(plan.changes, {"kind": "switch", "profile": "local", "label": "switch local"})
    assert "every file was restored" in info.value.message
    assert len(calls) >= fail_at
    assert snapshot(home) == before  # byte-identical, same modes; new files and new dirs gone
    assert not (home / ".qwen/settings.json").exists()
    assert not (home / ".config").exists()
    assert journal_dirs(environ) == []
    assert journal.entries() == [] and journal.pending() == []
    assert temps(home) == []


def test_third_write_failing_restores_first_two(home, environ, monkeypatch):
    """The brief's case: codex and qwen/.env (both pre-existing) are written, qwen/settings.json fails."""
    codex = write(home / ".codex" / "config.toml", CODEX_TOML, 0o640)
    env_file = write(home / ".qwen" / ".env", QWEN_ENV)
    _fail_on_agent_write(monkeypatch, environ, 3, OSError(5, "Input/output error"))
    with pytest.raises(AgentcfgError):
        switch("local", environ)
    assert codex.read_bytes() == CODEX_TOML and mode(codex) == 0o640
    assert env_file.read_bytes() == QWEN_ENV
    assert not (home / ".qwen/settings.json").exists()
    assert sorted(p.name for p in (home / ".qwen").iterdir()) == [".env"]
    assert journal_dirs(environ) == []


def test_first_two_new_files_removed_and_dirs_too(home, environ, monkeypatch):
    _fail_on_agent_write(monkeypatch, environ, 3, OSError(5, "Input/output error"))
    with pytest.raises(AgentcfgError):
        switch("local", environ)
    assert sorted(p.name for p in home.iterdir()) == ["agentcfg"]
    assert journal_dirs(environ) == []


def test_interrupt_during_write_restores_and_reraises(home, environ, monkeypatch):
    seed(home)
    before = snapshot(home)
    _fail_on_agent_write(monkeypatch, environ, 2, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        switch("local", environ)
    assert snapshot(home) == before
    assert journal_dirs(environ) == []


def test_file_changed_after_planning_is_refused(home, environ):
    seed(home)
    before_codex = (home / ".codex/config.toml").read_bytes()
    journal = Journal(environ)
    with journal.locked():
        plan = plan_for("local", environ)
        write(home / ".claude" / "settings.json", b'{"env": {}}\n')
        with pytest.raises(AgentcfgError, match="changed while agentcfg was planning"):
            journal.commit(plan.changes, {"kind": "switch", "profile": "local", "label": "x"})
    assert (home / ".codex/config.toml").read_bytes() == before_codex
    assert not (home / ".qwen/settings.json").exists()
    assert journal_dirs(environ) == []


def test_read_only_file_is_refused_before_anything_is_written(home, environ):
    seed(home)
    os.chmod(home / ".claude/settings.json", 0o444)
    before = snapshot(home)
    with pytest.raises(AgentcfgError, match="read-only"):
        switch("local", environ)
    assert snapshot(home) == before
    assert journal_dirs(environ) == []


# -- owners (only kept when agentcfg runs as root, e.g. under sudo) -----------------------------------

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="agentcfg keeps owners only when it runs as root")


@as_root
def test_switch_and_rollback_keep_owner_as_root(home, environ):
    codex = write(home / ".codex" / "config.toml", CODEX_TOML, 0o640)
    os.chown(codex, 1000, 1001)
    switch("local", environ)
    assert (codex.stat().st_uid, codex.stat().st_gid) == (1000, 1001)
    rollback(environ)
    assert codex.read_bytes() == CODEX_TOML
    assert (codex.stat().st_uid, codex.stat().st_gid) == (1000, 1001)


@as_root
def test_failed_write_restore_keeps_owner_as_root(home, environ, monkeypatch):
    codex = write(home / ".codex" / "config.toml", CODEX_TOML, 0o640)
    os.chown(codex, 1000, 1001)
    _fail_on_agent_write(monkeypatch, environ, 2, OSError(5, "Input/output error"))
    with pytest.raises(AgentcfgError):
        switch("local", environ)
    assert codex.read_bytes() == CODEX_TOML
    assert mode(codex) == 0o640
    assert (codex.stat().st_uid, codex.stat().st_gid) == (1000, 1001)


# -- 3. symlinked config -----------------------------------------------------------------------------


def test_symlinked_config_stays_a_link_and_rollback_restores_target(home, environ, tmp_path):
    dotfiles = tmp_path / "dotfiles"
    target = write(dotfiles / "codex.toml", CODEX_TOML, 0o640)
    (home / ".codex").mkdir()
    link = home / ".codex" / "config.toml"
    link.symlink_to(target)

    entry = switch("local", environ)
    assert entry is not None
    assert link.is_symlink() and os.readlink(link) == str(target)
    after = target.read_bytes()
    assert after != CODEX_TOML
    assert b'model = "DeepSeek-V4-Flash"' in after
    assert b"# my codex config: keep this comment" in after
    assert mode(target) == 0o640
    # the link is followed, no file is put beside it (the Codex profile file is a file of its own)
    assert sorted(p.name for p in (home / ".codex").iterdir()) == ["agentcfg-local.config.toml", "config.toml"]
    assert sorted(p.name for p in dotfiles.iterdir()) == ["codex.toml"]
    item = next(i for i in entry.files if i["agent"] == "codex")
    assert item["target"] == str(target)
    assert entry.backup(item) == CODEX_TOML

    switch("taotoken", environ)
    assert link.is_symlink()
    assert b'model = "deepseek-chat"' in target.read_bytes()

    rollback(environ)
    rollback(environ)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == CODEX_TOML
    assert mode(target) == 0o640


def test_relative_symlink_is_followed(home, environ):
    write(home / "dots" / "settings.json", CLAUDE_JSON)
    (home / ".claude").mkdir()
    link = home / ".claude" / "settings.json"
    link.symlink_to(Path("..") / "dots" / "settings.json")
    switch("local", environ)
    assert link.is_symlink() and os.readlink(link) == "../dots/settings.json"
    assert b'"ANTHROPIC_BASE_URL": "http://localhost:8000"' in (home / "dots/settings.json").read_bytes()
    rollback(environ)
    assert link.is_symlink()
    assert (home / "dots/settings.json").read_bytes() == CLAUDE_JSON


# -- 4. rollback -------------------------------------------------------------------------------------


def test_switch_switch_rollback_rollback_restores_start(home, environ):
    seed(home)
    start = snapshot(home)

    switch("local", environ)
    after_local = snapshot(home)
    assert after_local != start
    switch("taotoken", environ)
    assert snapshot(home) != after_local
    assert len(Journal(environ).entries()) == 2

    rollback(environ)
    assert snapshot(home) == after_local
    assert len(Journal(environ).entries()) == 1

    rollback(environ)
    assert snapshot(home) == start  # bytes and modes; .qwen/settings.json, opencode.json, ~/.config gone
    assert not (home / ".config").exists()
    assert journal_dirs(environ) == []

    with pytest.raises(AgentcfgError, match="nothing to roll back"):
        rollback(environ)


def test_rollback_removes_directories_agentcfg_created(home, environ):
    switch("local", environ)
    for d in (".codex", ".qwen", ".claude", ".config/opencode"):
        assert (home / d).is_dir()
    (home / ".codex" / "auth.json").write_text("{}")  # the user's own file keeps ~/.codex
    rollback(environ)
    assert sorted(p.name for p in home.iterdir()) == [".codex", "agentcfg"]
    assert sorted(p.name for p in (home / ".codex").iterdir()) == ["auth.json"]


def test_rollback_refuses_when_user_edited_an_owned_key_unless_forced(home, environ):
    seed(home)
    start = snapshot(home)
    switch("local", environ)
    codex = home / ".codex/config.toml"
    edited = codex.read_bytes().replace(b'model = "DeepSeek-V4-Flash"', b'model = "my-own-model"', 1)
    assert edited != codex.read_bytes()
    codex.write_bytes(edited)
    switched = snapshot(home)

    with pytest.raises(AgentcfgError, match="edited since agentcfg wrote it") as info:
        rollback(environ)
    assert "~/.codex/config.toml" in info.value.message
    assert snapshot(home) == switched
    assert len(Journal(environ).entries()) == 1

    rollback(environ, force=True)
    assert snapshot(home) == start
    assert journal_dirs(environ) == []


def test_rollback_keeps_edits_made_since_outside_the_owned_keys(home, environ):
    seed(home)
    start = snapshot(home)
    switch("local", environ)
    codex = home / ".codex/config.toml"
    codex.write_bytes(codex.read_bytes() + b'# my own edit\n[projects."/src"]\ntrust_level = "trusted"\n')

    rollback(environ)
    restored = codex.read_bytes()
    assert restored.startswith(start[".codex/config.toml"]), restored
    assert restored.endswith(b'# my own edit\n[projects."/src"]\ntrust_level = "trusted"\n'), restored
    assert journal_dirs(environ) == []


def test_rollback_removes_a_created_file_holding_only_what_the_agent_stamps_itself(home, environ):
    """qwen-code stamps `"$version": 4` into the settings.json agentcfg created (seen with 0.15)."""
    switch("local", environ)
    settings = home / ".qwen/settings.json"
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({"$version": 4, **data}, indent=2) + "\n")

    rollback(environ)
    assert not settings.exists()
    assert not (home / ".codex/config.toml").exists()  # the untouched files go as before


def test_rollback_of_a_created_file_keeps_what_others_added(home, environ):
    switch("local", environ)
    settings = home / ".qwen/settings.json"
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({"$version": 4, **data, "ui": {"theme": "Dracula"}}, indent=2) + "\n")

    rollback(environ)
    assert json.loads(settings.read_text()) == {"$version": 4, "ui": {"theme": "Dracula"}}


def test_rollback_removes_a_created_file_when_only_agentcfg_keys_were_in_it(home, environ):
    switch("local", environ)
    env_file = home / ".qwen/.env"
    env_file.write_text(env_file.read_text() + "\n")  # whitespace only: nothing of anyone else's
    rollback(environ)
    assert not env_file.exists()


def test_empty_existing_file_is_restored_empty_not_removed(home, environ, monkeypatch):
    empty = write(home / ".qwen" / "settings.json", b"", 0o640)
    switch("local", environ)
    assert empty.read_bytes().startswith(b"{")
    rollback(environ)
    assert empty.exists() and empty.read_bytes() == b"" and mode(empty) == 0o640

    _fail_on_agent_write(monkeypatch, environ, 4, OSError(5, "Input/output error"))
    with pytest.raises(AgentcfgError):
        switch("local", environ)
    assert empty.exists() and empty.read_bytes() == b"" and mode(empty) == 0o640


def test_rollback_refuses_when_user_deleted_created_file(home, environ):
    switch("local", environ)
    (home / ".qwen/settings.json").unlink()
    with pytest.raises(AgentcfgError, match="edited since"):
        rollback(environ)
    rollback(environ, force=True)
    assert sorted(p.name for p in home.iterdir()) == ["agentcfg"]


# -- 5. idempotence ----------------------------------------------------------------------------------


def test_second_identical_switch_writes_nothing(home, environ):
    seed(home)
    first = switch("local", environ)
    assert first is not None
    files = [p for p in home.rglob("*") if p.is_file() and "agentcfg" not in p.relative_to(home).parts]
    assert len(files) == 11  # the ten agent files and the Codex profile file agentcfg-local.config.toml
    stamps = {p: p.stat().st_mtime_ns for p in files}
    inodes = {p: p.stat().st_ino for p in files}
    content = snapshot(home)
    dirs = journal_dirs(environ)
    time.sleep(0.01)

    assert switch("local", environ) is None

    assert journal_dirs(environ) == dirs == [first.id]
    assert snapshot(home) == content
    assert {p: p.stat().st_mtime_ns for p in files} == stamps
    assert {p: p.stat().st_ino for p in files} == inodes


# -- 6. bounded journal ------------------------------------------------------------------------------


def test_journal_keeps_only_max_entries(home, environ):
    names = ["local", "taotoken"]
    ids = []
    for i in range(25):
        entry = switch(names[i % 2], environ)
        assert entry is not None
        ids.append(entry.id)
    assert MAX_ENTRIES == 20
    assert ids == [f"{n:06d}" for n in range(1, 26)]
    assert journal_dirs(environ) == ids[-MAX_ENTRIES:]
    assert [e.id for e in Journal(environ).entries()] == ids[-MAX_ENTRIES:]
    assert [e.manifest["profile"] for e in Journal(environ).entries()][-2:] == ["taotoken", "local"]


# -- 7. concurrency ----------------------------------------------------------------------------------


def _agent_files(home: Path) -> dict[str, bytes]:
    return {
        k: v[0]
        for k, v in snapshot(home).items()
        if isinstance(v, tuple) and isinstance(v[0], bytes) and not k.startswith("agentcfg")
    }


def _reference(tmp_path: Path, order: tuple[str, str]) -> dict[str, bytes]:
    ref_home = tmp_path / f"ref-{'-'.join(order)}"
    ref_home.mkdir()
    ref_env = make_environ(ref_home)
    for name in order:
        switch(name, ref_env)
    return _agent_files(ref_home)


def _status(environ: dict[str, str]) -> dict:
    out = subprocess.run(
        [str(BIN), "status", "--json"], env=environ, capture_output=True, text=True, timeout=30, check=True
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize("round_", [1, 2])
def test_two_concurrent_switches_serialise(tmp_path, round_):
    home = tmp_path / "home"
    home.mkdir()
    environ = make_environ(home)
    procs = [
        subprocess.Popen(
            [str(BIN), "switch", name, "--all"],
            env=environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("local", "taotoken")
    ]
    for proc, status in zip(procs, (0, 4), strict=True):  # taotoken: switched, its key not stored (4)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == status, (out, err)

    entries = Journal(environ).entries()
    assert [e.id for e in entries] == ["000001", "000002"]
    order = tuple(e.manifest["profile"] for e in entries)
    assert sorted(order) == ["local", "taotoken"]
    assert Journal(environ).pending() == []

    # The final files are exactly those of the two switches run one after the other, in journal order.
    assert _agent_files(home) == _reference(tmp_path, order)

    last = order[-1]
    status = _status(environ)
    assert status["interrupted"] is False
    by_agent = {a["name"]: a["profile"] for a in status["agents"]}
    # taotoken has no Anthropic URL, so Claude Code keeps the local profile it got (or never gets one).
    expected = {
        "codex": last,
        "qwen": last,
        "opencode": last,
        "claude": "local",
        "cline": last,
        "copilot": last,
        "gemini": None,
        "droid": last,
    }  # (gemini: a route only)
    assert by_agent == expected
    # the first switch's backups are the pristine state, the second's are the first switch's output
    first, second = entries
    assert all(first.backup(item) is None for item in first.files)
    # (but the Codex profile file of the profile switched to last, which that switch created)
    created = f"agentcfg-{second.manifest['profile']}.config.toml"
    assert all(
        second.backup(item) is not None
        for item in second.files
        if item["agent"] != "claude" and Path(item["path"]).name != created
    )
    assert temps(home) == []


HOLD_LOCK = """
import sys, time
from pathlib import Path
from agentcfg import fsutil
with fsutil.exclusive_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(20)
"""


def test_exclusive_lock_times_out_while_another_process_holds_it(home, environ, monkeypatch):
    state = fsutil.private_dir(Path(environ["AGENTCFG_HOME"]) / "state")
    lock = state / "lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(lock)], env=environ, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "held\n"
        started = time.monotonic()
        with (
            pytest.raises(AgentcfgError, match="another agentcfg has held the lock") as info,
            fsutil.exclusive_lock(lock, timeout=0.3),
        ):
            pytest.fail("acquired a lock another process holds")
        waited = time.monotonic() - started
        assert 0.3 <= waited < 5
        assert info.value.where == str(lock)

        # a whole transaction is refused the same way, and writes nothing
        real_lock = fsutil.exclusive_lock
        monkeypatch.setattr(fsutil, "exclusive_lock", lambda path, timeout=30.0: real_lock(path, timeout=0.2))
        with pytest.raises(AgentcfgError, match="held the lock"):
            switch("local", environ)
        monkeypatch.undo()
    finally:
        holder.kill()
        holder.wait(timeout=10)
    assert sorted(p.name for p in home.iterdir()) == ["agentcfg"]
    assert journal_dirs(environ) == []
    # once the holder is gone, the lock is free
    with fsutil.exclusive_lock(lock, timeout=2):
        pass


def test_exclusive_lock_is_released_after_use(tmp_path):
    lock = tmp_path / "lock"
    with fsutil.exclusive_lock(lock, timeout=1):
        pass
    with fsutil.exclusive_lock(lock, timeout=0.2):
        pass
    assert mode(lock) == 0o600


# -- fsutil ------------------------------------------------------------------------------------------


def test_atomic_write_replaces_content_and_sets_mode(tmp_path):
    target = write(tmp_path / "f.toml", b"old\n", 0o644)
    fsutil.atomic_write(target, b"new\r\ncontent", 0o640)
    assert target.read_bytes() == b"new\r\ncontent"
    assert mode(target) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.toml"]


def test_atomic_write_creates_new_file(tmp_path):
    target = tmp_path / ".env"
    fsutil.atomic_write(target, b"A=1\n", 0o600)
    assert target.read_bytes() == b"A=1\n"
    assert mode(target) == 0o600


def test_atomic_write_failure_keeps_old_file_and_removes_temp(tmp_path, monkeypatch):
    target = write(tmp_path / "config.toml", b"keep me\n", 0o640)

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsutil.os, "replace", boom)
    with pytest.raises(OSError):
        fsutil.atomic_write(target, b"new", 0o600)
    monkeypatch.undo()
    assert target.read_bytes() == b"keep me\n"
    assert mode(target) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_atomic_write_overwrites_a_stale_temp_of_same_pid(tmp_path):
    target = tmp_path / "settings.json"
    stale = tmp_path / f".settings.json.{os.getpid()}{fsutil.TMP_SUFFIX}"
    stale.write_bytes(b"garbage")
    fsutil.atomic_write(target, b"{}\n", 0o600)
    assert target.read_bytes() == b"{}\n"
    assert not stale.exists()


def test_remove_stale_temps_only_removes_this_files_temps(tmp_path):
    target = tmp_path / ".env"
    mine = [tmp_path / f"..env.{pid}{fsutil.TMP_SUFFIX}" for pid in (1, 4242)]
    other = tmp_path / f".settings.json.7{fsutil.TMP_SUFFIX}"
    unrelated = tmp_path / "..env.bak"
    for p in [*mine, other, unrelated]:
        p.write_bytes(b"x")
    fsutil.remove_stale_temps(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([other.name, unrelated.name])


def test_private_dir_creates_and_tightens(tmp_path):
    created = fsutil.private_dir(tmp_path / "a" / "b")
    assert mode(created) == 0o700
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    os.chmod(loose, 0o755)
    fsutil.private_dir(loose)
    assert mode(loose) == 0o700


def test_write_private_is_0600(tmp_path):
    old = os.umask(0)
    try:
        fsutil.write_private(tmp_path / "m.json", "é\n")
    finally:
        os.umask(old)
    assert (tmp_path / "m.json").read_bytes() == "é\n".encode()
    assert mode(tmp_path / "m.json") == 0o600


def test_read_text(tmp_path):
    assert fsutil.read_text(tmp_path / "missing", "missing") is None
    crlf = write(tmp_path / "crlf", b"a = 1\r\nb = 2\r\n")
    assert fsutil.read_text(crlf, "crlf") == "a = 1\r\nb = 2\r\n"
    bad = write(tmp_path / "bad", b"ok\xff\xfe")
    with pytest.raises(AgentcfgError, match="not UTF-8 text \\(byte 2\\)"):
        fsutil.read_text(bad, "~/bad")
    with pytest.raises(AgentcfgError, match="is a directory"):
        fsutil.read_text(tmp_path, "~/dir")


def test_a_commit_holds_no_whole_copy_of_a_big_file_beside_the_plans_texts(home, environ):
    """The plan holds the file's text before and after; the commit itself (check, backup, written copy, write,
    check after) streams them: its own peak stays a fraction of the file's size (a 40 MB config.toml once cost
    four more copies of itself here)."""
    import tracemalloc

    from agentcfg.agents.base import AgentFile
    from agentcfg.plan import FileChange

    target = home / ".codex" / "config.toml"
    target.parent.mkdir(parents=True)
    before = "".join(f'[projects."/src/p{i:07d}"]\ntrust_level = "trusted"\n' for i in range(120_000))
    target.write_text(before)
    after = 'model = "local"\n' + before
    change = FileChange("codex", AgentFile(target, "toml"), before, after)
    journal = Journal(environ)
    tracemalloc.start()
    try:
        with journal.locked():
            journal.commit([change], {"kind": "switch", "profile": "local", "label": "big"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert target.read_text() == after
    assert peak < 0.5 * len(before), f"the commit peaked at {peak / len(before):.1f}x the file"
