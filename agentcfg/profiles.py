"""Provider profiles: built-in presets, overridden by name by the user's own TOML files.

A profile says where a provider's API is, which model to use, how large its window is and how the
key is obtained: never the key itself. Every file is validated against
schemas/profile.schema.json; a bad one stops every command before anything is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from agentcfg import env, fields, fsutil, redact
from agentcfg.errors import AgentcfgError
from agentcfg.profile_model import BUILT_IN as BUILT_IN
from agentcfg.profile_model import LOOPBACK_HOSTS as LOOPBACK_HOSTS
from agentcfg.profile_model import NAME_RE as NAME_RE
from agentcfg.profile_model import PLACEHOLDER_KEY as PLACEHOLDER_KEY
from agentcfg.profile_model import PLACEHOLDER_KEYS as PLACEHOLDER_KEYS
from agentcfg.profile_model import PROJECT as PROJECT
from agentcfg.profile_model import Profile as Profile
from agentcfg.profile_model import is_loopback as is_loopback
from agentcfg.profile_model import is_placeholder as is_placeholder
from agentcfg.profile_parse import _ParsedCache
from agentcfg.profile_parse import _ValidatedCache as _ValidatedCache
from agentcfg.profile_parse import parse as parse
from agentcfg.profile_parse import schema_text as schema_text
from agentcfg.profile_parse import toml_reader as toml_reader
from agentcfg.profile_parse import validate as validate
from agentcfg.resources import data_dir

if TYPE_CHECKING:
    from agentcfg import trust  # lazy below: imported where a project is read (`key get` reads none)

# The names above that other modules take from here (`profiles.Profile`) live in profile_model and profile_parse.


def profiles_dir(environ: env.Environ) -> Path:
    return env.config_dir(environ) / "profiles"


def _read_file(path: Path) -> str | None:
    """A user or built-in profile file's text (None when it does not exist): bounded, regular files only."""
    data = fsutil.read_limited(path, str(path), fsutil.PROFILE_LIMIT)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentcfgError(f"cannot read profile: {exc}", where=str(path)) from None


def _read_dir(directory: Path, source_of, cache: _ValidatedCache) -> dict[str, Profile]:
    found: dict[str, Profile] = {}
    try:
        paths = sorted(directory.glob("*.toml"))
    except OSError:
        return found
    for path in paths:
        text = _read_file(path)
        if text is not None:
            found[path.stem] = parse(path.stem, text, source_of(path), cache)
    return found


# What loading profiles had to say (an ignored project, a skipped file), for the CLI to print once per
# command however many times the profiles are read: lines starting "note: " or "warning: ".
_notices: list[str] = []
_said: set[str] = set()


def notices() -> list[str]:
    """The lines not yet printed (and forget them: each is said once per process)."""
    drained = list(_notices)
    _notices.clear()
    return drained


def _say(lines: list[str]) -> None:
    for line in lines:
        if line not in _said:
            _said.add(line)
            _notices.append(line)


def project_profiles_dir(environ: env.Environ, cwd: Path | None = None) -> Path | None:
    """The nearest `.agentcfg/profiles/` from the working directory up (HOME itself is not a project)."""
    try:
        start = (cwd or Path.cwd()).resolve()
    except OSError:  # the working directory was removed
        return None
    home = env.home(environ).resolve()
    for directory in (start, *start.parents):
        if directory == home:
            return None
        candidate = directory / ".agentcfg" / "profiles"
        if candidate.is_dir():
            return candidate if _yours(candidate) else None
    return None


def _yours(profiles_dir: Path) -> bool:
    """Whether you own the project's `.agentcfg` and its `profiles` (as git's safe.directory asks): another
    local user can create /tmp/.agentcfg/profiles, and it must not even show up in your notes."""
    if not hasattr(os, "geteuid"):
        return True
    try:
        return all(path.stat().st_uid == os.geteuid() for path in (profiles_dir.parent, profiles_dir))
    except OSError:
        return False


class ProjectSet(NamedTuple):
    """What a project contributes: the profiles used, the lines to print, and the names left out with why
    (for the unknown-profile error). Not a dataclass: `key get` loads this module and reads no project."""

    profiles: dict[str, Profile]
    notices: list[str]
    ignored: dict[str, tuple[str, str]]  # name -> (why, what to do)


