"""agentcfg.route.spec: a route's legs, its bounds (the smallest of its legs'), and its file."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcfg import budget, profiles
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import Profile
from agentcfg.route import spec

LOCAL = Profile(name="local", base_url="http://localhost:8000/v1", model="DeepSeek-V4-Flash", context_window=65536)
GW = Profile(name="gw", base_url="https://gw.example/v1", model="deepseek-chat", key_env="GW_API_KEY",
             max_output_tokens=8192)  # fmt: skip
SMALL = Profile(name="small", base_url="http://127.0.0.1:8001/v1", model="m", context_window=16384)


def route(*fallbacks: str, **kw) -> Profile:
    return spec.make("home", spec.Route("local", fallbacks or ("gw",), **kw), LOCAL, 4000)


def known(*extra: Profile) -> dict[str, Profile]:
    return {p.name: p for p in (LOCAL, GW, SMALL, *extra)}


def test_a_route_points_at_the_router_with_the_primarys_model() -> None:
    made = route()
    assert (made.base_url, made.anthropic_base_url, made.model) == (
        "http://127.0.0.1:4000/v1", "http://127.0.0.1:4000", "DeepSeek-V4-Flash")  # fmt: skip
    assert made.key_env == "HOME_ROUTER_KEY" and made.is_local  # every route has a router key (issue 27)
    assert made.description == "route: local, then gw"


WHERE = [("0.0.0.0", "http://127.0.0.1:4000/v1"), ("::", "http://127.0.0.1:4000/v1"),
         ("10.0.0.5", "http://10.0.0.5:4000/v1"), ("::1", "http://[::1]:4000/v1")]  # fmt: skip


@pytest.mark.parametrize(("host", "url"), WHERE)
def test_wherever_it_listens_a_route_has_a_router_key_and_agents_connect_where_they_can(host: str, url: str) -> None:
    made = route(host=host)
    assert made.base_url == url
    assert made.key_env == "HOME_ROUTER_KEY"


def test_the_bounds_are_the_smallest_of_the_legs() -> None:
    bounded = spec.bounded(route("gw", "small"), known())
    assert bounded.context_window == 16384  # small's
    assert bounded.max_output_tokens == 8192  # gw's
    # a leg with no window and no bound takes what every server accepts
    bare = Profile(name="bare", base_url="https://bare.example/v1", model="m")
    assert spec.bounded(route("bare"), known(bare)).max_output_tokens == budget.CEILING_UNKNOWN_WINDOW
    # and the agents' output follows: never more than the smallest leg takes
    assert budget.output_tokens(bounded, 20000) <= 8192


def test_the_route_files_own_bound_counts_too() -> None:
    own = Profile(**{**route().__dict__, "context_window": 4096})
    assert spec.bounded(own, known()).context_window == 4096
    assert spec.bounded(own, known()).max_output_tokens == 4096  # never more than the window


@pytest.mark.parametrize(
    ("legs", "says"),
    [(("nope",), "'nope', which does not exist"), (("home",), "names itself"), (("gw", "gw"), "twice"),
     (("other",), "is a route itself")],
)  # fmt: skip
def test_a_route_that_cannot_run_says_why(legs: tuple[str, ...], says: str) -> None:
    other = spec.make("other", spec.Route("local", ("gw",)), LOCAL, 4001)
    made = route(*legs)
    problem = spec.problem(made, known(other, made))
    assert problem and says in problem, problem
    assert spec.bounded(made, known(other)) == made  # left as it is: the error comes when it is used


def test_a_route_file_round_trips(tmp_path: Path) -> None:
    made = route("gw", "small", max_parallel=2, cooldown=10, host="0.0.0.0")
    text = profiles.to_toml(made)
    assert "[route]" in text and "max_parallel = 2" in text
    again = profiles.parse("home", text, str(tmp_path / "home.toml"))
    assert again.route == made.route and again.key_env == "HOME_ROUTER_KEY"
    assert spec.Route("a", ("b",)).table() == {"primary": "a", "fallbacks": ["b"]}  # defaults are not written


def test_a_project_profile_cannot_be_a_route(tmp_path: Path) -> None:
    text = profiles.to_toml(route())
    with pytest.raises(AgentcfgError, match="cannot be a route"):
        profiles.parse("home", text, profiles.PROJECT + str(tmp_path / "home.toml"))


@pytest.mark.parametrize(
    "table",
    ['primary = "local"', 'primary = "local"\nfallbacks = []', 'primary = "Local"\nfallbacks = ["gw"]',
     'primary = "local"\nfallbacks = ["gw"]\nmax_parallel = 0', 'primary = "local"\nfallbacks = ["gw"]\nhost = "a b"',
     'primary = "local"\nfallbacks = ["gw"]\nextra = 1'],
)  # fmt: skip
def test_a_broken_route_table_is_refused(tmp_path: Path, table: str) -> None:
    text = f'base_url = "http://127.0.0.1:4000/v1"\nmodel = "m"\n[route]\n{table}\n'
    with pytest.raises(AgentcfgError):
        profiles.parse("home", text, str(tmp_path / "home.toml"))


def test_loading_bounds_every_route_by_its_legs(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path), "AGENTCFG_HOME": str(tmp_path / "agentcfg")}
    (tmp_path / "agentcfg" / "profiles").mkdir(parents=True)
    (tmp_path / "agentcfg" / "profiles" / "small.toml").write_text(profiles.to_toml(SMALL))
    (tmp_path / "agentcfg" / "profiles" / "home.toml").write_text(profiles.to_toml(route("taotoken", "small")))
    loaded = profiles.load_all(environ)["home"]
    assert (loaded.context_window, loaded.max_output_tokens) == (16384, 8192)  # small's window, taotoken's bound


def test_a_leg_without_a_window_bounds_the_route_by_the_window_assumed_for_it() -> None:
    big = Profile(name="big", base_url="http://127.0.0.1:8000/v1", model="m", context_window=1_048_576)
    made = spec.make("home", spec.Route("big", ("gw",)), big, 4000)
    assert spec.bounded(made, known(big)).context_window == budget.ASSUMED_WINDOW  # gw alone gets that window
