"""The command line: one module per command group; each command parses, calls one function, renders.

Heavy modules (httpx, keyring, jsonschema) are imported where they are used, so that
`agentcfg switch` does not pay for the network stack.
"""

from __future__ import annotations

import os
import sys

import click

from agentcfg import __version__
from agentcfg.cli import base, bench, doctor, keys, onboarding, profiles, switching
from agentcfg.errors import AgentcfgError, Exit

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


def _emit_profile_notices() -> None:
    """What reading profiles had to say (an ignored project, a skipped file), once per command."""
    if "agentcfg.profiles" in sys.modules:  # a command that read no profile has nothing to say
        for line in sys.modules["agentcfg.profiles"].notices():
            click.echo(line, err=True)


def main(argv: list[str] | None = None) -> None:
    from agentcfg import redact

    # Every line agentcfg prints goes through the masking stream: no output path can show a key it has seen,
    # nor a secret by its shape (Bearer, URL password, --token value, ...); errors are masked the same way.
    redact.register_environment(os.environ)
    completing = "_AGENTCFG_COMPLETE" in os.environ  # click writes completion scripts as bytes; they hold no key
    if not completing and not isinstance(sys.stdout, redact.RedactingStream):
        sys.stdout = redact.RedactingStream(sys.stdout)  # type: ignore[assignment]
        sys.stderr = redact.RedactingStream(sys.stderr)  # type: ignore[assignment]
    base._Requested.json = False
    try:
        try:
            cli.main(args=argv, prog_name="agentcfg", standalone_mode=False)
        finally:
            if not completing:
                _emit_profile_notices()  # before any error: an ignored project is often its cause
    except click.exceptions.Abort:
        _fail("aborted", None, None, Exit.INTERRUPTED, argv, text="Aborted.")
    except click.ClickException as exc:  # bad usage: an unknown option, a value out of range, ...
        ctx = getattr(exc, "ctx", None)
        path = ctx.command_path if ctx else "agentcfg"
        exc.show()
        _fail(exc.format_message(), path, f"`{path} --help` shows what it takes.", Exit.REFUSED, argv, text="")
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except AgentcfgError as exc:
        _fail(exc.message, exc.where, exc.hint, exc.exit_code, argv, text=f"agentcfg: error: {exc}")
    except KeyboardInterrupt:
        _fail("interrupted", None, None, Exit.INTERRUPTED, argv, text="Interrupted.")
    except Exception as exc:
        if os.environ.get("AGENTCFG_DEBUG"):
            raise
        message = f"internal error: {type(exc).__name__}: {exc}"
        hint = "This is a bug; AGENTCFG_DEBUG=1 shows the traceback. No file was left half-written."
        _fail(message, None, hint, Exit.INTERNAL, argv, text=f"agentcfg: {message}\n  {hint}")


def _wants_json(argv: list[str] | None) -> bool:
    """--json was given: seen by its callback, or (an error while parsing, before any callback) among agentcfg's
    own words: those before `--`, and for `exec` those before its PROFILE (the rest is the command's)."""
    if base._Requested.json:
        return True
    words = sys.argv[1:] if argv is None else argv
    words = words[: words.index("--")] if "--" in words else words
    if "exec" in words:
        after = words.index("exec") + 1
        profile = next((i for i in range(after, len(words)) if not words[i].startswith("-")), len(words))
        words = words[:profile]
    return "--json" in words


def _fail(message: str, where: str | None, hint: str | None, code: int, argv: list[str] | None, *, text: str) -> None:
    """One failure, in both shapes: the message on stderr and, under --json, the error document on stdout."""
    from agentcfg import redact

    if text:
        click.echo(redact.mask_text(text), err=True)
    if _wants_json(argv):
        base.print_json({"error": message, "where": where, "hint": hint, "exit": int(code)})
    sys.exit(int(code))
