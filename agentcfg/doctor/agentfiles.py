"""Each agent's own rules for its files, checked offline: what the agent itself rejects when it loads
them, and settings that silently undercut what agentcfg wrote (each agent's `check`, in its own module,
agentcfg/agents/NAME/checks.py; this runs them). Pure: the files' texts (and the profiles a
fix may name) in, Findings out; given no profiles, it reads the user's own, and only for a finding's fix.

Every rule names where it was read (the agent's source, file and release) and was checked against the
real programs the e2e tier runs (tests/e2e/test_agent_rules.py asks each agent, at the releases of its
TRAITS.proven); where releases differ, the rule says so.

FAIL: the agent refuses to load the file, or never uses agentcfg's settings. WARN: part of its traffic
goes to another model or provider than the one agentcfg set.
"""

from __future__ import annotations

from agentcfg import edit, env
from agentcfg.agents import AGENTS
from agentcfg.agents.base import Parsed, Texts
from agentcfg.doctor.model import Finding
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import Profile, load_own


def check(
    agent: str, current: Texts, environ: env.Environ, profiles: dict[str, Profile] | None = None
) -> list[Finding]:
    """What `agent` would say about its files `current` when it loads them (static findings).

    `profiles` are the ones a fix may name (`agentcfg switch NAME`); None: the user's own, read here.
    """
    known = AGENTS.get(agent)
    if known is None:
        return []
    try:
        parsed: Parsed = [
            (f, edit.load(f.format, text, path=str(f.path))) for f, text in current.items() if text is not None
        ]
    except AgentcfgError:
        return []  # a file that does not parse: collect reports it (config-unreadable)
    found = known.check(parsed, environ, profiles if profiles is not None else {})
    if found and profiles is None:  # only a finding's fix names a profile: read them only then
        found = known.check(parsed, environ, _own_profiles(environ))
    findings: list[Finding] = []
    for finding in found:
        if finding not in findings:
            findings.append(finding)
    return findings


def _own_profiles(environ: env.Environ) -> dict[str, Profile]:
    try:
        return load_own(environ)
    except (AgentcfgError, OSError):
        return {}  # a broken profile is reported elsewhere; the findings then come without a fix
