"""agentcfg.lazyclass: a dataclass made at its first instance, the same class dataclasses would have made.

Annotations are strings here, as in every agentcfg module (`from __future__ import annotations`).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import math
import subprocess
import sys
import threading
from dataclasses import field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcfg import lazyclass
from agentcfg.lazyclass import dataclass as lazy
from tests.conftest import REPO


def _classes(make: Any) -> dict[str, type]:
    """The same class bodies, made by `make` (dataclasses.dataclass or lazyclass.dataclass)."""

    @make(frozen=True)
    class Frozen:
        """Frozen, with a default, a factory, a field left out of repr and one out of comparisons."""

        a: int
        b: str = "x"
        c: list[int] = field(default_factory=list)
        d: float = field(default=0.0, repr=False)
        e: int = field(default=0, compare=False)

    @make
    class Mutable:
        """Neither frozen nor hashable; runs its __post_init__."""

        a: int
        b: Any = None

        def __post_init__(self) -> None:
            self.b = ("seen", self.b)

    @make(frozen=True)
    class One:
        """One field: compared and hashed as a one-tuple."""

        a: float

    @make(frozen=True)
    class Empty:
        """No field at all."""

    @make(eq=False)
    class Identity:
        """Compared by identity (eq=False): object's own == and hash."""

        a: int = 0

    @make(frozen=True, init=False, repr=False, eq=False)
    class Written:
        """Its own __init__, __repr__ and __eq__ (as agentcfg's Profile): dataclasses adds fields and frozenness."""

        a: int
        b: str = "b"

        def __init__(self, a: int, b: str = "b") -> None:
            object.__setattr__(self, "a", a)
            object.__setattr__(self, "b", b * 2)

        def __repr__(self) -> str:
            return f"W<{self.a}, {self.b}>"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Written) and other.a == self.a

        def __hash__(self) -> int:
            return hash(self.a)

    return {c.__name__: c for c in (Frozen, Mutable, One, Empty, Identity, Written)}


def _described(cls: type) -> dict[str, Any]:
    """What dataclasses' own functions and introspection see of a dataclass."""
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    return {
        "signature": str(inspect.signature(cls)),
        "fields": [
            (
                f.name,
                f.type,
                repr(f.default),
                repr(f.default_factory),
                f.init,
                f.repr,
                f.compare,
                f.hash,
                f.kw_only,
                f._field_type.name,
            )  # type: ignore[attr-defined]
            for f in dataclasses.fields(cls)
        ],
        "params": [params.init, params.repr, params.eq, params.order, params.unsafe_hash, params.frozen],
        "match_args": cls.__dict__.get("__match_args__"),
        "methods": sorted(
            k for k in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__") if k in cls.__dict__
        ),
        "hash": "none" if cls.__hash__ is None else "own" if "__hash__" in cls.__dict__ else "inherited",
        "class_defaults": {f.name: repr(cls.__dict__.get(f.name, "absent")) for f in dataclasses.fields(cls)},
        "doc": cls.__doc__,
        "qualnames": sorted(getattr(cls.__dict__[k], "__qualname__", "") for k in ("__init__", "__repr__")),
    }


def _outcome(call: Any) -> tuple[str, str]:
    try:
        return "ok", repr(call())
    except Exception as exc:  # the same exception with the same message is the same outcome
        return type(exc).__name__, str(exc)


def test_a_class_waits_until_its_first_instance() -> None:
    made = _classes(lazy)["Frozen"]
    assert "__dataclass_fields__" not in made.__dict__
    assert not dataclasses.is_dataclass(made)
    made(1)
    assert dataclasses.is_dataclass(made)


def test_each_kind_is_described_as_dataclasses_describes_it() -> None:
    ours, theirs = _classes(lazy), _classes(dataclasses.dataclass)
    for name, cls in ours.items():
        lazyclass.realize(cls)  # type: ignore[attr-defined]
        assert _described(cls) == _described(theirs[name]), name
    assert "__object__" in ours["Frozen"].__init__.__globals__  # the plain kind: made here, not by dataclasses


_INTS = st.integers(-3, 3)
_FLOATS = st.sampled_from([0.0, -0.0, 1.5, math.nan, math.inf])


