"""Each agent's own rules for its files, checked offline: what the agent itself rejects when it loads
them, and settings that silently undercut what agentcfg wrote. Pure: the files' texts (and the profiles a
fix may name) in, Findings out; given no profiles, it reads the user's own, and only for a finding's fix.

Every rule names where it was read (the agent's source, file and release) and was checked against the
real programs the e2e tier runs (tests/e2e/test_agent_rules.py asks each agent): codex 0.171.0, opencode
1.18.33, qwen-code 0.15.10 and 0.24.4, Claude Code 2.1.197 and 2.1.332; where releases differ, the rule says so.

FAIL: the agent refuses to load the file, or never uses agentcfg's settings. WARN: part of its traffic
goes to another model or provider than the one agentcfg set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any, TypeGuard

from agentcfg import attribution, budget, edit, env, fixes
from agentcfg.agents import claude
from agentcfg.agents.base import AgentFile, Texts
from agentcfg.doctor.model import FAIL, WARN, Finding
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PROJECT, Profile

Parsed = list[tuple[AgentFile, Any]]  # each existing file of the agent and its data
Path_ = tuple[str, ...]

# TOML integers are 64-bit signed (toml.io v1.0.0, "Integer"); Codex's reader (the `toml` crate)
# refuses the whole file on a larger one: "invalid type: integer `…` as i128, expected any valid TOML
# value" [run, codex 0.171.0]. Python's TOML readers (and so agentcfg) read it without complaint.
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
U64_MAX = 2**64 - 1


def check(
    agent: str, current: Texts, environ: env.Environ, profiles: dict[str, Profile] | None = None
) -> list[Finding]:
    """What `agent` would say about its files `current` when it loads them (static findings).

    `profiles` are the ones a fix may name (`agentcfg switch NAME`); None: the user's own, read here.
    """
    rule = RULES.get(agent)
    if rule is None:
        return []
    try:
        parsed = [(f, edit.load(f.format, text, path=str(f.path))) for f, text in current.items() if text is not None]
    except AgentcfgError:
        return []  # a file that does not parse: collect reports it (config-unreadable)
    found = rule(parsed, environ, profiles if profiles is not None else {})
    if found and profiles is None:  # only a finding's fix names a profile: read them only then
        found = rule(parsed, environ, _own_profiles(environ))
    findings: list[Finding] = []
    for finding in found:
        if finding not in findings:
            findings.append(finding)
    return findings


def _own_profiles(environ: env.Environ) -> dict[str, Profile]:
    from agentcfg import profiles

    try:
        return profiles.load_own(environ)
    except (AgentcfgError, OSError):
        return {}  # a broken profile is reported elsewhere; the findings then come without a fix


# -- shared helpers -------------------------------------------------------------------------------------


def _walk(value: Any) -> Iterator[tuple[Path_, Any]]:
    """Every value in nested tables and lists, with its key path (list items by their index)."""
    stack: list[tuple[Path_, Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        yield path, item
        if isinstance(item, dict):
            stack.extend(((*path, str(k)), v) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend(((*path, str(i)), v) for i, v in reversed(list(enumerate(item))))


def _dotted(path: Path_) -> str:
    return ".".join(path)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    """What a value is, in words (for 'X is a number, it must be a string')."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null"


def _shown(value: Any) -> str:
    """A value for evidence: numbers and true/false as they are, anything else by its kind only
    (a string may be a key)."""
    if _is_number(value) or isinstance(value, bool):
        return str(value).lower() if isinstance(value, bool) else str(value)
    return _kind(value)


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _profile_of(provider_id: object, profiles: dict[str, Profile]) -> Profile | None:
    """The profile behind a switch's provider id `agentcfg-NAME` (codex, opencode), whose fix a switch is. Only a
    switch's: a switch rewrites that table and no other (a profile file's `agentcfg_profile-NAME` copied into
    config.toml stays as it is)."""
    name = attribution.profile_from_switch_id(provider_id)
    return profiles.get(name) if name else None


def _matching(base_url: object, model: object, profiles: dict[str, Profile]) -> Profile | None:
    """The profile an agent's endpoint and model come from (as collect matches them)."""
    if not isinstance(base_url, str) or not isinstance(model, str):
        return None
    norm = base_url.rstrip("/")
    for profile in profiles.values():
        urls = {profile.base_url.rstrip("/"), (profile.anthropic_base_url or "").rstrip("/")}
        if norm in urls and model == profile.model:
            return profile
    return None


# -- Codex ----------------------------------------------------------------------------------------------
# Read from openai/codex codex-rs/config/src/config_toml.rs (ConfigToml: the type of each top-level key;
# validate_model_providers / validate_reserved_model_provider_ids) and
# codex-rs/model-provider-info/src/lib.rs (ModelProviderInfo: `name` defaults to "" and must not be
# empty; `auth` excludes env_key and experimental_bearer_token), main of 2026-11; every message below
# is what codex 0.171.0 prints [run]. Keys it does not know are ignored (serde without
# deny_unknown_fields; `schemars(deny_unknown_fields)` only shapes the published JSON schema) [run].

