"""Keep key values out of everything agentcfg prints.

Until the keyring knows the exact values (keys issue), lines that assign something key-like are
masked by shape: `..._KEY=`, `"apiKey": "..."`, `TOKEN = "..."` and so on.
"""

from __future__ import annotations

import re

from agentcfg.profiles import PLACEHOLDER_KEY

_SECRET_ASSIGNMENT = re.compile(
    r"""(?P<lead>["']?[\w.-]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|AUTH)[\w.-]*["']?\s*[:=]\s*["']?)"""
    r"""(?P<value>[^"'\s,#}]+)""",
    re.IGNORECASE,
)


def _mask(match: re.Match[str]) -> str:
    value = match.group("value")
    if value == PLACEHOLDER_KEY or value.startswith("{env:") or value.startswith("{file:") or len(value) < 8:
        return match.group(0)
    if re.fullmatch(r"[A-Z_][A-Z0-9_]*", value):  # the name of a variable, not a value
        return match.group(0)
    return match.group("lead") + "****"


def mask_line(line: str) -> str:
    return _SECRET_ASSIGNMENT.sub(_mask, line)
