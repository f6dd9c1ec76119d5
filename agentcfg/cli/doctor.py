"""`doctor`: the requests each agent makes, and the cause when one fails."""

from __future__ import annotations

import click

from agentcfg.cli import base

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
    from agentcfg.cli import doctoring

    doctoring.doctor(profile, agents, as_json, timeout, offline)
