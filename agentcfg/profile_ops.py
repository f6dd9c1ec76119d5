"""The use cases `profile add`, `profile add --from` and `profile rm`: check, detect, write, store, and say what
came of it as data. The CLI parses the options into a request and renders the result; the decisions along the
way are profile_edit's."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from agentcfg import detect as detection
from agentcfg import env, fields, fixes, fsutil, keystore, profile_edit, profiles
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.profile_model import PROJECT, Profile


@dataclass(frozen=True)
class AddRequest:
    """`profile add NAME` with its field options (not --from), as given."""

    name: str
    base_url: str
    model: str | None = None
    anthropic_base_url: str | None = None
    key_env: str | None = None
    no_key: bool = False
    context_window: int | None = None
    max_output_tokens: int | None = None
    detect: bool = False
    description: str | None = None
    key_stdin: bool = False
    force: bool = False

    def options(self) -> dict[str, object]:
        """The options as typed (`--base-url`: value), for the command a hint repeats (profile_edit.add_again)."""
        return typed_options(vars(self))


# `profile add`'s field options, in the order a hint or a refusal repeats them.
OPTIONS = ("base_url", "model", "anthropic_base_url", "key_env", "no_key", "context_window", "max_output_tokens",
           "detect", "description", "key_stdin")  # fmt: skip


def typed_options(values: Mapping[str, object]) -> dict[str, object]:
    """{"--base-url": value, ...} in OPTIONS' order, from {"base_url": value, ...}."""
    return {"--" + name.replace("_", "-"): values[name] for name in OPTIONS}


@dataclass(frozen=True)
class Added:
    """A profile written: where, whether its key was stored (and in which store), what the server said."""

    profile: Profile
    path: Path
    key_stored: bool = False
    store: keystore.KeyStore | None = None
    detected_window: int | None = None
    source: str | None = None  # --from's file or URL
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """`profile add --json`: the profile as written, where, and what its key needs."""
        new = self.profile
        return {
            "profile": new.name,
            "path": str(self.path),
            "from": self.source,
            "fields": new.fields(),
            "key_env": new.key_env,
            "key_stored": self.key_stored,
            "key_store": self.store.label if self.key_stored and self.store is not None else None,
            "key_set": fixes.key_set(new.name) if new.key_env and not self.key_stored else None,
            "detected_window": self.detected_window,
            "switch": fixes.switch(new.name),
            "notes": self.notes,
        }


def add(request: AddRequest, environ: dict[str, str], read_key: Callable[[], str]) -> Added:
    """Check the fields before anything is asked or sent, read the key (`read_key`, for --key-stdin) once the
    keyring is known to work, read the model and window from the server (--detect), then save the profile and
    store its key bound to its hosts."""
    name, base_url, options = request.name, request.base_url, request.options()
    key_env, model, anthropic_base_url = request.key_env, request.model, request.anthropic_base_url
    context_window, force = request.context_window, request.force
    if request.no_key and (key_env or request.key_stdin):
        other = "--key-env" if key_env else "--key-stdin"
        raise AgentcfgError(f"{other} and --no-key contradict each other", hint="Give one of them.")
    profile_edit.check_new_name(name, force, environ, lambda other: profile_edit.add_again(other, options, force))
    given = {"description": request.description, "base_url": base_url, "anthropic_base_url": anthropic_base_url,
             "model": model, "key_env": key_env, "context_window": context_window,
             "max_output_tokens": request.max_output_tokens}  # fmt: skip
    # Before anything is shown, asked or sent: a URL with a password must not reach a message, nor --detect's
    # request; a window out of range or a key variable such as PATH must not wait until after the key is typed.
    fields.check({k: v for k, v in given.items() if v is not None}, f"profile {name}", name=name)
    if anthropic_base_url and anthropic_base_url.rstrip("/").endswith("/v1"):
        raise AgentcfgError(
            f"--anthropic-base-url {anthropic_base_url} ends in /v1, but Claude Code appends /v1/messages itself",
            hint=f"Use {anthropic_base_url.rstrip('/')[:-3]} instead.",
        )
    draft = Profile(name=name, base_url=base_url, model=model or "?")
    if not key_env and not request.no_key and (request.key_stdin or not draft.is_local):
        key_env = name.upper().replace("-", "_") + "_API_KEY"
        fields.check({"key_env": key_env}, f"profile {name}", name=name)  # a name like `path` gives PATH_API_KEY
    draft = Profile(name=name, base_url=base_url, model=model or "?", key_env=key_env)
    store, key = None, None
    if request.key_stdin:
        store = keystore.KeyStore(environ, draft)
        store.label  # noqa: B018 - a missing keyring fails here, before the key is typed or anything is sent
        key = read_key()
    if request.detect:
        try:
            models = detection.list_models(draft, key or profile_edit.detect_key(draft, environ))
        except detection.KeyNeeded as problem:
            again = profile_edit.add_again(name, {**options, "--key-stdin": True}, force)  # gives NAME_API_KEY
            refused = "the right key" if problem.sent or key else "its key"
            problem.hint = f"Give --detect {refused}: {again} (it asks for the key; or pipe it in on stdin)."
            raise
        model, context_window = detection.context_window(models, model, base_url.rstrip("/") + "/models")
        anthropic_base_url = anthropic_base_url or detection.anthropic_base_url(models, model, base_url)
    if not model:
        raise AgentcfgError(
            "--model is required", hint="Give the model id, or use --detect to read it from the server."
        )
    data: dict[str, Any] = {  # Profile's fields, of several types
        "description": request.description,
        "base_url": base_url,
        "anthropic_base_url": anthropic_base_url,
        "model": model,
        "key_env": key_env,
        "context_window": context_window,
        "max_output_tokens": request.max_output_tokens,
    }
    new = Profile(name=name, **{k: v for k, v in data.items() if v is not None})
    fields.check(new.fields(), f"profile {name}", name=name)  # again: --detect's model comes from the server
    profiles.validate(new.fields(), profiles.schema_text(), f"profile {name}")
    path = profiles.profiles_dir(environ) / f"{name}.toml"
    fsutil.save(path, profiles.to_toml(new).encode("utf-8"), 0o644, env.display(path, environ))
    stored = False
    if store is not None and key:
        store.store(new, key)  # bound to the profile's hosts, as `key set` binds it
        stored = True
    detected = context_window if request.detect else None
    return Added(new, path, key_stored=stored, store=store, detected_window=detected)


