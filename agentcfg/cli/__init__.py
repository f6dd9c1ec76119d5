"""The command line: one module per command group; each command parses, calls one function, renders.

This module is the entry point and imports nothing heavy: `agentcfg key get PROFILE`, which Claude Code and
Codex run on every start, and `doctor` are answered by agentcfg.cli.hotpath without building the click
application (agentcfg.cli.app, imported only for the other commands); a `switch` or `status` with nothing new to say is
answered by agentcfg.replay before anything else is imported; every other command goes through click. What
all share: the masking of every output line (here), and how a failure is shown (agentcfg.cli.common).
"""

from __future__ import annotations

import gc
import os
import sys


def main(argv: list[str] | None = None) -> None:
    if argv is None:
        # A run of the console script imports before it answers, and those imports trigger some twenty cyclic
        # collections (~3 ms of `key get`): none until a command runs (_main enables it for the click commands).
        gc.disable()
    try:
        _answer(argv)
    finally:
        if argv is None:
            # The process ends: nothing made so far needs the cycle collector again. Frozen, interpreter shutdown's
            # collections skip it; they were most of the exit (~10 ms after a switch or status, ~35 ms after
            # doctor's probes). Objects are still freed by their reference counts. Not when called in-process.
            gc.freeze()


def _answer(argv: list[str] | None) -> None:
    from agentcfg import replay  # here, not at the top: its imports (json, pathlib, re) run without the collector

    words = sys.argv[1:] if argv is None else list(argv)
    answer = replay.lookup(words, os.environ)
    if answer is not None:
        sys.exit(answer.play())
    recorder = replay.Recorder.start(words, os.environ)
    if recorder is None:
        _main(argv)
        return
    code = 0
    try:
        _main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        raise
    except BaseException:
        code = -1
        raise
    finally:
        recorder.finish(code)


def _main(argv: list[str] | None) -> None:
    from agentcfg import redact  # lazy: a replayed answer (agentcfg.replay) needs none of what follows
    from agentcfg.cli import hotpath  # lazy: as above
    from agentcfg.cli.common import Requested, run  # lazy: as above

    # Every line agentcfg prints goes through the masking stream: no output path can show a key it has seen,
    # nor a secret by its shape (Bearer, URL password, --token value, ...); errors are masked the same way.
    redact.register_environment(os.environ)
    completing = "_AGENTCFG_COMPLETE" in os.environ  # click writes completion scripts as bytes; they hold no key
    if not completing and not isinstance(sys.stdout, redact.RedactingStream):
        sys.stdout = redact.RedactingStream(sys.stdout)
        sys.stderr = redact.RedactingStream(sys.stderr)
    Requested.json = False
    request = None if completing else hotpath.request(sys.argv[1:] if argv is None else list(argv))
    if request is not None:
        run(request, argv, notices=True)
        return
    from agentcfg.cli import app

    gc.enable()  # a click command may run long (serve, bench, doctor): cycles are collected again
    run(lambda: app.invoke(argv), argv, notices=not completing, other=app.failure)
