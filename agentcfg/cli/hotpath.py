"""The commands answered without click (importing it is a third of a short command's start):
- `agentcfg key get PROFILE`: Claude Code (apiKeyHelper) and Codex (its provider's `auth` command) run it on
  every start and on every refresh, and each waits for it;
- `agentcfg doctor`, which a user runs when an agent fails, and `init` at its end.

Each command's body is one function that its click command calls too (agentcfg.cli.keys, agentcfg.cli.doctor),
so both ways give the same output, exit status and refusals; only the parsing differs. Anything but the plain
forms (`--help`, a typo, a value out of range, another word) is left to click, which explains it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import TextIO

from agentcfg import redact
from agentcfg.cli.common import Requested, environ, print_json

# Imported by dataclasses and jaraco.functools, used by neither here (dataclasses: only for a class without a
# docstring), and with ast, dis and tokenize a tenth of `key get` (tests/cli/test_hotpath.py checks).
UNUSED = ("inspect",)


def request(words: list[str]) -> Callable[[], None] | None:
    """The command `words` ask for, when it is one of the plain forms this module answers; else None."""
    if (key := key_get_request(words)) is not None:
        return lambda: key_get(*key)
    if (checks := doctor_request(words)) is not None:
        return lambda: doctor(*checks)
    return None


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


# doctor's options: the ones that take a value, and the flags
_DOCTOR_VALUES = ("--agent", "--timeout")
_DOCTOR_FLAGS = ("--json", "--offline")


def doctor_request(words: list[str]) -> tuple[str | None, tuple[str, ...], bool, float, bool] | None:
    """`doctor [PROFILE] [--agent NAME]... [--timeout SECONDS] [--json] [--offline]`, in any order, as the click
    command's arguments (profile, agents, as_json, timeout, offline); else None. Values as click takes them:
    `--timeout 3` or `--timeout=3`, the last one given; an agent's name as the registry spells it."""
    if words[:1] != ["doctor"]:
        return None
    profile: str | None = None
    given: dict[str, list[str]] = {name: [] for name in (*_DOCTOR_VALUES, *_DOCTOR_FLAGS)}
    rest = iter(words[1:])
    for word in rest:
        name, equals, value = word.partition("=")
        if name in _DOCTOR_VALUES:
            value = value if equals else next(rest, "-")
            if value.startswith("-"):  # no value: click says so
                return None
            given[name].append(value)
        elif word in _DOCTOR_FLAGS:
            given[word].append("")
        elif word.startswith("-") or profile is not None or not word:
            return None
        else:
            profile = word
    timeout = _seconds(given["--timeout"][-1]) if given["--timeout"] else 6.0
    if timeout is None or not _known_agents(given["--agent"]):
        return None
    return profile, tuple(given["--agent"]), bool(given["--json"]), timeout, bool(given["--offline"])


def _seconds(text: str) -> float | None:
    """doctor's `--timeout`, a finite number from 0.1 to 600 (agentcfg.cli.base.Float); else None."""
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) and 0.1 <= number <= 600 else None


def _known_agents(names: list[str]) -> bool:
    if not names:
        return True
    from agentcfg.agents import AGENTS  # doctor imports the registry in any case

    return all(name in AGENTS for name in names)


def doctor(profile: str | None, agents: tuple[str, ...], as_json: bool, timeout: float, offline: bool) -> None:
    from agentcfg import deferred

    deferred.defer(*UNUSED)
    from agentcfg.cli import doctoring

    Requested.json = Requested.json or as_json
    doctoring.doctor(profile, agents, as_json, timeout, offline)


def print_secret(text: str) -> TextIO:
    """Write to the real stdout, around the scrubber: for the two commands whose job is to print a key."""
    out = sys.stdout.raw if isinstance(sys.stdout, redact.RedactingStream) else sys.stdout
    out.write(text)
    out.flush()
    return out
