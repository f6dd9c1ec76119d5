"""agentcfg.route.litellm: LiteLLM's config of a route never leaves the router open (issue 27, item 5)."""

from __future__ import annotations

import dataclasses

import pytest

from agentcfg.profiles import Profile
from agentcfg.route import litellm, spec

LOCAL = Profile(name="local", base_url="http://127.0.0.1:8000/v1", model="m", context_window=65536)
GW = Profile(name="gw", base_url="https://gw.example/v1", model="gw-model", key_env="GW_API_KEY")
MASTER = {"master_key": "os.environ/AGENTCFG_ROUTER_KEY"}


def made(*legs: Profile, **options: object) -> Profile:
    return spec.make("home", spec.Route(legs[0].name, tuple(leg.name for leg in legs[1:]), **options), legs[0], 4000)


@pytest.mark.parametrize(
    ("legs", "keyed"),
    [((LOCAL, GW), {"gw"}), ((GW, LOCAL), {"gw"}), ((LOCAL, dataclasses.replace(LOCAL, name="other")), set())],
    ids=["keyed-fallback", "keyed-primary", "all-local"],
)
def test_a_loopback_route_always_has_a_master_key(legs: tuple[Profile, ...], keyed: set[str]) -> None:
    """A leg's key is spent by whoever reaches the router: a process, another user, a web page. A route of
    keyless legs gets one too: its legs may gain a key later, and an open LiteLLM is an admin for anyone."""
    route = made(*legs)
    assert route.key_env == "HOME_ROUTER_KEY"
    settings = litellm.config(route, list(legs), keyed=keyed)
    assert settings["general_settings"] == MASTER
    assert "dangerously" not in litellm.text(settings)


def test_a_route_without_a_router_key_is_never_configured_open() -> None:
    """A route file from before every route had a key (no key_env): `route serve` gives it one first; the
    config itself refuses to be written without it, whatever the caller forgot."""
    old = dataclasses.replace(made(LOCAL, GW), key_env=None)
    with pytest.raises(ValueError, match="router key"):
        litellm.config(old, [LOCAL, GW], keyed={"gw"})


def test_browsers_are_not_let_read_the_routers_answers() -> None:
    """LiteLLM allows every origin by default (CORS `*`): only the router's own origin is allowed, so a page
    elsewhere reads nothing even of an answer it made the router give."""
    assert litellm.browser_variables(made(LOCAL, GW)) == {
        "LITELLM_CORS_ORIGINS": "http://127.0.0.1:4000",
        "LITELLM_CORS_ALLOW_CREDENTIALS": "false",
    }
    wide = made(LOCAL, GW, host="0.0.0.0")  # the agents here reach it on loopback
    assert litellm.browser_variables(wide)["LITELLM_CORS_ORIGINS"] == "http://127.0.0.1:4000"


# What an agentcfg before every route had a router key wrote for a loopback route (f5c54a8^: no key_env).
OPEN_GENERAL = {"dangerously_permit_weak_or_unset_master_key": True}


def test_a_config_says_whether_its_router_requires_the_router_key() -> None:
    """doctor's route-open: the config a router was started with says whether it asks for the key."""
    route = made(LOCAL, GW)
    settings = litellm.config(route, [LOCAL, GW], keyed={"gw"})
    assert litellm.requires_key(litellm.text(settings)) is True
    assert litellm.requires_key(litellm.text({**settings, "general_settings": OPEN_GENERAL})) is False
    assert litellm.requires_key(litellm.text({k: v for k, v in settings.items() if k != "general_settings"})) is False
    assert litellm.requires_key(litellm.text({**settings, "general_settings": {"master_key": ""}})) is False
    for text in ("not: [json", "[]", ""):  # not a config of agentcfg's: nothing to tell
        assert litellm.requires_key(text) is None
