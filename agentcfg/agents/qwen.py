"""qwen-code: `~/.qwen/.env` (endpoint, model, key) and `~/.qwen/settings.json` (auth type, bounds).

`QWEN_HOME` moves `~/.qwen` in current versions. The `.env` entries make headless `qwen -p` work;
the settings select the OpenAI auth type and add a `modelProviders.openai` entry for the model, which
names the variable holding the key (`envKey`) and bounds the output: without that bound qwen asks
for up to 384000 tokens after its first reply hits 8000. qwen ignores the top-level
`model.generationConfig` for a model that has such an entry, so the bounds live in the entry.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from agentcfg import budget, edit, env
from agentcfg.agents import base
from agentcfg.agents.base import AgentFile, Binding, FileEdit, KeySource, Texts
from agentcfg.attribution import label_from_name
from agentcfg.edit import MISSING, REMOVE, Assignment
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PLACEHOLDER_KEY, Profile

NAME = "qwen"
BINARY = "qwen"
PROMPT_TOKENS = 22_000
# qwen-code stamps its settings schema version into any settings.json it reads (seen with 0.15)
STAMPS: tuple[tuple[str, ...], ...] = (("$version",),)
# ... and migrates an old-layout file when it reads it: the top-level auth choice moves under security
# (seen with 0.15: a rollback must give the user's "qwen-oauth" back in its new place, or it is lost)
MOVES: dict[tuple[str, ...], tuple[str, ...]] = {("selectedAuthType",): ("security", "auth", "selectedType")}
KEY_HELPER_SINCE = None  # reads the key from a variable (`envKey`); runs no command
KEY = "OPENAI_API_KEY"
PROVIDERS = ("modelProviders", "openai")


def home(environ: env.Environ) -> Path:
    value = environ.get("QWEN_HOME")
    return Path(value).expanduser() if value else env.home(environ) / ".qwen"


def files(environ: env.Environ) -> list[AgentFile]:
    directory = home(environ)
    return [AgentFile(directory / ".env", "dotenv"), AgentFile(directory / "settings.json", "json")]


def unsupported(profile: Profile) -> str | None:
    return None


def _is_ours(entry: object) -> bool:
    return isinstance(entry, dict) and str(entry.get("name", "")).startswith("agentcfg:")


def _provider_entries(profile: Profile, settings: AgentFile, text: str, env_key: str) -> list[object]:
    """`modelProviders.openai` with agentcfg's entry first (qwen takes the first entry of an id)."""
    entries = edit.get("json", text, PROVIDERS, path=str(settings.path))
    if entries is MISSING:
        entries = []
    if not isinstance(entries, list):
        raise AgentcfgError(
            "modelProviders.openai is not a list, so agentcfg cannot add its entry",
            where=str(settings.path),
            hint="agentcfg did not change it; make it a list (qwen-code expects one) and run again.",
        )
    generation: dict[str, object] = {"samplingParams": {"max_tokens": budget.output_tokens(profile, PROMPT_TOKENS)}}
    if profile.context_window:
        generation["contextWindowSize"] = profile.context_window
    ours = {
        "id": profile.model,
        "name": f"agentcfg: {profile.label}",
        "baseUrl": profile.base_url,
        "envKey": env_key,
        "generationConfig": generation,
    }
    return [ours, *(e for e in entries if not _is_ours(e))]


def edits(profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]:
    dotenv_file, settings_file = current
    old_key = edit.get("dotenv", current[dotenv_file] or "", (KEY,), path=str(dotenv_file.path))
    # The key qwen reads: the profile's own variable (filled by `agentcfg exec`), else OPENAI_API_KEY
    # from .env, which holds a placeholder for a keyless server (qwen refuses to run without a key).
    entry_key = profile.key_env if profile.key_env and not keys.literal else KEY
    file_key: object = keys.literal if profile.key_env else PLACEHOLDER_KEY
    notes: tuple[str, ...] = ()
    if entry_key != KEY:
        # qwen falls back to OPENAI_API_KEY when the profile's variable is unset: a key left here
        # (the user's, or one `--store-key-in-files` wrote) would go to this profile's host.
        file_key = MISSING if old_key is MISSING else REMOVE
        if old_key not in (MISSING, PLACEHOLDER_KEY):
            notes = (
                f"{dotenv_file.path}: removed the plaintext {KEY}, which qwen would send to {profile.base_url} "
                f"whenever {entry_key} is unset; `agentcfg rollback` brings it back.",
            )
    elif old_key not in (MISSING, PLACEHOLDER_KEY, file_key):
        notes = (
            f"{dotenv_file.path}: replaced your plaintext {KEY}, so it does not go to {profile.base_url}; "
            "`agentcfg rollback` brings it back.",
        )
    env_assignments: list[Assignment] = [(("OPENAI_BASE_URL",), profile.base_url), (("OPENAI_MODEL",), profile.model)]
    if file_key is not MISSING:
        env_assignments.insert(0, ((KEY,), file_key))
    settings_text = current[settings_file] or ""
    return [
        FileEdit(dotenv_file, env_assignments, notes),
        FileEdit(
            settings_file,
            [
                (("security", "auth", "selectedType"), "openai"),
                (("model", "name"), profile.model),
                (PROVIDERS, _provider_entries(profile, settings_file, settings_text, entry_key)),
            ],
        ),
    ]


def read(current: Texts) -> Binding:
    dotenv_file, settings_file = current
    values = edit.load("dotenv", current[dotenv_file] or "", path=str(dotenv_file.path))
    settings = base.table(edit.load("json", current[settings_file] or "", path=str(settings_file.path)))
    chosen = base.table(settings.get("model"))
    model = base.text(chosen.get("name")) or values.get("OPENAI_MODEL")
    entries = base.table(settings.get("modelProviders")).get("openai")
    matching = [e for e in entries if isinstance(e, dict) and e.get("id") == model] if isinstance(entries, list) else []
    entry = matching[0] if matching else {}
    base_url = base.text(entry.get("baseUrl")) or values.get("OPENAI_BASE_URL")
    env_key = base.text(entry.get("envKey")) or KEY
    generation = base.table(entry.get("generationConfig") or chosen.get("generationConfig"))
    binding = Binding(
        base_url=base_url,
        model=model,
        key_env=env_key,
        output_tokens=base.number(base.table(generation.get("samplingParams")).get("max_tokens")),
        context_window=base.number(generation.get("contextWindowSize")),
        # qwen's entry carries no id of agentcfg's, only the name `agentcfg: LABEL` (agentcfg.attribution)
        label=label_from_name(entry.get("name")),
    )
    if env_key != KEY:
        return replace(binding, key=f"env {env_key}")
    key = values.get(KEY)
    source = None if key is None else "placeholder" if key == PLACEHOLDER_KEY else f"in {dotenv_file.path.name}"
    return replace(binding, key=source, key_value=key)
