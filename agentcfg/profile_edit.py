"""What `profile add/set/unset/rm` decide, below the CLI: which profile may change, what a change means for
its key and for the agents pointing at it, what a team's file may read. The CLI parses and renders."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from agentcfg import detect as detection
from agentcfg import env, fields, fixes, fsutil, keystore, profiles, trust
from agentcfg.apply import Journal
from agentcfg.errors import AgentcfgError
from agentcfg.key_rules import origin
from agentcfg.lazyclass import dataclass
from agentcfg.status import status


def detect_key(draft: Any, environ: dict[str, str]) -> str | None:
    """The key for `--detect`: a stored one (re-adding a profile) or the exported variable."""
    try:
        resolved = keystore.resolve(draft, environ)
    except keystore.KeyringProblem:
        return environ.get(draft.key_env) if draft.key_env else None
    return resolved.value if resolved else None


def add_again(name: str, options: Mapping[str, object], force: bool) -> str:
    """`profile add NAME ...` with these options (values quoted for the shell): the command a hint prints."""
    words: list[str] = []
    for option, value in options.items():
        if value is True:
            words.append(option)
        elif value not in (None, False):
            words += [option, str(value)]
    return fixes.command("agentcfg", "profile", "add", name, *words, *(("--force",) if force else ()))


# What each field option of `profile add` is, after `--from`, as a command: the file is taken as it is.
_AFTER_FROM = {"--base-url": "base_url", "--model": "model", "--anthropic-base-url": "anthropic_base_url",
               "--key-env": "key_env", "--context-window": "context_window",
               "--max-output-tokens": "max_output_tokens", "--description": "description"}  # fmt: skip


def from_with_options(name: str, source: str, given: list[str], options: Mapping[str, object], force: bool) -> None:
    """--from takes the file as it is: a field option beside it would be ignored (it was, silently) or would
    have to override the team's file. Refused, with the commands that do both one after the other."""
    changes = {_AFTER_FROM[o]: options[o] for o in given if o in _AFTER_FROM}
    then = [fixes.profile_set(name, **changes) if changes else ""]
    if "--no-key" in given:
        then.append(fixes.profile_unset(name, "key_env"))
    if "--detect" in given:
        then.append(fixes.command("agentcfg", "profile", "set", name, "--detect"))
    if "--key-stdin" in given:
        then.append(fixes.key_set(name))
    add = fixes.command("agentcfg", "profile", "add", name, "--from", source, *(("--force",) if force else ()))
    listed = ", ".join(given)
    raise AgentcfgError(
        f"--from takes the profile file as it is: {listed} cannot go with it",
        where=f"agentcfg profile add {name}",
        hint=f"Add the file as it is, then change it: {fixes.then(add, *then)}",
    )


def editable(name: str, environ: dict[str, str]) -> Any:
    """The profile `profile set` changes: yours or a built-in; never a project's file."""
    found = profiles.get(name, environ)  # an unknown name: the usual error with suggestions
    if found.source.startswith(profiles.PROJECT):
        where = found.source.removeprefix(profiles.PROJECT)
        raise AgentcfgError(
            f"{name!r} is this project's profile: agentcfg does not change a project's files",
            where=where,
            hint=f"Edit {where} in the project (then run `agentcfg trust` again), or make a profile of your own "
            f"under another name with `agentcfg profile add`.",
        )
    if found.route is not None:  # the file's own fields, not the bounds its legs give it when it is loaded
        from pathlib import Path

        text = profiles._read_file(Path(found.source))
        found = profiles.parse(name, text or "", found.source)
    return found


def detected(profile: Any, environ: dict[str, str]) -> Any:
    """`profile set --detect`: the window (and for vLLM Claude Code's URL, if none is set) from the server."""
    try:
        models = detection.list_models(profile, detect_key(profile, environ))
    except detection.KeyNeeded as problem:
        name = profile.name
        key_env = profile.key_env or name.upper().replace("-", "_") + "_API_KEY"
        problem.hint = (
            "Store "
            + ("the right key" if problem.sent else "its key")
            + ", then detect again: "
            + (
                fixes.then(
                    "" if profile.key_env else fixes.profile_set(name, key_env=key_env),
                    fixes.key_set(name),
                    fixes.command("agentcfg", "profile", "set", name, "--detect"),
                )
            )
        )
        raise
    _, window = detection.context_window(models, profile.model, profile.base_url.rstrip("/") + "/models")
    updates: dict[str, object] = {"context_window": window}
    url = detection.anthropic_base_url(models, profile.model, profile.base_url)
    if url and not profile.anthropic_base_url:
        updates["anthropic_base_url"] = url
    return profiles.changed(profile, updates, [])


