"""What every command shares: the environment, notes, completion, the secret-printing path."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from agentcfg.errors import AgentcfgError

AGENT_NAMES = ("codex", "qwen", "opencode", "claude")  # agents.AGENTS, without importing it for --help


def environ() -> dict[str, str]:
    return dict(os.environ)


def complete_profile(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    from agentcfg import profiles

    try:
        return [n for n in sorted(profiles.load_all(environ())) if n.startswith(incomplete)]
    except AgentcfgError:
        return []


def emit_notes(notes: list[str]) -> None:
    for note in notes:
        click.echo(f"note: {note}", err=True)


def complete_keyed_profile(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Profiles that have a key (key set, get, bind)."""
    return complete_profile(ctx, param, incomplete)


def complete_own_profile(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Profiles of yours (profile rm: built-ins and a project's cannot be removed)."""
    return complete_profile(ctx, param, incomplete)


def complete_editable_profile(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Yours and built-ins (profile set/unset: a project's profile is the project's file)."""
    return complete_profile(ctx, param, incomplete)


def complete_stored_key(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """key rm: profiles with a key, and names of removed profiles whose key is still stored."""
    return complete_profile(ctx, param, incomplete)


class _Requested:
    """Whether this run asked for --json: main() prints errors as JSON on stdout then."""

    json = False


def _note_json(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        _Requested.json = True
    return value


def json_option(help: str = "Print the result as JSON (never a key); errors too, on stdout.") -> Any:
    """The one `--json` flag: eager, so an error in any later option is still reported as JSON."""
    return click.option("--json", "as_json", is_flag=True, is_eager=True, callback=_note_json, help=help)


def print_json(data: object) -> None:
    from agentcfg import report

    click.echo(report.dumps(data))


def finish(code: int) -> None:
    """End a command that printed its result with a status other than 0 (Exit.NOTHING, Exit.NO_KEY, ...)."""
    if code:
        sys.exit(int(code))
