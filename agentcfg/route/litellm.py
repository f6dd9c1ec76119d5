"""The LiteLLM proxy config of a route, and which key goes in which variable. Pure: profiles in, data out.

One model group (the route's model), one deployment per leg in priority order (`order`: LiteLLM tries the
lowest it can use); a leg that fails is cooled down for the route's cooldown and the next one answers; the
primary takes at most `max_parallel` requests at once. No key is in the config: each leg's is read by LiteLLM
from its own environment (`os.environ/VARIABLE`), which only agentcfg's `route serve` fills; so is the router key,
LiteLLM's master key, without which it answers no request (every route has one: route/spec.py).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from agentcfg.profiles import Profile

NO_KEY = "agentcfg-no-key"  # a keyless leg still needs a non-empty key for LiteLLM's OpenAI client
ROUTER_KEY_VARIABLE = "AGENTCFG_ROUTER_KEY"
NON_STREAM_TIMEOUT = 600  # s for a whole non-streamed answer (agents stream; doctor's probes do not)


def key_variable(index: int) -> str:
    """The variable leg `index` (0: the primary) finds its key in, in LiteLLM's environment only."""
    return f"AGENTCFG_LEG_{index}_KEY"


def config(route: Profile, legs: list[Profile], *, keyed: set[str]) -> dict[str, Any]:
    """LiteLLM's config for `route`, whose legs (primary first) are `legs`; `keyed`: the legs given a key.

    The settings are LiteLLM 1.108.7's, each checked against a real proxy (docs/route.md, "What it runs"):
    `order` within one group is the failover (router.py: the higher orders become fallbacks); `max_parallel_requests`
    does not queue, it sends the overflow to the next order at once; num_retries 0 and allowed_fails 0 make the first
    failure cool the leg down (the defaults retry a dead leg three times per request, ~5 s, and never cool it down);
    a plain 400 (a prompt too long) is the client's answer, not a reason to try the next leg.
    """
    spec = route.route
    assert spec is not None
    if not route.key_env:  # never an open router (LiteLLM's dangerously_permit_weak_or_unset_master_key), whoever asks
        raise ValueError(f"route {route.name!r} has no router key (key_env): route serve gives it one first")
    deployments = []
    for index, leg in enumerate(legs):
        params: dict[str, Any] = {
            "model": f"openai/{leg.model}",
            "api_base": leg.base_url.rstrip("/"),
            "api_key": f"os.environ/{key_variable(index)}" if leg.name in keyed else NO_KEY,
            "order": index + 1,
        }
        if index == 0 and spec.max_parallel is not None:
            params["max_parallel_requests"] = spec.max_parallel
        # The id is the leg's profile name: answers carry it (x-litellm-model-id), /health?model_id= takes it.
        deployments.append({"model_name": route.model, "litellm_params": params, "model_info": {"id": leg.name}})
    return {
        "model_list": deployments,
        "router_settings": {
            "num_retries": 0,
            "allowed_fails": 0,
            "cooldown_time": spec.cooldown,
            "timeout": max(NON_STREAM_TIMEOUT, spec.timeout),
            "stream_timeout": spec.timeout,  # to the first byte: a leg slower than that is failing
            "fallback_on_unsupported_params": False,
        },
        # Claude Code's /v1/messages becomes chat completions for every leg (by default LiteLLM sends it to an
        # OpenAI leg's /v1/responses, which a gateway may not serve).
        "litellm_settings": {"use_chat_completions_url_for_anthropic_messages": True},
        "general_settings": {"master_key": f"os.environ/{ROUTER_KEY_VARIABLE}"},
    }


def requires_key(text: str) -> bool | None:
    """Whether LiteLLM started on this config (`text`) refuses a request without the router key: it names a master
    key. An agentcfg before every route had a router key started a loopback route's router with
    `dangerously_permit_weak_or_unset_master_key` instead, and such a router runs until restarted. None: not a
    config this module writes."""
    try:
        settings = json.loads(text)
    except ValueError:
        return None
    if not isinstance(settings, dict):
        return None
    general = settings.get("general_settings")
    return isinstance(general, dict) and isinstance(general.get("master_key"), str) and bool(general["master_key"])


def browser_variables(route: Profile) -> dict[str, str]:
    """LiteLLM's CORS settings for the route: only the router's own origin. By default LiteLLM allows every origin
    (`Access-Control-Allow-Origin: *`), so a page anywhere could read what it made the router answer; agents are
    no browsers and send no Origin."""
    where = urlsplit(route.base_url)
    return {"LITELLM_CORS_ORIGINS": f"{where.scheme}://{where.netloc}", "LITELLM_CORS_ALLOW_CREDENTIALS": "false"}


def text(settings: dict[str, Any]) -> str:
    """The config file's text: JSON, which is YAML (no YAML writer needed, and nothing a value could inject)."""
    return json.dumps(settings, indent=1, ensure_ascii=True) + "\n"
