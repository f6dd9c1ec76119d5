"""The command line: each command parses its options, calls one function, renders the result.

Heavy modules (httpx, keyring, jsonschema) are imported where they are used, so that
`agentcfg switch` does not pay for the network stack.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

import click

from agentcfg import __version__
from agentcfg.errors import AgentcfgError

AGENT_NAMES = ("codex", "qwen", "opencode", "claude")  # agents.AGENTS, without importing it for --help


def _environ() -> dict[str, str]:
    return dict(os.environ)


def _complete_profile(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    from agentcfg import profiles

    try:
        return [n for n in sorted(profiles.load_all(_environ())) if n.startswith(incomplete)]
    except AgentcfgError:
        return []


def _emit_notes(notes: list[str]) -> None:
    for note in notes:
        click.echo(f"note: {note}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="agentcfg")
def cli() -> None:
    """Point Codex CLI, qwen-code, opencode and Claude Code at one provider.

    \b
    agentcfg init                       set up this machine (import, keys, switch, check)
    agentcfg switch local               every installed agent -> the vLLM on localhost:8000
    agentcfg switch taotoken            ... -> the TaoToken gateway
    agentcfg status                     what each agent points at now
    agentcfg rollback                   undo the last switch, byte for byte
    agentcfg doctor                     an agent fails? the cause, and the fix
    agentcfg bench --both               time to first token and tok/s, streamed and not
    agentcfg key set taotoken           keep the gateway key in the OS keyring
    agentcfg exec taotoken -- opencode  run an agent with the key set
    agentcfg trust                      use this repository's .agentcfg/profiles (ignored until then)
    agentcfg profile set local context_window=65536   change a field (a built-in becomes yours)
    """


# -- switch ------------------------------------------------------------------------------------------


@cli.command()
@click.argument("profile", shell_complete=_complete_profile)
@click.option(
    "--agent", "agents", multiple=True, type=click.Choice(AGENT_NAMES), help="Switch only this agent (repeatable)."
)
@click.option("--all", "every", is_flag=True, help="Switch all four agents, installed or not.")
@click.option("--dry-run", is_flag=True, help="Show the diff; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan and result as JSON.")
@click.option(
    "--store-key-in-files",
    is_flag=True,
    help="Write the key itself into the agents' files (mode 0600) instead of having them fetch it.",
)
def switch(
    profile: str, agents: tuple[str, ...], every: bool, dry_run: bool, as_json: bool, store_key_in_files: bool
) -> None:
    """Point the agents at PROFILE, editing only the keys agentcfg owns.

    Without --agent/--all, switches every agent that is installed or already has a config file.
    All files change together or not at all; `agentcfg rollback` undoes it. A key never goes
    into a file unless you pass --store-key-in-files: Claude Code (and Codex 0.119+) fetch it
    with `agentcfg key get`, the others read it from the variable `agentcfg exec` sets.
    """
    from agentcfg import profiles, report
    from agentcfg.apply import Journal
    from agentcfg.switch import key_source, plan_switch, select

    environ = _environ()
    chosen = profiles.get(profile, environ)
    selected, skipped = select(agents, every, environ)
    keys, key_notes = key_source(chosen, selected, environ, store_in_files=store_key_in_files)
    entry_id, recovered = None, []
    if dry_run:
        plan = plan_switch(chosen, selected, environ, keys)
    else:
        journal = Journal(environ)
        with journal.locked() as recovered:
            plan = plan_switch(chosen, selected, environ, keys)
            entry = journal.commit(
                plan.changes, {"kind": "switch", "profile": chosen.name, "label": f"switch {profile}"}
            )
            entry_id = entry.id if entry else None
    plan.skipped = {**skipped, **plan.skipped}
    plan.notes = list(recovered) + plan.notes + key_notes
    if as_json:
        click.echo(report.dumps(report.plan_dict(plan, environ, dry_run=dry_run, entry=entry_id)))
        return
    colour = report.use_colour(environ)
    verb = "Would switch" if dry_run else "Switched"
    title = f"{verb} to {chosen.name} ({chosen.model} at {chosen.base_url})"
    if not plan.changes:
        title = f"No agent to switch to {chosen.name}: none is installed or configured (--all sets up all four)"
    elif not plan.pending and not dry_run:
        title = f"Already on {chosen.name} ({chosen.model} at {chosen.base_url}): nothing to change"
    click.echo(report.plan_text(plan, environ, dry_run=dry_run, colour=colour, title=title))
    _emit_notes(plan.notes)
    if entry_id:
        click.echo("Undo with: agentcfg rollback")


# -- rollback ----------------------------------------------------------------------------------------


_KEPT = {  # what rollback did with a file edited since the switch (agentcfg.undo)
    "merged": "{} was edited since the switch: agentcfg's change was undone and those edits are kept",
    "kept": "{} was created by the switch and edited since: agentcfg's keys were removed, what others added stays",
    "removed": "{} was created by the switch; only agentcfg's keys and the agent's own stamps were in it: removed",
}


@cli.command()
@click.option("--force", is_flag=True, help="Restore files even if they were edited since the switch.")
@click.option("--dry-run", is_flag=True, help="Show what would be restored; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def rollback(force: bool, dry_run: bool, as_json: bool) -> None:
    """Undo the most recent switch, restoring every file it touched byte for byte.

    Each further rollback undoes the switch before that (the last 20 are kept).
    """
    from agentcfg import report
    from agentcfg.apply import Journal
    from agentcfg.plan import Plan

    environ = _environ()
    journal = Journal(environ)
    with journal.locked() as recovered:
        if recovered and not journal.entries():
            # Recovery just undid an interrupted switch: that was the rollback asked for.
            _rolled_back_by_recovery(recovered, environ, as_json)
            return
        entry, changes, kept = journal.rollback_plan(force)
        if not dry_run:
            journal.rollback(entry, changes)
    notes = list(recovered)
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
    _emit_notes(plan.notes)


def _rolled_back_by_recovery(recovered: list[str], environ: dict[str, str], as_json: bool) -> None:
    from agentcfg import report
    from agentcfg.plan import Plan

    if as_json:
        data = report.plan_dict(Plan(None, notes=recovered), environ, dry_run=False)
        data["changed"], data["undone"] = True, None
        click.echo(report.dumps(data))
        return
    click.echo("Rolled back the interrupted change; the journal holds no earlier switch to roll back")
    _emit_notes(recovered)


# -- status ------------------------------------------------------------------------------------------


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(as_json: bool) -> None:
    """What each agent points at now, and whether its agentcfg-owned keys were edited since."""
    from agentcfg import env, profiles, report
    from agentcfg.apply import Journal
    from agentcfg.switch import status as agent_status

    environ = _environ()
    journal = Journal(environ)
    statuses = agent_status(environ, profiles.load_all(environ), journal.entries())
    pending = journal.pending()
    if as_json:
        data: dict[str, Any] = {"agents": report.status_dicts(statuses), "interrupted": bool(pending)}
        click.echo(report.dumps(data))
        return
    click.echo(report.status_text(statuses, report.use_colour(environ)))
    notes = [
        f"a {e.manifest['kind']} was interrupted ({e.manifest.get('label') or e.id}); the next `agentcfg switch` "
        "or `rollback` puts back every file that still holds what it wrote"
        if e.manifest["status"] == "pending"
        else f"a rollback ({e.manifest.get('label') or e.id}) did not finish its clean-up; the next command does"
        for e in pending
    ]
    saved = sorted(p.name for p in journal.recovered.glob("*"))  # empty when the directory does not exist
    if saved:
        notes.append(
            f"{env.display(journal.recovered, environ)} holds {len(saved)} backup(s) a recovery did not apply because "
            f"the file had changed since ({', '.join(saved)}); delete them once you no longer need them"
        )
    _emit_notes(notes)


# -- init ------------------------------------------------------------------------------------------


@cli.command()
@click.option("--profile", "profile_name", help="The profile to switch to (default: ask on a terminal, else local).")
@click.option("--key-stdin", is_flag=True, help="Read the profile's key from one line of stdin (for scripts).")
@click.option("--yes", is_flag=True, help="Answer yes to every question (move found keys); never prompt.")
@click.option("--agents", "agents", multiple=True, type=click.Choice(AGENT_NAMES), help="Only these agents.")
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

    environ = _environ()
    interactive = sys.stdin.isatty() and not yes and not key_stdin
    fsutil.private_dir(env.config_dir(environ))
    click.echo(f"1. agentcfg's config: {env.display(env.config_dir(environ), environ)}")
    notes: list[str] = []
    imported = onboard.import_profiles(environ, move_keys=_mover(yes, False, notes))
    click.echo("2. endpoints the agents already use:\n" + _import_text(imported))
    _emit_notes(imported.notes + notes)
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
    _emit_notes(recovered)
    names = ", ".join(dict.fromkeys(c.agent for c in plan.pending)) or "nothing to change"
    undo = " (undo: agentcfg rollback" + (", again for each key moved" if imported.moved else "") + ")"
    click.echo(f"4. switched to {chosen.name}: {names}" + (undo if entry else ""))
    for agent, why in {**skipped, **plan.skipped}.items():
        click.echo(f"   {agent}: skipped, {why}")
    _emit_notes(plan.notes + key_notes)
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


# -- doctor ----------------------------------------------------------------------------------------


@cli.command()
@click.argument("profile", required=False, shell_complete=_complete_profile)
@click.option("--agent", "agents", multiple=True, type=click.Choice(AGENT_NAMES), help="Check only this agent.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1, max=600),
    default=6.0,
    show_default=True,
    help="One deadline for all requests, in seconds.",
)
@click.option("--offline", is_flag=True, help="Check files, environment and local processes; send no request.")
def doctor(profile: str | None, agents: tuple[str, ...], as_json: bool, timeout: float, offline: bool) -> None:
    """Find why an agent fails: send the requests each agent really makes and name the cause.

    Without PROFILE, checks each agent as its files and this environment configure it now; with
    PROFILE, checks that profile's endpoints the way each agent would use them after a switch.
    Exit status: 0 nothing failed, 1 something failed, 2 doctor itself could not run.
    """
    from pathlib import Path

    from agentcfg import doctor as doc
    from agentcfg import profiles, report
    from agentcfg.agents import AGENTS
    from agentcfg.doctor import render

    environ = _environ()
    known = profiles.load_all(environ)
    chosen = [AGENTS[n] for n in AGENTS if not agents or n in agents]
    if profile:
        targets = doc.targets_from_profile(profiles.get(profile, environ), chosen, environ)
    else:
        targets = doc.targets_from_files(chosen, environ, known, Path.cwd())
    show_progress = not as_json and sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        click.echo(f"\rprobing: {done}/{total} requests answered", err=True, nl=done == total)

    try:
        result = doc.run(
            targets, environ, deadline=timeout, offline=offline, progress=progress if show_progress else None
        )
    except AgentcfgError:
        raise
    except Exception as exc:  # doctor could not run: status 2, not "something failed"
        raise AgentcfgError(f"doctor could not run: {type(exc).__name__}: {exc}") from None
    if as_json:
        click.echo(report.dumps(render.as_dict(result)))
    else:
        click.echo(render.as_text(result, report.use_colour(environ)))
    sys.exit(1 if result.failed else 0)


# -- bench -----------------------------------------------------------------------------------------


class _ProgressLine:
    """One status line on a terminal's stderr, rewritten in place at most ten times a second."""

    def __init__(self, unicode: bool) -> None:
        self.unicode, self.width, self.last = unicode, 0, 0.0

    def __call__(self, profile: str, mode: str, done: int, total: int, failed: int) -> None:
        import time

        from agentcfg.bench.render import progress_line

        now = time.monotonic()
        if 0 < done < total and now - self.last < 0.1:
            return
        self.last = now
        line = progress_line(profile, mode, done, total, failed, self.unicode)
        click.echo("\r" + line.ljust(self.width), err=True, nl=False)
        self.width = max(self.width, len(line))

    def clear(self) -> None:
        if self.width:
            click.echo("\r" + " " * self.width + "\r", err=True, nl=False)


