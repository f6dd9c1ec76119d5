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
def profile_add(name: str, source: str | None, as_json: bool, **options: Any) -> None:
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
    from agentcfg import profile_ops

    environ = base.environ()
    if source:
        _add_from(name, source, options, environ, as_json)
        return
    if not options["base_url"]:
        raise click.UsageError("give --base-url URL (with --model ID), or --from FILE|URL")
    added = profile_ops.add(profile_ops.AddRequest(name=name, **options), environ, lambda: read_key(name))
    if as_json:
        base.print_json(added.as_json())
        return
    _say_added(added, options["detect"], environ)


def _say_added(added: Any, detect: bool, environ: dict[str, str]) -> None:
    from agentcfg import env, fixes

    new, path, name = added.profile, added.path, added.profile.name
    detected = f" (window {added.detected_window:,} tokens read from the server)" if detect else ""
    click.echo(f"Added profile {name}: {new.model} at {new.base_url}{detected}\n  {env.display(path, environ)}")
    if new.anthropic_base_url:
        click.echo(f"  Claude Code uses {new.anthropic_base_url}/v1/messages")
    if added.key_stored and added.store is not None:
        click.echo(f"  stored its key in the {added.store.label}; agents read it from {new.key_env}")
    elif new.key_env:
        click.echo(f"  agents read its key from {new.key_env}; store the key with: {fixes.key_set(name)}")
    click.echo(f"Switch to it with: {fixes.switch(name)}")


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


def _add_from(name: str, source: str, options: dict[str, Any], environ: dict[str, str], as_json: bool) -> None:
    from agentcfg import env, fixes, profile_edit, profile_ops

    force = options["force"]
    given = profile_ops.typed_options(options)
    if given_options := [option for option, value in given.items() if value not in (None, False)]:
        profile_edit.from_with_options(name, source, given_options, given, force)
    added = profile_ops.add_from(name, source, force, environ)
    if as_json:
        base.print_json(added.as_json())
        return
    new = added.profile
    click.echo(
        f"Added profile {name} from {source}: {new.model} at {new.base_url}\n  {env.display(added.path, environ)}"
    )
    if new.key_env:
        click.echo(f"  agents read its key from {new.key_env}; store the key with: {fixes.key_set(name)}")
    base.emit_notes(added.notes)
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
    from agentcfg import env, profile_ops

    environ = base.environ()
    removed = profile_ops.remove(name, keep_key, environ)
    if as_json:
        base.print_json(removed.as_json())
        return
    click.echo(f"Removed profile {name} ({env.display(removed.path, environ)})")
    for line in removed.said:
        click.echo(line)
    if removed.built_in:
        click.echo(f"The built-in profile {name} applies again.")
    base.emit_notes(removed.notes)


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
    """Use a project's profiles (.agentcfg/profiles/) and MCP files (.mcp.json, opencode.json, .agentcfg/mcp.toml).

    \b
    agentcfg trust               the project here (the nearest .agentcfg/ or MCP file from here up)
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

    The MCP servers those files define are shown with the command each runs (or its URL) and its
    variables: `agentcfg mcp import` and `sync` take none of them until you trust the files, and never
    one with a value an agent expands (${VAR}, {env:VAR}, $(...), backticks), which trust flags.
    """
    import sys

    from agentcfg import report, trust_review

    environ = base.environ()
    if listing or revoke:
        _list_or_revoke(directory, listing, revoke, allowed, environ, as_json)
        return
    pending = trust_review.prepare(directory, allowed, environ)
    if not as_json:
        _say_review(pending)
        if sys.stdin.isatty():
            _ask_approvals(pending, environ)
    rows = trust_review.commit(pending, environ)
    if as_json:
        click.echo(report.dumps(_trusted_document(pending, rows)))
    else:
        _say_trusted(pending, rows)


