"""`doctor` (agentcfg/cli/doctor.py): its exit statuses, each meaning one thing.

0 nothing failed, 1 something failed, 2 doctor could not run (bad input: an unknown profile, a file that
does not parse), 70 a bug in agentcfg, never reported as 2 (which says the user's input is at fault).
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import Home, keyring_env

# Runs the CLI with doctor's engine replaced by one that fails the way a bug would.
BROKEN_DOCTOR = """
import sys
import agentcfg.doctor as doctor

def run(*args, **kwargs):
    raise KeyError("a bug inside doctor")

doctor.run = run
from agentcfg.cli import main
main(sys.argv[1:])
"""


def run_broken(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", BROKEN_DOCTOR, "doctor", "--offline", *args]
    return subprocess.run(command, env=home.env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_a_bug_inside_doctor_is_an_internal_error_not_could_not_run(home: Home) -> None:
    result = run_broken(home)
    assert result.returncode == 70, (result.returncode, result.stderr)
    assert "internal error: KeyError" in result.stderr and "This is a bug" in result.stderr
    assert "could not run" not in result.stderr


def test_a_bug_inside_doctor_under_json_is_one_error_document_with_exit_70(home: Home) -> None:
    result = run_broken(home, "--json")
    assert json.loads(result.stdout)["exit"] == 70


def test_an_unknown_profile_is_refused_with_2(home: Home) -> None:
    result = home.run("doctor", "nope", "--offline", "--json", check=2)
    assert json.loads(result.stdout)["exit"] == 2 and "nope" in result.stderr


def test_a_profile_file_that_does_not_parse_is_refused_with_2(home: Home) -> None:
    home.write(".config/agentcfg/profiles/bad.toml", "base_url = \n")
    home.run("doctor", "--offline", check=2)


def test_nothing_failed_is_0(home: Home) -> None:
    home.run("doctor", "--offline")


def _route(home: Home) -> None:
    home.env.update(keyring_env(home.root.parent / "keyring.json"))  # route add keeps the route's router key there
    home.write(".config/agentcfg/profiles/pri.toml", 'base_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n')
    home.write(".config/agentcfg/profiles/fb.toml", 'base_url = "http://127.0.0.1:2/v1"\nmodel = "m"\n')
    home.run("route", "add", "home", "--primary", "pri", "--fallback", "fb", "--port", "4999")


def test_a_route_offline_checks_its_router_process_and_sends_nothing(home: Home) -> None:
    _route(home)
    result = home.run("doctor", "home", "--offline", "--json", check=1)
    report = json.loads(result.stdout)
    assert report["requests"] == 0 and report["route"]["running"] is False
    assert [f["id"] for f in report["findings"] if f["leg"] is None] == ["route-not-running"]
    assert [leg["role"] for leg in report["route"]["legs"]] == ["primary", "fallback 1"]


def test_a_route_whose_leg_is_gone_is_refused_with_2(home: Home) -> None:
    _route(home)
    home.path(".config/agentcfg/profiles/fb.toml").unlink()
    result = home.run("doctor", "home", "--offline", check=2)
    assert "'fb', which does not exist" in result.stderr
