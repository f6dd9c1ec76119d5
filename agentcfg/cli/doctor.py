"""`doctor`: the requests each agent makes, and the cause when one fails."""

from __future__ import annotations

import sys
from typing import Any

import click

from agentcfg.cli import base
from agentcfg.errors import Exit

# -- doctor ----------------------------------------------------------------------------------------


@click.command()
@click.argument("profile", required=False, shell_complete=base.complete_profile)
@click.option("--agent", "agents", multiple=True, type=base.AgentChoice(), help="Check only this agent.")
@base.json_option("Print the findings as JSON.")
@click.option(
    "--timeout",
    type=base.Float(0.1, 600),
    default=6.0,
    show_default=True,
    help="One deadline for all requests, in seconds.",
)
@click.option("--offline", is_flag=True, help="Check files, environment and local processes; send no request.")
def doctor(profile: str | None, agents: tuple[str, ...], as_json: bool, timeout: float, offline: bool) -> None:
    """Find why an agent fails: send the requests each agent really makes and name the cause.

    Without PROFILE, checks each agent as its files and this environment configure it now; with
    PROFILE, checks that profile's endpoints the way each agent would use them after a switch. A route
    (`agentcfg route add`): its router, the agents' requests through it, and each leg on its own.
    \b
    Exit status: 0 nothing failed (warnings allowed), 1 something failed, 2 doctor could not run
    (an unknown profile, a file that does not parse), 70 a bug in agentcfg.
    """
    from agentcfg import doctor as doc
    from agentcfg import profiles, report
    from agentcfg.agents import AGENTS
    from agentcfg.doctor import render

    environ = base.environ()
    chosen = [AGENTS[n] for n in AGENTS if not agents or n in agents]
    show_progress = not as_json and sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        click.echo(f"\rprobing: {done}/{total} requests answered", err=True, nl=done == total)

    # An AgentcfgError (an unknown profile, a file that does not parse) is status 2, doctor could not run; any
    # other exception is a bug in doctor, and main() reports it as one (70), never as a finding about the setup.
    shown = progress if show_progress else None
    if not profile:  # init's closing check is this same call
        result = doc.check_now(chosen, environ, deadline=timeout, offline=offline, progress=shown)
    else:
        given, route = profiles.get(profile, environ), None
        if given.route is not None:
            targets, route = _route(given.name, chosen, environ)
        else:
            targets = doc.targets_from_profile(given, chosen, environ)
        result = doc.run(targets, environ, deadline=timeout, offline=offline, progress=shown, route=route)
    if as_json:
        click.echo(report.dumps(render.as_dict(result)))
    else:
        click.echo(render.as_text(result, report.use_colour(environ)))
    base.finish(Exit.FAILED if result.failed else Exit.OK)


def _route(name: str, chosen: list[Any], environ: dict[str, str]) -> tuple[list[Any], Any]:
    """The router's targets (the agents through it) and each leg's (probed directly, with the leg's key as
    `agentcfg exec LEG` gives it), and what doctor/route.py needs to know of the route before any request."""
    from agentcfg import doctor as doc
    from agentcfg.doctor import route as route_check
    from agentcfg.route import control, server

    found, legs = control.route_and_legs(name, environ)  # a leg gone: the error that says what to run (exit 2)
    targets = doc.targets_from_profile(found, chosen, environ)
    for leg in legs:
        for target in doc.targets_from_profile(leg, chosen, environ):
            target.leg = leg.name
            targets.append(target)
    where = server.files(name, environ)
    record = server.read_process(where)
    keyless = record is not None and server.started_keyless(where, record)
    url = found.base_url.rstrip("/").removesuffix("/v1")
    return targets, route_check.Check(
        name, url, record is not None, route_check.roles(leg.name for leg in legs), keyless=keyless
    )
