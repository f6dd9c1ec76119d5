"""Gemini CLI: `~/.gemini/.env` (the endpoint and model) and `~/.gemini/settings.json` (auth type, bounds, privacy).

Gemini CLI speaks the Gemini API only (`POST {GOOGLE_GEMINI_BASE_URL}/v1beta/models/MODEL:streamGenerateContent`,
the key in `x-goog-api-key`), which no vLLM serves: it runs on a route, whose LiteLLM router serves that API and
sends each request to the route's OpenAI legs. `GEMINI_CLI_HOME` moves `~/.gemini`. Its key is read from
GEMINI_API_KEY alone (the shell, else the one `.env` it loads): no file takes a reference to another variable, so
a switch writes no key and says how it gets there (docs/gemini.md, Sources).
"""

from __future__ import annotations

import json
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
    no_foreign_format,
    no_key_references,
    no_unreadable,
)
from agentcfg.edit import MISSING, REMOVE, Assignment
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import Profile

if TYPE_CHECKING:  # doctor's types: doctor.model loads only when doctor runs
    from agentcfg.doctor.model import Finding, Target

TRAITS = Traits(
    name="gemini",
    title="Gemini CLI",
    binary="gemini",
    prompt_tokens=10_000,  # 38.6 KB of JSON in its first request (0.61.0: system instruction and 8 tools)
    protocol="generate-content",
    probes=("gemini-stream",),
    default_output=0,  # it sends no maxOutputTokens unless a model config sets one
    bounds_output=True,
    window_setting="model.compressionThreshold in ~/.gemini/settings.json (a fraction of 1,048,576 tokens)",
    compacts_every_turn=False,
    replays_reasoning=False,
    expands=(fields.DOLLAR_TEMPLATE,),  # `$VAR`, `${VAR}` and `${VAR:-default}` in every string of settings.json
    reads_all_proxy=False,
    ignores_no_proxy=False,
    ca_variables=("NODE_EXTRA_CA_CERTS",),
    key_helper_since=None,
    key_helper_setting=None,
    proven=("0.61.0",),
    needs_key=True,  # "When using Gemini API, you must specify the GEMINI_API_KEY environment variable."
    key_variable="GEMINI_API_KEY",  # KEY: its only one (no file of its names another)
    reads_key_variable=False,  # so not the profile's: its switch note says how the key gets there
)
KEY = "GEMINI_API_KEY"
BASE_URL = "GOOGLE_GEMINI_BASE_URL"
MODEL = "GEMINI_MODEL"
AUTH = "gemini-api-key"  # security.auth.selectedType: the API key, sent as x-goog-api-key to GOOGLE_GEMINI_BASE_URL
# Gemini CLI compresses the history once its last prompt passes compressionThreshold x tokenLimit(model), and a
# model name it does not know has a limit of 1,048,576 tokens (0.61.0's tokenLimits.js).
TOKEN_LIMIT = 1_048_576
# The model configs (0.61.0's defaultModelConfigs) whose side calls name another model than the chat's: the
# classifier and helpers ("flash-lite"), web/loop/next-speaker checks (through gemini-3-flash-base), compression
# and summaries. A router serves the route's model only: each is pinned to it (modelConfigs.customAliases).
SIDE_CALLS = {
    "gemini-3-flash-base": "chat-base",
    "classifier": "base",
    "prompt-completion": "base",
    "fast-ack-helper": "base",
    "edit-corrector": "base",
    "summarizer-default": "base",
    "summarizer-shell": "base",
    "loop-detection-double-check": "base",
    "chat-compression-default": "base",
    "agent-history-provider-summarizer": "base",
}


# Old settings 0.61.0 rewrites into new ones when it loads a file (negated: chunk-2YTYPKEZ.js:16747).
RENAMED = {
    ("general", "disableAutoUpdate"): ("general", "enableAutoUpdate"),
    ("general", "disableUpdateNag"): ("general", "enableAutoUpdateNotification"),
}


