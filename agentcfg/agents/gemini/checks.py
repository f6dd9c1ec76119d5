"""Gemini CLI's own rules for its settings.json and .env, checked offline (agentcfg.doctor.agentfiles runs them).
Pure.

Each message below is Gemini CLI 0.61.0's own, seen by running it (docs/gemini.md, "What it rejects"):
- security.auth.selectedType not one it knows: "Invalid auth method selected." (exit 41; validateAuthMethod)
- a settings value of the wrong type: "Invalid configuration in FILE: Error in: model.compressionThreshold
  Expected number, received string" (a warning: it goes on with the value as it is)
- GOOGLE_GEMINI_BASE_URL that is no URL: "Invalid custom base URL: X" (exit 1; validateBaseUrl)
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from agentcfg import env, fixes
from agentcfg.agents import shapes
from agentcfg.agents.base import Parsed
from agentcfg.doctor.model import FAIL, WARN, Finding
from agentcfg.profiles import Profile

AGENT = "gemini"
# 0.61.0's AuthType enum: "gateway" is in it, but its validateAuthMethod refuses it ("Invalid auth method selected.")
AUTH_TYPES = {"oauth-personal", "gemini-api-key", "vertex-ai", "cloud-shell", "compute-default-credentials"}
# The keys agentcfg writes, and the type Gemini CLI's settings schema holds each to.
TYPES = {
    ("model", "name"): "a string",
    ("model", "compressionThreshold"): "a number",
    ("modelConfigs", "customAliases"): "an object",
    ("security", "auth", "selectedType"): "a string",
}


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    dotenv = next((data for f, data in parsed if f.format == "dotenv" and isinstance(data, dict)), {})
    settings = next(((f, data) for f, data in parsed if f.format == "json"), None)
    findings: list[Finding] = []
    profile = shapes.matching(dotenv.get("GOOGLE_GEMINI_BASE_URL"), dotenv.get("GEMINI_MODEL"), profiles)
    switch = fixes.switch(profile.name, AGENT) if profile else ""
    if settings is not None and isinstance(settings[1], dict):
        file, data = settings
        where = env.display(file.path, environ)
        findings += _types(data, where, switch)
        selected = shapes.get(data, "security", "auth", "selectedType")
        if isinstance(selected, str) and selected not in AUTH_TYPES:
            findings.append(
                Finding(
                    "gemini-config-rejected",
                    FAIL,
                    AGENT,
                    f'Gemini CLI stops at start ("Invalid auth method selected."): security.auth.selectedType in '
                    f'{where} is "{selected}"',
                    f'security.auth.selectedType = "{selected}"',
                    switch,
                    "" if switch else f'set security.auth.selectedType to "gemini-api-key" in {where}',
                )
            )
    url = dotenv.get("GOOGLE_GEMINI_BASE_URL")
    if isinstance(url, str) and url and not _is_url(url):
        findings.append(
            Finding(
                "gemini-config-rejected",
                FAIL,
                AGENT,
                f'Gemini CLI stops at start ("Invalid custom base URL: {url}"): GOOGLE_GEMINI_BASE_URL in its .env',
                f"GOOGLE_GEMINI_BASE_URL={url}",
                switch,
                "" if switch else "set GOOGLE_GEMINI_BASE_URL in ~/.gemini/.env to the router's URL (no /v1)",
            )
        )
    return findings


def _types(data: dict[str, Any], where: str, switch: str) -> list[Finding]:
    found = []
    for path, wanted in TYPES.items():
        value = shapes.get(data, *path)
        if value is None or shapes.kind(value) == wanted:
            continue
        key = ".".join(path)
        found.append(
            Finding(
                "gemini-config-rejected",
                WARN,
                AGENT,
                f'Gemini CLI warns at every start ("Invalid configuration in {where}: Error in: {key}") and uses '
                f"{key} as it is: {shapes.kind(value)}, not {wanted}",
                f"{key} = {shapes.shown(value)}",
                switch,
                "" if switch else f"make {key} a {wanted} in {where}",
            )
        )
    return found


def _is_url(value: str) -> bool:
    """As `new URL(value)` accepts it, near enough: a scheme and a host."""
    parts = urlsplit(value)
    return bool(parts.scheme and parts.netloc)
