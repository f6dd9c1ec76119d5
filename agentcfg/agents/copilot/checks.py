"""GitHub Copilot CLI's own rules for providers.json and the `model` of settings.json, checked offline
(agentcfg.doctor.agentfiles runs them). Pure.

What 1.0.102 refuses, in its own words (run against it, docs/copilot.md): `Invalid providers config at FILE:
\\`providers\\` is not an array`; `Invalid named provider configuration: missing field \\`name\\`` (or
`baseUrl`); `Invalid provider model configuration: missing field \\`provider\\`` (or `id`), `invalid type:
string "2048", expected u32` for a token limit; `BYOK model "M" references unknown provider "P".`; and, when
settings.json selects `P/M` that no models entry lists, `Provider model 'P/M' is not registered`. Unknown keys
are accepted (an `apiKeyCommand` or `apiKeyEnv` is ignored), and so is any `type` or `wireApi` string.
"""

from __future__ import annotations

from typing import Any

from agentcfg import env, fixes
from agentcfg.agents import shapes
from agentcfg.agents.base import Parsed
from agentcfg.doctor.model import FAIL, Finding
from agentcfg.profiles import Profile

U32 = 2**32 - 1


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    data = {file.path.name: (file, value) for file, value in parsed}
    providers_file, providers = data.get("providers.json", (None, None))
    if providers_file is None:  # COPILOT_PROVIDERS_CONFIG names it otherwise: the first file is the providers'
        providers_file, providers = parsed[0] if parsed else (None, None)
    settings = next((value for file, value in parsed if file is not providers_file), None)
    selected = settings.get("model") if isinstance(settings, dict) else None
    ident, model_id = selected.split("/", 1) if isinstance(selected, str) and "/" in selected else (None, None)
    ours = shapes.profile_of(ident, profiles)
    if providers_file is None or not isinstance(providers, dict):
        return []
    where = env.display(providers_file.path, environ)
    found: list[str] = []
    found += _lists(providers)
    entries = [p for p in providers.get("providers") or [] if isinstance(p, dict)]
    names = {p.get("name") for p in entries}
    for index, entry in enumerate(entries):
        for key in ("name", "baseUrl"):
            if not isinstance(entry.get(key), str):
                found.append(f"providers[{index}]: {_field(entry, key)} (`Invalid named provider configuration`)")
    models = [m for m in providers.get("models") or [] if isinstance(m, dict)] if not found else []
    for index, model in enumerate(models):
        for key in ("id", "provider"):
            if not isinstance(model.get(key), str):
                found.append(f"models[{index}]: {_field(model, key)} (`Invalid provider model configuration`)")
        for key in ("maxOutputTokens", "maxPromptTokens"):
            value = model.get(key)
            if key in model and not (shapes.is_int(value) and 0 <= value <= U32):
                found.append(f"models[{index}].{key} is {shapes.shown(value)}: not a whole number (expected u32)")
        if isinstance(model.get("provider"), str) and model["provider"] not in names:
            found.append(f'BYOK model "{model.get("id")}" references unknown provider "{model["provider"]}"')
    listed = any(m.get("provider") == ident and m.get("id") == model_id for m in models)
    if not found and ident in names and not listed:
        found.append(
            f"Provider model '{selected}' is not registered (settings.json selects it, no models entry has it)"
        )
    return [
        Finding(
            "copilot-config-rejected",
            FAIL,
            "copilot",
            f"GitHub Copilot CLI refuses {where}: {problem}",
            "",
            fixes.switch(ours.name, "copilot") if ours else "",
            f"fix it in {where}",
        )
        for problem in found
    ]


def _lists(providers: dict[str, Any]) -> list[str]:
    return [
        f"`{key}` is not an array (it is {shapes.kind(providers[key])})"
        for key in ("providers", "models")
        if key in providers and not isinstance(providers[key], list)
    ]


def _field(entry: dict[str, Any], key: str) -> str:
    return f"missing field `{key}`" if key not in entry else f"`{key}` is {shapes.kind(entry[key])}, not a string"
