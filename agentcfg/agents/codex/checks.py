"""Codex's own rules for its config.toml, checked offline (agentcfg.doctor.agentfiles runs them): what codex
refuses to load, and settings that send part of its work elsewhere. Pure: parsed files in, Findings out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentcfg import attribution, env, fixes
from agentcfg.agents import shapes
from agentcfg.agents.base import Binding, Doctoring, Parsed
from agentcfg.agents.shapes import Path_
from agentcfg.doctor.model import FAIL, SKIP, WARN, Finding, Target
from agentcfg.profiles import Profile

# -- Codex ----------------------------------------------------------------------------------------------
# TOML integers are 64-bit signed (toml.io v1.0.0, "Integer"); Codex's reader (the `toml` crate)
# refuses the whole file on a larger one: "invalid type: integer `…` as i128, expected any valid TOML
# value" [run, codex 0.171.0]. Python's TOML readers (and so agentcfg) read it without complaint.
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
U64_MAX = 2**64 - 1

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
# What `agentcfg switch` writes into config.toml (agents/codex/ edits): a fix by switch covers these.
CODEX_SWITCHED = {"model", "model_provider", "model_context_window"}
CODEX_SWITCHED_PROVIDER = {"name", "base_url", "wire_api", "env_key", "experimental_bearer_token", "auth"}


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    if not (found := shapes.one_table(parsed)):
        return []
    config, data = found
    where = env.display(config.path, environ)
    ours = shapes.profile_of(data.get("model_provider"), profiles)
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
                hint or (f"fix {shapes.dotted(path)} in {where}" if path else ""),
            )
        )

    # 1. Integers TOML cannot hold, anywhere in the file (Codex stops before it reads any key).
    for path, value in shapes.walk(data):
        if shapes.is_int(value) and not I64_MIN <= value <= I64_MAX:
            rejected(
                f"{shapes.dotted(path)} is a number too large for a TOML integer (at most {I64_MAX})",
                f"{shapes.dotted(path)} = {value}",
                path,
                f"set {shapes.dotted(path)} in {where} to a number of at most {I64_MAX} (or remove it)",
            )
    if findings:
        return findings  # nothing else is read; the other rules would only guess

    # 2. The types of the top-level keys agentcfg cares about (ConfigToml).
    for key in CODEX_STRINGS:
        if key in data and not isinstance(data[key], str):
            rejected(
                f"{key} is {shapes.kind(data[key])}, it must be a string", f"{key} = {shapes.shown(data[key])}", (key,)
            )
    for key in CODEX_I64:
        if key in data and not shapes.is_int(data[key]):
            rejected(
                f"{key} is {shapes.kind(data[key])}, it must be a whole number",
                f"{key} = {shapes.shown(data[key])}",
                (key,),
            )

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
        rejected(f"model_providers is {shapes.kind(providers)}, it must be a table", "", ("model_providers",))
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
        rejected(f"model_providers.{pid} is {shapes.kind(table)}, it must be a table", "", base)
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
            shown = shapes.shown(table[key]) if key != "experimental_bearer_token" else shapes.kind(table[key])
            rejected(
                f"model_providers.{pid}.{key} is {shapes.kind(table[key])}, it must be a string",
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
        if key in table and not (shapes.is_int(value) and 0 <= value <= U64_MAX):
            rejected(
                f"model_providers.{pid}.{key} is {shapes.shown(value)}, it must be a whole number of 0 or more",
                f"model_providers.{pid}.{key} = {shapes.shown(value)}",
                (*base, key),
            )
    for key in PROVIDER_BOOLS:
        if key in table and not isinstance(table[key], bool):
            rejected(
                f"model_providers.{pid}.{key} is {shapes.kind(table[key])}, it must be true or false",
                f"model_providers.{pid}.{key} = {shapes.shown(table[key])}",
                (*base, key),
            )
    for key in PROVIDER_TABLES:
        value = table.get(key)
        if key in table and not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
            rejected(
                f"model_providers.{pid}.{key} must be a table of strings",
                f"model_providers.{pid}.{key}: {shapes.kind(value)}",
                (*base, key),
            )
    auth = table.get("auth")
    if "auth" in table:
        if not isinstance(auth, dict) or not isinstance(auth.get("command"), str) or not auth["command"].strip():
            rejected(
                f"[model_providers.{pid}.auth] has no command (missing field `command`)",
                f"model_providers.{pid}.auth: " + (shapes.kind(auth) if not isinstance(auth, dict) else "no command"),
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
                f"move each [profiles.NAME] table of {where} into ~/.codex/NAME.config.toml (without the "
                "[profiles.NAME] header) and remove it",
            )
        )
    return findings


# -- what doctor says of Codex beyond its file ------------------------------------------------------------


def home_missing(value: str, exists: bool, environ: env.Environ) -> Finding:
    """CODEX_HOME names something that is not a directory (codex.HomeMissing)."""
    what = "is a file, not a directory" if exists else "does not exist"
    return Finding(
        "config-unreadable",
        FAIL,
        "codex",
        f"CODEX_HOME points to {value}, which {what}: Codex refuses to start",
        f"CODEX_HOME={value}",
        "" if exists else fixes.command("mkdir", "-p", value),
        ("point CODEX_HOME at a directory, or unset it" if exists else "or unset CODEX_HOME")
        + f" (Codex then uses {env.display(env.home(environ) / '.codex', environ)})",
    )


def built_in(target: Target) -> None:
    """The target of Codex's built-in OpenAI provider: not probed."""
    target.base_url = None
    target.static.append(
        Finding("not-configured", SKIP, "codex", "uses OpenAI's own API; doctor probes only custom endpoints")
    )


def authorize(target: Target, binding: Binding, profile: Profile | None, doctor: Doctoring) -> None:
    """The headers and key its files name; a wire_api other than "responses" is refused by current Codex."""
    target.static += doctor.header_findings(target, binding.headers)
    if target.wire_api not in (None, "responses"):
        target.static.append(
            Finding(
                "codex-wire-api",
                FAIL,
                "codex",
                f'wire_api = "{target.wire_api}": current Codex refuses to load the config',
                f"wire_api={target.wire_api}",
                fixes.switch(target.profile, "codex") if target.profile else "",
                f'set wire_api = "responses" in the provider\'s table in {target.endpoint_from}',
            )
        )
    doctor.resolve_key(target, binding, profile)
