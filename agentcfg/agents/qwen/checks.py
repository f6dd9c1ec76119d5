"""qwen-code's own rules for its settings.json and .env, checked offline (agentcfg.doctor.agentfiles runs them).
Pure.
"""

from __future__ import annotations

from agentcfg import env, fixes
from agentcfg.agents import shapes
from agentcfg.agents.base import Parsed
from agentcfg.doctor.model import FAIL, Finding
from agentcfg.profiles import Profile

# -- qwen-code ------------------------------------------------------------------------------------------
# Read from QwenLM/qwen-code packages/cli/src/config/settingsSchema.ts (security.auth.selectedType,
# the AuthType enum of packages/core: "openai", "qwen-oauth", "gemini", "vertex-ai", "anthropic";
# modelProviders: {authType: [{id, name, baseUrl, envKey, ...}]}) and settings.ts (the old top-level
# selectedAuthType moves to security.auth.selectedType when it loads the file). qwen 0.15.10 checks
# few types: a wrong one is mostly ignored, some crash it [run]. What it does with each value here:
QWEN_AUTH_TYPES = {"openai", "qwen-oauth", "gemini", "vertex-ai", "anthropic"}


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
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

    key, selected = "security.auth.selectedType", shapes.get(data, "security", "auth", "selectedType")
    if selected is None and "selectedAuthType" in data:
        key, selected = "selectedAuthType", data["selectedAuthType"]
    providers = data.get("modelProviders")
    entries = shapes.get(providers, "openai")
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
        shown = f'"{selected}"' if isinstance(selected, str) else shapes.shown(selected)
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
                        f"{what} in {where} is {shapes.kind(listed)}, not a list of entries: qwen-code 0.15 stops "
                        "with an error at start; 0.24 ignores it, except an object in the settings v5 layout "
                        '({"protocol", "models"}), which it rewrites as its "models" list',
                        f"{what}: {shapes.kind(listed)}",
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
                        f"{what}: {shapes.kind(listed[bad[0]])}",
                        "",
                        f"fix {what} in {where}",
                    )
                )
                break
    return findings


def _qwen_profile(parsed: Parsed, profiles: dict[str, Profile]) -> Profile | None:
    """The profile qwen's endpoint and model come from (as agents/qwen/ read() finds them)."""
    values = next((d for f, d in parsed if f.format == "dotenv"), None) or {}
    settings = next((d for f, d in parsed if f.format == "json"), None) or {}
    model = shapes.get(settings, "model", "name") or values.get("OPENAI_MODEL")
    entries = shapes.get(settings, "modelProviders", "openai")
    matching = [e for e in entries if isinstance(e, dict) and e.get("id") == model] if isinstance(entries, list) else []
    base_url = (matching[0].get("baseUrl") if matching else None) or values.get("OPENAI_BASE_URL")
    return shapes.matching(base_url, model, profiles)
