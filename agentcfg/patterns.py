"""Regular expressions compiled when first used.

Compiling is most of what importing a module of patterns costs (re keeps no compiled pattern across
processes), on every start, and a command uses few of them: `agentcfg key get` for a built-in profile none
of redact's, keystore's or fields' own.
"""

from __future__ import annotations

import re
from typing import Any, cast


class LazyPattern:
    """re.compile(pattern, flags), done at the first match, search, sub, ... (any attribute asked for). What was
    asked for is kept on the instance, so that a scanner's millionth `.match` costs what it costs on the
    compiled pattern (`__getattr__` runs only for a name the instance does not hold)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(*self._source)
        value = getattr(self._compiled, name)
        setattr(self, name, value)  # a bound method or an attribute of an immutable pattern: the same for ever
        return value


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern compiled at its first use (typed as the pattern it stands for: it answers every method)."""
    return cast("re.Pattern[str]", LazyPattern(pattern, flags))
