"""qwen-code: `~/.qwen/.env` (endpoint, model, key) and `~/.qwen/settings.json` (auth type, bounds).

`QWEN_HOME` moves `~/.qwen` in current versions. The `.env` entries make headless `qwen -p` work;
the settings select the OpenAI auth type and bound the output, without which qwen asks for up to
384000 tokens after its first reply hits 8000.
"""

from __future__ import annotations

from pathlib import Path

from agentcfg import budget, edit, env
from agentcfg.agents.base import AgentFile, Binding, FileEdit, Texts
from agentcfg.edit import MISSING, REMOVE
from agentcfg.profiles import PLACEHOLDER_KEY, Profile

NAME = "qwen"
BINARY = "qwen"
PROMPT_TOKENS = 22_000
KEY = "OPENAI_API_KEY"


def home(environ: env.Environ) -> Path:
    value = environ.get("QWEN_HOME")
    return Path(value).expanduser() if value else env.home(environ) / ".qwen"


def files(environ: env.Environ) -> list[AgentFile]:
    directory = home(environ)
    return [AgentFile(directory / ".env", "dotenv"), AgentFile(directory / "settings.json", "json")]


def unsupported(profile: Profile) -> str | None:
    return None


def edits(profile: Profile, current: Texts) -> list[FileEdit]:
    dotenv_file, settings_file = current
    old_key = edit.get("dotenv", current[dotenv_file] or "", (KEY,), path=str(dotenv_file.path))
    env_assignments = [(("OPENAI_BASE_URL",), profile.base_url), (("OPENAI_MODEL",), profile.model)]
    notes: tuple[str, ...] = ()
    if not profile.needs_key:
        env_assignments.insert(0, ((KEY,), PLACEHOLDER_KEY))  # qwen refuses to run without a key
        if old_key not in (MISSING, PLACEHOLDER_KEY):
            notes = (
                f"{dotenv_file.path}: replaced your plaintext {KEY} with a placeholder, so no real key goes "
                f"to {profile.base_url}; `agentcfg rollback` brings it back.",
            )
    elif old_key == PLACEHOLDER_KEY:
        env_assignments.insert(0, ((KEY,), REMOVE))
    elif old_key is not MISSING:
        notes = (
            f"{dotenv_file.path} keeps a plaintext {KEY}; qwen sends it to {profile.base_url} "
            f"unless {KEY} is set in its environment.",
        )
    generation = ("model", "generationConfig")
    window = profile.context_window
    return [
        FileEdit(dotenv_file, env_assignments, notes),
        FileEdit(
            settings_file,
            [
                (("security", "auth", "selectedType"), "openai"),
                (("model", "name"), profile.model),
                ((*generation, "samplingParams", "max_tokens"), budget.output_tokens(profile, PROMPT_TOKENS)),
                ((*generation, "contextWindowSize"), window if window else REMOVE),
            ],
        ),
    ]


def read(current: Texts) -> Binding:
    dotenv_file, settings_file = current
    values = edit.load("dotenv", current[dotenv_file] or "", path=str(dotenv_file.path))
    settings = edit.load("json", current[settings_file] or "", path=str(settings_file.path))
    model = (settings.get("model") or {}).get("name") or values.get("OPENAI_MODEL")
    key = values.get(KEY)
    source = None if key is None else "placeholder" if key == PLACEHOLDER_KEY else f"in {dotenv_file.path.name}"
    return Binding(base_url=values.get("OPENAI_BASE_URL"), model=model, key=source)
