"""Cline CLI: `~/.cline/data/settings/providers.json` (endpoint, model, window) and `global-settings.json`
(telemetry and update checks). docs/cline.md has the sources (offsets in cline 3.0.65's binary).

cline reads its provider from `providers.<lastUsedProvider>.settings`; the whole file is ignored (cline falls
back to its own "cline" provider, at api.cline.bot) unless it parses as its schema: `version` 1 and each entry
with an ISO `updatedAt`. cline takes no reference to a key: `apiKey` holds the key itself, else it reads
OPENAI_API_KEY from the environment. A switch therefore writes a placeholder unless asked for the key
(`--store-key-in-files`); `agentcfg exec` gives one run a provider file of its own
(CLINE_PROVIDER_SETTINGS_PATH) with the key in it, removed when the run ends. cline rewrites providers.json
on every run (a new `updatedAt`, keys of its schema only). The window (`contextWindow`) is what it sizes
max_tokens from: min(32000, window - its prompt estimate); it sends no max_tokens without one.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentcfg import edit, env, fixes
from agentcfg.agents import base, dialect
from agentcfg.agents.base import (
    AgentFile,
    Binding,
    Doctoring,
    FileEdit,
    KeySource,
    Launch,
    LaunchContext,
    Parsed,
    Texts,
    Traits,
    authorize_by_files,
    binding_helpers,
    configured_by_files,
    header_table,
    located_by_files,
    no_key_references,
    no_unreadable,
)
from agentcfg.edit import REMOVE, Assignment
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PLACEHOLDER_KEY, Profile

if TYPE_CHECKING:  # doctor's types: doctor.model loads only when doctor runs
    from agentcfg.doctor.model import Finding, Target

PROVIDER = "openai-compatible"  # cline's provider for a chat completions endpoint (`cline auth -p openai -b URL`)
ENTRY = ("providers", PROVIDER)
KEY_FALLBACK = "OPENAI_API_KEY"  # what cline sends when the entry has no apiKey (the provider's apiKeyEnv)
TRAITS = Traits(
    name="cline",
    title="Cline CLI",
    binary="cline",
    prompt_tokens=8_000,  # its own estimate of its first prompt: max_tokens = window - 8018 (seen, 3.0.65)
    protocol="chat",
    probes=("chat-stream", "chat"),
    default_output=0,  # no max_tokens without a window; with one it sizes max_tokens from the window itself
    bounds_output=False,  # its `maxTokens` setting is not sent to an openai-compatible endpoint (seen)
    window_setting=f"contextWindow of providers.{PROVIDER}.settings in ~/.cline/data/settings/providers.json",
    compacts_every_turn=False,
    replays_reasoning=False,
    expands=(),  # it expands nothing in providers.json: `${VAR}` in apiKey is sent as it is (seen)
    reads_all_proxy=False,
    ignores_no_proxy=False,
    ca_variables=("NODE_EXTRA_CA_CERTS",),
    key_helper_since=None,
    key_helper_setting=None,
    # What cline writes into providers.json whenever it runs (its schema's defaults and a new timestamp): a file
    # agentcfg created that holds only these is still agentcfg's to remove on rollback.
    # (`modes` it adds empty: an empty object counts as nothing; a user's voice input model in it is theirs)
    stamps=(("version",), (*ENTRY, "updatedAt"), (*ENTRY, "tokenSource")),
    proven=("3.0.65",),
    key_fallback=KEY_FALLBACK,
    stand_in_key=True,
    reads_key_variable=False,  # no variable of agentcfg's: exec's run-only provider file, or --store-key-in-files
    keeps_ids=False,  # it rewrites providers.json to its schema on every run: an `agentcfg: LABEL` would go
)
SEED = '{\n  "version": 1\n}\n'
ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"  # zod's datetime(): UTC, `Z` (an offset is refused)
# The `updatedAt` agentcfg writes where there is none: cline only checks that it is an ISO time, and writes its
# own whenever it runs; a fixed one keeps a switch a pure function of its inputs (the same plan twice).
STAMP = "2000-01-01T00:00:00.000Z"


def data_dir(environ: env.Environ) -> Path:
    """cline's data directory: CLINE_DATA_DIR, else CLINE_DIR/data, else ~/.cline/data (no `~` in the variables:
    cline takes them as they are)."""
    if named := (environ.get("CLINE_DATA_DIR") or "").strip():
        return Path(named)
    if top := (environ.get("CLINE_DIR") or "").strip():
        return Path(top) / "data"
    return env.home(environ) / ".cline" / "data"


def files(environ: env.Environ) -> list[AgentFile]:
    settings = data_dir(environ) / "settings"
    providers = (environ.get("CLINE_PROVIDER_SETTINGS_PATH") or "").strip()
    general = (environ.get("CLINE_GLOBAL_SETTINGS_PATH") or "").strip()
    return [
        AgentFile(Path(providers) if providers else settings / "providers.json", "json", SEED),
        AgentFile(Path(general) if general else settings / "global-settings.json", "json"),
    ]


def unsupported(profile: Profile) -> str | None:
    return None


def _load(file: AgentFile, text: str | None) -> dict:
    return base.table(edit.load("json", text or "", path=str(file.path)))


def _settings(profile: Profile, api_key: object) -> dict[str, object]:
    return {
        "provider": PROVIDER,
        "apiKey": api_key,
        "model": profile.model,
        "baseUrl": profile.base_url,
        "contextWindow": profile.context_window if profile.context_window else REMOVE,
    }


def edits(profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]:
    providers_file, general_file = current
    data = _load(providers_file, current[providers_file])
    old = base.table(base.table(data.get("providers")).get(PROVIDER))
    stamp = old.get("updatedAt")
    api_key = keys.literal if profile.key_env and keys.literal else PLACEHOLDER_KEY
    notes: list[str] = []
    old_key = base.table(old.get("settings")).get("apiKey")
    replaced = isinstance(old_key, str) and old_key not in (PLACEHOLDER_KEY, api_key)
    path = providers_file.path
    start = (
        f"start it as `agentcfg exec {profile.name} -- cline` (the key in a file of that run alone), or switch with "
        "--store-key-in-files to write the key into providers.json (owner-only)"
    )
    if profile.key_env and not keys.literal:  # (import's key move too: the key is in the keyring now)
        notes.append(
            f"{path}: replaced the plaintext apiKey of cline's {PROVIDER} provider with a placeholder (cline takes "
            f"no key from a variable or command of agentcfg's): {start}; `agentcfg rollback` brings it back."
            if replaced
            else f"cline takes no key from a variable or command of agentcfg's: {path} holds a placeholder key; "
            f"{start}."
        )
    elif replaced:
        notes.append(
            f"{path}: replaced the plaintext apiKey of cline's {PROVIDER} provider, so it does not go to "
            f"{profile.base_url}; `agentcfg rollback` brings it back."
        )
    assignments: list[Assignment] = [
        (("version",), 1),
        (("lastUsedProvider",), PROVIDER),
        *(((*ENTRY, "settings", name), value) for name, value in _settings(profile, api_key).items()),
        # Without a valid `updatedAt` cline ignores the whole file; kept as it is, so a second switch changes nothing.
        ((*ENTRY, "updatedAt"), stamp if isinstance(stamp, str) and re.fullmatch(ISO, stamp) else STAMP),
        ((*ENTRY, "tokenSource"), "manual"),
    ]
    general: list[Assignment] = [(("telemetryOptOut",), True), (("autoUpdateEnabled",), False)]
    return [FileEdit(providers_file, assignments, tuple(notes)), FileEdit(general_file, general)]


def read(current: Texts) -> Binding:
    providers_file = next(iter(current))
    data = _load(providers_file, current[providers_file])
    chosen = data.get("lastUsedProvider")
    entry = base.table(base.table(data.get("providers")).get(chosen)) if isinstance(chosen, str) else {}
    settings = base.table(entry.get("settings"))
    key = base.text(settings.get("apiKey"))
    source = None if not key else "placeholder" if key == PLACEHOLDER_KEY else "in file"
    fallback = chosen == PROVIDER and not key  # an empty or absent apiKey: cline sends OPENAI_API_KEY
    return Binding(
        base_url=base.text(settings.get("baseUrl")),
        model=base.text(settings.get("model")),
        key=f"env {KEY_FALLBACK}" if fallback else source,
        key_env=KEY_FALLBACK if fallback else None,
        key_value=key or None,
        headers=header_table(settings.get("headers"), f"providers.{chosen}.settings.headers"),
        context_window=base.number(settings.get("contextWindow")),
    )


def foreign_format(current: Texts) -> tuple[AgentFile, str] | None:
    """providers.json of another schema version than the 1 cline 3 reads (and agentcfg writes)."""
    providers_file = next(iter(current))
    version = _load(providers_file, current[providers_file]).get("version")
    if version is not None and version != 1:
        return providers_file, f"cline providers.json version {json.dumps(version)} (cline 3 reads version 1)"
    return None


def launch(profile: Profile, args: tuple[str, ...], context: LaunchContext) -> Launch:
    """cline reads its providers from CLINE_PROVIDER_SETTINGS_PATH and its global settings from
    CLINE_GLOBAL_SETTINGS_PATH; everything else (sessions, history, MCP, rules) stays in its data directory.
    The provider file holds the profile alone, with the key (cline reads no variable but OPENAI_API_KEY, which
    every command it runs would inherit): written for this run only, and removed once it has ended. The global
    settings are the user's own with telemetry and update checks off (a file of no secret, kept)."""
    key = context.key if profile.key_env and context.key is not None else PLACEHOLDER_KEY
    settings = {name: value for name, value in _settings(profile, key).items() if value is not REMOVE}
    entry = {"settings": settings, "updatedAt": STAMP, "tokenSource": "manual"}
    providers = {"version": 1, "lastUsedProvider": PROVIDER, "modes": {}, "providers": {PROVIDER: entry}}
    name = base.run_name(f"cline-{profile.name}", context.run, ".providers.json")
    general_file = list(context.current)[1]
    try:
        general = _load(general_file, context.current[general_file])
    except AgentcfgError:
        general = {}
    general = {**general, "telemetryOptOut": True, "autoUpdateEnabled": False}
    general_text = json.dumps(general, indent=2) + "\n"
    general_name = base.runtime_name(f"cline-{profile.name}", general_text, ".global-settings.json")
    variables = {
        "CLINE_PROVIDER_SETTINGS_PATH": str(context.runtime / name),
        "CLINE_GLOBAL_SETTINGS_PATH": str(context.runtime / general_name),
        "CLINE_NO_AUTO_UPDATE": "1",
        # cline hands its sessions to a background hub daemon (127.0.0.1:25463) that makes the model requests
        # with the settings of the environment it was started in, and outlives the run: a daemon a plain
        # `cline` started would serve this run from the user's files, and one this run started would serve
        # later plain runs from this run's file (seen, 3.0.65). Local: the run's own process does it all.
        "CLINE_SESSION_BACKEND_MODE": "local",
    }
    return Launch(
        args,
        variables,
        files={general_name: general_text},
        key_files={name: json.dumps(providers, indent=2) + "\n"},
        key_in_env=False,
    )


