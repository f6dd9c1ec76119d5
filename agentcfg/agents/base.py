"""What every agent module offers (one module per agent, the same interface, as in pre-commit)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
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
class KeySource:
    """How a keyed profile's key reaches the agents (a keyless profile needs none of this)."""

    helper: tuple[str, ...] = ()  # the argv that prints the key: `agentcfg key get PROFILE`
    runs_helper: frozenset[str] = frozenset()  # agents whose installed version runs `helper` itself
    literal: str | None = None  # the key itself, only with `switch --store-key-in-files`


def helper_command(argv: tuple[str, ...]) -> str:
    """`argv` as one command line for the system shell (Claude Code runs apiKeyHelper through it)."""
    if os.name == "nt":
        import subprocess

        return subprocess.list2cmdline(argv)
    import shlex

    return shlex.join(argv)


def is_helper(command: object) -> bool:
    """Whether a helper command is one agentcfg wrote (so a later switch may replace or remove it)."""
    return isinstance(command, str) and "agentcfg" in command and " key get " in command


@dataclass(frozen=True)
class Binding:
    """What an agent's files point it at now."""

    base_url: str | None = None
    model: str | None = None
    key: str | None = None  # how the key is found, e.g. "env TAOTOKEN_API_KEY", "placeholder", "in file"
    # For doctor: what the agent will really send.
    key_env: str | None = None  # the variable it reads the key from
    key_value: str | None = field(default=None, repr=False)  # a key (or placeholder) written in its file
    helper: str | None = None  # a command it runs for the key
    output_tokens: int | None = None  # the output limit its files set; None: its default
    wire_api: str | None = None  # Codex only


class Agent(Protocol):
    NAME: str
    BINARY: str  # the program on PATH
    PROMPT_TOKENS: int  # its first-turn prompt (system prompt + tool schemas), measured against vLLM
    # Keys the agent writes into its own files when it runs (qwen's `$version`): a file agentcfg
    # created that holds only these is still agentcfg's to remove on rollback.
    STAMPS: tuple[tuple[str, ...], ...]
    MOVES: dict[tuple[str, ...], tuple[str, ...]]  # old key -> where the agent moves it when it migrates a file
    # The first version that can run a key helper command itself: () any version, None never.
    KEY_HELPER_SINCE: tuple[int, ...] | None

    def files(self, environ: env.Environ) -> list[AgentFile]: ...

    def unsupported(self, profile: Profile) -> str | None: ...

    def edits(self, profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]: ...

    def read(self, current: Texts) -> Binding: ...
