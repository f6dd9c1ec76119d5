"""The command line: one module per command group; each command parses, calls one function, renders.

This module is the entry point and imports nothing heavy: `agentcfg key get PROFILE`, which Claude Code and
Codex run on every start, is answered by agentcfg.cli.hotpath without building the click application
(agentcfg.cli.app, imported only for the other commands); every other command goes through click. What both
share: the masking of every output line (here), and how a failure is shown (agentcfg.cli.common).
"""

from __future__ import annotations

import os
import sys

from agentcfg import redact
from agentcfg.cli import hotpath
from agentcfg.cli.common import Requested, run


def main(argv: list[str] | None = None) -> None:
    # Every line agentcfg prints goes through the masking stream: no output path can show a key it has seen,
    # nor a secret by its shape (Bearer, URL password, --token value, ...); errors are masked the same way.
    redact.register_environment(os.environ)
    completing = "_AGENTCFG_COMPLETE" in os.environ  # click writes completion scripts as bytes; they hold no key
    if not completing and not isinstance(sys.stdout, redact.RedactingStream):
        sys.stdout = redact.RedactingStream(sys.stdout)
        sys.stderr = redact.RedactingStream(sys.stderr)
    Requested.json = False
    request = None if completing else hotpath.key_get_request(sys.argv[1:] if argv is None else argv)
    if request is not None:
        run(lambda: hotpath.key_get(*request), argv, notices=True)
        return
    from agentcfg.cli import app

    run(lambda: app.invoke(argv), argv, notices=not completing, other=app.failure)
