"""`profile ...` and `trust`: the profiles, yours, built-in and a project's."""

from __future__ import annotations

from typing import Any

import click

from agentcfg.cli import base
from agentcfg.cli.keys import read_key
from agentcfg.errors import AgentcfgError
from agentcfg.fields import INT_RANGES  # the ranges --help states (fields.py imports nothing heavy)

# -- profiles ----------------------------------------------------------------------------------------


@click.group()
def profile() -> None:
    """List, show, add, change (set, unset), import, export and remove provider profiles.

    \b
    agentcfg profile list
    agentcfg profile add gpu --base-url http://gpu-box:8000/v1 --detect
    agentcfg profile set local context_window=65536     change fields, keep the rest
    agentcfg profile unset gpu max_output_tokens
    """


@profile.command("list")
@base.json_option("Print the profiles as JSON.")
def profile_list(as_json: bool) -> None:
    """Every profile: built-in presets and your own (yours override built-ins of the same name)."""
    from agentcfg import profiles, report

    environ = base.environ()
    found = [p for _, p in sorted(profiles.load_all(environ).items())]
    if as_json:
        click.echo(report.dumps([report.profile_dict(p, environ) for p in found]))
    else:
        click.echo(report.profiles_text(found, environ))


@profile.command("show")
@click.argument("name", shell_complete=base.complete_profile)
@base.json_option("Print the profile as JSON.")
def profile_show(name: str, as_json: bool) -> None:
    """One profile's fields and where it comes from (never a key's value)."""
    from agentcfg import profiles, report

    environ = base.environ()
    found = profiles.get(name, environ)
    click.echo(report.dumps(report.profile_dict(found, environ)) if as_json else report.profile_text(found, environ))


