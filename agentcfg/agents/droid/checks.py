"""Factory Droid's own rules for ~/.factory/settings.json, checked offline (agentcfg.doctor.agentfiles runs them).

Each rule was seen with the real `droid` 0.225.2 (docs/droid.md, "Sources", has the offsets in its binary):

- a `provider` Droid does not know makes it drop the whole settings.json ("Failed to load settings file ...
  Unsupported custom model provider" in ~/.factory/logs/droid-log-single.log), and `droid exec` then stops with
  "Airgap Mode is enabled. Model "gpt-5.6-sol" routes through Factory's LLM proxy and cannot be used" (or,
  logged in, uses Factory's model);
- an entry without a string `model`, `provider` or `baseUrl` (the legacy config.json's snake_case `base_url`,
  `api_key` do not count) is left out without a word: the model it was for is "not configured", `droid exec`
  says "Exec failed", and the interactive Droid rewrites settings.json without the entry;
- the legacy ~/.factory/config.json `custom_models` is still merged, but `${VAR}` is not expanded there: the
  literal text goes out as the key;
- settings.local.json is merged over settings.json: its default model or customModels win.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentcfg import env, fixes
from agentcfg.agents.base import Parsed
from agentcfg.doctor.model import FAIL, WARN, Finding
from agentcfg.profiles import Profile

AGENT = "droid"
OURS = "custom:agentcfg-"  # the id a switch gives its entry (agentcfg.attribution's switch id)
PROVIDERS = ("generic-chat-completion-api", "openai", "anthropic", "bedrock-converse")
SNAKE = {"base_url": "baseUrl", "api_key": "apiKey", "max_tokens": "maxOutputTokens", "display_name": "displayName",
         "max_output_tokens": "maxOutputTokens", "model_display_name": "displayName"}  # fmt: skip


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    findings: list[Finding] = []
    for file, data in parsed:
        if not isinstance(data, dict):
            continue
        where = env.display(file.path, environ)
        entries = data.get("customModels")
        chosen = (
            data.get("sessionDefaultSettings", {}).get("model")
            if isinstance(data.get("sessionDefaultSettings"), dict)
            else None
        )
        ours = isinstance(chosen, str) and chosen.startswith(OURS)
        profile = chosen[len(OURS) :] if ours and isinstance(chosen, str) else ""
        fix = fixes.switch(profile, AGENT) if profile in profiles else ""
        if entries is not None and not isinstance(entries, list):
            findings.append(_rejected(where, "customModels is not a list", fix))
            continue
        for index, entry in enumerate(entries or []):
            findings += _entry(entry, index, where, chosen, fix)
        findings += _local(file.path.with_name("settings.local.json"), environ)
        findings += _legacy(file.path.with_name("config.json"), environ)
    return findings


def _rejected(where: str, evidence: str, fix: str) -> Finding:
    return Finding(
        "droid-settings-rejected",
        FAIL,
        AGENT,
        f'Droid drops the whole of {where} when it loads it ("Unsupported custom model provider" in its log), '
        "so it uses none of its custom models",
        evidence,
        fix,
        "" if fix else f"fix the value named in {where}",
    )


def _entry(entry: object, index: int, where: str, chosen: object, fix: str) -> list[Finding]:
    if not isinstance(entry, dict):
        return [_dropped(where, index, "not an object", False)]
    provider = entry.get("provider")
    if isinstance(provider, str) and provider not in PROVIDERS:
        return [
            _rejected(where, f'customModels[{index}].provider = "{provider}" (not one of {", ".join(PROVIDERS)})', fix)
        ]
    wrong = [f"{key} (Droid reads {SNAKE[key]})" for key in entry if key in SNAKE and SNAKE[key] not in entry]
    missing = [key for key in ("model", "provider") if not isinstance(entry.get(key), str)]
    if not isinstance(entry.get("baseUrl"), str) and not isinstance(entry.get("bedrock"), dict):
        missing.append("baseUrl")
    if not missing:
        return []
    named = isinstance(chosen, str) and chosen in (entry.get("id"), f"custom:{entry.get('model')}")
    why = "no string " + ", ".join(missing) + (f"; snake_case keys: {', '.join(wrong)}" if wrong else "")
    return [_dropped(where, index, why, named)]


def _dropped(where: str, index: int, why: str, selected: bool) -> Finding:
    return Finding(
        "droid-model-dropped",
        FAIL if selected else WARN,
        AGENT,
        f"Droid leaves customModels[{index}] of {where} out without a word"
        + (' and it is the default model, so `droid exec` says only "Exec failed"' if selected else "")
        + "; its interactive mode rewrites the file without it",
        f"customModels[{index}]: {why}",
        "",
        "give the entry `model`, `provider` (generic-chat-completion-api for a chat-completions server) and "
        "`baseUrl`, in camelCase",
    )


def _read(path: Path) -> object:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _local(path: Path, environ: env.Environ) -> list[Finding]:
    data = _read(path)
    if not isinstance(data, dict):
        return []
    session = data.get("sessionDefaultSettings")
    found = [k for k in ("customModels",) if k in data]
    if isinstance(session, dict) and "model" in session:
        found.append("sessionDefaultSettings.model")
    if not found:
        return []
    where = env.display(path, environ)
    return [
        Finding(
            "droid-local-override",
            WARN,
            AGENT,
            f"{where} is merged over settings.json: its {' and '.join(found)} win over what agentcfg set",
            ", ".join(found),
            "",
            f"remove {' and '.join(found)} from {where} to use agentcfg's profile (agentcfg never edits that file)",
        )
    ]


def _legacy(path: Path, environ: env.Environ) -> list[Finding]:
    data = _read(path)
    models = data.get("custom_models") if isinstance(data, dict) else None
    if not isinstance(models, list) or not models:
        return []
    where = env.display(path, environ)
    literal = [
        str(m.get("model"))
        for m in models
        if isinstance(m, dict) and isinstance(m.get("api_key"), str) and "${" in m["api_key"]
    ]
    summary = f"{where} still has custom_models (the legacy file, merged under settings.json)"
    if literal:
        summary += (
            f": Droid does not expand ${{VAR}} there, so {', '.join(literal)} send the text `${{...}}` as the key"
        )
    return [
        Finding(
            "droid-legacy-config",
            WARN,
            AGENT,
            summary,
            f"custom_models: {len(models)} entries",
            "",
            "move the entries to customModels in settings.json (camelCase keys), where `${VAR}` is expanded",
        )
    ]
