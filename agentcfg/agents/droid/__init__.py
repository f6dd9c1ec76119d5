"""Factory Droid (`droid`, npm @factory/cli): `~/.factory/settings.json`, its `customModels[]` list.

Droid takes a model of one's own ("BYOK") from an entry of `customModels` and the model a session starts with
from `sessionDefaultSettings.model` (a custom model's id is `custom:...`). A switch owns exactly one entry of the
list, the one whose `id` is agentcfg's (`custom:agentcfg-NAME`, agentcfg.attribution), and the default model;
the user's entries stay as they are. The key is a `${VAR}` reference, which Droid expands from the environment
in settings.json (not in the legacy config.json). docs/droid.md has the sources in Droid's binary.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from agentcfg import attribution, budget, edit, env, fields
from agentcfg.agents import base, dialect
from agentcfg.agents.base import (
    AgentFile,
    Binding,
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
    no_foreign_format,
    no_unreadable,
)
from agentcfg.attribution import label_from_name, profile_from_id
from agentcfg.edit import MISSING, REMOVE, Assignment
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PLACEHOLDER_KEY, Profile

if TYPE_CHECKING:  # doctor's types: doctor.model loads only when doctor runs
    from agentcfg.doctor.model import Finding

TRAITS = Traits(
    name="droid",
    title="Factory Droid",
    binary="droid",
    prompt_tokens=12_000,  # `droid exec --auto high` (12 tools): a 44 KB first request, measured
    protocol="chat",
    probes=("chat-stream",),
    default_output=32000,  # max_tokens with no maxOutputTokens (0.225.2, a model it does not know)
    bounds_output=True,
    window_setting="maxContextLimit of its customModels entry in ~/.factory/settings.json",
    compacts_every_turn=False,
    replays_reasoning=False,
    expands=(fields.DOLLAR_TEMPLATE,),
    reads_all_proxy=False,
    ignores_no_proxy=False,
    ca_variables=("NODE_EXTRA_CA_CERTS",),
    # Droid has `apiKeyHelper` in a custom model, but strips it from the user's own settings files (it runs one
    # only from an organisation's managed settings): no key command agentcfg can give it.
    key_helper_since=None,
    key_helper_setting=None,
    # Droid's first interactive start writes `"logoAnimation": "off"` into settings.json (seen with 0.225.2).
    stamps=(("logoAnimation",),),
    proven=("0.225.1", "0.225.2"),  # npm @factory/cli 0.225.1 runs its 0.225.2 binary, what `droid --version` says
)
MODELS = ("customModels",)
DEFAULT = ("sessionDefaultSettings", "model")
PREFIX = "custom:"
PROVIDER = "generic-chat-completion-api"  # Chat Completions; "openai" is the Responses API, "anthropic" Messages
PROVIDERS = ("generic-chat-completion-api", "openai", "anthropic", "bedrock-converse")
SEED = "{\n}\n"
# Droid leaves an entry out whose apiKey is one of these (its template's placeholders).
TEMPLATE_KEYS = ("YOUR_OPENAI_API_KEY", "YOUR_API_KEY")
REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")  # what Droid expands in apiKey


def model_id(profile: Profile) -> str:
    """The custom model id a switch writes: `custom:agentcfg-NAME` (agentcfg.attribution's switch id)."""
    return PREFIX + attribution.switch_id(profile.name)


def factory_home(environ: env.Environ) -> Path:
    """`~/.factory`, where FACTORY_HOME_OVERRIDE (a directory in place of the home directory) moves it."""
    override = environ.get("FACTORY_HOME_OVERRIDE")
    return (Path(override).expanduser() if override else env.home(environ)) / ".factory"


def files(environ: env.Environ) -> list[AgentFile]:
    return [AgentFile(factory_home(environ) / "settings.json", "json", SEED)]


def unsupported(profile: Profile) -> str | None:
    return None


def _is_ours(entry: object) -> bool:
    """An entry a switch wrote: its id is a switch's (`custom:agentcfg-NAME`)."""
    ident = entry.get("id") if isinstance(entry, dict) else None
    return isinstance(ident, str) and attribution.profile_from_switch_id(ident.removeprefix(PREFIX)) is not None


def _entry(profile: Profile, api_key: object, ident: str, label: str) -> dict[str, object]:
    """agentcfg's `customModels` entry for `profile`: the endpoint, the key (a `${VAR}` reference), the bounds."""
    entry: dict[str, object] = {
        "model": profile.model,
        "id": ident,
        "displayName": label,
        "baseUrl": profile.base_url,
        "provider": PROVIDER,
        "maxOutputTokens": budget.output_tokens(profile, TRAITS.prompt_tokens),
        "maxContextLimit": budget.window(profile),
    }
    if api_key is not REMOVE:
        entry["apiKey"] = api_key
    return entry


def _api_key(profile: Profile, keys: KeySource) -> object:
    """A keyless profile's entry has no apiKey: Droid then sends no Authorization header (0.225.2)."""
    if not profile.key_env:
        return REMOVE
    return keys.literal or f"${{{profile.key_env}}}"


def _entries(settings: AgentFile, text: str) -> list[object]:
    found = edit.get("json", text, MODELS, path=str(settings.path))
    if found is MISSING:
        return []
    if not isinstance(found, list):
        raise AgentcfgError(
            "customModels is not a list, so agentcfg cannot add its entry",
            where=str(settings.path),
            hint="agentcfg did not change it; make it a list (Droid expects one) and run again.",
        )
    return list(found)


def edits(profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]:
    ((settings, text),) = current.items()
    entries = _entries(settings, text or "")
    ours = _entry(profile, _api_key(profile, keys), model_id(profile), f"{attribution.LABEL_PREFIX}{profile.label}")
    # agentcfg's entry keeps its place (a second switch changes nothing); a first one goes last, so the index of
    # every entry of the user's (a part of the id Droid gives an entry without one) stays what it was.
    owned = [i for i, entry in enumerate(entries) if _is_ours(entry)]
    place = owned[0] if owned else len(entries)
    kept = [e for i, e in enumerate(entries) if i not in owned]
    new = [*kept[:place], ours, *kept[place:]]
    notes = _shadow_notes(settings)
    if profile.key_env and not keys.literal:
        notes += (
            f"{settings.path}: the interactive Droid writes this file back with ${{{profile.key_env}}} expanded "
            "(the key in plain text) whenever it saves a setting; FACTORY_DISABLE_SETTINGS_PERSISTENCE=true in "
            "your shell stops that (agentcfg exec sets it for the run).",
        )
    return [FileEdit(settings, [(MODELS, new), (DEFAULT, ours["id"])], notes)]


def _shadow_notes(settings: AgentFile) -> tuple[str, ...]:
    """settings.local.json is merged over settings.json: a default model or a customModels list there wins."""
    local = settings.path.with_name("settings.local.json")
    try:
        data = json.loads(local.read_text())
    except (OSError, ValueError):
        return ()
    found = [name for name, path in (("customModels", MODELS), ("sessionDefaultSettings.model", DEFAULT))
             if _dig(data, path) is not None]  # fmt: skip
    if not found:
        return ()
    return (
        f"{local}: its {' and '.join(found)} override what agentcfg set in settings.json; agentcfg leaves that "
        "file as it is (it is yours): remove them there to use this profile.",
    )


def _dig(data: object, path: tuple[str, ...]) -> object:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


foreign_format = no_foreign_format


def launch(profile: Profile, args: tuple[str, ...], context: LaunchContext) -> Launch:
    """`droid --settings FILE ...`: Droid merges a runtime settings file over its own for this process alone
    and never writes it back. The file names the model by an id no file of the user's has. Droid passes its
    whole environment on to the commands the model runs (its Execute tool; it only masks what looks like a key
    in what they print), so a profile's key goes in that file, for this run only (a key file), not in a
    variable. Droid's calls to Factory (9 to api.factory.ai, 1 to telemetry) stop with FACTORY_AIRGAP_ENABLED;
    FACTORY_DISABLE_SETTINGS_PERSISTENCE keeps the interactive Droid from saving settings.json (it would save it
    with every `${VAR}` expanded)."""
    ((settings, text),) = context.current.items()
    try:
        taken = {e.get("id") for e in _entries(settings, text or "") if isinstance(e, dict)}
    except AgentcfgError:
        taken = set()
    ident = PREFIX + attribution.free_exec_id(
        profile.name, {t.removeprefix(PREFIX) for t in taken if isinstance(t, str)}
    )
    in_file = bool(profile.key_env) and context.key is not None
    api_key: object = REMOVE
    if in_file:
        api_key = context.key
    elif profile.key_env:
        api_key = f"${{{profile.key_env}}}"  # no key found: Droid sends the text, and the server says no
    content = {
        "customModels": [_entry(profile, api_key, ident, f"agentcfg exec: {profile.label}")],
        "sessionDefaultSettings": {"model": ident},
    }
    body = json.dumps(content, indent=2) + "\n"
    stem = f"droid-{profile.name}"
    name = base.run_name(stem, context.run) if in_file else base.runtime_name(stem, body)
    variables = {
        "FACTORY_AIRGAP_ENABLED": "1",
        "FACTORY_DROID_AUTO_UPDATE_ENABLED": "false",
        "FACTORY_DISABLE_SETTINGS_PERSISTENCE": "true",
    }
    argv = ("--settings", str(context.runtime / name), *args)
    if in_file:
        return Launch(argv, variables, key_files={name: body}, key_in_env=False)
    return Launch(argv, variables, files={name: body})


def _selected(settings: dict) -> str | None:
    """The model a session starts with: sessionDefaultSettings.model, else a top-level `model` (Droid moves
    the old top-level key there when it reads the file)."""
    chosen = _dig(settings, DEFAULT)
    if not isinstance(chosen, str):
        chosen = settings.get("model")
    return chosen if isinstance(chosen, str) else None


def usable(entries: object) -> list[dict]:
    """The entries Droid keeps, as it keeps them: a model and a provider, a baseUrl (or Bedrock), no template key."""
    if not isinstance(entries, list):
        return []
    return [
        e for e in entries
        if isinstance(e, dict) and isinstance(e.get("model"), str) and isinstance(e.get("provider"), str)
        and (isinstance(e.get("baseUrl"), str) or isinstance(e.get("bedrock"), dict))
        and e.get("apiKey") not in TEMPLATE_KEYS
    ]  # fmt: skip


def _slug(name: str) -> str:
    return re.sub(r"\s+", "-", name.strip())


def ids(entries: list[dict]) -> list[str]:
    """Each usable entry's id as Droid gives it: its `id`, else `custom:DISPLAYNAME-N` (N: how many entries of
    the same name come before it)."""
    seen: dict[str, int] = {}
    out = []
    for entry in entries:
        name = entry.get("displayName")
        slug = _slug(name if isinstance(name, str) else str(entry["model"]))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        ident = entry.get("id")
        out.append(ident if isinstance(ident, str) else f"{PREFIX}{slug}-{count}")
    return out


def resolve(chosen: str, entries: list[dict]) -> dict | None:
    """The entry a `custom:...` id names, as Droid finds it: by id, else the first entry of that model."""
    if not chosen.startswith(PREFIX):
        return None
    for entry, ident in zip(entries, ids(entries), strict=True):
        if ident == chosen:
            return entry
    return next((e for e in entries if e["model"] == chosen[len(PREFIX) :]), None)


def read(current: Texts) -> Binding:
    ((settings_file, text),) = current.items()
    settings = base.table(edit.load("json", text or "", path=str(settings_file.path)))
    chosen = _selected(settings)
    if chosen is None:
        return Binding()
    entry = resolve(chosen, usable(settings.get("customModels")))
    if entry is None:
        return Binding(model=None if chosen.startswith(PREFIX) else chosen)
    key = base.text(entry.get("apiKey"))
    reference = REFERENCE.fullmatch(key or "")
    source = None
    if reference:
        source = f"env {reference.group(1)}"
    elif key == PLACEHOLDER_KEY:
        source = "placeholder"
    elif key is not None:
        source = "in file"
    ident = base.text(entry.get("id")) or ""
    return Binding(
        base_url=base.text(entry.get("baseUrl")),
        model=base.text(entry.get("model")),
        key=source,
        key_env=reference.group(1) if reference else None,
        key_value=key if source in ("in file", "placeholder") else None,
        output_tokens=base.number(entry.get("maxOutputTokens")),
        headers=header_table(entry.get("extraHeaders"), f"customModels[{ident or entry.get('model')}].extraHeaders"),
        context_window=base.number(entry.get("maxContextLimit")),
        profile=profile_from_id(ident.removeprefix(PREFIX)) if ident else None,
        label=label_from_name(entry.get("displayName")),
    )


def kept_files(environ: env.Environ) -> list[tuple[Path, str]]:
    return []


profile_file_names = base.no_profile_file_names
profile_file_edit = base.no_profile_file_edit


def key_references(current: Texts, key: str, key_env: str) -> list[FileEdit]:
    """Every entry of the user's whose apiKey is `key` in plaintext, pointed at `${key_env}` instead (Droid
    expands it in settings.json)."""
    ((settings, text),) = current.items()
    try:
        entries = _entries(settings, text or "")
    except AgentcfgError:
        return []
    changed = [
        {**e, "apiKey": f"${{{key_env}}}"} if isinstance(e, dict) and e.get("apiKey") == key else e for e in entries
    ]
    if changed == entries:
        return []
    assignments: list[Assignment] = [(MODELS, changed)]
    return [FileEdit(settings, assignments)]


# -- doctor ----------------------------------------------------------------------------------------------


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    from agentcfg.agents.droid import checks  # lazy: doctor's alone (switch and status load every agent module)

    return checks.check(parsed, environ, profiles)


unreadable = no_unreadable
configured = configured_by_files
key_helpers = binding_helpers
locate = located_by_files
authorize = authorize_by_files


def told_window(profile: Profile) -> int | None:
    return budget.window(profile)


def reasoning_advice(router: str, thinking_off: str) -> str:
    return (
        "Droid sends no reasoning back on its next turn with a chat-completions custom model: "
        f"{thinking_off}, or route it through {router}"
    )


# -- MCP servers: agents/droid/mcp.py (its Spec of the `mcpServers` dialect, agents/mcpservers.py) --


def mcp_files(environ: env.Environ) -> list[AgentFile]:
    """`mcp.json` in its directory."""
    return [AgentFile(factory_home(environ) / "mcp.json", "json")]


mcp_read, mcp_edits = dialect.members(TRAITS.name)
