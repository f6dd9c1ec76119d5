"""Cline CLI's own rules for its providers.json, checked offline (agentcfg.doctor.agentfiles runs them). Pure.

Read from cline 3.0.65's binary (docs/cline.md, Sources): the file's zod schema is `{version: literal(1),
lastUsedProvider?: string(min 1), modes, providers: record({settings, updatedAt: string().datetime(),
tokenSource: "manual"|"oauth"|"migration"})}`, and each entry's settings `{provider, apiKey?: string, model?:
string, baseUrl?: string().url(), contextWindow?: positive int, ...}`. A file that breaks it is dropped whole,
without a word: cline falls back to its own "cline" provider (api.cline.bot) [run: no request reached the
endpoint, no message, the turn hangs offline]. A lastUsedProvider that names no entry does the same [run]. A
base URL without the API's `/v1` gets the server's 404: "error: Not Found", rc 1 [run].
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from agentcfg import env, fixes
from agentcfg.agents import shapes
from agentcfg.agents.base import Parsed
from agentcfg.doctor.model import FAIL, WARN, Finding
from agentcfg.profiles import PLACEHOLDER_KEY, Profile

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"  # zod's string().datetime(): UTC with `Z`
TOKEN_SOURCES = ("manual", "oauth", "migration")
FALLBACK = 'cline ignores the whole file and uses its own "cline" provider (api.cline.bot), without a word'


def _schema_problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    """What breaks cline's schema for providers.json: (what, where) pairs, first the file's own."""
    problems = []
    if data.get("version") != 1:
        problems.append((f"version is {shapes.shown(data.get('version'))}, not 1", "version"))
    chosen = data.get("lastUsedProvider")
    if "lastUsedProvider" in data and not (isinstance(chosen, str) and chosen):
        problems.append(("lastUsedProvider is not a provider id", "lastUsedProvider"))
    providers = data.get("providers")
    if not isinstance(providers, dict):
        return [*problems, (f"providers is {shapes.kind(providers)}, not an object", "providers")]
    for name, entry in providers.items():
        where = f"providers.{name}"
        if not isinstance(entry, dict) or not isinstance(entry.get("settings"), dict):
            problems.append((f"{where} has no settings object", where))
            continue
        stamp = entry.get("updatedAt")
        if not (isinstance(stamp, str) and re.fullmatch(ISO, stamp)):
            what = "has no updatedAt" if stamp is None else "has an updatedAt that is not an ISO time in UTC (…Z)"
            problems.append((f"{where} {what}", f"{where}.updatedAt"))
        if "tokenSource" in entry and entry["tokenSource"] not in TOKEN_SOURCES:
            problems.append((f"{where}.tokenSource is not one of {', '.join(TOKEN_SOURCES)}", f"{where}.tokenSource"))
        settings = entry["settings"]
        url = settings.get("baseUrl")
        if "baseUrl" in settings and not (isinstance(url, str) and re.match(r"[a-zA-Z][\w+.-]*://\S", url)):
            problems.append((f"{where}.settings.baseUrl is not a URL", f"{where}.settings.baseUrl"))
        for key in ("apiKey", "model"):
            if key in settings and not isinstance(settings[key], str):
                problems.append((f"{where}.settings.{key} is {shapes.kind(settings[key])}", f"{where}.settings.{key}"))
        window = settings.get("contextWindow")
        if "contextWindow" in settings and not (shapes.is_int(window) and window > 0):
            problems.append((f"{where}.settings.contextWindow is not a positive whole number", f"{where}.settings"))
    return problems


def check(parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
    found = next(((f, d) for f, d in parsed if f.path.name != "global-settings.json"), None)
    if found is None or not isinstance(found[1], dict):
        return []
    file, data = found
    where = env.display(file.path, environ)
    chosen = data.get("lastUsedProvider")
    settings = shapes.get(data, "providers", chosen, "settings") if isinstance(chosen, str) else None
    settings = settings if isinstance(settings, dict) else {}
    profile = shapes.matching(settings.get("baseUrl"), settings.get("model"), profiles)
    switch = fixes.switch(profile.name, "cline") if profile else ""
    findings: list[Finding] = []
    if problems := _schema_problems(data):
        what, path = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        findings.append(
            Finding(
                "cline-config-ignored",
                FAIL,
                "cline",
                f"{FALLBACK}: {what} in {where}{more}",
                what,
                switch,
                f"fix {path} in {where}" + ("" if switch else " (a switch to one of your profiles writes it right)"),
            )
        )
        return findings
    providers = data["providers"]
    if isinstance(chosen, str) and chosen not in providers:
        findings.append(
            Finding(
                "cline-provider-missing",
                FAIL,
                "cline",
                f'lastUsedProvider in {where} is "{chosen}", which the file has no entry for: cline uses its own '
                '"cline" provider (api.cline.bot) instead',
                f'lastUsedProvider = "{chosen}"; entries: {", ".join(sorted(providers)) or "none"}',
                switch,
                f"set lastUsedProvider in {where} to one of its providers",
            )
        )
    url = settings.get("baseUrl")
    if isinstance(url, str) and urlsplit(url).path.rstrip("/") == "":
        findings.append(
            Finding(
                "cline-base-url",
                WARN,
                "cline",
                f"cline posts to {url.rstrip('/')}/chat/completions: the base URL in {where} has no path, and an "
                'OpenAI-compatible server (vLLM) serves its API under /v1 (cline then says "error: Not Found")',
                f"providers.{chosen}.settings.baseUrl = {url}",
                switch,
                f"end the base URL in {where} with /v1 if the server serves its API there",
            )
        )
    key = settings.get("apiKey")
    if isinstance(key, str) and key and key != PLACEHOLDER_KEY:
        fix = "\n".join((fixes.key_set(profile.name), fixes.exec_agent(profile.name, "cline"))) if profile else ""
        findings.append(
            Finding(
                "cline-key-in-file",
                WARN,
                "cline",
                f"cline's key is in plaintext in {where} (cline takes no reference to a key: the file or "
                "OPENAI_API_KEY)",
                f"providers.{chosen}.settings.apiKey is set",
                fix,
                "keep the key in the keyring (`agentcfg key set PROFILE`) and start cline with "
                "`agentcfg exec PROFILE -- cline`, which gives that run alone a provider file with the key; "
                "then switch again (without --store-key-in-files) to leave a placeholder in the file",
            )
        )
    return findings
