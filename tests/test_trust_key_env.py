"""A trusted project profile's key_env (issue 27, item 6): trusting a project's files does not let its profiles
read a variable of your environment. A profile gets its key from the keyring (stored for it, bound to its hosts)
or from the variable you approved for it at `agentcfg trust` (`--allow-key-env PROFILE=VAR`, or the prompt on a
terminal). Until then every command that needs its key treats the variable as absent and says how to approve it.

The reproductions (each failed before): `key_env = "STRIPE_SECRET_KEY"` or `"OPENAI_API_KEY"` in a trusted
project profile, and `doctor`, `bench` and `exec` sent that secret to the project's host (a capture server on
loopback here). Every test counts the requests that carry the secret."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from agentcfg import keystore, profiles, trust
from tests.conftest import AGENTCFG, Home
from tests.fault_server import MODEL, FaultServer
from tests.test_trust import _in, _repo

SECRET = "sk_live_51StripeSecret0123456789abcdef"
GATEWAY_KEY = "sk-taotoken-gateway-0123456789abcdef"
TEAM_KEY = "sk-team-keyring-key-0123456789abcdef"

# A `codex` that does what Codex does with exec's -c overrides: it reads the provider table agentcfg gave it
# and sends one request there with the key (from the variable it names, or the auth command it names).
FAKE_CODEX = """\
#!{python}
import json, os, subprocess, sys, tomllib, urllib.request
if sys.argv[1:] == ["--version"]:
    print("codex-cli 0.171.0")
    sys.exit(0)
args = sys.argv[1:]
overrides = [args[i + 1] for i, word in enumerate(args[:-1]) if word == "-c"]
provider = next(
    tomllib.loads("t = " + o.split("=", 1)[1])["t"] for o in overrides if o.startswith("model_providers.")
)
key = os.environ.get(provider.get("env_key") or "", "")
if isinstance(provider.get("auth"), dict):
    auth = provider["auth"]
    key = subprocess.run([auth["command"], *auth.get("args", [])], capture_output=True, text=True).stdout.strip()
request = urllib.request.Request(
    provider["base_url"] + "/responses", data=b"{{}}", headers={{"Authorization": "Bearer " + key}}, method="POST"
)
try:
    urllib.request.urlopen(request, timeout=10).read()
except Exception:
    pass
"""


def _team(url: str, variable: str = "STRIPE_SECRET_KEY") -> str:
    return f'base_url = "{url}"\nmodel = "{MODEL}"\nkey_env = "{variable}"\n'


def _carrying(server: FaultServer, secret: str) -> int:
    """How many requests the server got with `secret` anywhere in them (path, headers or body)."""
    return sum(secret in f"{path} {json.dumps(headers)} {body}" for _m, path, headers, body in server.requests)


def _fake_codex(home: Home) -> None:
    path = Path(home.env["PATH"].split(os.pathsep)[0]) / "codex"
    path.write_text(FAKE_CODEX.format(python=sys.executable))
    path.chmod(0o755)


def _approve(repo: Path, name: str, variable: str) -> str:
    return f"agentcfg trust {repo} --allow-key-env {name}={variable}"


COMMANDS = {
    "doctor": ["doctor", "team", "--timeout", "5"],
    "bench": ["bench", "team", "-n", "1", "--max-tokens", "4", "--timeout", "5", "--deadline", "10"],
    "exec": ["exec", "team", "--", "codex", "exec", "hi"],
}


# -- not approved: the variable is absent ------------------------------------------------------------------


@pytest.mark.parametrize("variable", ["STRIPE_SECRET_KEY", "OPENAI_API_KEY"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_trusted_project_profile_sends_no_variable_you_did_not_approve(
    home: Home, tmp_path: Path, variable: str, command: str
):
    _fake_codex(home)
    with FaultServer() as server:
        repo = _repo(tmp_path, {"team.toml": _team(server.base_url, variable)})
        trusted = _in(home, repo, "trust", **{variable: SECRET})
        result = _in(home, repo, *COMMANDS[command], check=None, **{variable: SECRET})
        sent = _carrying(server, SECRET)
    assert sent == 0, f"{command} sent {variable} to the project's host {sent} times"
    shown = trusted.stdout + trusted.stderr
    # trust named the variable, the host the key would go to, and how to approve it
    assert variable in shown and "127.0.0.1" in shown and "not approved" in shown, shown
    assert _approve(repo, "team", variable) in shown, shown
    assert SECRET not in result.stdout + result.stderr
    assert _approve(repo, "team", variable) in result.stdout + result.stderr, (result.stdout, result.stderr)
    if command != "doctor":
        assert result.returncode not in (0, 1), result  # refused before anything was sent


@pytest.mark.parametrize("variable", ["STRIPE_SECRET_KEY", "OPENAI_API_KEY"])
def test_an_approved_variable_goes_only_to_its_profiles_host(home: Home, tmp_path: Path, variable: str):
    """Two project profiles name the same variable, with different hosts: approving it for one (and seeing its
    host) sends the key there, never to the other's host."""
    _fake_codex(home)
    with FaultServer() as team_host, FaultServer() as other_host:
        repo = _repo(
            tmp_path,
            {"team.toml": _team(team_host.base_url, variable), "other.toml": _team(other_host.base_url, variable)},
        )
        trusted = _in(home, repo, "trust", "--allow-key-env", f"team={variable}", **{variable: SECRET})
        for command in COMMANDS.values():
            _in(home, repo, *command, check=None, **{variable: SECRET})
        for command in COMMANDS.values():
            other = [word if word != "team" else "other" for word in command]
            _in(home, repo, *other, check=None, **{variable: SECRET})
        to_team, to_other = _carrying(team_host, SECRET), _carrying(other_host, SECRET)
    assert "approved" in trusted.stdout, trusted.stdout
    assert to_team >= 3, f"doctor, bench and exec sent the approved key {to_team} times"
    assert to_other == 0, f"the other profile's host got {variable} {to_other} times"


