"""opencode's own rules for its opencode.json, checked offline (agentcfg.doctor.agentfiles runs them). Pure."""

from __future__ import annotations

from typing import Any

from agentcfg import attribution, env, fixes
from agentcfg.agents import shapes
from agentcfg.agents.base import Parsed
from agentcfg.agents.shapes import Path_
from agentcfg.doctor.model import FAIL, WARN, Finding
from agentcfg.profiles import Profile

# -- opencode -------------------------------------------------------------------------------------------
# Read from anomalyco/opencode packages/opencode/src/config/config.ts (the zod schema Config.Info:
# model and small_model strings; enabled_providers / disabled_providers arrays of strings;
# provider.X.options.baseURL and apiKey strings; a model's `limit` an object of `context` and
# `output`, both required numbers) and packages/opencode/src/provider/provider.ts (a provider left out
# of enabled_providers, or in disabled_providers, is dropped; "When set, ONLY these providers will be
# enabled. All other providers will be ignored"). opencode 1.18.33 refuses a file that breaks the
# schema: "Configuration is invalid at <file>" / "↳ Missing key provider.X.models.M.limit.output"
# [run]; unknown keys are accepted [run].

OPENCODE_SWITCHED_MODEL = {"name", "tool_call", "limit"}  # what agents/opencode/ writes per model


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    if not (found := shapes.one_table(parsed)):
        return []
    config, data = found
    where = env.display(config.path, environ)
    model = data.get("model")
    provider_id, model_id = model.split("/", 1) if isinstance(model, str) and "/" in model else (None, None)
    ours = shapes.profile_of(provider_id, profiles)
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
                f"fix {shapes.dotted(path)} in {where}",
            )
        )

    for key in ("model", "small_model"):
        if key in data and not isinstance(data[key], str):
            rejected(
                f"{key} is {shapes.kind(data[key])}, it must be a string",
                f"{key}: {shapes.shown(data[key])}",
                (key,),
                True,
            )
    for key in ("enabled_providers", "disabled_providers"):
        value = data.get(key)
        if key in data and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            rejected(f"{key} must be a list of provider names", f"{key}: {shapes.kind(value)}", (key,))
    providers = data.get("provider")
    if "provider" in data and not isinstance(providers, dict):
        rejected(f"provider is {shapes.kind(providers)}, it must be an object", "", ("provider",))
    for pid, entry in (providers if isinstance(providers, dict) else {}).items():
        base = ("provider", str(pid))
        mine = pid == provider_id  # switch rewrites the selected provider's entry
        if not isinstance(entry, dict):
            rejected(f"provider.{pid} is {shapes.kind(entry)}, it must be an object", "", base, mine)
            continue
        options = entry.get("options")
        if "options" in entry and not isinstance(options, dict):
            rejected(f"provider.{pid}.options is {shapes.kind(options)}, it must be an object", "", (*base, "options"))
        for key in ("baseURL", "apiKey"):
            value = options.get(key) if isinstance(options, dict) else None
            if isinstance(options, dict) and key in options and not isinstance(value, str):
                rejected(
                    f"provider.{pid}.options.{key} is {shapes.kind(value)}, it must be a string",
                    f"provider.{pid}.options.{key}: {shapes.shown(value) if key == 'baseURL' else shapes.kind(value)}",
                    (*base, "options", key),
                    mine,
                )
        models = entry.get("models")
        if "models" in entry and not isinstance(models, dict):
            rejected(f"provider.{pid}.models is {shapes.kind(models)}, it must be an object", "", (*base, "models"))
            continue
        for mid, spec in (models if isinstance(models, dict) else {}).items():
            path = (*base, "models", str(mid))
            switched = mine and mid == model_id
            if not isinstance(spec, dict):
                rejected(f"{shapes.dotted(path)} is {shapes.kind(spec)}, it must be an object", "", path, switched)
                continue
            if "limit" not in spec:
                continue
            limit = spec["limit"]
            if not isinstance(limit, dict):
                rejected(
                    f"{shapes.dotted(path)}.limit is {shapes.kind(limit)}, it must be an object",
                    "",
                    (*path, "limit"),
                    switched,
                )
                continue
            missing = [k for k in ("context", "output") if k not in limit]
            wrong = [k for k in ("context", "output") if k in limit and not shapes.is_number(limit[k])]
            if missing:
                rejected(
                    f"{shapes.dotted(path)}.limit has no {' and no '.join(missing)} (opencode needs both)",
                    f"{shapes.dotted(path)}.limit: " + ", ".join(f"{k}={shapes.shown(v)}" for k, v in limit.items())
                    or "{}",
                    (*path, "limit"),
                    switched,
                )
            for key in wrong:
                rejected(
                    f"{shapes.dotted(path)}.limit.{key} is {shapes.kind(limit[key])}, it must be a number",
                    f"{shapes.dotted(path)}.limit.{key}: {shapes.kind(limit[key])}",
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
