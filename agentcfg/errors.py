"""The one error type a user ever sees: what went wrong, where, and what to run next."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """agentcfg's exit statuses: each means one thing, the same in every command (README, `--help`)."""

    OK = 0  # what was asked was done
    FAILED = 1  # it ran and found a failure: a doctor check, a bench request
    REFUSED = 2  # bad input, or this machine cannot do it (no keyring, a file that does not parse): nothing written
    NOTHING = 3  # nothing to act on: no agent installed or configured, no switch to roll back
    NO_KEY = 4  # the profile needs a key that is neither stored nor exported: agents fail until `agentcfg key set`
    INTERNAL = 70  # a bug in agentcfg (sysexits' EX_SOFTWARE)
    NOT_EXECUTABLE = 126  # exec: the command is not executable
    NOT_FOUND = 127  # exec: no such command
    INTERRUPTED = 130  # Ctrl-C


class AgentcfgError(Exception):
    """A user-facing failure. The CLI prints it without a traceback and exits with `exit_code`."""

    exit_code: int = Exit.REFUSED

    def __init__(
        self, message: str, *, where: str | None = None, hint: str | None = None, exit_code: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text += f"\n  {self.hint}"
        return text


class ParseError(AgentcfgError):
    """An existing file does not parse; it is reported, never overwritten."""

    def __init__(self, message: str, *, path: str = "", line: int | None = None, col: int | None = None) -> None:
        where = path + (f":{line}" if line else "") + (f":{col}" if line and col else "")
        super().__init__(
            message,
            where=where or None,
            hint="agentcfg did not change it; fix that line (or move the file away) and run again.",
        )
        self.line = line
        self.col = col