def _trusted_document(pending: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    mcp = pending.reviewed.mcp
    return {"project": str(pending.root), "profiles_dir": str(pending.directory), "profiles": rows,
            "mcp_files": sorted(mcp.files), "mcp_servers": mcp.servers, "warnings": pending.reviewed.warnings,
            "trusted": True}  # fmt: skip


def _say_review(pending: Any) -> None:
    from agentcfg.mcp import project

    click.echo(f"Trusting {pending.root}" + (f" ({pending.directory}):" if pending.reviewed.rows else ":"))
    width = max((len(str(r["name"])) for r in pending.reviewed.rows), default=0)
    for r in pending.reviewed.rows:
        key = f"key {r['key_env']}" if r["key_env"] else "no key"
        click.echo(f"  {r['name']!s:<{width}}  {r['base_url']} ({r['host']})  model {r['model']}  {key}")
    mcp = pending.reviewed.mcp
    if mcp.files:
        click.echo(f"MCP servers an agent starts in this project ({', '.join(sorted(mcp.files))}):")
        for line in project.lines(mcp.servers) or ["  (none)"]:
            click.echo(line)
    for warning in pending.reviewed.warnings:
        click.echo(f"warning: {warning}", err=True)


def _ask_approvals(pending: Any, environ: dict[str, str]) -> None:
    """On a terminal: ask for each profile's variable that --allow-key-env did not approve (default no)."""
    from agentcfg import trust_review

    for name, profile in sorted(pending.reviewed.keyed.items()):
        if name in pending.approvals:
            continue
        wanted = trust_review.offer(pending, name, profile)  # None: approved for other hosts already
        if wanted is not None and click.confirm(trust_review.question(profile, environ), default=False, err=True):
            pending.approvals = wanted


def _list_or_revoke(
    directory: str | None, listing: bool, revoke: bool, allowed: tuple[str, ...], environ: dict[str, str], json: bool
) -> None:
    if allowed:
        raise AgentcfgError("--allow-key-env is for trusting a project", hint="Run `agentcfg trust DIR` with it.")
    if listing:
        _list_trusted(directory, revoke, environ, json)
    else:
        _revoke_trust(directory, environ, json)


def _say_trusted(pending: Any, rows: list[dict[str, Any]]) -> None:
    """Each key variable, the hosts its key goes to, and whether it was approved (how to, if not); then what
    was trusted."""
    from agentcfg import trust

    for row in rows:
        if row["key_env_approved"] is None:
            continue
        profile = pending.reviewed.keyed[row["name"]]
        line = f"  {row['name']}: key from {row['key_env']} goes to {trust.sent_to(profile)}: "
        if row["key_env_approved"]:
            click.echo(line + "approved")
        else:
            click.echo(
                line + f"not approved, so it is not read; approve it with `{row['approve']}`, "
                f"or store the key with `agentcfg key set {row['name']}`"
            )
    mcp = pending.reviewed.mcp.files
    also = f" and the MCP files {', '.join(sorted(mcp))}" if mcp else ""
    click.echo(
        f"Trusted {len(pending.reviewed.files)} profile files{also} of {pending.root}. If one changes they are "
        f"ignored again; `agentcfg trust --revoke {pending.root}` stops using them."
    )


def _list_trusted(directory: str | None, revoke: bool, environ: dict[str, str], as_json: bool) -> None:
    from agentcfg import report, trust_review

    if directory or revoke:
        raise AgentcfgError("--list takes no DIR and no --revoke", hint="Run `agentcfg trust --list` alone.")
    rows = trust_review.states(environ)
    if as_json:
        click.echo(report.dumps(rows))
    elif not rows:
        click.echo("No trusted projects. `agentcfg trust DIR` trusts one.")
    for row in rows if not as_json else []:
        files = ", ".join(row["files"] + row["mcp_files"])
        extra = f" ({row['differences']})" if row.get("differences") else ""
        keys = "".join(f"; {name} reads {variable}" for name, variable in row["key_env"].items())
        click.echo(f"{row['project']}  {row['state']}{extra}  since {row['trusted_at']}  files: {files}{keys}")


def _revoke_trust(directory: str | None, environ: dict[str, str], as_json: bool) -> None:
    from agentcfg import report, trust_review

    root = trust_review.revoke(directory, environ)
    if as_json:
        click.echo(report.dumps({"project": str(root), "revoked": True}))
    else:
        click.echo(f"Revoked trust in {root}: its profiles and MCP files are ignored from now on.")
