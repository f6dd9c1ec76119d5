"""What every command shares: the environment, notes, completion, the secret-printing path."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from typing import Any

import click

from agentcfg.cli import common
from agentcfg.cli.common import Requested
from agentcfg.cli.common import location_notes as location_notes  # every command's, as print_json
from agentcfg.cli.common import print_json as print_json  # every command's, in agentcfg.cli.common: the hot path's too
from agentcfg.errors import AgentcfgError


class AgentChoice(click.Choice):
    """`--agent NAME`: the registry's agents (agentcfg.agents.AGENTS), looked up when the option is parsed or
    shown, so that loading the CLI (every command, `key get` on an agent's start) imports no agent module."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from agentcfg.agents import AGENTS  # lazy: the start-up budget (see the class docstring)

        return tuple(AGENTS)

    @choices.setter
    def choices(self, value: object) -> None:
        pass  # click.Choice sets it on construction; the registry is the only source


def environ() -> dict[str, str]:
    return common.environ()  # looked up when called: the one seam, agentcfg.cli.common.environ


def emit_notes(notes: list[str]) -> None:
    for note in notes:
        click.echo(f"note: {note}", err=True)


# -- completion: each offers only what its command accepts; every one is a file read, never a keyring call --


def _matching(names: Iterable[str], incomplete: str) -> list[str]:
    return sorted({n for n in names if n.startswith(incomplete)})


def _profiles(load: Callable[[dict[str, str]], dict[str, Any]]) -> dict[str, Any]:
    """The profiles `load` finds, or none: a broken profile file must not print a traceback into the shell."""
    try:
        return load(environ())
    except AgentcfgError:
        return {}


def _all(environ: dict[str, str]) -> dict[str, Any]:
    from agentcfg import profiles

    return profiles.load_all(environ)


def _own_and_built_in(environ: dict[str, str]) -> dict[str, Any]:
    from agentcfg import profiles

    return profiles.load_own(environ)


def complete_profile(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Every profile that applies here: built-ins, yours, a trusted project's."""
    return _matching(_profiles(_all), incomplete)


def complete_keyed_profile(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Profiles that have a key (key set, get, bind): those with a key_env."""
    return _matching((n for n, p in _profiles(_all).items() if p.key_env), incomplete)


def complete_own_profile(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Profiles of yours (profile rm): the files in $AGENTCFG_HOME/profiles; built-ins and a project's cannot be
    removed. Read from the directory, not parsed: `profile rm` removes a file that is no longer a valid profile."""
    from agentcfg import profiles

    try:
        names = [path.stem for path in profiles.profiles_dir(environ()).glob("*.toml") if path.is_file()]
    except (OSError, AgentcfgError):
        return []
    return _matching((n for n in names if profiles.NAME_RE.match(n)), incomplete)


def complete_editable_profile(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Yours and built-ins (profile set/unset): a project's profile is the project's file."""
    return _matching(_profiles(_own_and_built_in), incomplete)


def complete_stored_key(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """key rm: profiles with a key_env, and the names agentcfg remembers storing a key for (a removed profile's
    key kept with --keep-key). From agentcfg's own record (keystore.remembered): asking the keyring takes ~200 ms
    and may pop up an unlock dialog in the middle of a Tab."""
    from agentcfg import keystore

    keyed = {n for n, p in _profiles(_all).items() if p.key_env}
    remembered = {n for n in keystore.remembered(environ()) if ":" not in n}  # not MCP secrets' (`mcp secret --rm`)
    return _matching(keyed | remembered, incomplete)


def complete_field_assignment(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """profile set NAME <field>=: the fields not given yet, each followed by `=` (the value is the user's)."""
    from agentcfg import profiles

    if "=" in incomplete:
        return []
    given = {c.partition("=")[0].replace("-", "_") for c in (ctx.params.get(param.name or "") or ())}
    return _matching((f"{f}=" for f in profiles.FIELDS if f not in given), incomplete)


def complete_optional_field(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """profile unset NAME <field>: the optional fields (base_url and model are required), not given yet."""
    from agentcfg import profiles

    given = {n.replace("-", "_") for n in (ctx.params.get(param.name or "") or ())}
    optional = (f for f in profiles.FIELDS if f not in profiles.REQUIRED and f not in given)
    return _matching(optional, incomplete)


# -- numbers: every numeric option is an Int or a Float (tests/cli/test_numbers.py walks the command tree) ------


def _figure(value: float) -> str:
    """A bound as people write it: 10,000 and 0.1, not 10000 and 600.0."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,}"


class _Between:
    """Both bounds required, and stated as "from 1 to 10,000" (in the usage error and in --help)."""

    least: float  # click's own min and max may be None
    most: float

    def _describe_range(self) -> str:
        return f"{_figure(self.least)} to {_figure(self.most)}"


class Int(_Between, click.IntRange):
    """A whole number from `least` to `most`: `bench -n 99999999999999999999999` (no upper bound) set out to build
    that many requests. Out of range is click's usage error: exit 2, under --json the error document."""

    def __init__(self, least: int, most: int) -> None:
        super().__init__(least, most)
        self.least, self.most = least, most


class Float(_Between, click.FloatRange):
    """A finite number from `least` to `most`. click's FloatRange lets NaN through (it compares false with both
    bounds): `doctor --timeout nan` said nothing listens, and `bench --timeout nan --json` printed NaN, which is
    not JSON. `inf` (and 1e999) is out of range."""

    def __init__(self, least: float, most: float) -> None:
        super().__init__(least, most)
        self.least, self.most = least, most

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value} is not in the range {self._describe_range()}.", param, ctx)
        return number


def _note_json(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        Requested.json = True
    return value


def json_option(help: str = "Print the result as JSON (never a key); errors too, on stdout.") -> Any:
    """The one `--json` flag: eager, so an error in any later option is still reported as JSON."""
    return click.option("--json", "as_json", is_flag=True, is_eager=True, callback=_note_json, help=help)


def finish(code: int) -> None:
    """End a command that printed its result with a status other than 0 (Exit.NOTHING, Exit.NO_KEY, ...)."""
    if code:
        sys.exit(int(code))
