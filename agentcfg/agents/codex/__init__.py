"""OpenAI Codex CLI: `$CODEX_HOME/config.toml` (default ~/.codex), Responses API only."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentcfg import attribution, budget, edit, env, fsutil
from agentcfg.agents import base, dialect
from agentcfg.agents.base import (
    AgentFile,
    Binding,
    Doctoring,
    FileEdit,
    KeyHelper,
    KeySource,
    Launch,
    LaunchContext,
    Parsed,
    Texts,
    Traits,
    binding_helpers,
    configured_by_files,
    header_table,
    no_foreign_format,
)
from agentcfg.agents.keyhelper import helper_command
from agentcfg.attribution import label_from_name, profile_from_id
from agentcfg.edit import REMOVE, Assignment
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import Profile

if TYPE_CHECKING:  # doctor's types: doctor.model loads only when doctor runs
    from agentcfg.doctor.model import Finding, Target

TRAITS = Traits(
    name="codex",
    title="Codex",
    binary="codex",
    prompt_tokens=13_000,
    protocol="responses",
    probes=("responses-stream",),
    default_output=0,
    bounds_output=False,
    window_setting="model_context_window in ~/.codex/config.toml",
    compacts_every_turn=False,
    replays_reasoning=False,
    expands=(),
    reads_all_proxy=True,
    ignores_no_proxy=False,
    ca_variables=("CODEX_CA_CERTIFICATE", "SSL_CERT_FILE"),
    # `[model_providers.X.auth] command` came with openai/codex#16288 (merged 2026-03-31); 0.119.0 is the
    # first release surely after it. Older versions ignore the table silently and send no key.
    key_helper_since=(0, 119, 0),
    key_helper_setting="the provider's auth.command",
    proven=("0.171.0",),
    needs_key=True,
    profile_files_since=(0, 134, 0),  # PROFILE_FILES_SINCE
)
BUILT_IN_PROVIDERS = {
    "openai": "https://api.openai.com/v1", "ollama": None, "lmstudio": None, "oss": None,
    "amazon-bedrock": None, "amazon-bedrock-runtime": None,
}  # fmt: skip
# Ids Codex refuses in model_providers ("reserved built-in provider IDs", codex-rs/config/src/config_toml.rs
# RESERVED_MODEL_PROVIDER_IDS; amazon-bedrock only takes a few fields): agentcfg's `agentcfg-` ids never are.
RESERVED_IDS = ("openai", "ollama", "lmstudio", "amazon-bedrock", "amazon-bedrock-runtime")
# Since 0.134 `codex --profile NAME` layers `$CODEX_HOME/NAME.config.toml` over config.toml (a deep
# merge: what the profile file leaves out comes from config.toml); a legacy `[profiles.NAME]` table
# then makes `--profile NAME` refuse to start, and a top-level `profile = "x"` makes every start fail.
PROFILE_FILES_SINCE = (0, 134, 0)
PROFILE_FILE_PREFIX = "agentcfg-"


def provider_id(profile: Profile) -> str:
    """config.toml's table of a switch (agentcfg.attribution: ids of agentcfg's, none of them Codex's reserved)."""
    return attribution.switch_id(profile.name)


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
    elif profile.key_env and TRAITS.name in keys.runs_helper:
        auth = [((*table, "auth", "command"), keys.helper[0]), ((*table, "auth", "args"), list(keys.helper[1:]))]
    elif profile.key_env:
        env_key = profile.key_env
    return [((*table, "env_key"), env_key), ((*table, "experimental_bearer_token"), token), *auth]


def _assignments(profile: Profile, keys: KeySource, ident: str, window: int | None) -> list[Assignment]:
    table = ("model_providers", ident)
    return [
        (("model",), profile.model),
        (("model_provider",), ident),
        (("model_context_window",), window if window else REMOVE),
        ((*table, "name"), f"agentcfg: {profile.label}"),
        ((*table, "base_url"), profile.base_url),
        ((*table, "wire_api"), "responses"),
        *_key_assignments(table, profile, keys),
    ]


def edits(profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]:
    (config,) = current
    assignments = _assignments(profile, keys, provider_id(profile), profile.context_window)
    return [FileEdit(config, assignments, legacy_profile_notes(current))]


def profile_file(profile_name: str, environ: env.Environ) -> AgentFile:
    """The Codex profile file agentcfg keeps for a profile: `codex --profile agentcfg-NAME` runs on it."""
    return AgentFile(home(environ) / f"{PROFILE_FILE_PREFIX}{profile_name}.config.toml", "toml")


