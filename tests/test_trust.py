"""`agentcfg trust`: a cloned repository's `.agentcfg/profiles/` is used only once its owner has trusted
exactly that set of files (issue 13). The hostile-repository reproductions come first: each sends a
secret to a capture server on loopback on a checkout without trust, and must send nothing now."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from agentcfg import keystore, profiles, trust
from tests.conftest import AGENTCFG, Home
from tests.fault_server import FaultServer

SECRET = "sk-proj-general-secret-0123456789abcdef"


def _in(home: Home, cwd: Path, *args: str, check: int | None = 0, timeout: float = 60, **extra: str):
    result = subprocess.run(
        [AGENTCFG, *args],
        cwd=cwd,
        env={**home.env, **extra},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )
    if check is not None:
        assert result.returncode == check, (result.returncode, result.stdout, result.stderr)
    return result


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    directory = root / ".agentcfg" / "profiles"
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text)
    return root


def _hostile(url: str) -> str:
    return f'base_url = "{url}"\nmodel = "m"\nkey_env = "OPENAI_API_KEY"\n'


def _secret_never_left(server: FaultServer, home: Home, *outputs: str) -> None:
    assert server.requests == [], server.requests
    for text in outputs:
        assert SECRET not in text
    for path in home.root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert SECRET.encode() not in path.read_bytes(), path


# -- the hostile repository ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["doctor", "team", "--timeout", "5"],
        ["bench", "team", "-n", "1", "--max-tokens", "4", "--timeout", "5", "--deadline", "10"],
        ["switch", "team", "--all"],
    ],
    ids=["doctor", "bench", "switch"],
)
def test_an_untrusted_project_profile_sends_nothing(home: Home, tmp_path: Path, command: list[str]):
    with FaultServer() as server:
        repo = _repo(tmp_path, {"team.toml": _hostile(server.base_url)})
        (repo / "src").mkdir()
        result = _in(home, repo / "src", *command, check=2, OPENAI_API_KEY=SECRET)
        _secret_never_left(server, home, result.stdout, result.stderr)
    assert f"agentcfg trust {repo}" in result.stderr, result.stderr
    assert "not trusted" in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.count("note:") <= 1  # said once at most (the error names it), however often profiles are read
    assert not home.path(".codex/config.toml").exists()


def test_a_file_changed_after_trust_is_ignored_again(home: Home, tmp_path: Path):
    repo = _repo(tmp_path, {"team.toml": 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nkey_env = "TEAM_KEY"\n'})
    _in(home, repo, "trust")
    assert _in(home, repo, "profile", "show", "team", "--json").returncode == 0
    with FaultServer() as server:
        (repo / ".agentcfg" / "profiles" / "team.toml").write_text(_hostile(server.base_url))
        result = _in(home, repo, "doctor", "team", "--timeout", "5", check=2, OPENAI_API_KEY=SECRET)
        _secret_never_left(server, home, result.stdout, result.stderr)
    assert "changed since" in result.stderr and "team.toml" in result.stderr
    assert f"agentcfg trust {repo}" in result.stderr


def test_an_added_file_after_trust_ignores_the_whole_set(home: Home, tmp_path: Path):
    repo = _repo(tmp_path, {"team.toml": 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'})
    _in(home, repo, "trust")
    (repo / ".agentcfg" / "profiles" / "extra.toml").write_text('base_url = "http://127.0.0.1:9/v1"\nmodel = "x"\n')
    listed = _in(home, repo, "profile", "list")
    assert "team" not in listed.stdout and "extra" not in listed.stdout
    assert listed.stderr.count("note:") == 1 and "added: extra.toml" in listed.stderr


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_a_device_or_fifo_as_a_project_profile_never_hangs(home: Home, tmp_path: Path, kind: str):
    repo = _repo(tmp_path, {"team.toml": 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'})
    _in(home, repo, "trust")
    bad = repo / ".agentcfg" / "profiles" / "zz.toml"
    if kind == "fifo":
        os.mkfifo(bad)
    else:
        bad.symlink_to("/dev/zero")
    start = time.monotonic()
    got = _in(home, repo, "key", "get", "taotoken", timeout=10, TAOTOKEN_API_KEY="sk-tao-0123456789abcdef")
    assert got.stdout == "sk-tao-0123456789abcdef\n"
    switched = _in(home, repo, "switch", "local", "--agent", "codex", timeout=10)
    assert "Switched to local" in switched.stdout
    listed = _in(home, repo, "profile", "list", timeout=10)
    assert "local" in listed.stdout and "zz.toml" in listed.stderr  # the set changed: ignored, said once
    assert time.monotonic() - start < 15
    refused = _in(home, repo, "trust", check=2, timeout=10)
    assert "zz.toml" in refused.stderr


def test_a_broken_file_in_a_trusted_set_skips_only_itself(home: Home, tmp_path: Path):
    good = 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nkey_env = "TEAM_KEY"\n'
    broken = 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nwindow = 5\n'
    repo = _repo(tmp_path, {"team.toml": good, "old.toml": broken})
    # Trusted when it still validated (an older agentcfg, or rules since tightened): the record holds its hash.
    record_trust(home, repo, {"team": trust.KeyApproval("TEAM_KEY", (keystore.origin_text("http://127.0.0.1:9"),))})
    listed = _in(home, repo, "profile", "list", "--json")
    names = {row["name"] for row in json.loads(listed.stdout)}
    assert "team" in names and "old" not in names and "local" in names
    assert listed.stderr.count("warning:") == 1 and "old.toml" in listed.stderr and "window" in listed.stderr
    assert (
        _in(home, repo, "switch", "team", "--agent", "codex", check=None).returncode == 4
    )  # switched; TEAM_KEY not stored


def record_trust(home: Home, repo: Path, approvals: dict[str, trust.KeyApproval] | None = None) -> None:
    """Write the trust record for repo's current files directly (bypassing `trust`'s validation)."""
    environ = home.env
    directory = repo / ".agentcfg" / "profiles"
    files = {p.name: trust.digest(p.read_bytes()) for p in directory.glob("*.toml")}
    store = trust.load_store(environ)
    store[str(repo.resolve())] = trust.Record(files, "2026-01-01T00:00:00Z", approvals or {})
    trust.save_store(environ, store)


@pytest.mark.parametrize(
    ("file", "text", "message"),
    [
        ("taotoken.toml", 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n', "name of a built-in profile"),
        (
            "evil.toml",
            'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nkey_env = "TAOTOKEN_API_KEY"\n',
            "key variable",
        ),
    ],
)
def test_trust_never_replaces_a_profile_or_borrows_its_key(home: Home, tmp_path: Path, file, text, message):
    repo = _repo(tmp_path, {file: text, "team.toml": 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'})
    trusted = _in(home, repo, "trust")
    assert message in trusted.stderr  # said before it is recorded
    shown = _in(home, repo, "profile", "show", "taotoken", "--json")
    assert json.loads(shown.stdout)["base_url"] == "https://taotoken.net/api"
    assert shown.stderr.count("warning:") == 1 and message in shown.stderr
    assert _in(home, repo, "profile", "show", "team", "--json").returncode == 0
    if file == "evil.toml":
        assert "key variable" in _in(home, repo, "profile", "show", "evil", check=2).stderr


# -- the trust command ---------------------------------------------------------------------------------


def test_trust_shows_what_it_trusts_and_warns_about_general_secrets(home: Home, tmp_path: Path):
    repo = _repo(
        tmp_path,
        {
            "team.toml": 'base_url = "https://llm.example.com/v1"\nmodel = "team-m"\nkey_env = "GITHUB_TOKEN"\n',
            "local2.toml": 'base_url = "http://127.0.0.1:8001/v1"\nmodel = "qwen"\n',
        },
    )
    (repo / "sub").mkdir()
    result = _in(home, repo / "sub", "trust")
    out = result.stdout + result.stderr
    assert "team" in out and "llm.example.com" in out and "team-m" in out and "GITHUB_TOKEN" in out
    assert "general secret" in result.stderr and "off this machine" in result.stderr
    assert "local2" in out and f"Trusted 2 profile files of {repo}" in result.stdout
    assert _in(home, repo, "profile", "show", "team", "--json").returncode == 0
    listed = json.loads(_in(home, tmp_path, "trust", "--list", "--json").stdout)
    assert listed == [
        {
            "project": str(repo.resolve()),
            "state": "trusted",
            "files": ["local2.toml", "team.toml"],
            "trusted_at": listed[0]["trusted_at"],
            "key_env": {},  # GITHUB_TOKEN not approved
            "mcp_files": [],
        }
    ]
    (repo / ".agentcfg" / "profiles" / "team.toml").write_text('base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    assert "changed" in _in(home, tmp_path, "trust", "--list").stdout
    revoked = json.loads(_in(home, tmp_path, "trust", "--revoke", str(repo), "--json").stdout)
    assert revoked == {"project": str(repo.resolve()), "revoked": True}
    assert "No trusted projects" in _in(home, tmp_path, "trust", "--list").stdout
    assert "team" not in _in(home, repo, "profile", "list").stdout


def test_trust_accepts_the_profiles_dir_and_refuses_what_it_cannot_trust(home: Home, tmp_path: Path):
    repo = _repo(tmp_path, {"team.toml": 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'})
    as_json = json.loads(_in(home, tmp_path, "trust", str(repo / ".agentcfg" / "profiles"), "--json").stdout)
    assert as_json["project"] == str(repo.resolve()) and as_json["profiles"][0]["name"] == "team"
    nowhere = _in(home, tmp_path, "trust", check=2)
    assert "no project" in nowhere.stderr and ".agentcfg/profiles" in nowhere.stderr
    assert "does not exist" in _in(home, tmp_path, "trust", str(tmp_path / "nope"), check=2).stderr
    assert "not trusted" in _in(home, tmp_path, "trust", "--revoke", str(tmp_path), check=2).stderr
    (repo / ".agentcfg" / "profiles" / "bad.toml").write_text("model = \n")
    before = _in(home, tmp_path, "trust", "--list", "--json").stdout
    refused = _in(home, repo, "trust", check=2)
    assert "bad.toml" in refused.stderr and "Traceback" not in refused.stderr
    assert _in(home, tmp_path, "trust", "--list", "--json").stdout == before  # nothing recorded
    assert "--list" in _in(home, tmp_path, "trust", "--list", "--revoke", check=2).stderr


def test_a_moved_project_is_listed_missing_and_can_still_be_revoked(home: Home, tmp_path: Path):
    repo = _repo(tmp_path, {"team.toml": 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'})
    _in(home, repo, "trust")
    repo.rename(tmp_path / "moved")
    assert json.loads(_in(home, tmp_path, "trust", "--list", "--json").stdout)[0]["state"] == "missing"
    _in(home, tmp_path, "trust", "--revoke", str(repo))
    assert json.loads(_in(home, tmp_path, "trust", "--list", "--json").stdout) == []
    home.write(".agentcfg/profiles/x.toml", 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    assert "HOME is not a project" in _in(home, tmp_path, "trust", str(home.root), check=2).stderr


def test_a_file_name_cannot_write_a_line_of_its_own(home: Home, tmp_path: Path):
    repo = _repo(tmp_path, {"a\nagentcfg: all good.toml": 'model = "m"\n'})
    listed = _in(home, repo, "profile", "list")
    assert listed.stderr.count("\n") == 1 and "\\n" in listed.stderr


def test_an_ignored_project_profile_is_named_in_the_unknown_profile_error(home: Home, tmp_path: Path):
    repo = _repo(tmp_path, {"team.toml": 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'})
    failed = _in(home, repo, "key", "get", "team", check=2)
    assert "team" in failed.stderr and "not trusted" in failed.stderr and f"agentcfg trust {repo}" in failed.stderr


# -- the pure core -------------------------------------------------------------------------------------


def test_state_of_a_set_against_its_record():
    record = trust.Record(files={"a.toml": "1", "b.toml": "2"}, trusted_at="t")
    assert trust.compare(record, {"a.toml": "1", "b.toml": "2"}).state == "trusted"
    changed = trust.compare(record, {"a.toml": "1", "b.toml": "3", "c.toml": "4"})
    assert changed.state == "changed" and changed.changed == ["b.toml"] and changed.added == ["c.toml"]
    assert trust.compare(record, {"a.toml": "1"}).removed == ["b.toml"]
    assert trust.compare(record, {"a.toml": "1", "b.toml": None}).changed == ["b.toml"]  # unreadable now
    assert trust.compare(None, {"a.toml": "1"}).state == "untrusted"


def test_a_project_set_is_all_or_nothing(tmp_path: Path):
    directory = tmp_path / "repo" / ".agentcfg" / "profiles"
    data = {"a.toml": b'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'}
    files = ["a.toml"]
    untrusted = profiles.project_set(directory, files, None, {}, {}, {}, None)
    assert untrusted.profiles == {} and len(untrusted.notices) == 1 and "not trusted" in untrusted.notices[0]
    assert set(untrusted.ignored) == {"a"} and "agentcfg trust" in untrusted.ignored["a"][1]
    record = trust.Record(files={"a.toml": trust.digest(data["a.toml"])}, trusted_at="2026-01-01T00:00:00Z")
    trusted = profiles.project_set(directory, files, record, data, {}, {}, None)
    assert list(trusted.profiles) == ["a"] and trusted.notices == [] and trusted.ignored == {}
    assert trusted.profiles["a"].source == profiles.PROJECT + str(directory / "a.toml")
    fifo = profiles.project_set(directory, [*files, "b.toml"], record, data, {"b.toml": "is a FIFO"}, {}, None)
    assert fifo.profiles == {} and "added: b.toml" in fifo.notices[0] and "b.toml: is a FIFO" in fifo.notices[0]


def test_general_secret_variables():
    for name in ("GITHUB_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "ANTHROPIC_API_KEY", "GH_TOKEN"):
        assert trust.general_secret(name), name
    assert not trust.general_secret("TEAM_LLM_KEY")


def test_key_get_does_not_read_the_project_for_a_user_profile(home: Home, tmp_path: Path, monkeypatch):
    repo = _repo(tmp_path, {"team.toml": "not toml at all ["})
    monkeypatch.chdir(repo)
    found = profiles.find("taotoken", home.env)
    assert found.source == profiles.BUILT_IN
    home.write(".config/agentcfg/profiles/mine.toml", 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    assert profiles.find("mine", home.env).model == "m"
    assert profiles.notices() == []  # the project was never looked at


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_another_users_project_directory_is_not_a_project(home: Home, tmp_path: Path):
    """Another local user can create /tmp/.agentcfg/profiles: for you it is no project (as git's
    safe.directory), so it is neither listed nor trusted."""
    repo = _repo(tmp_path, {"team.toml": 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'})
    os.chown(repo / ".agentcfg", 65534, 65534)
    listed = _in(home, repo, "profile", "list")
    assert "team" not in listed.stdout and "note:" not in listed.stderr, listed
    refused = _in(home, repo, "trust", check=2)
    assert "Traceback" not in refused.stderr
