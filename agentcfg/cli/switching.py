"""`switch`, `rollback`, `status`, `agents`: what the agents point at, and changing it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from agentcfg.cli import base
from agentcfg.errors import Exit

if TYPE_CHECKING:
    from agentcfg.apply import Journal
    from agentcfg.env import Environ
    from agentcfg.profiles import Profile
    from agentcfg.switch import Outcome

# -- switch ------------------------------------------------------------------------------------------


@click.command()
@click.argument("profile", shell_complete=base.complete_profile)
@click.option("--agent", "agents", multiple=True, type=base.AgentChoice(), help="Switch only this agent (repeatable).")
@click.option("--all", "every", is_flag=True, help="Switch every agent agentcfg supports, installed or not.")
@click.option("--dry-run", is_flag=True, help="Show the diff; write nothing.")
@base.json_option("Print the plan and result as JSON.")
@click.option(
    "--store-key-in-files",
    is_flag=True,
    help="Write the key itself into the agents' files (mode 0600) instead of having them fetch it.",
)
@click.option(
    "--codex-profile-files",
    type=click.Choice(["switched", "all"]),
    default="switched",
    show_default=True,
    help="Codex 0.134+: keep $CODEX_HOME/agentcfg-NAME.config.toml (`codex --profile agentcfg-NAME`) for "
    "every profile switched to, or for all profiles.",
)
def switch(
    profile: str,
    agents: tuple[str, ...],
    every: bool,
    dry_run: bool,
    as_json: bool,
    store_key_in_files: bool,
    codex_profile_files: str,
) -> None:
    """Point the agents at PROFILE, editing only the keys agentcfg owns.

    Without --agent/--all, switches every agent that is installed or already has a config file.
    All files change together or not at all; `agentcfg rollback` undoes it. A key never goes
    into a file unless you pass --store-key-in-files: Claude Code (and Codex 0.119+) fetch it
    with `agentcfg key get`, the others read it from the variable `agentcfg exec` sets.

    Codex 0.134+ also gets a profile file per profile switched to: `codex --profile agentcfg-NAME`
    then runs on NAME whatever config.toml points at. For one process on another profile without
    any file, see `agentcfg exec`.

    \b
    Exit status (--dry-run: the one the real run would have):
      0  the agents point at PROFILE (also when they already did: nothing to change)
      2  refused: bad input or a file that does not parse; nothing written
      3  no agent to switch: none installed or configured, or none can use PROFILE
      4  switched, but PROFILE's key is neither stored nor exported: run `agentcfg key set PROFILE`
    """
    from agentcfg import switch

    request = switch.Request(
        profile, agents, every, dry_run, store_key_in_files, codex_profile_files == "all", base.location_notes()
    )
    environ = base.environ()
    done = switch.switch(request, environ, _route_notes)
    _render_switch(done, environ, dry_run=dry_run, as_json=as_json)
    base.finish(done.code)


def _render_switch(done: Outcome, environ: dict[str, str], *, dry_run: bool, as_json: bool) -> None:
    """The plan and its notes, as text or --json; the same for a dry run, in its own words."""
    from agentcfg import report

    plan, chosen, missing = done.plan, done.profile, done.missing
    if as_json:
        data = report.plan_dict(plan, environ, dry_run=dry_run, entry=done.entry)
        data["switched"] = plan.agents
        data["nothing_to_switch"] = done.code == Exit.NOTHING
        data["key_missing"] = missing.as_dict() if missing else None
        click.echo(report.dumps(data))
        return
    colour = report.use_colour(environ)
    verb = "Would switch" if dry_run else "Switched"
    title = f"{verb} to {chosen.name} ({chosen.model} at {chosen.base_url})"
    if done.code == Exit.NOTHING:
        title = report.nothing_to_switch(chosen.name, done.selected)
    elif not plan.pending and not dry_run:
        title = f"Already on {chosen.name} ({chosen.model} at {chosen.base_url}): nothing to change"
    click.echo(report.plan_text(plan, environ, dry_run=dry_run, colour=colour, title=title))
    if done.code == Exit.NOTHING:
        click.echo(report.nothing_to_switch_help(chosen.name, done.selected))
    base.emit_notes(plan.notes)
    if done.entry:
        click.echo("Undo with: agentcfg rollback")


def _route_notes(chosen: Profile, environ: Environ) -> list[str]:
    """A route that cannot run is refused before anything is written; one whose router is not running is said."""
    from agentcfg.route import control, server

    control.route_and_legs(chosen.name, environ)
    if server.read_process(server.files(chosen.name, environ)) is not None:
        return []
    return [f"route {chosen.name}'s router is not running: the agents fail until `agentcfg route serve {chosen.name}`"]


# -- rollback ----------------------------------------------------------------------------------------


_KEPT = {  # what rollback did with a file edited since the switch (agentcfg.undo)
    "merged": "{} was edited since the switch: agentcfg's change was undone and those edits are kept",
    "kept": "{} was created by the switch and edited since: agentcfg's keys were removed, what others added stays",
    "removed": "{} was created by the switch; only agentcfg's keys and the agent's own stamps were in it: removed",
}


@click.command()
@click.option("--force", is_flag=True, help="Restore files even if they were edited since the switch.")
@click.option("--dry-run", is_flag=True, help="Show what would be restored; write nothing.")
@click.option(
    "--discard",
    metavar="ENTRY",
    help="Set journal entry ENTRY aside instead (one agentcfg cannot use, as status names it); its files stay as "
    "they are.",
)
@base.json_option("Print the result as JSON.")
def rollback(force: bool, dry_run: bool, discard: str | None, as_json: bool) -> None:
    """Undo the most recent switch (or `agentcfg mcp` change), restoring every file it touched byte for byte.

    Each further rollback undoes the one before that (the last 20 are kept); an mcp change gives back
    agentcfg's set of MCP servers too. A journal entry agentcfg
    cannot use (damaged, of a newer agentcfg, naming a file that is not an agent's) is never acted on:
    `status` names it, and `rollback --discard ENTRY` sets it aside.
    """
    from agentcfg import report
    from agentcfg.apply import Journal
    from agentcfg.plan import Plan

    environ = base.environ()
    journal = Journal(environ)
    if discard is not None:
        _discard(journal, discard, dry_run=dry_run, force=force, as_json=as_json)
        return
    with journal.locked() as recovered:
        if recovered and not journal.entries():
            # Recovery just undid an interrupted switch: that was the rollback asked for.
            _rolled_back_by_recovery(recovered + journal.warnings(), environ, as_json)
            return
        entry, changes, kept = journal.rollback_plan(force)
        if not dry_run:
            journal.rollback(entry, changes)
        set_note = _restore_mcp_set(entry.manifest, environ, dry_run)
    notes = list(recovered) + journal.warnings() + ([set_note] if set_note else [])
    notes += [_KEPT[how].format(shown) for shown, how in kept]
    plan = Plan(None, changes, notes=notes)
    undone = entry.manifest.get("profile")
    if as_json:
        data = report.plan_dict(plan, environ, dry_run=dry_run, entry=entry.id)
        data["undone"] = {"entry": entry.id, "profile": undone, "time": entry.manifest["time"]}
        click.echo(report.dumps(data))
        return
    verb = "Would roll back" if dry_run else "Rolled back"
    title = f"{verb} the switch to {undone} ({report.when(entry.manifest['time'])})"
    click.echo(report.plan_text(plan, environ, dry_run=dry_run, colour=report.use_colour(environ), title=title))
    base.emit_notes(plan.notes)


def _discard(journal: Journal, name: str, *, dry_run: bool, force: bool, as_json: bool) -> None:
    """`rollback --discard ENTRY`: set one journal entry aside (Journal.discard); with --dry-run, only say so."""
    from agentcfg import env, report
    from agentcfg.apply import Unusable
    from agentcfg.errors import AgentcfgError

    if force:
        raise AgentcfgError("--discard and --force do not go together", hint="`--discard ENTRY` writes no agent file.")
    with journal.locked(recover=False):
        moved, was = journal.discard(name, dry_run=dry_run)
    problem = was.problem if isinstance(was, Unusable) else None
    if as_json:
        click.echo(report.dumps({"discarded": {"entry": was.id, "moved_to": moved and str(moved), "problem": problem}}))
        return
    shown = env.display(moved, journal.environ) if moved else None
    what = f"journal entry {was.id}" + (f" ({problem})" if problem else "")
    if dry_run:
        click.echo(f"Would set aside {what}")
        return
    click.echo(f"Set aside {what}: moved to {shown}")
    base.emit_notes(["the files it names were left as they are: `agentcfg status` shows what each agent points at"])


def _restore_mcp_set(manifest: dict[str, Any], environ: Environ, dry_run: bool) -> str | None:
    """An `agentcfg mcp` entry also gives back agentcfg's set of MCP servers as it was (agentcfg.mcp.ops)."""
    if manifest.get("kind") != "mcp":
        return None
    from agentcfg.mcp import ops

    return ops.restore_set(manifest, environ, dry_run=dry_run)


def _rolled_back_by_recovery(recovered: list[str], environ: dict[str, str], as_json: bool) -> None:
    from agentcfg import report
    from agentcfg.plan import Plan

    if as_json:
        data = report.plan_dict(Plan(None, notes=recovered), environ, dry_run=False)
        data["changed"], data["undone"] = True, None
        click.echo(report.dumps(data))
        return
    click.echo("Rolled back the interrupted change; the journal holds no earlier switch to roll back")
    base.emit_notes(recovered)


# -- status ------------------------------------------------------------------------------------------


@click.command()
@base.json_option("Print the status as JSON.")
def status(as_json: bool) -> None:
    """What each agent points at now, and whether its agentcfg-owned keys were edited since."""
    from agentcfg import env, profiles, report
    from agentcfg.apply import Journal
    from agentcfg.status import status as agent_status

    environ = base.environ()
    journal = Journal(environ)
    entries, pending, unusable = journal.survey()
    statuses = agent_status(environ, profiles.load_all(environ), entries)
    if as_json:
        data: dict[str, Any] = {
            "agents": report.status_dicts(statuses),
            "interrupted": bool(pending),
            "journal_problems": [{"entry": u.id, "problem": u.problem, "fix": u.fix} for u in unusable],
        }
        click.echo(report.dumps(data))
        return
    click.echo(report.status_text(statuses, report.use_colour(environ)))
    notes = (
        base.location_notes()
        + [u.note(environ) for u in unusable]
        + [
            f"a {e.manifest['kind']} was interrupted ({e.manifest.get('label') or e.id}); the next `agentcfg switch` "
            "or `rollback` puts back every file that still holds what it wrote"
            if e.manifest["status"] == "pending"
            else f"a rollback ({e.manifest.get('label') or e.id}) did not finish its clean-up; the next command does"
            for e in pending
        ]
    )
    saved = sorted(p.name for p in journal.recovered.glob("*"))  # empty when the directory does not exist
    if saved:
        notes.append(
            f"{env.display(journal.recovered, environ)} holds {len(saved)} backup(s) a recovery did not apply because "
            f"the file had changed since ({', '.join(saved)}); delete them once you no longer need them"
        )
    base.emit_notes(notes)


# -- agents ------------------------------------------------------------------------------------------


@click.command("agents")
@base.json_option("Print the table as JSON.")
def agents_command(as_json: bool) -> None:
    """Which agents are installed (path, version, and whether agentcfg is proven with that version),
    their config files, and what each points at."""
    from agentcfg import env, profiles, report, versions
    from agentcfg.agents import AGENTS
    from agentcfg.apply import Journal
    from agentcfg.status import status as agent_status

    environ = base.environ()
    rows = []
    journal = Journal(environ)
    items = agent_status(environ, profiles.load_all(environ), journal.entries())
    found = versions.installed_all(tuple(AGENTS[item.name].TRAITS.binary for item in items), environ)
    for item, version in zip(items, found, strict=True):
        traits = AGENTS[item.name].TRAITS
        rows.append(
            {
                "agent": item.name,
                "path": env.which(traits.binary, environ),
                "version": ".".join(map(str, version)) if version else None,
                "proven": versions.proven(traits.proven, version),
                "files": item.files,
                "configured": item.configured,
                "profile": item.profile,
                "base_url": item.base_url,
                "model": item.model,
                "error": item.error,
            }
        )
    click.echo(report.dumps(rows) if as_json else report.agents_text(rows, environ))
    if not as_json:
        base.emit_notes(journal.warnings())
