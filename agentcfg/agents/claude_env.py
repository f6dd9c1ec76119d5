"""Where Claude Code takes its settings from: its home (`$CLAUDE_CONFIG_DIR`, else ~/.claude), the ANTHROPIC_*
variables of the shell and of every settings file's env block (later layers win), and a claude.ai login.
A leaf: agents/claude.py writes these variables, agents/claude_doctor.py reads them the way Claude Code does."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcfg import env, fsutil
from agentcfg.agents.base import Header
from agentcfg.errors import AgentcfgError

TOKEN = "ANTHROPIC_AUTH_TOKEN"
API_KEY = "ANTHROPIC_API_KEY"
CUSTOM_HEADERS = "ANTHROPIC_CUSTOM_HEADERS"  # "Name: value" lines Claude Code adds to every request
SHELL = "this shell"


def home(environ: env.Environ) -> Path:
    value = environ.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() if value else env.home(environ) / ".claude"


def custom_headers(value: object, where: str) -> tuple[Header, ...]:
    """ANTHROPIC_CUSTOM_HEADERS as Claude Code reads it: one `Name: value` per line."""
    if not isinstance(value, str):
        return ()
    lines = (line.partition(":") for line in value.splitlines())
    return tuple(
        Header(name.strip(), where, value=rest.strip()) for name, colon, rest in lines if colon and name.strip()
    )


@dataclass(frozen=True)
class Layer:
    """One place Claude Code takes env variables from."""

    shown: str  # SHELL, "~/.claude/settings.json", ".claude/settings.json (this project)"
    project: bool  # a project's file in the working directory (a cloned repository's, perhaps)
    variables: dict[str, str]


def read_json(path: Path) -> Any:
    """A JSON file's data, or None (missing, unreadable, not JSON, not a regular file, or too large)."""
    try:
        text = fsutil.read_text(path, str(path))  # never blocks on a FIFO a project put there
        return None if text is None else json.loads(text)
    except (AgentcfgError, OSError, ValueError, RecursionError):  # RecursionError: nested past json's limit
        return None


def login_of(home: Path) -> dict[str, Any] | None:
    """The claude.ai login kept in `home`: when it expires, and whether that has passed; None: no login."""
    data = read_json(home / ".credentials.json")
    oauth = data.get("claudeAiOauth") if isinstance(data, dict) else None
    if not isinstance(oauth, dict):
        return None
    expires = oauth.get("expiresAt")
    return {"expiresAt": expires, "expired": isinstance(expires, (int, float)) and expires / 1000 < time.time()}


def layers(environ: env.Environ, cwd: Path) -> list[Layer]:
    """The shell's ANTHROPIC_* variables, then the env blocks of user, project and local settings
    (Claude Code's order: later ones win). Files in the working directory are the project's, unless
    it is HOME or the user's own Claude directory (then they are yours)."""
    user = home(environ)
    found = [Layer(SHELL, False, {k: v for k, v in environ.items() if k.startswith("ANTHROPIC_")})]
    yours = {user.resolve(), (env.home(environ) / ".claude").resolve()}
    for path, project in (
        (user / "settings.json", False),
        (cwd / ".claude" / "settings.json", True),
        (cwd / ".claude" / "settings.local.json", True),
    ):
        project = project and path.parent.resolve() not in yours
        data = read_json(path)
        block = data.get("env") if isinstance(data, dict) else None
        if isinstance(block, dict):
            shown = env.display(path, environ) if not project else f"{path.relative_to(cwd)} (this project)"
            found.append(Layer(shown, project, {k: str(v) for k, v in block.items()}))
    return found
