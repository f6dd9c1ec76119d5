"""How many tokens each agent may ask for: the commonest reason a correctly pointed agent fails on vLLM.

vLLM rejects a prompt longer than max_model_len and any request whose output limit alone exceeds
it, and opencode compacts whenever prompt + output >= context - output. So each agent's output is
bounded to half of what its first prompt leaves of the window, and never above a ceiling.
"""

from __future__ import annotations

from agentcfg.profiles import Profile

CEILING = 32_000  # what opencode and Claude Code ask for by default
CEILING_UNKNOWN_WINDOW = 8_192  # no window known: a bound every server accepts
ASSUMED_WINDOW = 131_072  # for agents that need a window number when the profile has none
MIN_OUTPUT = 256


def output_tokens(profile: Profile, prompt_tokens: int) -> int:
    if profile.context_window is None:
        return profile.max_output_tokens or CEILING_UNKNOWN_WINDOW
    ceiling = profile.max_output_tokens or CEILING
    room = (profile.context_window - prompt_tokens) // 2
    if room < MIN_OUTPUT:  # the agent cannot work here anyway; still ask for less than the window
        return max(1, min(ceiling, profile.context_window // 4))
    return min(ceiling, room)


def window(profile: Profile) -> int:
    return profile.context_window or ASSUMED_WINDOW


def warning(profile: Profile, agent: str, prompt_tokens: int) -> str | None:
    """A note when the window cannot hold the agent's first prompt plus a useful reply."""
    if profile.context_window is None:
        return None
    if profile.context_window - prompt_tokens < 2 * MIN_OUTPUT:
        return (
            f"{agent}: its first prompt is about {prompt_tokens:,} tokens but profile {profile.name!r} "
            f"has a {profile.context_window:,}-token window; {agent} will fail on this server. "
            f"Start the server with a larger --max-model-len (about {prompt_tokens * 2:,} or more)."
        )
    return None
