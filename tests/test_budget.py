"""agentcfg.budget: the output bound each agent gets for a window, over every window a server may have.

The walkthrough: `profile set local context_window=32768 && switch local` wrote
CLAUDE_CODE_MAX_OUTPUT_TOKENS=384 with no warning, while a 16,384 window got 4,096 and a warning. Claude
Code plans with no less than 4,096 output tokens (agents/claude/), and 32,768 is the commonest vLLM window.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcfg import budget
from agentcfg.agents import AGENTS, claude
from agentcfg.profiles import Profile
from tests.conftest import Home

SMALLEST, LARGEST = 4_096, 1_048_576
BOUNDED = [name for name in AGENTS if name != "codex"]  # codex sends no output limit


def _profile(window: int | None, maximum: int | None = None) -> Profile:
    return Profile(name="p", base_url="http://h/v1", model="m", context_window=window, max_output_tokens=maximum)


@pytest.mark.parametrize("agent", list(AGENTS))
def test_every_window_gets_a_monotone_sane_bound(agent: str) -> None:
    """Every window from 4,096 to 1,048,576: the bound never shrinks as the window grows, stays under the
    window and the ceiling, and is at least what an agent needs wherever a quarter of the window holds it."""
    prompt = AGENTS[agent].TRAITS.prompt_tokens
    windows = range(SMALLEST, LARGEST + 1)
    tokens = [budget.bound(window, prompt) for window in windows]
    shrinks = [(w, a, b) for w, a, b in zip(windows[1:], tokens, tokens[1:], strict=False) if b < a]
    assert shrinks == []
    insane = [
        (w, t)
        for w, t in zip(windows, tokens, strict=True)
        if not 1 <= t <= min(budget.CEILING, max(w // 4, (w - prompt) // 2))
    ]
    assert insane == []
    assert min(t for w, t in zip(windows, tokens, strict=True) if w >= 4 * budget.MIN_OUTPUT) >= budget.MIN_OUTPUT


@given(
    window=st.integers(SMALLEST, LARGEST),
    maximum=st.one_of(st.none(), st.integers(1, 2 * LARGEST)),
    agent=st.sampled_from(BOUNDED),
)
def test_below_what_the_agent_needs_or_over_its_room_always_warns(window: int, maximum: int | None, agent: str) -> None:
    """The bound an agent gets (through its profile) is what it needs and fits half the prompt's room, or
    switch says why not."""
    profile = _profile(window, maximum)
    prompt = AGENTS[agent].TRAITS.prompt_tokens
    tokens = budget.output_tokens(profile, prompt)
    assert tokens == budget.bound(window, prompt, maximum or budget.CEILING)
    if tokens < budget.MIN_OUTPUT or tokens > (window - prompt) // 2:
        assert budget.warning(profile, agent, prompt) is not None, (window, maximum, tokens)
    else:
        assert budget.warning(profile, agent, prompt) is None


@pytest.mark.parametrize("window", [16_384, 32_768])
def test_claude_gets_what_it_needs_and_a_warning_at_16k_and_32k_alike(window: int) -> None:
    profile = _profile(window)
    assert budget.output_tokens(profile, claude.TRAITS.prompt_tokens) == budget.MIN_OUTPUT == 4_096
    warning = budget.warning(profile, "claude", claude.TRAITS.prompt_tokens)
    assert warning is not None
    assert f"{window:,}-token window" in warning
    assert "--max-model-len" in warning and f"{claude.TRAITS.prompt_tokens + 2 * budget.MIN_OUTPUT:,}" in warning


def test_a_large_enough_window_gives_claude_room_and_no_warning() -> None:
    window = claude.TRAITS.prompt_tokens + 2 * budget.MIN_OUTPUT
    assert budget.output_tokens(_profile(window), claude.TRAITS.prompt_tokens) == budget.MIN_OUTPUT
    assert budget.warning(_profile(window), "claude", claude.TRAITS.prompt_tokens) is None
    assert budget.warning(_profile(window - 1), "claude", claude.TRAITS.prompt_tokens) is not None


def test_a_profile_maximum_below_the_need_is_written_and_warned_about() -> None:
    profile = _profile(131_072, maximum=1_000)
    assert budget.output_tokens(profile, claude.TRAITS.prompt_tokens) == 1_000  # the user's own bound, kept
    warning = budget.warning(profile, "claude", claude.TRAITS.prompt_tokens)
    assert warning is not None
    assert "max_output_tokens" in warning and "agentcfg profile set p max_output_tokens=4096" in warning
    assert budget.warning(_profile(None, maximum=1_000), "claude", claude.TRAITS.prompt_tokens) == warning


def test_codex_is_warned_only_when_its_prompt_does_not_fit() -> None:
    # codex sends no output limit: a small room is its own to manage (it is told the window)
    assert budget.warning(_profile(16_384), "codex", 13_000, bounds_output=False) is None
    assert budget.warning(_profile(13_200), "codex", 13_000, bounds_output=False) is not None


def test_switch_to_a_32k_window_writes_claude_what_it_needs_and_warns(home: Home) -> None:
    home.run("profile", "set", "local", "context_window=32768")
    done = home.run("switch", "local", "--agent", "claude")
    settings = json.loads(home.path(".claude/settings.json").read_text())
    assert settings["env"]["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "4096"
    assert "claude:" in done.stderr and "32,768-token window" in done.stderr
    home.run("profile", "set", "local", "context_window=16384")
    small = home.run("switch", "local", "--agent", "claude")
    settings = json.loads(home.path(".claude/settings.json").read_text())
    assert settings["env"]["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "4096"
    assert "claude:" in small.stderr and "16,384-token window" in small.stderr


def test_the_compaction_note_comes_from_the_agents_trait_not_its_name() -> None:
    """A window too small for the output limit: an agent whose traits say it compacts every turn is named so."""
    profile, prompt = _profile(16_384), 10_000
    said = budget.warning(profile, "fifth", prompt, compacts_every_turn=True)
    assert said is not None and "fifth compacts every turn" in said
    quiet = budget.warning(profile, "opencode", prompt, compacts_every_turn=False)
    assert quiet is not None and "compacts" not in quiet
