"""opencode: `$XDG_CONFIG_HOME/opencode/opencode.json` (or the `.jsonc` / `config.json` the user keeps).

opencode deep-merges config.json, opencode.json and opencode.jsonc (the last wins), then the file
named by OPENCODE_CONFIG on top; agentcfg edits the file that wins, so nothing shadows it.
"""

from __future__ import annotations

import json
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
    no_unreadable,
)
from agentcfg.attribution import label_from_name, profile_from_id
from agentcfg.edit import REMOVE, Assignment
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PLACEHOLDER_KEY, Profile

if TYPE_CHECKING:  # doctor's types: doctor.model loads only when doctor runs
    from agentcfg.doctor.model import Finding

TRAITS = Traits(
    name="opencode",
    title="opencode",
    binary="opencode",
    prompt_tokens=10_000,
    protocol="chat",
    probes=("chat-stream", "chat"),
    default_output=32000,
    bounds_output=True,
    window_setting="limit.context of its model in opencode.json",
    compacts_every_turn=True,
    replays_reasoning=True,
    expands=(fields.ENV_FILE_TEMPLATE,),
    reads_all_proxy=False,
    ignores_no_proxy=False,
    ca_variables=("NODE_EXTRA_CA_CERTS",),
    key_helper_since=None,
    key_helper_setting=None,
    launch_by_version=True,  # exec refuses opencode 2 (anomalyco/opencode#36748: it ignores OPENCODE_CONFIG_CONTENT)
    proven=("1.18.33",),
    mcp_project_files=(("opencode.json", "mcp"), ("opencode.jsonc", "mcp")),  # a project's own config
)
MERGE_ORDER = ("config.json", "opencode.json", "opencode.jsonc")
SCHEMA = "https://opencode.ai/config.json"
SEED = '{\n  "$schema": "https://opencode.ai/config.json"\n}\n'


def provider_id(profile: Profile) -> str:
    """The provider a switch writes (agentcfg.attribution)."""
    return attribution.switch_id(profile.name)


def files(environ: env.Environ) -> list[AgentFile]:
    if named := environ.get("OPENCODE_CONFIG"):
        return [AgentFile(Path(named).expanduser(), "json", SEED)]
    directory = env.xdg_config_home(environ) / "opencode"
    existing = [directory / name for name in MERGE_ORDER if (directory / name).exists()]
    return [AgentFile(existing[-1] if existing else directory / "opencode.json", "json", SEED)]


def unsupported(profile: Profile) -> str | None:
    return None


def _config(profile: Profile, api_key: object, ident: str) -> dict:
    """What agentcfg sets in opencode's config for `profile` as provider `ident` (a switch writes its leaves;
    exec passes it whole)."""
    model = {
        "name": profile.model,
        "tool_call": True,
        "limit": {"context": budget.window(profile), "output": budget.output_tokens(profile, TRAITS.prompt_tokens)},
    }
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": f"agentcfg: {profile.label}",
        "options": {"baseURL": profile.base_url, "apiKey": api_key},
        "models": {profile.model: model},
    }
    return {"model": f"{ident}/{profile.model}", "provider": {ident: provider}}


def edits(profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]:
    (config,) = current
    api_key = REMOVE
    if profile.key_env:
        api_key = keys.literal or f"{{env:{profile.key_env}}}"
    return [FileEdit(config, base.flatten(_config(profile, api_key, provider_id(profile))))]


# opencode 2 (`@opencode/cli`) reads a new config shape: `providers.ID` with `package` and `settings` instead of
# `provider.ID` with `npm` and `options`, and new top-level keys. opencode 1 drops them (or refuses
# `permissions`); agentcfg writes the V1 shape only, so a file in the V2 shape is refused, not half-edited.
V2_KEYS = ("providers", "permissions", "plugins", "websearch", "warming")
V2_SCHEMA = "https://opencode.ai/config.v2.json"


