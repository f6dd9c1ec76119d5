"""What the rule modules share: the agent's traits, the host of a URL, and the fixes that give an agent its
key or change its profile. Pure."""

from __future__ import annotations

from urllib.parse import urlsplit

from agentcfg import fixes
from agentcfg.agents import AGENTS
from agentcfg.agents.base import Traits
from agentcfg.doctor.model import Target


def traits(target: Target) -> Traits:
    """What is data about the target's agent (agents/<name>.py's TRAITS)."""
    return AGENTS[target.agent].TRAITS


def host(url: str) -> str:
    return urlsplit(url).hostname or ""


def profile_fix(target: Target, **fields: object) -> str:
    """`agentcfg profile set P field=value && agentcfg switch P --agent A`, or "" where no profile is
    known or it is a project's (`profile set` refuses those: the project's file is the project's)."""
    if not target.profile or target.profile_project:
        return ""
    return fixes.then(fixes.profile_set(target.profile, **fields), fixes.switch(target.profile, target.agent))


def key_advice(target: Target) -> tuple[str, str]:
    """(fix, hint) that give the agent its key."""
    if target.profile and target.key_env:
        # `key set` asks for the key and keeps it in the keyring; `exec` starts the agent with it in its variable
        fix = fixes.then(fixes.key_set(target.profile), fixes.exec_agent(target.profile, target.agent))
        return fix, f"or export {target.key_env} with the key in the shell you start {target.agent} from"
    if target.key_env:
        return "", f"set {target.key_env} to the key for {target.base_url} in the shell you start {target.agent} from"
    return "", (
        f"give {target.agent} the key for {target.base_url}: a profile for this server with key_env names the "
        "variable it reads the key from (agentcfg profile add --help), then switch to it"
    )