@profile.command("add")
@click.argument("name")
@click.option("--base-url", help="OpenAI-protocol base URL, e.g. http://localhost:8000/v1.")
@click.option(
    "--from", "source", metavar="FILE|URL", help="Take the profile from a TOML file or URL (profile export), as it is."
)
@click.option("--model", help="Model id as the server names it (with --detect: optional if it serves one).")
@click.option("--anthropic-base-url", help="Anthropic-protocol base URL for Claude Code (without /v1).")
@click.option("--key-env", metavar="VAR", help="Variable the agents read the key from (`agentcfg exec` sets it).")
@click.option("--no-key", is_flag=True, help="The server needs no key.")
@click.option(
    "--context-window",
    type=base.Int(*INT_RANGES["context_window"]),  # --help shows the range
    help="The model's window in tokens.",
)
@click.option(
    "--max-output-tokens",
    type=base.Int(*INT_RANGES["max_output_tokens"]),
    help="Bound on any agent's output tokens, at most the window.",
)
@click.option(
    "--detect",
    is_flag=True,
    help="Read the window (max_model_len) from the server's GET /models; for vLLM also Claude Code's URL.",
)
@click.option("--description", help="A short label shown in agent UIs.")
@click.option(
    "--key-stdin",
    is_flag=True,
    help="Read the profile's key (hidden prompt, or one line of stdin): --detect sends it, then it is stored.",
)
@click.option("--force", is_flag=True, help="Replace an existing profile of that name.")
@base.json_option("Print the profile added as JSON: its fields, file, key variable, whether its key was stored.")
def profile_add(
    name: str,
    base_url: str | None,
    source: str | None,
    model: str | None,
    anthropic_base_url: str | None,
    key_env: str | None,
    no_key: bool,
    context_window: int | None,
    max_output_tokens: int | None,
    detect: bool,
    description: str | None,
    key_stdin: bool,
    force: bool,
    as_json: bool,
) -> None:
    """Add (or with --force replace) a profile of your own.

    \b
    agentcfg profile add gpu --base-url http://gpu-box:8000/v1 --detect
    printf %s "$KEY" | agentcfg profile add gw --base-url https://gw.example/v1 --detect --key-stdin
    agentcfg profile add team --from team.toml

    Without --key-env or --no-key, a profile for a server on this machine needs no key and any
    other reads NAME_API_KEY (upper-cased); --key-stdin also stores the key (bound to the profile's
    hosts). With --from, the profile is a team's shared file (as `agentcfg profile export` writes
    it), taken as it is: validated, then saved as yours (no other field option goes with it). To
    change a profile later: `agentcfg profile set`.
    """
    from agentcfg import detect as detection
    from agentcfg import env, fields, fixes, fsutil, profile_edit, profiles

    environ = base.environ()
    options = {"--base-url": base_url, "--model": model, "--anthropic-base-url": anthropic_base_url,
               "--key-env": key_env, "--no-key": no_key, "--context-window": context_window,
               "--max-output-tokens": max_output_tokens, "--detect": detect, "--description": description,
               "--key-stdin": key_stdin}  # fmt: skip
    if source:
        given_options = [option for option, value in options.items() if value not in (None, False)]
        if given_options:
            profile_edit.from_with_options(name, source, given_options, options, force)
        _add_from(name, source, force, environ, as_json)
        return
    if not base_url:
        raise click.UsageError("give --base-url URL (with --model ID), or --from FILE|URL")
    if no_key and (key_env or key_stdin):
        other = "--key-env" if key_env else "--key-stdin"
        raise AgentcfgError(f"{other} and --no-key contradict each other", hint="Give one of them.")
    profile_edit.check_new_name(name, force, environ, lambda other: profile_edit.add_again(other, options, force))
    given = {"description": description, "base_url": base_url, "anthropic_base_url": anthropic_base_url,
             "model": model, "key_env": key_env, "context_window": context_window,
             "max_output_tokens": max_output_tokens}  # fmt: skip
    # Before anything is shown, asked or sent: a URL with a password must not reach a message, nor --detect's
    # request; a window out of range or a key variable such as PATH must not wait until after the key is typed.
    fields.check({k: v for k, v in given.items() if v is not None}, f"profile {name}", name=name)
    if anthropic_base_url and anthropic_base_url.rstrip("/").endswith("/v1"):
        raise AgentcfgError(
            f"--anthropic-base-url {anthropic_base_url} ends in /v1, but Claude Code appends /v1/messages itself",
            hint=f"Use {anthropic_base_url.rstrip('/')[:-3]} instead.",
        )
    draft = profiles.Profile(name=name, base_url=base_url, model=model or "?")
    if not key_env and not no_key and (key_stdin or not draft.is_local):
        key_env = name.upper().replace("-", "_") + "_API_KEY"
        fields.check({"key_env": key_env}, f"profile {name}", name=name)  # a name like `path` gives PATH_API_KEY
    draft = profiles.Profile(name=name, base_url=base_url, model=model or "?", key_env=key_env)
    store, key = None, None
    if key_stdin:
        from agentcfg import keystore

        store = keystore.KeyStore(environ, draft)
        store.label  # noqa: B018 - a missing keyring fails here, before the key is typed or anything is sent
        key = read_key(name)
    if detect:
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
        "description": description,
        "base_url": base_url,
        "anthropic_base_url": anthropic_base_url,
        "model": model,
        "key_env": key_env,
        "context_window": context_window,
        "max_output_tokens": max_output_tokens,
    }
    new = profiles.Profile(name=name, **{k: v for k, v in data.items() if v is not None})
    fields.check(new.fields(), f"profile {name}", name=name)  # again: --detect's model comes from the server
    profiles.validate(new.fields(), profiles.schema_text(), f"profile {name}")
    path = profiles.profiles_dir(environ) / f"{name}.toml"
    fsutil.save(path, profiles.to_toml(new).encode("utf-8"), 0o644, env.display(path, environ))
    stored = False
    if store is not None and key:
        store.store(new, key)  # bound to the profile's hosts, as `key set` binds it
        stored = True
    if as_json:
        base.print_json(
            _added(new, path, detected_window=context_window if detect else None, key_stored=stored, store=store)
        )
        return
    detected = f" (window {context_window:,} tokens read from the server)" if detect else ""
    click.echo(f"Added profile {name}: {model} at {base_url}{detected}\n  {env.display(path, environ)}")
    if anthropic_base_url:
        click.echo(f"  Claude Code uses {anthropic_base_url}/v1/messages")
    if stored and store is not None:
        click.echo(f"  stored its key in the {store.label}; agents read it from {key_env}")
    elif key_env:
        click.echo(f"  agents read its key from {key_env}; store the key with: {fixes.key_set(name)}")
    click.echo(f"Switch to it with: {fixes.switch(name)}")


