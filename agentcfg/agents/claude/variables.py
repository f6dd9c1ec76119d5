"""Claude Code's home (`$CLAUDE_CONFIG_DIR`, else ~/.claude) and the ANTHROPIC_* variables of its key and headers.
A leaf: agents/claude/ writes them, agents/claude/doctor.py reads them the way Claude Code does."""

from __future__ import annotations

from pathlib import Path

from agentcfg import env
from agentcfg.agents.base import header_lines

TOKEN = "ANTHROPIC_AUTH_TOKEN"
API_KEY = "ANTHROPIC_API_KEY"
CUSTOM_HEADERS = "ANTHROPIC_CUSTOM_HEADERS"  # "Name: value" lines Claude Code adds to every request


def home(environ: env.Environ) -> Path:
    value = environ.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() if value else env.home(environ) / ".claude"


custom_headers = header_lines  # ANTHROPIC_CUSTOM_HEADERS: one `Name: value` per line
