"""Claude Code: the `env` block of `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR` moves ~/.claude).

Only the variables below change; hooks, permissions and every other env variable stay as they are.
"""

from __future__ import annotations

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
    binding_helpers,
    configured_by_files,
    no_foreign_format,
    no_key_references,
    no_unreadable,
)
from agentcfg.agents.claude.variables import API_KEY, CUSTOM_HEADERS, TOKEN, custom_headers, home
from agentcfg.agents.keyhelper import helper_command, helper_profile_name, is_helper
from agentcfg.edit import MISSING, REMOVE, Assignment
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PLACEHOLDER_KEY, Profile

if TYPE_CHECKING:  # doctor's types: doctor.model loads only when doctor runs
    from agentcfg.doctor.model import Finding, Target

TRAITS = Traits(
    name="claude",
    title="Claude Code",
    binary="claude",
    prompt_tokens=32_000,
    protocol="messages",
    probes=("messages-stream",),
    default_output=32000,
    bounds_output=True,
    window_setting=None,
    compacts_every_turn=False,
    replays_reasoning=False,
    expands=(fields.DOLLAR_TEMPLATE,),
    reads_all_proxy=False,
    ignores_no_proxy=False,
    ca_variables=("NODE_EXTRA_CA_CERTS",),
    key_helper_since=(),
    key_helper_setting="apiKeyHelper",
    proven=("2.1.197", "2.1.332"),
    stand_in_key=True,
    helper_header="both",
    shell_keys_over_helper=("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"),  # TOKEN, API_KEY
    shell_headers="ANTHROPIC_CUSTOM_HEADERS",  # CUSTOM_HEADERS
    model_in_slots=True,
    mcp_project_files=((".mcp.json", "mcpServers"),),  # project scope: `claude mcp add --scope project`
)
MODEL_SLOTS = (
    "ANTHROPIC_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
)
# Every variable Claude Code reads a model from (agentcfg.doctor.agentfiles): exec sets them all, so no slot of
# the user's files sends a request for another profile's model.
EVERY_MODEL_SLOT = (
    *MODEL_SLOTS,
    "ANTHROPIC_SMALL_FAST_MODEL",
    "ANTHROPIC_DEFAULT_FABLE_MODEL",
    "ANTHROPIC_DEFAULT_MODEL",  # 2.1.332
    "CLAUDE_CODE_SUBAGENT_MODEL",
    "CLAUDE_CODE_WORKFLOW_SUBAGENT_MODEL",  # 2.1.332
)
OTHER_PROVIDERS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")
# The window Claude Code compacts by; without it 2.1.332 assumes 1M tokens for a model it does not know (and says so).
MAX_CONTEXT = "CLAUDE_CODE_MAX_CONTEXT_TOKENS"


def files(environ: env.Environ) -> list[AgentFile]:
    return [AgentFile(home(environ) / "settings.json", "json")]


def unsupported(profile: Profile) -> str | None:
    if not profile.anthropic_base_url:
        return (
            f"profile {profile.name!r} has no Anthropic-protocol base URL "
            f"(give it the provider's Anthropic URL, without /v1: `agentcfg profile set {profile.name} "
            "anthropic_base_url=` followed by the URL)"
        )
    return None


