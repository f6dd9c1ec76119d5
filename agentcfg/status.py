"""`agentcfg status`: per agent, what its files point at now and whether someone edited what agentcfg owns."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from agentcfg import env
from agentcfg.agents import AGENTS
from agentcfg.agents.base import Binding
from agentcfg.agents.keyhelper import helper_exposure
from agentcfg.attribution import attribute
from agentcfg.current import read_current
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.plan import drifted
from agentcfg.profiles import Profile


@dataclass
class AgentStatus:
    """What `status` says of one agent."""

    name: str
    installed: bool
    files: list[str]
    configured: bool = False
    profile: str | None = None  # the profile it points at, "other", or None when not configured
    base_url: str | None = None
    model: str | None = None
    key: str | None = None
    key_in_file: bool = False  # a key's value sits in the agent's file (plaintext)
    # An earlier agentcfg's key helper, not isolated: what it may import from (agents.keyhelper.helper_exposure)
    key_helper_unisolated: str | None = None
    edited: list[str] = field(default_factory=list)  # owned keys changed since agentcfg wrote them
    last_switch: dict[str, Any] | None = None
    error: str | None = None


def _norm(url: str | None) -> str:
    return (url or "").rstrip("/")


def _match(
    status: AgentStatus, profiles: dict[str, Profile], preferred: str | None, binding: Binding | None = None
) -> str | None:
    """The profile the agent's files belong to (agentcfg.attribution, as doctor decides it), "other" if none.
    `preferred`: the profile of its last switch in the journal."""
    if not status.configured or not (status.base_url or status.model):
        return None
    found = attribute(
        status.base_url,
        status.model,
        profiles,
        own=binding.profile if binding else None,
        label=binding.label if binding else None,
        last_switch=preferred,
    )
    return found.profile or "other"


def status(environ: env.Environ, profiles: dict[str, Profile], journal_entries: list[Any]) -> list[AgentStatus]:
    """Per agent: its files, what they point at, and whether someone edited what agentcfg owns."""
    result = []
    for agent in AGENTS.values():
        item = AgentStatus(agent.TRAITS.name, installed=bool(env.which(agent.TRAITS.binary, environ)), files=[])
        result.append(item)
        try:
            current = read_current(agent, environ)
            item.files = [env.display(f.path, environ) for f in current]
            item.configured = any(text is not None for text in current.values())
            binding = agent.read(current)
        except AgentcfgError as exc:
            item.error = str(exc)
            continue
        item.base_url, item.model, item.key = binding.base_url, binding.model, binding.key
        item.key_in_file = bool(binding.key and binding.key.startswith("in "))
        item.key_helper_unisolated = helper_exposure(binding.helper)
        last = next(
            (
                e
                for e in reversed(journal_entries)
                if e.manifest["kind"] == "switch" and any(f["agent"] == agent.TRAITS.name for f in e.files)
            ),
            None,
        )
        if last is not None:
            item.last_switch = {
                "entry": last.id,
                "profile": last.manifest.get("profile"),
                "time": last.manifest["time"],
            }
            by_path = {str(f.path): f for f in current}
            for recorded in last.files:
                file = by_path.get(recorded["path"]) if recorded["agent"] == agent.TRAITS.name else None
                if file is not None:
                    shown = env.display(file.path, environ)
                    stamps = agent.TRAITS.stamps
                    item.edited += drifted(recorded["format"], current[file], recorded["owned"], shown, stamps)
        item.profile = _match(item, profiles, (item.last_switch or {}).get("profile"), binding)
    return result
