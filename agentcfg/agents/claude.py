"""Claude Code: the `env` block of `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR` moves ~/.claude).

Only the variables below change; hooks, permissions and every other env variable stay as they are.
"""

from __future__ import annotations

from pathlib import Path

from agentcfg import budget, edit, env
from agentcfg.agents.base import AgentFile, Binding, FileEdit, Texts
from agentcfg.edit import MISSING, REMOVE
from agentcfg.profiles import PLACEHOLDER_KEY, Profile

NAME = "claude"
BINARY = "claude"
PROMPT_TOKENS = 32_000
TOKEN = "ANTHROPIC_AUTH_TOKEN"
MODEL_SLOTS = (
    "ANTHROPIC_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
)


def home(environ: env.Environ) -> Path:
    value = environ.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() if value else env.home(environ) / ".claude"


def files(environ: env.Environ) -> list[AgentFile]:
    return [AgentFile(home(environ) / "settings.json", "json")]


def unsupported(profile: Profile) -> str | None:
    if not profile.anthropic_base_url:
        return (
            f"profile {profile.name!r} has no Anthropic-protocol base URL "
            f"(add one with `agentcfg profile add {profile.name} ... --anthropic-base-url URL --force`)"
        )
    return None


def edits(profile: Profile, current: Texts) -> list[FileEdit]:
    (settings,) = current
    base = (profile.anthropic_base_url or "").rstrip("/")
    assignments = [
        (("env", "ANTHROPIC_BASE_URL"), base),
        *((("env", slot), profile.model) for slot in MODEL_SLOTS),
        (("env", "CLAUDE_CODE_MAX_OUTPUT_TOKENS"), str(budget.output_tokens(profile, PROMPT_TOKENS))),
    ]
    # A keyless server still needs a token, or Claude Code asks for /login. With a key, the
    # variable stays out of the file and comes from the environment (`agentcfg exec`).
    token = edit.get("json", current[settings] or "", ("env", TOKEN), path=str(settings.path))
    notes: tuple[str, ...] = ()
    if not profile.needs_key:
        assignments.insert(1, (("env", TOKEN), PLACEHOLDER_KEY))
        if token not in (MISSING, PLACEHOLDER_KEY):
            notes = (
                f"{settings.path}: replaced your plaintext {TOKEN} with a placeholder, so no real key goes "
                f"to {base}; `agentcfg rollback` brings it back.",
            )
    elif token == PLACEHOLDER_KEY:
        assignments.insert(1, (("env", TOKEN), REMOVE))
    elif token is not MISSING:
        notes = (f"{settings.path} keeps a plaintext {TOKEN}; Claude Code sends it to {base}.",)
    return [FileEdit(settings, assignments, notes)]


def read(current: Texts) -> Binding:
    ((settings_file, text),) = current.items()
    settings = edit.load("json", text or "", path=str(settings_file.path))
    variables = settings.get("env") or {}
    token = variables.get(TOKEN) or variables.get("ANTHROPIC_API_KEY")
    key = "apiKeyHelper" if settings.get("apiKeyHelper") else None
    if token is not None:
        key = "placeholder" if token == PLACEHOLDER_KEY else "in file"
    return Binding(base_url=variables.get("ANTHROPIC_BASE_URL"), model=variables.get("ANTHROPIC_MODEL"), key=key)
