"""GitHub Copilot CLI: `~/.copilot/providers.json` (its BYOK providers and models) and `~/.copilot/settings.json`
(the `model` it starts with). `COPILOT_HOME` moves ~/.copilot; `COPILOT_PROVIDERS_CONFIG` names the providers file.

A switch adds (or rewrites) the provider `agentcfg-NAME` and its model in providers.json, and selects it with
`"model": "agentcfg-NAME/MODEL"` in settings.json, so a plain `copilot -p ...` uses the profile; the user's other
providers and models stay. providers.json takes a key only as plaintext (`apiKey`): no variable, no command
(docs/copilot.md, Sources), so a keyed profile's key goes there only with `switch --store-key-in-files`; without
it `agentcfg exec NAME -- copilot` brings the key (COPILOT_PROVIDER_API_KEY_COMMAND runs `agentcfg key get`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcfg import attribution, budget, edit, env, fixes
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
    located_by_files,
    no_foreign_format,
    no_key_references,
    no_unreadable,
)
from agentcfg.agents.keyhelper import helper_command
from agentcfg.attribution import profile_from_id
from agentcfg.profiles import Profile

if TYPE_CHECKING:  # doctor's types: doctor.model loads only when doctor runs
    from agentcfg.doctor.model import Finding, Target

TRAITS = Traits(
    name="copilot",
    title="GitHub Copilot CLI",
    binary="copilot",
    prompt_tokens=12_000,  # 1.0.102's first request: system prompt and 17 tools, ~48 KB of JSON
    protocol="chat",
    probes=("chat-stream",),  # it streams every turn (captured: stream true, stream_options.include_usage)
    default_output=0,  # without maxOutputTokens it sends no max_tokens (captured)
    bounds_output=True,
    window_setting="maxPromptTokens of its model in ~/.copilot/providers.json",
    compacts_every_turn=False,
    replays_reasoning=False,
    expands=(),  # `${VAR}` in providers.json is sent as it is (captured: `Bearer ${MYKEY}`)
    reads_all_proxy=False,
    ignores_no_proxy=False,
    ca_variables=("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"),
    key_helper_since=None,  # only COPILOT_PROVIDER_API_KEY_COMMAND, a variable: exec sets it, no file can
    key_helper_setting=None,
    proven=("1.0.102",),
    reads_key_variable=False,  # providers.json takes a key only in plaintext (edits' note says how copilot starts)
)
PROVIDERS_CONFIG = "COPILOT_PROVIDERS_CONFIG"
SEED = "{}\n"
# What exec sets for one process. Copilot's BYOK variables win over providers.json and settings.json's model
# (run against 1.0.102); an empty value reads as unset, so the user's own key, token, headers and model ids in
# the shell are cleared (a bearer token would win over the key command and go to the profile's host).
CLEARED = (
    "COPILOT_PROVIDER_API_KEY",
    "COPILOT_PROVIDER_BEARER_TOKEN",
    "COPILOT_PROVIDER_HEADERS",
    "COPILOT_PROVIDER_MODEL_ID",
    "COPILOT_PROVIDER_WIRE_MODEL",
    "COPILOT_PROVIDER_TRANSPORT",
    "COPILOT_PROVIDER_AZURE_API_VERSION",
)
# No GitHub contact at all (auth, telemetry, web tools, GitHub MCP server, update): only a variable does this.
QUIET = {"COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false"}


def home(environ: env.Environ) -> Path:
    value = environ.get("COPILOT_HOME")
    return Path(value).expanduser() if value else env.home(environ) / ".copilot"


def files(environ: env.Environ) -> list[AgentFile]:
    named = (environ.get(PROVIDERS_CONFIG) or "").strip()
    providers = Path(named).expanduser() if named else home(environ) / "providers.json"
    return [AgentFile(providers, "json", SEED), AgentFile(home(environ) / "settings.json", "json", SEED)]


def unsupported(profile: Profile) -> str | None:
    return None


def _limits(profile: Profile) -> tuple[int, int]:
    """(maxPromptTokens, maxOutputTokens): the prompt gets what the window leaves after the reply."""
    output = budget.output_tokens(profile, TRAITS.prompt_tokens)
    return max(1, budget.window(profile) - output), output


def _load(file: AgentFile, text: str | None) -> dict[str, Any]:
    return base.table(edit.load("json", text or "", path=str(file.path)))


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def _entries(value: object) -> list[dict]:
    return [item for item in _list(value) if isinstance(item, dict)]


def edits(profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]:
    providers_file, settings_file = current
    data = _load(providers_file, current[providers_file])
    ident = attribution.switch_id(profile.name)
    prompt, output = _limits(profile)
    provider: dict[str, Any] = {"name": ident, "type": "openai", "baseUrl": profile.base_url, "wireApi": "completions"}
    notes: list[str] = []
    if profile.key_env and keys.literal:
        provider["apiKey"] = keys.literal
    elif profile.key_env:
        notes.append(
            f"{providers_file.path}: Copilot CLI takes a provider's key only in plaintext there (no variable, no "
            f"command), so plain `copilot` sends none to {profile.base_url}: start it with "
            f"`{fixes.exec_agent(profile.name, TRAITS.binary)}` (it fetches the key itself), or switch with "
            "--store-key-in-files"
        )
    model = {"id": profile.model, "provider": ident, "maxOutputTokens": output, "maxPromptTokens": prompt}
    # The user's entries (and anything else in the lists) stay where they are; ours come last.
    keep_p = [p for p in _list(data.get("providers")) if not (isinstance(p, dict) and p.get("name") == ident)]
    keep_m = [m for m in _list(data.get("models")) if not (isinstance(m, dict) and m.get("provider") == ident)]
    return [
        FileEdit(
            providers_file, [(("providers",), [*keep_p, provider]), (("models",), [*keep_m, model])], tuple(notes)
        ),
        FileEdit(settings_file, [(("model",), f"{ident}/{profile.model}")]),
    ]


def launch(profile: Profile, args: tuple[str, ...], context: LaunchContext) -> Launch:
    """Copilot's BYOK variables (COPILOT_PROVIDER_*) take over from providers.json and settings.json's model for
    one process; the key comes from COPILOT_PROVIDER_API_KEY_COMMAND (`agentcfg key get NAME`, or a key file of
    this run), so it is in no variable the commands copilot runs inherit."""
    prompt, output = _limits(profile)
    variables = {
        **QUIET,
        "COPILOT_PROVIDER_BASE_URL": profile.base_url,
        "COPILOT_PROVIDER_TYPE": "openai",
        "COPILOT_PROVIDER_WIRE_API": "completions",
        "COPILOT_MODEL": profile.model,
        "COPILOT_PROVIDER_MAX_PROMPT_TOKENS": str(prompt),
        "COPILOT_PROVIDER_MAX_OUTPUT_TOKENS": str(output),
        "COPILOT_PROVIDER_API_KEY_COMMAND": "",
        **dict.fromkeys(CLEARED, ""),
    }
    key_files: dict[str, str] = {}
    key_in_env = True
    if profile.needs_key and context.helper:
        variables["COPILOT_PROVIDER_API_KEY_COMMAND"] = helper_command(context.helper)
        key_in_env = False
    elif profile.needs_key and context.key is not None:
        name = base.run_name(f"copilot-{profile.name}", context.run, ".key")
        key_files[name] = context.key
        variables["COPILOT_PROVIDER_API_KEY_COMMAND"] = helper_command(("cat", str(context.runtime / name)))
        key_in_env = False
    elif profile.needs_key and profile.key_env:  # no key given: the variable the caller sets
        variables["COPILOT_PROVIDER_API_KEY_COMMAND"] = helper_command(("printenv", profile.key_env))
    notes: tuple[str, ...] = ()
    if "--model" in args or any(a.startswith("--model=") for a in args):
        notes = ("--model is given: Copilot CLI uses that model instead of the profile's",)
    return Launch(args, variables, key_files=key_files, key_in_env=key_in_env, notes=notes)


def read(current: Texts) -> Binding:
    (providers_file, providers_text), (settings_file, settings_text) = current.items()
    selected = base.text(_load(settings_file, settings_text).get("model"))
    if not selected or "/" not in selected:
        return Binding(model=selected)
    ident, model_id = selected.split("/", 1)
    data = _load(providers_file, providers_text)
    provider = next((p for p in _entries(data.get("providers")) if p.get("name") == ident), {})
    entry = next(
        (m for m in _entries(data.get("models")) if m.get("provider") == ident and m.get("id") == model_id), {}
    )
    key = base.text(provider.get("apiKey"))
    prompt, output = base.number(entry.get("maxPromptTokens")), base.number(entry.get("maxOutputTokens"))
    return Binding(
        base_url=base.text(provider.get("baseUrl")),
        model=model_id,
        key="in file" if key else None,
        key_value=key,
        output_tokens=output,
        context_window=prompt + (output or 0) if prompt is not None else None,
        profile=profile_from_id(ident),
    )


foreign_format = no_foreign_format
key_references = no_key_references  # providers.json cannot name a key's variable: a moved key leaves it keyless
kept_files = base.no_kept_files
profile_file_names = base.no_profile_file_names
profile_file_edit = base.no_profile_file_edit


# -- doctor ----------------------------------------------------------------------------------------------


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    from agentcfg.agents.copilot import checks  # lazy: doctor's alone (switch and status load every agent module)

    return checks.check(parsed, environ, profiles)


unreadable = no_unreadable
configured = configured_by_files
key_helpers = binding_helpers
locate = located_by_files


def authorize(target: Target, binding: Binding, profile: Profile | None, doctor: Doctoring) -> None:
    """A keyed profile's provider without `apiKey` gets the key the way `agentcfg exec` gives it (the switch's
    note says so): doctor probes with the profile's key, from the keyring or its variable, as for an agent that
    reads the profile's variable."""
    if binding.key_value is None and profile is not None and profile.key_env:
        binding = replace(binding, key=f"env {profile.key_env}", key_env=profile.key_env)
    authorize_by_files(target, binding, profile, doctor)


def told_window(profile: Profile) -> int | None:
    return budget.window(profile)


def reasoning_advice(router: str, thinking_off: str) -> str:
    return f"{router}, or turn thinking off for tool turns: {thinking_off}"


# -- MCP servers: agents/copilot/mcp.py (its Spec of the `mcpServers` dialect, agents/mcpservers.py) --


def mcp_files(environ: env.Environ) -> list[AgentFile]:
    """`mcp-config.json` in its directory."""
    return [AgentFile(home(environ) / "mcp-config.json", "json")]


mcp_read, mcp_edits = dialect.members(TRAITS.name)
