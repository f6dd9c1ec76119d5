"""Reading one profile file's text into a Profile: TOML, then fields.check, then the JSON schema (whose verdict
is put in words), with a cache of the texts already validated (importing jsonschema is the slow part).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from agentcfg import env, fields
from agentcfg.errors import AgentcfgError
from agentcfg.fsutil import read_limited, write_private
from agentcfg.profile_model import BUILT_IN, PROJECT, Profile, Route
from agentcfg.resources import data_dir


def toml_reader() -> Any:
    """tomli, or the stdlib's tomllib: imported when a text is parsed, not when a parsed one is remembered
    (_ParsedCache: with datetime, which tomli imports, a twentieth of `agentcfg key get`).

    tomli is the stdlib's tomllib, but its wheels are compiled (mypyc): twice as fast to read a file,
    and quicker to import. Without a wheel for this platform, the stdlib's copy does the same work."""
    try:
        import tomli as tomllib
    except ImportError:  # pragma: no cover
        import tomllib  # type: ignore[no-redef, import-not-found]  # checked as 3.10, which has no tomllib
    return tomllib


def schema_text() -> str:
    return (data_dir("schemas") / "profile.schema.json").read_text(encoding="utf-8")


def _blake2b(text: str, person: bytes) -> str:
    """A digest of `text`, without hashlib, which loads OpenSSL first: a twentieth of `agentcfg key get` (which
    loads _blake2 already: agentcfg.fingerprint)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover
        from hashlib import blake2b
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=32, person=person).hexdigest()


class _ValidatedCache:
    """Digests of (schema, profile text) pairs already validated.

    Importing jsonschema costs more than the rest of `agentcfg switch` together, so a profile file
    is validated once per content and schema version, like Python caches bytecode.
    """

    def __init__(self, environ: env.Environ) -> None:
        self.path = env.state_dir(environ) / "validated-profiles"
        try:
            self.known = set(self.path.read_text(encoding="ascii").split())
        except (OSError, UnicodeDecodeError):
            self.known = set()
        self.added: set[str] = set()
        self.schema = schema_text()

    def digest(self, text: str) -> str:
        return _blake2b(f"{self.schema}\0{text}", b"")

    def save(self) -> None:
        # Only into a state dir a switch made: reading profiles (status, a refused init) creates nothing.
        if not self.added or not self.path.parent.is_dir():
            return
        with contextlib.suppress(OSError):  # only a cache
            write_private(self.path, "\n".join(sorted(self.known | self.added)) + "\n")


def _plain(value: Any) -> bool:
    """Whether JSON gives `value` back as it is: text, numbers, true/false, lists and tables (not a TOML date)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return isinstance(value, (str, int, float, bool))


class _ParsedCache:
    """What the TOML reader made of a profile text, by the text's digest: a text read before needs no reader.

    `agentcfg key get` reads one profile file on every start of Claude Code and Codex. Only what the reader
    returned is kept (every check parse makes still runs on it), only for a text that parsed, only as JSON gives
    it back unchanged, and only into a state dir a command made; the newest LIMIT texts.
    """

    LIMIT = 16

    def __init__(self, environ: env.Environ) -> None:
        self.path = env.state_dir(environ) / "parsed-profiles"
        self.entries: dict[str, str] = {}
        self.added = False
        with contextlib.suppress(AgentcfgError, ValueError):  # none, unreadable or not ours: parse anew
            data = read_limited(self.path, str(self.path), 1 << 20)
            found = json.loads(data) if data else {}
            if isinstance(found, dict):
                self.entries = {k: v for k, v in found.items() if isinstance(v, str)}

    @staticmethod
    def digest(text: str) -> str:
        return _blake2b(text, b"agentcfg-toml")

    def get(self, text: str) -> dict[str, Any] | None:
        """A fresh copy of what the reader made of `text` (the caller may change it), or None."""
        entry = self.entries.get(self.digest(text))
        if entry is None:
            return None
        with contextlib.suppress(ValueError):
            data = json.loads(entry)
            if isinstance(data, dict) and _plain(data):
                return data
        return None

    def put(self, text: str, data: dict[str, Any]) -> None:
        if _plain(data):
            self.entries.pop(key := self.digest(text), None)
            self.entries[key] = json.dumps(data)
            self.added = True

    def save(self) -> None:
        if not self.added or not self.path.parent.is_dir():  # reading a profile creates no directory
            return
        newest = dict(list(self.entries.items())[-self.LIMIT :])
        with contextlib.suppress(OSError):  # only a cache
            write_private(self.path, json.dumps(newest) + "\n")


