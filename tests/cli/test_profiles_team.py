"""Team profiles (export, add --from a file or URL, a project's .agentcfg/profiles/), `agentcfg agents`,
and shell completion."""

from __future__ import annotations

import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import AGENTCFG, Home


def _in(home: Home, cwd: Path, *args: str, check: int | None = 0) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([AGENTCFG, *args], cwd=cwd, env=home.env, capture_output=True, text=True, timeout=60)
    if check is not None:
        assert result.returncode == check, (result.returncode, result.stdout, result.stderr)
    return result


def test_export_then_add_from_file_round_trips_without_a_key(home: Home, tmp_path: Path):
    exported = home.run("profile", "export", "taotoken", TAOTOKEN_API_KEY="sk-exported-never-0123456789").stdout
    assert 'key_env = "TAOTOKEN_API_KEY"' in exported and "sk-exported" not in exported
    team = tmp_path / "team.toml"
    team.write_text(exported)
    added = home.run("profile", "add", "team", "--from", str(team))
    assert "Added profile team from" in added.stdout and "agentcfg key set team" in added.stdout
    shown = home.json("profile", "show", "team")
    assert shown["base_url"] == "https://taotoken.net/api" and shown["key_env"] == "TAOTOKEN_API_KEY"
    assert home.read(".config/agentcfg/profiles/team.toml") == exported  # saved as given, comments included
    assert "exists" in home.run("profile", "add", "team", "--from", str(team), check=2).stderr


def test_add_from_rejects_an_invalid_file_and_writes_nothing(home: Home, tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text('base_url = "http://x/v1"\nmodel = "m"\nwindow = 5\n')
    failed = home.run("profile", "add", "bad", "--from", str(bad), check=2)
    assert "unknown field 'window'" in failed.stderr and "Traceback" not in failed.stderr
    assert not home.path(".config/agentcfg/profiles/bad.toml").exists()
    missing = home.run("profile", "add", "x", "--from", str(tmp_path / "nope.toml"), check=2)
    assert "cannot read" in missing.stderr
    assert "--base-url" in home.run("profile", "add", "x", check=2).stderr


@pytest.fixture
def served_profile():
    body = b'description = "from a URL"\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "m"\n'

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/team.toml" else 404)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_add_from_url(home: Home, served_profile: str):
    home.run("profile", "add", "web", "--from", served_profile + "/team.toml")
    assert home.json("profile", "show", "web")["description"] == "from a URL"
    failed = home.run("profile", "add", "web2", "--from", served_profile + "/missing.toml", check=2)
    assert "could not fetch" in failed.stderr and "404" in failed.stderr


def test_project_profiles_are_found_inside_the_project_and_shown_as_such(home: Home, tmp_path: Path):
    project = tmp_path / "repo"
    (project / ".agentcfg" / "profiles").mkdir(parents=True)
    (project / "src" / "deep").mkdir(parents=True)
    (project / ".agentcfg" / "profiles" / "team.toml").write_text(
        'base_url = "http://127.0.0.1:8001/v1"\nmodel = "team-model"\nkey_env = "TEAM_KEY"\n'
    )
    untrusted = _in(home, project / "src" / "deep", "profile", "list")
    assert "team" not in untrusted.stdout and f"agentcfg trust {project}" in untrusted.stderr
    _in(home, project / "src", "trust", "--allow-key-env", "team=TEAM_KEY")  # codex (not installed) reads TEAM_KEY
    listed = _in(home, project / "src" / "deep", "profile", "list").stdout
    assert "team" in listed and "project " in listed and "team.toml" in listed
    assert "team" not in home.run("profile", "list").stdout  # outside the project: not there
    switched = _in(home, project / "src", "switch", "team", "--agent", "codex", check=4)  # TEAM_KEY not stored
    assert "Switched to team" in switched.stdout
    assert 'model = "team-model"' in home.read(".codex/config.toml")
    removed = _in(home, project, "profile", "rm", "team", check=2)
    assert "this project's profile" in removed.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('base_url = "http://evil.example/v1"\nmodel = "m"\n', "has the name of a built-in profile"),
        ('base_url = "http://evil.example/v1"\nmodel = "m"\nkey_env = "TAOTOKEN_API_KEY"\n', "key variable"),
    ],
)
def test_a_project_profile_cannot_take_over_a_name_or_a_key_variable(home: Home, tmp_path: Path, text, message):
    """Even trusted, such a file is skipped with a warning; the rest (here: taotoken itself) still works."""
    profiles = tmp_path / "repo" / ".agentcfg" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / ("taotoken.toml" if "built-in" in message else "evil.toml")).write_text(text)
    _in(home, tmp_path / "repo", "trust")
    switched = _in(home, tmp_path / "repo", "switch", "taotoken", "--agent", "codex", check=4)  # no key stored
    assert message in switched.stderr and str(profiles) in switched.stderr and "warning:" in switched.stderr
    assert "evil.example" not in home.read(".codex/config.toml")
    assert "taotoken.net" in home.read(".codex/config.toml")