def add_from(name: str, source: str, force: bool, environ: dict[str, str]) -> Added:
    """`profile add NAME --from FILE|URL`: a team's file, validated and saved as it is (never a route)."""

    def again(other: str) -> str:
        return fixes.command("agentcfg", "profile", "add", other, "--from", source, *(("--force",) if force else ()))

    profile_edit.check_new_name(name, force, environ, again)
    text = profiles.read_source(source, environ)
    new = profiles.parse(name, text, source)  # validated against the schema before it is saved
    if new.route is not None:  # a team's file would choose which of your keys a router gets, and where it listens
        raise AgentcfgError(
            "a team's profile cannot be a route (it has a [route] table)",
            where=source,
            hint=f"Make the route yourself: `agentcfg route add {name} --primary PROFILE --fallback PROFILE`.",
        )
    warning = profile_edit.team_key_variable(new, environ)
    path = profiles.profiles_dir(environ) / f"{name}.toml"
    fsutil.save(path, text.encode("utf-8"), 0o644, env.display(path, environ))
    return Added(new, path, source=source, notes=[warning] if warning else [])


@dataclass(frozen=True)
class Removed:
    """A profile file removed: what was said about its key, and the agents still pointing at it."""

    name: str
    path: Path
    said: list[str]  # lines about the key
    notes: list[str]
    key: dict[str, Any]  # the key's part of --json
    built_in: bool  # a built-in of that name applies again
    pointing: list[str]  # agents whose files still point at it

    def as_json(self) -> dict[str, Any]:
        return {
            "profile": self.name,
            "removed": True,
            "path": str(self.path),
            **self.key,
            "built_in_applies": self.built_in,
            "agents_pointing": self.pointing,
            "switch": fixes.switch(self.name, agents=self.pointing) if self.pointing and self.built_in else None,
            "notes": self.notes,
        }


def remove(name: str, keep_key: bool, environ: dict[str, str]) -> Removed:
    """`profile rm NAME`: only a file of yours (a built-in or a project's is refused, saying why), with its key
    unless `keep_key`; the agents still pointing at it are named with how to move them."""
    path = profiles.profiles_dir(environ) / f"{name}.toml"
    if not path.is_file():
        other = profiles.get(name, environ)  # unknown name -> the usual error with suggestions
        if other.source.startswith(PROJECT):
            raise AgentcfgError(
                f"{name!r} is this project's profile",
                where=other.source.removeprefix(PROJECT),
                hint="It belongs to the project: remove the file from its .agentcfg/profiles/ if you mean to.",
            )
        raise AgentcfgError(f"{name!r} is a built-in profile and cannot be removed")
    try:  # what the key was for; a file that is no profile can still be removed
        text = fsutil.read_text(path, env.display(path, environ), fsutil.PROFILE_LIMIT) or ""
        found: Profile | None = profiles.parse(name, text, str(path))
    except AgentcfgError:
        found = None
    pointing = profile_edit.pointing_agents(name, environ)
    path.unlink()
    said, notes, key = profile_edit.forget_key(name, found, keep_key, environ)
    built_in = name in profiles.load_all(environ)
    if pointing:
        they = "it" if len(pointing) == 1 else "them"
        to = (
            f"to the built-in {name}: `{fixes.switch(name, agents=pointing)}`"
            if built_in
            else "to another profile: `agentcfg profile list` shows them, agentcfg switch with its name moves them"
        )
        notes.append(
            f"{', '.join(pointing)} still point{'s' if len(pointing) == 1 else ''} at profile {name} (its host "
            f"and model); switch {they} {to}"
        )
    return Removed(name, path, said, notes, key, built_in, pointing)