def _names(files: list[str], most: int = 8) -> str:
    from agentcfg import trust  # lazy: `key get` and commands outside a project never read one

    stems = [trust.shown(f.removesuffix(".toml")) for f in files]
    return ", ".join(stems[:most]) + (f" and {len(stems) - most} more" if len(stems) > most else "")


def project_set(
    directory: Path,
    files: list[str],
    record: trust.Record | None,
    read: dict[str, bytes],
    unreadable: dict[str, str],
    known: dict[str, Profile],
    cache: _ValidatedCache | None,
) -> ProjectSet:
    """A project's profiles, given its file names, its trust record and (when there is one) the files read.

    The set is used only when it equals the record exactly; otherwise nothing of it is, with one note.
    In a trusted set, a file that fails to parse, takes a user or built-in profile's name, or reads another
    profile's key variable is skipped with one warning each: the others still work.
    """
    from agentcfg import trust  # lazy: `key get` and commands outside a project never read one

    root = trust.project_root(directory)
    command = trust.trust_command(root)
    if not files:
        return ProjectSet({}, [], {})
    comparison = trust.compare(record, trust.digests(read, unreadable))
    if comparison.state != trust.TRUSTED:
        if comparison.state == trust.UNTRUSTED:
            why = "not trusted"
            listed = files
        else:
            why = f"changed since you trusted them on {record.trusted_at[:10] if record else '?'}"
            listed = sorted(set(files) | set(record.files if record else ()))
            why += f" ({trust.describe(comparison)})"
        problems = "".join(f"; {trust.shown(name)}: {reason}" for name, reason in sorted(unreadable.items()))
        note = (
            f"note: ignoring this project's profiles {_names(listed)} ({directory}): {why}{problems}. "
            f"Check them, then run `{command}` to use them."
        )
        hint = f"Check {directory}, then run `{command}` to use its profiles."
        return ProjectSet({}, [note], {f.removesuffix(".toml"): (why, hint) for f in files})
    used: dict[str, Profile] = {}
    lines: list[str] = []
    ignored: dict[str, tuple[str, str]] = {}
    variables = {p.key_env: p.name for p in known.values() if p.key_env}
    for filename in files:
        name, where = filename.removesuffix(".toml"), str(directory / filename)
        try:
            profile = parse(name, read[filename].decode("utf-8"), PROJECT + where, cache)
        except UnicodeDecodeError as exc:
            problem = f"is not UTF-8 ({exc.reason})"
        except AgentcfgError as exc:
            problem = " ".join(exc.message.split())
        else:
            if name in known:
                kind = "built-in" if known[name].source == BUILT_IN else "user"
                problem = f"has the name of a {kind} profile (a project profile never replaces one of yours)"
            elif profile.key_env in variables:
                problem = (
                    f"reads the key variable {profile.key_env} of profile {variables[profile.key_env]!r} "
                    "(a project profile must use a key variable of its own)"
                )
            else:
                used[name] = profile
                continue
        lines.append(f"warning: {where}: this project's profile {name!r} is skipped: it {problem}")
        ignored.setdefault(name, (f"skipped: it {problem}", f"Fix or rename {where} (it is the project's file)."))
    return ProjectSet(used, lines, ignored)


def _own(environ: env.Environ, cache: _ValidatedCache) -> dict[str, Profile]:
    profiles = _read_dir(data_dir("profiles"), lambda _p: BUILT_IN, cache)
    profiles.update(_read_dir(profiles_dir(environ), str, cache))
    if any(p.route for p in profiles.values()):
        from agentcfg.route import spec  # lazy: only a route's file needs it; `key get` reads yours or a built-in

        profiles.update({n: spec.bounded(p, profiles) for n, p in profiles.items() if p.route})
    return profiles


def load_own(environ: env.Environ) -> dict[str, Profile]:
    """The built-in and the user's profiles, without any project's."""
    cache = _ValidatedCache(environ)
    profiles = _own(environ, cache)
    cache.save()
    return profiles


def _load(environ: env.Environ, cwd: Path | None = None) -> tuple[dict[str, Profile], dict[str, tuple[str, str]]]:
    """Every profile that applies here, and the project's names that were left out (with why)."""
    cache = _ValidatedCache(environ)
    profiles = _own(environ, cache)
    ignored: dict[str, tuple[str, str]] = {}
    if project := project_profiles_dir(environ, cwd):
        found = _project(project, environ, profiles, cache)
        profiles.update(found.profiles)
        ignored = found.ignored
        _say(found.notices)
    cache.save()
    for profile in profiles.values():
        if profile.key_env:
            redact.register(environ.get(profile.key_env))
    return profiles, ignored


