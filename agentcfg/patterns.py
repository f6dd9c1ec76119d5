"""Regular expressions compiled when first used.

Compiling is most of what importing a module of patterns costs (re keeps no compiled pattern across
processes), on every start, and a command uses few of them: `agentcfg key get` for a built-in profile none
of redact's, keystore's or fields' own.
"""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    """re.compile(pattern, flags), done at the first match, search, sub, ... (any attribute asked for)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(*self._source)
        return getattr(self._compiled, name)


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)