CODEX_STRINGS = ("model", "review_model", "model_provider", "profile")
CODEX_I64 = ("model_context_window", "model_auto_compact_token_limit")
PROVIDER_STRINGS = ("name", "base_url", "env_key", "env_key_instructions", "experimental_bearer_token")
PROVIDER_U64 = ("request_max_retries", "stream_max_retries", "stream_idle_timeout_ms", "websocket_connect_timeout_ms")
PROVIDER_BOOLS = ("requires_openai_auth", "supports_websockets")
PROVIDER_TABLES = ("query_params", "http_headers", "env_http_headers")
# Built-in ids a [model_providers.X] table may not reuse: "model_providers contains reserved built-in
# provider IDs: `openai`. Built-in providers cannot be overridden." (`oss` is accepted) [run, 0.171.0].
CODEX_RESERVED = ("openai", "ollama", "lmstudio")
# amazon-bedrock is built in too; 0.171.0 lets a table change only these of it [run].
BEDROCK_ALLOWED = {"base_url", "auth", "http_headers", "aws"}
CODEX_BUILT_IN = {"openai", "ollama", "lmstudio", "oss", "amazon-bedrock"}
# What `agentcfg switch` writes into config.toml (agents/codex.py edits): a fix by switch covers these.
CODEX_SWITCHED = {"model", "model_provider", "model_context_window"}
CODEX_SWITCHED_PROVIDER = {"name", "base_url", "wire_api", "env_key", "experimental_bearer_token", "auth"}


