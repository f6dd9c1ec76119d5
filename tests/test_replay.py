"""agentcfg.replay: a `switch` or `status` with nothing new to say is answered from fingerprints, and never when
anything it would have read has changed.

`answers_again` asks the real lookup in a process started exactly as `home.run` starts agentcfg (same
environment, directory and standard streams), so it sees what the next `agentcfg` would see."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcfg import fingerprint, replay
from tests.conftest import Home

CODEX = ".codex/config.toml"
SWITCH = ("switch", "local", "--agent", "codex", "--agent", "qwen")


def answers_again(home: Home, *words: str, cwd: Path | None = None, **extra_env: str) -> bool:
    probe = "import os, sys; from agentcfg import replay; print(replay.lookup(sys.argv[1:], os.environ) is not None)"
    result = subprocess.run(
        [sys.executable, "-c", probe, *words],
        env={**home.env, **extra_env},
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip() == "True"


def records(home: Home) -> list[Path]:
    directory = home.root / ".config" / "agentcfg" / "state" / "replay"  # AGENTCFG_HOME/state
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


def settled(home: Home, *words: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """Switch, then the same switch again (nothing to change: recorded); the second run."""
    home.run(*words, **extra_env)
    again = home.run(*words, **extra_env)
    assert "nothing to change" in again.stdout
    assert answers_again(home, *words, **extra_env)
    return again


def test_a_no_change_switch_is_answered_again_with_the_same_output(home: Home) -> None:
    again = settled(home, *SWITCH)
    third = home.run(*SWITCH)
    assert (third.stdout, third.stderr, third.returncode) == (again.stdout, again.stderr, again.returncode)
    assert len(records(home)) == 1


def test_a_switch_that_writes_is_not_recorded(home: Home) -> None:
    home.run(*SWITCH)
    assert records(home) == []
    assert not answers_again(home, *SWITCH)


def test_status_and_its_json_are_answered_again_byte_for_byte(home: Home) -> None:
    home.run(*SWITCH)
    for words in (("status",), ("status", "--json")):
        first = home.run(*words)
        assert answers_again(home, *words)
        assert home.run(*words).stdout == first.stdout


@pytest.mark.parametrize(
    "change",
    [
        "same-size-rewrite-same-mtime",
        "rename-over-same-bytes",
        "hard-link",
        "touch",
        "chmod",
        "delete",
        "new-agent-file",
        "profile-edited",
        "agent-installed",
        "journal-entry",
    ],
)
def test_no_answer_after_any_change(home: Home, change: str) -> None:
    settled(home, *SWITCH)
    path = home.path(CODEX)
    text = path.read_bytes()
    st = os.stat(path)
    if change == "same-size-rewrite-same-mtime":  # within one timestamp tick, or the clock set back
        with open(path, "r+b") as file:
            file.write(text.replace(b"DeepSeek-V4-Flash", b"DeepSeek-V4-Flasx"))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert os.stat(path).st_size == st.st_size and os.stat(path).st_mtime_ns == st.st_mtime_ns
    elif change == "rename-over-same-bytes":
        other = path.with_name("x")
        other.write_bytes(text)
        os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(other, path)
    elif change == "hard-link":
        os.link(path, home.path("elsewhere.toml"))
    elif change == "touch":
        os.utime(path)
    elif change == "chmod":
        os.chmod(path, 0o644 if (st.st_mode & 0o777) != 0o644 else 0o640)
    elif change == "delete":
        path.unlink()
    elif change == "new-agent-file":  # qwen's settings appear in a place that was absent
        home.write(".qwen/settings.json.bak", "{}")
        home.path(".qwen/settings.json").unlink()
    elif change == "profile-edited":
        home.run("profile", "set", "local", "context_window=65536")
    elif change == "agent-installed":
        binary = Path(home.env["PATH"].split(os.pathsep)[0]) / "codex"
        binary.write_text("#!/bin/sh\necho codex-cli 0.171.0\n")
        binary.chmod(0o755)
    elif change == "journal-entry":
        home.run("switch", "local", "--agent", "opencode")
    assert not answers_again(home, *SWITCH)
    result = home.run(*SWITCH, check=None)
    if change in ("same-size-rewrite-same-mtime", "delete"):
        assert "nothing to change" not in result.stdout and home.path(CODEX).read_bytes() == text


def test_another_environment_directory_or_words_are_not_answered(home: Home, tmp_path: Path) -> None:
    settled(home, *SWITCH)
    assert not answers_again(home, *SWITCH, OPENAI_API_KEY="sk-other-0123456789")
    assert not answers_again(home, *SWITCH, cwd=tmp_path)
    assert not answers_again(home, "switch", "local", "--agent", "codex")


def test_a_project_profile_that_appears_is_seen(home: Home, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    home.run(*SWITCH, cwd=project)
    home.run(*SWITCH, cwd=project)
    assert answers_again(home, *SWITCH, cwd=project)
    (project / ".agentcfg" / "profiles").mkdir(parents=True)
    (project / ".agentcfg" / "profiles" / "local.toml").write_text('base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    assert not answers_again(home, *SWITCH, cwd=project)


def test_the_record_holds_no_key_and_is_private(home: Home) -> None:
    secret = "sk-live-0123456789abcdefghijklmnop"
    settled(home, *SWITCH, OPENAI_API_KEY=secret)
    [record] = records(home)
    assert secret not in record.read_text()
    assert (os.stat(record).st_mode & 0o777) == 0o600
    data = json.loads(record.read_text())
    # The environment is kept as a digest salted per record: not one that can be recomputed from a guess alone.
    assert data["situation"]["environ"] != fingerprint.digest(f"OPENAI_API_KEY={secret}")


def test_a_damaged_or_foreign_record_is_a_full_run(home: Home) -> None:
    again = settled(home, *SWITCH)
    [record] = records(home)
    text = record.read_text()
    for damaged in (
        "",
        "{",
        "[]",
        json.dumps({"version": 99}),
        text.replace('"code": 0', '"code": "x"'),
        text.replace('"code": 0', '"code": 70'),
        text.replace('"output": [[1,', '"output": [[7,'),
    ):
        record.write_text(damaged)
        assert not answers_again(home, *SWITCH)
        assert home.run(*SWITCH).stdout == again.stdout
        record.write_text(damaged)


def test_no_replay_turns_both_halves_off(home: Home) -> None:
    home.run(*SWITCH, AGENTCFG_NO_REPLAY="1")
    home.run(*SWITCH, AGENTCFG_NO_REPLAY="1")
    assert records(home) == []


def test_a_run_that_loads_keyring_is_not_recorded(home: Home, keyring_file: Path) -> None:
    words = ("switch", "taotoken", "--agent", "codex")
    home.run(*words, check=4)
    home.run(*words, check=4)  # the missing key is looked up in the keyring: not a file agentcfg can fingerprint
    assert not answers_again(home, *words)


def test_the_watch_sees_every_way_a_path_is_looked_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Path.exists, os.path.isfile, os.access, open, os.listdir, Path.iterdir and os.scandir each leave a
    fingerprint (what a later change to that path is compared with)."""
    monkeypatch.chdir(tmp_path)
    environ = {"AGENTCFG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    names = {n: tmp_path / n for n in ("exists", "isfile", "access", "open", "listdir", "iterdir", "scandir")}
    for name in ("open",):
        names[name].write_text("x")
    for name in ("listdir", "iterdir", "scandir"):
        names[name].mkdir()
    recorder = replay.Recorder.start(["status"], environ)
    assert recorder is not None
    try:
        names["exists"].exists()
        os.path.isfile(names["isfile"])
        os.access(names["access"], os.X_OK)
        names["open"].read_text()
        os.listdir(names["listdir"])
        list(names["iterdir"].iterdir())
        with os.scandir(names["scandir"]):
            pass
    finally:
        recorder.finish(1)  # not recorded: only what was seen is checked here
    seen = {(how, Path(path).name) for how, path in recorder.seen}
    assert {("stat", "exists"), ("stat", "isfile"), ("stat", "access"), ("read", "open")} <= seen
    assert {("list", "listdir"), ("list", "iterdir"), ("list", "scandir")} <= seen
    assert os.stat is fingerprint._stat and replay.Recorder.active is None


def test_a_working_directory_that_is_gone_is_the_full_runs_error(home: Home, tmp_path: Path) -> None:
    """A relative AGENTCFG_HOME and no working directory: the full run's one clear message, no traceback."""
    gone = tmp_path / "gone"
    gone.mkdir()
    from tests.conftest import AGENTCFG

    script = f'cd "{gone}" && rmdir "{gone}" && exec "{AGENTCFG}" status'
    result = subprocess.run(
        ["bash", "-c", script], env={**home.env, "AGENTCFG_HOME": "rel"}, capture_output=True, text=True
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "current directory no longer exists" in result.stderr


@pytest.mark.parametrize("words", [SWITCH, ("status",)])
def test_every_file_the_run_read_is_evidence(home: Home, words: tuple[str, ...]) -> None:
    """Each file under HOME the recorded run read (the agents', the journal's, the profiles'), one byte changed in
    place with its size and mtime kept: never answered."""
    home.write(".codex/config.toml", '# mine\nmodel = "gpt-5"\n[projects."/src/a"]\ntrust_level = "trusted"\n')
    home.run(*SWITCH)
    home.run(*words)
    [record] = [r for r in records(home) if json.loads(r.read_text())["situation"]["words"] == list(words)]
    read = [path for how, path, seen in json.loads(record.read_text())["paths"] if how == "read" and seen[0] == "s"]
    mine = [p for p in read if p.startswith(str(home.root))]
    assert any(p.endswith("config.toml") for p in mine) and any("journal" in p for p in mine)
    for path in mine:  # not agentcfg's own data files (built-in profiles, schemas): other tests read them meanwhile
        data = Path(path).read_bytes()
        if not data:
            continue
        st = os.stat(path)
        flipped = bytes([data[0] ^ 1]) + data[1:]
        try:
            Path(path).write_bytes(flipped)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            assert not answers_again(home, *words), path
        finally:
            Path(path).write_bytes(data)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_run_that_asks_whether_a_process_lives_is_not_recorded(tmp_path: Path, monkeypatch) -> None:
    """A route's router is alive or not by os.kill(pid, 0), which no fingerprint shows."""
    monkeypatch.chdir(tmp_path)
    recorder = replay.Recorder.start(["status"], {"AGENTCFG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)})
    assert recorder is not None
    try:
        os.kill(os.getpid(), 0)
    finally:
        recorder.finish(0)
    assert recorder.spoiled == "os.kill" and not list((tmp_path / "cfg" / "state" / "replay").iterdir())
