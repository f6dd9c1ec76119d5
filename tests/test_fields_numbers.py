"""Red team: a profile's numbers are written into the agents' files as they are. TOML (tomli) and JSON take any
integer, Codex's config.toml parser (Rust, i64) does not: a team file or a trusted project's profile with
`context_window = 10**30` made `switch` write a config.toml Codex refuses to load."""

from __future__ import annotations

import pytest

from tests.conftest import Home

PROFILE = 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
CODEX = 'approval_policy = "on-request"\n'


@pytest.mark.parametrize("field", ["context_window", "max_output_tokens"])
def test_a_number_no_agent_can_read_is_refused(home: Home, field: str) -> None:
    home.write(".config/agentcfg/profiles/big.toml", PROFILE + f"{field} = 1{'0' * 30}\n")
    home.write(".codex/config.toml", CODEX)
    result = home.run("switch", "big", "--agent", "codex", check=2)
    assert field in result.stderr and "Traceback" not in result.stderr
    assert home.read(".codex/config.toml") == CODEX


def test_a_large_real_window_still_passes(home: Home) -> None:
    home.write(".config/agentcfg/profiles/big.toml", PROFILE + "context_window = 10000000\n")
    home.write(".codex/config.toml", CODEX)
    home.run("switch", "big", "--agent", "codex")
    assert "model_context_window = 10000000" in home.read(".codex/config.toml")


@pytest.mark.parametrize("value", ["32768.0", "nan", "inf", "-inf"])
def test_a_window_that_is_no_whole_number_is_refused(home: Home, value: str) -> None:
    """Issue 27 item 8: TOML's `32768.0` passed (JSON Schema's "integer" takes a float without a fraction) and
    `switch` wrote `model_context_window = 32768.0`, a float Codex's i64 cannot read. Every number a profile has
    is a whole number, finite."""
    home.write(".config/agentcfg/profiles/f.toml", PROFILE + f"context_window = {value}\n")
    home.write(".codex/config.toml", CODEX)
    result = home.run("switch", "f", "--agent", "codex", check=2)
    assert "context_window" in result.stderr and "whole number" in result.stderr and "Traceback" not in result.stderr
    assert home.read(".codex/config.toml") == CODEX