@cli.command()
@click.argument("names", nargs=-1, metavar="[PROFILE]...", shell_complete=_complete_profile)
@click.option("--requests", "-n", type=click.IntRange(min=1), default=10, show_default=True, help="Requests per mode.")
@click.option(
    "--concurrency", "-c", type=click.IntRange(min=1, max=1024), default=1, show_default=True, help="In flight at once."
)
@click.option(
    "--max-tokens", type=click.IntRange(min=2), default=256, show_default=True, help="Output tokens per request."
)
@click.option(
    "--prompt-tokens", type=click.IntRange(min=1), default=512, show_default=True, help="Prompt size, roughly."
)
@click.option("--stream", "mode", flag_value="stream", default=True, help="Streamed requests (the default).")
@click.option("--no-stream", "mode", flag_value="non_stream", help="Non-streamed requests only.")
@click.option("--both", "mode", flag_value="both", help="Both, side by side, with their ratio.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option("--csv", "csv_file", metavar="FILE", help="Also write one row per request to FILE.")
@click.option(
    "--timeout", type=click.FloatRange(min=0.1), default=120.0, show_default=True, help="Per request, in seconds."
)
@click.option(
    "--deadline", type=click.FloatRange(min=1), default=900.0, show_default=True, help="For the whole run, in seconds."
)
def bench(
    names: tuple[str, ...],
    requests: int,
    concurrency: int,
    max_tokens: int,
    prompt_tokens: int,
    mode: str,
    as_json: bool,
    csv_file: str | None,
    timeout: float,
    deadline: float,
) -> None:
    """Time to first token, inter-token latency and tokens per second of PROFILE(s), side by side.

    \b
    agentcfg bench                         the profile of the last switch (else local), streamed
    agentcfg bench local taotoken --both   two profiles, streamed and not, with the ratio
    agentcfg bench local -n 50 -c 8 --json --csv runs.csv

    Against vLLM, its /metrics view (time inside the engine) is shown beside the client's.
    Exit status: 0 all requests answered, 1 some failed or did not finish, 2 bad input,
    130 Ctrl-C (after printing what was measured).
    """
    from agentcfg import profiles, report
    from agentcfg.bench import render, runner, summary
    from agentcfg.bench.measure import MODES

    environ = _environ()
    chosen = [profiles.get(n, environ) for n in dict.fromkeys(names or [runner.default_profile(environ)])]
    notes = [] if names else [f"benchmarking {chosen[0].name} (name profiles to choose: agentcfg bench PROFILE...)"]
    targets = []
    for found in chosen:
        target, note = runner.target(found, environ)
        targets.append(target)
        notes += [note] if note else []
    if concurrency > requests:
        notes.append(f"--concurrency {concurrency} is more than --requests {requests}: {requests} run at once")
    if csv_file:
        try:
            open(csv_file, "a", encoding="utf-8").close()  # fail now, not after minutes of measuring
        except OSError as exc:
            raise AgentcfgError(
                f"cannot write --csv {csv_file}: {exc.strerror}",
                hint="Give a file in a directory you can write: agentcfg bench ... --csv ./bench.csv",
            ) from None
    settings = summary.Settings(
        requests=requests,
        concurrency=min(concurrency, requests),
        max_tokens=max_tokens,
        prompt_tokens=prompt_tokens,
        modes=MODES if mode == "both" else (mode,),
        timeout=timeout,
        deadline=deadline,
    )
    _emit_notes(notes)
    unicode = (getattr(sys.stdout, "encoding", "") or "").lower().replace("-", "") == "utf8"
    progress = _ProgressLine(unicode) if sys.stderr.isatty() else None
    try:
        result = runner.run(targets, settings, progress)
    finally:
        if progress:
            progress.clear()
    document = summary.run_dict(result)
    if csv_file:
        with open(csv_file, "w", encoding="utf-8", newline="") as out:
            out.write(render.csv_text(result))
    if as_json:
        click.echo(report.dumps(document))
    else:
        click.echo(render.text(document, report.use_colour(environ), unicode))
    if result.interrupted == "ctrl-c":
        _emit_notes(["interrupted: the figures above are the requests that finished before Ctrl-C"])
    sys.exit(summary.exit_status(document))


# -- keys --------------------------------------------------------------------------------------------


@cli.group()
def key() -> None:
    """Keep profile keys in the OS keyring (Keychain, Credential Locker, Secret Service).

    \b
    printf %s "$KEY" | agentcfg key set taotoken    store (or type it at the hidden prompt)
    agentcfg key list                                which profiles have a key, masked
    agentcfg exec taotoken -- opencode               run an agent with the key in its variable
    """


def _key_profile(name: str, environ: dict[str, str]) -> Any:
    from agentcfg import keystore, profiles

    found = profiles.get(name, environ)
    if not found.key_env:
        raise keystore.not_keyed(found)
    return found


def _print_secret(text: str) -> TextIO:
    """Write to the real stdout, around the scrubber: for the two commands whose job is to print a key."""
    from agentcfg.redact import RedactingStream

    out = sys.stdout.raw if isinstance(sys.stdout, RedactingStream) else sys.stdout
    out.write(text)
    out.flush()
    return out


def _read_key() -> str:
    if sys.stdin.isatty():
        return click.prompt("Key (input hidden)", hide_input=True, prompt_suffix=": ", err=True)
    line = sys.stdin.readline()
    return line.removesuffix("\n").removesuffix("\r")


@key.command("set")
@click.argument("name", metavar="PROFILE", shell_complete=_complete_profile)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (never the key).")
def key_set(name: str, as_json: bool) -> None:
    """Store PROFILE's key: typed at a hidden prompt, or one line read from stdin.

    Storing again replaces the key (that is all a rotation takes: no agent file holds it). The key is
    bound to the profile's hosts (base_url, anthropic_base_url): it is handed out for no other host.
    """
    from agentcfg import keystore, redact, report

    environ = _environ()
    found = _key_profile(name, environ)
    store = keystore.KeyStore(environ, found)
    label = store.label  # a missing backend fails here, before the key is typed
    value = _read_key()
    if reason := keystore.check_value(value):
        raise AgentcfgError(
            f"not storing the key for {name}: {reason}",
            hint=f"Give the key alone: `agentcfg key set {name}` asks for it (input hidden).",
        )
    store.store(found, value)  # bound to the profile's hosts now: `key bind` after moving it
    if as_json:
        click.echo(report.dumps({"profile": name, "backend": label, "stored": True, "tail": redact.tail(value)}))
        return
    click.echo(f"Stored the key for {name} in the {label} ({redact.tail(value)}).")
    exported = environ.get(found.key_env)
    if exported and exported != value:
        _emit_notes([f"{found.key_env} in this shell holds another key; `agentcfg exec` uses the keyring's"])


@key.command("get")
@click.argument("name", metavar="PROFILE", shell_complete=_complete_profile)
def key_get(name: str) -> None:
    """Print PROFILE's key and nothing else (for helper commands such as Claude Code's apiKeyHelper).

    The keyring's entry wins; without one, a value already exported in the profile's variable.
    """
    from agentcfg import keystore, profiles

    environ = _environ()
    found = profiles.find(name, environ)  # yours or a built-in: no project file is read
    if not found.key_env:
        raise keystore.not_keyed(found)
    resolved = keystore.resolve(found, environ)
    assert resolved is not None
    _print_secret(resolved.value + "\n")


@key.command("bind")
@click.argument("name", metavar="PROFILE", shell_complete=_complete_profile)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (never the key).")
def key_bind(name: str, as_json: bool) -> None:
    """Let PROFILE's stored key go to the profile's current hosts (after you changed its base URL).

    A key is handed out only for the hosts it was stored for; this replaces them with the profile's own now.
    """
    from agentcfg import keystore, report

    environ = _environ()
    found = _key_profile(name, environ)
    store = keystore.KeyStore(environ, found)
    if store.get(name) is None:
        raise keystore.missing(found, store.label)
    old, new = store.origins(name), keystore.profile_origins(found)
    changed = old != new
    if changed:
        store.bind(name, new)
    if as_json:
        click.echo(report.dumps({"profile": name, "backend": store.label, "old": old, "new": new, "changed": changed}))
    elif changed:
        before = ", ".join(old) if old else "(no hosts recorded)" if old is None else "(no host)"
        click.echo(f"Bound the key for {name}: {before} -> {', '.join(new)}")
    else:
        click.echo(f"The key for {name} is bound to {', '.join(new)} already; nothing changed.")


@key.command("rm")
@click.argument("name", metavar="PROFILE", shell_complete=_complete_profile)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def key_rm(name: str, as_json: bool) -> None:
    """Delete PROFILE's key (and the hosts it is bound to) from the keyring, also for a removed profile."""
    from agentcfg import keystore, profiles, report

    environ = _environ()
    known = profiles.load_all(environ)
    store = keystore.KeyStore(environ, known.get(name))
    removed = store.delete(name)
    if not removed and name not in known:
        profiles.get(name, environ)  # the usual unknown-profile error, with suggestions
    if as_json:
        click.echo(report.dumps({"profile": name, "backend": store.label, "removed": removed}))
    elif removed:
        click.echo(f"Removed the key for {name} from the {store.label}.")
    else:
        click.echo(f"No key was stored for {name} in the {store.label}; nothing to remove.")


@key.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON (masked tails, never keys).")
def key_list(as_json: bool) -> None:
    """Every profile: the variable it uses, whether the keyring holds its key (masked), whether it is exported."""
    from agentcfg import keystore, profiles, redact, report

    environ = _environ()
    store = keystore.KeyStore(environ)
    rows = []
    for name, found in sorted(profiles.load_all(environ).items()):
        value = store.get(name) if found.key_env else None
        rows.append(
            {
                "profile": name,
                "key_env": found.key_env,
                "stored": bool(value) if found.key_env else None,
                "tail": redact.tail(value) if value else None,
                "in_environment": bool(found.key_env and environ.get(found.key_env)),
                "bound_to": store.origins(name) if value else None,  # None also for a key stored before binding
            }
        )
    if as_json:
        data = {"backend": store.label, "backend_class": keystore.backend_name(store.backend), "profiles": rows}
        click.echo(report.dumps(data))
    else:
        click.echo(report.keys_text(store.label, rows))


# -- exec / env --------------------------------------------------------------------------------------


def _profile_variables(name: str, environ: dict[str, str]) -> dict[str, str]:
    """The variables `exec` and `env` set: the profile's key (keyring first) and AGENTCFG_PROFILE."""
    from agentcfg import keystore, profiles

    found = profiles.get(name, environ)
    variables = {"AGENTCFG_PROFILE": found.name}
    resolved = keystore.resolve(found, environ)
    if resolved:
        variables[str(found.key_env)] = resolved.value
        if resolved.note:
            _emit_notes([resolved.note])
    return variables


@cli.command(
    "exec",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("name", metavar="PROFILE", shell_complete=_complete_profile)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def exec_command(name: str, command: tuple[str, ...]) -> None:
    """Run COMMAND with PROFILE's key in its variable, e.g. `agentcfg exec taotoken -- opencode`.

    COMMAND replaces agentcfg (exec), so its stdin, stdout, stderr, signals and exit status are
    its own. Exit status 127: COMMAND not found; 126: not executable.
    """
    if command[:1] == ("--",):  # click keeps the separator once it stops parsing options
        command = command[1:]
    if not command:
        raise click.UsageError("give the command to run after --, e.g. agentcfg exec taotoken -- opencode")
    environ = _environ()
    child = {**environ, **_profile_variables(name, environ)}
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        if os.name == "posix":
            os.execvpe(command[0], list(command), child)
        import subprocess

        sys.exit(subprocess.call(list(command), env=child))
    except FileNotFoundError:
        error = AgentcfgError(f"command not found: {command[0]}", hint="Check the name, or give its full path.")
        error.exit_code = 127
        raise error from None
    except PermissionError:
        error = AgentcfgError(f"cannot run {command[0]}: permission denied", hint="Is it executable?")
        error.exit_code = 126
        raise error from None


@cli.command("env")
@click.argument("name", metavar="PROFILE", shell_complete=_complete_profile)
@click.option("--shell", type=click.Choice(["bash", "zsh", "fish", "powershell"]), help="Default: from $SHELL.")
def env_command(name: str, shell: str | None) -> None:
    """Print PROFILE's variables (its key included) as lines to eval in your shell.

    \b
    bash/zsh:    eval "$(agentcfg env taotoken)"
    fish:        agentcfg env taotoken --shell fish | source
    PowerShell:  agentcfg env taotoken --shell powershell | Invoke-Expression
    """
    from agentcfg import shells

    environ = _environ()
    shell = shell or shells.detect(environ)
    out = _print_secret(shells.assignments(_profile_variables(name, environ), shell))
    if out.isatty():
        _emit_notes([f"to load these into this shell: {shells.usage(shell, f'agentcfg env {name} --shell {shell}')}"])


# -- agents ------------------------------------------------------------------------------------------


@cli.command("agents")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def agents_command(as_json: bool) -> None:
    """Which agents are installed (path and version), their config files, and what each points at."""
    from agentcfg import env, profiles, report, versions
    from agentcfg.agents import AGENTS
    from agentcfg.apply import Journal
    from agentcfg.switch import status as agent_status

    environ = _environ()
    rows = []
    for item in agent_status(environ, profiles.load_all(environ), Journal(environ).entries()):
        binary = AGENTS[item.name].BINARY
        version = versions.installed(binary, environ, timeout=3.0)
        rows.append(
            {
                "agent": item.name,
                "path": env.which(binary, environ),
                "version": ".".join(map(str, version)) if version else None,
                "files": item.files,
                "configured": item.configured,
                "profile": item.profile,
                "base_url": item.base_url,
                "model": item.model,
                "error": item.error,
            }
        )
    click.echo(report.dumps(rows) if as_json else report.agents_text(rows, environ))


# -- profiles ----------------------------------------------------------------------------------------


@cli.group()
def profile() -> None:
    """List, show, add, change (set, unset), import, export and remove provider profiles.

    \b
    agentcfg profile list
    agentcfg profile add gpu --base-url http://gpu-box:8000/v1 --detect
    agentcfg profile set local context_window=65536     change fields, keep the rest
    agentcfg profile unset gpu max_output_tokens
    """


@profile.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the profiles as JSON.")
def profile_list(as_json: bool) -> None:
    """Every profile: built-in presets and your own (yours override built-ins of the same name)."""
    from agentcfg import profiles, report

    environ = _environ()
    found = [p for _, p in sorted(profiles.load_all(environ).items())]
    if as_json:
        click.echo(report.dumps([report.profile_dict(p, environ) for p in found]))
    else:
        click.echo(report.profiles_text(found, environ))


@profile.command("show")
@click.argument("name", shell_complete=_complete_profile)
@click.option("--json", "as_json", is_flag=True, help="Print the profile as JSON.")
def profile_show(name: str, as_json: bool) -> None:
    """One profile's fields and where it comes from (never a key's value)."""
    from agentcfg import profiles, report

    environ = _environ()
    found = profiles.get(name, environ)
    click.echo(report.dumps(report.profile_dict(found, environ)) if as_json else report.profile_text(found, environ))


def _detect_key(draft: Any, environ: dict[str, str]) -> str | None:
    """The key for `--detect`: a stored one (re-adding a profile) or the exported variable."""
    from agentcfg import keystore

    try:
        resolved = keystore.resolve(draft, environ)
    except keystore.KeyringProblem:
        return environ.get(draft.key_env) if draft.key_env else None
    return resolved.value if resolved else None


@profile.command("add")
@click.argument("name")
@click.option("--base-url", help="OpenAI-protocol base URL, e.g. http://localhost:8000/v1.")
@click.option("--from", "source", metavar="FILE|URL", help="Take the profile from a TOML file or URL (profile export).")
@click.option("--model", help="Model id as the server names it (with --detect: optional if it serves one).")
@click.option("--anthropic-base-url", help="Anthropic-protocol base URL for Claude Code (without /v1).")
@click.option("--key-env", metavar="VAR", help="Variable the agents read the key from (`agentcfg exec` sets it).")
@click.option("--no-key", is_flag=True, help="The server needs no key.")
@click.option("--context-window", type=click.IntRange(min=256), help="The model's window in tokens.")
@click.option("--max-output-tokens", type=click.IntRange(min=16), help="Bound on any agent's output tokens.")
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
) -> None:
    """Add (or with --force replace) a profile of your own.

    \b
    agentcfg profile add gpu --base-url http://gpu-box:8000/v1 --detect
    printf %s "$KEY" | agentcfg profile add gw --base-url https://gw.example/v1 --detect --key-stdin
    agentcfg profile add team --from team.toml

    Without --key-env or --no-key, a profile for a server on this machine needs no key and any
    other reads NAME_API_KEY (upper-cased); --key-stdin also stores the key (bound to the profile's
    hosts). With --from, the profile is a team's shared file (as `agentcfg profile export` writes
    it): validated, then saved as yours. To change a profile later: `agentcfg profile set`.
    """
    from agentcfg import detect as detection
    from agentcfg import env, fields, fixes, fsutil, profiles

    environ = _environ()
    if source:
        _add_from(name, source, force, environ)
        return
    if not base_url:
        raise click.UsageError("give --base-url URL (with --model ID), or --from FILE|URL")
    if no_key and (key_env or key_stdin):
        other = "--key-env" if key_env else "--key-stdin"
        raise AgentcfgError(f"{other} and --no-key contradict each other", hint="Give one of them.")
    _check_new_name(name, force, environ)
    given = {"description": description, "base_url": base_url, "anthropic_base_url": anthropic_base_url,
             "model": model, "key_env": key_env}  # fmt: skip
    # Before anything is shown or sent: a URL with a password must not reach a message, nor --detect's request.
    fields.check({k: v for k, v in given.items() if v is not None}, f"profile {name}", name=name)
    if anthropic_base_url and anthropic_base_url.rstrip("/").endswith("/v1"):
        raise AgentcfgError(
            f"--anthropic-base-url {anthropic_base_url} ends in /v1, but Claude Code appends /v1/messages itself",
            hint=f"Use {anthropic_base_url.rstrip('/')[:-3]} instead.",
        )
    draft = profiles.Profile(name=name, base_url=base_url, model=model or "?")
    if not key_env and not no_key and (key_stdin or not draft.is_local):
        key_env = name.upper().replace("-", "_") + "_API_KEY"
    draft = profiles.Profile(name=name, base_url=base_url, model=model or "?", key_env=key_env)
    store, key = None, None
    if key_stdin:
        from agentcfg import keystore

        store = keystore.KeyStore(environ, draft)
        store.label  # noqa: B018 - a missing keyring fails here, before the key is typed or anything is sent
        key = _read_key()
        if reason := keystore.check_value(key):
            raise AgentcfgError(f"not using the key for {name}: {reason}", hint="Give the key alone.")
    if detect:
        try:
            models = detection.list_models(draft, key or _detect_key(draft, environ))
        except detection.KeyNeeded as problem:
            again = fixes.command(
                "agentcfg", "profile", "add", name, "--base-url", base_url,
                *(("--model", model) if model else ()),
                *(("--anthropic-base-url", anthropic_base_url) if anthropic_base_url else ()),
                *(("--key-env", key_env) if key_env else ()),  # else --key-stdin gives NAME_API_KEY
                *(("--context-window", str(context_window)) if context_window else ()),
                *(("--max-output-tokens", str(max_output_tokens)) if max_output_tokens else ()),
                *(("--description", description) if description else ()),
                "--detect", "--key-stdin", *(("--force",) if force else ()),
            )  # fmt: skip
            refused = "the right key" if problem.sent or key else "its key"
            problem.hint = f"Give --detect {refused}: {again} (it asks for the key; or pipe it in on stdin)."
            raise
        model, context_window = detection.context_window(models, model, base_url.rstrip("/") + "/models")
        anthropic_base_url = anthropic_base_url or detection.anthropic_base_url(models, model, base_url)
    if not model:
        raise AgentcfgError(
            "--model is required", hint="Give the model id, or use --detect to read it from the server."
        )
    data = {
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
    fsutil.private_dir(path.parent)
    fsutil.atomic_write(path, profiles.to_toml(new).encode("utf-8"), 0o644)
    detected = f" (window {context_window:,} tokens read from the server)" if detect else ""
    click.echo(f"Added profile {name}: {model} at {base_url}{detected}\n  {env.display(path, environ)}")
    if anthropic_base_url:
        click.echo(f"  Claude Code uses {anthropic_base_url}/v1/messages")
    if store is not None and key:
        store.store(new, key)  # bound to the profile's hosts, as `key set` binds it
        click.echo(f"  stored its key in the {store.label}; agents read it from {key_env}")
    elif key_env:
        click.echo(f"  agents read its key from {key_env}; store the key with: agentcfg key set {name}")
    click.echo(f"Switch to it with: agentcfg switch {name}")


# -- profile set / unset ---------------------------------------------------------------------------------


@profile.command("set")
@click.argument("name", shell_complete=_complete_profile)
@click.argument("changes", nargs=-1, metavar="FIELD=VALUE...")
@click.option(
    "--detect", is_flag=True, help="Read context_window (max_model_len) from the server's GET /models, with its key."
)
@click.option("--json", "as_json", is_flag=True, help="Print what changed as JSON.")
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
@click.argument("name", shell_complete=_complete_profile)
@click.argument("names", nargs=-1, required=True, metavar="FIELD...")
@click.option("--json", "as_json", is_flag=True, help="Print what changed as JSON.")
def profile_unset(name: str, names: tuple[str, ...], as_json: bool) -> None:
    """Remove optional fields of profile NAME (base_url and model are required and stay).

    \b
    agentcfg profile unset gpu max_output_tokens
    agentcfg profile unset gw key_env            the server needs no key

    A built-in becomes a profile of yours without those fields, as with `profile set`.
    """
    _change_profile(name, (), names, False, as_json)


def _editable(name: str, environ: dict[str, str]) -> Any:
    """The profile `profile set` changes: yours or a built-in; never a project's file."""
    from agentcfg import profiles

    found = profiles.get(name, environ)  # an unknown name: the usual error with suggestions
    if found.source.startswith(profiles.PROJECT):
        where = found.source.removeprefix(profiles.PROJECT)
        raise AgentcfgError(
            f"{name!r} is this project's profile: agentcfg does not change a project's files",
            where=where,
            hint=f"Edit {where} in the project (then run `agentcfg trust` again), or make a profile of your own "
            f"under another name with `agentcfg profile add`.",
        )
    return found


def _change_profile(name: str, changes: tuple[str, ...], removed: tuple[str, ...], detect: bool, as_json: bool) -> None:
    from pathlib import Path

    from agentcfg import env, fixes, fsutil, profiles, report

    environ = _environ()
    where = f"agentcfg profile {'set' if changes or detect else 'unset'} {name}"
    updates = profiles.assignments(changes, where)
    unset = list(dict.fromkeys(profiles.field_name(f, where) for f in removed))
    old = _editable(name, environ)
    built_in = old.source == profiles.BUILT_IN
    new = profiles.changed(old, updates, unset)  # every field validated before anything is sent or written
    if detect:
        new = _detected(new, environ)
    differences = profiles.differences(old, new)
    path = profiles.profiles_dir(environ) / f"{name}.toml" if built_in else Path(old.source)
    shown = env.display(path, environ)
    pointing = _pointing_agents(name, environ) if differences else []
    if differences:
        current = None if built_in else fsutil.read_text(path, shown, fsutil.PROFILE_LIMIT)
        text = profiles.edited_text(current, old, new, shown)
        profiles.parse(name, text, str(path))  # what is written must load as the profile shown
        fsutil.private_dir(path.parent)
        fsutil.atomic_write(path, text.encode("utf-8"), 0o644)
    notes = _key_notes(old, new, environ) if differences else []
    run_next = fixes.switch(name, agents=pointing if len(pointing) < len(AGENT_NAMES) else ()) if pointing else None
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
    _emit_notes(notes)
    if run_next:
        they = ", ".join(pointing)
        click.echo(f"{they} still {'uses' if len(pointing) == 1 else 'use'} the old values.")
        click.echo(f"Switch to it with: {run_next}")


def _shown_value(value: object) -> str:
    if value is None:
        return "(not set)"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _detected(profile: Any, environ: dict[str, str]) -> Any:
    """`profile set --detect`: the window (and for vLLM Claude Code's URL, if none is set) from the server."""
    from agentcfg import detect as detection
    from agentcfg import profiles

    try:
        models = detection.list_models(profile, _detect_key(profile, environ))
    except detection.KeyNeeded as problem:
        from agentcfg import fixes

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


def _key_notes(old: Any, new: Any, environ: dict[str, str]) -> list[str]:
    """What a change of key_env or of the hosts means for the profile's stored key (kept per profile name)."""
    from agentcfg import keystore

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


def _check_new_name(name: str, force: bool, environ: dict[str, str]) -> None:
    from agentcfg import fields, profiles

    if not fields.valid_name(name):  # the whole name: `$'nn\n'` would otherwise become the file "nn\n.toml"
        raise AgentcfgError(
            f"{name!r} is not a valid profile name", hint="Use lower-case letters, digits, '-', '_' (at most 64)."
        )
    existing = profiles.load_all(environ)
    if name in existing and not force:
        kind = "built-in profile" if existing[name].source == profiles.BUILT_IN else "profile"
        raise AgentcfgError(f"a {kind} named {name!r} exists", hint="Add --force to replace it with yours.")


def _add_from(name: str, source: str, force: bool, environ: dict[str, str]) -> None:
    from agentcfg import env, fsutil, profiles

    _check_new_name(name, force, environ)
    text = profiles.read_source(source, environ)
    new = profiles.parse(name, text, source)  # validated against the schema before it is saved
    warning = _team_key_variable(new, environ)
    path = profiles.profiles_dir(environ) / f"{name}.toml"
    fsutil.private_dir(path.parent)
    fsutil.atomic_write(path, text.encode("utf-8"), 0o644)
    click.echo(f"Added profile {name} from {source}: {new.model} at {new.base_url}\n  {env.display(path, environ)}")
    if new.key_env:
        click.echo(f"  agents read its key from {new.key_env}; store the key with: agentcfg key set {name}")
    _emit_notes([warning] if warning else [])
    click.echo(f"Switch to it with: agentcfg switch {name}")


def _team_key_variable(new: Any, environ: dict[str, str]) -> str | None:
    """A team's file is written by someone else: it may not read another profile's key variable for other
    hosts than that profile's (exec, bench and doctor would send that key there); a general secret's variable
    gets a warning."""
    from agentcfg import profiles, trust

    if not new.key_env:
        return None
    from agentcfg.keystore import origin

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


@profile.command("import")
@click.option("--yes", is_flag=True, help="Move every plaintext key found into the keyring without asking.")
@click.option("--keep-keys", is_flag=True, help="Import the endpoints only; leave plaintext keys where they are.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (never a key).")
def profile_import(yes: bool, keep_keys: bool, as_json: bool) -> None:
    """Turn every endpoint the agents (and OPENAI_*/ANTHROPIC_* variables) already use into a profile.

    A plaintext key found beside one moves into the keyring, and the files that held it then
    reference the keyring instead (`agentcfg rollback` puts it back).
    """
    from agentcfg import onboard, report

    environ = _environ()
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
    _emit_notes(result.notes + notes)


@profile.command("export")
@click.argument("name", shell_complete=_complete_profile)
def profile_export(name: str) -> None:
    """Print PROFILE as TOML to share with a team (`profile add NAME --from FILE`). Never a key."""
    from agentcfg import profiles

    click.echo(profiles.to_toml(profiles.get(name, _environ())), nl=False)


def _pointing_agents(name: str, environ: dict[str, str]) -> list[str]:
    """The agents whose files point at profile `name` now (as `agentcfg status` matches them)."""
    from agentcfg import profiles
    from agentcfg.apply import Journal
    from agentcfg.switch import status

    try:
        found = status(environ, profiles.load_all(environ), Journal(environ).entries())
    except AgentcfgError:
        return []  # only a warning: removing the profile must not depend on it
    return [item.name for item in found if item.profile == name]


def _forget_key(name: str, found: Any, keep: bool, environ: dict[str, str]) -> tuple[list[str], list[str]]:
    """What `profile rm` does with the removed profile's stored key: lines for stdout and for notes.
    `found` is the removed profile, or None when its file could not be read as one."""
    from agentcfg import keystore

    if found is not None and not found.key_env and name not in keystore.remembered(environ):
        return [], []  # a keyless profile: no keyring to open (a missing backend costs nothing here)
    store = keystore.KeyStore(environ, found)
    try:
        if not keep:
            removed = store.delete(name)
            said = f"Removed the key for {name} from" if removed else f"No key for {name} was stored in"
            return [f"{said} the {store.label}."], []
        if store.get(name) is None:
            return [], []
        origins = store.origins(name)
        if origins is None and found is not None:  # stored before keys were bound: bind it where it was meant
            origins = keystore.profile_origins(found)
            store.bind(name, origins)
    except keystore.KeyringProblem as problem:
        return [], [
            f"could not check the keyring for a key of {name}: {problem.message}; "
            f"once it works, `agentcfg key rm {name}` removes a stored one"
        ]
    if origins is None:
        return [f"Kept the key for {name} in the {store.label}; `agentcfg key rm {name}` removes it."], [
            f"the key for {name} is bound to no host yet: a profile {name} of yours would get it on first use"
        ]
    hosts = ", ".join(origins) or "no host"
    return [
        f"Kept the key for {name} in the {store.label}, bound to {hosts}: only a profile {name} on "
        f"{'that host' if len(origins) == 1 else 'those hosts'} gets it; `agentcfg key rm {name}` removes it."
    ], []


@profile.command("rm")
@click.argument("name", shell_complete=_complete_profile)
@click.option("--keep-key", is_flag=True, help="Keep the profile's stored key (bound to the profile's hosts).")
def profile_rm(name: str, keep_key: bool) -> None:
    """Remove a profile of your own (built-in presets cannot be removed), and its stored key.

    With --keep-key the key stays in the keyring, still bound to the removed profile's hosts, so a
    later profile of the same name elsewhere cannot get it.
    """
    from agentcfg import env, fsutil, profiles

    environ = _environ()
    path = profiles.profiles_dir(environ) / f"{name}.toml"
    if not path.is_file():
        found = profiles.get(name, environ)  # unknown name -> the usual error with suggestions
        if found.source.startswith(profiles.PROJECT):
            raise AgentcfgError(
                f"{name!r} is this project's profile",
                where=found.source.removeprefix(profiles.PROJECT),
                hint="It belongs to the project: remove the file from its .agentcfg/profiles/ if you mean to.",
            )
        raise AgentcfgError(f"{name!r} is a built-in profile and cannot be removed")
    try:  # what the key was for; a file that is no profile can still be removed
        text = fsutil.read_text(path, env.display(path, environ), fsutil.PROFILE_LIMIT) or ""
        found = profiles.parse(name, text, str(path))
    except AgentcfgError:
        found = None
    pointing = _pointing_agents(name, environ)
    path.unlink()
    click.echo(f"Removed profile {name} ({env.display(path, environ)})")
    said, notes = _forget_key(name, found, keep_key, environ)
    for line in said:
        click.echo(line)
    built_in = name in profiles.load_all(environ)
    if built_in:
        click.echo(f"The built-in profile {name} applies again.")
    if pointing:
        from agentcfg import fixes

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
    _emit_notes(notes)


# -- trust -------------------------------------------------------------------------------------------


@cli.command("trust")
@click.argument("directory", required=False, metavar="[DIR]")
@click.option("--list", "listing", is_flag=True, help="List the trusted projects: trusted, changed or missing.")
@click.option("--revoke", is_flag=True, help="Stop using the profiles of DIR (default: the project here).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def trust_command(directory: str | None, listing: bool, revoke: bool, as_json: bool) -> None:
    """Use the profiles in a project's .agentcfg/profiles/ (a cloned repository's are ignored until then).

    \b
    agentcfg trust               the project here (the nearest .agentcfg/profiles/ from here up)
    agentcfg trust ~/src/team    that project (its directory, or its .agentcfg/profiles)
    agentcfg trust --list        trusted projects, and whether their files changed since
    agentcfg trust --revoke      stop using this project's profiles

    A project profile decides where your prompts and a key go, so check what is shown. Trust covers
    exactly these files, by content: once one is added, removed or changed, the project's profiles are
    ignored again until you trust them again. Even trusted, a project profile never replaces one of
    yours, nor reads another profile's key variable.
    """
    from agentcfg import report, trust

    environ = _environ()
    if listing:
        if directory or revoke:
            raise AgentcfgError("--list takes no DIR and no --revoke", hint="Run `agentcfg trust --list` alone.")
        rows = trust.states(environ)
        if as_json:
            click.echo(report.dumps(rows))
        elif not rows:
            click.echo("No trusted projects. `agentcfg trust DIR` trusts one.")
        for row in rows if not as_json else []:
            files = ", ".join(row["files"])  # type: ignore[arg-type]
            extra = f" ({row['differences']})" if row.get("differences") else ""
            click.echo(f"{row['project']}  {row['state']}{extra}  since {row['trusted_at']}  files: {files}")
        return
    if revoke:
        try:
            root = trust.project_root(trust.locate(directory, environ))
        except AgentcfgError:
            if directory is None:
                raise
            from pathlib import Path

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
        return
    directory_found = trust.locate(directory, environ)
    root = trust.project_root(directory_found)
    rows, warnings, files = trust.review(directory_found, environ)
    if not as_json:
        click.echo(f"Trusting {root} ({directory_found}):")
        width = max(len(str(r["name"])) for r in rows)
        for r in rows:
            key = f"key {r['key_env']}" if r["key_env"] else "no key"
            click.echo(f"  {r['name']!s:<{width}}  {r['base_url']} ({r['host']})  model {r['model']}  {key}")
        for warning in warnings:
            click.echo(f"warning: {warning}", err=True)
    trust.update_store(environ, lambda records: records.update({str(root): trust.Record(files, trust.now())}))
    if as_json:
        document = {"project": str(root), "profiles_dir": str(directory_found), "profiles": rows}
        click.echo(report.dumps({**document, "warnings": warnings, "trusted": True}))
        return
    click.echo(
        f"Trusted {len(files)} profile files of {root}. If one changes they are ignored again; "
        f"`agentcfg trust --revoke {root}` stops using them."
    )


# -- entry point -------------------------------------------------------------------------------------


def _emit_profile_notices() -> None:
    """What reading profiles had to say (an ignored project, a skipped file), once per command."""
    if "agentcfg.profiles" in sys.modules:  # a command that read no profile has nothing to say
        for line in sys.modules["agentcfg.profiles"].notices():
            click.echo(line, err=True)


def main(argv: list[str] | None = None) -> None:
    from agentcfg import redact

    # Every line agentcfg prints goes through the masking stream: no output path can show a key it has seen,
    # nor a secret by its shape (Bearer, URL password, --token value, ...); errors are masked the same way.
    redact.register_environment(os.environ)
    completing = "_AGENTCFG_COMPLETE" in os.environ  # click writes completion scripts as bytes; they hold no key
    if not completing and not isinstance(sys.stdout, redact.RedactingStream):
        sys.stdout = redact.RedactingStream(sys.stdout)  # type: ignore[assignment]
        sys.stderr = redact.RedactingStream(sys.stderr)  # type: ignore[assignment]
    try:
        try:
            cli.main(args=argv, prog_name="agentcfg", standalone_mode=False)
        finally:
            if not completing:
                _emit_profile_notices()  # before any error: an ignored project is often its cause
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2 if exc.exit_code == 2 else exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except AgentcfgError as exc:
        click.echo(f"agentcfg: error: {redact.mask_text(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("AGENTCFG_DEBUG"):
            raise
        click.echo(f"agentcfg: internal error: {type(exc).__name__}: {redact.mask_text(str(exc))}", err=True)
        click.echo("  This is a bug; AGENTCFG_DEBUG=1 shows the traceback. No file was left half-written.", err=True)
        sys.exit(1)