@given(_INTS, st.text(max_size=3), st.lists(_INTS, max_size=2), _FLOATS, _INTS, _INTS, st.text(max_size=2))
def test_instances_behave_as_dataclasses_instances(
    a: int, b: str, c: list[int], d: float, e: int, other: int, word: str
) -> None:
    ours, theirs = _classes(lazy), _classes(dataclasses.dataclass)
    for classes in (ours, theirs):
        classes["first"] = classes["Frozen"](a, b, c, d, e)  # type: ignore[assignment]
        classes["second"] = classes["Frozen"](other, b, c, d, other)  # type: ignore[assignment]
    seen = []
    for classes in (ours, theirs):
        first, second = classes["first"], classes["second"]
        one, mutable = classes["One"](d), classes["Mutable"](a, word)
        seen.append([
            repr(first), first == second, first != second, _outcome(lambda first=first: hash(first)),
            first == copy.copy(first), copy.deepcopy(first) == first, first == (a, b, c, d, e),
            _outcome(lambda first=first: setattr(first, "a", 1)), _outcome(lambda first=first: delattr(first, "b")),
            _outcome(lambda first=first: setattr(first, "new", 1)),
            repr(dataclasses.replace(first, a=other)), dataclasses.asdict(first), dataclasses.astuple(first),
            repr(one), one == one, one == classes["One"](d), hash(one) == hash((d,)),
            repr(mutable), mutable == classes["Mutable"](a, word), _outcome(lambda mutable=mutable: hash(mutable)),
            repr(classes["Empty"]()), classes["Empty"]() == classes["Empty"](), hash(classes["Empty"]()),
            classes["Identity"](a) == classes["Identity"](a), repr(classes["Identity"](a)),
            _outcome(lambda classes=classes: classes["Frozen"]()),
            _outcome(lambda classes=classes: classes["One"](1, 2)),
            _outcome(lambda classes=classes: classes["One"](b=1)),
            repr(classes["Written"](a, word)), dataclasses.replace(classes["Written"](a, word), a=other).b,
            _outcome(lambda classes=classes: setattr(classes["Written"](a), "b", "")),
            classes["Written"](a) == classes["Written"](a, "other"), hash(classes["Written"](a)),
        ])  # fmt: skip
    assert seen[0] == seen[1]


def test_a_repr_that_reaches_itself_says_so_as_dataclasses_does() -> None:
    ours, theirs = _classes(lazy)["Mutable"](1), _classes(dataclasses.dataclass)["Mutable"](1)
    ours.b, theirs.b = [ours], [theirs]
    assert repr(ours) == repr(theirs)
    assert repr(ours).endswith(".Mutable(a=1, b=[...])")


def test_a_subclass_made_first_makes_its_waiting_base_first() -> None:
    def made(make: Any) -> type:
        @make(frozen=True)
        class Base:
            """The base."""

            a: int
            b: int = 2

        @make(frozen=True)
        class Child(Base):
            """Adds a field."""

            c: int = 3

        return Child

    ours, theirs = made(lazy), made(dataclasses.dataclass)
    assert repr(ours(1, c=4)) == repr(theirs(1, c=4))
    assert repr(ours(1, c=4)).endswith(".Child(a=1, b=2, c=4)")
    assert _described(ours) == _described(theirs)
    assert _described(ours.__mro__[1]) == _described(theirs.__mro__[1])


def test_a_plain_subclass_calling_the_waiting_init_gets_the_dataclass_one() -> None:
    @lazy(frozen=True)
    class Base:
        """The base."""

        a: int

    class Child(Base):
        def __init__(self, a: int) -> None:
            super().__init__(a * 2)

    assert repr(Child(2)) == "test_a_plain_subclass_calling_the_waiting_init_gets_the_dataclass_one.<locals>.Child(a=4)"
    assert Base(1) == Base(1) and Child(1) != Base(2)  # a subclass is another class, as dataclasses compares


