"""`doctor`: the requests each agent makes, and the cause when one fails."""

from __future__ import annotations

import sys

import click

from agentcfg.cli import base
from agentcfg.errors import Exit

# -- doctor ----------------------------------------------------------------------------------------


@click.command()
@click.argument("profile", required=False, shell_complete=base.complete_profile)
@click.option("--agent", "agents", multiple=True, type=click.Choice(base.AGENT_NAMES), help="Check only this agent.")
@base.json_option("Print the findings as JSON.")
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
    \b
    Exit status: 0 nothing failed (warnings allowed), 1 something failed, 2 doctor could not run
    (an unknown profile, a file that does not parse), 70 a bug in agentcfg.
    """
    from pathlib import Path

    from agentcfg import doctor as doc
    from agentcfg import profiles, report
    from agentcfg.agents import AGENTS
    from agentcfg.doctor import render

    environ = base.environ()
    known = profiles.load_all(environ)
    chosen = [AGENTS[n] for n in AGENTS if not agents or n in agents]
    if profile:
        targets = doc.targets_from_profile(profiles.get(profile, environ), chosen, environ)
    else:
        targets = doc.targets_from_files(chosen, environ, known, Path.cwd())
    show_progress = not as_json and sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        click.echo(f"\rprobing: {done}/{total} requests answered", err=True, nl=done == total)

    # An AgentcfgError (an unknown profile, a file that does not parse) is status 2, doctor could not run; any
    # other exception is a bug in doctor, and main() reports it as one (70), never as a finding about the setup.
    result = doc.run(targets, environ, deadline=timeout, offline=offline, progress=progress if show_progress else None)
    if as_json:
        click.echo(report.dumps(render.as_dict(result)))
    else:
        click.echo(render.as_text(result, report.use_colour(environ)))
    base.finish(Exit.FAILED if result.failed else Exit.OK)
