"""The journal verifies itself: recovery never discards later work, damaged state is reported, not trusted.

Each test reproduces one report from the issue (see docs/switch.md, "What the journal promises").
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from agentcfg.apply import Journal
from agentcfg.errors import AgentcfgError
from tests import bare_home, test_crash
from tests.test_apply import rollback, switch
from tests.test_crash import CODEX_TOML, ORDER, agent_files, expected_after, journal_root, kill_run, seed, snapshot

# fixtures, which pytest matches to arguments by name (assigned, not imported, so ruff sees no shadowing)
home, environ, run, interrupted = bare_home.home, bare_home.environ, test_crash.run, test_crash.interrupted

CODEX = ".codex/config.toml"


def only_entry(environ) -> Path:
    (entry,) = [p for p in journal_root(environ).iterdir() if p.name.isdigit()]
    return entry


def item_for(entry: Path, rel: str, home: Path) -> tuple[int, dict]:
    manifest = json.loads((entry / "manifest.json").read_text())
    for index, item in enumerate(manifest["files"]):
        if Path(item["path"]) == home / rel:
            return index, item
    raise AssertionError(rel)


# -- 1. recovery never discards later work -----------------------------------------------------------


def test_recovery_keeps_a_file_edited_after_the_interruption(home, environ, run, interrupted):
    """Killed after every write, before the commit marker; then the user edits config.toml."""
    seed(home)
    before = agent_files(home)
    kill_run(environ, "commit", 1, "before", "switch", "local", "--all")
    codex = home / CODEX
    mine = codex.read_bytes() + b"# added by me after the crash\n"
    codex.write_bytes(mine)

    code, _out, err = run("switch", "taotoken", "--agent", "qwen")
    assert code == 4, err  # switched; no key stored (as in test_crash)
    assert codex.read_bytes() == mine  # never restored over
    assert "~/.codex/config.toml changed after the interrupted switch" in err
    kept = [line for line in err.splitlines() if "agentcfg-recovered" in line or "recovered/" in line]
    assert kept, err
    saved = Path(environ["AGENTCFG_HOME"]) / "state" / "recovered"
    (backup,) = saved.iterdir()
    assert backup.read_bytes() == CODEX_TOML
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert str(backup) in err.replace("~", str(home)) or backup.name in err
    # the other files were put back (the qwen switch then changed only qwen's)
    now = agent_files(home)
    assert now[".claude/settings.json"] == before[".claude/settings.json"]
    assert now[".config/opencode/opencode.json"] is None
    assert interrupted() is False


def test_recovery_of_an_interrupted_rollback_keeps_a_later_edit(home, environ, run):
    seed(home)
    assert run("switch", "local", "--all")[0] == 0
    kill_run(environ, "agent", 2, "after", "rollback")
    codex = home / CODEX  # already rolled back; the user edits it again
    mine = codex.read_bytes() + b"# mine\n"
    codex.write_bytes(mine)
    code, _out, _err = run("status")
    assert code == 0
    with Journal(environ).locked() as recovered:
        pass
    assert codex.read_bytes() == mine
    assert any("~/.codex/config.toml changed after the interrupted rollback" in r for r in recovered), recovered


def test_rollback_after_a_recovery_says_what_it_restored(home, environ, run):
    """The issue: `rollback` said "journal is empty" although it had just restored every file."""
    seed(home)
    before = snapshot(home)
    kill_run(environ, "agent", 3, "after", "switch", "local", "--all")
    code, out, err = run("rollback")
    assert snapshot(home) == before
    assert code == 0, err
    assert "interrupted switch (switch local)" in out + err
    assert "journal is empty" not in out + err


# -- 2. a journal that verifies itself ---------------------------------------------------------------


def test_truncated_backup_is_not_restored(home, environ, run):
    seed(home)
    assert run("switch", "local", "--all")[0] == 0
    entry = only_entry(environ)
    _, item = item_for(entry, CODEX, home)
    backup = entry / item["backup"]
    backup.write_bytes(b"")  # truncated
    switched = snapshot(home)

    code, out, err = run("rollback")
    assert code == 2, (out, err)
    assert str(backup) in err or backup.name in err
    assert "backup" in err and "Traceback" not in err
    assert snapshot(home) == switched  # nothing written, not even the files whose backups are fine
    assert (home / CODEX).read_bytes() != b""


def test_corrupt_backup_same_size_is_not_restored(home, environ, run):
    seed(home)
    assert run("switch", "local", "--all")[0] == 0
    entry = only_entry(environ)
    _, item = item_for(entry, CODEX, home)
    backup = entry / item["backup"]
    data = bytearray(backup.read_bytes())
    data[3] ^= 0x20
    backup.write_bytes(bytes(data))
    switched = snapshot(home)
    code, _out, err = run("rollback", "--force")
    assert code == 2
    assert "corrupt" in err or "does not match" in err
    assert snapshot(home) == switched


def test_corrupt_backup_of_a_pending_entry_is_reported_and_nothing_restored(home, environ, run):
    """Recovery cannot use the entry: it restores nothing, and names the entry with the command that sets it
    aside; the switch goes on (issue 27: an entry agentcfg cannot use blocks no other command)."""
    seed(home)
    kill_run(environ, "commit", 1, "before", "switch", "local", "--all")  # every file written, entry pending
    entry = only_entry(environ)
    _, item = item_for(entry, ".claude/settings.json", home)
    (entry / item["backup"]).unlink()  # missing
    half = snapshot(home)
    code, _out, err = run("switch", "local", "--all")
    assert code == 0, err
    assert item["backup"] in err and "missing" in err
    assert "agentcfg rollback --discard 000001" in err  # what to run next
    assert snapshot(home) == half  # nothing restored (the files already say local: nothing to switch either)
    code, _out, err = run("rollback")  # the newest entry is the one it cannot use: refused, by name
    assert code == 2 and "000001" in err and "--discard 000001" in err
    assert snapshot(home) == half
    assert run("rollback", "--discard", "000001")[0] == 0
    assert run("rollback")[0] == 3  # nothing left to roll back


@pytest.mark.parametrize(
    "manifest",
    [
        b"",
        b"{not json",
        b"\xff\xfe",
        b"[]",
        b'{"status": "committed"}',
        b'{"status": "committed", "kind": "switch", "time": 1, "files": {}}',
        b'{"status": "done", "kind": "switch", "time": 1, "files": []}',
        b'{"status": "committed", "kind": "switch", "time": "x", "files": []}',
        b'{"status": "committed", "kind": "switch", "time": 1, "files": [{"path": 3}]}',
    ],
    ids=["empty", "garbage", "not-utf8", "list", "no-kind", "files-not-list", "status", "time", "file-fields"],
)
@pytest.mark.parametrize(
    "command", [("switch", "local"), ("rollback",), ("status",), ("agents",), ("status", "--json")]
)
def test_damaged_manifest_is_reported_by_path_in_every_command(home, environ, run, manifest, command):
    """Named by path with the command that sets it aside, and never acted on: it stops only a rollback, whose
    newest entry it is (before issue 27 it stopped every command, until the user moved it by hand)."""
    seed(home)
    entry = journal_root(environ) / "000001"
    entry.mkdir(parents=True)
    (entry / "manifest.json").write_bytes(manifest)
    before = snapshot(home)
    code, out, err = run(*command)
    assert code == (2 if command == ("rollback",) else 0), (out, err)
    assert "internal error" not in err
    if command[-1] == "--json":
        (problem,) = json.loads(out)["journal_problems"]
        assert problem["entry"] == "000001" and problem["fix"] == "agentcfg rollback --discard 000001"
    else:
        assert str(entry / "manifest.json") in err.replace("~", str(home)) or "000001/manifest.json" in err
        assert "agentcfg rollback --discard 000001" in err
    if command[0] != "switch":
        assert snapshot(home) == before


def test_entry_without_manifest_is_reported(home, environ, run):
    seed(home)
    entry = journal_root(environ) / "000001"
    entry.mkdir(parents=True)
    (entry / "0.bak").write_bytes(b"x")
    code, _out, err = run("switch", "local")
    assert code == 0
    assert "000001" in err and "manifest" in err and "agentcfg rollback --discard 000001" in err


def test_a_moved_away_entry_is_ignored(home, environ, run):
    """An entry moved to `DIR.broken` by hand (the hint before `rollback --discard`): a name that is not a
    number is not an entry."""
    seed(home)
    entry = journal_root(environ) / "000001.broken"
    entry.mkdir(parents=True)
    (entry / "manifest.json").write_bytes(b"{")
    assert run("switch", "local", "--all")[0] == 0
    assert [e.id for e in Journal(environ).entries()] == ["000001"]
    assert (entry / "manifest.json").read_bytes() == b"{"  # left alone


def test_backup_name_cannot_point_outside_the_entry(home, environ, run, tmp_path):
    seed(home)
    assert run("switch", "local", "--all")[0] == 0
    entry = only_entry(environ)
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest["files"][0]["backup"] = "../../../../.ssh/id_rsa"
    (entry / "manifest.json").write_text(json.dumps(manifest))
    code, _out, err = run("rollback")
    assert code == 2 and "internal error" not in err


def test_manifest_records_size_and_hash_and_a_verified_copy_of_what_was_written(home, environ):
    seed(home)
    entry = switch("local", environ)
    assert entry is not None
    for item in entry.files:
        target = Path(item["target"])
        written = entry.written(item)
        assert written == target.read_bytes()
        assert item["size_after"] == len(written)
        assert (entry.directory / item["written"]).read_bytes() == written
        if item["backup"] is not None:
            assert item["size_before"] == len(entry.backup(item))
    # a damaged after copy is reported, not returned
    item = entry.files[0]
    (entry.directory / item["written"]).write_bytes(b"oops")
    with pytest.raises(AgentcfgError, match="truncated or damaged") as info:
        entry.written(item)
    assert item["written"] in str(info.value)


def test_legacy_entry_without_sizes_or_copies_still_rolls_back(home, environ):
    """Entries written before this change have sha_before/sha_after but no sizes, no N.after."""
    seed(home)
    start = snapshot(home)
    entry = switch("local", environ)
    manifest = json.loads((entry.directory / "manifest.json").read_text())
    manifest.pop("version", None)
    for item in manifest["files"]:
        for key in ("size_before", "size_after", "written"):
            item.pop(key, None)
    for copy in entry.directory.glob("*.after"):
        copy.unlink()
    (entry.directory / "manifest.json").write_text(json.dumps(manifest, indent=1))
    legacy = Journal(environ).entries()[-1]
    assert all(legacy.written(item) is None for item in legacy.files)
    rollback(environ)
    assert snapshot(home) == start


def test_legacy_entry_backup_is_verified_by_sha_before(home, environ):
    seed(home)
    entry = switch("local", environ)
    manifest = json.loads((entry.directory / "manifest.json").read_text())
    manifest.pop("version", None)
    for item in manifest["files"]:
        item.pop("size_before", None)
    (entry.directory / "manifest.json").write_text(json.dumps(manifest, indent=1))
    item = manifest["files"][0]
    (entry.directory / item["backup"]).write_bytes(b"")
    with pytest.raises(AgentcfgError, match="backup"):
        rollback(environ)


def test_newer_manifest_version_is_refused(home, environ, run):
    seed(home)
    entry = switch("local", environ)
    manifest = json.loads((entry.directory / "manifest.json").read_text())
    manifest["version"] = 99
    (entry.directory / "manifest.json").write_text(json.dumps(manifest))
    code, _out, err = run("rollback")
    assert code == 2 and "newer agentcfg" in err


# -- 5. hard links -----------------------------------------------------------------------------------


def test_hard_linked_config_is_refused(home, environ, run, tmp_path):
    seed(home)
    other = tmp_path / "dotfiles-config.toml"
    os.link(home / CODEX, other)
    before = snapshot(home)
    code, _out, err = run("switch", "local", "--all")
    assert code == 2
    assert "~/.codex/config.toml" in err and "2 hard links" in err
    assert "symlink" in err and "--agent" in err
    assert snapshot(home) == before
    assert other.read_bytes() == CODEX_TOML and os.stat(other).st_nlink == 2
    assert os.listdir(journal_root(environ)) == []
    # the other agents can still be switched
    assert run("switch", "local", "--agent", "claude")[0] == 0


def test_all_or_nothing_after_kill_still_holds(home, environ):
    """Sanity: the new manifest fields do not change what a killed switch leaves."""
    seed(home)
    before = agent_files(home)
    after = expected_after(environ)
    kill_run(environ, "agent", 2, "after", "switch", "local", "--all")
    now = agent_files(home)
    assert [now[r] == after[r] for r in ORDER] == [True, True, False, False, False, False, False]
    with Journal(environ).locked():
        pass
    assert agent_files(home) == before


# -- 4. the smallest race window ---------------------------------------------------------------------


def test_a_write_while_the_backups_are_written_refuses_the_switch(home, environ, monkeypatch):
    """The issue's window: between the "changed while planning" check and the rename, the backups
    are written and fsynced. A write there is now caught by the re-check just before the rename."""
    from agentcfg import fsutil

    seed(home)
    before = agent_files(home)
    codex = home / CODEX
    theirs = CODEX_TOML + b"# theirs, written while agentcfg wrote its backups\n"
    real = fsutil.write_new

    def slow_backup(path, data):
        real(path, data)
        if path.name == "committed.json":
            codex.write_bytes(theirs)

    monkeypatch.setattr(fsutil, "write_new", slow_backup)
    with pytest.raises(AgentcfgError, match="changed by another program while agentcfg was writing") as info:
        switch("local", environ)
    assert info.value.where == "~/.codex/config.toml"
    assert agent_files(home) == {**before, CODEX: theirs}
    assert os.listdir(journal_root(environ)) == []


def test_a_write_in_place_just_before_the_rename_is_put_back(home, environ, monkeypatch):
    """A writer in place (truncate + write) that lands after the last check, before the rename:
    agentcfg still holds the old file open, sees the write, and puts that text back."""
    seed(home)
    before = agent_files(home)
    codex = home / CODEX
    theirs = CODEX_TOML + b"# theirs, in place\n"
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if Path(dst) == codex:
            with open(codex, "r+b") as handle:
                handle.truncate(0)
                handle.write(theirs)
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(AgentcfgError, match="changed by another program while agentcfg was writing"):
        switch("local", environ)
    monkeypatch.undo()
    assert codex.read_bytes() == theirs
    assert agent_files(home) == {**before, CODEX: theirs}
    assert os.listdir(journal_root(environ)) == []


def test_a_write_in_place_just_after_the_rename_is_put_back(home, environ, monkeypatch):
    """The writer opened the file before agentcfg's rename and writes after it, into the replaced file."""
    seed(home)
    codex = home / CODEX
    theirs = CODEX_TOML + b"# theirs, into the old file\n"
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if Path(dst) != codex:
            return real(src, dst, *args, **kwargs)
        with open(codex, "r+b") as handle:  # opened before the rename
            real(src, dst, *args, **kwargs)
            handle.truncate(0)
            handle.write(theirs)
        return None

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(AgentcfgError, match="changed by another program"):
        switch("local", environ)
    monkeypatch.undo()
    assert codex.read_bytes() == theirs


