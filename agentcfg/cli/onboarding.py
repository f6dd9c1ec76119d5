"""`init` and `profile import`: a machine's existing endpoints and keys, taken over.

Both run in one order: read and show what the machine has (onboard.survey, no write), check every input
and the keyring once, ask (on a terminal), then write. The decisions are onboard's; this parses and renders.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from agentcfg.cli import base
from agentcfg.cli.keys import read_key
from agentcfg.errors import AgentcfgError, Exit

if TYPE_CHECKING:
    from agentcfg.init import Answers, Written

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
@click.option("--agents", "agents", multiple=True, type=base.AgentChoice(), help="Only these agents.")
@click.option(
    "--no-check", "no_check", is_flag=True, help="Skip the closing `agentcfg doctor` check (it sends requests)."
)
@base.json_option("Print one JSON document of every step (never a key); never prompts. Errors too, on stdout.")
def init(
    profile_name: str | None, key_stdin: bool, yes: bool, agents: tuple[str, ...], no_check: bool, as_json: bool
) -> None:
    """Set up this machine: import what the agents use now, store the key, switch, and check.

    \b
    agentcfg init                                   interactive on a terminal
    agentcfg init --profile local --yes             scripted: never waits for input
    printf %s "$KEY" | agentcfg init --profile taotoken --key-stdin --yes

    \b
    It shows what it found first, checks --profile and the keyring, then asks, then writes.
    Exit status: 0 switched and ready; 2 refused (an unknown profile, a key to store and no
    usable keyring, a malformed key): nothing written; 3 no agent installed or configured, so
    nothing switched; 4 switched, but the profile's key is neither stored nor exported (run the
    `agentcfg key set` command it prints). The closing check is `agentcfg doctor`'s own (the same
    agents, the same counts) and does not change the status: `agentcfg doctor` exits 1 on a failure.
    `--no-check` skips it (no request is sent).
    """

    environ = base.environ()
    answers = _prepare(environ, profile_name, key_stdin, yes, as_json)  # writes nothing: a refusal leaves no trace
    _write_init(answers, agents, not no_check, as_json)


def _prepare(environ: dict[str, str], profile_name: str | None, key_stdin: bool, yes: bool, as_json: bool) -> Answers:
    """Steps (a) to (d): show, check, ask. Nothing written; the answers _write_init writes."""
    from agentcfg import onboard
    from agentcfg.init import Answers

    interactive = sys.stdin.isatty() and not yes and not key_stdin and not as_json
    notes: list[str] = []
    found, existing, chosen, keyring, checked = _show_and_check(environ, profile_name, key_stdin, interactive, as_json)
    # (d) the questions
    found = _ask_models(found, environ, interactive, notes)
    known = {**found.new, **existing}
    offered = onboard.moves_offered(found, keep=False, keyring=keyring)
    move = _decide_moves(offered, yes, interactive, notes, environ)
    if chosen is None and profile_name:  # named an endpoint without a model: unknown if the user skipped it
        chosen = onboard.choose(profile_name, known)
    if chosen is None:
        choice = click.prompt("Switch to which profile?", type=click.Choice(sorted(known)), default="local", err=True)
        chosen = known[choice]
    if not checked and onboard.needs_key(chosen, environ) and (key_stdin or interactive):
        keyring = onboard.keyring_problem(environ, chosen)  # a profile only an answer made known
    key_plan = _plan_key(onboard, chosen, environ, key_stdin, interactive, keyring, moving=chosen.name in move)
    value = _read_key(chosen.name, key_stdin) if key_plan.state == "read" else None
    return Answers(chosen.name, value, key_plan.state, found, move, keyring, notes)


def _show_and_check(
    environ: dict[str, str], profile_name: str | None, key_stdin: bool, interactive: bool, as_json: bool
) -> tuple[Any, dict[str, Any], Any, Any, bool]:
    """Steps (a) to (c): what the machine has, --profile and the keyring checked before any question. The survey,
    the profiles there are, the one chosen already (None: to ask), the keyring's problem, and whether it was checked."""
    from agentcfg import env, onboard, profiles

    say = _quiet if as_json else click.echo
    # (a) what the machine has, nothing written
    found = onboard.survey(environ)
    existing = profiles.load_all(environ)
    say(f"1. agentcfg's config: {env.display(env.config_dir(environ), environ)}")
    say("2. endpoints the agents already use:\n" + _survey_text(found))
    # (b) every input checked: --profile may name a profile this import adds
    known = {**found.new, **existing}
    asked_model = {u.name for u in found.unmodelled} if interactive else set()
    if profile_name and profile_name not in known and profile_name not in asked_model:
        raise onboard.unknown_profile(profile_name, known)
    chosen = known.get(profile_name or "local") if profile_name or not interactive else None
    # (c) the keyring, once, before any question, when a key will be needed
    to_store = [chosen] if chosen else list(known.values()) if interactive else []
    key_needed = (key_stdin or interactive) and any(onboard.needs_key(p, environ) for p in to_store if p)
    moves_possible = bool(found.with_keys) or any(u.key for u in found.unmodelled)
    checked = key_needed or moves_possible
    keyring = onboard.keyring_problem(environ, chosen) if checked else None
    if chosen:
        _plan_key(onboard, chosen, environ, key_stdin, interactive, keyring)  # refuses before any question
    if keyring:  # said once, up front
        then = "the plaintext keys found stay where they are" if moves_possible else "no key can be stored"
        base.emit_notes([f"{keyring.message}: {then}"])
    return found, existing, chosen, keyring, checked


