"""A stored key goes only to the hosts it was stored for (issue 13, item 3, keyring side; item 7, keys).

`key set` records the profile's origins in a second keyring entry (service "agentcfg-origins"); every
command that hands out a key checks them. The attack: a key stored for profile `work` at host A; `work`
is removed and a profile of the same name appears pointing at a host of someone else's choosing (here a
capture server on loopback, tests/fault_server.py, which records every request): key get / exec / env /
bench / doctor must never hand out or send the old key.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_keys_backends import FILE_KEYRING, NO_BUS, assert_clean_error, files_holding, run, set_key
from tests.conftest import AGENTCFG, Home
from tests.fault_server import FaultServer, dead_port

KEY = "sk-work-0123456789abcdef"
HOST_A = f"http://127.0.0.1:{dead_port()}/v1"  # where `work` was when its key was stored


def write_work(home: Home, base_url: str, key_env: str = "WORK_KEY", name: str = "work") -> None:
    """What `agentcfg profile add work --base-url ... --model m --key-env WORK_KEY` writes."""
    home.write(
        f".config/agentcfg/profiles/{name}.toml", f'base_url = "{base_url}"\nmodel = "m"\nkey_env = "{key_env}"\n'
    )


def entries(keyring_file: Path) -> dict[str, str]:
    return json.loads(keyring_file.read_text()) if keyring_file.exists() else {}


def key_users(home: Home, capture: FaultServer) -> list[subprocess.CompletedProcess]:
    """Every command that hands out or sends a profile's key, run against profile `work`."""
    return [
        run(home, "key", "get", "work", check=None),
        run(home, "exec", "work", "--", "sh", "-c", 'printf "%s" "$WORK_KEY"', check=None),
        run(home, "env", "work", "--shell", "bash", check=None),
        run(home, "bench", "work", "-n", "1", "--max-tokens", "4", "--json", check=None),
        run(home, "doctor", "work", "--json", "--timeout", "2", check=None),
        run(home, "switch", "work", "--all", "--store-key-in-files", check=None),
    ]