def key_notes(old: Any, new: Any, environ: dict[str, str]) -> list[str]:
    """What a change of key_env or of the hosts means for the profile's stored key (kept per profile name)."""
    name, notes = new.name, []
    stored_here = name in keystore.remembered(environ)  # no keyring is opened for a profile without a key
    if new.key_env and not old.key_env and not stored_here:
        notes.append(f"{name} needs a key now, read from {new.key_env}: store it with `agentcfg key set {name}`")
    elif old.key_env and new.key_env and old.key_env != new.key_env and stored_here:
        notes.append(
            f"the stored key of {name} stays (the keyring keeps it under the profile's name); `agentcfg exec` and "
            f"`agentcfg env` now put it in {new.key_env}"
        )
    elif old.key_env and not new.key_env and stored_here:
        notes.append(f"{name} needs no key now; its stored key stays: `agentcfg key rm {name}` removes it")
    if not new.key_env or not stored_here or keystore.profile_origins(old) == keystore.profile_origins(new):
        return notes
    store = keystore.KeyStore(environ, new)
    try:
        recorded = store.origins(name) if store.get(name) is not None else None
    except keystore.KeyringProblem as problem:
        return [*notes, f"could not check the keyring for the key of {name}: {problem.message}"]
    now = keystore.profile_origins(new)
    if recorded is not None and all(o in recorded for o in now):
        return notes
    bound = ", ".join(recorded) if recorded else "no host"
    moved = ", ".join(o for o in now if o not in (recorded or ()))
    notes.append(
        f"the stored key of {name} is bound to {bound}, and the profile now points at {moved}: no agent gets it "
        f"there until you run `agentcfg key bind {name}` (that host gets this key) or `agentcfg key set {name}` "
        "(its own key)"
    )
    return notes


def check_new_name(name: str, force: bool, environ: dict[str, str], again: Callable[[str], str] | None = None) -> None:
    """A name `profile add` may write. `again(other)` is the command as given with another name: a name close
    to a valid one (upper-case, too long, a stray character) gets the command with that name."""
    if problem := fields.name_problem(name):  # the whole name: `$'nn\n'` would otherwise become the file "nn\n.toml"
        shown = name if len(name) <= fields.NAME_MAX else name[: fields.NAME_MAX] + "..."
        other = fields.suggested_name(name)
        hint = f"Run: {again(other)}" if again and other else f"A profile name is {fields.NAME_RULE}."
        raise AgentcfgError(f"{shown!r} is not a valid profile name: {problem}", hint=hint)
    existing = profiles.load_all(environ)
    if name in existing and not force:
        kind = "built-in profile" if existing[name].source == profiles.BUILT_IN else "profile"
        raise AgentcfgError(f"a {kind} named {name!r} exists", hint="Add --force to replace it with yours.")


def team_key_variable(new: Any, environ: dict[str, str]) -> str | None:
    """A team's file is written by someone else: it may not read another profile's key variable for other
    hosts than that profile's (exec, bench and doctor would send that key there); a general secret's variable
    gets a warning."""
    if not new.key_env:
        return None
    hosts = {origin(u) for u in (new.base_url, new.anthropic_base_url) if u}
    for other in profiles.load_all(environ).values():
        own = {origin(u) for u in (other.base_url, other.anthropic_base_url) if u}
        if other.key_env == new.key_env and other.name != new.name and not hosts <= own:
            raise AgentcfgError(
                f"the profile file reads {new.key_env}, the key variable of profile {other.name!r}: "
                f"that key would go to {new.base_url}",
                where=new.source,
                hint=f'Give the file a key variable of its own (key_env = "{new.name.upper().replace("-", "_")}'
                '_API_KEY"), then add it again.',
            )
    if trust.general_secret(new.key_env):
        return (
            f"profile {new.name} reads its key from {new.key_env}, a variable that usually holds another "
            f"service's secret: `agentcfg exec`, `bench` and `doctor` send its value to {new.base_url}"
        )
    return None


