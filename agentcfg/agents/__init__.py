"""The registry: agent name -> module. Adding an agent is one module and one line here."""

from __future__ import annotations

from types import ModuleType

from agentcfg.agents import claude, codex, opencode, qwen

AGENTS: dict[str, ModuleType] = {m.NAME: m for m in (codex, qwen, opencode, claude)}
