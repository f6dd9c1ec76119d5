"""Provider profiles: built-in presets, overridden by name by the user's own TOML files.

A profile says where a provider's API is, which model to use, how large its window is and how the
key is obtained: never the key itself. Every file is validated against
schemas/profile.schema.json; a bad one stops every command before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agentcfg import env, fields
from agentcfg.errors import AgentcfgError
from agentcfg.resources import data_dir

# tomli is the stdlib's tomllib, but its wheels are compiled (mypyc): twice as fast to read a file,
# and quicker to import. Without a wheel for this platform, the stdlib's copy does the same work.
try:
    import tomli as tomllib
except ImportError:  # pragma: no cover
    import tomllib  # type: ignore[no-redef]

# \A...\Z (not ^...$): `$` also matches before a trailing newline, and NAME_RE.match is used as a test.
NAME_RE = re.compile(rf"\A{fields.NAME_PATTERN}\Z")
BUILT_IN = "built-in"
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}
# Written where a keyless server still needs some key (qwen-code, Claude Code refuse to run without).
PLACEHOLDER_KEY = "agentcfg-no-key"
# Values people (and agentcfg) put where a key must be but none is needed: never a real key.
PLACEHOLDER_KEYS = {PLACEHOLDER_KEY, "sk-local", "sk-local-anything", "empty", "none", "dummy", "sk-xxx",
                    "sk-dummy", "no-key", "token", "x"}  # fmt: skip


def is_placeholder(value: str) -> bool:
    return value.lower() in PLACEHOLDER_KEYS


def is_loopback(host: str) -> bool:
    """localhost or a loopback address (not a DNS name that merely starts with "127.")."""
    if host.lower() in LOOPBACK_HOSTS:
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Profile:
    name: str
    base_url: str
    model: str
    anthropic_base_url: str | None = None
    key_env: str | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    description: str | None = None
    source: str = BUILT_IN

    @property
    def needs_key(self) -> bool:
        return self.key_env is not None

    @property
    def is_local(self) -> bool:
        from urllib.parse import urlsplit

        return is_loopback(urlsplit(self.base_url).hostname or "")

    @property
    def label(self) -> str:
        return self.description or self.name

    def fields(self) -> dict[str, Any]:
        """The TOML/JSON fields, without name and source; unset ones left out."""
        data = asdict(self)
        del data["name"], data["source"]
        return {k: v for k, v in data.items() if v is not None}


def profiles_dir(environ: env.Environ) -> Path:
    return env.config_dir(environ) / "profiles"


def schema_text() -> str:
    return (data_dir("schemas") / "profile.schema.json").read_text(encoding="utf-8")


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
        return hashlib.sha256(f"{self.schema}\0{text}".encode()).hexdigest()

    def save(self) -> None:
        if not self.added:
            return
        from agentcfg.fsutil import private_dir, write_private

        try:
            private_dir(self.path.parent)
            write_private(self.path, "\n".join(sorted(self.known | self.added)) + "\n")
        except OSError:
            pass  # only a cache


def validate(data: dict[str, Any], schema_text: str, where: str) -> None:
    import jsonschema

    validator = jsonschema.Draft202012Validator(json.loads(schema_text))
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(e.path), e.message))
    if errors:
        error = errors[0]
        field = ".".join(str(p) for p in error.path)
        if error.validator == "additionalProperties":
            unknown = sorted(set(data) - set(error.schema.get("properties", {})))
            message = f"unknown field {', '.join(repr(u) for u in unknown)}"
        elif error.validator == "required":
            message = error.message.replace("is a required property", "is required but missing")
        else:
            message = f"field {field!r}: {error.message}"
        allowed = ", ".join(json.loads(schema_text)["properties"])
        raise AgentcfgError(message, where=where, hint=f"Fields a profile may have: {allowed}.")


def parse(name: str, text: str, source: str, cache: _ValidatedCache | None = None) -> Profile:
    """Parse and validate one profile file's text.

    fields.check runs on every parse, before the schema and whatever the cache knows: a text cached
    by an agentcfg whose schema was weaker is still refused, and its message is the clearer one.
    """
    where = source if source != BUILT_IN else f"built-in profile {name}"
    if not fields.valid_name(name):
        raise AgentcfgError(
            f"{name!r} is not a valid profile name (lower-case letters, digits, '-' and '_')",
            where=where,
            hint="Rename the file.",
        )
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AgentcfgError(f"does not parse as TOML: {exc}", where=where) from None
    fields.check(data, where, name=name)
    digest = cache.digest(text) if cache else None
    if cache is None or digest not in cache.known:
        validate(data, cache.schema if cache else schema_text(), where)
        if cache and digest:
            cache.added.add(digest)
    return Profile(name=name, source=source, **data)


def _read_dir(directory: Path, source_of, cache: _ValidatedCache) -> dict[str, Profile]:
    found: dict[str, Profile] = {}
    try:
        paths = sorted(directory.glob("*.toml"))
    except OSError:
        return found
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AgentcfgError(f"cannot read profile: {exc}", where=str(path)) from None
        found[path.stem] = parse(path.stem, text, source_of(path), cache)
    return found


PROJECT = "project:"  # the source prefix of a profile from a project's .agentcfg/profiles/


def project_profiles_dir(environ: env.Environ, cwd: Path | None = None) -> Path | None:
    """The nearest `.agentcfg/profiles/` from the working directory up (HOME itself is not a project)."""
    start = (cwd or Path.cwd()).resolve()
    home = env.home(environ).resolve()
    for directory in (start, *start.parents):
        if directory == home:
            return None
        candidate = directory / ".agentcfg" / "profiles"
        if candidate.is_dir():
            return candidate
    return None


def _add_project(profiles: dict[str, Profile], project: dict[str, Profile]) -> None:
    """Project profiles add names; they never replace yours, nor borrow another profile's key variable
    (a cloned repository must not be able to send your gateway key to a host of its choosing)."""
    variables = {p.key_env: p.name for p in profiles.values() if p.key_env}
    for name, profile in project.items():
        where = profile.source.removeprefix(PROJECT)
        if name in profiles:
            kind = "built-in" if profiles[name].source == BUILT_IN else "user"
            raise AgentcfgError(
                f"this project's profile {name!r} has the name of a {kind} profile",
                where=where,
                hint="A project profile never replaces one of yours: rename the file.",
            )
        if profile.key_env in variables:
            raise AgentcfgError(
                f"this project's profile {name!r} reads the key variable {profile.key_env} of profile "
                f"{variables[profile.key_env]!r}",
                where=where,
                hint="A project profile must use a key variable of its own, so your key never goes to its host.",
            )
        profiles[name] = profile


def load_all(environ: env.Environ, cwd: Path | None = None) -> dict[str, Profile]:
    """Built-ins, then the user's profiles (which override built-ins of the same name), then the
    current project's (which only add names)."""
    cache = _ValidatedCache(environ)
    profiles = _read_dir(data_dir("profiles"), lambda _p: BUILT_IN, cache)
    profiles.update(_read_dir(profiles_dir(environ), str, cache))
    if project := project_profiles_dir(environ, cwd):
        _add_project(profiles, _read_dir(project, lambda p: PROJECT + str(p), cache))
    cache.save()
    from agentcfg import redact

    for profile in profiles.values():
        if profile.key_env:
            redact.register(environ.get(profile.key_env))
    return profiles


