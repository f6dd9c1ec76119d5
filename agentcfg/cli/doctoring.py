"""`doctor`'s body, without click: the click command (agentcfg.cli.doctor) and the hot path
(agentcfg.cli.hotpath, for the plain forms) both call `doctor`, so both give the same output and status."""

from __future__ import annotations

import gc
import sys
from typing import Any

from agentcfg.cli import common
from agentcfg.errors import Exit


def doctor(profile: str | None, agents: tuple[str, ...], as_json: bool, timeout: float, offline: bool) -> None:
    from agentcfg import doctor as doc
    from agentcfg import profiles, report
    from agentcfg.agents import AGENTS
    from agentcfg.doctor import render

    if not offline and not gc.isenabled():
        # Probes may take seconds: cycles are collected while they run, but not among the objects made so far
        # (modules, classes: frozen, never garbage). The console script starts without the collector (cli.main),
        # and an offline run reads a few bounded files: its 25 collections were 6 ms, a run's 31 were 11 ms.
        gc.freeze()
        gc.enable()
    environ = common.environ()  # looked up when called: the one seam (tests replace it)
    chosen = [AGENTS[n] for n in AGENTS if not agents or n in agents]
    show_progress = not as_json and sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        sys.stderr.write(f"\rprobing: {done}/{total} requests answered" + ("\n" if done == total else ""))
        sys.stderr.flush()

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
    text = report.dumps(render.as_dict(result)) if as_json else render.as_text(result, report.use_colour(environ))
    sys.stdout.write(f"{text}\n")
    sys.stdout.flush()
    if result.failed:
        sys.exit(int(Exit.FAILED))


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
