"""A full disk at every write step of a transaction: one clear error, files all-old or all-new, a true journal.

A recording run lists every call of a switch / rollback that can need free space (os.open with
O_CREAT of a new file, os.write, os.fsync, os.replace / os.rename, os.mkdir of a new directory)
under the test's HOME. Each case then fails the N-th of those calls with ENOSPC, either once
("once": the disk had a moment of trouble) or for good ("full": every later call fails too, as on
a disk that stays full), and checks:
  - the command ends with an AgentcfgError naming a path and saying what to free, or succeeds;
  - the agent files are all as before or all as after, unless the journal says the change was
    interrupted (a full disk can keep agentcfg from putting files back);
  - once space is back, the next command's recovery leaves them all-old or all-new, and the journal
    agrees: a committed entry exactly when the files are as after.
Linux only (fds are mapped to paths through /proc/self/fd).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import agentcfg.apply as apply_mod
from agentcfg import fsutil, profiles
from agentcfg.agents import AGENTS
from agentcfg.apply import Journal
from agentcfg.errors import AgentcfgError
from agentcfg.switch import plan_switch
from tests.bare_home import make_environ
from tests.test_crash import ORDER, seed

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="maps fds to paths via /proc")


class Disk:
    """Counts the space-needing calls under `root`; fails the `fail_at`-th (and later ones if `full`)."""

    def __init__(self, root: Path, fail_at: int | None = None, full: bool = False) -> None:
        self.root = os.path.realpath(root) + os.sep
        self.fail_at = fail_at
        self.full = full
        self.calls: list[tuple[str, str]] = []
        self.failed = 0

    def _count(self, name: str, path: str | None) -> bool:
        """Record the call; True when it must fail."""
        if path is None or not os.path.realpath(path).startswith(self.root):
            return False
        rel = os.path.relpath(os.path.realpath(path), self.root).replace(str(os.getpid()), "PID")
        self.calls.append((name, rel))
        n = len(self.calls)
        fail = self.fail_at is not None and (n == self.fail_at or (self.full and n > self.fail_at))
        self.failed += fail
        return fail

    @staticmethod
    def _fd_path(fd: int) -> str | None:
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        real = {name: getattr(os, name) for name in ("open", "write", "fsync", "replace", "rename", "mkdir")}

        def enospc(path: str | None = None) -> OSError:
            return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), *([path] if path else []))

        def open_(path, flags, mode=0o777, *args, **kwargs):
            if flags & os.O_CREAT and not os.path.lexists(path) and self._count("create", os.fspath(path)):
                raise enospc(os.fspath(path))
            return real["open"](path, flags, mode, *args, **kwargs)

        def by_fd(name: str) -> Callable:
            def call(fd, *args):
                if self._count(name, self._fd_path(fd)):
                    raise enospc()
                return real[name](fd, *args)

            return call

        def by_src(name: str) -> Callable:
            def call(src, dst, *args, **kwargs):
                if self._count(name, os.fspath(dst)):
                    raise enospc(os.fspath(src))
                return real[name](src, dst, *args, **kwargs)

            return call

        def mkdir(path, mode=0o777, *args, **kwargs):
            if not os.path.lexists(path) and self._count("mkdir", os.fspath(path)):
                raise enospc(os.fspath(path))
            return real["mkdir"](path, mode, *args, **kwargs)

        patched = {
            "open": open_,
            "write": by_fd("write"),
            "fsync": by_fd("fsync"),
            "replace": by_src("replace"),
            "rename": by_src("rename"),
            "mkdir": mkdir,
        }
        try:
            for name, function in patched.items():
                setattr(os, name, function)
            yield
        finally:
            for name, function in real.items():
                setattr(os, name, function)


# -- the three transactions --------------------------------------------------------------------------


def files(home: Path) -> dict[str, bytes | None]:
    return {rel: (home / rel).read_bytes() if (home / rel).exists() else None for rel in ORDER}


def _switch(environ: dict[str, str], name: str) -> None:
    plan = plan_switch(profiles.get(name, environ), list(AGENTS.values()), environ)
    journal = Journal(environ)
    with journal.locked():
        journal.commit(plan.changes, {"kind": "switch", "profile": name, "label": f"switch {name}"})


def _rollback(environ: dict[str, str]) -> None:
    journal = Journal(environ)
    with journal.locked():
        entry, changes, _ = journal.rollback_plan(False)
        journal.rollback(entry, changes)


def first_switch(environ, disk: Disk | None) -> None:
    with disk.active() if disk else contextlib.nullcontext():
        _switch(environ, "local")


def switch_and_prune(environ, disk: Disk | None) -> None:
    with disk.active() if disk else contextlib.nullcontext():
        _switch(environ, "taotoken")  # with MAX_ENTRIES 1: drops the entry of the switch to local


def rollback(environ, disk: Disk | None) -> None:
    with disk.active() if disk else contextlib.nullcontext():
        _rollback(environ)


SCENARIOS = {"first-switch": first_switch, "switch-and-prune": switch_and_prune, "rollback": rollback}


def prepare(scenario: str, home: Path, environ: dict[str, str]) -> None:
    seed(home)
    if scenario in ("switch-and-prune", "rollback"):
        _switch(environ, "local")


def profile_of_last_entry(environ) -> str | None:
    entries = Journal(environ).entries()
    return entries[-1].manifest["profile"] if entries else None


def record(scenario: str) -> list[tuple[str, str]]:
    """The space-needing calls the scenario makes, in order (collected once, at import)."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        environ = make_environ(home)
        prepare(scenario, home, environ)
        disk = Disk(home)
        saved = apply_mod.MAX_ENTRIES
        apply_mod.MAX_ENTRIES = 1
        try:
            SCENARIOS[scenario](environ, disk)
        finally:
            apply_mod.MAX_ENTRIES = saved
        return disk.calls


