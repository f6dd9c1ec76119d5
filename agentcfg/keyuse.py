"""The key a command needs to run: `key get`, `exec`, `env`, `serve` and `route` take a keyed profile's key
the same way, and fail the same way when there is none (Exit.NO_KEY, before anything runs).

Below the CLI, so that serve/ and route/ use it without importing the command line.
"""

from __future__ import annotations

from agentcfg import keystore
from agentcfg.errors import Exit
from agentcfg.profiles import Profile


def resolve_key(found: Profile, environ: dict[str, str]) -> keystore.ResolvedKey:
    """The key of a keyed profile (keystore.resolve); none stored or exported: Exit.NO_KEY, before anything runs."""
    try:
        resolved = keystore.resolve(found, environ)
    except keystore.KeyringProblem as problem:
        if problem.kind in ("missing", "no-backend"):  # neither stored nor exported, as switch's exit 4 means
            problem.exit_code = Exit.NO_KEY
        raise
    assert resolved is not None  # found has a key_env
    return resolved
