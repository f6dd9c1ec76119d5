"""Readers of an agent's parsed files for its offline checks (the agents' *_checks modules): every value with
its key path, what a value is in words, a nested key. Pure; a value of another type than expected reads as
what it is, never as an exception."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeGuard
from urllib.parse import urlsplit

from agentcfg import attribution
from agentcfg.agents.base import AgentFile, Parsed
from agentcfg.profiles import Profile

Path_ = tuple[str, ...]


def walk(value: Any) -> Iterator[tuple[Path_, Any]]:
    """Every value in nested tables and lists, with its key path (list items by their index)."""
    stack: list[tuple[Path_, Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        yield path, item
        if isinstance(item, dict):
            stack.extend(((*path, str(k)), v) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend(((*path, str(i)), v) for i, v in reversed(list(enumerate(item))))


def dotted(path: Path_) -> str:
    return ".".join(path)


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def kind(value: Any) -> str:
    """What a value is, in words (for 'X is a number, it must be a string')."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null"


def shown(value: Any) -> str:
    """A value for evidence: numbers and true/false as they are, anything else by its kind only
    (a string may be a key)."""
    if is_number(value) or isinstance(value, bool):
        return str(value).lower() if isinstance(value, bool) else str(value)
    return kind(value)


def get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def profile_of(provider_id: object, profiles: dict[str, Profile]) -> Profile | None:
    """The profile behind a switch's provider id `agentcfg-NAME` (codex, opencode), whose fix a switch is. Only a
    switch's: a switch rewrites that table and no other (a profile file's `agentcfg_profile-NAME` copied into
    config.toml stays as it is)."""
    name = attribution.profile_from_switch_id(provider_id)
    return profiles.get(name) if name else None


def matching(base_url: object, model: object, profiles: dict[str, Profile]) -> Profile | None:
    """The profile an agent's endpoint and model come from (as collect matches them)."""
    if not isinstance(base_url, str) or not isinstance(model, str):
        return None
    norm = base_url.rstrip("/")
    for profile in profiles.values():
        urls = {profile.base_url.rstrip("/"), (profile.anthropic_base_url or "").rstrip("/")}
        if norm in urls and model == profile.model:
            return profile
    return None


def host(url: str) -> str:
    """host[:port] of a URL, for messages (never its user:password@)."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return (parts.hostname or url) + (f":{port}" if port else "")


def one_table(parsed: Parsed) -> tuple[AgentFile, dict[str, Any]] | None:
    """An agent's one file and its data, when that file exists and holds a table (an object): what its checks
    read. A file that does not parse, or holds something else, doctor reports elsewhere."""
    if not parsed:
        return None
    ((file, data),) = parsed
    return (file, data) if isinstance(data, dict) else None
