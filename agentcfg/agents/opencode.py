"""opencode: `$XDG_CONFIG_HOME/opencode/opencode.json` (or the `.jsonc` / `config.json` the user keeps).

opencode deep-merges config.json, opencode.json and opencode.jsonc (the last wins), then the file
named by OPENCODE_CONFIG on top; agentcfg edits the file that wins, so nothing shadows it.
"""

from __future__ import annotations

from pathlib import Path

from agentcfg import budget, edit, env
from agentcfg.agents import base
from agentcfg.agents.base import AgentFile, Binding, FileEdit, KeySource, Texts, header_table
from agentcfg.attribution import label_from_name, profile_from_id
from agentcfg.edit import REMOVE, Assignment
from agentcfg.profiles import Profile

NAME = "opencode"
BINARY = "opencode"
PROMPT_TOKENS = 10_000
STAMPS: tuple[tuple[str, ...], ...] = ()  # keys the agent writes into its own files (see agentcfg.undo)
MOVES: dict[tuple[str, ...], tuple[str, ...]] = {}  # keys the agent moves when it migrates its files
KEY_HELPER_SINCE = None  # reads `{env:VAR}` or `{file:path}`; runs no command
MERGE_ORDER = ("config.json", "opencode.json", "opencode.jsonc")
SEED = '{\n  "$schema": "https://opencode.ai/config.json"\n}\n'


def provider_id(profile: Profile) -> str:
    return f"agentcfg-{profile.name}"


def files(environ: env.Environ) -> list[AgentFile]:
    if named := environ.get("OPENCODE_CONFIG"):
        return [AgentFile(Path(named).expanduser(), "json", SEED)]
    directory = env.xdg_config_home(environ) / "opencode"
    existing = [directory / name for name in MERGE_ORDER if (directory / name).exists()]
    return [AgentFile(existing[-1] if existing else directory / "opencode.json", "json", SEED)]


def unsupported(profile: Profile) -> str | None:
    return None


def edits(profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]:
    (config,) = current
    provider = ("provider", provider_id(profile))
    model = (*provider, "models", profile.model)
    api_key = REMOVE
    if profile.key_env:
        api_key = keys.literal or f"{{env:{profile.key_env}}}"
    return [
        FileEdit(
            config,
            [
                (("model",), f"{provider_id(profile)}/{profile.model}"),
                ((*provider, "npm"), "@ai-sdk/openai-compatible"),
                ((*provider, "name"), f"agentcfg: {profile.label}"),
                ((*provider, "options", "baseURL"), profile.base_url),
                ((*provider, "options", "apiKey"), api_key),
                ((*model, "name"), profile.model),
                ((*model, "tool_call"), True),
                ((*model, "limit", "context"), budget.window(profile)),
                ((*model, "limit", "output"), budget.output_tokens(profile, PROMPT_TOKENS)),
            ],
        )
    ]


def read(current: Texts) -> Binding:
    ((config_file, text),) = current.items()
    config = base.table(edit.load("json", text or "", path=str(config_file.path)))
    model = config.get("model")
    if not isinstance(model, str) or "/" not in model:
        return Binding(model=model if isinstance(model, str) else None)
    provider_name, model_id = model.split("/", 1)
    provider = base.table(base.table(config.get("provider")).get(provider_name))
    options = base.table(provider.get("options"))
    key = base.text(options.get("apiKey"))
    source = None if key is None else key if key.startswith("{env:") else "in file"
    variable = key[5:-1] if key and source and source.startswith("{env:") and key.endswith("}") else None
    entry = base.table(base.table(provider.get("models")).get(model_id))
    limit = base.table(entry.get("limit"))
    headers = header_table(options.get("headers"), f"provider.{provider_name}.options.headers") + header_table(
        entry.get("headers"), f"provider.{provider_name}.models.{model_id}.headers"
    )
    return Binding(
        base_url=base.text(options.get("baseURL")),
        model=model_id,
        key=source,
        key_env=variable,
        key_value=key if source == "in file" else None,
        output_tokens=base.number(limit.get("output")),
        headers=headers,
        context_window=base.number(limit.get("context")),
        profile=profile_from_id(provider_name),
        label=label_from_name(provider.get("name")),
    )


def key_references(current: Texts, key: str, key_env: str) -> list[FileEdit]:
    """Every provider of the user's own that holds `key` in plaintext, pointed at `{env:key_env}` instead."""
    ((config_file, text),) = current.items()
    config = edit.load("json", text or "", path=str(config_file.path))
    providers = config.get("provider") if isinstance(config.get("provider"), dict) else {}
    assignments: list[Assignment] = [
        (("provider", name, "options", "apiKey"), f"{{env:{key_env}}}")
        for name, provider in providers.items()
        if base.table(base.table(provider).get("options")).get("apiKey") == key
    ]
    return [FileEdit(config_file, assignments)] if assignments else []