def home(environ: env.Environ) -> Path:
    """GEMINI_CLI_HOME stands for the home directory, taken as it is (0.61.0's homedir(): no `~` expansion; a
    relative one is made absolute at the CLI's seam, env.AGENT_LOCATIONS)."""
    value = environ.get("GEMINI_CLI_HOME")
    return (Path(value) if value else env.home(environ)) / ".gemini"


def files(environ: env.Environ) -> list[AgentFile]:
    directory = home(environ)
    return [AgentFile(directory / ".env", "dotenv"), AgentFile(directory / "settings.json", "json")]


def unsupported(profile: Profile) -> str | None:
    if profile.route is None or not profile.anthropic_base_url:
        return (
            f"Gemini CLI speaks only the Gemini API, which profile {profile.name!r} does not serve: give it a route, "
            f"whose router serves that API (`agentcfg route add NAME --primary {profile.name} --fallback OTHER`, "
            "`agentcfg route serve NAME`, then `agentcfg switch NAME`)"
        )
    return None


def root(profile: Profile) -> str:
    """The router's host root: Gemini CLI adds /v1beta/models/... itself."""
    return (profile.anthropic_base_url or "").rstrip("/")


def threshold(profile: Profile) -> float:
    """compressionThreshold: it compresses before a prompt leaves less than the output bound of the window."""
    room = max(budget.window(profile) - budget.output_tokens(profile, TRAITS.prompt_tokens), TRAITS.prompt_tokens)
    return round(room / TOKEN_LIMIT, 9)


def settings_for(profile: Profile) -> dict:
    """What agentcfg sets in settings.json for `profile` (a switch writes its leaves; exec passes it whole)."""
    output = budget.output_tokens(profile, TRAITS.prompt_tokens)
    aliases: dict[str, object] = {
        profile.model: {
            "extends": "chat-base",
            "modelConfig": {"model": profile.model, "generateContentConfig": {"maxOutputTokens": output}},
        }
    }
    for alias, parent in SIDE_CALLS.items():
        aliases[alias] = {"extends": parent, "modelConfig": {"model": profile.model}}
    return {
        "security": {"auth": {"selectedType": AUTH}},
        "model": {"name": profile.model, "compressionThreshold": threshold(profile)},
        "modelConfigs": {"customAliases": aliases},
        # its vendor calls, off: usage statistics (Clearcut), telemetry, the update check and its notice
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    }


def key_note(profile: Profile) -> str:
    return (
        f"Gemini CLI reads its key from {KEY} only (no file of its takes a reference): start it with "
        f"`agentcfg exec {profile.name} -- gemini`, or set {KEY} to the route's key in its shell "
        f'(`export {KEY}="$(agentcfg key get {profile.name})"`).'
    )


def edits(profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]:
    dotenv_file, settings_file = current
    old_key = edit.get("dotenv", current[dotenv_file] or "", (KEY,), path=str(dotenv_file.path))
    notes: list[str] = []
    file_key: object = keys.literal if keys.literal else (MISSING if old_key is MISSING else REMOVE)
    if file_key is REMOVE:
        notes.append(
            f"{dotenv_file.path}: removed the plaintext {KEY}, which Gemini CLI would send to {root(profile)}; "
            "`agentcfg rollback` brings it back."
        )
    if not keys.literal and profile.needs_key:
        notes.append(key_note(profile))
    assignments: list[Assignment] = [((BASE_URL,), root(profile)), ((MODEL,), profile.model)]
    if file_key is not MISSING:
        assignments.append(((KEY,), file_key))
    # A user's update choice in its old form is theirs: Gemini CLI turns it into the new key itself (inverted, which
    # a rollback could not follow), so agentcfg leaves that key alone.
    settings_text = current[settings_file] or ""
    kept = {
        new
        for old, new in RENAMED.items()
        if edit.get("json", settings_text, old, path=str(settings_file.path)) is not MISSING
    }
    settings = [(key, value) for key, value in base.flatten(settings_for(profile)) if key not in kept]
    return [FileEdit(dotenv_file, assignments, tuple(notes)), FileEdit(settings_file, settings)]


