"""`dataclass`, made when the class is first instantiated rather than when its module is imported.

`dataclasses.dataclass` writes and compiles the source of every method it adds (about 1 ms a frozen class on
a 2-core machine), and a command instantiates a third of the classes it imports: `doctor --offline` imports
36 and makes 12. Until then the class carries only an `__init__` that makes it a dataclass, with the options
it was given, and then runs the `__init__` made for it. Its bases that are still waiting are made first, so
a subclass sees its bases' fields. A class that writes its own `__init__`, or asks for slots (a new class
object, which cannot be swapped in later), is made at once.

When it is made, the plain kind (the options init, repr, eq and frozen; fields with a default or a
default_factory, repr and compare; no dataclass base, ClassVar, InitVar or KW_ONLY; no method written by hand
that an option asks dataclasses to write) gets at most its `__init__` compiled: its `__repr__`, `__eq__`,
`__hash__` and frozen `__setattr__` are shared functions that read the field names, with the results
dataclasses' own give (tests/test_lazyclass.py compares each of agentcfg's classes with the one dataclasses
makes). Every other class is made by dataclasses.

Type checkers see `dataclasses.dataclass` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:
    import _thread
    import operator
    import sys

    _OPTIONS = "__lazyclass_options__"
    _LOCK = _thread.RLock()  # two threads that instantiate a waiting class first: one makes it

    def dataclass(cls: type | None = None, /, **options: Any) -> Any:
        if cls is None:
            return lambda cls: _defer(cls, options)
        return _defer(cls, options)

    def _defer(cls: type, options: dict[str, Any]) -> type:
        if options.get("slots") or options.get("init") is False or "__init__" in cls.__dict__:
            return _make(cls, options)

        def first_init(self: Any, *args: Any, **kwargs: Any) -> None:
            realize(cls)
            first_init.made(self, *args, **kwargs)  # type: ignore[attr-defined]

        setattr(cls, _OPTIONS, (options, first_init))
        cls.__init__ = first_init  # type: ignore[misc]
        return cls

    def realize(cls: type) -> None:
        """Make `cls` and every base of it that is still waiting a dataclass, the furthest base first."""
        with _LOCK:
            for base in reversed(cls.__mro__):
                if _OPTIONS in base.__dict__:
                    options, stub = base.__dict__[_OPTIONS]
                    delattr(base, _OPTIONS)
                    # Someone may have put their own __init__ over the stub (a test wrapping it to watch): the
                    # class is made without it, and it is put back; the stub calls the __init__ made.
                    theirs = base.__dict__["__init__"]
                    delattr(base, "__init__")
                    _make(base, options)
                    stub.made = base.__dict__["__init__"]
                    if theirs is not stub:
                        base.__init__ = theirs  # type: ignore[misc]

    def _make(cls: type, options: dict[str, Any]) -> type:
        import dataclasses

        realize(cls)  # the bases still waiting, before dataclasses reads their fields
        if _plain(cls, options):
            return cls
        made = dataclasses.dataclass(cls, **options)
        assert options.get("slots") or made is cls
        return made

    _OPTIONS_PLAIN = frozenset(("init", "repr", "eq", "frozen"))

    def _written(cls: type, shown: bool, eq: bool, frozen: bool) -> bool:
        """Whether the class writes a method the options would have dataclasses write (dataclasses then keeps
        the class's, and decides on __hash__ by a table of its own): left to dataclasses."""
        written = cls.__dict__
        return (
            "__match_args__" in written
            or (shown and "__repr__" in written)
            or (eq and ("__eq__" in written or "__hash__" in written))
            or (frozen and ("__setattr__" in written or "__delattr__" in written))
        )

    _PSEUDO = ("ClassVar", "InitVar", "KW_ONLY", "typing.", "dataclasses.")
    # Whether this Python's dataclasses keeps what the plain kind writes: 3.10's and 3.11's six options in
    # __dataclass_params__. 3.12 keeps ten and 3.13 adds __replace__: there dataclasses makes every class (still
    # at its first instance).
    _KNOWN = sys.version_info < (3, 12)

    def _plain(cls: type, options: dict[str, Any]) -> bool:
        """Make `cls` a dataclass here if it is of the plain kind (the module docstring); False if it is not."""
        import dataclasses

        init, shown, eq, frozen = (options.get(name, name != "frozen") for name in ("init", "repr", "eq", "frozen"))
        if not _OPTIONS_PLAIN.issuperset(options) or not cls.__doc__ or _written(cls, shown, eq, frozen):
            return False
        if not _KNOWN:
            return False
        if any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
            return False
        annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 - as dataclasses reads them
        fields: dict[str, dataclasses.Field[Any]] = {}
        for name, kind in annotations.items():
            if not isinstance(kind, str) or kind.startswith(_PSEUDO):
                return False
            given = cls.__dict__.get(name, dataclasses.MISSING)
            if isinstance(given, dataclasses.Field):
                if given.hash is not None or not given.init or given.metadata or given.kw_only is True:
                    return False
                made = given
            else:
                if given is not dataclasses.MISSING and given.__class__.__hash__ is None:
                    return False  # a mutable default: dataclasses' ValueError says why
                made = dataclasses.field(default=given)
            made.name, made.type, made.kw_only = name, kind, False  # type: ignore[assignment]
            made._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
            fields[name] = made
        made_init = _init(cls, list(fields.values()), frozen) if init else None
        if init and made_init is None:
            return False
        for made in fields.values():  # a class attribute is the default, as dataclasses leaves it
            if isinstance(cls.__dict__.get(made.name), dataclasses.Field):
                if made.default is dataclasses.MISSING:
                    delattr(cls, made.name)
                else:
                    setattr(cls, made.name, made.default)
        cls.__dataclass_params__ = dataclasses._DataclassParams(  # type: ignore[attr-defined]
            init, shown, eq, False, False, frozen
        )
        cls.__dataclass_fields__ = fields  # type: ignore[attr-defined]
        if made_init is not None and "__init__" not in cls.__dict__:  # one written by hand stays, as dataclasses
            _method(cls, "__init__", made_init)
        compared = _values(tuple(f.name for f in fields.values() if f.compare))
        if shown:
            _method(cls, "__repr__", _repr(tuple(f.name for f in fields.values() if f.repr)))
        if eq:
            _method(cls, "__eq__", _eq(compared))
            if frozen:
                _method(cls, "__hash__", _hash(compared))
            else:
                cls.__hash__ = None  # type: ignore[assignment]  # as dataclasses: equal by value, so not hashable
        if frozen:
            names = tuple(fields)
            _method(cls, "__setattr__", _setattr(cls, names))
            _method(cls, "__delattr__", _delattr(cls, names))
        cls.__match_args__ = tuple(fields)  # type: ignore[attr-defined]
        return True

    def _init(cls: type, fields: list[Any], frozen: bool) -> Any:
        """The `__init__` dataclasses would write, compiled here; None when dataclasses must say what is wrong."""
        import dataclasses

        scope: dict[str, Any] = {"__object__": object, "_HAS_DEFAULT_FACTORY": dataclasses._HAS_DEFAULT_FACTORY}  # type: ignore[attr-defined]
        params, lines, defaulted = ["self"], [], False
        for f in fields:
            value = f.name
            if f.default_factory is not dataclasses.MISSING:
                scope[f"_factory_{f.name}"] = f.default_factory
                params.append(f"{f.name}: _type_{f.name} = _HAS_DEFAULT_FACTORY")
                value = f"_factory_{f.name}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}"
            elif f.default is not dataclasses.MISSING:
                scope[f"_default_{f.name}"] = f.default
                params.append(f"{f.name}: _type_{f.name} = _default_{f.name}")
            elif defaulted:
                return None  # a field without a default after one with
            else:
                params.append(f"{f.name}: _type_{f.name}")
            defaulted = (
                defaulted or f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            )
            scope[f"_type_{f.name}"] = f.type
            setter = f"__object__.__setattr__(self, {f.name!r}, {value})" if frozen else f"self.{f.name} = {value}"
            lines.append(f"  {setter}")
        if hasattr(cls, "__post_init__"):
            lines.append("  self.__post_init__()")
        source = f"def __init__({', '.join(params)}) -> None:\n" + ("\n".join(lines) or "  pass") + "\n"
        namespace: dict[str, Any] = {}
        # Compiled as dataclasses compiles it: without this module's `from __future__ import annotations`, so the
        # annotations are the field types as written, not the names of the variables that hold them.
        code = compile(source, "<string>", "exec", dont_inherit=True)
        exec(code, scope, namespace)  # the source is ours; the names and types it reads are in scope
        return namespace["__init__"]

    def _method(cls: type, name: str, function: Any) -> None:
        function.__qualname__ = f"{cls.__qualname__}.{function.__name__}"
        setattr(cls, name, function)

    def _values(names: tuple[str, ...]) -> Any:
        """A function giving an instance's field values as one tuple (dataclasses compares and hashes tuples)."""
        if len(names) > 1:
            return operator.attrgetter(*names)
        if names:
            one = operator.attrgetter(names[0])
            return lambda self: (one(self),)
        return lambda self: ()

    def _repr(names: tuple[str, ...]) -> Any:
        running: set[tuple[int, int]] = set()  # a repr that reaches itself says "...", as dataclasses' does

        def __repr__(self: Any) -> str:
            key = id(self), _thread.get_ident()
            if key in running:
                return "..."
            running.add(key)
            try:
                shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
                return f"{self.__class__.__qualname__}({shown})"
            finally:
                running.discard(key)

        return __repr__

    def _eq(values: Any) -> Any:
        def __eq__(self: Any, other: Any) -> Any:
            if other.__class__ is self.__class__:
                return values(self) == values(other)
            return NotImplemented

        return __eq__

    def _hash(values: Any) -> Any:
        def __hash__(self: Any) -> int:
            return hash(values(self))

        return __hash__

    def _setattr(cls: type, names: tuple[str, ...]) -> Any:
        from dataclasses import FrozenInstanceError

        def __setattr__(self: Any, field: str, value: Any) -> None:
            if type(self) is cls or field in names:
                raise FrozenInstanceError(f"cannot assign to field {field!r}")
            super(cls, self).__setattr__(field, value)

        return __setattr__

    def _delattr(cls: type, names: tuple[str, ...]) -> Any:
        from dataclasses import FrozenInstanceError

        def __delattr__(self: Any, field: str) -> None:
            if type(self) is cls or field in names:
                raise FrozenInstanceError(f"cannot delete field {field!r}")
            super(cls, self).__delattr__(field)

        return __delattr__