# The top-level keys that foreign_format, read and key_references look at: of a big file only these are built.
READS = frozenset({*V2_KEYS, "$schema", "mcp", "provider", "model"})


def _foreign_reads(text: str) -> frozenset[str]:
    """The keys foreign_format must see built. `provider` and `mcp` only where the text names a key their check
    looks for (a 10 MB provider map was built for the check alone, the most of a switch's memory): a key
    written with an escape (`\\u0070ackage`) is its name too, so a text with an escape builds them."""
    escaped = "\\u" in text
    needs = {"provider": ('"package"', '"settings"'), "mcp": ('"servers"',)}
    return READS - {key for key, words in needs.items() if not escaped and not any(w in text for w in words)}


def foreign_format(current: Texts) -> tuple[AgentFile, str] | None:
    """The file in a format agentcfg does not write (opencode's V2 config), and what gives it away."""
    for config, text in current.items():
        data = base.table(edit.load("json", text or "", path=str(config.path), keep=_foreign_reads(text or "")))
        found = [f"top-level `{key}`" for key in V2_KEYS if key in data]
        servers = base.table(data.get("mcp")).get("servers")
        if isinstance(servers, dict) and "type" not in servers:  # V1: an MCP server named "servers" has a type
            found.append("`mcp.servers`")
        if data.get("$schema") == V2_SCHEMA:
            found.append(f"$schema {V2_SCHEMA}")
        for name, entry in base.table(data.get("provider")).items():
            if isinstance(entry, dict) and ("package" in entry or "settings" in entry) and "npm" not in entry:
                found.append(f"provider `{name}` with `package`/`settings`")
        if found:
            return config, "opencode V2 config (" + ", ".join(found) + ")"
    return None


V2_SINCE = (2, 0, 0)


def launch(profile: Profile, args: tuple[str, ...], context: LaunchContext) -> Launch:
    """opencode reads a whole config from OPENCODE_CONFIG_CONTENT, merged over every config file (global,
    OPENCODE_CONFIG, project) and never written back; `{env:VAR}` works in it. opencode deep-merges, so the
    provider's id is one no file has, and every other leaf that matters is set: the key (a placeholder for a
    keyless profile), and `small_model`, or a global one sends the title request elsewhere."""
    if context.version is not None and context.version >= V2_SINCE:
        raise AgentcfgError(
            f"opencode {'.'.join(map(str, context.version))} (opencode 2) is not supported by `agentcfg exec` yet",
            hint="agentcfg is proven with opencode 1 (`npm install -g opencode-ai@1`).",
        )
    # The provider gets an id no switch writes (agentcfg.attribution), nor the file has: a provider of the same id
    # in a config file would be merged with it, its headers and options going along.
    ((config_file, text),) = context.current.items()
    user = base.table(edit.load("json", text or "", path=str(config_file.path)))
    ours = attribution.free_exec_id(profile.name, base.table(user.get("provider")))
    config = _config(profile, f"{{env:{profile.key_env}}}" if profile.key_env else PLACEHOLDER_KEY, ours)
    content = {"$schema": SCHEMA, **config, "small_model": config["model"]}
    # What the user's file could still say that takes a request elsewhere or drops the provider: an agent's
    # own model, and the provider lists (a list is replaced by the merge, not joined).
    agents = {name: {"model": config["model"]} for name, entry in base.table(user.get("agent")).items()
              if isinstance(entry, dict) and "model" in entry}  # fmt: skip
    if agents:
        content["agent"] = agents
    if isinstance(enabled := user.get("enabled_providers"), list):
        content["enabled_providers"] = [*(p for p in enabled if p != ours), ours]
    if isinstance(disabled := user.get("disabled_providers"), list):
        content["disabled_providers"] = [p for p in disabled if p != ours]
    files = {}
    if profile.key_env:  # opencode's own process reads it ({env:VAR}); the plugin keeps it from the commands it runs
        plugin = KEY_OUT_PLUGIN.replace("NAMES", json.dumps([profile.key_env]))
        name = base.runtime_name(f"opencode-{profile.name}", plugin, ".plugin.js")
        files[name] = plugin
        content["plugin"] = [(context.runtime / name).as_uri()]  # added to the files' plugins, not instead
    notes: tuple[str, ...] = ()
    if context.environ.get("OPENCODE_CONFIG_CONTENT"):
        notes = ("OPENCODE_CONFIG_CONTENT in this shell is replaced by the profile's for this run",)
    return Launch(args, {"OPENCODE_CONFIG_CONTENT": json.dumps(content)}, files=files, notes=notes)