def _project(project: Path, environ: env.Environ, known: dict[str, Profile], cache: _ValidatedCache) -> ProjectSet:
    """What the project whose profiles are in `project` contributes (trust is imported only here: most
    commands run outside a project, and its import is not free)."""
    from agentcfg import trust  # lazy: `key get` and commands outside a project never read one

    if not (files := trust.file_names(project)):
        return ProjectSet({}, [], {})
    record = trust.record_for(trust.project_root(project), environ)
    # Without a record nothing is read: an untrusted repository's files are only listed.
    read, unreadable = trust.read_set(project) if record is not None else ({}, {})
    return project_set(project, files, record, read, unreadable, known, cache)


def load_all(environ: env.Environ, cwd: Path | None = None) -> dict[str, Profile]:
    """Built-ins, then the user's profiles (which override built-ins of the same name), then the
    current project's when it is trusted (which only add names)."""
    return _load(environ, cwd)[0]


def get(name: str, environ: env.Environ) -> Profile:
    profiles, ignored = _load(environ)
    if name in profiles:
        return profiles[name]
    if name in ignored:
        why, hint = ignored[name]
        _notices[:] = [n for n in _notices if not n.startswith("note: ignoring")]  # this error says it all
        raise AgentcfgError(f"{name!r} is a profile of this project that is not used: {why}", hint=hint)
    import difflib

    close = difflib.get_close_matches(name, profiles, n=1)
    suggestion = f" Did you mean {close[0]!r}?" if close else ""
    add = (
        f"`agentcfg profile add {name} --base-url` and the server's base address"
        if fields.valid_name(name)
        else "`agentcfg profile add`"
    )
    raise AgentcfgError(
        f"unknown profile {name!r}.{suggestion} Known profiles: {', '.join(sorted(profiles))}.",
        hint=f"List them with `agentcfg profile list`; add one with {add} (`agentcfg profile add --help` shows how).",
    )


def find(name: str, environ: env.Environ) -> Profile:
    """One profile by name, yours first, then the built-in, reading only that file: the project (and every
    other profile file) is read only when neither has the name. `agentcfg key get` runs on every start of
    Claude Code and Codex, inside any repository: it must not depend on (or wait for) a project's files."""
    if NAME_RE.fullmatch(name):
        for path, source in (
            (profiles_dir(environ) / f"{name}.toml", None),
            (data_dir("profiles") / f"{name}.toml", BUILT_IN),
        ):
            text = _read_file(path)
            if text is None:
                continue
            cache = None if source == BUILT_IN else _ValidatedCache(environ)
            parsed = _ParsedCache(environ)
            found = parse(name, text, source or str(path), cache, parsed)
            if cache is not None:
                cache.save()
            parsed.save()
            if found.key_env:
                redact.register(environ.get(found.key_env))
            return found
    return get(name, environ)