def profile_file_names(environ: env.Environ) -> list[str]:
    """The profiles agentcfg keeps a Codex profile file for (the files there, by name)."""
    directory = home(environ)
    suffix = ".config.toml"
    names = [p.name[len(PROFILE_FILE_PREFIX) : -len(suffix)] for p in directory.glob(f"{PROFILE_FILE_PREFIX}*{suffix}")]
    return sorted(n for n in names if n)


def profile_file_id(profile: Profile) -> str:
    """The provider id of a profile file: never one of config.toml's switches, whose tables a switch leaves there
    and Codex would merge with this one (a token or env_key there next to this file's auth is a hard error)."""
    return attribution.profile_file_id(profile.name)


def profile_edits(profile: Profile, file: AgentFile, keys: KeySource) -> FileEdit:
    """A Codex profile file for `profile`: the keys of config.toml's switch, so whatever config.toml points at,
    `codex --profile agentcfg-NAME` runs on this profile. The window is always set (the profile's, else
    agentcfg's assumed one): a profile file without one takes config.toml's, another profile's. The table of
    earlier versions' id goes (`agentcfg-profile-NAME`, a switched `profile-NAME`'s in config.toml)."""
    earlier = ("model_providers", f"{attribution.ID_PREFIX}profile-{profile.name}")
    assignments = _assignments(profile, keys, profile_file_id(profile), budget.window(profile))
    return FileEdit(file, [*assignments, (earlier, REMOVE)])


# The top-level keys of config.toml that a switch reads (edits, read, key_references): of a big file only these
# are built (thousands of `[projects."..."]` tables are checked, not kept).
READS = frozenset({"model", "model_provider", "model_providers", "model_context_window", "profile", "profiles"})


def legacy_profile_notes(current: Texts) -> tuple[str, ...]:
    """What a switch tells of Codex's legacy profiles in config.toml (Codex >= 0.134 refuses them)."""
    ((config_file, text),) = current.items()
    data = edit.load("toml", text or "", path=str(config_file.path), keep=READS)
    shown, moved = str(config_file.path), config_file.path.parent
    notes = []
    if isinstance(legacy := data.get("profile"), str):
        notes.append(
            f'{shown} has the legacy `profile = "{legacy}"`: Codex 0.134 and later refuses to start with it; remove '
            f"that line and move [profiles.{legacy}] into {moved / (legacy + '.config.toml')} (then start "
            f"`codex --profile {legacy}`)"
        )
    if names := [n for n in base.table(data.get("profiles")) if isinstance(n, str)]:
        notes.append(
            f"{shown} has legacy [profiles.{names[0]}] tables: `codex --profile {names[0]}` refuses to start while "
            f"they are there; move each into {moved}/NAME.config.toml (without the [profiles.NAME] header)"
            " and remove it"
        )
    return tuple(notes)


def launch(profile: Profile, args: tuple[str, ...], context: LaunchContext) -> Launch:
    """Codex takes `-c key=value` overrides (TOML values) before its subcommand, above config.toml and any
    profile file, for `exec`, `resume` and the interactive session alike. They merge into what the files
    say, so the provider gets an id no file uses (a table of the same id would lend its headers, and an
    `auth` command there is a hard error next to env_key), the window is always given (config.toml's would
    stay), and the key's variable is kept from the commands the model runs (Codex passes its environment on)."""
    ((config_file, text),) = context.current.items()
    data = edit.load("toml", text or "", path=str(config_file.path))
    if isinstance(legacy := data.get("profile"), str):
        raise AgentcfgError(
            f'{config_file.path} has the legacy `profile = "{legacy}"`: Codex refuses to start with it',
            where=str(config_file.path),
            hint=f"Remove that line (move [profiles.{legacy}] into {config_file.path.parent}/{legacy}.config.toml), "
            "then run again.",
        )
    from agentcfg.edit import toml  # lazy: a format's editor loads on first use (agentcfg.edit)

    ident = attribution.free_exec_id(profile.name, base.table(data.get("model_providers")))
    table = {"name": f"agentcfg: {profile.label}", "base_url": profile.base_url, "wire_api": "responses"}
    if profile.key_env:
        table["env_key"] = profile.key_env
    overrides = [
        f"model={toml.render(profile.model)}",
        f"model_provider={toml.render(ident)}",
        f"model_providers.{ident}={toml.render(table)}",  # a profile name is a bare TOML key,
    ]
    window = profile.context_window or (budget.ASSUMED_WINDOW if "model_context_window" in data else None)
    if window:
        overrides.append(f"model_context_window={window}")
    if profile.key_env:
        policy = base.table(data.get("shell_environment_policy"))
        excluded = (
            [str(v) for v in policy.get("exclude", []) if isinstance(v, str)]
            if isinstance(policy.get("exclude"), list)
            else []
        )
        overrides.append(f"shell_environment_policy.exclude={toml.render([*excluded, profile.key_env])}")
    flags = tuple(word for override in overrides for word in ("-c", override))
    return Launch((*flags, *args))