def _quiet(text: str) -> None:
    """--json: the steps go into the document, not on stdout as text."""


def _plan_key(
    onboard: Any,
    chosen: Any,
    environ: dict[str, str],
    key_stdin: bool,
    interactive: bool,
    keyring: Any,
    *,
    moving: bool = False,
) -> Any:
    """init's key step, refused (before anything is read or written) when the key could not be stored.
    `moving`: the import moves the key found beside the profile into the keyring; nothing to ask then."""
    plan = onboard.plan_key(
        chosen,
        needs=onboard.needs_key(chosen, environ) and not (moving and not key_stdin),
        key_stdin=key_stdin,
        interactive=interactive,
        keyring=keyring,
    )
    if plan.refusal:
        raise plan.refusal
    return plan


def _read_key(name: str, key_stdin: bool) -> str | None:
    """The key, from the one line of stdin (as `key set` reads it) or a hidden prompt that may be left empty,
    checked before anything is written."""
    from agentcfg import keystore

    refusal = f"not storing the key for {name}"
    if key_stdin:
        return read_key(name, refusal=refusal)
    value = click.prompt(f"Key for {name} (input hidden)", hide_input=True, err=True, default="", show_default=False)
    if value and (reason := keystore.check_value(value, typed=True)):
        raise AgentcfgError(f"{refusal}: {reason}", hint="Nothing was written.")
    return value or None


def _write_init(answers: Answers, agents: tuple[str, ...], check: bool, as_json: bool) -> None:
    """Steps 1 to 6 written and said (agentcfg.init), then the closing check, the serve offer and the status."""
    from agentcfg import init as steps
    from agentcfg.serve.offer import offer

    environ = base.environ()
    say = _quiet if as_json else click.echo
    written = steps.write(answers, agents, environ, say, base.emit_notes)
    doctor = _closing_check(written.switched, agents, check, say, environ)
    serve = offer(written.chosen, environ)
    if serve:
        say(f"6. serve: vLLM is installed and nothing answers at {written.chosen.base_url}: start it with `{serve}`")
    base.emit_notes(steps.closing_notes(written))
    if as_json:
        base.print_json(_init_json(written, answers, doctor, serve, environ))
    base.finish(written.status)


def _init_json(
    written: Written, answers: Answers, doctor: dict[str, Any] | None, serve: str | None, environ: dict[str, str]
) -> dict[str, Any]:
    """`init --json`: every step in one document (never a key)."""
    from agentcfg import env, fixes

    chosen, key_state, plan = written.chosen, written.key_state, written.plan
    missing = key_state == "missing"
    return {
        "config_dir": str(env.config_dir(environ)),
        "profiles": _rows(written.imported),
        "notes": written.imported.notes + answers.notes,
        "profile": chosen.name,
        "key": {"state": key_state, "key_env": chosen.key_env, "fix": fixes.key_set(chosen.name) if missing else None},
        "switch": {
            "agents": written.switched,
            "changed": list(dict.fromkeys(c.agent for c in plan.pending)),
            "skipped": written.skipped,
            "journal_entry": written.entry,
        },
        "doctor": doctor,
        "checked": doctor is not None,
        "serve": serve,
        "nothing_to_switch": written.status == Exit.NOTHING,  # as in `switch --json`
        "key_missing": {"profile": chosen.name, "key_env": chosen.key_env, "fix": fixes.key_set(chosen.name)}
        if missing
        else None,
        "exit": int(written.status),
    }


def _closing_check(
    switched: list[str], agents: tuple[str, ...], check: bool, say: Any, environ: dict[str, str]
) -> dict[str, Any] | None:
    """Step 5: `agentcfg doctor` itself (doctor.check_now: the same agents, deadline and counts as the command
    run right after), summed up in one line; None when it did not run."""
    from agentcfg import doctor as doc
    from agentcfg import fixes
    from agentcfg.agents import AGENTS
    from agentcfg.doctor import render

    command = fixes.command("agentcfg", "doctor", *(w for a in dict.fromkeys(agents) for w in ("--agent", a)))
    if not switched:
        say("5. doctor: no agent was switched; nothing to check")
        return None
    if not check:
        say(f"5. doctor: not run (--no-check); check with `{command}`")
        return None
    result = doc.check_now([AGENTS[n] for n in AGENTS if not agents or n in agents], environ)
    counts = result.summary()

    def named(status: str) -> list[str]:
        return sorted({f"{f.agent or 'server'}: {f.id}" for f in result.findings if f.status == status})

    failed, warned = named("fail"), named("warn")
    problems = "; ".join([*failed, *(f"{w} (warning)" for w in warned)])
    say(f"5. doctor: {render.tally(counts)}" + (f" ({problems}); details: {command}" if problems else ""))
    return {"fail": counts["fail"], "warn": counts["warn"], "pass": counts["pass"], "failed": failed, "warned": warned}


