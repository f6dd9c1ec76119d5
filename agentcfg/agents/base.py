"""What every agent module offers (one module per agent, the same interface, as in pre-commit)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agentcfg import env
from agentcfg.edit import Assignment
from agentcfg.profiles import Profile


@dataclass(frozen=True)
class AgentFile:
    path: Path
    format: str  # "toml", "json" or "dotenv": the editor in agentcfg.edit
    seed: str = ""  # the text a new file starts from, before the owned keys are set


Texts = dict[AgentFile, "str | None"]  # each of an agent's files -> its text; None: does not exist


@dataclass(frozen=True)
class FileEdit:
    file: AgentFile
    assignments: list[Assignment]
    notes: tuple[str, ...] = ()  # what the user should know about this file after the switch


@dataclass(frozen=True)
class Binding:
    """What an agent's files point it at now."""

    base_url: str | None = None
    model: str | None = None
    key: str | None = None  # how the key is found, e.g. "env TAOTOKEN_API_KEY", "placeholder", "in file"


class Agent(Protocol):
    NAME: str
    BINARY: str  # the program on PATH
    PROMPT_TOKENS: int  # its first-turn prompt (system prompt + tool schemas), measured against vLLM

    def files(self, environ: env.Environ) -> list[AgentFile]: ...

    def unsupported(self, profile: Profile) -> str | None: ...

    def edits(self, profile: Profile, current: Texts) -> list[FileEdit]: ...

    def read(self, current: Texts) -> Binding: ...