def _mutations(value, path=()):
    """Every way to break one field of a manifest: delete it, or give it another type."""
    others = [None, 7, "x", [], {}, True]
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*path, key), "delete"
            yield from _mutations(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value[:1]):
            yield from _mutations(inner, (*path, index))
    for other in others:
        if other != value or type(other) is not type(value):
            yield path, other


def _mutated(data, path, how):
    data = json.loads(json.dumps(data))
    if not path:
        return how
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    if how == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = how
    return data


@pytest.mark.parametrize("status", ["committed", "pending"])
def test_no_damaged_manifest_field_makes_an_internal_error(home, environ, run, tmp_path, status):
    """Each field of a real manifest deleted or given each other JSON type: status and rollback (for
    a pending entry: recovery) either work or say what is wrong (exit 2), never an internal error."""
    import shutil

    seed(home)
    assert run("switch", "local", "--agent", "codex", "--agent", "claude")[0] == 0
    entry = only_entry(environ)
    good = {**json.loads((entry / "manifest.json").read_text()), "status": status}
    template = tmp_path / "template"
    shutil.copytree(entry, template)
    tried = 0
    for path, how in _mutations(good):
        shutil.rmtree(entry, ignore_errors=True)
        shutil.copytree(template, entry)
        (entry / "manifest.json").write_text(json.dumps(_mutated(good, path, how)))
        for command in (("status",), ("rollback", "--dry-run")):
            code, _out, err = run(*command)
            assert code in (0, 2) and "internal error" not in err, (path, how, command, err)
        tried += 1
    assert tried > 100
