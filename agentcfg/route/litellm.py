"""The LiteLLM proxy config of a route, and which key goes in which variable. Pure: profiles in, data out.

One model group (the route's model), one deployment per leg in priority order (`order`: LiteLLM tries the
lowest it can use); a leg that fails is cooled down for the route's cooldown and the next one answers; the
primary takes at most `max_parallel` requests at once. No key is in the config: each leg's is read by LiteLLM
from its own environment (`os.environ/VARIABLE`), which only agentcfg's `route serve` fills.
"""

from __future__ import annotations

import json
from typing import Any

from agentcfg.profiles import Profile

NO_KEY = "agentcfg-no-key"  # a keyless leg still needs a non-empty key for LiteLLM's OpenAI client
ROUTER_KEY_VARIABLE = "AGENTCFG_ROUTER_KEY"
CONNECT_TIMEOUT = 10  # s: a dead or unreachable leg is given up on this fast


def key_variable(index: int) -> str:
    """The variable leg `index` (0: the primary) finds its key in, in LiteLLM's environment only."""
    return f"AGENTCFG_LEG_{index}_KEY"


def leg_id(route: Profile, index: int) -> str:
    """The deployment's id in LiteLLM (its answers' x-litellm-model-id header, its health entries)."""
    assert route.route is not None
    return route.route.legs[index]


def config(route: Profile, legs: list[Profile], *, keyed: set[str], timeout: float) -> dict[str, Any]:
    """LiteLLM's config for `route`, whose legs (primary first) are `legs`; `keyed`: the legs given a key."""
    spec = route.route
    assert spec is not None
    deployments = []
    for index, leg in enumerate(legs):
        params: dict[str, Any] = {
            "model": f"openai/{leg.model}",
            "api_base": leg.base_url.rstrip("/"),
            "api_key": f"os.environ/{key_variable(index)}" if leg.name in keyed else NO_KEY,
            "order": index + 1,
            "timeout": timeout,
            "stream_timeout": timeout,
        }
        if index == 0 and spec.max_parallel is not None:
            params["max_parallel_requests"] = spec.max_parallel
        deployments.append({"model_name": route.model, "litellm_params": params, "model_info": {"id": leg.name}})
    settings: dict[str, Any] = {
        "model_list": deployments,
        "router_settings": {
            "num_retries": 0,  # a retry of the failing leg only delays the fallback's answer
            "allowed_fails": 0,  # the first failure cools the leg down
            "cooldown_time": spec.cooldown,
            "retry_after": 0,
        },
        "litellm_settings": {"request_timeout": timeout, "telemetry": False, "drop_params": True},
        "general_settings": {},
    }
    if route.key_env:
        settings["general_settings"]["master_key"] = f"os.environ/{ROUTER_KEY_VARIABLE}"
    return settings


def text(settings: dict[str, Any]) -> str:
    """The config file's text: JSON, which is YAML (no YAML writer needed, and nothing a value could inject)."""
    return json.dumps(settings, indent=1, ensure_ascii=True) + "\n"