def test_threads_that_meet_a_waiting_class_at_once_each_get_an_instance() -> None:
    made = _classes(lazy)["Frozen"]
    start, got, errors = threading.Barrier(8), [], []

    def build(n: int) -> None:
        start.wait()
        try:
            got.append(made(n))
        except Exception as exc:  # pragma: no cover  # the failure the test looks for
            errors.append(exc)

    threads = [threading.Thread(target=build, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(x.a for x in got) == list(range(8))


@pytest.mark.parametrize(
    "body",
    [
        "a: list = []",  # a mutable default
        "a: int = 1\n    b: int",  # a field without a default after one with
        "a: ClassVar[int] = 1\n    b: int = 2",  # not a field: dataclasses decides
        "a: int = field(default=1, metadata={'x': 1})",
        "a: int = field(default=1, hash=True)",
        "a: int = field(default=1, kw_only=True)\n    b: int = 2",
    ],
)
def test_what_the_plain_kind_does_not_cover_is_left_to_dataclasses(body: str) -> None:
    source = f"class C:\n    'doc'\n    {body}\n"

    def outcome(make: Any) -> tuple[str, str]:
        scope: dict[str, Any] = {"field": field, "ClassVar": Any}
        exec("from __future__ import annotations\n" + source, scope)

        def build() -> Any:
            cls = make(frozen=True)(scope["C"])
            return _described(cls)

        return _outcome(build)

    theirs = outcome(dataclasses.dataclass)
    ours = outcome(lambda **o: lambda cls: (lazyclass.realize(lazy(**o)(cls)), cls)[1])  # type: ignore[attr-defined]
    assert ours == theirs


def test_slots_and_a_written_init_are_made_at_once() -> None:
    @lazy(slots=True)
    class Slotted:
        """Slots make a new class."""

        a: int

    @lazy
    class Written:
        """Its own __init__."""

        a: int = 0

        def __init__(self) -> None:
            self.a = 5

    assert dataclasses.is_dataclass(Slotted) and Slotted.__slots__ == ("a",)
    assert dataclasses.is_dataclass(Written) and repr(Written()).endswith(".Written(a=5)")


# Every class agentcfg makes with lazyclass, made both ways from the same body: the same to dataclasses' eyes.
_PARITY = r"""
import copy, dataclasses, importlib, json, pkgutil, sys
import agentcfg
from agentcfg import lazyclass
for info in pkgutil.walk_packages(agentcfg.__path__, "agentcfg."):
    if not info.name.endswith("__main__"):
        importlib.import_module(info.name)
from tests.test_lazyclass import _described
waiting = [v for name, m in list(sys.modules.items()) if name.startswith("agentcfg") for v in vars(m).values()
           if isinstance(v, type) and v.__module__ == name and "__lazyclass_options__" in v.__dict__]
differ, plain = [], 0
for cls in dict.fromkeys(waiting):
    for base in cls.__mro__[1:]:
        lazyclass.realize(base)
    options, _ = cls.__dict__["__lazyclass_options__"]
    space = {k: copy.copy(v) if isinstance(v, dataclasses.Field) else v for k, v in cls.__dict__.items()
             if k not in ("__init__", "__lazyclass_options__", "__dict__", "__weakref__")}
    twin = type(cls.__name__, cls.__bases__, space)
    twin.__qualname__ = cls.__qualname__
    dataclasses.dataclass(twin, **options)
    lazyclass.realize(cls)
    plain += "__object__" in cls.__init__.__globals__
    if _described(cls) != _described(twin):
        differ.append(f"{cls.__module__}.{cls.__qualname__}")
print(json.dumps({"classes": len(dict.fromkeys(waiting)), "plain": plain, "differ": differ}))
"""


def test_every_agentcfg_class_is_the_one_dataclasses_makes(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PARITY], cwd=REPO, env={"PYTHONPATH": str(REPO), "HOME": str(tmp_path)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["differ"] == []
    assert seen["classes"] > 60 and seen["plain"] > 50  # most of them: the plain kind is the common one


def test_where_dataclasses_keeps_more_it_makes_every_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python 3.12 keeps ten options in __dataclass_params__, 3.13 adds __replace__: the plain kind writes what
    3.10 and 3.11 keep, so elsewhere dataclasses makes the class (still at its first instance)."""
    monkeypatch.setattr(lazyclass, "_KNOWN", False)
    made = _classes(lazy)["Frozen"]
    assert "__dataclass_fields__" not in made.__dict__
    made(1)
    assert "__object__" not in made.__init__.__globals__  # dataclasses' own __init__
    assert _described(made) == _described(_classes(dataclasses.dataclass)["Frozen"])
