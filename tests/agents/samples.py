"""What the writer tests share: a HOME that is never read, and a switch computed on plain strings."""

from __future__ import annotations

from agentcfg import edit
from agentcfg.agents.base import AgentFile, KeySource
from agentcfg.profiles import Profile

ENVIRON = {"HOME": "/home/u", "XDG_CONFIG_HOME": "/home/u/.config-does-not-exist"}
NO_KEYS = KeySource()
GATEWAY_ANTHROPIC = Profile(  # a keyed gateway that also speaks the Anthropic protocol
    name="gw",
    base_url="https://gw.example/v1",
    model="glm-4.6",
    key_env="GW_API_KEY",
    anthropic_base_url="https://gw.example/anthropic",
    context_window=200_000,
)


def switch(
    agent, profile: Profile, texts: dict[AgentFile, str | None], keys: KeySource = NO_KEYS
) -> tuple[dict[AgentFile, str], tuple]:
    """The new text of each of the agent's files and the notes, as `agentcfg switch` computes them."""
    results, notes = {}, ()
    for file_edit in agent.edits(profile, texts, keys):
        before = texts[file_edit.file]
        start = file_edit.file.seed if before is None else before
        results[file_edit.file] = edit.apply(file_edit.file.format, start, file_edit.assignments, path="f")
        notes += file_edit.notes
    return results, notes
