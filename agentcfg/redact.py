"""Keep key values out of everything agentcfg prints.

Two layers: every key value agentcfg has seen in this process (read from the keyring or the
environment) is replaced wherever it appears, and lines that assign something key-like
(`..._KEY=`, `"apiKey": "..."`, `TOKEN = "..."`) are masked by shape, for keys agentcfg never saw.
The CLI routes stdout and stderr through `RedactingStream`, so no output path can forget.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from agentcfg.profiles import PLACEHOLDER_KEY

MASK = "****"
MIN_SECRET_LENGTH = 6  # shorter values would mask ordinary words; no real API key is this short
_known: set[str] = set()

_SECRET_ASSIGNMENT = re.compile(
    r"""(?P<lead>["']?[\w.-]*(?:KEY(?!RING)|TOKEN|SECRET|PASSWORD|PASSWD|AUTH)[\w.-]*["']?\s*[:=]\s*["']?)"""
    r"""(?P<value>[^"'\s,#}]+)""",
    re.IGNORECASE,
)
# A name part, as in OPENAI_API_KEY or GITHUB_TOKEN (not PYTHON_KEYRING_BACKEND); not *_KEY_FILE and such.
_SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD)(?:$|_)", re.IGNORECASE)
_NOT_SECRET_NAME = re.compile(r"_(?:FILE|PATH|DIR|SOCK|ENV|ID|NAME)$", re.IGNORECASE)


def register(value: str | None) -> None:
    """Remember a key value so that no later output shows it."""
    if value and len(value) >= MIN_SECRET_LENGTH and value != PLACEHOLDER_KEY:
        _known.add(value)


def register_environment(environ: Mapping[str, str]) -> None:
    """Register the value of every variable whose name looks like a secret's (paths and sockets aside)."""
    for name, value in environ.items():
        if _SECRET_NAME.search(name) and not _NOT_SECRET_NAME.search(name) and not value.startswith(("/", "~")):
            register(value)


def is_secret(value: str) -> bool:
    """Whether `value` is a key agentcfg has seen in this process."""
    return value in _known


def tail(value: str) -> str:
    """A masked form that still tells keys apart (`…a1b2`), shown only for keys long enough to spare 4 chars."""
    return f"…{value[-4:]}" if len(value) >= 16 else "…"


def scrub(text: str) -> str:
    """`text` with every known key value replaced by a mask."""
    for value in sorted(_known, key=len, reverse=True):
        if value in text:
            text = text.replace(value, MASK)
    return text


def _mask(match: re.Match[str]) -> str:
    value = match.group("value")
    if value == PLACEHOLDER_KEY or value.startswith(("{env:", "{file:", "/", "~")) or len(value) < 8:
        return match.group(0)  # a reference or a path (an apiKeyHelper command), not a key
    if re.fullmatch(r"[A-Z_][A-Z0-9_]*", value):  # the name of a variable, not a value
        return match.group(0)
    return match.group("lead") + MASK


def mask_line(line: str) -> str:
    return _SECRET_ASSIGNMENT.sub(_mask, scrub(line))


class RedactingStream:
    """A text stream that scrubs known key values from everything written through it.

    `raw` is the stream underneath, for the few places that print a key on purpose (`key get`, `env`).
    """

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError("write() argument must be str")
        self.raw.write(scrub(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, ...
        if name == "buffer":  # click would write bytes around the scrubbing through it
            raise AttributeError(name)
        return getattr(self.raw, name)