STEPS = {scenario: record(scenario) for scenario in SCENARIOS} if sys.platform.startswith("linux") else {}
CASES = [
    pytest.param(scenario, n, mode, id=f"{scenario}-{mode}-{n:02d}-{kind}-{rel}")
    for scenario, calls in STEPS.items()
    for n, (kind, rel) in enumerate(calls, start=1)
    for mode in ("once", "full")
]


def test_every_write_step_is_counted():
    """The recording sees the steps that matter: backups, copies, manifests, agent files, marker, prune."""
    first = [rel for _, rel in STEPS["first-switch"]]
    assert any(rel.endswith(".bak") for rel in first) and any(rel.endswith(".after") for rel in first)
    assert any(rel.endswith("committed.json") for rel in first)
    assert any(rel.startswith(".codex/") for rel in first)
    assert ("mkdir", ".config") in STEPS["first-switch"]
    assert any(kind == "replace" and "journal/000002" in rel for kind, rel in STEPS["switch-and-prune"])
    assert any(kind == "replace" and ".drop-000001" in rel for kind, rel in STEPS["switch-and-prune"])
    assert len(first) > 40


@pytest.mark.parametrize(("scenario", "n", "mode"), CASES)
def test_full_disk_at_every_step(tmp_path, monkeypatch, scenario, n, mode):
    home = tmp_path / "home"
    home.mkdir()
    environ = make_environ(home)
    prepare(scenario, home, environ)
    monkeypatch.setattr(apply_mod, "MAX_ENTRIES", 1)
    before = files(home)
    before_profile = profile_of_last_entry(environ)

    disk = Disk(home, fail_at=n, full=mode == "full")
    error: AgentcfgError | None = None
    try:
        SCENARIOS[scenario](environ, disk)
    except AgentcfgError as exc:  # anything else (OSError, KeyError...) fails the test: an internal error
        error = exc
    assert disk.failed >= 1, "the injected failure never happened: the recording is stale"

    # what the user is told
    if error is not None:
        assert error.where, str(error)
        assert "Free some space" in (error.hint or ""), str(error)
        assert "Traceback" not in str(error)

    # what is on disk right after, space still short
    with disk.active() if mode == "full" else contextlib.nullcontext():
        now = files(home)
    journal = Journal(environ)
    interrupted = [e for e in journal.pending() if e.manifest["status"] == "pending"]
    after = _reference_after(scenario, tmp_path)
    if error is None:
        assert now == after
    elif now != before:  # only a full disk can keep agentcfg from putting the files back; it must say so
        assert interrupted, "files changed, the command failed, and the journal does not say so"
        assert "could not put back" in str(error), str(error)
    else:  # nothing changed; a pending entry may remain (it could not be dropped): recovery finds nothing to do
        assert "could not put back" not in str(error)

    # space is back: the next command recovers; the files and the journal agree
    with journal.locked():
        pass
    final = files(home)
    assert final in (before, after)
    assert journal.pending() == []
    if scenario == "rollback":
        assert profile_of_last_entry(environ) == (None if final == after else before_profile)
    else:
        assert profile_of_last_entry(environ) == _profile(scenario, final == after)
    assert not list(home.rglob(f"*{fsutil.TMP_SUFFIX}"))
    assert not [p for p in journal.root.iterdir() if p.name.startswith(".")]


def _profile(scenario: str, switched: bool) -> str | None:
    if scenario == "first-switch":
        return "local" if switched else None
    return "taotoken" if switched else "local"


_AFTER: dict[str, dict[str, bytes | None]] = {}


def _reference_after(scenario: str, tmp_path: Path) -> dict[str, bytes | None]:
    """The files the scenario leaves when nothing fails (computed once per scenario and worker)."""
    if scenario not in _AFTER:
        home = tmp_path / "reference"
        home.mkdir()
        environ = make_environ(home)
        prepare(scenario, home, environ)
        SCENARIOS[scenario](environ, None)
        _AFTER[scenario] = files(home)
    return _AFTER[scenario]


