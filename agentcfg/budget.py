"""How many tokens each agent may ask for: the commonest reason a correctly pointed agent fails on vLLM.

vLLM rejects a prompt longer than max_model_len and any request whose output limit alone exceeds
it; prompt + output above the window is accepted and generation stops at the window. opencode
compacts whenever prompt + output >= context - output. So each agent's output is bounded to half of
what its first prompt leaves of the window, never above a ceiling, and never below what an agent needs
to work (MIN_OUTPUT) unless that is more than a quarter of the window. Where the window cannot give
both, the agent gets MIN_OUTPUT and `switch` says so (`warning`). The bound never shrinks as the window
grows (tests/test_budget.py checks every window from 4,096 to 1,048,576).
"""

from __future__ import annotations

from agentcfg.profile_model import Profile

CEILING = 32_000  # what opencode and Claude Code ask for by default
CEILING_UNKNOWN_WINDOW = 8_192  # no window known: a bound every server accepts
ASSUMED_WINDOW = 131_072  # for agents that need a window number when the profile has none
# The least output an agent is given where the window allows it. Claude Code 2.1.332 plans with no less:
# its smallest built-in model default is 4,096, it takes a limit named in a server's max_tokens error or a
# model's stated max_tokens only from 4,096 up, and its thinking budget is at least 1,024 tokens and must
# stay below max_tokens. qwen-code (8,000) and opencode (32,000) ask for more by default; a reply that
# writes a file needs thousands. Under it, replies are cut mid-answer ("exceeded the 384 output token
# maximum"), which the walkthrough's 32,768 window got.
MIN_OUTPUT = 4_096
FITS = 512  # a prompt that leaves less than this of the window cannot get a reply at all


def bound(window: int, prompt_tokens: int, ceiling: int = CEILING) -> int:
    """The output bound on a `window` for an agent whose first prompt is `prompt_tokens`: half of what the
    prompt leaves, at least MIN_OUTPUT or a quarter of the window (whichever is less: vLLM refuses an
    output limit above the window), at most `ceiling`. Non-decreasing in `window`."""
    room = (window - prompt_tokens) // 2
    floor = min(MIN_OUTPUT, window // 4)
    return max(1, min(ceiling, max(floor, room)))


def output_tokens(profile: Profile, prompt_tokens: int) -> int:
    if profile.context_window is None:
        return profile.max_output_tokens or CEILING_UNKNOWN_WINDOW
    return bound(profile.context_window, prompt_tokens, profile.max_output_tokens or CEILING)


def window(profile: Profile) -> int:
    return profile.context_window or ASSUMED_WINDOW


def needed_window(prompt_tokens: int) -> int:
    """The smallest window that holds the agent's first prompt and twice MIN_OUTPUT (see `bound`)."""
    return prompt_tokens + 2 * MIN_OUTPUT


def warning(
    profile: Profile, agent: str, prompt_tokens: int, bounds_output: bool = True, compacts_every_turn: bool = False
) -> str | None:
    """A note when the window cannot hold the agent's first prompt plus the reply it needs, or the profile
    bounds the reply below it. `bounds_output`: the agent is given an output limit (codex is not);
    `compacts_every_turn`: its Traits' (opencode's), passed in because agents import this module."""
    size, name, maximum = profile.context_window, profile.name, profile.max_output_tokens
    restart = f"Start the server with a larger --max-model-len ({needed_window(prompt_tokens):,} or more)."
    if size is not None and size - prompt_tokens < FITS:
        return (
            f"{agent}: its first prompt is about {prompt_tokens:,} tokens but profile {name!r} "
            f"has a {size:,}-token window; {agent} will fail on this server. {restart}"
        )
    if not bounds_output:
        return None
    tokens, notes = output_tokens(profile, prompt_tokens), []
    if size is not None and tokens > (size - prompt_tokens) // 2:
        notes.append(
            f"{agent}: its first prompt is about {prompt_tokens:,} tokens and profile {name!r} has a "
            f"{size:,}-token window, too small for it and the {tokens:,} output tokens {agent} is given: "
            "long replies are cut short"
            + (f" and {agent} compacts every turn" if compacts_every_turn else "")
            + f". {restart}"
        )
    if maximum is not None and maximum < MIN_OUTPUT:
        notes.append(
            f"{agent}: profile {name!r} bounds its output to {maximum:,} tokens (max_output_tokens), below the "
            f"{MIN_OUTPUT:,} it needs: replies are cut short. "
            f"Raise it: `agentcfg profile set {name} max_output_tokens={MIN_OUTPUT}`."
        )
    return " ".join(notes) or None