def pointing_agents(name: str, environ: dict[str, str]) -> list[str]:
    """The agents whose files point at profile `name` now (as `agentcfg status` matches them)."""
    try:
        found = status(environ, profiles.load_all(environ), Journal(environ).entries())
    except AgentcfgError:
        return []  # only a warning: removing the profile must not depend on it
    return [item.name for item in found if item.profile == name]


def forget_key(
    name: str, found: Any, keep: bool, environ: dict[str, str]
) -> tuple[list[str], list[str], dict[str, Any]]:
    """What `profile rm` does with the removed profile's stored key: lines for stdout, notes, and the same for
    --json ({"key": "removed" | "kept" | "none" | "unknown", "bound_to": [...] | None}).
    `found` is the removed profile, or None when its file could not be read as one."""
    if found is not None and not found.key_env and name not in keystore.remembered(environ):
        return [], [], {"key": "none", "bound_to": None}  # a keyless profile: no keyring to open
    store = keystore.KeyStore(environ, found)
    try:
        if not keep:
            removed = store.delete(name)
            said = f"Removed the key for {name} from" if removed else f"No key for {name} was stored in"
            return [f"{said} the {store.label}."], [], {"key": "removed" if removed else "none", "bound_to": None}
        if store.get(name) is None:
            return [], [], {"key": "none", "bound_to": None}
        origins = store.origins(name)
        if origins is None and found is not None:  # stored before keys were bound: bind it where it was meant
            origins = keystore.profile_origins(found)
            store.bind(name, origins)
    except keystore.KeyringProblem as problem:
        return (
            [],
            [
                f"could not check the keyring for a key of {name}: {problem.message}; "
                f"once it works, `agentcfg key rm {name}` removes a stored one"
            ],
            {"key": "unknown", "bound_to": None},
        )
    kept = {"key": "kept", "bound_to": list(origins) if origins is not None else None}
    if origins is None:
        return (
            [f"Kept the key for {name} in the {store.label}; `agentcfg key rm {name}` removes it."],
            [f"the key for {name} is bound to no host yet: a profile {name} of yours would get it on first use"],
            kept,
        )
    hosts = ", ".join(origins) or "no host"
    return (
        [
            f"Kept the key for {name} in the {store.label}, bound to {hosts}: only a profile {name} on "
            f"{'that host' if len(origins) == 1 else 'those hosts'} gets it; `agentcfg key rm {name}` removes it."
        ],
        [],
        kept,
    )


@dataclass
class Change:
    """What `profile set/unset` did: the profile before and after, the file, and what it means."""

    old: Any
    new: Any
    path: Path
    built_in: bool  # a built-in's fields plus the change became a profile of yours at `path`
    differences: dict[str, tuple[object, object]]
    pointing: list[str] = field(default_factory=list)  # agents that still use the old values
    notes: list[str] = field(default_factory=list)


def change(
    name: str, assignments: tuple[str, ...], removed: tuple[str, ...], detect: bool, environ: dict[str, str]
) -> Change:
    """Apply FIELD=VALUE `assignments` and remove `removed` fields of profile `name` (with `detect`, the window
    read from the server): every field validated before anything is sent or written; the file written only
    when something differs, and only as text that loads as the profile shown."""
    where = f"agentcfg profile {'set' if assignments or detect else 'unset'} {name}"
    updates = profiles.assignments(assignments, where)
    unset = list(dict.fromkeys(profiles.field_name(f, where) for f in removed))
    old = editable(name, environ)
    built_in = old.source == profiles.BUILT_IN
    new = profiles.changed(old, updates, unset)
    if detect:
        new = detected(new, environ)
    differences = profiles.differences(old, new)
    path = profiles.profiles_dir(environ) / f"{name}.toml" if built_in else Path(old.source)
    done = Change(old, new, path, built_in, differences)
    if not differences:
        return done
    shown = env.display(path, environ)
    done.pointing = pointing_agents(name, environ)
    current = None if built_in else fsutil.read_text(path, shown, fsutil.PROFILE_LIMIT)
    text = profiles.edited_text(current, old, new, shown)
    profiles.parse(name, text, str(path))  # what is written must load as the profile shown
    fsutil.save(path, text.encode("utf-8"), 0o644, shown)
    done.notes = key_notes(old, new, environ)
    return done