def test_recovery_on_a_disk_still_full_says_so_and_keeps_the_entry(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    environ = make_environ(home)
    prepare("first-switch", home, environ)
    before = files(home)
    second_agent_write = next(
        n for n, (kind, rel) in enumerate(STEPS["first-switch"], 1) if kind == "create" and rel.startswith(".qwen/")
    )
    with pytest.raises(AgentcfgError, match=r"could not put back ~/\.codex/config\.toml"):
        first_switch(environ, Disk(home, fail_at=second_agent_write, full=True))
    assert files(home) != before
    with Disk(home, fail_at=1, full=True).active(), pytest.raises(AgentcfgError) as info:  # noqa: SIM117
        with Journal(environ).locked():
            pass
    assert "could not finish an interrupted switch (switch local)" in str(info.value)
    assert "the journal keeps the entry" in str(info.value)
    assert "Free some space" in (info.value.hint or "")
    assert [e.manifest["status"] for e in Journal(environ).pending()] == ["pending"]
    with Journal(environ).locked() as recovered:  # space is back
        assert recovered == ["recovered an interrupted switch (switch local): its files were restored"]
    assert files(home) == before


# -- a real full file system -------------------------------------------------------------------------

REAL_DISK = r"""
import json, os, shutil, subprocess, sys
from pathlib import Path

sys.path.insert(0, sys.argv[3])
from tests.test_crash import ORDER, seed

mnt, agentcfg = Path(sys.argv[1]), sys.argv[2]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", str(mnt)], check=True)
results = []
for free in range(0, 400, 8):  # KiB given back; tmpfs allocates by 4 KiB page
    home = mnt / "home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()
    env = {"HOME": str(home), "AGENTCFG_HOME": str(home / "agentcfg"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    seed(home)
    before = {rel: (home / rel).read_bytes() if (home / rel).exists() else None for rel in ORDER}
    ballast = mnt / "ballast"
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)  # fill the disk, then give back `free` KiB
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    os.truncate(ballast, max(0, os.path.getsize(ballast) - free * 1024))
    run = subprocess.run([agentcfg, "switch", "local", "--all"], env=env, capture_output=True, text=True)
    now = {rel: (home / rel).read_bytes() if (home / rel).exists() else None for rel in ORDER}
    status = subprocess.run([agentcfg, "status", "--json"], env=env, capture_output=True, text=True)
    ballast.unlink()  # space is back
    result = {
        "free": free, "code": run.returncode, "stderr": run.stderr, "unchanged": now == before,
        "all_new": all(now[r] is not None and now[r] != before[r] for r in ORDER),
        "status_code": status.returncode,
        "interrupted": json.loads(status.stdout)["interrupted"] if status.returncode == 0 else None,
    }
    if not result["unchanged"]:  # a rollback (recovering first) gets back to the start
        again = subprocess.run([agentcfg, "rollback"], env=env, capture_output=True, text=True)
        final = {rel: (home / rel).read_bytes() if (home / rel).exists() else None for rel in ORDER}
        result.update(rollback_code=again.returncode, rollback_err=again.stderr, back_to_start=final == before)
    results.append(result)
    if run.returncode == 0:
        break
print(json.dumps(results))
"""


def _can_mount_tmpfs() -> bool:
    import shutil
    import subprocess

    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt && umount /mnt"], capture_output=True
    )
    return probe.returncode == 0


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _can_mount_tmpfs(), reason="needs root and unshare -m")
def test_a_real_full_tmpfs(tmp_path):
    """The real thing: a 512 KiB tmpfs (in a private mount namespace) filled up, then 0, 1, 2... KiB
    given back until `switch local --all` fits. Every failure is one clear message, exit 2; the
    files stay as they were (or, once, the switch completes); the journal agrees afterwards."""
    import json
    import subprocess

    from tests.conftest import AGENTCFG, REPO

    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = subprocess.run(
        ["unshare", "-m", sys.executable, "-c", REAL_DISK, str(mnt), AGENTCFG, str(REPO)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert results[-1]["code"] == 0, "the switch never fitted"
    failures = results[:-1]
    assert len(failures) >= 3  # a range of free space that fails at different steps
    failed_at = {Path(r["stderr"].split(": ")[2]).name for r in failures}  # the file each run could not write
    assert len(failed_at) >= 3, failed_at
    for r in failures:
        assert r["code"] == 2, r
        assert "internal error" not in r["stderr"] and "Traceback" not in r["stderr"], r
        assert "No space left on device" in r["stderr"] and "Free some space" in r["stderr"], r
        assert r["status_code"] == 0, r
        if not r["unchanged"]:  # only when agentcfg could not put a file back, and then it says so
            assert "could not put back" in r["stderr"] and r["interrupted"] is True, r
            assert r["rollback_code"] == 0 and r["back_to_start"], r
            assert "internal error" not in r["rollback_err"], r
    last = results[-1]
    assert last["all_new"] and last["status_code"] == 0 and last["interrupted"] is False
    assert last["rollback_code"] == 0 and last["back_to_start"]
