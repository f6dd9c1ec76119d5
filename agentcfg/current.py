"""What is on this machine now for one agent: its files' texts, and what its installed version can do.

The edge a switch, status, doctor, exec and import read from before they decide anything."""

from __future__ import annotations

from agentcfg import env, fsutil
from agentcfg.agents.base import Agent, Texts


def read_current(agent: Agent, environ: env.Environ) -> Texts:
    """Each of the agent's files and its text (None: it does not exist)."""
    return {f: fsutil.read_text(f.path, env.display(f.path, environ)) for f in agent.files(environ)}


def runs_helper(agent: Agent, environ: env.Environ) -> bool:
    """Whether the installed agent can run a key helper command (detected from its version, never assumed)."""
    since = agent.TRAITS.key_helper_since
    if since is None or since == ():
        return since == ()
    from agentcfg import versions  # lazy: `status` reads files with this module and never asks a version

    version = versions.installed(agent.TRAITS.binary, environ)
    return version is not None and version >= since