def edits(profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]:
    (settings,) = current
    text, shown = current[settings] or "", str(settings.path)
    base = (profile.anthropic_base_url or "").rstrip("/")
    assignments: list[Assignment] = [
        (("env", "ANTHROPIC_BASE_URL"), base),
        *((("env", slot), profile.model) for slot in MODEL_SLOTS),
        (("env", "CLAUDE_CODE_MAX_OUTPUT_TOKENS"), str(budget.output_tokens(profile, TRAITS.prompt_tokens))),
        (("env", MAX_CONTEXT), str(profile.context_window) if profile.context_window else REMOVE),
    ]
    # Claude Code prefers ANTHROPIC_AUTH_TOKEN, then ANTHROPIC_API_KEY, then apiKeyHelper, and sends both
    # variables when both are set: agentcfg owns all three, so no other key reaches this profile's host.
    # A keyless server still needs a token, or Claude Code asks for /login.
    token = (keys.literal or REMOVE) if profile.needs_key else PLACEHOLDER_KEY
    helper = helper_command(keys.helper) if profile.needs_key and keys.helper and not keys.literal else REMOVE
    old_helper = edit.get("json", text, ("apiKeyHelper",), path=shown)
    notes = []
    if helper is REMOVE and old_helper is MISSING:
        helper = MISSING
    elif helper is REMOVE and not is_helper(old_helper):
        # A token does not outrank a helper: Claude Code still runs the user's and sends its key as x-api-key.
        notes.append(
            f"{settings.path}: removed your apiKeyHelper, whose key Claude Code would send to {base} next to the "
            "token; `agentcfg rollback` brings it back."
        )
    for variable, value in ((TOKEN, token), (API_KEY, REMOVE)):
        old = edit.get("json", text, ("env", variable), path=shown)
        if old not in (MISSING, PLACEHOLDER_KEY, value):
            if value is REMOVE:
                done = f"removed your plaintext {variable}"
            else:
                what = "a placeholder" if value == PLACEHOLDER_KEY else "the profile's key"
                done = f"replaced your plaintext {variable} with {what}"
            notes.append(f"{settings.path}: {done}, so it does not go to {base}; `agentcfg rollback` brings it back.")
        assignments.append((("env", variable), value))
    if helper is not MISSING:
        assignments.append((("apiKeyHelper",), helper))
    return [FileEdit(settings, assignments, tuple(notes))]


def read(current: Texts) -> Binding:
    ((settings_file, text),) = current.items()
    # of a big file only the keys read here are built
    settings = base.table(edit.load("json", text or "", path=str(settings_file.path), keep=("env", "apiKeyHelper")))
    variables = base.table(settings.get("env"))
    token = base.text(variables.get(TOKEN)) or base.text(variables.get(API_KEY))
    helper = base.text(settings.get("apiKeyHelper"))
    key = "helper command" if helper else None
    if token is not None:
        key = "placeholder" if token == PLACEHOLDER_KEY else "in file"
    limit = str(variables.get("CLAUDE_CODE_MAX_OUTPUT_TOKENS", ""))
    return Binding(
        base_url=base.text(variables.get("ANTHROPIC_BASE_URL")),
        model=base.text(variables.get("ANTHROPIC_MODEL")),
        key=key,
        key_value=token,
        helper=helper,
        output_tokens=int(limit) if limit.isdigit() else None,
        headers=custom_headers(variables.get(CUSTOM_HEADERS), f"env.{CUSTOM_HEADERS}"),
        # agentcfg's id: the `agentcfg key get NAME` it writes for a keyed profile (a keyless one leaves none)
        profile=helper_profile_name(helper),
    )


