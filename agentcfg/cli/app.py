"""The click application: every command but the hot path (agentcfg.cli.hotpath), one module per group.

Heavy modules (httpx, keyring, jsonschema) are imported where they are used, so that
`agentcfg switch` does not pay for the network stack.
"""

from __future__ import annotations

import sys

import click

from agentcfg import __version__
from agentcfg.cli import bench, doctor, fail, keys, onboarding, profiles, switching
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


@click.group(
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


for _command in (*switching.COMMANDS, onboarding.init, doctor.doctor, bench.bench, keys.key, keys.exec_command,
                 keys.env_command, profiles.profile, profiles.trust_command):  # fmt: skip
    cli.add_command(_command)
profiles.profile.add_command(onboarding.profile_import)


def _add_exit_epilog(group: click.Group) -> None:
    """The exit-status line under every command's --help, added here once rather than in each module."""
    for command in group.commands.values():
        command.epilog = f"{command.epilog}\n\n{EXIT_EPILOG}" if command.epilog else EXIT_EPILOG
        if isinstance(command, click.Group):
            _add_exit_epilog(command)


_add_exit_epilog(cli)


def invoke(argv: list[str] | None) -> None:
    cli.main(args=argv, prog_name="agentcfg", standalone_mode=False)


def failure(exc: Exception, argv: list[str] | None) -> None:
    """click's own failures (agentcfg.cli.run shows every other): bad usage is Exit.REFUSED."""
    if isinstance(exc, click.exceptions.Abort):
        fail("aborted", None, None, Exit.INTERRUPTED, argv, text="Aborted.")
    elif isinstance(exc, click.ClickException):  # bad usage: an unknown option, a value out of range, ...
        ctx = getattr(exc, "ctx", None)
        path = ctx.command_path if ctx else "agentcfg"
        exc.show()
        fail(exc.format_message(), path, f"`{path} --help` shows what it takes.", Exit.REFUSED, argv, text="")
    elif isinstance(exc, click.exceptions.Exit):
        sys.exit(exc.exit_code)
