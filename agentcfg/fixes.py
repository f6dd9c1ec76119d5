"""The fix lines doctor, switch and status print: shell commands that work when pasted as they are.

Every `fix` a user sees is built here, so none carries a placeholder (PROFILE, NAME, `...`, `<key>`)
and every value is quoted for the shell. Where no command can do it, the finding says what to do in
words instead (Finding.hint); tests run each printed fix in a temporary HOME (tests/test_fixes.py).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence


def command(*argv: str) -> str:
    """One command line, each word quoted for a POSIX shell."""
    return shlex.join(argv)


def then(*commands: str) -> str:
    """Commands run one after another, each only if the one before it worked."""
    return " && ".join(c for c in commands if c)


def switch(profile: str, agent: str | None = None, *, agents: Sequence[str] = ()) -> str:
    """`agentcfg switch PROFILE`, for one agent (or these agents) when only they are meant."""
    chosen = [*([agent] if agent else []), *agents]
    return command("agentcfg", "switch", profile, *(w for a in dict.fromkeys(chosen) for w in ("--agent", a)))


def key_set(profile: str) -> str:
    return command("agentcfg", "key", "set", profile)


def exec_agent(profile: str, agent_binary: str) -> str:
    return command("agentcfg", "exec", profile, "--", agent_binary)


def profile_set(profile: str, **fields: object) -> str:
    """`agentcfg profile set PROFILE field=value ...`: change these fields and keep the rest."""
    return command("agentcfg", "profile", "set", profile, *(f"{name}={value}" for name, value in fields.items()))


def profile_unset(profile: str, *fields: str) -> str:
    return command("agentcfg", "profile", "unset", profile, *fields)


def discard(entry: str) -> str:
    """`agentcfg rollback --discard ENTRY`: set a journal entry aside (agentcfg.apply.Journal.discard)."""
    return command("agentcfg", "rollback", "--discard", entry)
