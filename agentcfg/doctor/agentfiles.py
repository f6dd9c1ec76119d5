"""Each agent's own rules for its files, checked offline: what the agent itself rejects when it loads
them, and settings that silently undercut what agentcfg wrote. Pure: the files' texts in, Findings out.
"""

from __future__ import annotations

from agentcfg import env
from agentcfg.agents.base import Texts
from agentcfg.doctor.model import Finding


def check(agent: str, current: Texts, environ: env.Environ) -> list[Finding]:
    """What `agent` would say about its files `current` when it loads them (static findings)."""
    return []