def read(current: Texts) -> Binding:
    dotenv_file, settings_file = current
    values = edit.load("dotenv", current[dotenv_file] or "", path=str(dotenv_file.path))
    settings = base.table(edit.load("json", current[settings_file] or "", path=str(settings_file.path)))
    chosen = base.table(settings.get("model"))
    # GEMINI_MODEL (the shell's, else .env's) comes before model.name
    model = base.text(values.get(MODEL)) or base.text(chosen.get("name"))
    aliases = base.table(base.table(settings.get("modelConfigs")).get("customAliases"))
    ours = base.table(base.table(aliases.get(model or "")).get("modelConfig"))
    config = base.table(ours.get("generateContentConfig"))
    output = base.number(config.get("maxOutputTokens"))
    fraction = chosen.get("compressionThreshold")
    window = None
    if isinstance(fraction, (int, float)) and not isinstance(fraction, bool) and 0 < fraction < 1:
        window = round(fraction * TOKEN_LIMIT) + (output or 0)
    key = values.get(KEY)
    return Binding(
        base_url=base.text(values.get(BASE_URL)),
        model=model,
        key=f"in {dotenv_file.path.name}" if key else f"env {KEY}",
        key_env=KEY,
        key_value=key,
        output_tokens=output,
        context_window=window,
    )


def launch(profile: Profile, args: tuple[str, ...], context: LaunchContext) -> Launch:
    """Gemini CLI takes no settings file from a variable that a user's runtime file can be (its system settings
    must be root's: 0.61.0 skips any other, "Security Warning: Skipping system settings file"), so exec gives it a
    home of its own, GEMINI_CLI_HOME: a `.gemini/settings.json` in agentcfg's runtime directory, the user's settings
    with agentcfg's laid over them (never a key). Its trusted folders stay the user's (GEMINI_CLI_TRUSTED_FOLDERS_PATH);
    its history and other state of that run stay in that home. The endpoint and model go in its variables, which
    come before any .env (it loads a .env variable only where the process has none). The key goes in
    GEMINI_API_KEY, the one variable it reads a key from (Traits.key_variable), not the route's own."""
    (_, settings_file) = context.current
    user = base.table(edit.load("json", context.current[settings_file] or "", path=str(settings_file.path)))
    # Its shell tool passes its whole environment on to the model's commands unless redaction is on; on, it leaves
    # out what the blocked list names (GEMINI_API_KEY) and credential-like names and values (0.61.0's
    # sanitizeEnvironment): the key stays in its own process.
    redaction = {"security": {"environmentVariableRedaction": {"enabled": True, "blocked": [KEY]}}}
    text = json.dumps(_over(_over(user, settings_for(profile)), redaction), indent=2) + "\n"
    directory = base.runtime_name(f"gemini-{profile.name}", text, "")
    name = f"{directory}/.gemini/settings.json"
    variables = {
        "GEMINI_CLI_HOME": str(context.runtime / directory),
        "GEMINI_CLI_TRUSTED_FOLDERS_PATH": context.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        or str(home(context.environ) / "trustedFolders.json"),
        BASE_URL: root(profile),
        MODEL: profile.model,
    }
    notes = [f"Gemini CLI runs in a home of its own for this profile ({context.runtime / directory}): its history, "
             "and your ~/.gemini/GEMINI.md, extensions and commands, are not there"]  # fmt: skip
    if context.environ.get("GOOGLE_API_KEY"):
        notes.append("GOOGLE_API_KEY in this shell is left as it is; Gemini CLI sends GEMINI_API_KEY")
    return Launch(args, variables, files={name: text}, notes=tuple(notes))