key_references = no_key_references  # cline has no reference to a key: import leaves the user's key in the file
kept_files = base.no_kept_files
profile_file_names = base.no_profile_file_names
profile_file_edit = base.no_profile_file_edit


# -- doctor ----------------------------------------------------------------------------------------------


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    from agentcfg.agents.cline import checks  # lazy: doctor's alone (switch and status load every agent module)

    return checks.check(parsed, environ, profiles)


unreadable = no_unreadable
configured = configured_by_files
key_helpers = binding_helpers
locate = located_by_files


def authorize(target: Target, binding: Binding, profile: Profile | None, doctor: Doctoring) -> None:
    """As its files say, except where they hold the placeholder a switch to a keyed profile leaves: then the
    key is the one `agentcfg exec` gives cline (the keyring, else the profile's variable), as for the other
    agents, and started directly cline sends the placeholder (a finding says so)."""
    if not (binding.key_value == PLACEHOLDER_KEY and profile is not None and profile.key_env):
        authorize_by_files(target, binding, profile, doctor)
        return
    before = len(target.static)
    authorize_by_files(target, replace(binding, key=None, key_value=None, key_env=profile.key_env), profile, doctor)
    if target.key is None or any(f.id.startswith("key-") for f in target.static[before:]):
        return  # what doctor's key rules said (no key, a key for another host) is said already
    from agentcfg.doctor.model import WARN, Finding  # lazy: doctor's alone

    target.static.append(
        Finding(
            "key-missing",
            WARN,
            TRAITS.name,
            f"cline reads no {profile.key_env}: its providers.json holds agentcfg's placeholder key, which it sends "
            f"to {target.base_url} when started directly",
            "apiKey is the placeholder",
            fixes.exec_agent(profile.name, TRAITS.binary),
            "`agentcfg exec` gives that run alone a provider file with the key; or switch with "
            "--store-key-in-files to keep the key in providers.json (owner-only)",
        )
    )


def told_window(profile: Profile) -> int | None:
    return profile.context_window


def reasoning_advice(router: str, thinking_off: str) -> str:
    return (
        f"cline does not send a thinking model's reasoning back on the next turn: {router}, or turn thinking "
        f"off for tool turns: {thinking_off}"
    )


# -- MCP servers: agents/cline/mcp.py (its Spec of the `mcpServers` dialect, agents/mcpservers.py) --


def mcp_files(environ: env.Environ) -> list[AgentFile]:
    """CLINE_MCP_SETTINGS_PATH (taken as it is, as cline does), else in its data directory."""
    named = (environ.get("CLINE_MCP_SETTINGS_PATH") or "").strip()
    return [AgentFile(Path(named) if named else data_dir(environ) / "settings" / "cline_mcp_settings.json", "json")]


mcp_read, mcp_edits = dialect.members(TRAITS.name)