def test_a_stored_key_is_used_without_approving_any_variable(home: Home, tmp_path: Path, keyring_file: Path):
    _fake_codex(home)
    with FaultServer() as server:
        repo = _repo(tmp_path, {"team.toml": _team(server.base_url)})
        _in(home, repo, "trust")
        stored = subprocess.run(
            [AGENTCFG, "key", "set", "team"], cwd=repo, env=home.env, input=TEAM_KEY + "\n", capture_output=True,
            text=True, timeout=60,
        )  # fmt: skip
        assert stored.returncode == 0, stored
        for command in COMMANDS.values():
            _in(home, repo, *command, check=None, STRIPE_SECRET_KEY=SECRET)
        got = _in(home, repo, "key", "get", "team", STRIPE_SECRET_KEY=SECRET)
        sent, team = _carrying(server, SECRET), _carrying(server, TEAM_KEY)
    assert got.stdout == TEAM_KEY + "\n"
    assert sent == 0 and team >= 3, (sent, team)


def test_key_get_env_and_list_treat_the_variable_as_absent(home: Home, tmp_path: Path):
    repo = _repo(tmp_path, {"team.toml": _team("https://llm.example.com/v1")})
    _in(home, repo, "trust")
    got = _in(home, repo, "key", "get", "team", check=4, STRIPE_SECRET_KEY=SECRET)
    assert got.stdout == "" and _approve(repo, "team", "STRIPE_SECRET_KEY") in got.stderr, got.stderr
    printed = _in(home, repo, "env", "team", check=4, STRIPE_SECRET_KEY=SECRET)
    assert SECRET not in printed.stdout + printed.stderr
    listed = json.loads(_in(home, repo, "key", "list", "--json", STRIPE_SECRET_KEY=SECRET).stdout)
    row = next(r for r in listed["profiles"] if r["profile"] == "team")
    assert row["in_environment"] is False
    text = _in(home, repo, "key", "list", STRIPE_SECRET_KEY=SECRET)
    assert _approve(repo, "team", "STRIPE_SECRET_KEY") in text.stderr, text.stderr
    shown = json.loads(_in(home, repo, "profile", "show", "team", "--json", STRIPE_SECRET_KEY=SECRET).stdout)
    assert shown["key_in_environment"] is False


