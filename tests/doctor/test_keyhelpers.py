"""doctor's key-helper-not-isolated (agentcfg/doctor/keyhelpers.py): helpers in, findings out.

The CLI scenario (doctor, status and the fix on real files, the helpers then run from a hostile directory) is
tests/cli/test_helper_isolation.py; Codex's profile files as collect reads them, tests/doctor/test_collect.py."""

from __future__ import annotations

import pytest

from agentcfg.doctor.keyhelpers import KeyHelper, cwd_on_pythonpath, findings
from agentcfg.doctor.model import FAIL, WARN

MODULE = "/usr/bin/python3 -m agentcfg key get gw"
SCRIPT = "/opt/v/bin/agentcfg key get gw"
ISOLATED = "/opt/v/bin/python -I -m agentcfg key get gw"
CONFIG = "~/.codex/config.toml"


@pytest.mark.parametrize(
    ("value", "cwd"),
    [("", False), ("/opt/lib", False), (":/opt/lib", True), ("/opt/lib:", True), (".", True), ("src", True)],
)
def test_an_empty_or_relative_pythonpath_entry_is_the_current_directory(value, cwd):
    assert cwd_on_pythonpath({"PYTHONPATH": value} if value else {}) is cwd


def test_isolated_helpers_and_the_users_own_commands_are_not_reported():
    helpers = [KeyHelper(CONFIG, ISOLATED), KeyHelper(CONFIG, "pass show gw")]
    assert findings("codex", helpers, {"PYTHONPATH": ":"}, "gw") == []


def test_the_worst_helper_decides_and_every_one_is_evidence():
    profile_file = "~/.codex/agentcfg-x.config.toml"
    (found,) = findings("codex", [KeyHelper(CONFIG, SCRIPT), KeyHelper(profile_file, MODULE)], {}, "gw")
    assert (found.id, found.status, found.agent, found.fix) == ("key-helper-not-isolated", FAIL, "codex",
                                                               "agentcfg switch gw --agent codex")  # fmt: skip
    assert found.evidence == f"{CONFIG}: {SCRIPT}; {profile_file}: {MODULE}"
    assert CONFIG in found.summary and profile_file in found.summary and "without -I" in found.summary


def test_the_console_script_is_a_warning_unless_this_shell_has_the_current_directory_on_pythonpath():
    (quiet,) = findings("claude", [KeyHelper("~/.claude/settings.json", SCRIPT)], {"PYTHONPATH": "/opt/x"}, "gw")
    (loud,) = findings("claude", [KeyHelper("~/.claude/settings.json", SCRIPT)], {"PYTHONPATH": ":/opt/x"}, "gw")
    assert (quiet.status, loud.status) == (WARN, FAIL)
    assert "this shell has one" in loud.summary and "this shell" not in quiet.summary


def test_without_a_profile_of_the_users_the_hint_says_what_to_run():
    (found,) = findings("claude", [KeyHelper("~/.claude/settings.json", MODULE)], {}, None)
    assert found.fix == "" and "`agentcfg switch`" in found.hint and "--agent claude" in found.hint


def test_a_removed_profiles_file_is_to_be_removed_and_the_switch_rewrites_the_rest():
    gone = "~/.codex/agentcfg-old.config.toml"
    (found,) = findings("codex", [KeyHelper(CONFIG, MODULE), KeyHelper(gone, MODULE, rewritten=False)], {}, "gw")
    assert found.fix == ""
    assert found.hint.startswith(f"remove {gone}:") and "`agentcfg switch gw --agent codex` rewrites the rest" in (
        found.hint
    )
