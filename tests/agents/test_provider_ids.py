"""agentcfg's provider ids (agentcfg.attribution): a switch's `agentcfg-NAME`, a Codex profile file's and
`agentcfg exec`'s never equal one another for any two valid profile names, whatever those are. Codex merges
tables of one id across config.toml, a profile file and `-c` overrides (and refuses to start when the merged
table has two key methods); opencode deep-merges providers of one id across its config layers."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
from hypothesis import given
from hypothesis import strategies as st

from agentcfg import attribution, fields
from agentcfg.agents import codex, opencode
from agentcfg.agents.base import LaunchContext
from agentcfg.profiles import Profile
from tests.agents.samples import ENVIRON

VALID = re.compile(rf"\A{fields.NAME_PATTERN}\Z")  # agentcfg.profiles.NAME_RE
# Every valid profile name, and (drawn as often) names that begin like an id's words: a collision needs one
# profile's name to spell another family's tag, which random names almost never do.
TAGS = ("profile", "exec", "exec2", "agentcfg", "agentcfg-profile", "agentcfg-exec", "agentcfg_profile", "p", "e")
NAMES = st.one_of(
    st.from_regex(VALID),
    st.builds("{}-{}".format, st.sampled_from(TAGS), st.from_regex(VALID)).filter(VALID.match),
)
TIMES = st.integers(min_value=1, max_value=10_000)
BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")  # TOML's bare key: `-c model_providers.ID=...` needs no quoting


def _profile(name: str) -> Profile:
    return Profile(name=name, base_url="http://127.0.0.1:8000/v1", model="m", key_env="K")


def _exec_id(agent, name: str) -> str:
    """The provider id `agentcfg exec NAME -- AGENT` gives the process (no file of the agent's there)."""
    (file,) = agent.files(ENVIRON)
    launch = agent.launch(_profile(name), (), LaunchContext({file: None}, ENVIRON, None, Path("/run/user/1000")))
    if agent is codex:
        return next(a.split("=", 1)[1].strip('"') for a in launch.args if a.startswith("model_provider="))
    import json

    return json.loads(launch.env["OPENCODE_CONFIG_CONTENT"])["model"].split("/")[0]


@given(NAMES, NAMES, NAMES)
def test_codex_ids_of_a_switch_a_profile_file_and_exec_never_meet(a, b, c):
    """What each of the three writes, for any three profiles (`profile-x` switched next to the file of `x`)."""
    ids = {codex.provider_id(_profile(a)), codex.profile_file_id(_profile(b)), _exec_id(codex, c)}
    assert len(ids) == 3, (a, b, c, ids)


@given(NAMES, NAMES)
def test_opencode_exec_never_takes_a_switched_profiles_id(a, b):
    """The provider of a switch stays in opencode's file and would merge with exec's of the same id (its
    headers, options and models going along): exec's is never one a switch writes, for any two profiles."""
    assert opencode.provider_id(_profile(a)) != _exec_id(opencode, b)


def test_the_names_drawn_are_the_valid_ones():
    """The names drawn are what profiles.NAME_RE accepts (the properties here are over all of them)."""
    from agentcfg.profiles import NAME_RE

    assert NAME_RE.pattern == VALID.pattern


@given(NAMES, NAMES, NAMES, TIMES)
def test_the_three_families_are_disjoint_for_any_names(a, b, c, n):
    switched, profile_file, executed = (
        attribution.switch_id(a),
        attribution.profile_file_id(b),
        attribution.exec_id(c, n),
    )
    assert len({switched, profile_file, executed}) == 3, (switched, profile_file, executed)


@given(NAMES, TIMES)
def test_each_id_names_its_profile_back(name, n):
    for ident in (attribution.switch_id(name), attribution.profile_file_id(name), attribution.exec_id(name, n)):
        assert attribution.profile_from_id(ident) == name, ident


@given(NAMES, NAMES, TIMES, TIMES)
def test_exec_ids_of_two_profiles_or_two_tries_differ(a, b, n, m):
    if (a, n) != (b, m):
        assert attribution.exec_id(a, n) != attribution.exec_id(b, m)


@given(NAMES, TIMES)
def test_every_id_is_a_bare_toml_key_and_never_reserved(name, n):
    for ident in (attribution.switch_id(name), attribution.profile_file_id(name), attribution.exec_id(name, n)):
        assert BARE_KEY.fullmatch(ident), ident
        assert ident not in codex.RESERVED_IDS
        assert tomllib.loads(f"[model_providers.{ident}]\nname = 1\n")["model_providers"] == {ident: {"name": 1}}


@given(NAMES, st.sets(st.text(min_size=1, max_size=30), max_size=5))
def test_a_free_exec_id_is_none_of_those_taken(name, taken):
    taken = taken | {attribution.exec_id(name, n) for n in (1, 2)}
    ident = attribution.free_exec_id(name, taken)
    assert ident not in taken and attribution.profile_from_id(ident) == name


def test_earlier_versions_ids_keep_naming_the_profile_they_named():
    """config.toml of earlier versions: `agentcfg-NAME` is always a switch's (profile files were never read
    for attribution, and exec never wrote its id), so `agentcfg-profile-x` is profile `profile-x`'s."""
    assert attribution.profile_from_id("agentcfg-local") == "local"
    assert attribution.profile_from_id("agentcfg-profile-x") == "profile-x"
    assert attribution.profile_from_id("agentcfg-exec-x") == "exec-x"
    assert attribution.profile_from_id("agentcfg-exec-x-2") == "exec-x-2"


def test_ids_that_name_no_profile():
    for value in ("agentcfg-", "agentcfg_profile-", "agentcfg_exec-", "agentcfg_exec2", "agentcfg_other-x",
                  "agentcfg_exec0-x", "openai", "", None, 3):  # fmt: skip
        assert attribution.profile_from_id(value) is None, value