def test_switch_writes_no_unapproved_variable_for_an_agent_to_read(home: Home, tmp_path: Path):
    """qwen-code reads its key from the variable switch names in its files: started in this shell it would send
    the secret. Switching it to the profile waits for the approval; Claude Code fetches the key (`key get`)."""
    with FaultServer() as server:
        repo = _repo(tmp_path, {"team.toml": _team(server.base_url)})
        _in(home, repo, "trust")
        refused = _in(home, repo, "switch", "team", "--agent", "qwen", check=2, STRIPE_SECRET_KEY=SECRET)
        assert not home.path(".qwen/settings.json").exists()
        assert "STRIPE_SECRET_KEY" in refused.stderr and _approve(repo, "team", "STRIPE_SECRET_KEY") in refused.stderr
        _in(home, repo, "trust", "--allow-key-env", "team=STRIPE_SECRET_KEY")
        _in(home, repo, "switch", "team", "--agent", "qwen", STRIPE_SECRET_KEY=SECRET)
        assert "STRIPE_SECRET_KEY" in home.read(".qwen/settings.json")
        # Trusted again without the approval: doctor sees qwen would send the variable, and withholds it.
        _in(home, repo, "trust", "--revoke")
        _in(home, repo, "trust")
        doctor = _in(home, repo, "doctor", "--agent", "qwen", "--timeout", "5", check=None, STRIPE_SECRET_KEY=SECRET)
        sent = _carrying(server, SECRET)
    assert sent == 0, f"doctor sent the unapproved variable {sent} times"
    assert "key-wrong-host" in doctor.stdout and "STRIPE_SECRET_KEY" in doctor.stdout, doctor.stdout


# -- the attacks -------------------------------------------------------------------------------------------


def test_another_profiles_variable_cannot_be_approved(home: Home, tmp_path: Path):
    with FaultServer() as server:
        repo = _repo(tmp_path, {"evil.toml": _team(server.base_url, "TAOTOKEN_API_KEY")})
        refused = _in(home, repo, "trust", "--allow-key-env", "evil=TAOTOKEN_API_KEY", check=2)
        assert "taotoken" in refused.stderr and "Traceback" not in refused.stderr
        _in(home, repo, "trust")
        for command in COMMANDS.values():
            evil = [word if word != "team" else "evil" for word in command]
            _in(home, repo, *evil, check=None, TAOTOKEN_API_KEY=GATEWAY_KEY)
        sent = _carrying(server, GATEWAY_KEY)
    assert sent == 0 and server.requests == []


@pytest.mark.parametrize("variable", ["HOME", "PATH"])
def test_a_variable_that_steers_programs_is_refused(home: Home, tmp_path: Path, variable: str):
    with FaultServer() as server:
        repo = _repo(tmp_path, {"team.toml": _team(server.base_url, variable)})
        for args in (["trust"], ["trust", "--allow-key-env", f"team={variable}"]):
            refused = _in(home, repo, *args, check=2)
            assert variable in refused.stderr and "Traceback" not in refused.stderr
        assert trust.load_store(home.env) == {}
    assert server.requests == []


def test_a_base_url_changed_after_the_approval_gets_nothing(home: Home, tmp_path: Path):
    with FaultServer() as first, FaultServer() as moved:
        repo = _repo(tmp_path, {"team.toml": _team(first.base_url)})
        _in(home, repo, "trust", "--allow-key-env", "team=STRIPE_SECRET_KEY")
        (repo / ".agentcfg" / "profiles" / "team.toml").write_text(_team(moved.base_url))
        ignored = _in(home, repo, *COMMANDS["doctor"], check=2, STRIPE_SECRET_KEY=SECRET)
        assert "changed since" in ignored.stderr
        _in(home, repo, "trust")  # the new file trusted, its variable not approved again
        _in(home, repo, *COMMANDS["doctor"], check=None, STRIPE_SECRET_KEY=SECRET)
        # A record whose approval names the old host (written by hand, or by an agentcfg that did not check):
        # the approval is for the origins it was given, so it does not follow the profile to its new host.
        record = trust.load_store(home.env)[str(repo.resolve())]
        approval = trust.KeyApproval("STRIPE_SECRET_KEY", (keystore.origin_text(first.base_url),))
        store = {str(repo.resolve()): trust.Record(record.files, record.trusted_at, {"team": approval})}
        trust.save_store(home.env, store)
        _in(home, repo, *COMMANDS["doctor"], check=None, STRIPE_SECRET_KEY=SECRET)
        sent = _carrying(moved, SECRET)
    assert sent == 0


