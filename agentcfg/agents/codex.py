"""OpenAI Codex CLI: `$CODEX_HOME/config.toml` (default ~/.codex), Responses API only."""

from __future__ import annotations

from pathlib import Path

from agentcfg import edit, env
from agentcfg.agents import base
from agentcfg.agents.base import AgentFile, Binding, FileEdit, KeySource, Texts, header_table, helper_command
from agentcfg.attribution import label_from_name, profile_from_id
from agentcfg.edit import REMOVE, Assignment
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import Profile

NAME = "codex"
BINARY = "codex"
PROMPT_TOKENS = 13_000
STAMPS: tuple[tuple[str, ...], ...] = ()  # keys the agent writes into its own files (see agentcfg.undo)
MOVES: dict[tuple[str, ...], tuple[str, ...]] = {}  # keys the agent moves when it migrates its files
# `[model_providers.X.auth] command` came with openai/codex#16288 (merged 2026-03-31); 0.119.0 is the
# first release surely after it. Older versions ignore the table silently and send no key.
KEY_HELPER_SINCE = (0, 119, 0)
BUILT_IN_PROVIDERS = {"openai": "https://api.openai.com/v1", "ollama": None, "lmstudio": None, "oss": None}


def provider_id(profile: Profile) -> str:
    """Our table name: the `agentcfg-` prefix cannot collide with Codex's reserved ids."""
    return f"agentcfg-{profile.name}"


class HomeMissing(AgentcfgError):
    """CODEX_HOME names something that is not a directory: Codex itself refuses to start (seen by running)."""

    def __init__(self, value: str, exists: bool) -> None:
        import shlex

        what = "a file, not a directory" if exists else "a directory that does not exist"
        super().__init__(
            f"CODEX_HOME points to {value}, {what} (Codex refuses to start too)",
            hint=("Point CODEX_HOME at a directory" if exists else f"Create it (mkdir -p {shlex.quote(value)})")
            + " or unset CODEX_HOME, then run again.",
        )
        self.value, self.exists = value, exists


def home(environ: env.Environ) -> Path:
    value = environ.get("CODEX_HOME")
    if not value:  # Codex treats an empty CODEX_HOME as unset
        return env.home(environ) / ".codex"
    path = Path(value)
    if not path.is_dir():
        raise HomeMissing(value, path.exists())
    return path


def files(environ: env.Environ) -> list[AgentFile]:
    return [AgentFile(home(environ) / "config.toml", "toml")]


def unsupported(profile: Profile) -> str | None:
    return None


def _key_assignments(table: tuple[str, ...], profile: Profile, keys: KeySource) -> list[Assignment]:
    """One of env_key, auth (a command) or the token itself: Codex rejects any two together."""
    env_key, token = REMOVE, REMOVE
    auth: list[Assignment] = [((*table, "auth"), REMOVE)]
    if profile.key_env and keys.literal:
        token = keys.literal
    elif profile.key_env and NAME in keys.runs_helper:
        auth = [((*table, "auth", "command"), keys.helper[0]), ((*table, "auth", "args"), list(keys.helper[1:]))]
    elif profile.key_env:
        env_key = profile.key_env
    return [((*table, "env_key"), env_key), ((*table, "experimental_bearer_token"), token), *auth]


def edits(profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]:
    (config,) = current
    table = ("model_providers", provider_id(profile))
    window = profile.context_window
    return [
        FileEdit(
            config,
            [
                (("model",), profile.model),
                (("model_provider",), provider_id(profile)),
                (("model_context_window",), window if window else REMOVE),
                ((*table, "name"), f"agentcfg: {profile.label}"),
                ((*table, "base_url"), profile.base_url),
                ((*table, "wire_api"), "responses"),
                *_key_assignments(table, profile, keys),
            ],
        )
    ]


def read(current: Texts) -> Binding:
    ((config_file, text),) = current.items()
    if text is None:
        return Binding()
    config = edit.load("toml", text, path=str(config_file.path))
    provider = config.get("model_provider", "openai")
    provider = provider if isinstance(provider, str) else ""  # a number or table names no provider
    table = base.table(base.table(config.get("model_providers")).get(provider))
    base_url = base.text(table.get("base_url")) or BUILT_IN_PROVIDERS.get(provider)
    env_key, token, auth = base.text(table.get("env_key")), base.text(table.get("experimental_bearer_token")), None
    key, helper = None, None
    if env_key:
        key = f"env {env_key}"
    elif isinstance(auth := table.get("auth"), dict):
        key = "helper command"
        args = auth.get("args") if isinstance(auth.get("args"), list) else ()
        helper = helper_command((str(auth.get("command", "")), *map(str, args)))
    elif token:
        key = "in file"
    wire_api = table.get("wire_api", "responses" if provider in BUILT_IN_PROVIDERS else None)
    return Binding(
        base_url=base_url,
        model=base.text(config.get("model")),
        key=key,
        key_env=env_key,
        key_value=token,
        helper=helper,
        wire_api=wire_api if wire_api is None else str(wire_api),
        headers=header_table(table.get("http_headers"), f"model_providers.{provider}.http_headers")
        + header_table(
            table.get("env_http_headers"), f"model_providers.{provider}.env_http_headers", from_variables=True
        ),
        context_window=base.number(config.get("model_context_window")),
        profile=profile_from_id(provider),
        label=label_from_name(table.get("name")),
    )


def key_references(current: Texts, key: str, key_env: str) -> list[FileEdit]:
    """Every provider table of the user's own with `key` as its bearer token: read from key_env instead."""
    ((config_file, text),) = current.items()
    config = edit.load("toml", text or "", path=str(config_file.path))
    tables = config.get("model_providers") if isinstance(config.get("model_providers"), dict) else {}
    assignments: list[Assignment] = []
    for name, table in tables.items():
        if isinstance(table, dict) and table.get("experimental_bearer_token") == key:
            assignments += [
                (("model_providers", name, "experimental_bearer_token"), REMOVE),
                (("model_providers", name, "env_key"), key_env),
            ]
    return [FileEdit(config_file, assignments)] if assignments else []