def _added(
    new: Any,
    path: Any,
    *,
    detected_window: int | None,
    key_stored: bool,
    store: Any = None,
    source: str | None = None,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """`profile add --json`: the profile as written, where, and what its key needs."""
    from agentcfg import fixes

    return {
        "profile": new.name,
        "path": str(path),
        "from": source,
        "fields": new.fields(),
        "key_env": new.key_env,
        "key_stored": key_stored,
        "key_store": store.label if key_stored and store is not None else None,
        "key_set": fixes.key_set(new.name) if new.key_env and not key_stored else None,
        "detected_window": detected_window,
        "switch": fixes.switch(new.name),
        "notes": notes or [],
    }


# -- profile set / unset ---------------------------------------------------------------------------------


@profile.command("set")
@click.argument("name", shell_complete=base.complete_editable_profile)
@click.argument("changes", nargs=-1, metavar="FIELD=VALUE...", shell_complete=base.complete_field_assignment)
@click.option(
    "--detect", is_flag=True, help="Read context_window (max_model_len) from the server's GET /models, with its key."
)
@base.json_option("Print what changed as JSON.")
def profile_set(name: str, changes: tuple[str, ...], detect: bool, as_json: bool) -> None:
    """Change fields of profile NAME and keep the rest, validated as `profile add` validates them.

    \b
    agentcfg profile set local context_window=65536
    agentcfg profile set gpu model=Qwen3-Coder base_url=http://gpu-box:8000/v1
    agentcfg profile set taotoken anthropic_base_url=https://taotoken.net/api/anthropic
    agentcfg profile set gpu --detect          the window as the vLLM server reports it

    Fields: description, base_url, anthropic_base_url, model, key_env, context_window (or
    context-window), max_output_tokens. Changing a built-in (local, taotoken) makes a profile of
    yours from its fields plus the change (`agentcfg profile rm NAME` goes back to the built-in); a
    project's profile is the project's file and is not changed. The agents keep the old values until
    you switch again: the command says so, with the switch to run.
    """
    if not changes and not detect:
        raise click.UsageError("give at least one FIELD=VALUE (or --detect), e.g. agentcfg profile set local model=M")
    _change_profile(name, changes, (), detect, as_json)


@profile.command("unset")
@click.argument("name", shell_complete=base.complete_editable_profile)
@click.argument("names", nargs=-1, required=True, metavar="FIELD...", shell_complete=base.complete_optional_field)
@base.json_option("Print what changed as JSON.")
def profile_unset(name: str, names: tuple[str, ...], as_json: bool) -> None:
    """Remove optional fields of profile NAME (base_url and model are required and stay).

    \b
    agentcfg profile unset gpu max_output_tokens
    agentcfg profile unset gw key_env            the server needs no key

    A built-in becomes a profile of yours without those fields, as with `profile set`.
    """
    _change_profile(name, (), names, False, as_json)


def _change_profile(name: str, changes: tuple[str, ...], removed: tuple[str, ...], detect: bool, as_json: bool) -> None:
    from agentcfg import env, fixes, profile_edit, report
    from agentcfg.agents import AGENTS

    environ = base.environ()
    done = profile_edit.change(name, changes, removed, detect, environ)
    path, built_in, differences, pointing, notes = done.path, done.built_in, done.differences, done.pointing, done.notes
    shown = env.display(path, environ)
    some = pointing if len(pointing) < len(AGENTS) else ()
    run_next = fixes.switch(name, agents=some) if pointing else None
    if as_json:
        data = {
            "profile": name,
            "path": str(path),
            "from_built_in": built_in and bool(differences),
            "changed": bool(differences),
            "changes": {f: {"old": a, "new": b} for f, (a, b) in differences.items()},
            "agents_pointing": pointing,
            "switch": run_next,
            "notes": notes,
        }
        click.echo(report.dumps(data))
        return
    if not differences:
        click.echo(f"Profile {name} already has those values: nothing changed.")
        return
    origin = f" (a profile of yours now, from the built-in {name})" if built_in else ""
    click.echo(f"Changed profile {name}{origin}: {shown}")
    for field, (before, after) in differences.items():
        click.echo(f"  {field}: {_shown_value(before)} -> {_shown_value(after)}")
    base.emit_notes(notes)
    if run_next:
        they = ", ".join(pointing)
        click.echo(f"{they} still {'uses' if len(pointing) == 1 else 'use'} the old values.")
        click.echo(f"Switch to it with: {run_next}")


def _shown_value(value: object) -> str:
    if value is None:
        return "(not set)"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _add_from(name: str, source: str, force: bool, environ: dict[str, str], as_json: bool = False) -> None:
    from agentcfg import env, fixes, fsutil, profile_edit, profiles

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
    if as_json:
        base.print_json(
            _added(new, path, detected_window=None, key_stored=False, source=source, notes=[warning] if warning else [])
        )
        return
    click.echo(f"Added profile {name} from {source}: {new.model} at {new.base_url}\n  {env.display(path, environ)}")
    if new.key_env:
        click.echo(f"  agents read its key from {new.key_env}; store the key with: {fixes.key_set(name)}")
    base.emit_notes([warning] if warning else [])
    click.echo(f"Switch to it with: {fixes.switch(name)}")


@profile.command("export")
@click.argument("name", shell_complete=base.complete_profile)
@base.json_option('Print {"profile", "toml", "fields"}: the same TOML text, and its fields as JSON.')
def profile_export(name: str, as_json: bool) -> None:
    """Print PROFILE as TOML to share with a team (`profile add NAME --from FILE`). Never a key."""
    from agentcfg import profiles

    found = profiles.get(name, base.environ())
    if found.route is not None:  # its legs are your profiles and keys: a team member adds the router instead
        raise AgentcfgError(
            f"{name!r} is a route: its legs are your own profiles, and `profile add --from` takes no route",
            hint="Give your team the router's address instead (docs/route.md, \"A team's shared router\").",
        )
    text = profiles.to_toml(found)
    if as_json:
        base.print_json({"profile": name, "toml": text, "fields": found.fields()})
        return
    click.echo(text, nl=False)


@profile.command("rm")
@click.argument("name", shell_complete=base.complete_own_profile)
@click.option("--keep-key", is_flag=True, help="Keep the profile's stored key (bound to the profile's hosts).")
@base.json_option("Print what was removed as JSON: the file, the key, whether a built-in applies again.")
def profile_rm(name: str, keep_key: bool, as_json: bool) -> None:
    """Remove a profile of your own (built-in presets cannot be removed), and its stored key.

    With --keep-key the key stays in the keyring, still bound to the removed profile's hosts, so a
    later profile of the same name elsewhere cannot get it.
    """
    from agentcfg import env, fsutil, profile_edit, profiles

    environ = base.environ()
    path = profiles.profiles_dir(environ) / f"{name}.toml"
    if not path.is_file():
        other = profiles.get(name, environ)  # unknown name -> the usual error with suggestions
        if other.source.startswith(profiles.PROJECT):
            raise AgentcfgError(
                f"{name!r} is this project's profile",
                where=other.source.removeprefix(profiles.PROJECT),
                hint="It belongs to the project: remove the file from its .agentcfg/profiles/ if you mean to.",
            )
        raise AgentcfgError(f"{name!r} is a built-in profile and cannot be removed")
    try:  # what the key was for; a file that is no profile can still be removed
        text = fsutil.read_text(path, env.display(path, environ), fsutil.PROFILE_LIMIT) or ""
        found = profiles.parse(name, text, str(path))
    except AgentcfgError:
        found = None
    pointing = profile_edit.pointing_agents(name, environ)
    path.unlink()
    said, notes, key = profile_edit.forget_key(name, found, keep_key, environ)
    built_in = name in profiles.load_all(environ)
    from agentcfg import fixes

    if not as_json:
        click.echo(f"Removed profile {name} ({env.display(path, environ)})")
        for line in said:
            click.echo(line)
        if built_in:
            click.echo(f"The built-in profile {name} applies again.")
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
    if as_json:
        base.print_json({
            "profile": name,
            "removed": True,
            "path": str(path),
            **key,
            "built_in_applies": built_in,
            "agents_pointing": pointing,
            "switch": fixes.switch(name, agents=pointing) if pointing and built_in else None,
            "notes": notes,
        })  # fmt: skip
        return
    base.emit_notes(notes)


# -- trust -------------------------------------------------------------------------------------------


@click.command("trust")
@click.argument("directory", required=False, metavar="[DIR]")
@click.option("--list", "listing", is_flag=True, help="List the trusted projects: trusted, changed or missing.")
@click.option("--revoke", is_flag=True, help="Stop using the profiles of DIR (default: the project here).")
@click.option(
    "--allow-key-env",
    "allowed",
    multiple=True,
    metavar="PROFILE=VARIABLE",
    help="Let PROFILE read its key from VARIABLE (the one it names) and send it to its hosts (repeatable). "
    "On a terminal, trust asks for each profile not named here.",
)
@base.json_option("Print the result as JSON.")
def trust_command(directory: str | None, listing: bool, revoke: bool, allowed: tuple[str, ...], as_json: bool) -> None:
    """Use the profiles in a project's .agentcfg/profiles/ (a cloned repository's are ignored until then).

    \b
    agentcfg trust               the project here (the nearest .agentcfg/profiles/ from here up)
    agentcfg trust ~/src/team    that project (its directory, or its .agentcfg/profiles)
    agentcfg trust --allow-key-env team=TEAM_API_KEY   and let profile team read TEAM_API_KEY
    agentcfg trust --list        trusted projects, and whether their files changed since
    agentcfg trust --revoke      stop using this project's profiles

    A project profile decides where your prompts and a key go, so check what is shown. Trust covers
    exactly these files, by content: once one is added, removed or changed, the project's profiles are
    ignored again until you trust them again. Even trusted, a project profile never replaces one of
    yours, nor reads another profile's key variable, nor reads its own from your environment unless you
    approve that variable for the hosts shown (asked on a terminal; --allow-key-env in scripts). Without
    the approval its key comes from the keyring only (`agentcfg key set PROFILE`). An approval stays
    while the profile reads that variable for those hosts; --revoke forgets it with the project.
    """
    import sys

    from agentcfg import report, trust, trust_review

    environ = base.environ()
    if listing or revoke:
        if allowed:
            raise AgentcfgError("--allow-key-env is for trusting a project", hint="Run `agentcfg trust DIR` with it.")
        if listing:
            _list_trusted(directory, revoke, environ, as_json)
        else:
            _revoke_trust(directory, environ, as_json)
        return
    directory_found = trust_review.locate(directory, environ)
    root = trust.project_root(directory_found)
    reviewed = trust_review.review(directory_found, environ)
    approvals = trust_review.decide(reviewed, trust_review.parse_allowed(allowed), trust.record_for(root, environ), root)
    if not as_json:
        click.echo(f"Trusting {root} ({directory_found}):")
        width = max(len(str(r["name"])) for r in reviewed.rows)
        for r in reviewed.rows:
            key = f"key {r['key_env']}" if r["key_env"] else "no key"
            click.echo(f"  {r['name']!s:<{width}}  {r['base_url']} ({r['host']})  model {r['model']}  {key}")
        for warning in reviewed.warnings:
            click.echo(f"warning: {warning}", err=True)
        if sys.stdin.isatty():
            approvals = _ask_approvals(reviewed, approvals, root, environ)
    record = trust.Record(reviewed.files, trust.now(), approvals)
    trust.update_store(environ, lambda records: records.update({str(root): record}))
    rows = trust_review.key_rows(reviewed, approvals)
    if as_json:
        document = {"project": str(root), "profiles_dir": str(directory_found), "profiles": rows}
        click.echo(report.dumps({**document, "warnings": reviewed.warnings, "trusted": True}))
        return
    _say_keys(reviewed, rows)
    click.echo(
        f"Trusted {len(reviewed.files)} profile files of {root}. If one changes they are ignored again; "
        f"`agentcfg trust --revoke {root}` stops using them."
    )


def _ask_approvals(reviewed: Any, approvals: dict[str, Any], root: Any, environ: dict[str, str]) -> dict[str, Any]:
    """On a terminal: ask for each profile's variable that --allow-key-env did not approve (default no)."""
    from agentcfg import trust_review

    found = dict(approvals)
    for name, profile in sorted(reviewed.keyed.items()):
        if name in found:
            continue
        try:  # a variable approved for other hosts already is not offered (trust_review.approvals says why)
            wanted = trust_review.approvals(
                reviewed, {**{n: a.variable for n, a in found.items()}, name: profile.key_env}, root
            )
        except AgentcfgError:
            continue
        if click.confirm(trust_review.question(profile, environ), default=False, err=True):
            found = wanted
    return found


def _say_keys(reviewed: Any, rows: list[dict[str, Any]]) -> None:
    """Each key variable, the hosts its key goes to, and whether it was approved (how to, if not)."""
    from agentcfg import trust

    for row in rows:
        if row["key_env_approved"] is None:
            continue
        profile = reviewed.keyed[row["name"]]
        line = f"  {row['name']}: key from {row['key_env']} goes to {trust.sent_to(profile)}: "
        if row["key_env_approved"]:
            click.echo(line + "approved")
        else:
            click.echo(
                line + f"not approved, so it is not read; approve it with `{row['approve']}`, "
                f"or store the key with `agentcfg key set {row['name']}`"
            )


def _list_trusted(directory: str | None, revoke: bool, environ: dict[str, str], as_json: bool) -> None:
    from agentcfg import report, trust

    if directory or revoke:
        raise AgentcfgError("--list takes no DIR and no --revoke", hint="Run `agentcfg trust --list` alone.")
    rows = trust.states(environ)
    if as_json:
        click.echo(report.dumps(rows))
    elif not rows:
        click.echo("No trusted projects. `agentcfg trust DIR` trusts one.")
    for row in rows if not as_json else []:
        files = ", ".join(row["files"])
        extra = f" ({row['differences']})" if row.get("differences") else ""
        keys = "".join(f"; {name} reads {variable}" for name, variable in row["key_env"].items())
        click.echo(f"{row['project']}  {row['state']}{extra}  since {row['trusted_at']}  files: {files}{keys}")


def _revoke_trust(directory: str | None, environ: dict[str, str], as_json: bool) -> None:
    from pathlib import Path

    from agentcfg import report, trust, trust_review

    try:
        root = trust.project_root(trust_review.locate(directory, environ))
    except AgentcfgError:
        if directory is None:
            raise
        root = Path(directory).expanduser().resolve()  # a project since removed can still be revoked

    def forget(records: dict[str, trust.Record]) -> None:
        if str(root) not in records:
            raise AgentcfgError(f"{root} is not trusted", hint="`agentcfg trust --list` shows trusted projects.")
        del records[str(root)]

    trust.update_store(environ, forget)
    if as_json:
        click.echo(report.dumps({"project": str(root), "revoked": True}))
    else:
        click.echo(f"Revoked trust in {root}: its profiles are ignored from now on.")