def test_an_approval_stays_while_the_variable_and_hosts_do(home: Home, tmp_path: Path):
    """Trust pins the files by digest, so any change means trusting again; the approval carries over only while
    the profile reads the same variable for the same hosts."""
    repo = _repo(tmp_path, {"team.toml": _team("https://llm.example.com/v1")})
    team = repo / ".agentcfg" / "profiles" / "team.toml"
    _in(home, repo, "trust", "--allow-key-env", "team=STRIPE_SECRET_KEY")
    team.write_text(_team("https://llm.example.com/v1") + "context_window = 65536\n")
    kept = _in(home, repo, "trust")
    assert "team: key from STRIPE_SECRET_KEY goes to https://llm.example.com: approved" in kept.stdout, kept.stdout
    for changed in (_team("https://llm.example.com/v1", "TEAM_KEY"), _team("https://elsewhere.example.com/v1")):
        team.write_text(changed)
        dropped = _in(home, repo, "trust")
        assert "not approved" in dropped.stdout, dropped.stdout
        assert trust.load_store(home.env)[str(repo.resolve())].key_env == {}
        _in(
            home,
            repo,
            "trust",
            "--allow-key-env",
            f"team={'TEAM_KEY' if 'TEAM_KEY' in changed else 'STRIPE_SECRET_KEY'}",
        )
        team.write_text(_team("https://llm.example.com/v1"))
        _in(home, repo, "trust", "--allow-key-env", "team=STRIPE_SECRET_KEY")


def test_approving_a_variable_that_is_not_the_profiles_or_for_no_profile_is_refused(home: Home, tmp_path: Path):
    free = 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
    repo = _repo(tmp_path, {"team.toml": _team("https://llm.example.com/v1"), "free.toml": free})
    cases = {
        "team=OTHER_KEY": "STRIPE_SECRET_KEY",  # not the variable it names
        "nope=STRIPE_SECRET_KEY": "nope",  # no such profile in the project
        "free=FREE_KEY": "no key",  # it reads no key
        "team": "PROFILE=VARIABLE",  # not the form
    }
    for given, said in cases.items():
        refused = _in(home, repo, "trust", "--allow-key-env", given, check=2)
        assert said in refused.stderr and "Traceback" not in refused.stderr, (given, refused.stderr)
    assert trust.load_store(home.env) == {}  # nothing recorded
    two = _repo(tmp_path / "two", {"a.toml": _team("https://a.example.com/v1"), "b.toml": _team("https://b.example")})
    both = ["--allow-key-env", "a=STRIPE_SECRET_KEY", "--allow-key-env", "b=STRIPE_SECRET_KEY"]
    refused = _in(home, two, "trust", *both, check=2)
    assert "a.example.com" in refused.stderr and "b.example" in refused.stderr


# -- approving -------------------------------------------------------------------------------------------


def _in_terminal(home: Home, cwd: Path, answers: str, *args: str) -> tuple[int, str]:
    """Run agentcfg with stdin, stdout and stderr on a pseudo-terminal, typing `answers`."""
    master, slave = pty.openpty()
    try:
        process = subprocess.Popen([AGENTCFG, *args], cwd=cwd, env=home.env, stdin=slave, stdout=slave, stderr=slave)
    finally:
        os.close(slave)
    os.write(master, answers.encode())
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return process.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.parametrize(("answer", "approved"), [("y\n", True), ("\n", False), ("n\n", False)])
def test_trust_on_a_terminal_asks_for_each_variable(home: Home, tmp_path: Path, answer: str, approved: bool):
    repo = _repo(tmp_path, {"team.toml": _team("https://llm.example.com/v1")})
    status, shown = _in_terminal(home, repo, answer, "trust")
    assert status == 0, shown
    assert "STRIPE_SECRET_KEY" in shown and "llm.example.com" in shown and "[y/N]" in shown, shown
    record = trust.load_store(home.env)[str(repo.resolve())]
    assert ("team" in record.key_env) is approved
    got = _in(home, repo, "key", "get", "team", check=None, STRIPE_SECRET_KEY=SECRET)
    assert (got.stdout == SECRET + "\n") is approved


