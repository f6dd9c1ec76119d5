"""`agentcfg key get PROFILE`, answered without click: Claude Code (apiKeyHelper) and Codex (its provider's
`auth` command) run it on every start and on every refresh, and each waits for it.

The command's body is here and the click command (agentcfg.cli.keys) calls the same function, so both
ways give the same output, exit status and refusals; only the parsing differs. Anything but the plain
form (`--help`, a typo, another word) is left to click, which explains it.
"""

from __future__ import annotations

import sys
from typing import TextIO

from agentcfg import redact
from agentcfg.cli.common import Requested, environ, print_json

# Imported by dataclasses and jaraco.functools, used by neither here (dataclasses: only for a class without a
# docstring), and with ast, dis and tokenize a tenth of this path (tests/cli/test_hotpath.py checks).
UNUSED = ("inspect",)


def key_get_request(words: list[str]) -> tuple[str, bool] | None:
    """`key get PROFILE`, with `--json` before or after PROFILE, as (PROFILE, as_json); else None."""
    if words[:2] != ["key", "get"]:
        return None
    rest = words[2:]
    names = [w for w in rest if w != "--json"]
    if len(names) != 1 or names[0].startswith("-") or rest.count("--json") > 1:
        return None
    return names[0], "--json" in rest


def key_get(name: str, as_json: bool) -> None:
    """PROFILE's key on stdout and nothing else; with as_json, where it comes from (never the key)."""
    from agentcfg import deferred

    deferred.defer(*UNUSED)
    from agentcfg import keystore, profiles

    Requested.json = Requested.json or as_json
    variables = environ()
    found = profiles.find(name, variables)  # yours or a built-in: no project file is read
    if not found.key_env:
        raise keystore.not_keyed(found)
    resolved = keystore.resolve_key(found, variables)
    if as_json:
        print_json(
            {"profile": name, "key_env": found.key_env, "source": resolved.source, "tail": redact.tail(resolved.value)}
        )
        return
    print_secret(resolved.value + "\n")


def print_secret(text: str) -> TextIO:
    """Write to the real stdout, around the scrubber: for the two commands whose job is to print a key."""
    out = sys.stdout.raw if isinstance(sys.stdout, redact.RedactingStream) else sys.stdout
    out.write(text)
    out.flush()
    return out
