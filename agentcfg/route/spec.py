"""What a route is: its legs in order, how the router treats the primary, and the profile agents see. Pure.

A route's file is a profile of the user's own (`agentcfg route add` writes it) with a `[route]` table:

    base_url = "http://127.0.0.1:4000/v1"          # the router
    anthropic_base_url = "http://127.0.0.1:4000"
    model = "DeepSeek-V4-Flash"                    # the model group: the primary's model id
    [route]
    primary = "local"
    fallbacks = ["taotoken"]
    max_parallel = 4                               # optional: the primary's concurrency
    cooldown = 30                                  # seconds a failing leg is left alone
    timeout = 120                                  # seconds a leg may take to start answering
    host = "127.0.0.1"                             # where the router listens

Every route has a router key (`key_env`, NAME_ROUTER_KEY; the key in the keyring): its router spends the legs'
keys for whoever reaches it, and on loopback that is any local process, another user, a container on the host
network and any web page the user opens. A file from before (no key_env, maybe `router_key = true`) still loads
on loopback; `route serve` gives it its key before the router starts.

The window and output bound are not stored: each load takes the smallest of the legs' (and of the route
file's own, when it sets one), so a leg changed later bounds the route too. A leg that states no window counts
with the one agentcfg assumes for it alone (budget.ASSUMED_WINDOW).
"""

from __future__ import annotations

import dataclasses
from urllib.parse import urlsplit

from agentcfg import budget
from agentcfg.profile_model import DEFAULT_HOST, WILDCARD_HOSTS, Profile
from agentcfg.profile_model import Route as Route  # the record lives with Profile (a profile's [route] table)


def connect_host(host: str) -> str:
    """The host this machine's agents reach a router listening on `host` at."""
    return DEFAULT_HOST if host in WILDCARD_HOSTS else host


def key_variable(name: str) -> str:
    """The variable agents read the router key from (the route's key_env)."""
    return name.upper().replace("-", "_") + "_ROUTER_KEY"


def make(name: str, route: Route, primary: Profile, port: int) -> Profile:
    """The profile `route add` writes: the router's endpoints, the primary's model id as the model group."""
    host = connect_host(route.host)
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    then = ", then ".join(route.fallbacks)
    return Profile(
        name=name,
        base_url=f"http://{shown}:{port}/v1",
        anthropic_base_url=f"http://{shown}:{port}",
        model=primary.model,
        key_env=key_variable(name),
        description=f"route: {route.primary}, then {then}"[:200],
        route=route,
    )


def port(profile: Profile) -> int:
    """The router's port, from the route's base URL."""
    found = urlsplit(profile.base_url).port
    return found if found is not None else 80


def problem(profile: Profile, known: dict[str, Profile]) -> str | None:
    """Why a route cannot run with the profiles known now (a leg gone, or a leg that is a route), or None."""
    route = profile.route
    assert route is not None
    for leg in route.legs:
        if leg == profile.name:
            return f"route {profile.name!r} names itself as a leg"
        if leg not in known:
            return f"route {profile.name!r} routes to profile {leg!r}, which does not exist"
        if known[leg].route is not None:
            return f"route {profile.name!r} routes to {leg!r}, which is a route itself (a route's legs are servers)"
    if len(set(route.legs)) != len(route.legs):
        return f"route {profile.name!r} names a profile twice among its legs"
    return None


def bounded(profile: Profile, known: dict[str, Profile]) -> Profile:
    """The route with the smallest window and output bound of its legs and its own file: the agents' requests
    then fit whichever leg answers. A leg with no window counts with the window agentcfg assumes for it, and with
    its output bound or the one every server accepts."""
    route = profile.route
    if route is None or problem(profile, known):
        return profile
    legs = [known[leg] for leg in route.legs]
    # A leg with no window gets the one agentcfg assumes for it on its own (budget.window): never more through a route
    windows = [w for w in (profile.context_window, *(budget.window(leg) for leg in legs)) if w]
    outputs = [o for o in (profile.max_output_tokens, *(leg.max_output_tokens for leg in legs)) if o]
    outputs += [budget.CEILING_UNKNOWN_WINDOW for leg in legs if not leg.context_window and not leg.max_output_tokens]
    window = min(windows) if windows else None
    output = min(outputs) if outputs else None
    if window is not None and output is not None:
        output = min(output, window)
    return dataclasses.replace(profile, context_window=window, max_output_tokens=output)
