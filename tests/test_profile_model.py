"""agentcfg.profile_model.Profile: its __init__, __repr__, __eq__ and __hash__ are written out (dataclasses would
compile them on every start of `agentcfg key get`); they behave as the ones dataclasses writes for its fields."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcfg.profile_model import BUILT_IN, Profile, Route


def _reference() -> type:
    """Profile as `@dataclass(frozen=True)` alone would make it: the same fields, defaults and order."""
    fields = [
        (f.name, f.type, dataclasses.field(default=f.default))
        if f.default is not dataclasses.MISSING
        else (f.name, f.type)
        for f in dataclasses.fields(Profile)
    ]
    return dataclasses.make_dataclass("Profile", fields, frozen=True)


REFERENCE = _reference()
ROUTE = Route("local", ("taotoken",), max_parallel=2)
_text = st.text(max_size=8)
_optional_text = st.none() | _text
_optional_int = st.none() | st.integers(-5, 5)
VALUES = st.tuples(
    _text, _text, _text, _optional_text, _optional_text, _optional_int, _optional_int, _optional_text,
    st.sampled_from([None, ROUTE]), st.sampled_from([BUILT_IN, "project:/x/a.toml"]),
)  # fmt: skip


def test_the_constructor_takes_what_the_generated_one_takes() -> None:
    def described(cls: type) -> list[tuple[str, Any, Any]]:
        return [(p.name, p.default, p.kind) for p in inspect.signature(cls).parameters.values()]

    assert described(Profile) == described(REFERENCE)
    assert [f.name for f in dataclasses.fields(Profile)] == [f.name for f in dataclasses.fields(REFERENCE)]
    assert Profile.__match_args__ == REFERENCE.__match_args__  # type: ignore[attr-defined]


@given(VALUES, VALUES)
def test_repr_eq_and_hash_are_the_generated_ones(first: tuple[Any, ...], second: tuple[Any, ...]) -> None:
    ours, theirs = (Profile(*first), Profile(*second)), (REFERENCE(*first), REFERENCE(*second))
    assert [repr(p) for p in ours] == [repr(p) for p in theirs]
    assert [hash(p) for p in ours] == [hash(p) for p in theirs]
    assert (ours[0] == ours[1], ours[0] != ours[1]) == (theirs[0] == theirs[1], theirs[0] != theirs[1])
    assert ours[0] == Profile(*first) and hash(ours[0]) == hash(Profile(*first))
    assert dataclasses.asdict(ours[0]) == dataclasses.asdict(theirs[0])


def test_keywords_defaults_replace_and_frozen() -> None:
    profile = Profile(name="p", base_url="http://127.0.0.1:1/v1", model="m")
    assert (profile.key_env, profile.route, profile.source) == (None, None, BUILT_IN)
    assert dataclasses.replace(profile, model="n") == Profile("p", "http://127.0.0.1:1/v1", "n")
    assert profile != REFERENCE("p", "http://127.0.0.1:1/v1", "m")  # another class: never equal, as generated
    assert (profile == object()) is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile.model = "n"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del profile.model  # type: ignore[misc]
    with pytest.raises(TypeError):
        Profile("p", "u")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Profile("p", "u", "m", colour="red")  # type: ignore[call-arg]