def read_source(source: str, environ: env.Environ) -> str:
    """A profile's TOML from a file or an http(s) URL (`profile add --from`): UTF-8, at most
    fsutil.PROFILE_LIMIT, and for a file a regular one (a FIFO never hangs, /dev/zero never fills memory)."""
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
    """A profile file's text (the key itself is never part of a profile); a route's legs as its [route] table."""
    lines = [f"# agentcfg profile {profile.name}"]
    data = profile.fields()
    route = data.pop("route", None)
    for key, value in data.items():
        lines.append(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    if route is not None:
        lines.append("\n[route]")
        lines.extend(f"{key} = {json.dumps(value, ensure_ascii=False)}" for key, value in route.items())
    return "\n".join(lines) + "\n"


# -- `profile set` / `profile unset`: change some fields, keep the rest -----------------------------------

# The fields of a profile file, in the order `profile show` lists them; `context-window` is accepted for
# `context_window` (the spelling of `profile add`'s options).
FIELDS = ("description", "base_url", "anthropic_base_url", "model", "key_env", "context_window", "max_output_tokens")
REQUIRED = ("base_url", "model")


def field_name(given: str, where: str) -> str:
    """A field as the user typed it (`context-window` or `context_window`) -> the profile TOML's name."""
    name = given.strip().lower().replace("-", "_")
    if name not in FIELDS:
        import difflib

        close = difflib.get_close_matches(name, FIELDS, n=1)
        raise AgentcfgError(
            f"unknown field {given!r}" + (f" (did you mean {close[0]}?)" if close else ""),
            where=where,
            hint=f"Fields a profile has: {', '.join(FIELDS)}.",
        )
    return name


def assignments(args: tuple[str, ...] | list[str], where: str) -> dict[str, object]:
    """`field=value` arguments -> {field: value}, integers for the window and the output bound."""
    found: dict[str, object] = {}
    for arg in args:
        given, sep, value = arg.partition("=")
        if not sep:
            raise AgentcfgError(
                f"{arg!r} is not FIELD=VALUE",
                where=where,
                hint="Give each change as field=value, e.g. model=DeepSeek-V4-Flash context_window=65536 "
                "(`agentcfg profile unset` removes a field).",
            )
        name = field_name(given, where)
        if name in found:
            raise AgentcfgError(f"field {name!r} is given twice", where=where, hint="Give each field once.")
        found[name] = _number(name, value, where) if name in fields.INT_RANGES else value
    return found


def _number(name: str, value: str, where: str) -> int:
    """The digits of a `profile set` number; its range is fields.check's to state (as for every other source)."""
    least, most = fields.INT_RANGES[name]
    text = value.replace("_", "").replace(",", "")  # 1_048_576 and 1,048,576 as people write them
    if not text.isascii() or not text.isdigit() or len(text) > 30:  # int() refuses 4,300 digits and more
        shown = f"a {len(text):,}-digit number" if text.isascii() and text.isdigit() else repr(value[:40])
        raise AgentcfgError(
            f"field {name!r} is {shown}; it is a whole number of tokens from {least:,} to {most:,}", where=where
        )
    return int(text)


def changed(profile: Profile, updates: dict[str, object], removed: list[str]) -> Profile:
    """`profile` with `updates` set and `removed` taken out, validated as `profile add` validates: pure."""
    where = f"profile {profile.name}"
    for name in removed:
        if name in REQUIRED:
            raise AgentcfgError(
                f"{name} cannot be unset: every profile has one",
                where=where,
                hint="Set another value instead (`agentcfg profile set`).",
            )
        if name in updates:
            raise AgentcfgError(f"field {name!r} is both set and unset", where=where)
    data = {**profile.fields(), **updates}
    for name in removed:
        data.pop(name, None)
    fields.check(data, where, name=profile.name)
    anthropic = data.get("anthropic_base_url")
    if isinstance(anthropic, str) and anthropic.rstrip("/").endswith("/v1"):
        raise AgentcfgError(
            f"anthropic_base_url {anthropic} ends in /v1, but Claude Code appends /v1/messages itself",
            where=where,
            hint=f"Use anthropic_base_url={anthropic.rstrip('/')[:-3]} instead.",
        )
    validate(data, schema_text(), where)
    if "route" in data:
        data["route"] = profile.route  # `profile set` changes no leg (`agentcfg route add --force` does)
    return Profile(name=profile.name, source=profile.source, **data)


def differences(old: Profile, new: Profile) -> dict[str, tuple[object, object]]:
    """{field: (old, new)} for every field that differs (None: not set)."""
    before, after = old.fields(), new.fields()
    return {f: (before.get(f), after.get(f)) for f in FIELDS if before.get(f) != after.get(f)}


def edited_text(current: str | None, old: Profile, new: Profile, path: str) -> str:
    """The profile file's text after the change. A file of yours is edited in place (its comments and
    order stay); a built-in becomes a file of yours holding all its fields."""
    if current is None:
        return (
            f"# agentcfg profile {new.name}: your copy of the built-in profile (`agentcfg profile set`);\n"
            f"# `agentcfg profile rm {new.name}` goes back to the built-in.\n" + to_toml(new).split("\n", 1)[1]
        )
    from agentcfg import edit  # lazy: the format editors, only for `profile set`

    changes = differences(old, new)
    return edit.apply(
        "toml", current, [((name, ), edit.REMOVE if value is None else value) for name, (_, value) in changes.items()],
        path=path,
    )  # fmt: skip
