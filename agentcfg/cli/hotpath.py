"""`agentcfg key get PROFILE`, answered without click: Claude Code (apiKeyHelper) and Codex (its provider's
`auth` command) run it on every start and on every refresh, and each waits for it.

The command's body is here and the click command (agentcfg.cli.keys) calls the same function, so both
ways give the same output, exit status and refusals; only the parsing differs. Anything but the plain
form (`--help`, a typo, another word) is left to click, which explains it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from agentcfg.cli import Requested, environ, print_json
from agentcfg.errors import Exit

if TYPE_CHECKING:
    from agentcfg import keystore, profiles


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
    from agentcfg import keystore, profiles, redact

    Requested.json = Requested.json or as_json
    variables = environ()
    found = profiles.find(name, variables)  # yours or a built-in: no project file is read
    if not found.key_env:
        raise keystore.not_keyed(found)
    resolved = resolve_key(found, variables)
    if as_json:
        print_json(
            {"profile": name, "key_env": found.key_env, "source": resolved.source, "tail": redact.tail(resolved.value)}
        )
        return
    print_secret(resolved.value + "\n")


def resolve_key(found: profiles.Profile, environ: dict[str, str]) -> keystore.ResolvedKey:
    """The key of a keyed profile (keystore.resolve); none stored or exported: Exit.NO_KEY, before anything runs."""
    from agentcfg import keystore

    try:
        resolved = keystore.resolve(found, environ)
    except keystore.KeyringProblem as problem:
        if problem.kind in ("missing", "no-backend"):  # neither stored nor exported, as switch's exit 4 means
            problem.exit_code = Exit.NO_KEY
        raise
    assert resolved is not None  # found has a key_env
    return resolved


def print_secret(text: str) -> TextIO:
    """Write to the real stdout, around the scrubber: for the two commands whose job is to print a key."""
    from agentcfg.redact import RedactingStream

    out = sys.stdout.raw if isinstance(sys.stdout, RedactingStream) else sys.stdout
    out.write(text)
    out.flush()
    return out