# opencode passes its environment on to the bash tool, `!command` and the terminal, over what the `shell.env`
# plugin hook returns (anomalyco/opencode#12012, opencode 1.1 on): a variable it returns unset is left out.
KEY_OUT_PLUGIN = """\
// agentcfg exec: the profile's key variable, kept out of the commands opencode runs (its own process keeps it).
export const AgentcfgKeyOut = async () => ({
  "shell.env": async (_input, output) => {
    for (const name of NAMES) output.env[name] = undefined
  },
})
"""


def read(current: Texts) -> Binding:
    ((config_file, text),) = current.items()
    shown = str(config_file.path)
    model = base.table(edit.load("json", text or "", path=shown, keep=READS - {"provider", "mcp"})).get("model")
    if not isinstance(model, str) or "/" not in model:
        return Binding(model=model if isinstance(model, str) else None)
    provider_name, model_id = model.split("/", 1)
    # the model's provider alone (of a big file, not the whole provider map: edit.values)
    found = edit.lookup(edit.values("json", text or "", [("provider", provider_name)], path=shown),
                        ("provider", provider_name))  # fmt: skip
    provider = base.table(None if found is edit.MISSING else found)
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


def kept_files(environ: env.Environ) -> list[tuple[Path, str]]:
    """opencode's other config names in its directory, whichever exists at the time of a switch (files() picks
    one); none when OPENCODE_CONFIG names the file."""
    if environ.get("OPENCODE_CONFIG"):
        return []
    config = files(environ)[0].path
    return [(config.with_name(name), "json") for name in MERGE_ORDER]


profile_file_names = base.no_profile_file_names
profile_file_edit = base.no_profile_file_edit


def key_references(current: Texts, key: str, key_env: str) -> list[FileEdit]:
    """Every provider of the user's own that holds `key` in plaintext, pointed at `{env:key_env}` instead."""
    ((config_file, text),) = current.items()
    config = edit.load("json", text or "", path=str(config_file.path), keep=READS)
    providers = config.get("provider") if isinstance(config.get("provider"), dict) else {}
    assignments: list[Assignment] = [
        (("provider", name, "options", "apiKey"), f"{{env:{key_env}}}")
        for name, provider in providers.items()
        if base.table(base.table(provider).get("options")).get("apiKey") == key
    ]
    return [FileEdit(config_file, assignments)] if assignments else []


# -- doctor ----------------------------------------------------------------------------------------------


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    from agentcfg.agents.opencode import checks  # lazy: doctor's alone (switch and status load every agent module)

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
        "set the model's `interleaved` option in opencode.json to the field the server reads: "
        '`"interleaved": {"field": "reasoning"}` for vLLM, `{"field": "reasoning_content"}` for DeepSeek\'s API '
        "(opencode #35689: reasoning dropped on messages with tool calls)"
    )


# -- MCP servers: agents/opencode/mcp.py --------------------------------------------------------------------------


def mcp_files(environ: env.Environ) -> list[AgentFile]:
    """The file files() edits (the one that wins the merge), MCP servers beside the rest (agents/opencode/mcp.py)."""
    return files(environ)


mcp_read, mcp_edits = dialect.members(TRAITS.name)
