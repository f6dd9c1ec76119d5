"""What every command shares, click or not (the hot path, agentcfg.cli.hotpath, runs without click): the
environment a command runs with, how a failure is shown (message on stderr, the error document under --json),
and the --json document on stdout.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from agentcfg import env, redact
from agentcfg.errors import AgentcfgError, Exit


def environ() -> dict[str, str]:
    """The environment a command runs with: one seam for every command (in-process tests replace it). The
    variables that say where the agents' files are, relative ones made absolute (env.absolute_locations)."""
    return env.absolute_locations(os.environ)


def location_notes() -> list[str]:
    """What environ() made of relative location variables, for the commands that say it (env.location_notes)."""
    from agentcfg import env

    return env.location_notes(os.environ)


class Requested:
    """Whether this run asked for --json (the flag's callback sets it): a failure is then JSON on stdout."""

    json = False


def run(
    call: Callable[[], None],
    argv: list[str] | None,
    *,
    notices: bool,
    other: Callable[[Exception, list[str] | None], None] | None = None,
) -> None:
    """Run a command; show its failure, if any, in the one shape every command shares. `other` shows the
    failures only its caller knows (click's usage errors) and returns for an exception it does not know."""
    try:
        try:
            call()
        finally:
            if notices:
                _emit_profile_notices()  # before any error: an ignored project is often its cause
    except AgentcfgError as exc:
        fail(exc.message, exc.where, exc.hint, exc.exit_code, argv, text=f"agentcfg: error: {exc}")
    except KeyboardInterrupt:  # as click shows its Abort (it turns Ctrl-C into one): the same on every path
        echo_error("")
        fail("aborted", None, None, Exit.INTERRUPTED, argv, text="Aborted.")
    except BrokenPipeError:  # the reader went away (`agentcfg key get P | head -c 0`): as click, quietly exit 1
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # what is still buffered for stdout goes nowhere
        sys.exit(1)
    except Exception as exc:
        if other is not None:
            other(exc, argv)
        if os.environ.get("AGENTCFG_DEBUG"):
            raise
        message = f"internal error: {type(exc).__name__}: {exc}"
        hint = "This is a bug; AGENTCFG_DEBUG=1 shows the traceback. No file was left half-written."
        fail(message, None, hint, Exit.INTERNAL, argv, text=f"agentcfg: {message}\n  {hint}")


def _emit_profile_notices() -> None:
    """What reading profiles had to say (an ignored project, a skipped file), once per command."""
    if "agentcfg.profiles" in sys.modules:  # a command that read no profile has nothing to say
        for line in sys.modules["agentcfg.profiles"].notices():
            echo_error(line)


def echo_error(text: str) -> None:
    sys.stderr.write(f"{text}\n")
    sys.stderr.flush()


def print_json(data: object) -> None:
    """The --json document of a command (or a failure), masked (redact.dumps), on stdout."""
    sys.stdout.write(f"{redact.dumps(data)}\n")
    sys.stdout.flush()


def _wants_json(argv: list[str] | None) -> bool:
    """--json was given: seen by its callback, or (an error while parsing, before any callback) among agentcfg's
    own words: those before `--`, and for `exec` those before its PROFILE (the rest is the command's)."""
    if Requested.json:
        return True
    words = sys.argv[1:] if argv is None else argv
    words = words[: words.index("--")] if "--" in words else words
    if "exec" in words:
        after = words.index("exec") + 1
        profile = next((i for i in range(after, len(words)) if not words[i].startswith("-")), len(words))
        words = words[:profile]
    return "--json" in words


def fail(message: str, where: str | None, hint: str | None, code: int, argv: list[str] | None, *, text: str) -> None:
    """One failure, in both shapes: the message on stderr and, under --json, the error document on stdout."""
    if text:
        echo_error(redact.mask_text(text))
    if _wants_json(argv):
        print_json({"error": message, "where": where, "hint": hint, "exit": int(code)})
    sys.exit(int(code))
