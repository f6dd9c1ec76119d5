"""Variable assignments as each shell's `eval` expects them (for `agentcfg env`), and a word on a systemd
command line (ExecStart=), which the route's and the server's units share."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import PurePath

SHELLS = ("bash", "zsh", "fish", "powershell")


def detect(environ: Mapping[str, str]) -> str:
    """The user's shell from $SHELL (PowerShell sets PSModulePath); bash when unsure."""
    name = PurePath(environ.get("SHELL", "")).name.lower().removesuffix(".exe")
    if name in SHELLS:
        return name
    if name == "pwsh":
        return "powershell"
    if not name and environ.get("PSModulePath"):
        return "powershell"
    return "bash"


def _fish_quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _powershell_quote(value: str) -> str:
    # PowerShell also ends a single-quoted string at the typographic single quotes; each is doubled too.
    for quote in "'\u2018\u2019\u201a\u201b":
        value = value.replace(quote, quote * 2)
    return "'" + value + "'"


def assignments(variables: Mapping[str, str], shell: str) -> str:
    """One line per variable, quoted so that any value survives `eval` unchanged."""
    lines = []
    for name, value in variables.items():
        if shell == "fish":
            lines.append(f"set -gx {name} {_fish_quote(value)};")
        elif shell == "powershell":
            lines.append(f"$env:{name} = {_powershell_quote(value)}")
        else:
            lines.append(f"export {name}={shlex.quote(value)}")
    return "".join(line + "\n" for line in lines)


def usage(shell: str, command: str) -> str:
    """How to load the output of `command` into the current shell."""
    if shell == "fish":
        return f"{command} | source"
    if shell == "powershell":
        return f"{command} | Invoke-Expression"
    return f'eval "$({command})"'


def systemd_quote(word: str) -> str:
    """One word of a systemd command line (ExecStart=...), read back by systemd as exactly this word."""
    if word and all(c.isalnum() or c in "/._-+=:@" for c in word):
        return word
    # systemd reads `%` as a specifier and `$` as a variable even inside quotes: both doubled, taken literally
    escaped = word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return '"' + escaped + '"'


def systemd_command(words: Sequence[str]) -> str:
    return " ".join(systemd_quote(word) for word in words)