def read(current: Texts) -> Binding:
    ((config_file, text),) = current.items()
    if text is None:
        return Binding()
    config = edit.load("toml", text, path=str(config_file.path), keep=READS)
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
        args = auth.get("args")
        helper = helper_command((str(auth.get("command", "")), *map(str, args if isinstance(args, list) else ())))
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
    config = edit.load("toml", text or "", path=str(config_file.path), keep=READS)
    tables = config.get("model_providers") if isinstance(config.get("model_providers"), dict) else {}
    assignments: list[Assignment] = []
    for name, table in tables.items():
        if isinstance(table, dict) and table.get("experimental_bearer_token") == key:
            assignments += [
                (("model_providers", name, "experimental_bearer_token"), REMOVE),
                (("model_providers", name, "env_key"), key_env),
            ]
    return [FileEdit(config_file, assignments)] if assignments else []


foreign_format = no_foreign_format


def kept_files(environ: env.Environ) -> list[tuple[Path, str]]:
    """The profile files beside config.toml (a name pattern: any profile's)."""
    return [(profile_file("*", environ).path, "toml")]


def profile_file_edit(profile: Profile, environ: env.Environ, keys: KeySource) -> FileEdit | None:
    """The profile's own profile file (`codex --profile agentcfg-NAME`): Traits.profile_files_since."""
    return profile_edits(profile, profile_file(profile.name, environ), keys)


# -- doctor ----------------------------------------------------------------------------------------------


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    from agentcfg.agents.codex import checks  # lazy: doctor's alone (switch and status load every agent module)

    return checks.check(parsed, environ, profiles)


def unreadable(problem: AgentcfgError, environ: env.Environ) -> Finding | None:
    """CODEX_HOME that is not a directory: Codex refuses to start."""
    if not isinstance(problem, HomeMissing):
        return None
    from agentcfg.agents.codex import checks  # lazy: doctor's alone (switch and status load every agent module)

    return checks.home_missing(problem.value, problem.exists, environ)


configured = configured_by_files


def key_helpers(
    current: Texts, binding: Binding, environ: env.Environ, profiles: dict[str, Profile]
) -> list[KeyHelper]:
    """The auth command config.toml names now, and the one of each profile file agentcfg keeps
    (`codex --profile agentcfg-NAME`), which a switch rewrites while NAME is a profile."""
    found = binding_helpers(current, binding, environ, profiles)
    for name in profile_file_names(environ):
        file = profile_file(name, environ)
        shown = env.display(file.path, environ)
        try:
            helper = read({file: fsutil.read_text(file.path, shown)}).helper
        except AgentcfgError:
            continue  # unreadable: Codex says so when started with that profile
        found.append(KeyHelper(shown, helper or "", name in profiles))
    return [h for h in found if h.command]


def locate(target: Target, binding: Binding, doctor: Doctoring) -> bool:
    """Codex's built-in provider is OpenAI's own API, like Claude Code's own: never probed (the probes would
    leave this machine, and a ChatGPT login is not a key doctor can send)."""
    if target.base_url != BUILT_IN_PROVIDERS["openai"]:
        return True
    from agentcfg.agents.codex import checks  # lazy: doctor's alone (switch and status load every agent module)

    checks.built_in(target)
    return False


def authorize(target: Target, binding: Binding, profile: Profile | None, doctor: Doctoring) -> None:
    from agentcfg.agents.codex import checks  # lazy: doctor's alone (switch and status load every agent module)

    checks.authorize(target, binding, profile, doctor)


def told_window(profile: Profile) -> int | None:
    return profile.context_window


def reasoning_advice(router: str, thinking_off: str) -> str:
    return (
        f"{router}, or turn thinking off for tool turns: {thinking_off} (Codex sends back only "
        "`encrypted_content`, never the reasoning text)"
    )


# -- MCP servers: agents/codex/mcp.py --------------------------------------------------------------------------


def mcp_files(environ: env.Environ) -> list[AgentFile]:
    """config.toml: its MCP servers sit beside the rest (agents/codex/mcp.py)."""
    return files(environ)


mcp_read, mcp_edits = dialect.members(TRAITS.name)
