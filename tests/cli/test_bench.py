"""`bench` (agentcfg/cli/bench.py): exit statuses come from agentcfg.errors.Exit, by name."""

from __future__ import annotations

import json

import pytest

from agentcfg.bench import summary
from agentcfg.errors import Exit
from tests.conftest import Home


@pytest.mark.parametrize(
    ("interrupted", "ok", "expected"),
    [
        (None, True, Exit.OK),
        (None, False, Exit.FAILED),
        ("deadline", False, Exit.FAILED),
        ("ctrl-c", False, Exit.INTERRUPTED),
    ],
)
def test_exit_status_is_a_named_exit(interrupted: str | None, ok: bool, expected: Exit) -> None:
    assert summary.exit_status({"interrupted": interrupted, "ok": ok}) is expected


def test_an_unknown_profile_is_refused_with_2_and_nothing_is_sent(home: Home) -> None:
    result = home.run("bench", "nope", "--json", check=2)
    assert json.loads(result.stdout)["exit"] == Exit.REFUSED
