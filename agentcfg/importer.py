"""`agentcfg profile import` and `init`: the endpoints a machine's agents already use, as profiles.

`candidates()` is pure: what each agent's files say (Bindings) and the OPENAI_*/ANTHROPIC_* variables
in, one candidate per distinct base URL + model out, named after its host, with any plaintext key
found beside it (to move into the keyring).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from urllib.parse import urlsplit

from agentcfg import env, fields
from agentcfg.agents import AGENTS
from agentcfg.agents.base import Binding
from agentcfg.lazyclass import dataclass
from agentcfg.profiles import NAME_RE, Profile, is_loopback, is_placeholder
from agentcfg.profiles import PLACEHOLDER_KEYS as PLACEHOLDERS  # noqa: F401 - the set is_placeholder checks


@dataclass
class Candidate:
    """A provider found in an agent's file or the shell, to become a profile."""

    name: str
    base_url: str
    model: str
    anthropic_base_url: str | None = None
    key_env: str | None = None
    key: str | None = field(default=None, repr=False)  # a plaintext key found in a file or the shell
    found_in: list[str] = field(default_factory=list)  # agents (or "environment") that point here
    known_as: str | None = None  # an existing profile with this base URL and model

    def profile(self) -> Profile:
        return Profile(
            name=self.name,
            base_url=self.base_url,
            model=self.model,
            key_env=self.key_env,
            anthropic_base_url=self.anthropic_base_url,
            description=f"imported from {', '.join(self.found_in)}",
        )


# Where Claude Code's model comes from when ANTHROPIC_MODEL is not set (agents.md): the `model` setting (an
# alias such as `sonnet` means its ANTHROPIC_DEFAULT_*_MODEL slot), then the slots, the main one first.
CLAUDE_SLOTS = (
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
)
_ALIASES = {
    "default": "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "sonnet": "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "sonnet[1m]": "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "opus": "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "opus[1m]": "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "opusplan": "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "haiku": "ANTHROPIC_DEFAULT_HAIKU_MODEL",
}


def claude_model(variables: Mapping[str, object], setting: object = None) -> str | None:
    """The model Claude Code asks its endpoint for: ANTHROPIC_MODEL, else the `model` setting (an alias
    resolved through its slot; an alias whose slot is unset names Anthropic's model, no use elsewhere), else
    the first model slot set. None: nothing names one."""

    def text(value: object) -> str | None:
        return value.strip() if isinstance(value, str) and value.strip() else None

    if found := text(variables.get("ANTHROPIC_MODEL")):
        return found
    if chosen := text(setting):
        slot = _ALIASES.get(chosen.lower())
        if slot is None:
            return chosen
        if found := text(variables.get(slot)):
            return found
    return next((m for m in (text(variables.get(s)) for s in CLAUDE_SLOTS) if m), None)


def _norm(url: str) -> str:
    return url.rstrip("/")


def name_for(base_url: str, taken: set[str]) -> str:
    """A profile name from the host: `local-8000` for this machine, `deepseek` for api.deepseek.com,
    `10-0-0-5-8000` for an address."""
    import ipaddress

    parts = urlsplit(base_url)
    host = (parts.hostname or "endpoint").lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 80)
    except ValueError:
        port = 80
    if is_loopback(host):
        base = f"local-{port}"
    else:
        try:
            ipaddress.ip_address(host)
            base = f"{host.replace('.', '-').replace(':', '-')}-{port}"
        except ValueError:
            labels = host.split(".")
            labels = labels[:-1] if len(labels) > 1 else labels  # drop the top-level domain
            labels = [label for label in labels if label not in ("api", "www", "gateway")] or labels
            base = labels[-1]
    base = re.sub(r"[^a-z0-9_-]+", "-", base).strip("-_")[:48] or "endpoint"
    name, n = base, 2
    while name in taken or not NAME_RE.match(name):
        name, n = f"{base}-{n}", n + 1
    return name


def _plain_key(binding: Binding, environ: env.Environ) -> str | None:
    value = binding.key_value
    if value is None and binding.key_env:
        value = environ.get(binding.key_env)
    if not value or is_placeholder(value) or value.startswith(("{env:", "{file:")):
        return None  # no key, a placeholder, or a reference opencode resolves itself
    return value


def candidates(bindings: dict[str, Binding], environ: env.Environ, existing: dict[str, Profile]) -> list[Candidate]:
    """Every distinct endpoint the agents (and OPENAI_*/ANTHROPIC_* variables) point at."""
    found: dict[tuple[str, str], Candidate] = {}
    taken = set(existing)
    anthropic: list[tuple[str, Binding]] = []

    def add(base: str | None, model: str | None, where: str, key: str | None, key_env: str | None) -> None:
        if not base or not model or not base.startswith(("http://", "https://")) or not fields.splittable(base):
            # not configured, a reference such as opencode's {env:VAR} that only the agent resolves, or not a URL
            # any agent can use ("http://[::1"): nothing to import
            return
        slot = (_norm(base), model)
        if slot not in found:
            known = next((p.name for p in existing.values() if (_norm(p.base_url), p.model) == slot), None)
            name = known or name_for(base, taken)
            taken.add(name)
            found[slot] = Candidate(name, _norm(base), model, known_as=known)
        candidate = found[slot]
        candidate.found_in.append(where)
        if key and not candidate.key:
            candidate.key = key
        if key_env and not candidate.key_env:
            candidate.key_env = key_env

    for agent, binding in bindings.items():
        if AGENTS[agent].TRAITS.protocol == "messages":  # an Anthropic endpoint: joined to its OpenAI one below
            anthropic.append((agent, binding))
            continue
        key = _plain_key(binding, environ) if binding.key_value else None
        key_env = binding.key_env if binding.key_env not in (None, "OPENAI_API_KEY") else None
        add(binding.base_url, binding.model, agent, key, key_env)
    if environ.get("OPENAI_BASE_URL") and environ.get("OPENAI_MODEL"):
        key = environ.get("OPENAI_API_KEY")
        add(
            environ["OPENAI_BASE_URL"],
            environ["OPENAI_MODEL"],
            "environment",
            None if not key or is_placeholder(key) else key,
            None,
        )
    if environ.get("ANTHROPIC_BASE_URL") and (model := claude_model(environ)):
        anthropic.append(
            (
                "environment",
                Binding(
                    base_url=environ["ANTHROPIC_BASE_URL"],
                    model=model,
                    key_value=environ.get("ANTHROPIC_AUTH_TOKEN"),
                ),
            )
        )
    for where, binding in anthropic:  # Claude's endpoint joins the OpenAI one on the same host and model
        if not binding.base_url or not binding.model or not fields.splittable(binding.base_url):
            continue
        origin = urlsplit(binding.base_url)[:2]
        match = next(
            (c for c in found.values() if urlsplit(c.base_url)[:2] == origin and c.model == binding.model), None
        )
        key = _plain_key(binding, environ)
        if match is None:
            add(_norm(binding.base_url) + "/v1", binding.model, where, key, None)
            match = found[(_norm(binding.base_url) + "/v1", binding.model)]
        else:
            match.found_in.append(where)
            match.key = match.key or key
        match.anthropic_base_url = _norm(binding.base_url)
    for candidate in found.values():
        host = urlsplit(candidate.base_url).hostname or ""
        if not candidate.key_env and (candidate.key or not is_loopback(host)):
            candidate.key_env = candidate.name.upper().replace("-", "_") + "_API_KEY"
    return list(found.values())