def _over(lower: dict, upper: dict) -> dict:
    merged = dict(lower)
    for key, value in upper.items():
        below = lower.get(key)
        merged[key] = _over(below, value) if isinstance(value, dict) and isinstance(below, dict) else value
    return merged


foreign_format = no_foreign_format
key_references = no_key_references
kept_files = base.no_kept_files
profile_file_names = base.no_profile_file_names
profile_file_edit = base.no_profile_file_edit


# -- doctor ----------------------------------------------------------------------------------------------


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    from agentcfg.agents.gemini import checks  # lazy: doctor's alone (switch and status load every agent module)

    return checks.check(parsed, environ, profiles)


unreadable = no_unreadable
configured = configured_by_files
key_helpers = binding_helpers
authorize = authorize_by_files


def locate(target: Target, binding: Binding, doctor: Doctoring) -> bool:
    """Gemini CLI takes GOOGLE_GEMINI_BASE_URL from the shell, else from the one .env it loads: the first found
    walking up from the working directory (0.61.0's findEnvFile, in a trusted folder), which may be a project's."""
    if shell := doctor.environ.get(BASE_URL):
        target.base_url, target.endpoint_from = shell, f"{BASE_URL} in this shell"
        return True
    own = home(doctor.environ) / ".env"
    loaded = dotenv_file(doctor.cwd, own.parent.parent)
    if loaded is None or loaded == own:
        return True
    from agentcfg.doctor.model import WARN, Finding  # lazy: doctor's alone (switch and status load every agent module)

    try:
        values = edit.load("dotenv", loaded.read_text(encoding="utf-8"), path=str(loaded))
    except (OSError, UnicodeDecodeError, AgentcfgError):
        values = {}
    shown = env.display(loaded, doctor.environ)
    target.base_url, target.model = values.get(BASE_URL), values.get(MODEL) or target.model
    target.endpoint_from, target.endpoint_project = shown, loaded != own.parent.parent / ".env"  # not ~/.env
    if not target.base_url:
        target.endpoint_from = ""
    what = f"its {BASE_URL} is {target.base_url}" if target.base_url else f"it sets no {BASE_URL}"
    target.static.append(
        Finding(
            "gemini-dotenv-hidden",
            WARN,
            TRAITS.name,
            f"here Gemini CLI loads {shown}, not {env.display(own, doctor.environ)}, where a switch writes its "
            f"endpoint and model (it loads one .env, the first it finds walking up): {what}",
            shown,
            hint=f"run it as `agentcfg exec PROFILE -- gemini` here (its variables come first), or put {BASE_URL} "
            f"and {MODEL} in {shown} too",
        )
    )
    return True


def dotenv_file(cwd: Path, user_home: Path) -> Path | None:
    """The .env Gemini CLI loads in a trusted folder: walking up from `cwd`, `.gemini/.env`, then `.env`; at the
    top, `~/.gemini/.env`, then `~/.env` (0.61.0's findEnvFile)."""
    for directory in (cwd, *cwd.parents):
        for candidate in (directory / ".gemini" / ".env", directory / ".env"):
            if candidate.is_file():
                return candidate
    for candidate in (user_home / ".gemini" / ".env", user_home / ".env"):
        if candidate.is_file():
            return candidate
    return None


def told_window(profile: Profile) -> int | None:
    return budget.window(profile)


def reasoning_advice(router: str, thinking_off: str) -> str:
    return f"{router}, or turn thinking off for tool turns: {thinking_off}"


# -- MCP servers: agents/gemini/mcp.py (its Spec of the `mcpServers` dialect, agents/mcpservers.py) --


def mcp_files(environ: env.Environ) -> list[AgentFile]:
    """Its settings.json, of the files a switch edits."""
    return [f for f in files(environ) if f.format == "json"]


mcp_read, mcp_edits = dialect.members(TRAITS.name)