def assert_never_handed_out(
    home: Home, capture: FaultServer, results: list[subprocess.CompletedProcess], status: int = 2
) -> None:
    """`status`: what key get, exec and env exit with (2 refused; 4, Exit.NO_KEY, when no key is stored at all)."""
    for result in results:
        assert KEY not in result.stdout + result.stderr, (result.args, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert results[0].returncode == status and results[1].returncode == status and results[2].returncode == status
    assert results[3].returncode == 2  # bench stops before sending anything
    for method, path, headers, body in capture.requests:
        assert KEY not in json.dumps([method, path, headers, body]), (method, path, headers)
    assert files_holding(home.root, KEY) == []


# -- the attack: a removed profile's key and a new profile of the same name -----------------------------------


def test_profile_rm_removes_the_key_so_a_same_named_profile_elsewhere_never_gets_it(home, keyring_file):
    write_work(home, HOST_A)
    set_key(home, "work", KEY)
    removed = run(home, "profile", "rm", "work")
    assert "Removed the key for work" in removed.stdout, removed.stdout
    assert entries(keyring_file) == {}  # key and origins both gone
    with FaultServer() as capture:
        run(home, "profile", "add", "work", "--base-url", capture.base_url, "--model", "m", "--key-env", "WORK_KEY")
        results = key_users(home, capture)
        assert_never_handed_out(home, capture, results, status=4)  # no key stored for the new `work`: NO_KEY
    assert "no key stored for profile 'work'" in results[0].stderr


def test_profile_rm_keep_key_keeps_it_bound_to_the_old_host(home, keyring_file):
    write_work(home, HOST_A)
    set_key(home, "work", KEY)
    kept = run(home, "profile", "rm", "work", "--keep-key")
    assert "Kept the key for work" in kept.stdout and "http://loopback:" in kept.stdout, kept.stdout
    assert "agentcfg key rm work" in kept.stdout
    assert entries(keyring_file)["agentcfg/work"] == KEY
    with FaultServer() as capture:
        run(home, "profile", "add", "work", "--base-url", capture.base_url, "--model", "m", "--key-env", "WORK_KEY")
        results = key_users(home, capture)
        assert_never_handed_out(home, capture, results)
        assert_clean_error(results[0], "'work'", HOST_A.rsplit("/", 1)[0].replace("127.0.0.1", "loopback"))
        assert "agentcfg key bind work" in results[0].stderr
        assert f"http://loopback:{capture.port}" in results[0].stderr


def test_keep_key_binds_a_legacy_key_to_the_removed_profiles_host(home, keyring_file):
    """A key stored before keys were bound has no origins entry: --keep-key binds it on the way out."""
    write_work(home, HOST_A)
    keyring_file.write_text(json.dumps({"agentcfg/work": KEY}))
    run(home, "profile", "rm", "work", "--keep-key")
    assert json.loads(entries(keyring_file)["agentcfg-origins/work"]) == [
        HOST_A.removesuffix("/v1").replace("127.0.0.1", "loopback")
    ]
    with FaultServer() as capture:
        write_work(home, capture.base_url)
        assert_never_handed_out(home, capture, key_users(home, capture))


# -- a profile edited to another host -----------------------------------------------------------------------


def test_profile_moved_to_another_host_is_refused_until_key_bind(home, keyring_file):
    write_work(home, HOST_A)
    set_key(home, "work", KEY)
    with FaultServer() as capture:
        write_work(home, capture.base_url)
        results = key_users(home, capture)
        assert_never_handed_out(home, capture, results)
        for result in results[:4]:
            assert "agentcfg key bind work" in result.stderr, result.stderr

        bound = run(home, "key", "bind", "work")
        old, new = HOST_A.removesuffix("/v1").replace("127.0.0.1", "loopback"), f"http://loopback:{capture.port}"
        assert bound.stdout == f"Bound the key for work: {old} -> {new}\n", bound.stdout
        again = json.loads(run(home, "key", "bind", "work", "--json").stdout)
        assert again == {"profile": "work", "backend": FILE_KEYRING, "old": [new], "new": [new], "changed": False}
        assert run(home, "key", "get", "work").stdout == KEY + "\n"
        assert run(home, "exec", "work", "--", "sh", "-c", 'printf "%s" "$WORK_KEY"').stdout == KEY


def test_loopback_names_are_one_origin(home, keyring_file):
    write_work(home, "http://127.0.0.1:8000/v1")
    set_key(home, "work", KEY)
    write_work(home, "http://localhost:8000/v1")
    assert run(home, "key", "get", "work").stdout == KEY + "\n"


def test_key_bind_without_a_stored_key_says_how_to_store_one(home, keyring_file):
    write_work(home, HOST_A)
    assert_clean_error(run(home, "key", "bind", "work", check=2), "no key stored for profile 'work'", "key set work")


# -- keys stored before origins were recorded ---------------------------------------------------------------


def test_legacy_key_for_a_user_profile_works_and_gets_bound(home, keyring_file):
    write_work(home, HOST_A)
    keyring_file.write_text(json.dumps({"agentcfg/work": KEY}))
    assert run(home, "key", "get", "work").stdout == KEY + "\n"
    origin = HOST_A.removesuffix("/v1").replace("127.0.0.1", "loopback")
    assert json.loads(entries(keyring_file)["agentcfg-origins/work"]) == [origin]
    with FaultServer() as capture:  # bound now: moving the profile is refused
        write_work(home, capture.base_url)
        assert_never_handed_out(home, capture, key_users(home, capture))


def test_legacy_key_for_a_built_in_profile_works_and_gets_bound(home, keyring_file):
    keyring_file.write_text(json.dumps({"agentcfg/taotoken": KEY}))
    assert run(home, "key", "get", "taotoken").stdout == KEY + "\n"
    assert "agentcfg-origins/taotoken" in entries(keyring_file)


def test_legacy_key_is_refused_for_a_project_profile(home, keyring_file, tmp_path):
    project = tmp_path / "repo"
    (project / ".agentcfg" / "profiles").mkdir(parents=True)
    with FaultServer() as capture:
        (project / ".agentcfg" / "profiles" / "team.toml").write_text(
            f'base_url = "{capture.base_url}"\nmodel = "m"\nkey_env = "TEAM_KEY"\n'
        )
        keyring_file.write_text(json.dumps({"agentcfg/team": KEY}))  # e.g. left by a removed profile `team`
        trusted = subprocess.run([AGENTCFG, "trust"], env=home.env, cwd=project, capture_output=True, text=True)
        assert trusted.returncode == 0, trusted
        for args in (["key", "get", "team"], ["bench", "team", "-n", "1", "--max-tokens", "4"]):
            result = subprocess.run([AGENTCFG, *args], env=home.env, cwd=project, capture_output=True, text=True)
            assert_clean_error(result, "'team'", "project", "agentcfg key bind team")
            assert KEY not in result.stdout + result.stderr
        assert all(KEY not in json.dumps(r) for r in capture.requests)
    assert "agentcfg-origins/team" not in entries(keyring_file)


# -- key rm, key list ---------------------------------------------------------------------------------------


def test_key_rm_removes_the_origins_entry_too(home, keyring_file):
    write_work(home, HOST_A)
    set_key(home, "work", KEY)
    assert set(entries(keyring_file)) == {"agentcfg/work", "agentcfg-origins/work"}
    run(home, "key", "rm", "work")
    assert entries(keyring_file) == {}


def test_key_list_json_shows_the_bound_hosts(home, keyring_file):
    write_work(home, HOST_A)
    set_key(home, "work", KEY)
    rows = {r["profile"]: r for r in json.loads(run(home, "key", "list", "--json").stdout)["profiles"]}
    assert rows["work"]["bound_to"] == [HOST_A.removesuffix("/v1").replace("127.0.0.1", "loopback")]
    assert rows["taotoken"]["bound_to"] is None


# -- profile rm: what it says -------------------------------------------------------------------------------


def test_profile_rm_warns_naming_the_agents_that_still_point_at_it(home, keyring_file):
    write_work(home, HOST_A)
    run(home, "switch", "work", "--all", check=4)  # no key stored for work
    removed = run(home, "profile", "rm", "work")
    assert "still point at profile work" in removed.stderr, removed.stderr
    for agent in ("codex", "qwen", "opencode"):  # Claude Code needs an anthropic_base_url: not switched
        assert agent in removed.stderr
    assert "agentcfg switch" in removed.stderr
    assert not home.path(".config/agentcfg/profiles/work.toml").exists()


def test_profile_rm_without_a_keyring_still_removes_and_says_the_key_was_not_checked(home):
    write_work(home, HOST_A)
    removed = run(home, "profile", "rm", "work", **NO_BUS)
    assert "Removed profile work" in removed.stdout
    assert "could not check the keyring" in removed.stderr and "agentcfg key rm work" in removed.stderr
    assert not home.path(".config/agentcfg/profiles/work.toml").exists()


def test_profile_rm_of_a_keyless_profile_does_not_ask_the_keyring(home):
    home.write(".config/agentcfg/profiles/free.toml", 'base_url = "http://127.0.0.1:8000/v1"\nmodel = "m"\n')
    removed = run(home, "profile", "rm", "free", **NO_BUS)
    assert removed.stderr == "" and "Removed profile free" in removed.stdout


# -- values that cannot be a key ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reason"),
    [("sk-ключ-0123", "non-ASCII"), ("sk-\x01-0123", "control character"), ("sk-\x7f-0123", "control character")],
    ids=["non-ascii", "soh", "del"],
)
def test_key_set_refuses_non_ascii_and_control_characters(home, keyring_file, value, reason):
    write_work(home, HOST_A)
    result = run(home, "key", "set", "work", input=value + "\n", check=2)
    assert_clean_error(result, "not storing the key for work", reason)
    assert not keyring_file.exists()


@pytest.mark.parametrize("value", ["sk-ключ-0123", "sk-\x01-0123"], ids=["non-ascii", "control"])
def test_bench_with_an_exported_key_that_cannot_be_a_header_exits_2_naming_the_variable(home, keyring_file, value):
    with FaultServer() as capture:
        write_work(home, capture.base_url)
        result = run(home, "bench", "work", "-n", "1", "--max-tokens", "4", check=None, WORK_KEY=value)
        assert_clean_error(result, "WORK_KEY")
        assert capture.requests == []


def test_profile_rm_says_when_no_key_was_stored(home, keyring_file):
    write_work(home, HOST_A)
    removed = run(home, "profile", "rm", "work")
    assert f"No key for work was stored in the {FILE_KEYRING}." in removed.stdout