def read_toml(text: str, where: str, cache: _ParsedCache | None = None) -> dict[str, Any]:
    """A profile file's TOML as data: remembered by `cache`, else read (and then remembered)."""
    if cache is not None and (data := cache.get(text)) is not None:
        return data
    tomllib = toml_reader()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AgentcfgError(f"does not parse as TOML: {exc}", where=where) from None
    except RecursionError:  # tomli's limit on nesting: a hostile file's `a = [[[[...`
        raise AgentcfgError("does not parse as TOML: nested too deeply", where=where) from None
    if cache is not None:
        cache.put(text, data)
    return data


_KINDS = {"integer": "a whole number", "string": "text (in quotes)", "object": "a table", "boolean": "true or false"}
_FOUND = {"str": "text", "int": "a number", "float": "a decimal number", "bool": "true or false", "list": "a list",
          "dict": "a table", "datetime": "a date", "date": "a date", "time": "a time"}  # fmt: skip


def validate(data: dict[str, Any], schema_text: str, where: str) -> None:
    """The schema's verdict, in words: fields.check runs first and explains every rule it shares with the
    schema, so what is left here is types, required and unknown fields (never a pattern or a bound's text)."""
    import jsonschema

    schema = json.loads(schema_text)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(e.path), e.message))
    if not errors:
        return
    error = errors[0]
    field = ".".join(str(p) for p in error.path)
    described = schema["properties"].get(field, {}).get("description")
    hint = described and f"{field}: {described}"
    if error.validator == "additionalProperties":
        unknown = sorted(set(data) - set(error.schema.get("properties", {})))
        message = f"unknown field {', '.join(repr(u) for u in unknown)}"
        hint = f"Fields a profile may have: {', '.join(schema['properties'])}."
    elif error.validator == "required":
        missing = [f for f in schema.get("required", []) if f not in data]
        message = f"field {', '.join(repr(m) for m in missing)} is required but missing"
        hint = "Every profile has base_url and model."
    elif error.validator == "type":
        wanted = error.validator_value if isinstance(error.validator_value, str) else "integer"
        found = type(error.instance).__name__
        message = f"field {field!r} must be {_KINDS.get(wanted, wanted)}, not {_FOUND.get(found, found)}"
    elif error.validator in ("minimum", "maximum"):
        low, high = (error.schema.get("minimum"), error.schema.get("maximum"))
        message = f"field {field!r} must be from {low:,} to {high:,}"
    elif error.validator in ("minLength", "maxLength") and error.instance == "":
        message = f"field {field!r} is empty"
    elif error.validator == "maxLength":
        message = f"field {field!r} is {len(error.instance):,} characters; at most {error.validator_value:,}"
    else:  # a pattern, or the inert rule: fields.check says which part, this only that the value is refused
        message = f"field {field!r} has a value a profile cannot have"
    raise AgentcfgError(message, where=where, hint=hint or None)


def parse(
    name: str, text: str, source: str, cache: _ValidatedCache | None = None, parsed: _ParsedCache | None = None
) -> Profile:
    """Parse and validate one profile file's text.

    fields.check runs on every parse of a user's or a project's file (a built-in, agentcfg's own, is held
    to both by the tests), before the schema and whatever the cache knows: a text cached
    by an agentcfg whose schema was weaker is still refused, and its message is the clearer one. `parsed`
    remembers only the TOML reader's part.
    """
    where = source.removeprefix(PROJECT) if source != BUILT_IN else f"built-in profile {name}"
    if problem := fields.name_problem(name):
        lower = name.lower()
        rename = f"to {lower}.toml" if fields.valid_name(lower) else f"({fields.NAME_RULE})"
        raise AgentcfgError(
            f"the file's name is no profile name: {problem}", where=where, hint=f"Rename the file {rename}."
        )
    data = read_toml(text, where, parsed)
    if source == BUILT_IN:  # agentcfg's own files: tests/test_profiles.py holds them to the rules and the schema
        return Profile(name=name, source=source, **data)
    fields.check(data, where, name=name)
    digest = cache.digest(text) if cache else None
    if cache is None or digest not in cache.known:
        validate(data, cache.schema if cache else schema_text(), where)
        if cache and digest:
            cache.added.add(digest)
    if "route" in data:
        if source.startswith(PROJECT):  # the router would get your legs' keys: a route is only ever your own
            raise AgentcfgError(
                "a project profile cannot be a route (a [route] table): routes are your own",
                where=where,
                hint="Make the route yourself with `agentcfg route add`.",
            )
        data["route"] = Route.from_table(data["route"])
        # else its router would answer anyone, with your keys (on loopback `route serve` adds it: route/spec.py)
        if data["route"].beyond_loopback and not data.get("key_env"):
            raise AgentcfgError(
                f"route {name!r} listens on {data['route'].host}, so it needs key_env (the router key's variable)",
                where=where,
                hint=f"Add it again, which makes the key: `agentcfg route add {name} --force ...` with its options.",
            )
    return Profile(name=name, source=source, **data)
