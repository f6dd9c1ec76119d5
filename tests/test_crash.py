"""Kill -9 in the middle of a transaction: files are all as before or all as after, and the next run recovers.

A child process patches `agentcfg.fsutil.atomic_write` (agent files), `fsutil.write_new` (the journal's
staged backups, copies and manifests) and `Journal._mark_committed` (the commit marker) to SIGKILL
itself at a chosen point, then runs the real CLI. The parent then inspects what was left, and recovers.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agentcfg import fsutil, profiles
from agentcfg.agents import AGENTS
from agentcfg.apply import Journal
from agentcfg.errors import AgentcfgError
from agentcfg.switch import plan_switch
from tests.bare_home import environ, home, make_environ, write  # noqa: F401 (fixtures)

BIN = Path(sys.executable).with_name("agentcfg")

CODEX_TOML = b"""# Codex config, hand-written
model = "gpt-5"   # default model
approval_policy = "never"

# trusted projects
[projects."/home/me/src"]
trust_level = "trusted"
"""

CLAUDE_JSON = b"""{
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [{"type": "command", "command": "ruff format \\"$FILE\\""}]
      }
    ]
  },
  "env": {"DISABLE_TELEMETRY": "1"},
  "includeCoAuthoredBy": false
}
"""

QWEN_ENV = b"# qwen-code\nHTTPS_PROXY=http://proxy:3128\n"

# The files `switch local --all` touches, in the order the writer writes them.
ORDER = [
    ".codex/config.toml",
    ".codex/agentcfg-local.config.toml",  # the Codex profile file (Codex not installed: it may be 0.134+)
    ".qwen/.env",
    ".qwen/settings.json",
    ".config/opencode/opencode.json",
    ".claude/settings.json",
    ".cline/data/settings/providers.json",
    ".cline/data/settings/global-settings.json",
    ".copilot/providers.json",
    ".copilot/settings.json",
    ".factory/settings.json",
]

# The child: kill itself at the N-th write of a KIND, before / after it / half-way through its temp file.
KILLER = r"""
import os, signal, sys
from pathlib import Path

from agentcfg import env, fsutil
import agentcfg.apply
import agentcfg.cli

kind, n, when = sys.argv[1], int(sys.argv[2]), sys.argv[3]
argv = sys.argv[4:]
state = os.path.realpath(env.state_dir(os.environ))
journal = os.path.join(state, "journal")
real = fsutil.atomic_write
real_new = fsutil.write_new
real_commit = agentcfg.apply.Journal._mark_committed
counts = {}


def die():
    os.kill(os.getpid(), signal.SIGKILL)


def classify(target):
    path = os.path.realpath(target)
    if not path.startswith(state + os.sep):
        return "agent"
    parent = os.path.dirname(path)
    if os.path.basename(parent).startswith(".new-"):
        if path.endswith(".bak"):
            return "backup"
        return "copy" if path.endswith(".after") else "manifest"
    return "other"


def hit(what):
    counts[what] = counts.get(what, 0) + 1
    return what == kind and counts[what] == n