def launch(profile: Profile, args: tuple[str, ...], context: LaunchContext) -> Launch:
    """Claude Code's `--settings FILE` is the layer above the user's, project's and local settings (below
    only an admin's policy), merged variable by variable, and its `env` wins over the process's own. So the
    file sets every variable a lower layer could hold for another profile or provider: the token and the
    API key to "" (read as unset), every model slot, the bounds, the user's custom headers (they may carry
    another host's key) and the switches to Bedrock, Vertex and Foundry to "". The key comes from an
    apiKeyHelper (sent as both headers): `agentcfg key get`; for a trusted project's profile (which `key get`
    does not read) it prints a key file of this run (Launch.key_files), so the key is in no variable the
    model's commands inherit either way; a keyless profile's prints the placeholder. No approval prompt:
    Claude Code asks that of ANTHROPIC_API_KEY only."""
    base_url = (profile.anthropic_base_url or "").rstrip("/")
    variables = {
        "ANTHROPIC_BASE_URL": base_url,
        TOKEN: "",
        API_KEY: "",
        **dict.fromkeys(EVERY_MODEL_SLOT, profile.model),
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(budget.output_tokens(profile, TRAITS.prompt_tokens)),
        MAX_CONTEXT: str(profile.context_window) if profile.context_window else "",
        **dict.fromkeys((CUSTOM_HEADERS, *OTHER_PROVIDERS), ""),
    }
    if "--settings" in args or any(a.startswith("--settings=") for a in args):
        raise AgentcfgError(
            "claude is given --settings already: `agentcfg exec` passes its own (the profile's), and Claude Code "
            "reads only the last",
            hint="Put those settings in ~/.claude/settings.json or the project's .claude/settings.json, and run again.",
        )
    key_files = {}
    if profile.needs_key and context.helper:  # from the keyring, as a switch has it
        helper = helper_command(context.helper)
    elif profile.needs_key and context.key is not None:  # Claude Code runs it again every 5 minutes and on a 401
        key_name = base.run_name(f"claude-{profile.name}", context.run, ".key")
        key_files[key_name] = context.key
        helper = helper_command(("cat", str(context.runtime / key_name)))
    elif profile.needs_key and profile.key_env:  # no key given: the variable the caller sets
        helper = helper_command(("printenv", profile.key_env))
    else:
        helper = helper_command(("echo", PLACEHOLDER_KEY))
    settings = {"env": variables, "apiKeyHelper": helper, "model": profile.model}
    import json

    text = json.dumps(settings, indent=2) + "\n"
    if key_files:  # its settings name this run's key file: they go with it
        name = base.run_name(f"claude-{profile.name}", context.run)
        key_files[name] = text
        return Launch(("--settings", str(context.runtime / name), *args), key_files=key_files, key_in_env=False)
    name = base.runtime_name(f"claude-{profile.name}", text)
    fetches = bool(profile.needs_key and context.helper)
    return Launch(("--settings", str(context.runtime / name), *args), files={name: text}, key_in_env=not fetches)


foreign_format = no_foreign_format
key_references = no_key_references
kept_files = base.no_kept_files
profile_file_names = base.no_profile_file_names
profile_file_edit = base.no_profile_file_edit


# -- doctor ----------------------------------------------------------------------------------------------


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    from agentcfg.agents.claude import checks  # lazy: doctor's alone (switch and status load every agent module)

    return checks.check(parsed, environ, profiles, TRAITS.prompt_tokens)


unreadable = no_unreadable
key_helpers = binding_helpers


def configured(current: Texts, environ: env.Environ) -> bool:
    """Claude Code also takes its endpoint from the shell, or a login."""
    return (
        configured_by_files(current, environ)
        or bool(env.which(TRAITS.binary, environ))
        or bool(environ.get("ANTHROPIC_BASE_URL"))
    )


def locate(target: Target, binding: Binding, doctor: Doctoring) -> bool:
    from agentcfg.agents.claude import (
        doctor as claude_doctor,  # lazy: doctor's alone (switch and status load every agent module)
    )

    return claude_doctor.locate(target, binding, doctor)


def authorize(target: Target, binding: Binding, profile: Profile | None, doctor: Doctoring) -> None:
    from agentcfg.agents.claude import (
        doctor as claude_doctor,  # lazy: doctor's alone (switch and status load every agent module)
    )

    claude_doctor.authorize(target, binding, profile, doctor)


def told_window(profile: Profile) -> int | None:
    return None  # switch tells Claude Code no window


def reasoning_advice(router: str, thinking_off: str) -> str:
    return (
        f"{router}, or turn thinking off for tool turns: {thinking_off}, or Claude Code's thinking off "
        '(`"alwaysThinkingEnabled": false` in its settings)'
    )


# -- MCP servers: agents/claude/mcp.py (its Spec of the `mcpServers` dialect, agents/mcpservers.py) --


def mcp_files(environ: env.Environ) -> list[AgentFile]:
    """`~/.claude.json` (in `$CLAUDE_CONFIG_DIR`, trimmed as Claude Code trims it): its user-scope servers."""
    named = (environ.get("CLAUDE_CONFIG_DIR") or "").strip()
    return [AgentFile((Path(named).expanduser() if named else env.home(environ)) / ".claude.json", "json")]


mcp_read, mcp_edits = dialect.members(TRAITS.name)
