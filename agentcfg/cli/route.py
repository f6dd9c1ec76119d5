"""`route`: a LiteLLM router in front of a primary profile and its fallbacks (agentcfg.route)."""

from __future__ import annotations

import sys
from typing import Any

import click

from agentcfg.cli import base


def _complete_route(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Your routes (profiles with a [route] table)."""
    from agentcfg import profiles

    try:
        own = profiles.load_own(base.environ())
    except Exception:  # completion never prints a traceback into the shell
        return []
    return sorted(n for n, p in own.items() if p.route is not None and n.startswith(incomplete))


@click.group()
def route() -> None:
    """Local first, gateway as fallback: one endpoint for every agent, a LiteLLM router behind it.

    \b
    agentcfg route add home --primary local --fallback taotoken
    agentcfg route serve home            start the router (LiteLLM) and wait until it answers
    agentcfg switch home                 every agent -> the router
    agentcfg route status home           the router, and each leg as the router sees it
    agentcfg route stop home

    The router sends each request to the primary and, when it fails (refused connection, timeout, 5xx,
    429) or is at --max-parallel, to the fallbacks in order; a failing leg is left alone for the cooldown.
    LiteLLM is the optional `route` extra (from agentcfg's checkout: pip install '.[route]'; `route serve`
    names the exact command). Every route has a router key, made by `route add` and kept in the keyring:
    the router answers nothing without it. docs/route.md has the rest.
    """


@route.command("add")
@click.argument("name")
@click.option("--primary", required=True, metavar="PROFILE", help="The profile tried first (e.g. local).")
@click.option(
    "--fallback", "fallbacks", multiple=True, required=True, metavar="PROFILE", help="Tried next; repeat for more."
)
@click.option("--port", type=base.Int(1, 65535), help="The router's port. Default: the first free from 4000.")
@click.option("--max-parallel", type=base.Int(1, 10_000), help="At most N requests at once to the primary; more go on.")
@click.option(
    "--cooldown", type=base.Int(1, 86_400), default=30, show_default=True, help="Seconds a failing leg rests."
)
@click.option(
    "--timeout",
    type=base.Int(1, 3600),
    default=120,
    show_default=True,
    help="Seconds a leg may take to start answering; then the next is tried.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Where the router listens.")
@click.option("--router-key", is_flag=True, hidden=True, help="Kept for old scripts: every route has a router key.")
@click.option("--force", is_flag=True, help="Replace an existing profile of that name.")
@base.json_option("Print the route added as JSON.")
def route_add(
    name: str,
    primary: str,
    fallbacks: tuple[str, ...],
    port: int | None,
    max_parallel: int | None,
    cooldown: int,
    timeout: int,
    host: str,
    router_key: bool,  # --router-key: accepted, and nothing to do (every route has one)
    force: bool,
    as_json: bool,
) -> None:
    """Add a route: a profile whose endpoint is a router on this machine, in front of its legs.

    The model the agents ask for is the primary's model id; each leg is sent its own. The agents' output
    bounds are the smallest of the legs' windows. Every route gets a router key, stored in the keyring (its
    router answers nothing without it, so no other program or web page spends the legs' keys); the agents'
    configs use it. --host 0.0.0.0: a team's shared router (`agentcfg key get NAME` gives its key).
    """
    from agentcfg.route import control

    result = control.add(name, primary, fallbacks, port=port, max_parallel=max_parallel, cooldown=cooldown,
                         timeout=timeout, host=host, force=force, environ=base.environ())  # fmt: skip
    if as_json:
        base.print_json(result)
        return
    legs = ", then ".join(result["legs"][1:])
    click.echo(f"Added route {name}: {result['legs'][0]} first, then {legs}, at {result['url']}")
    click.echo(f"  {_display(result['path'])}")
    window = result["context_window"]
    bound = f"window {window:,} tokens" if window else "window unknown"
    click.echo(f"  agents' bounds: {bound}, output at most {result['max_output_tokens'] or 'the agents’ share'}")
    if result["router_key_stored"]:
        click.echo(f"  a router key was stored in the keyring (agents read it; `agentcfg key get {name}`)")
    click.echo(f"Start it with: {result['serve']}\nThen: {result['switch']}")


def _display(path: str) -> str:
    from pathlib import Path

    from agentcfg import env

    return env.display(Path(path), base.environ())


@route.command("serve")
@click.argument("name", shell_complete=_complete_route)
@click.option("--foreground", is_flag=True, help="Run LiteLLM in this process (for a service manager), not apart.")
@click.option(
    "--print-systemd-unit", is_flag=True, help="Print a systemd user unit that serves the route; start nothing."
)
@click.option(
    "--timeout",
    type=base.Float(1, 3600),
    default=180,
    show_default=True,
    help="Seconds to wait for the router to answer.",
)
@base.json_option("Print where the router listens as JSON.")
def route_serve(name: str, foreground: bool, print_systemd_unit: bool, timeout: float, as_json: bool) -> None:
    """Start the route's router: LiteLLM's proxy on the route's config, in the background; wait until it answers.

    The config (no key in it) and LiteLLM's log are in agentcfg's private runtime directory; each leg's key
    reaches only the LiteLLM process, in its environment. Running already with the same config: nothing to do.
    """
    from agentcfg.route import control

    environ = base.environ()
    if print_systemd_unit:
        text = control.systemd_unit(name, environ)
        base.print_json({"route": name, "unit": text}) if as_json else click.echo(text, nl=False)
        return
    if foreground and as_json:  # the process becomes LiteLLM: it prints LiteLLM's output, never a document
        raise click.UsageError("--foreground and --json do not go together: in the foreground agentcfg becomes LiteLLM")
    show = not as_json and not foreground and sys.stderr.isatty()

    def tick(elapsed: float) -> None:
        click.echo(f"\rstarting LiteLLM for route {name}: {elapsed:.0f} s", err=True, nl=False)

    if foreground and not as_json:
        click.echo(f"route {name}: LiteLLM in the foreground, its output here (Ctrl-C stops it)", err=True)
    result = control.serve(name, environ, foreground=foreground, timeout=timeout, tick=tick if show else None,
                           tell=lambda note: base.emit_notes([note]))  # fmt: skip
    if show:
        click.echo("", err=True)
    if as_json:
        base.print_json(result)
        return
    if result["already_running"]:
        click.echo(f"route {name}: already serving at {result['url']} (pid {result['pid']})")
        return
    _serving_text(result, f"serving at {result['url']} (LiteLLM pid {result['pid']}, ready in "
                          f"{result['ready_seconds']:.0f} s)")  # fmt: skip
    click.echo(f"Point every agent at it: agentcfg switch {name}; stop it: agentcfg route stop {name}")


def _serving_text(result: dict[str, Any], headline: str) -> None:
    click.echo(f"route {result['route']}: {headline}")
    for index, leg in enumerate(result["legs"]):
        role = "primary " if index == 0 else "fallback"
        state = f"  [{leg['state']}{': ' + leg['error'] if leg.get('error') else ''}]" if "state" in leg else ""
        click.echo(f"  {role} {leg['profile']}: {leg['model']} at {leg['base_url']}{state}")
    click.echo(f"  log: {_display(result['log'])}")
    version, tested = result["litellm_version"], result["litellm_tested"]
    if version and version != tested:
        click.echo(f"  note: LiteLLM {version} is installed; agentcfg is tested with {tested}", err=True)


@route.command("status")
@click.argument("name", shell_complete=_complete_route)
@base.json_option("Print the router's state and each leg's as JSON.")
def route_status(name: str, as_json: bool) -> None:
    """Whether the route's router runs and answers, and each leg's health as the router sees it.

    Exit status 1 when the router is not running or not answering.
    """
    from agentcfg.errors import Exit
    from agentcfg.route import control

    result = control.status(name, base.environ())
    if as_json:
        base.print_json(result)
    elif not result["running"]:
        click.echo(f"route {name}: not running (start it: agentcfg route serve {name})")
    else:
        answering = "answering" if result["answering"] else "NOT answering"
        _serving_text(result, f"{answering} at {result['url']} (pid {result['pid']}, up {result['uptime_seconds']} s)")
    base.finish(Exit.OK if result["running"] and result["answering"] else Exit.FAILED)


@route.command("stop")
@click.argument("name", shell_complete=_complete_route)
@base.json_option("Print what was stopped as JSON.")
def route_stop(name: str, as_json: bool) -> None:
    """Stop the route's router. Not running: exit status 3."""
    from agentcfg.route import control

    result = control.stop(name, base.environ())
    if as_json:
        base.print_json(result)
    else:
        click.echo(f"route {name}: stopped LiteLLM (pid {result['pid']})")
