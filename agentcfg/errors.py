"""The one error type a user ever sees: what went wrong, where, and what to run next."""

from __future__ import annotations


class AgentcfgError(Exception):
    """A user-facing failure. The CLI prints it without a traceback and exits with `exit_code`."""

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint

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
