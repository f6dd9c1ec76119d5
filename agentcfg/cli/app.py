"""The click application: every command but the hot path (agentcfg.cli.hotpath), one module per group.

A command's module is imported when that command runs (or when --help lists them all), and heavy modules
(httpx, keyring, jsonschema) where they are used: `agentcfg switch` pays for neither the other commands nor
the network stack.
"""

from __future__ import annotations

import importlib
import sys

import click

from agentcfg import __version__
from agentcfg.cli.common import fail
from agentcfg.errors import Exit

# What each exit status means, the same in every command: `agentcfg --help` shows this table, every command's
# --help points at it, README.md and docs/cli.md repeat it (tests/cli/test_help.py keeps all of them equal).
EXIT_MEANINGS: dict[Exit, str] = {
    Exit.OK: "done as asked",
    Exit.FAILED: "it ran and found failures (doctor, bench)",
    Exit.REFUSED: "refused: bad input, or this machine cannot do it; nothing written",
    Exit.NOTHING: "nothing to act on: no agent to switch, no switch to roll back",
    Exit.NO_KEY: "the profile's key is neither stored nor exported (`agentcfg key set`)",
    Exit.INTERNAL: "a bug in agentcfg",
    Exit.NOT_EXECUTABLE: "exec: the command is not executable",
    Exit.NOT_FOUND: "exec: no such command",
    Exit.INTERRUPTED: "interrupted (Ctrl-C)",
}

EXIT_TABLE = "\b\nExit status, the same in every command:\n" + "\n".join(
    f"  {int(code):<4} {meaning}" for code, meaning in EXIT_MEANINGS.items()
)
JSON_PROMISE = (
    "Every command takes --json: its result as one JSON document on stdout (never a key), and a failure as "
    '{"error", "where", "hint", "exit"} on stdout with the message on stderr. Schemas: schemas/cli/; docs/cli.md.'
)
# One line under every command's own --help: the short form, and where the rest is.
EXIT_EPILOG = (
    "Exit status: 0 done, 1 failures found, 2 refused (bad input; nothing written), 3 nothing to act on, "
    "4 the profile's key is missing, 70 a bug; all of them: `agentcfg --help`."
)


# Each command: (module in agentcfg.cli, attribute), in the order `agentcfg --help` has always listed them.
COMMANDS = {
    "agents": ("switching", "agents_command"),
    "bench": ("bench", "bench"),
    "doctor": ("doctor", "doctor"),
    "env": ("keys", "env_command"),
    "exec": ("keys", "exec_command"),
    "init": ("onboarding", "init"),
    "key": ("keys", "key"),
    "mcp": ("mcp", "mcp"),
    "profile": ("profiles", "profile"),
    "rollback": ("switching", "rollback"),
    "route": ("route", "route"),
    "serve": ("serve", "serve"),
    "status": ("switching", "status"),
    "switch": ("switching", "switch"),
    "trust": ("profiles", "trust_command"),
}


class _Commands(click.Group):
    """agentcfg's commands, each imported when it is first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f"agentcfg.cli.{module}"), attribute)
            if cmd_name == "profile":
                from agentcfg.cli.onboarding import profile_import

                command.add_command(profile_import)
            _finish(command)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)


def every_command() -> dict[str, click.Command]:
    """Every command, imported (for the tests that go through them all)."""
    context = click.Context(cli)
    return {name: command for name in cli.list_commands(context) if (command := cli.get_command(context, name))}


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=f"{EXIT_TABLE}\n\n{JSON_PROMISE}",
)
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


class _Context(click.Context):
    """click's help formatter asks shutil for the terminal's width, and importing shutil (bz2, lzma, fnmatch)
    costs `agentcfg --help` a tenth of its time: the same answer, from os (shutil.get_terminal_size's rules)."""

    def make_formatter(self) -> click.HelpFormatter:
        width = self.terminal_width or click.formatting.FORCED_WIDTH
        if width is None:
            width = max(min(_terminal_columns(), self.max_content_width or 80) - 2, 50)
        return self.formatter_class(width=width, max_width=self.max_content_width)


def _terminal_columns() -> int:
    """$COLUMNS, else the terminal's width, else 80: what shutil.get_terminal_size() gives."""
    import os

    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]  # None: AttributeError
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _finish(command: click.Command) -> None:
    """What every command gets, added here once rather than in each module: the exit-status line under its
    --help, and the context that formats that help."""
    command.epilog = f"{command.epilog}\n\n{EXIT_EPILOG}" if command.epilog else EXIT_EPILOG
    command.context_class = _Context
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _finish(sub)


cli.context_class = _Context


def invoke(argv: list[str] | None) -> None:
    cli.main(args=argv, prog_name="agentcfg", standalone_mode=False)


def failure(exc: Exception, argv: list[str] | None) -> None:
    """click's own failures (agentcfg.cli.common.run shows every other): bad usage is Exit.REFUSED."""
    if isinstance(exc, click.exceptions.Abort):
        fail("aborted", None, None, Exit.INTERRUPTED, argv, text="Aborted.")
    elif isinstance(exc, click.ClickException):  # bad usage: an unknown option, a value out of range, ...
        ctx = getattr(exc, "ctx", None)
        path = ctx.command_path if ctx else "agentcfg"
        exc.show()
        fail(exc.format_message(), path, f"`{path} --help` shows what it takes.", Exit.REFUSED, argv, text="")
    elif isinstance(exc, click.exceptions.Exit):
        sys.exit(exc.exit_code)