def _ask_models(found: Any, environ: dict[str, str], interactive: bool, notes: list[str]) -> Any:
    """An endpoint whose files name no model: a terminal asks for it (empty: skip); a script skips it, noted."""
    from agentcfg import onboard

    models = {}
    for item in found.unmodelled:
        if interactive:
            answer = click.prompt(
                f"{item.files} points at {item.base_url} but names no model. "
                f"Which model id should profile {item.name} use? (empty: do not import it)",
                default="",
                show_default=False,
                err=True,
            ).strip()
            if answer:
                models[item.where] = answer
                continue
        notes.append(onboard.unmodelled_note(item))
    return onboard.survey(environ, models) if models else found


def _decide_moves(
    offered: list[Any], yes: bool, interactive: bool, notes: list[str], environ: dict[str, str]
) -> set[str]:
    """Which plaintext keys move into the keyring: --yes moves, a terminal asks (saying first what the profile
    is and where its key is), a script never blocks (the key stays, noted)."""
    from agentcfg import onboard

    move = set()
    for candidate in offered:
        where = ", ".join(candidate.found_in)
        if yes:
            move.add(candidate.name)
        elif interactive:
            if click.confirm(onboard.move_question(candidate, environ), default=True, err=True):
                move.add(candidate.name)
        else:
            notes.append(f"{candidate.name}: a plaintext key stays in {where} (add --yes to move it into the keyring)")
    return move


def _survey_text(found: Any) -> str:
    lines = []
    for c in found.candidates:
        state = f"known as {c.known_as}" if c.known_as else "new"
        key = " · plaintext key found" if c.key else ""
        lines.append(f"  {c.name:<14} {c.model} at {c.base_url}  ({', '.join(c.found_in)}; {state}{key})")
    for u in found.unmodelled:
        lines.append(f"  {u.name:<14} (no model) at {u.base_url}  ({u.where}; needs a model id)")
    return "\n".join(lines) if lines else "  (no endpoint to import)"


def _import_text(result: Any) -> str:
    lines = []
    for c in result.candidates:
        state = f"known as {c.known_as}" if c.known_as else "added" if c.name in result.created else "skipped"
        key = " · key moved to the keyring" if c.name in result.moved else " · plaintext key left" if c.key else ""
        lines.append(f"  {c.name:<14} {c.model} at {c.base_url}  ({', '.join(c.found_in)}; {state}{key})")
    return "\n".join(lines) if lines else "  (no endpoint to import)"


def _rows(result: Any) -> list[dict[str, Any]]:
    """One row per endpoint found, as `profile import --json` and `init --json` print them (never a key)."""
    return [
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


@click.command("import")
@click.option("--yes", is_flag=True, help="Move every plaintext key found into the keyring without asking.")
@click.option("--keep-keys", is_flag=True, help="Import the endpoints only; leave plaintext keys where they are.")
@base.json_option("Print the result as JSON (never a key); never prompts.")
def profile_import(yes: bool, keep_keys: bool, as_json: bool) -> None:
    """Turn every endpoint the agents (and OPENAI_*/ANTHROPIC_* variables) already use into a profile.

    A plaintext key found beside one moves into the keyring, and the files that held it then
    reference the keyring instead (`agentcfg rollback` puts it back). The keyring is checked once,
    first: without one, every key stays where it is, with a note. On a terminal it asks for the
    model of an endpoint whose files name none (Claude Code without ANTHROPIC_MODEL or a model slot).
    """
    from agentcfg import onboard

    environ = base.environ()
    interactive = sys.stdin.isatty() and not yes and not as_json
    notes: list[str] = []
    found = onboard.survey(environ)
    moves_possible = not keep_keys and (bool(found.with_keys) or any(u.key for u in found.unmodelled))
    keyring = onboard.keyring_problem(environ) if moves_possible else None
    found = _ask_models(found, environ, interactive, notes)
    offered = onboard.moves_offered(found, keep=keep_keys, keyring=keyring)
    move = _decide_moves(offered, yes, interactive, notes, environ)
    result = onboard.import_profiles(
        environ, move_keys=lambda c: c.name in move, found=found, keyring=None if keep_keys else keyring
    )
    if as_json:
        base.print_json({"profiles": _rows(result), "notes": result.notes + notes})
        return
    click.echo("Endpoints found:\n" + _import_text(result))
    base.emit_notes(result.notes + notes)