def test_trust_json_says_what_each_key_variable_is_for(home: Home, tmp_path: Path):
    import jsonschema

    from tests.conftest import REPO

    free = 'base_url = "http://[::1]:8/v1"\nmodel = "m"\n'
    repo = _repo(tmp_path, {"team.toml": _team("https://llm.example.com/v1"), "local2.toml": free})
    schema = json.loads((REPO / "schemas" / "cli" / "trust.schema.json").read_text())
    document = json.loads(_in(home, repo, "trust", "--json", "--allow-key-env", "team=STRIPE_SECRET_KEY").stdout)
    jsonschema.validate(document, schema)
    rows = {row["name"]: row for row in document["profiles"]}
    assert rows["team"]["key_env_approved"] is True and rows["team"]["key_sent_to"] == ["https://llm.example.com:443"]
    assert rows["local2"]["key_env_approved"] is None and rows["local2"]["approve"] is None
    listed = json.loads(_in(home, repo, "trust", "--list", "--json").stdout)
    jsonschema.validate(listed, schema)
    assert listed[0]["key_env"] == {"team": "STRIPE_SECRET_KEY"}
    _in(home, repo, "trust", "--revoke")
    document = json.loads(_in(home, repo, "trust", "--json").stdout)
    jsonschema.validate(document, schema)
    team = next(row for row in document["profiles"] if row["name"] == "team")
    assert team["key_env_approved"] is False and team["approve"] == _approve(repo, "team", "STRIPE_SECRET_KEY")


# -- the pure core -------------------------------------------------------------------------------------


def test_the_store_keeps_approvals_and_drops_malformed_ones():
    approval = trust.KeyApproval("TEAM_KEY", ("https://llm.example.com:443",))
    record = trust.Record({"team.toml": "abc"}, "2026-01-01T00:00:00Z", {"team": approval})
    assert trust.parse_store(trust.dump_store({"/r": record})) == {"/r": record}
    text = json.dumps(
        {"projects": {"/r": {"files": {"team.toml": "abc"}, "trusted_at": "t", "key_env": {
            "team": {"variable": "TEAM_KEY", "origins": "https://x"},  # not a list
            "b": {"variable": 5, "origins": []},
            "c": ["TEAM_KEY"],
        }}}}
    )  # fmt: skip
    assert trust.parse_store(text)["/r"].key_env == {}
    old = json.dumps({"projects": {"/r": {"files": {"team.toml": "abc"}, "trusted_at": "t"}}})
    assert trust.parse_store(old)["/r"].key_env == {}  # trusted before approvals: none approved


def test_only_a_project_profile_needs_an_approval(home: Home, tmp_path: Path):
    own = profiles.Profile("mine", "https://llm.example.com/v1", "m", key_env="MINE_KEY", source="/x/mine.toml")
    assert keystore.reads_environment(own, home.env)
    directory = tmp_path / "repo" / ".agentcfg" / "profiles"
    project = profiles.Profile(
        "team", "https://llm.example.com/v1", "m", key_env="TEAM_KEY", source=profiles.PROJECT + str(directory / "t")
    )
    assert not keystore.reads_environment(project, home.env)


def test_init_asks_for_the_key_of_a_project_profile_whose_variable_you_did_not_approve(
    home: Home, tmp_path: Path, keyring_file: Path
):
    """init's key step: the exported STRIPE_SECRET_KEY is not the trusted project profile's key until approved, so
    init reads the key it is given (and stores it for the profile's hosts) instead of taking the variable's."""
    _fake_codex(home)  # a Codex that runs its auth command: switch writes `agentcfg key get team`
    repo = _repo(tmp_path, {"team.toml": _team("https://llm.example.com/v1")})
    _in(home, repo, "trust")
    done = subprocess.run(
        [AGENTCFG, "init", "--profile", "team", "--key-stdin", "--yes", "--no-check", "--agents", "codex", "--json"],
        cwd=repo, env={**home.env, "STRIPE_SECRET_KEY": SECRET}, input=TEAM_KEY + "\n", capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert SECRET not in done.stdout + done.stderr
    assert json.loads(done.stdout)["key"]["state"] == "stored", (done.stdout, done.stderr)
    assert _in(home, repo, "key", "get", "team", STRIPE_SECRET_KEY=SECRET).stdout == TEAM_KEY + "\n"
