"""`init` and `profile import`: a machine's existing endpoints and keys, taken over."""

from __future__ import annotations

import sys
from typing import Any

import click

from agentcfg.cli import base
from agentcfg.errors import AgentcfgError

# -- init ------------------------------------------------------------------------------------------


@click.command()
@click.option(
    "--profile",
    "profile_name",
    shell_complete=base.complete_profile,
    help="The profile to switch to (default: ask on a terminal, else local).",
)
@click.option("--key-stdin", is_flag=True, help="Read the profile's key from one line of stdin (for scripts).")
@click.option("--yes", is_flag=True, help="Answer yes to every question (move found keys); never prompt.")
@click.option("--agents", "agents", multiple=True, type=click.Choice(base.AGENT_NAMES), help="Only these agents.")
def init(profile_name: str | None, key_stdin: bool, yes: bool, agents: tuple[str, ...]) -> None:
    """Set up this machine: import what the agents use now, store the key, switch, and check.

    \b
    agentcfg init                                   interactive on a terminal
    agentcfg init --profile local --yes             scripted: never waits for input
    printf %s "$KEY" | agentcfg init --profile taotoken --key-stdin --yes
    """
    from agentcfg import doctor as doc
    from agentcfg import env, fsutil, keystore, onboard, profiles
    from agentcfg.apply import Journal
    from agentcfg.switch import key_source, plan_switch, select

    environ = base.environ()
    interactive = sys.stdin.isatty() and not yes and not key_stdin
    fsutil.private_dir(env.config_dir(environ))
    click.echo(f"1. agentcfg's config: {env.display(env.config_dir(environ), environ)}")
    notes: list[str] = []
    imported = onboard.import_profiles(environ, move_keys=_mover(yes, False, notes))
    click.echo("2. endpoints the agents already use:\n" + _import_text(imported))
    base.emit_notes(imported.notes + notes)
    known = profiles.load_all(environ)
    if not profile_name and interactive:
        profile_name = click.prompt(
            "Switch to which profile?", type=click.Choice(sorted(known)), default="local", err=True
        )
    chosen = profiles.get(profile_name or "local", environ)
    if chosen.key_env and chosen.name not in keystore.remembered(environ) and not environ.get(chosen.key_env):
        value = None
        if key_stdin:
            value = sys.stdin.readline().removesuffix("\n").removesuffix("\r")
        elif interactive:
            value = click.prompt(f"Key for {chosen.name} (input hidden)", hide_input=True, err=True)
        if value:
            if reason := keystore.check_value(value):
                raise AgentcfgError(f"not storing the key for {chosen.name}: {reason}")
            keystore.KeyStore(environ, chosen).store(chosen, value)
            click.echo(f"3. stored the key for {chosen.name} in the keyring")
        else:
            click.echo(f"3. no key for {chosen.name} yet: store it with `agentcfg key set {chosen.name}`")
    else:
        click.echo(f"3. {chosen.name}: " + ("key already stored" if chosen.key_env else "needs no key"))
    selected, skipped = select(agents, False, environ)
    for agent in [a for a in selected if a.NAME in imported.holding_keys]:  # a switch would replace their key
        selected.remove(agent)
        skipped[agent.NAME] = (
            f"its file holds a plaintext key that stayed out of the keyring; "
            f"`agentcfg switch {chosen.name} --agent {agent.NAME}` replaces it (rollback restores)"
        )
    keys, key_notes = key_source(chosen, selected, environ)
    journal = Journal(environ)
    with journal.locked() as recovered:
        plan = plan_switch(chosen, selected, environ, keys)
        entry = journal.commit(plan.changes, {"kind": "switch", "profile": chosen.name, "label": "init"})
    base.emit_notes(recovered)
    names = ", ".join(dict.fromkeys(c.agent for c in plan.pending)) or "nothing to change"
    undo = " (undo: agentcfg rollback" + (", again for each key moved" if imported.moved else "") + ")"
    click.echo(f"4. switched to {chosen.name}: {names}" + (undo if entry else ""))
    for agent, why in {**skipped, **plan.skipped}.items():
        click.echo(f"   {agent}: skipped, {why}")
    base.emit_notes(plan.notes + key_notes)
    if not selected:
        click.echo("5. doctor: no agent was switched; nothing to check")
        return
    targets = doc.targets_from_profile(chosen, selected, environ)
    result = doc.run(targets, environ, deadline=3.0)
    counts = result.summary()
    failed = sorted({f"{f.agent or 'server'}: {f.id}" for f in result.findings if f.status == "fail"})
    click.echo(
        f"5. doctor: {counts['fail']} failed, {counts['warn']} warnings, {counts['pass']} passed"
        + (f" ({'; '.join(failed)}); details: agentcfg doctor" if failed else "")
    )


def _mover(yes: bool, keep: bool, notes: list[str]) -> Any:
    """Whether to move a plaintext key into the keyring: --yes moves, a terminal asks, a script never blocks."""

    def decide(candidate: Any) -> bool:
        where = ", ".join(candidate.found_in)
        if keep:
            return False
        if yes:
            return True
        if sys.stdin.isatty():
            return click.confirm(
                f"Move the plaintext key of {candidate.name} ({where}) into the keyring?", default=True, err=True
            )
        notes.append(f"{candidate.name}: a plaintext key stays in {where} (add --yes to move it into the keyring)")
        return False

    return decide


def _import_text(result: Any) -> str:
    lines = []
    for c in result.candidates:
        state = f"known as {c.known_as}" if c.known_as else "added" if c.name in result.created else "skipped"
        key = " · key moved to the keyring" if c.name in result.moved else " · plaintext key left" if c.key else ""
        lines.append(f"  {c.name:<14} {c.model} at {c.base_url}  ({', '.join(c.found_in)}; {state}{key})")
    return "\n".join(lines) if lines else "  (no agent points at any endpoint yet)"


@click.command("import")
@click.option("--yes", is_flag=True, help="Move every plaintext key found into the keyring without asking.")
@click.option("--keep-keys", is_flag=True, help="Import the endpoints only; leave plaintext keys where they are.")
@base.json_option("Print the result as JSON (never a key).")
def profile_import(yes: bool, keep_keys: bool, as_json: bool) -> None:
    """Turn every endpoint the agents (and OPENAI_*/ANTHROPIC_* variables) already use into a profile.

    A plaintext key found beside one moves into the keyring, and the files that held it then
    reference the keyring instead (`agentcfg rollback` puts it back).
    """
    from agentcfg import onboard, report

    environ = base.environ()
    notes: list[str] = []
    result = onboard.import_profiles(environ, move_keys=_mover(yes, keep_keys, notes))
    if as_json:
        rows = [
            {
                "name": c.name,
                "base_url": c.base_url,
                "model": c.model,
                "anthropic_base_url": c.anthropic_base_url,
                "key_env": c.key_env,
                "found_in": c.found_in,
                "known_as": c.known_as,
                "created": c.name in result.created,
                "key_found": bool(c.key),
                "key_moved": c.name in result.moved,
            }
            for c in result.candidates
        ]
        click.echo(report.dumps({"profiles": rows, "notes": result.notes + notes}))
        return
    click.echo("Endpoints found:\n" + _import_text(result))
    base.emit_notes(result.notes + notes)
