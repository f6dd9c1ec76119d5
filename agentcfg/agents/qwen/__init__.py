"""qwen-code: `~/.qwen/.env` (endpoint, model, key) and `~/.qwen/settings.json` (auth type, bounds).

`QWEN_HOME` moves `~/.qwen` in current versions. The `.env` entries make headless `qwen -p` work;
the settings select the OpenAI auth type and add a `modelProviders.openai` entry for the model, which
names the variable holding the key (`envKey`) and bounds the output: without that bound qwen asks
for up to 384000 tokens after its first reply hits 8000. qwen ignores the top-level
`model.generationConfig` for a model that has such an entry, so the bounds live in the entry.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentcfg import budget, edit, env, fields
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
    no_key_references,
    no_unreadable,
)
from agentcfg.attribution import label_from_name
from agentcfg.edit import MISSING, REMOVE, Assignment
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PLACEHOLDER_KEY, Profile

if TYPE_CHECKING:  # doctor's types: doctor.model loads only when doctor runs
    from agentcfg.doctor.model import Finding, Target

TRAITS = Traits(
    name="qwen",
    title="qwen-code",
    binary="qwen",
    prompt_tokens=22_000,
    protocol="chat",
    probes=("chat-stream", "chat"),
    default_output=8000,
    bounds_output=True,
    window_setting="generationConfig.contextWindowSize of its model in ~/.qwen/settings.json",
    compacts_every_turn=False,
    replays_reasoning=True,
    expands=(fields.DOLLAR_TEMPLATE,),
    reads_all_proxy=False,
    ignores_no_proxy=True,
    ca_variables=("NODE_EXTRA_CA_CERTS",),
    key_helper_since=None,
    key_helper_setting=None,
    # qwen-code stamps its settings schema version into any settings.json it reads (seen with 0.15) ...
    stamps=(("$version",),),
    # ... and migrates an old-layout file when it reads it: the top-level auth choice moves under security
    # (seen with 0.15: a rollback must give the user's "qwen-oauth" back in its new place, or it is lost)
    moves={("selectedAuthType",): ("security", "auth", "selectedType")},
    proven=("0.15.10", "0.24.4"),
    retries_output=True,
    proxy_setting="`proxy` setting in ~/.qwen/settings.json",
    needs_key=True,
    key_fallback="OPENAI_API_KEY",
    stand_in_key=True,
    replays_empty_reasoning_for=("deepseek",),
    shell_key_over_placeholder=("OPENAI_API_KEY", ".env"),  # KEY, in files()[0]
)
KEY = "OPENAI_API_KEY"
PROVIDERS = ("modelProviders", "openai")


def home(environ: env.Environ) -> Path:
    value = environ.get("QWEN_HOME")
    return Path(value).expanduser() if value else env.home(environ) / ".qwen"


def files(environ: env.Environ) -> list[AgentFile]:
    directory = home(environ)
    # A new settings.json starts at the `$version` qwen stamps, so its first run does not rewrite the file.
    seed = f'{{\n  "$version": {SETTINGS_VERSION}\n}}\n'
    return [AgentFile(directory / ".env", "dotenv"), AgentFile(directory / "settings.json", "json", seed)]


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
    return [_entry(profile, env_key), *(e for e in entries if not _is_ours(e))]


def _entry(profile: Profile, env_key: str | None) -> dict[str, object]:
    """agentcfg's `modelProviders.openai` entry: the endpoint, the key's variable (if it is read from one) and
    the bounds."""
    generation: dict[str, object] = {
        "samplingParams": {"max_tokens": budget.output_tokens(profile, TRAITS.prompt_tokens)}
    }
    if profile.context_window:
        generation["contextWindowSize"] = profile.context_window
    entry = {"id": profile.model, "name": f"agentcfg: {profile.label}", "baseUrl": profile.base_url}
    return {**entry, **({"envKey": env_key} if env_key else {}), "generationConfig": generation}


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
                # qwen 0.24 picks the entry whose baseUrl is model.baseUrl (else the first of the id, with a
                # warning); 0.15 ignores the key. Without it a user's entry of the same id could win on 0.24.
                (("model", "baseUrl"), profile.base_url),
                (PROVIDERS, _provider_entries(profile, settings_file, settings_text, entry_key)),
            ],
        ),
    ]


# The top-level keys of settings.json that read and foreign_format look at: of a big file only these are built.
READS = frozenset({"model", "modelProviders", "$version"})


def read(current: Texts) -> Binding:
    dotenv_file, settings_file = current
    values = edit.load("dotenv", current[dotenv_file] or "", path=str(dotenv_file.path))
    settings = base.table(edit.load("json", current[settings_file] or "", path=str(settings_file.path), keep=READS))
    chosen = base.table(settings.get("model"))
    model = base.text(chosen.get("name")) or values.get("OPENAI_MODEL")
    entries = base.table(settings.get("modelProviders")).get("openai")
    matching = [e for e in entries if isinstance(e, dict) and e.get("id") == model] if isinstance(entries, list) else []
    # as qwen 0.24 chooses: the entry whose baseUrl is model.baseUrl, else the first of the id
    pinned = [e for e in matching if chosen.get("baseUrl") is not None and e.get("baseUrl") == chosen.get("baseUrl")]
    entry = (pinned or matching or [{}])[0]
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


SETTINGS_VERSION = 4  # the `$version` qwen-code 0.15 and 0.24 stamp; a v5 shape shipped and was reverted


def foreign_format(current: Texts) -> tuple[AgentFile, str] | None:
    """settings.json in qwen-code's v5 shape (`$version` 5, `modelProviders.KIND = {protocol, models}`), written
    by builds between QwenLM/qwen-code#5089 and its revert #5745: qwen 0.15 cannot read it, 0.24 turns it
    back into v4 itself on its next start; agentcfg writes v4 only."""
    _, settings_file = current
    data = base.table(edit.load("json", current[settings_file] or "", path=str(settings_file.path), keep=READS))
    signs = []
    if (version := base.number(data.get("$version"))) is not None and version > SETTINGS_VERSION:
        signs.append(f"`$version` {version}")
    signs += [f"modelProviders.{k} = {{protocol, models}}" for k, v in base.table(data.get("modelProviders")).items()
              if isinstance(v, dict)][:1]  # fmt: skip
    if not signs:
        return None
    return settings_file, f"qwen-code settings v5 shape ({', '.join(signs)}; qwen-code 0.24 turns it back into v4)"


def launch(profile: Profile, args: tuple[str, ...], context: LaunchContext) -> Launch:
    """qwen-code reads a system settings file from QWEN_CODE_SYSTEM_SETTINGS_PATH, the layer above the user's
    and the project's, whose `modelProviders` replaces theirs whole (a user's entry of the same model id
    would otherwise beat every flag and variable). qwen passes its whole environment on to the commands the
    model runs (only its own tokens are taken out), so a profile's key goes in that file, `security.auth.apiKey`,
    for this run only (a key file), and its entry names no variable. OPENAI_API_KEY is set empty: qwen prefers
    that variable to the file's key, and would otherwise load it from ~/.qwen/.env (a placeholder or another
    profile's key). A keyless profile's placeholder goes in that variable, as a switch writes it in .env."""
    keyed = bool(profile.key_env)
    auth: dict[str, object] = {"selectedType": "openai"}
    if keyed and context.key is not None:
        auth["apiKey"] = context.key
    ours = {
        "$version": SETTINGS_VERSION,  # or qwen stamps it into the file
        "security": {"auth": auth},
        "model": {"name": profile.model, "baseUrl": profile.base_url},
        "modelProviders": {"openai": [_entry(profile, None if keyed else KEY)]},
    }
    # The system file this takes the place of (an administrator's, or one the user named) stays, under ours.
    settings = _over(_system_settings(context.environ), ours)
    text = json.dumps(settings, indent=2) + "\n"
    stem = f"qwen-{profile.name}"
    name = base.run_name(stem, context.run) if keyed else base.runtime_name(stem, text)
    variables = {"QWEN_CODE_SYSTEM_SETTINGS_PATH": str(context.runtime / name), "OPENAI_BASE_URL": profile.base_url,
                 "OPENAI_MODEL": profile.model, KEY: "" if keyed else PLACEHOLDER_KEY}  # fmt: skip
    if keyed:
        return Launch(args, variables, key_files={name: text}, key_in_env=False)
    return Launch(args, variables, files={name: text})


def _over(lower: dict, upper: dict) -> dict:
    """`upper` laid over `lower` as qwen merges layers: objects key by key, `modelProviders` replaced whole."""
    merged = dict(lower)
    for key, value in upper.items():
        below = lower.get(key)
        if isinstance(value, dict) and isinstance(below, dict) and key != "modelProviders":
            merged[key] = _over(below, value)
        else:
            merged[key] = value
    return merged


def _system_settings(environ: env.Environ) -> dict:
    """qwen-code's system settings (QWEN_CODE_SYSTEM_SETTINGS_PATH, else the platform's path), or {}."""
    import sys

    named = environ.get("QWEN_CODE_SYSTEM_SETTINGS_PATH")
    if named:
        path = Path(named)
    elif sys.platform == "darwin":
        path = Path("/Library/Application Support/QwenCode/settings.json")
    elif os.name == "nt":
        path = Path(environ.get("ProgramData", "C:\\ProgramData")) / "qwen-code" / "settings.json"
    else:
        path = Path("/etc/qwen-code/settings.json")
    try:
        return base.table(edit.load("json", path.read_text(encoding="utf-8"), path=str(path)))
    except (OSError, UnicodeDecodeError, AgentcfgError):
        return {}


key_references = no_key_references
kept_files = base.no_kept_files
profile_file_names = base.no_profile_file_names
profile_file_edit = base.no_profile_file_edit


# -- doctor ----------------------------------------------------------------------------------------------


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    from agentcfg.agents.qwen import checks  # lazy: doctor's alone (switch and status load every agent module)

    return checks.check(parsed, environ, profiles)


unreadable = no_unreadable
configured = configured_by_files
key_helpers = binding_helpers
authorize = authorize_by_files


def _default_output(model: str | None) -> int:
    """qwen-code asks for 8000, then after a reply hits that retries with its limit for the model name."""
    return 384_000 if (model or "").lower().startswith("deepseek-v4") else 64_000


def locate(target: Target, binding: Binding, doctor: Doctoring) -> bool:
    """qwen-code takes OPENAI_BASE_URL from the shell when its files set no endpoint."""
    if not target.base_url and doctor.environ.get("OPENAI_BASE_URL"):
        target.base_url, target.endpoint_from = doctor.environ["OPENAI_BASE_URL"], "OPENAI_BASE_URL in this shell"
    target.default_output = _default_output(target.model)
    return True


def told_window(profile: Profile) -> int | None:
    return profile.context_window


def reasoning_advice(router: str, thinking_off: str) -> str:
    return (
        f"{TRAITS.name} sends `reasoning_content` back; a server that reads another field (vLLM names it "
        f"`reasoning`) misses it: {router}, or turn thinking off for tool turns: {thinking_off}"
    )


# -- MCP servers: agents/qwen/mcp.py (its Spec of the `mcpServers` dialect, agents/mcpservers.py) --


def mcp_files(environ: env.Environ) -> list[AgentFile]:
    """Its settings.json, of the files a switch edits."""
    return [f for f in files(environ) if f.format == "json"]


mcp_read, mcp_edits = dialect.members(TRAITS.name)