def half(data):  # what a writer killed half way left (text is written as UTF-8)
    data = data.encode("utf-8") if isinstance(data, str) else data
    return data[: len(data) // 2]


def patched(target, data, mode, owner=None, check=None):
    now = hit(classify(target))
    if now and when == "before":
        die()
    if now and when == "tmp":  # the temp file is half written, the rename never happens
        tmp = Path(target).with_name(f".{Path(target).name}.{os.getpid()}{fsutil.TMP_SUFFIX}")
        tmp.write_bytes(half(data))
        die()
    real(target, data, mode, owner, check)
    if now and when == "after":
        die()


def patched_new(path, data):  # the journal's staged files: backups, copies, manifests
    now = hit(classify(path))
    if now and when == "before":
        die()
    if now and when == "tmp":  # half written: the staging directory is never renamed into place
        Path(path).write_bytes(half(data))
        die()
    real_new(path, data)
    if now and when == "after":
        die()


def patched_commit(self, entry):  # the commit marker: a rename of the committed manifest
    now = hit("commit")
    if now and when == "before":
        die()
    real_commit(self, entry)
    if now and when == "after":
        die()


fsutil.atomic_write = patched
fsutil.write_new = patched_new
agentcfg.apply.Journal._mark_committed = patched_commit
if kind == "drop":  # shutil.rmtree of a journal entry, killed after the backups went, before manifest.json
    import shutil

    real_rmtree = shutil.rmtree

    def rmtree(path, *args, **kwargs):
        if Path(path).name.isdigit() or Path(path).name.startswith(".drop-"):
            for item in sorted(os.scandir(path), key=lambda e: e.name == "manifest.json"):
                if item.name == "manifest.json":
                    die()
                os.unlink(item.path)
        real_rmtree(path, *args, **kwargs)

    shutil.rmtree = rmtree
if kind == "forget":  # a rollback that committed, killed before dropping the entry it undid
    agentcfg.apply.Journal._forget = lambda self, entry: die()
agentcfg.cli.main(argv)
print("NOT KILLED", counts)
"""


# -- helpers -----------------------------------------------------------------------------------------


def seed(home: Path) -> None:
    """codex, qwen/.env and claude exist; qwen/settings.json and opencode (and ~/.config) do not."""
    write(home / ".codex" / "config.toml", CODEX_TOML, 0o640)
    write(home / ".qwen" / ".env", QWEN_ENV)
    write(home / ".claude" / "settings.json", CLAUDE_JSON)


def snapshot(home: Path) -> dict[str, tuple]:
    """Every directory and file under HOME except agentcfg's own dir: relative path -> (bytes | 'dir', mode)."""
    found: dict[str, tuple] = {}
    for root, dirs, files in os.walk(home):
        rel = Path(root).relative_to(home)
        if rel.parts[:1] == ("agentcfg",):
            continue
        for name in dirs:
            if not (rel == Path(".") and name == "agentcfg"):
                found[str(rel / name)] = ("dir", stat.S_IMODE(os.lstat(Path(root) / name).st_mode))
        for name in files:
            path = Path(root) / name
            found[str(rel / name)] = (path.read_bytes(), stat.S_IMODE(os.lstat(path).st_mode))
    return found


def agent_files(home: Path) -> dict[str, bytes | None]:
    """The six files `switch --all` touches -> their bytes (None: absent)."""
    return {rel: (home / rel).read_bytes() if (home / rel).exists() else None for rel in ORDER}


def expected_after(environ: dict[str, str]) -> dict[str, bytes | None]:
    """What `switch local --all` writes, from the plan (nothing is written)."""
    home = Path(environ["HOME"])
    plan = plan_switch(profiles.get("local", environ), list(AGENTS.values()), environ)
    pending = plan.pending
    assert len(pending) == len(ORDER)
    return {str(c.path.relative_to(home)): c.after.encode("utf-8") for c in pending}


def kill_run(environ: dict[str, str], kind: str, n: int, when: str, *argv: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, kind, str(n), when, *argv],
        env=environ,
        cwd=environ["HOME"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def cli(environ: dict[str, str], *argv: str, status: int = 0) -> subprocess.CompletedProcess:
    """The real console script in a subprocess."""
    proc = subprocess.run([str(BIN), *argv], env=environ, capture_output=True, text=True, timeout=60)
    assert proc.returncode == status, (proc.returncode, proc.stdout, proc.stderr)
    return proc


@pytest.fixture
def run(environ, monkeypatch, capsys):
    """`agentcfg ARGV` in this process (subprocesses cost 0.2 s each), with `environ` as its environment
    and an empty keyring of its own (keyring chooses once per process, from the process environment: it
    would otherwise be the machine's, or whichever an earlier test left)."""
    import keyring

    import agentcfg.cli
    import agentcfg.cli.common
    from tests.fake_keyring import MemoryKeyring

    monkeypatch.setattr(agentcfg.cli.common, "environ", lambda: dict(environ))
    monkeypatch.setattr(keyring.core, "_keyring_backend", MemoryKeyring())

    def run_cli(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            agentcfg.cli.main(list(argv))
            code = 0
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return run_cli


@pytest.fixture
def interrupted(run):
    def status_interrupted() -> bool:
        code, out, err = run("status", "--json")
        assert code == 0, err
        return json.loads(out)["interrupted"]

    return status_interrupted


def journal_root(environ: dict[str, str]) -> Path:
    return Path(environ["AGENTCFG_HOME"]) / "state" / "journal"


def temps(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob(f"*{fsutil.TMP_SUFFIX}"))


# -- kill points during `switch local --all` ---------------------------------------------------------

# (kind, n, when) -> how many agent files are already "after" when the process dies, whether a
# pending entry exists, and whether a half-written temp file is left beside a target.
CASES = {
    "backup-1-after": (("backup", 1, "after"), 0, False),
    "backup-2-before": (("backup", 2, "before"), 0, False),
    "committed-staged-before": (("manifest", 2, "before"), 0, False),
    "copy-4-after": (("copy", 4, "after"), 0, False),
    "manifest-staged-after": (("manifest", 1, "after"), 0, False),  # before the rename into place
    "agent-1-before": (("agent", 1, "before"), 0, True),
    "agent-1-after": (("agent", 1, "after"), 1, True),
    "agent-2-after": (("agent", 2, "after"), 2, True),
    "agent-2-tmp": (("agent", 2, "tmp"), 1, True),
    "agent-3-after": (("agent", 3, "after"), 3, True),
    "agent-4-tmp": (("agent", 4, "tmp"), 3, True),
    "agent-4-after": (("agent", 4, "after"), 4, True),
    "commit-before": (("commit", 1, "before"), len(ORDER), True),  # every file written, manifest still "pending"
}


@pytest.mark.parametrize("case", list(CASES))
def test_kill_during_switch_then_recover(home, environ, interrupted, case):
    (kind, n, when), done, pending = CASES[case]
    seed(home)
    before_tree = snapshot(home)
    before = agent_files(home)
    after = expected_after(environ)
    assert all(after[rel] != before[rel] for rel in ORDER)

    kill_run(environ, kind, n, when, "switch", "local", "--all")

    # never partial: exactly the first `done` files are as after, the others exactly as before
    now = agent_files(home)
    for index, rel in enumerate(ORDER):
        assert now[rel] == (after[rel] if index < done else before[rel]), rel
    stale = temps(home)
    if when == "tmp":
        assert len(stale) == 1 and Path(stale[0]).parent == Path(ORDER[n - 1]).parent
    else:
        assert stale == []

    journal = Journal(environ)
    assert journal.entries() == []
    assert [e.manifest["status"] for e in journal.pending()] == (["pending"] if pending else [])
    staged = sorted(p.name for p in journal_root(environ).iterdir() if p.name.startswith(".new-"))
    assert len(staged) == (0 if pending else 1)
    if pending:
        (entry,) = journal.pending()
        backups = {str(Path(i["path"]).relative_to(home)): entry.backup(i) for i in entry.files}
        assert backups == before
    assert interrupted() is pending

    # the next command to take the lock restores everything first
    with journal.locked() as recovered:
        assert len(recovered) == (1 if pending else 0)
    assert snapshot(home) == before_tree  # bytes and modes; new files, new dirs and temp files gone
    assert not (home / ".config").exists()
    assert os.listdir(journal_root(environ)) == []
    assert interrupted() is False


def test_kill_after_commit_keeps_the_switch(home, environ, run, interrupted):
    """Killed after the manifest says committed (while pruning): the switch stands and can be rolled back."""
    seed(home)
    before_tree = snapshot(home)
    after = expected_after(environ)
    kill_run(environ, "commit", 1, "after", "switch", "local", "--all")
    assert agent_files(home) == after
    journal = Journal(environ)
    assert [e.manifest["status"] for e in journal.entries()] == ["committed"]
    assert interrupted() is False
    with journal.locked() as recovered:
        assert recovered == []
    assert agent_files(home) == after
    assert run("rollback")[0] == 0
    assert snapshot(home) == before_tree


def test_next_switch_recovers_first(home, environ, tmp_path):
    """All through the real console script."""
    seed(home)
    before_tree = snapshot(home)
    kill_run(environ, "agent", 2, "after", "switch", "local", "--all")
    assert json.loads(cli(environ, "status", "--json").stdout)["interrupted"] is True

    out = cli(environ, "switch", "taotoken", "--all", status=4)  # switched; no key stored
    assert "recovered an interrupted switch (switch local): its files were restored" in out.stderr
    assert json.loads(cli(environ, "status", "--json").stdout)["interrupted"] is False

    # the result is what taotoken does to the untouched files
    ref = tmp_path / "ref"
    ref.mkdir()
    seed(ref)
    ref_env = make_environ(ref)
    journal = Journal(ref_env)
    with journal.locked():
        plan = plan_switch(profiles.get("taotoken", ref_env), list(AGENTS.values()), ref_env)
        journal.commit(plan.changes, {"kind": "switch", "profile": "taotoken", "label": "switch taotoken"})
    assert snapshot(home) == snapshot(ref)

    journal = Journal(environ)
    assert [e.manifest["profile"] for e in journal.entries()] == ["taotoken"]
    assert journal.pending() == []
    # and its backups are the pre-crash bytes, so a rollback gets back to the start
    cli(environ, "rollback")
    assert snapshot(home) == before_tree


def test_rollback_after_a_kill_restores_files_even_with_empty_journal(home, environ, run):
    """Recovery undid the interrupted switch: that is the rollback asked for, and it says so."""
    seed(home)
    before_tree = snapshot(home)
    kill_run(environ, "agent", 3, "after", "switch", "local", "--all")
    code, out, err = run("rollback")
    assert code == 0, err
    assert "Rolled back the interrupted change" in out
    assert "recovered an interrupted switch (switch local): its files were restored" in err
    assert snapshot(home) == before_tree
    assert os.listdir(journal_root(environ)) == []


# -- kill points during `rollback` -------------------------------------------------------------------


def _switched(home: Path, run) -> tuple[dict, dict]:
    seed(home)
    before_tree = snapshot(home)
    assert run("switch", "local", "--all")[0] == 0
    return before_tree, snapshot(home)


@pytest.mark.parametrize("n", [1, 3])
def test_kill_during_rollback_restores_the_switched_state(home, environ, run, interrupted, n):
    before_tree, switched_tree = _switched(home, run)
    kill_run(environ, "agent", n, "after", "rollback")
    assert interrupted() is True
    journal = Journal(environ)
    with journal.locked() as recovered:
        assert recovered == ["recovered an interrupted rollback (rollback of 000001): its files were restored"]
    assert snapshot(home) == switched_tree
    assert [e.id for e in journal.entries()] == ["000001"]
    assert sorted(os.listdir(journal_root(environ))) == ["000001"]
    assert run("rollback")[0] == 0
    assert snapshot(home) == before_tree


def test_kill_after_rollback_committed_finishes_it(home, environ, run, interrupted):
    before_tree, _ = _switched(home, run)
    kill_run(environ, "forget", 1, "before", "rollback")
    # files are already back; only the clean-up (drop entries, remove created dirs) is missing
    assert agent_files(home) == {rel: before_tree.get(rel, (None,))[0] for rel in ORDER}
    assert (home / ".config" / "opencode").is_dir()
    assert interrupted() is True

    journal = Journal(environ)
    with journal.locked() as recovered:
        assert recovered == []
    assert snapshot(home) == before_tree
    assert os.listdir(journal_root(environ)) == []
    assert interrupted() is False
    with pytest.raises(AgentcfgError, match="nothing to roll back"), journal.locked():
        journal.rollback_plan(False)


# -- clean-up and ownership --------------------------------------------------------------------------


def test_kill_while_dropping_a_recovered_entry(home, environ, run):
    seed(home)
    before_tree = snapshot(home)
    kill_run(environ, "agent", 2, "after", "switch", "local", "--all")
    # the next switch restores the files, then is killed while deleting the recovered entry
    kill_run(environ, "drop", 1, "before", "switch", "local", "--all")
    assert snapshot(home) == before_tree  # the files were already restored

    with Journal(environ).locked():
        pass
    assert snapshot(home) == before_tree
    assert os.listdir(journal_root(environ)) == []
    assert run("switch", "local", "--all")[0] == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="agentcfg keeps owners only when it runs as root")
def test_crash_recovery_keeps_owner_as_root(home, environ):
    seed(home)
    codex = home / ".codex" / "config.toml"
    os.chown(codex, 1000, 1000)
    kill_run(environ, "agent", 2, "after", "switch", "local", "--all")
    assert (codex.stat().st_uid, codex.stat().st_gid) == (1000, 1000)  # the switch kept it
    with Journal(environ).locked():
        pass
    assert codex.read_bytes() == CODEX_TOML
    assert (codex.stat().st_uid, codex.stat().st_gid) == (1000, 1000)