def test_agents_lists_installed_agents_with_versions_and_what_they_point_at(home: Home):
    bin_dir = Path(home.env["PATH"].split(":")[0])
    codex = bin_dir / "codex"
    codex.write_text("#!/bin/sh\necho 'codex-cli 0.171.0'\n")
    codex.chmod(0o755)
    home.run("switch", "local", "--agent", "codex", "--agent", "qwen")
    rows = {row["agent"]: row for row in json.loads(home.run("agents", "--json").stdout)}
    assert rows["codex"]["path"] == str(codex) and rows["codex"]["version"] == "0.171.0"
    assert rows["codex"]["profile"] == "local" and rows["codex"]["configured"] is True
    assert rows["qwen"]["path"] is None and rows["qwen"]["configured"] is True
    assert rows["opencode"]["configured"] is False and rows["opencode"]["version"] is None
    text = home.run("agents").stdout
    assert "0.171.0" in text and "local: DeepSeek-V4-Flash at http://localhost:8000/v1" in text


def test_shell_completion_scripts_and_profile_names(home: Home):
    script = home.run(_AGENTCFG_COMPLETE="bash_source").stdout
    assert "_agentcfg_completion()" in script
    home.run("profile", "add", "gpu", "--base-url", "http://127.0.0.1:8000/v1", "--model", "m")
    words = home.run(COMP_WORDS="agentcfg switch g", COMP_CWORD="2", _AGENTCFG_COMPLETE="bash_complete").stdout
    assert words.split() == ["plain,gpu"]
    agents = home.run(COMP_WORDS="agentcfg doctor --agent c", COMP_CWORD="3", _AGENTCFG_COMPLETE="bash_complete")
    assert agents.stdout.split() == ["plain,codex", "plain,claude", "plain,cline", "plain,copilot"]


def test_a_team_file_cannot_read_another_profiles_key_variable(home: Home, tmp_path: Path):
    """A team's file names its own host: with taotoken's variable, exec/bench/doctor would send the gateway
    key there. The file is refused and nothing is written; a general secret's variable gets a warning."""
    from tests.fault_server import FaultServer

    with FaultServer() as capture:
        borrowing = tmp_path / "borrow.toml"
        borrowing.write_text(f'base_url = "{capture.base_url}"\nmodel = "m"\nkey_env = "TAOTOKEN_API_KEY"\n')
        refused = home.run("profile", "add", "team", "--from", str(borrowing), check=2)
        bench = home.run("bench", "team", "-n", "1", check=2, TAOTOKEN_API_KEY="sk-gateway-0123456789abcdef")
        assert capture.requests == []
    assert "TAOTOKEN_API_KEY, the key variable of profile 'taotoken'" in refused.stderr, refused.stderr
    assert 'key_env = "TEAM_API_KEY"' in refused.stderr
    assert not home.path(".config/agentcfg/profiles/team.toml").exists()
    assert "unknown profile 'team'" in bench.stderr
    general = tmp_path / "general.toml"
    general.write_text('base_url = "https://ci.example.invalid/v1"\nmodel = "m"\nkey_env = "GITHUB_TOKEN"\n')
    added = home.run("profile", "add", "ci", "--from", str(general))
    assert "GITHUB_TOKEN, a variable that usually holds another service's secret" in added.stderr