def _codex(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    if not parsed:
        return []
    ((config, data),) = parsed
    if not isinstance(data, dict):
        return []
    where = env.display(config.path, environ)
    ours = _profile_of(data.get("model_provider"), profiles)
    findings: list[Finding] = []

    def rejected(summary: str, evidence: str, path: Path_ = (), hint: str = "") -> None:
        switched = (len(path) == 1 and path[0] in CODEX_SWITCHED) or (
            len(path) >= 3
            and path[0] == "model_providers"
            and path[1] == data.get("model_provider")
            and path[2] in CODEX_SWITCHED_PROVIDER
        )
        fix = fixes.switch(ours.name, "codex") if ours and switched else ""
        findings.append(
            Finding(
                "codex-config-rejected",
                FAIL,
                "codex",
                f"Codex refuses to load {where}: {summary}",
                evidence,
                fix,
                hint or (f"fix {_dotted(path)} in {where}" if path else ""),
            )
        )

    # 1. Integers TOML cannot hold, anywhere in the file (Codex stops before it reads any key).
    for path, value in _walk(data):
        if _is_int(value) and not I64_MIN <= value <= I64_MAX:
            rejected(
                f"{_dotted(path)} is a number too large for a TOML integer (at most {I64_MAX})",
                f"{_dotted(path)} = {value}",
                path,
                f"set {_dotted(path)} in {where} to a number of at most {I64_MAX} (or remove it)",
            )
    if findings:
        return findings  # nothing else is read; the other rules would only guess

    # 2. The types of the top-level keys agentcfg cares about (ConfigToml).
    for key in CODEX_STRINGS:
        if key in data and not isinstance(data[key], str):
            rejected(f"{key} is {_kind(data[key])}, it must be a string", f"{key} = {_shown(data[key])}", (key,))
    for key in CODEX_I64:
        if key in data and not _is_int(data[key]):
            rejected(f"{key} is {_kind(data[key])}, it must be a whole number", f"{key} = {_shown(data[key])}", (key,))

    # 3. `profile = "x"`: "legacy `profile = "x"` config is no longer supported; use `--profile x` with
    # `x.config.toml` instead" (codex-rs/core/src/config/mod.rs; a hard error since 0.134 [agents.md]).
    legacy = data.get("profile")
    if isinstance(legacy, str):
        rejected(
            f'the legacy profile = "{legacy}" is no longer supported',
            f'profile = "{legacy}"',
            hint=f"remove the profile line from {where}; Codex now reads a profile from "
            f"~/.codex/{legacy}.config.toml when started as `codex --profile {legacy}`",
        )

    # 4. The provider tables.
    providers = data.get("model_providers")
    if "model_providers" in data and not isinstance(providers, dict):
        rejected(f"model_providers is {_kind(providers)}, it must be a table", "", ("model_providers",))
        providers = {}
    providers = providers if isinstance(providers, dict) else {}
    for pid in sorted(set(providers) & set(CODEX_RESERVED)):
        rejected(
            f"[model_providers.{pid}] reuses the id of a built-in provider, which cannot be overridden",
            f"[model_providers.{pid}]",
            hint=f"rename [model_providers.{pid}] in {where} (and model_provider with it), e.g. to {pid}-custom",
        )
    for pid, table in providers.items():
        _codex_provider(str(pid), table, rejected)
    selected = data.get("model_provider")
    if selected == "ollama-chat":  # OLLAMA_CHAT_PROVIDER_REMOVED_ERROR (model-provider-info/src/lib.rs) [run]
        rejected(
            'model_provider = "ollama-chat" is no longer supported',
            'model_provider = "ollama-chat"',
            hint=f'set model_provider = "ollama" in {where}',
        )
    elif isinstance(selected, str) and selected not in providers and selected not in CODEX_BUILT_IN:
        rejected(
            f'model_provider = "{selected}" names no [model_providers.{selected}] table',
            f'model_provider = "{selected}"',
            hint=f"add [model_providers.{selected}] to {where} or set model_provider to one that is there",
        )
    if findings:
        return findings

    # 5. Loads, but part of the work goes elsewhere.
    findings += _codex_undercut(data, where, ours)
    return findings


def _codex_provider(pid: str, table: Any, rejected: Callable[..., None]) -> None:
    base = ("model_providers", pid)
    if not isinstance(table, dict):
        rejected(f"model_providers.{pid} is {_kind(table)}, it must be a table", "", base)
        return
    if pid == "amazon-bedrock":
        extra = sorted(set(table) - BEDROCK_ALLOWED)
        if extra:
            rejected(
                f"[model_providers.amazon-bedrock] may only change {', '.join(sorted(BEDROCK_ALLOWED))}",
                "keys " + ", ".join(extra),
                hint=f"remove {', '.join(extra)} from [model_providers.amazon-bedrock], or give your provider its "
                "own id",
            )
        return
    for key in PROVIDER_STRINGS:
        if key in table and not isinstance(table[key], str):
            shown = _shown(table[key]) if key != "experimental_bearer_token" else _kind(table[key])
            rejected(
                f"model_providers.{pid}.{key} is {_kind(table[key])}, it must be a string",
                f"model_providers.{pid}.{key} = {shown}",
                (*base, key),
            )
    name = table.get("name", "")
    if pid not in CODEX_RESERVED and isinstance(name, str) and not name.strip():
        rejected(
            f"[model_providers.{pid}] has no name (model_providers.{pid}: provider name must not be empty)",
            f"model_providers.{pid}.name = {name!r}" if "name" in table else f"model_providers.{pid}: no name",
            (*base, "name"),
            f'add name = "{pid}" to [model_providers.{pid}]',
        )
    for key in PROVIDER_U64:
        value = table.get(key)
        if key in table and not (_is_int(value) and 0 <= value <= U64_MAX):
            rejected(
                f"model_providers.{pid}.{key} is {_shown(value)}, it must be a whole number of 0 or more",
                f"model_providers.{pid}.{key} = {_shown(value)}",
                (*base, key),
            )
    for key in PROVIDER_BOOLS:
        if key in table and not isinstance(table[key], bool):
            rejected(
                f"model_providers.{pid}.{key} is {_kind(table[key])}, it must be true or false",
                f"model_providers.{pid}.{key} = {_shown(table[key])}",
                (*base, key),
            )
    for key in PROVIDER_TABLES:
        value = table.get(key)
        if key in table and not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
            rejected(
                f"model_providers.{pid}.{key} must be a table of strings",
                f"model_providers.{pid}.{key}: {_kind(value)}",
                (*base, key),
            )
    auth = table.get("auth")
    if "auth" in table:
        if not isinstance(auth, dict) or not isinstance(auth.get("command"), str) or not auth["command"].strip():
            rejected(
                f"[model_providers.{pid}.auth] has no command (missing field `command`)",
                f"model_providers.{pid}.auth: " + (_kind(auth) if not isinstance(auth, dict) else "no command"),
                (*base, "auth"),
            )
        else:
            both = [k for k in ("env_key", "experimental_bearer_token", "requires_openai_auth") if table.get(k)]
            if both:
                rejected(
                    f"model_providers.{pid}: provider auth cannot be combined with {', '.join(both)}",
                    f"model_providers.{pid}: auth and {', '.join(both)}",
                    (*base, "auth"),
                    f"keep one of auth and {', '.join(both)} in [model_providers.{pid}]",
                )


def _codex_undercut(data: dict[str, Any], where: str, ours: Profile | None) -> list[Finding]:
    findings = []
    model, review = data.get("model"), data.get("review_model")
    provider = data.get("model_provider")
    # review_model: "Review model override used by the `/review` feature" (ConfigToml), sent to the same
    # provider as everything else. With agentcfg's provider selected, one left from an earlier setup
    # makes every /review ask agentcfg's server for a model it may not have.
    if (
        isinstance(provider, str)
        and provider.startswith(attribution.ID_PREFIX)
        and isinstance(review, str)
        and isinstance(model, str)
        and review != model
    ):
        findings.append(
            Finding(
                "codex-model-slot",
                WARN,
                "codex",
                f"Codex's /review asks for model {review} (review_model in {where}), not {model}: "
                f"the server of {provider} may not have it",
                f'review_model = "{review}"; model = "{model}"; model_provider = "{provider}"',
                "",
                f"remove review_model from {where} (Codex then reviews with {model}), or set it to a model "
                "that server has",
            )
        )
    # [profiles.x] tables: inert without --profile, and `codex --profile x` then refuses to start:
    # "--profile `x` cannot be used while …config.toml contains legacy `profile = "x"` or `[profiles.x]`
    # config" (codex-rs/config/src/loader/mod.rs) [run, 0.171.0].
    tables = data.get("profiles")
    if isinstance(tables, dict) and tables and "profile" not in data:
        names = sorted(map(str, tables))
        findings.append(
            Finding(
                "codex-legacy-profiles",
                WARN,
                "codex",
                f"{where} has legacy [profiles.{names[0]}] tables: Codex ignores them, and "
                f"`codex --profile {names[0]}` refuses to start while they are there",
                ", ".join(f"[profiles.{n}]" for n in names),
                "",
                f"move each [profiles.TRAITS.name] table of {where} into ~/.codex/NAME.config.toml (without the "
                "[profiles.TRAITS.name] header) and remove it",
            )
        )
    return findings


# -- opencode -------------------------------------------------------------------------------------------
# Read from anomalyco/opencode packages/opencode/src/config/config.ts (the zod schema Config.Info:
# model and small_model strings; enabled_providers / disabled_providers arrays of strings;
# provider.X.options.baseURL and apiKey strings; a model's `limit` an object of `context` and
# `output`, both required numbers) and packages/opencode/src/provider/provider.ts (a provider left out
# of enabled_providers, or in disabled_providers, is dropped; "When set, ONLY these providers will be
# enabled. All other providers will be ignored"). opencode 1.18.33 refuses a file that breaks the
# schema: "Configuration is invalid at <file>" / "↳ Missing key provider.X.models.M.limit.output"
# [run]; unknown keys are accepted [run].

OPENCODE_SWITCHED_MODEL = {"name", "tool_call", "limit"}  # what agents/opencode.py writes per model


def _opencode(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    if not parsed:
        return []
    ((config, data),) = parsed
    if not isinstance(data, dict):
        return []
    where = env.display(config.path, environ)
    model = data.get("model")
    provider_id, model_id = model.split("/", 1) if isinstance(model, str) and "/" in model else (None, None)
    ours = _profile_of(provider_id, profiles)
    findings: list[Finding] = []

    def rejected(summary: str, evidence: str, path: Path_, switched: bool = False) -> None:
        findings.append(
            Finding(
                "opencode-config-rejected",
                FAIL,
                "opencode",
                f"opencode refuses to load {where}: {summary}",
                evidence,
                fixes.switch(ours.name, "opencode") if ours and switched else "",
                f"fix {_dotted(path)} in {where}",
            )
        )

    for key in ("model", "small_model"):
        if key in data and not isinstance(data[key], str):
            rejected(f"{key} is {_kind(data[key])}, it must be a string", f"{key}: {_shown(data[key])}", (key,), True)
    for key in ("enabled_providers", "disabled_providers"):
        value = data.get(key)
        if key in data and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            rejected(f"{key} must be a list of provider names", f"{key}: {_kind(value)}", (key,))
    providers = data.get("provider")
    if "provider" in data and not isinstance(providers, dict):
        rejected(f"provider is {_kind(providers)}, it must be an object", "", ("provider",))
    for pid, entry in (providers if isinstance(providers, dict) else {}).items():
        base = ("provider", str(pid))
        mine = pid == provider_id  # switch rewrites the selected provider's entry
        if not isinstance(entry, dict):
            rejected(f"provider.{pid} is {_kind(entry)}, it must be an object", "", base, mine)
            continue
        options = entry.get("options")
        if "options" in entry and not isinstance(options, dict):
            rejected(f"provider.{pid}.options is {_kind(options)}, it must be an object", "", (*base, "options"))
        for key in ("baseURL", "apiKey"):
            value = options.get(key) if isinstance(options, dict) else None
            if isinstance(options, dict) and key in options and not isinstance(value, str):
                rejected(
                    f"provider.{pid}.options.{key} is {_kind(value)}, it must be a string",
                    f"provider.{pid}.options.{key}: {_shown(value) if key == 'baseURL' else _kind(value)}",
                    (*base, "options", key),
                    mine,
                )
        models = entry.get("models")
        if "models" in entry and not isinstance(models, dict):
            rejected(f"provider.{pid}.models is {_kind(models)}, it must be an object", "", (*base, "models"))
            continue
        for mid, spec in (models if isinstance(models, dict) else {}).items():
            path = (*base, "models", str(mid))
            switched = mine and mid == model_id
            if not isinstance(spec, dict):
                rejected(f"{_dotted(path)} is {_kind(spec)}, it must be an object", "", path, switched)
                continue
            if "limit" not in spec:
                continue
            limit = spec["limit"]
            if not isinstance(limit, dict):
                rejected(
                    f"{_dotted(path)}.limit is {_kind(limit)}, it must be an object", "", (*path, "limit"), switched
                )
                continue
            missing = [k for k in ("context", "output") if k not in limit]
            wrong = [k for k in ("context", "output") if k in limit and not _is_number(limit[k])]
            if missing:
                rejected(
                    f"{_dotted(path)}.limit has no {' and no '.join(missing)} (opencode needs both)",
                    f"{_dotted(path)}.limit: " + ", ".join(f"{k}={_shown(v)}" for k, v in limit.items()) or "{}",
                    (*path, "limit"),
                    switched,
                )
            for key in wrong:
                rejected(
                    f"{_dotted(path)}.limit.{key} is {_kind(limit[key])}, it must be a number",
                    f"{_dotted(path)}.limit.{key}: {_kind(limit[key])}",
                    (*path, "limit", key),
                    switched,
                )
    if findings:
        return findings
    return _opencode_unused(data, where, provider_id, model_id, ours) or _opencode_small_model(data, where, provider_id)


def _opencode_small_model(data: dict[str, Any], where: str, provider_id: str | None) -> list[Finding]:
    """small_model ("Small model to use for tasks like title generation", config.ts) is asked first in
    every `opencode run`, with the user's first message [run, 1.18.33: a request for small_model, then one
    for model]. Left from an earlier setup while model is agentcfg's, that request goes elsewhere."""
    model, small = data.get("model"), data.get("small_model")
    if not (provider_id or "").startswith(attribution.ID_PREFIX) or not isinstance(small, str) or small == model:
        return []
    elsewhere = small.split("/", 1)[0] if "/" in small else provider_id
    to = f"provider {elsewhere}" if elsewhere != provider_id else f"the server of {provider_id}, which may not have it"
    return [
        Finding(
            "opencode-model-slot",
            WARN,
            "opencode",
            f"opencode asks {small} (small_model in {where}) for its session titles, with your first message, "
            f"not {model}: that request goes to {to}",
            f"small_model: {small}; model: {model}",
            "",
            f"remove small_model from {where} (opencode then titles with {model}), or set it to a model of "
            f"{provider_id}",
        )
    ]


def _opencode_unused(
    data: dict[str, Any], where: str, provider_id: str | None, model_id: str | None, ours: Profile | None
) -> list[Finding]:
    """The file loads, but opencode drops the provider its model names (so that model is never used)."""
    if provider_id is None:
        return []
    enabled, disabled = data.get("enabled_providers"), data.get("disabled_providers")
    if isinstance(disabled, list) and provider_id in disabled:
        return [
            Finding(
                "opencode-provider-disabled",
                FAIL,
                "opencode",
                f"opencode ignores provider {provider_id}, which model names: disabled_providers in {where} lists it",
                f"model: {data['model']}; disabled_providers: {', '.join(map(str, disabled))}",
                "",
                f'remove "{provider_id}" from disabled_providers in {where}',
            )
        ]
    if isinstance(enabled, list) and provider_id not in enabled:
        return [
            Finding(
                "opencode-provider-disabled",
                FAIL,
                "opencode",
                f"opencode ignores provider {provider_id}, which model names: enabled_providers in {where} "
                "leaves it out (opencode then uses only the providers listed there)",
                f"model: {data['model']}; enabled_providers: {', '.join(map(str, enabled)) or '(none)'}",
                "",
                f'add "{provider_id}" to enabled_providers in {where}',
            )
        ]
    # agentcfg's provider ids are its own (`agentcfg-NAME`), in no catalogue opencode has: the entry
    # must be in the file, with the model in it, or `opencode run` fails ("Unexpected server error")
    # [run, 1.18.33]. Other ids may be opencode's built-in providers, which doctor cannot list offline.
    if not provider_id.startswith(attribution.ID_PREFIX):
        return []
    providers = found if isinstance(found := data.get("provider"), dict) else {}
    entry = providers.get(provider_id)
    models = entry.get("models") if isinstance(entry, dict) else None
    if isinstance(entry, dict) and isinstance(models, dict) and model_id in models:
        return []
    missing = (
        f"provider {provider_id}" if not isinstance(entry, dict) else f"model {model_id} in provider {provider_id}"
    )
    return [
        Finding(
            "opencode-model-undefined",
            FAIL,
            "opencode",
            f"model in {where} names {missing}, which the file does not define: opencode cannot run it",
            f"model: {data['model']}",
            fixes.switch(ours.name, "opencode") if ours else "",
            "" if ours else f"set model in {where} to a provider/model the file defines",
        )
    ]


# -- qwen-code ------------------------------------------------------------------------------------------
# Read from QwenLM/qwen-code packages/cli/src/config/settingsSchema.ts (security.auth.selectedType,
# the AuthType enum of packages/core: "openai", "qwen-oauth", "gemini", "vertex-ai", "anthropic";
# modelProviders: {authType: [{id, name, baseUrl, envKey, ...}]}) and settings.ts (the old top-level
# selectedAuthType moves to security.auth.selectedType when it loads the file). qwen 0.15.10 checks
# few types: a wrong one is mostly ignored, some crash it [run]. What it does with each value here:
QWEN_AUTH_TYPES = {"openai", "qwen-oauth", "gemini", "vertex-ai", "anthropic"}


def _qwen(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    settings = next(((f, d) for f, d in parsed if f.format == "json"), None)
    if settings is None or not isinstance(settings[1], dict):
        return []
    file, data = settings
    where = env.display(file.path, environ)
    profile = _qwen_profile(parsed, profiles)
    findings: list[Finding] = []
    switch = fixes.switch(profile.name, "qwen") if profile else ""
    via_switch = (
        "" if profile else 'run `agentcfg switch` with your profile and --agent qwen (it sets it to "openai"), or '
    )

    key, selected = "security.auth.selectedType", _get(data, "security", "auth", "selectedType")
    if selected is None and "selectedAuthType" in data:
        key, selected = "selectedAuthType", data["selectedAuthType"]
    providers = data.get("modelProviders")
    entries = _get(providers, "openai")
    ours = isinstance(entries, list) and any(
        isinstance(e, dict) and str(e.get("name", "")).startswith("agentcfg:") for e in entries
    )
    if selected == "qwen-oauth":
        # "Qwen OAuth free tier was discontinued on 2026-04-15. Run /auth to switch to Coding Plan,
        # OpenRouter, Fireworks AI, or another provider." rc 1, with OPENAI_* in ~/.qwen/.env too [run].
        findings.append(
            Finding(
                "qwen-oauth-selected",
                FAIL,
                "qwen",
                f'qwen-code signs in with Qwen OAuth ({key} = "qwen-oauth" in {where}), a service that ended '
                "on 2026-04-15: it refuses to run and never uses the OpenAI-compatible settings",
                f'{key} = "qwen-oauth"',
                switch,
                "" if switch else f'{via_switch}set {key} to "openai" in {where}',
            )
        )
    elif selected is not None and selected not in QWEN_AUTH_TYPES:
        # An unknown value crashes it: "TypeError: Cannot read properties of undefined (reading 'model')"
        # in resolveModelConfig, rc 1 [run].
        shown = f'"{selected}"' if isinstance(selected, str) else _shown(selected)
        findings.append(
            Finding(
                "qwen-auth-type",
                FAIL,
                "qwen",
                f"qwen-code stops with an error at start: {key} in {where} is {shown}, not an auth type it knows "
                f"({', '.join(sorted(QWEN_AUTH_TYPES))})",
                f"{key} = {shown}",
                switch,
                "" if switch else f'{via_switch}set {key} to "openai" in {where}',
            )
        )
    elif isinstance(selected, str) and selected != "openai" and ours:
        findings.append(
            Finding(
                "qwen-auth-type",
                FAIL,
                "qwen",
                f'qwen-code uses its "{selected}" sign-in ({key} in {where}), so it never uses the '
                "OpenAI-compatible provider agentcfg added there",
                f'{key} = "{selected}"',
                switch,
                "" if switch else f'{via_switch}set {key} to "openai" in {where}',
            )
        )
    # modelProviders: each auth type's list of {id, ...}. An entry without an id stops 0.15.10 and
    # 0.24.4: "An unexpected critical error occurred: Error: Model config in authType 'openai' missing
    # required field: id" [run]. A value that is not a list stops 0.15.10 ("... missing required field:
    # id" for a string, "TypeError: models is not iterable" for a number or an object); 0.24.4 drops it
    # and loads the rest, except an object, which it takes for the v5 {protocol, models} layout and
    # rewrites as its `models` list (V5ToV4Migration) [run, both releases].
    if isinstance(providers, dict):
        for auth, listed in providers.items():
            if not isinstance(listed, list):
                what = f"modelProviders.{auth}"
                findings.append(
                    Finding(
                        "qwen-config-rejected",
                        FAIL,
                        "qwen",
                        f"{what} in {where} is {_kind(listed)}, not a list of entries: qwen-code 0.15 stops "
                        "with an error at start; 0.24 ignores it, except an object in the settings v5 layout "
                        '({"protocol", "models"}), which it rewrites as its "models" list',
                        f"{what}: {_kind(listed)}",
                        "",
                        f'make {what} in {where} a list of entries, each with an "id"',
                    )
                )
                break
            bad = [i for i, e in enumerate(listed) if not (isinstance(e, dict) and isinstance(e.get("id"), str))]
            if bad:
                what = f"modelProviders.{auth}[{bad[0]}]"
                findings.append(
                    Finding(
                        "qwen-config-rejected",
                        FAIL,
                        "qwen",
                        f"qwen-code stops with an error at start: {what} in {where} has no model id "
                        f'(modelProviders.{auth} must be a list of entries, each with an "id")',
                        f"{what}: {_kind(listed[bad[0]])}",
                        "",
                        f"fix {what} in {where}",
                    )
                )
                break
    return findings


def _qwen_profile(parsed: Parsed, profiles: dict[str, Profile]) -> Profile | None:
    """The profile qwen's endpoint and model come from (as agents/qwen.py read() finds them)."""
    values = next((d for f, d in parsed if f.format == "dotenv"), None) or {}
    settings = next((d for f, d in parsed if f.format == "json"), None) or {}
    model = _get(settings, "model", "name") or values.get("OPENAI_MODEL")
    entries = _get(settings, "modelProviders", "openai")
    matching = [e for e in entries if isinstance(e, dict) and e.get("id") == model] if isinstance(entries, list) else []
    base_url = (matching[0].get("baseUrl") if matching else None) or values.get("OPENAI_BASE_URL")
    return _matching(base_url, model, profiles)


# -- Claude Code ----------------------------------------------------------------------------------------
# Settings schema: Claude Code 2.1.197 validates settings.json and, when it fails, ignores the WHOLE file
# (its env block too) - `claude -p` silently ("Settings files that fail validation are silently ignored
# in this mode", `claude --help`), `claude doctor` shows "Invalid settings ✘ <file> └ model: Expected
# string, but received number" [run]. 2.1.332 still ignores it whole; its `claude doctor` prints
# "⚠ Invalid settings" / "- <file> › model: Expected string, but received number" [run]. Checked here:
# the types of the keys agentcfg reads or writes. Unknown keys are accepted [run].
CLAUDE_STRINGS = ("model", "apiKeyHelper")
CLAUDE_RULE_LISTS = ("allow", "deny", "ask")
# Model slots: the variables Claude Code 2.1.197 reads for a model besides ANTHROPIC_MODEL (in its
# binary: `if(process.env.ANTHROPIC_SMALL_FAST_MODEL)return …` comes before ANTHROPIC_DEFAULT_HAIKU_MODEL
# for its background requests; CLAUDE_CODE_SUBAGENT_MODEL, unless "inherit", for every subagent;
# ANTHROPIC_DEFAULT_FABLE_MODEL for the "fable" alias). agentcfg writes ANTHROPIC_MODEL and the
# OPUS/SONNET/HAIKU slots (agents/claude.py MODEL_SLOTS); ANTHROPIC_REASONING_MODEL is read by no
# current version (not in the 2.1.197 binary), so it is not a slot. 2.1.332 reads these slots, in the
# same order, through an environment object (`let e=s.ANTHROPIC_SMALL_FAST_MODEL;if(e!==void 0)return …`),
# and adds CLAUDE_CODE_WORKFLOW_SUBAGENT_MODEL (workflow subagents; "inherit" or unset: none), not checked yet.
CLAUDE_SLOTS = (
    "ANTHROPIC_SMALL_FAST_MODEL",
    "CLAUDE_CODE_SUBAGENT_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "ANTHROPIC_DEFAULT_FABLE_MODEL",
)
ANTHROPIC_ALIASES = ("opus", "sonnet", "haiku", "fable", "opusplan", "default", "best")


def _anthropic_model(value: str) -> bool:
    """A model only Anthropic's own API serves: a claude-* id or one of Claude Code's aliases."""
    name = value.strip().lower().split("[", 1)[0]
    return name.startswith(("claude-", "anthropic/claude")) or name in ANTHROPIC_ALIASES


def _claude(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    if not parsed:
        return []
    ((file, data),) = parsed
    if not isinstance(data, dict):
        return []
    where = env.display(file.path, environ)
    problems = []
    if "env" in data and not isinstance(data["env"], dict):
        problems.append(f"env is {_kind(data['env'])}, it must be an object")
    for key in CLAUDE_STRINGS:
        if key in data and not isinstance(data[key], str):
            problems.append(f"{key} is {_kind(data[key])}, it must be a string")
    permissions: Any = data.get("permissions")  # JSON: checked below
    if "permissions" in data and not isinstance(permissions, dict):
        problems.append(f"permissions is {_kind(permissions)}, it must be an object")
    for key in CLAUDE_RULE_LISTS if isinstance(permissions, dict) else ():
        value = permissions.get(key)
        if key in permissions and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            problems.append(f"permissions.{key} must be a list of strings")
    if problems:
        return [
            Finding(
                "claude-settings-invalid",
                FAIL,
                "claude",
                f"Claude Code ignores all of {where}, its env block too: {problems[0]}",
                "; ".join(problems),
                "",
                f"fix it in {where}; `claude doctor` lists every setting it rejects",
            )
        ]
    return _claude_slots(data, where, environ) + _claude_output(data, where, environ, profiles)


def _claude_output(
    data: dict[str, Any], where: str, environ: env.Environ, profiles: dict[str, Profile]
) -> list[Finding]:
    """CLAUDE_CODE_MAX_OUTPUT_TOKENS below what Claude Code plans with (budget.MIN_OUTPUT): it sends that as
    max_tokens, so replies are cut mid-answer ("Claude's response exceeded the 384 output token maximum").
    Claude Code reads the settings' env block over the shell's variable, and takes a value that is not a
    positive number as unset, its default 32,000 [the 2.1.332 binary; tests/e2e/test_output_bound.py sees
    the value sent as max_tokens]."""
    block = found if isinstance(found := data.get("env"), dict) else {}
    variable = "CLAUDE_CODE_MAX_OUTPUT_TOKENS"
    origin = where if variable in block else "this shell"
    value = str(block.get(variable, environ.get(variable, "")))
    if not (value.isascii() and value.isdigit()) or not 0 < int(value) < budget.MIN_OUTPUT:
        return []
    profile = _matching(block.get("ANTHROPIC_BASE_URL"), block.get("ANTHROPIC_MODEL"), profiles)
    if origin == where:
        hint = f"remove {variable} from the env block of {where}, or set it to {budget.MIN_OUTPUT} or more"
    else:
        hint = f"unset {variable} in your shell, or set it to {budget.MIN_OUTPUT} or more"
    fix, hint = _claude_output_advice(profile) if profile is not None else ("", hint)
    return [
        Finding(
            "claude-output-too-small",
            WARN,
            "claude",
            f"Claude Code may answer with at most {int(value):,} tokens ({variable}), below the "
            f"{budget.MIN_OUTPUT:,} it plans with: replies that write a file or think are cut off",
            f"{variable}={value} ({origin})",
            fix,
            hint,
        )
    ]


def _claude_output_advice(profile: Profile) -> tuple[str, str]:
    """(fix, hint) for Claude Code's output bound under `profile`: a switch where it now writes enough (a
    file from an older agentcfg), else the profile's max_output_tokens raised, else a larger server window."""
    need = budget.MIN_OUTPUT
    if budget.output_tokens(profile, claude.TRAITS.prompt_tokens) >= need:
        return fixes.switch(profile.name, "claude"), ""
    raised = replace(profile, max_output_tokens=max(profile.max_output_tokens or 0, need))
    if budget.output_tokens(raised, claude.TRAITS.prompt_tokens) >= need:
        if profile.source.startswith(PROJECT):  # `profile set` refuses a project's profile: its file is the project's
            return "", f"the project's profile {profile.name} sets max_output_tokens below {need}: raise it there"
        fix = fixes.then(fixes.profile_set(profile.name, max_output_tokens=need), fixes.switch(profile.name, "claude"))
        return fix, ""
    return "", (
        f"profile {profile.name}'s window is too small for Claude Code: restart vLLM with --max-model-len "
        f"{budget.needed_window(claude.TRAITS.prompt_tokens):,} or more, then `agentcfg profile set {profile.name} "
        "context_window=` that number and switch again"
    )


def _claude_slots(data: dict[str, Any], where: str, environ: env.Environ) -> list[Finding]:
    """Model slots that send part of Claude Code's requests to an Anthropic model agentcfg's server lacks."""
    block = found if isinstance(found := data.get("env"), dict) else {}
    # Claude Code puts the settings' env block over the shell's variables.
    merged = {k: v for k, v in environ.items() if k.startswith(("ANTHROPIC_", "CLAUDE_CODE_"))}
    merged.update({str(k): str(v) for k, v in block.items()})
    base, model = merged.get("ANTHROPIC_BASE_URL", ""), merged.get("ANTHROPIC_MODEL", "")
    if not base or "anthropic.com" in base or not model or _anthropic_model(model):
        return []
    stray = [
        slot
        for slot in CLAUDE_SLOTS
        if merged.get(slot) and merged[slot] != "inherit" and merged[slot] != model and _anthropic_model(merged[slot])
    ]
    if not stray:
        return []
    origin = {slot: where if slot in block else "this shell" for slot in stray}
    first = stray[0]
    return [
        Finding(
            "claude-model-slot",
            WARN,
            "claude",
            f"Claude Code sends some requests for model {merged[first]} ({first} in {origin[first]}), not "
            f"{model}: the server at {base} serves {model}",
            "; ".join(f"{slot}={merged[slot]} ({origin[slot]})" for slot in stray) + f"; ANTHROPIC_MODEL={model}",
            "",
            "; ".join(
                f"remove {slot} from the env block of {where}"
                if origin[slot] == where
                else f"unset {slot} in your shell"
                for slot in stray
            )
            + f" (or set it to {model})",
        )
    ]


RULES: dict[str, Callable[[Parsed, env.Environ, dict[str, Profile]], list[Finding]]] = {
    "codex": _codex,
    "opencode": _opencode,
    "qwen": _qwen,
    "claude": _claude,
}