def get(name: str, environ: env.Environ) -> Profile:
    profiles = load_all(environ)
    if name in profiles:
        return profiles[name]
    import difflib

    close = difflib.get_close_matches(name, profiles, n=1)
    suggestion = f" Did you mean {close[0]!r}?" if close else ""
    raise AgentcfgError(
        f"unknown profile {name!r}.{suggestion} Known profiles: {', '.join(sorted(profiles))}.",
        hint="List them with `agentcfg profile list`; "
        "add one with `agentcfg profile add NAME --base-url URL --model ID`.",
    )


def read_source(source: str, environ: env.Environ) -> str:
    """A profile's TOML from a file or an http(s) URL (`profile add --from`): UTF-8, at most
    fsutil.PROFILE_LIMIT, and for a file a regular one (a FIFO never hangs, /dev/zero never fills memory)."""
    from agentcfg import fsutil

    if source.startswith(("http://", "https://")):
        data = _fetch(source, fsutil.PROFILE_LIMIT)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise AgentcfgError(
                f"{source} is not UTF-8 text (byte {exc.start})", hint="Serve the TOML as UTF-8."
            ) from None
    text = fsutil.read_text(Path(source).expanduser(), source, fsutil.PROFILE_LIMIT)
    if text is None:
        raise AgentcfgError(
            f"cannot read {source}: no such file", hint="Give the path of a profile TOML file, or a URL."
        )
    return text


# `profile add --from URL`: give up on a server that trickles bytes (each read also times out at 10 s).
FETCH_DEADLINE = 30.0


def _fetch(url: str, limit: int) -> bytes:
    """The body at an http(s) URL, streamed and abandoned past `limit` bytes or FETCH_DEADLINE seconds."""
    import time

    import httpx

    hint = "Check the URL, or save the file and give its path."
    started, chunks, size = time.monotonic(), [], 0
    try:
        with httpx.stream("GET", url, timeout=10, follow_redirects=True) as response:
            response.raise_for_status()
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > limit:
                    raise AgentcfgError(
                        f"{url} sends more than {limit >> 20} MiB, the most a profile may be: not read", hint=hint
                    )
                if time.monotonic() - started > FETCH_DEADLINE:
                    raise AgentcfgError(f"{url} did not send the profile within {FETCH_DEADLINE:.0f} s", hint=hint)
                chunks.append(chunk)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise AgentcfgError(f"could not fetch {url}: {exc}", hint=hint) from None
    return b"".join(chunks)


def to_toml(profile: Profile) -> str:
    """A profile file's text (the key itself is never part of a profile)."""
    lines = [f"# agentcfg profile {profile.name}"]
    for key, value in profile.fields().items():
        lines.append(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"
