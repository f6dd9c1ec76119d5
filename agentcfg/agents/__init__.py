"""The registry: the one list of agents. Adding an agent is one module and its entry in `_MODULES`.

Each module is held to the `Agent` interface by mypy (the annotation below), not by `hasattr` at run time.
"""

from __future__ import annotations

from agentcfg.agents import claude, cline, codex, copilot, droid, gemini, opencode, qwen
from agentcfg.agents.base import Agent
from agentcfg.errors import AgentcfgError

_MODULES: tuple[Agent, ...] = (codex, qwen, opencode, claude, cline, copilot, gemini, droid)
AGENTS: dict[str, Agent] = {agent.TRAITS.name: agent for agent in _MODULES}


def unknown_agent(name: str) -> AgentcfgError:
    """The refusal of a name that is not in the registry (`--agent` checks names before any command runs)."""
    return AgentcfgError(f"unknown agent {name!r}", hint=f"Agents agentcfg knows: {', '.join(AGENTS)}.")
