"""`serve`: the local vLLM server from the same profile as the agents (agentcfg.serve)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from agentcfg.cli import base


class _StartByDefault(click.Group):
    """`agentcfg serve PROFILE ...` is `agentcfg serve start PROFILE ...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["start", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_StartByDefault)
def serve() -> None:
    """The local vLLM server, built from the same profile as the agents, started and stopped safely.

    \b
    agentcfg serve local --weights deepseek-ai/DeepSeek-V4-Flash --vllm ~/venvs/vllm
    agentcfg serve local --print        the command and environment, nothing started
    agentcfg serve status local         what runs, with which flags, which agents point at it
    agentcfg serve restart local        stop (after requests in flight), then start with the same waits
    agentcfg serve stop local           SIGINT, then the engine processes it left, by pid; GPU memory waited for
    agentcfg serve unit local           a systemd unit that runs it (refused next to another vLLM unit)

    The served model name and --max-model-len come from the profile, the tool and reasoning parsers from the
    model's family, the key from the keyring (in VLLM_API_KEY, never on the command line). Flags after `--` go to
    vLLM and replace agentcfg's own of the same name. docs/serve.md has every flag and why.
    """


def _options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options that say how to run vLLM: kept after a start, so restart and the unit run the same server."""
    for option in reversed(
        [
            click.option("--weights", metavar="PATH|ID", help="The model's weights: a directory or a Hugging Face id."),
            click.option(
                "--vllm", metavar="PATH", help="The `vllm` program, a Python that has vLLM, or its venv directory."
            ),
            click.option("--family", metavar="NAME", help="The model family's flags (default: read from the names)."),
            click.option("--gpus", metavar="0,1", help="The GPUs it may use (CUDA_VISIBLE_DEVICES); TP = their count."),
            click.option("--host", help="Where it listens. Default 127.0.0.1 (this machine only)."),
            click.option("--port", type=base.Int(1, 65535), help="Default: the port of the profile's base_url."),
            click.option(
                "--enforce-eager/--no-enforce-eager",
                default=None,
                help="Disable CUDA graphs (slow: debug only); --no-...: drop a kept --enforce-eager.",
            ),
            click.argument("extra", nargs=-1, type=click.UNPROCESSED),
        ]
    ):
        func = option(func)
    return func


def _given(weights: str | None, vllm: str | None, family: str | None, gpus: str | None, host: str | None,
           port: int | None, enforce_eager: bool | None, extra: tuple[str, ...]) -> dict[str, Any]:  # fmt: skip
    chosen = tuple(g.strip() for g in gpus.split(",") if g.strip()) if gpus else None
    return {"weights": weights, "vllm": vllm, "family": family, "gpus": chosen, "host": host, "port": port,
            "enforce_eager": enforce_eager, "extra": tuple(extra) or None}  # fmt: skip


def _progress(as_json: bool) -> Callable[[str, float], None] | None:
    if as_json or not sys.stderr.isatty():
        return None

    def tick(phase: str, elapsed: float) -> None:
        click.echo(f"\r\033[K{phase}: {elapsed:.0f} s", err=True, nl=False)

    return tick


def _done_progress(tick: object) -> None:
    if tick:
        click.echo("\r\033[K", err=True, nl=False)


@serve.command("start")
@click.argument("profile")
@_options
@click.option("--print", "print_only", is_flag=True, help="Show the command and its environment; start nothing.")
@click.option("--foreground", is_flag=True, help="Become the server (for a service manager), not apart.")
@click.option("--unit", "write_unit", is_flag=True, help="Write a systemd user unit that runs it: `serve unit`.")
@click.option(
    "--timeout", type=base.Float(1, 86_400), default=1200, show_default=True, help="Seconds to wait until it serves."
)
@base.json_option("Print the server's command and state as JSON.")
def serve_start(
    profile: str, print_only: bool, foreground: bool, write_unit: bool, timeout: float, as_json: bool, **given: Any
) -> None:
    """Start the profile's vLLM in the background and wait until it serves.

    Refused when the port is busy (the process is named) or the GPUs it may use have too little free memory (the
    holders named). It waits for /health, then /v1/models (the served name and window checked against the profile),
    then a one-token completion. Running already with the same command: nothing to do.
    """
    from agentcfg.serve import command, lifecycle

    environ = base.environ()
    options = _given(**given)
    if write_unit:
        _unit(profile, options, environ, system=False, user=None, key_file=None, force=False, as_json=as_json)
        return
    if print_only:
        _, built = lifecycle.build(profile, lifecycle.options_of(profile, options, environ), environ)
        if as_json:
            base.print_json({"profile": profile, **command.shown(built, environ)})
        else:
            click.echo(command.render(built, environ))
            base.emit_notes(list(built.warnings))
        return
    if foreground:
        if as_json:
            raise click.UsageError("--foreground and --json do not go together: agentcfg becomes vLLM")
        lifecycle.start_foreground(profile, options, environ)
    tick = _progress(as_json)
    result = lifecycle.start(profile, options, environ, timeout=timeout, tick=tick)
    _done_progress(tick)
    if as_json:
        base.print_json(result)
        return
    _started(result)


def _started(result: dict[str, Any]) -> None:
    base.emit_notes(list(result.get("warnings", [])))
    if result["already_running"]:
        click.echo(f"serve {result['profile']}: already serving {result['model']} at {result['url']} "
                   f"(pid {result['pid']})")  # fmt: skip
        return
    ready = result["ready_seconds"]
    click.echo(f"serve {result['profile']}: serving {result['model']} at {result['url']} (vLLM pid {result['pid']}; "
               f"/health in {ready.get('health', 0):.0f} s, "
               f"a one-token answer in {ready.get('completion', 0):.0f} s)")  # fmt: skip
    click.echo(f"  family {result['family'] or '(given by flags)'}; log: {result['log']}")
    for problem in result.get("problems", []):
        click.echo(f"  differs from the profile: {problem} (agentcfg profile set, or the flag after `--`)")
    click.echo(f"Point the agents at it: agentcfg switch {result['profile']}; stop it: agentcfg serve stop "
               f"{result['profile']}")  # fmt: skip


@serve.command("restart")
@click.argument("profile")
@_options
@click.option(
    "--drain",
    type=base.Float(0, 3600),
    default=30,
    show_default=True,
    help="Seconds to wait for requests in flight before stopping.",
)
@click.option(
    "--timeout", type=base.Float(1, 86_400), default=1200, show_default=True, help="Seconds to wait until it serves."
)
@click.option(
    "--stop-timeout", type=base.Float(1, 3600), default=120, show_default=True, help="Seconds after SIGINT to stop."
)
@base.json_option("Print what was stopped and started as JSON.")
def serve_restart(profile: str, drain: float, timeout: float, stop_timeout: float, as_json: bool, **given: Any) -> None:
    """Stop the profile's server (after the requests in flight finish), end what it left, start it again, and wait.

    New options given here replace the kept ones. Agents connected while it restarts see their request fail or
    wait; they retry (each agent does) and reach the new server.
    """
    from agentcfg.serve import lifecycle

    tick = _progress(as_json)
    result = lifecycle.restart(profile, _given(**given), base.environ(), timeout=timeout, stop_timeout=stop_timeout,
                               drain=drain, tick=tick)  # fmt: skip
    _done_progress(tick)
    if as_json:
        base.print_json(result)
        return
    if result["stopped"]:
        _stopped(result["stopped"])
    _started(result)


@serve.command("stop")
@click.argument("profile")
@click.option(
    "--timeout", type=base.Float(1, 3600), default=120, show_default=True, help="Seconds after SIGINT before SIGTERM."
)
@base.json_option("Print what was stopped as JSON.")
def serve_stop(profile: str, timeout: float, as_json: bool) -> None:
    """Stop the profile's server: SIGINT to its process group, SIGTERM, SIGKILL; then the engine processes it left,
    by pid; on NVIDIA, until nvidia-smi no longer lists them. Nothing running that agentcfg started: exit 3."""
    from agentcfg.serve import lifecycle

    tick = _progress(as_json)
    result = lifecycle.stop(profile, base.environ(), timeout=timeout, tick=tick)
    _done_progress(tick)
    base.print_json(result) if as_json else _stopped(result)


def _stopped(result: dict[str, Any]) -> None:
    seconds = result.get("server_seconds")
    how = f"{result['signal']}, gone in {seconds:.1f} s" if seconds is not None else "gone already"
    click.echo(f"serve {result['profile']}: stopped vLLM (pid {result['pid']}: {how})")
    if result["orphans_ended"]:
        click.echo(f"  ended the engine processes it left: pids {', '.join(map(str, result['orphans_ended']))}")
    if result["gpu_release_seconds"] is not None:
        click.echo(f"  GPU memory released {result['gpu_release_seconds']:.1f} s after")


@serve.command("sweep", hidden=True)
@click.argument("profile")
@base.json_option()
def serve_sweep(profile: str, as_json: bool) -> None:
    """End the engine processes the profile's server left, by pid (a unit's ExecStopPost)."""
    from agentcfg.serve import lifecycle

    result = lifecycle.sweep(profile, base.environ())
    if as_json:
        base.print_json(result)
    elif result["orphans_ended"]:
        click.echo(f"serve {profile}: ended pids {', '.join(map(str, result['orphans_ended']))}")


@serve.command("status")
@click.argument("profile")
@base.json_option("Print the server's state as JSON.")
def serve_status(profile: str, as_json: bool) -> None:
    """What runs for the profile, with which flags, since when, and which agents point at it.

    Exit status 1 when it is not running, or serves another model or window than the profile's.
    """
    from agentcfg.errors import Exit
    from agentcfg.serve import lifecycle

    result = lifecycle.status(profile, base.environ())
    if as_json:
        base.print_json(result)
    else:
        _status_text(result)
    base.finish(Exit.OK if result["running"] and not result["problems"] else Exit.FAILED)


def _status_text(result: dict[str, Any]) -> None:
    name = result["profile"]
    if result["running"]:
        click.echo(f"serve {name}: running (pid {result['pid']}, since {result['started_at']}) at {result['url']}")
        click.echo(f"  {result['argv']}")
        serving = result["serving"] or {}
        click.echo(f"  serves {serving.get('id')} with a window of {serving.get('max_model_len')} tokens")
    else:
        click.echo(f"serve {name}: not running (start it: agentcfg serve start {name})")
    for problem in result["problems"]:
        click.echo(f"  differs from the profile: {problem} (agentcfg serve restart {name})")
    for orphan in result["orphans"]:
        held = f", holding {', '.join(orphan['gpu_devices'])}" if orphan["gpu_devices"] else ""
        click.echo(f"  left by its server: {orphan['name']} pid {orphan['pid']}{held} (`agentcfg serve stop {name}`)")
    for other in result["unmanaged"]:
        click.echo(f"  a vLLM agentcfg did not start is on its port: pid {other['pid']}: {other['argv']}")
    agents = ", ".join(result["agents"]) or "none (agentcfg switch " + name + ")"
    click.echo(f"  agents pointing at it: {agents}")


@serve.command("logs")
@click.argument("profile")
@click.option("-n", "--lines", type=base.Int(1, 1_000_000), default=50, show_default=True, help="How many lines.")
@click.option("-f", "--follow", is_flag=True, help="Keep printing what it writes (Ctrl-C ends).")
@base.json_option("Print the lines as JSON (not with --follow).")
def serve_logs(profile: str, lines: int, follow: bool, as_json: bool) -> None:
    """The end of the server's log (keys masked)."""
    import time

    from agentcfg import redact
    from agentcfg.serve import lifecycle

    if follow and as_json:
        raise click.UsageError("--follow and --json do not go together: a document has an end")
    path, shown = lifecycle.log_lines(profile, base.environ(), lines)
    if as_json:
        base.print_json({"profile": profile, "log": str(path), "lines": shown})
        return
    for line in shown:
        click.echo(line)
    if not follow:
        return
    with open(path, encoding="utf-8", errors="replace") as log:
        log.seek(0, 2)
        while True:
            line = log.readline()
            if line:
                click.echo(redact.terminal_safe(redact.scrub(line.rstrip("\n"))))
            else:
                time.sleep(0.25)


@serve.command("unit")
@click.argument("profile")
@_options
@click.option("--system", is_flag=True, help="A system unit (/etc/systemd/system), run as --user.")
@click.option("--user", "run_as", metavar="NAME", help="The user a system unit runs vLLM as. Default: you.")
@click.option("--key-file", metavar="PATH", help="A system unit's EnvironmentFile= with the profile's key variable.")
@click.option("--force", is_flag=True, help="Write it even beside another vLLM unit for the same port or GPUs.")
@click.option("--print", "print_only", is_flag=True, help="Print the unit; write nothing.")
@base.json_option("Print the unit and where it went as JSON.")
def serve_unit(
    profile: str,
    system: bool,
    run_as: str | None,
    key_file: str | None,
    force: bool,
    print_only: bool,
    as_json: bool,
    **given: Any,
) -> None:
    """Write a systemd unit that runs the profile's server: KillMode=mixed, SIGINT, a long TimeoutStopSec, the orphan
    sweep after every stop, and a restart back-off that gives up. Refused beside another vLLM unit for the same port
    or GPUs (each listed, with the command that disables it). agentcfg runs no systemctl: it prints what to run."""
    _unit(profile, _given(**given), base.environ(), system=system, user=run_as, key_file=key_file, force=force,
          as_json=as_json, print_only=print_only)  # fmt: skip


def _unit(
    profile: str,
    given: dict[str, Any],
    environ: dict[str, str],
    *,
    system: bool,
    user: str | None,
    key_file: str | None,
    force: bool,
    as_json: bool,
    print_only: bool = False,
) -> None:
    import getpass

    from agentcfg.invocation import self_command
    from agentcfg.serve import lifecycle, records, unit, units

    options = lifecycle.options_of(profile, given, environ)
    found, built = lifecycle.build(profile, options, environ)  # the options checked as a start checks them
    text = unit.text(profile, self_command(), system=system, user=(user or getpass.getuser()) if system else None,
                     port=built.port, gpus=options.gpus, key_env=found.key_env, key_file=key_file)  # fmt: skip
    if print_only:
        base.print_json({"profile": profile, "unit": text, "path": None}) if as_json else click.echo(text, nl=False)
        return
    records.save_options(profile, options, environ)  # what the unit's `serve start --foreground` runs
    path = units.install(profile, text, system=system, environ=environ, force=force,
                        say=lambda line: click.echo(line, err=True))  # fmt: skip
    if as_json:
        base.print_json({"profile": profile, "unit": text, "path": str(path)})
    else:
        click.echo(f"serve {profile}: wrote {path}")
