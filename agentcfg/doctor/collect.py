"""What each agent will use, read from its files and this environment into Targets: endpoint, model,
the key it would send (and whose it is), and what is wrong before any request is sent."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from agentcfg import budget, env
from agentcfg.agents.base import Binding, Header, is_credential, is_helper
from agentcfg.doctor import agentfiles
from agentcfg.doctor.model import FAIL, SKIP, WARN, Finding, Target
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import PLACEHOLDER_KEY, Profile, is_loopback, is_placeholder

DEFAULT_OUTPUT = {"codex": 0, "qwen": 8000, "opencode": 32000, "claude": 32000}


# -- from files and environment to targets ------------------------------------------------------------------


def _qwen_default_output(model: str | None) -> int:
    """qwen-code asks for 8000, then after a reply hits that retries with its limit for the model name."""
    return 384_000 if (model or "").lower().startswith("deepseek-v4") else 64_000


def _match_profile(base_url: str | None, model: str | None, profiles: dict[str, Profile]) -> Profile | None:
    norm = (base_url or "").rstrip("/")
    for profile in profiles.values():
        if norm in {profile.base_url.rstrip("/"), (profile.anthropic_base_url or "").rstrip("/")} and (
            model == profile.model
        ):
            return profile
    return None


def _exec_key(profile: Profile | None, environ: env.Environ) -> tuple[str | None, str]:
    """The profile's key as `agentcfg exec` would give it (keyring first, then the variable) and its source."""
    if profile is None or not profile.key_env:
        return None, "none"
    from agentcfg import keystore

    try:
        resolved = keystore.resolve(profile, environ)
    except keystore.KeyringProblem as problem:
        if problem.kind == "wrong-origin":  # stored for other hosts: the caller says so (key-wrong-host)
            raise
        return None, "none"
    if resolved is None:
        return None, "none"
    return resolved.value, "keyring" if resolved.source == "keyring" else f"env {profile.key_env}"


def _keyring_key(profile: Profile | None, environ: env.Environ) -> str | None:
    return _exec_key(profile, environ)[0]


def _wrong_origin(agent: str, problem: AgentcfgError) -> Finding:
    """The keyring's key was stored for other hosts than the profile's now (keystore's "wrong-origin")."""
    return Finding("key-wrong-host", FAIL, agent, problem.message, "key from the keyring", problem.hint or "")


def _owners(variable: str | None, profiles: dict[str, Profile]) -> tuple[str, ...]:
    """The profiles whose key a variable holds: every loaded profile that names it as its key_env."""
    return tuple(p.name for p in profiles.values() if variable and p.key_env == variable)


def _key_checks(target: Target, value: str | None) -> list[Finding]:
    from agentcfg import keystore

    findings = []
    if value and (reason := keystore.check_value(value)):
        findings.append(
            Finding(
                "key-malformed",
                FAIL,
                target.agent,
                f"the key from {target.key_source} is malformed: {reason}",
                f"{len(value)} characters",
                "store it again without the extra characters"
                + (f": agentcfg key set {target.profile}" if target.profile else ""),
            )
        )
    host = urlsplit(target.base_url or "").hostname or ""
    if value and is_placeholder(value) and host and not is_loopback(host):
        findings.append(
            Finding(
                "key-placeholder-to-remote",
                FAIL,
                target.agent,
                f"{target.agent} sends a placeholder key to {host}, a remote server",
                f"key from {target.key_source}",
                f"agentcfg switch {target.profile or 'PROFILE'} (with the profile's key stored: agentcfg key set ...)",
            )
        )
    return findings


def helper_profile(helper: str | None, profiles: dict[str, Profile]) -> Profile | None:
    """The profile an agentcfg key helper (`... key get NAME`) fetches the key of."""
    if not is_helper(helper):
        return None
    import shlex

    try:
        name = shlex.split(str(helper))[-1]
    except ValueError:
        return None
    return profiles.get(name)


def _host(url: str) -> str:
    """host[:port] of a URL, for messages (never its user:password@)."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return (parts.hostname or url) + (f":{port}" if port else "")


def _unusable_endpoint(target: Target) -> bool:
    """Drop (with a FAIL) a base URL urllib cannot split: it comes from a file, perhaps a cloned repository's,
    and every guard below splits it. The value is not shown: it may hold anything, a password too."""
    from agentcfg import fields

    if not target.base_url or fields.splittable(target.base_url):
        return False
    target.static.append(
        Finding(
            "config-unreadable",
            FAIL,
            target.agent,
            f"its base URL{f' from {target.endpoint_from}' if target.endpoint_from else ''} is not a URL "
            "(urllib cannot split it: a bad [IPv6] bracket or port)",
            "base URL not shown",
            f"fix the URL there, or agentcfg switch {target.profile or 'PROFILE'}",
        )
    )
    target.base_url = None
    return True


def _guard(target: Target, profiles: dict[str, Profile]) -> None:
    """One rule for every key doctor sends, whatever its source.

    A key that belongs to profiles (its keyring entry or helper; a variable they name as key_env)
    goes only to those profiles' hosts. A key no profile owns (plaintext in a file, a variable no
    profile names) goes only to an endpoint from your own files or shell, never to one a project's
    file in the working directory set; a key that came from that project's file is its own.
    A withheld key becomes a FAIL, and the probes go without it.
    """
    from agentcfg import redact
    from agentcfg.keystore import key_allowed

    if not target.key or not target.base_url or is_placeholder(target.key):
        return
    host = _host(target.base_url)
    owners = [profiles[name] for name in target.key_owners if name in profiles]
    where = f"endpoint {target.base_url}" + (f" from {target.endpoint_from}" if target.endpoint_from else "")
    if owners:
        if any(key_allowed(profile, target.base_url) for profile in owners):
            return
        names = " or ".join(p.name for p in owners)
        finding = Finding(
            "key-wrong-host",
            FAIL,
            target.agent,
            f"{target.agent} would send the key from {target.key_source}, which is profile {names}'s, to {host}, "
            "not one of its hosts: doctor withheld it",
            f"key from {target.key_source}; {where}; " + "; ".join(f"{p.name}: {p.base_url}" for p in owners),
            f"make the agent's endpoint and key come from one profile: agentcfg switch {owners[0].name}"
            + (f" (and remove ANTHROPIC_BASE_URL from {target.endpoint_from})" if target.endpoint_project else ""),
        )
    elif target.endpoint_project and not target.key_from_project:
        finding = Finding(
            "key-wrong-host",
            FAIL,
            target.agent,
            f"{target.agent} would send your key from {target.key_source} to {host}, the endpoint that "
            f"{target.endpoint_from} sets: doctor withheld it",
            f"key from {target.key_source}; {where}",
            f"if you do not trust this project, remove ANTHROPIC_BASE_URL from {target.endpoint_from} "
            f"({target.agent} sends the key there too); if you do, give the endpoint a profile and its own key: "
            "agentcfg profile add NAME --base-url ... --anthropic-base-url URL --key-env VAR, "
            "agentcfg key set NAME, agentcfg switch NAME",
        )
    else:
        return
    redact.register(target.key)  # never shown, though it is not sent
    target.static.append(finding)
    target.key, target.key_withheld = None, True


def _resolve_key(
    target: Target, binding: Binding, profile: Profile | None, environ: env.Environ, profiles: dict[str, Profile]
) -> None:
    """Fill target.key with what the agent would send (and whose it is), and target.static with what is wrong."""
    agent = target.agent
    if binding.helper:
        target.key_source = "helper command"
        if not is_helper(binding.helper):
            target.static.append(
                Finding(
                    "key-missing",
                    SKIP,
                    agent,
                    "it gets its key from your own helper command; doctor does not run it",
                    binding.helper,
                )
            )
            return
        target.key_env = profile.key_env if profile else None
        target.key_source = "keyring (through `agentcfg key get`)"
        target.key_owners = (profile.name,) if profile else ()
        try:
            target.key = _keyring_key(profile, environ)
        except AgentcfgError as problem:
            target.static.append(_wrong_origin(agent, problem))
            return
        if target.key is None:
            target.static.append(
                Finding(
                    "key-missing",
                    FAIL,
                    agent,
                    "its key helper (agentcfg key get) finds no key",
                    binding.helper,
                    f"agentcfg key set {target.profile or 'PROFILE'}",
                )
            )
    elif binding.key_env:
        target.key_env = binding.key_env
        target.key_source = f"env {binding.key_env}"
        value = environ.get(binding.key_env) or None
        target.key_owners = _owners(binding.key_env, profiles) if value else ()
        if value is None and binding.key_env == "OPENAI_API_KEY" and binding.key_value is not None:
            value = binding.key_value
            target.key_source = "placeholder" if value == PLACEHOLDER_KEY else "plaintext in .env"
        if value is None and agent == "qwen" and environ.get("OPENAI_API_KEY"):
            value, target.key_source = environ["OPENAI_API_KEY"], "env OPENAI_API_KEY (qwen's fallback)"
            target.key_owners = _owners("OPENAI_API_KEY", profiles)
            target.static.append(
                Finding(
                    "key-missing",
                    WARN,
                    agent,
                    f"{binding.key_env} is unset, so qwen falls "
                    f"back to OPENAI_API_KEY from this shell and sends it to {target.base_url}",
                    "OPENAI_API_KEY is set",
                    _exec_fix(target),
                )
            )
        try:
            stored = None if value is not None else _keyring_key(profile, environ)
        except AgentcfgError as problem:
            target.static.append(_wrong_origin(agent, problem))
            return
        if value is None and (value := stored) is not None:
            target.key_source = "keyring (as `agentcfg exec` gives it)"
            target.key_owners = (profile.name,) if profile else ()
            target.static.append(
                Finding(
                    "key-missing",
                    WARN,
                    agent,
                    f"{binding.key_env} is not set here: started directly, {agent} sends no key",
                    "the keyring holds the profile's key",
                    _exec_fix(target),
                )
            )
        elif value is None:
            status = FAIL if agent in ("codex", "qwen") else WARN  # these refuse to start without it
            target.static.append(
                Finding(
                    "key-missing",
                    status,
                    agent,
                    f"{binding.key_env} is not set or empty: "
                    + ("it refuses to start" if status == FAIL else "it sends no key"),
                    f"{binding.key_env} unset",
                    _exec_fix(target),
                )
            )
        target.key = value
    elif binding.key_value is not None:
        target.key = binding.key_value
        target.key_source = "placeholder" if binding.key_value == PLACEHOLDER_KEY else "plaintext in its file"
    target.static += _key_checks(target, target.key)


def _header_findings(
    target: Target,
    headers: tuple[Header, ...],
    profiles: dict[str, Profile],
    environ: env.Environ,
    *,
    project: bool = False,
) -> list[Finding]:
    """A credential header of the user's that goes to an agentcfg profile's host: agentcfg did not set it,
    so it is probably meant for another host (a gateway the agent pointed at before a switch). Also one
    of yours that goes to an endpoint a project's file set (`project`: the headers are the project's own)."""
    from agentcfg.keystore import key_allowed

    if not target.base_url:
        return []
    hosts = [p for p in profiles.values() if key_allowed(p, target.base_url)]
    credentials = [h for h in headers if is_credential(h, environ)]
    if not credentials:
        return []
    host = _host(target.base_url)
    if not hosts:
        if not target.endpoint_project or project:
            return []
        return [
            Finding(
                "header-to-other-host",
                WARN,
                target.agent,
                f"{target.agent} sends your header {header.name}, which looks like a credential, to {host}, "
                f"the endpoint that {target.endpoint_from} sets",
                f"{header.name} from {header.where}; endpoint {target.base_url} from {target.endpoint_from}",
                f"if you do not trust this project, remove ANTHROPIC_BASE_URL from {target.endpoint_from}",
            )
            for header in credentials
        ]
    return [
        Finding(
            "header-to-other-host",
            WARN,
            target.agent,
            f"{target.agent} sends your header {header.name}, which looks like a credential, to {host} "
            f"(profile {hosts[0].name}'s host); agentcfg did not set it",
            f"{header.name} from {header.where}; endpoint {target.base_url}",
            f"if {header.name} is not meant for {host}, remove it from {header.where}",
        )
        for header in credentials
    ]


def _exec_fix(target: Target) -> str:
    if target.profile:
        return f"agentcfg key set {target.profile}; run it as `agentcfg exec {target.profile} -- {target.agent}`"
    return f"export {target.key_env}=<key>"


@dataclass(frozen=True)
class Layer:
    """One place Claude Code takes env variables from."""

    shown: str  # "this shell", "~/.claude/settings.json", ".claude/settings.json (this project)"
    project: bool  # a project's file in the working directory (a cloned repository's, perhaps)
    variables: dict[str, str]


def _claude_target(
    target: Target,
    binding: Binding,
    profile: Profile | None,
    environ: env.Environ,
    layers: list[Layer],
    profiles: dict[str, Profile],
) -> None:
    """Claude Code's auth: variables from the shell and every settings file, a claude.ai login, a helper."""
    from agentcfg.agents import claude

    home = claude.home(environ)
    merged: dict[str, str] = {}
    came_from: dict[str, Layer] = {}
    for layer in layers:  # later layers win, as in Claude Code
        merged.update(layer.variables)
        came_from.update(dict.fromkeys(layer.variables, layer))
    token, api_key = merged.get(claude.TOKEN), merged.get(claude.API_KEY)
    login = _claude_login(home)
    target.base_url = merged.get("ANTHROPIC_BASE_URL") or binding.base_url
    target.model = merged.get("ANTHROPIC_MODEL") or binding.model
    if endpoint := came_from.get("ANTHROPIC_BASE_URL"):
        target.endpoint_from, target.endpoint_project = endpoint.shown, endpoint.project
    if _unusable_endpoint(target):
        return
    if layer := came_from.get(claude.CUSTOM_HEADERS):
        where = f"{claude.CUSTOM_HEADERS} in {layer.shown}"
        target.static += _header_findings(
            target,
            claude.custom_headers(merged[claude.CUSTOM_HEADERS], where),
            profiles,
            environ,
            project=layer.project,
        )
    if token and api_key:
        target.static.append(
            Finding(
                "claude-auth-conflict",
                FAIL,
                "claude",
                "both ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY are set: Claude Code warns and sends both",
                "both variables set (shell or a settings.json env block)",
                "keep one: agentcfg switch " + (target.profile or "PROFILE"),
            )
        )
    elif login and api_key:
        target.static.append(
            Finding(
                "claude-auth-conflict",
                FAIL,
                "claude",
                "a claude.ai login and ANTHROPIC_API_KEY are both present",
                f"{home}/.credentials.json exists",
                "unset ANTHROPIC_API_KEY, or `claude /logout`",
            )
        )
    if not target.base_url:
        if not (token or api_key or login or binding.helper):
            target.static.append(
                Finding(
                    "claude-login-required",
                    FAIL,
                    "claude",
                    "Claude Code is not logged in and has no endpoint or key: it asks for /login",
                    "no ANTHROPIC_* variables",
                    "agentcfg switch local (or another profile with an Anthropic URL)",
                )
            )
        else:
            target.static.append(
                Finding(
                    "not-configured",
                    SKIP,
                    "claude",
                    "points at Anthropic's own API; doctor probes only custom endpoints",
                )
            )
        return
    if login and login.get("expired") and not (token or api_key or binding.helper):
        target.static.append(
            Finding(
                "claude-oauth-expired",
                FAIL,
                "claude",
                "the claude.ai login has expired",
                f"expiresAt {login.get('expiresAt')}",
                "run `claude` and /login again",
            )
        )
    if not (token or api_key or binding.helper or login):
        target.static.append(
            Finding(
                "claude-login-required",
                FAIL,
                "claude",
                "ANTHROPIC_BASE_URL is set but no token, key or apiKeyHelper: Claude Code asks for /login",
                f"ANTHROPIC_BASE_URL={target.base_url}",
                "agentcfg switch " + (target.profile or "PROFILE"),
            )
        )
        return
    if binding.helper and not (token or api_key):
        _resolve_key(target, binding, profile, environ, profiles)
        target.key_header = "both"
    else:
        target.key = token or api_key
        variable = claude.TOKEN if token else claude.API_KEY
        target.key_source = "ANTHROPIC_AUTH_TOKEN" if token else "ANTHROPIC_API_KEY" if api_key else "claude.ai login"
        if target.key and (layer := came_from.get(variable)):
            target.key_source += f" in {layer.shown}"
            target.key_from_project = layer.project
            target.key_owners = _owners(variable, profiles) if layer.shown == SHELL else ()
        target.key_header = "both" if token and api_key else "bearer" if token else "x-api-key"
        if target.key == PLACEHOLDER_KEY:
            target.key_source = "placeholder"
        target.static += _key_checks(target, target.key)
    onboarding = _read_json(home.parent / ".claude.json" if home.name == ".claude" else home / ".claude.json")
    if isinstance(onboarding, dict) and not onboarding.get("hasCompletedOnboarding"):
        target.static.append(
            Finding(
                "claude-login-required",
                WARN,
                "claude",
                "interactive `claude` will show its first-run login screens (hasCompletedOnboarding is not set)",
                "~/.claude.json",
                'set "hasCompletedOnboarding": true in ~/.claude.json',
            )
        )


def _read_json(path: Path) -> Any:
    """A JSON file's data, or None (missing, unreadable, not JSON, not a regular file, or too large)."""
    from agentcfg import fsutil

    try:
        text = fsutil.read_text(path, str(path))  # never blocks on a FIFO a project put there
        return None if text is None else json.loads(text)
    except (AgentcfgError, OSError, ValueError, RecursionError):  # RecursionError: nested past json's limit
        return None


def _claude_login(home: Path) -> dict[str, Any] | None:
    data = _read_json(home / ".credentials.json")
    oauth = data.get("claudeAiOauth") if isinstance(data, dict) else None
    if not isinstance(oauth, dict):
        return None
    expires = oauth.get("expiresAt")
    return {"expiresAt": expires, "expired": isinstance(expires, (int, float)) and expires / 1000 < time.time()}


SHELL = "this shell"


def _claude_layers(environ: env.Environ, cwd: Path) -> list[Layer]:
    """The shell's ANTHROPIC_* variables, then the env blocks of user, project and local settings
    (Claude Code's order: later ones win). Files in the working directory are the project's, unless
    it is HOME or the user's own Claude directory (then they are yours)."""
    from agentcfg.agents import claude

    user = claude.home(environ)
    layers = [Layer(SHELL, False, {k: v for k, v in environ.items() if k.startswith("ANTHROPIC_")})]
    yours = {user.resolve(), (env.home(environ) / ".claude").resolve()}
    for path, project in (
        (user / "settings.json", False),
        (cwd / ".claude" / "settings.json", True),
        (cwd / ".claude" / "settings.local.json", True),
    ):
        project = project and path.parent.resolve() not in yours
        data = _read_json(path)
        block = data.get("env") if isinstance(data, dict) else None
        if isinstance(block, dict):
            shown = env.display(path, environ) if not project else f"{path.relative_to(cwd)} (this project)"
            layers.append(Layer(shown, project, {k: str(v) for k, v in block.items()}))
    return layers


def targets_from_files(
    agents: list[ModuleType], environ: env.Environ, profiles: dict[str, Profile], cwd: Path
) -> list[Target]:
    """Each agent as its files and this environment configure it now."""
    from agentcfg.switch import read_current

    result = []
    for agent in agents:
        target = Target(
            agent.NAME,
            "anthropic" if agent.NAME == "claude" else "openai",
            None,
            None,
            prompt_tokens=agent.PROMPT_TOKENS,
            default_output=DEFAULT_OUTPUT[agent.NAME],
        )
        result.append(target)
        try:
            current = read_current(agent, environ)
            unconfigured = not any(text is not None for text in current.values())
            if agent.NAME == "claude":  # Claude Code also takes its endpoint from the shell, or a login
                unconfigured = (
                    unconfigured and not env.which(agent.BINARY, environ) and not environ.get("ANTHROPIC_BASE_URL")
                )
            if unconfigured:
                target.static.append(
                    Finding(
                        "not-configured",
                        SKIP,
                        agent.NAME,
                        "no config file",
                        ", ".join(env.display(f.path, environ) for f in current),
                        f"agentcfg switch PROFILE --agent {agent.NAME}",
                    )
                )
                continue
            binding = agent.read(current)
            target.static += agentfiles.check(agent.NAME, current, environ)
        except AgentcfgError as exc:
            target.static.append(
                Finding(
                    "config-unreadable",
                    FAIL,
                    agent.NAME,
                    "its config file does not parse",
                    str(exc),
                    "fix the file at the line named (agentcfg never rewrites it)",
                )
            )
            continue
        target.base_url, target.model = binding.base_url, binding.model
        target.output_tokens, target.wire_api = binding.output_tokens, binding.wire_api
        target.endpoint_from = ", ".join(env.display(f.path, environ) for f in current)
        if agent.NAME == "qwen":
            if not target.base_url and environ.get("OPENAI_BASE_URL"):
                target.base_url, target.endpoint_from = environ["OPENAI_BASE_URL"], "OPENAI_BASE_URL in this shell"
            target.default_output = _qwen_default_output(target.model)
        if agent.NAME != "claude" and _unusable_endpoint(target):
            continue
        profile = _match_profile(target.base_url, target.model, profiles)
        target.profile = profile.name if profile else None
        profile = helper_profile(binding.helper, profiles) or profile  # whose key a helper fetches
        if agent.NAME == "claude":
            _claude_target(target, binding, profile, environ, _claude_layers(environ, cwd), profiles)
            profile = _match_profile(target.base_url, target.model, profiles)
            target.profile = profile.name if profile else target.profile
        else:
            target.static += _header_findings(target, binding.headers, profiles, environ)
            if agent.NAME == "codex" and target.wire_api not in (None, "responses"):
                target.static.append(
                    Finding(
                        "codex-wire-api",
                        FAIL,
                        "codex",
                        f'wire_api = "{target.wire_api}": current Codex refuses to load the config',
                        f"wire_api={target.wire_api}",
                        'set wire_api = "responses" (agentcfg switch ' + (target.profile or "PROFILE") + ")",
                    )
                )
            _resolve_key(target, binding, profile, environ, profiles)
        _guard(target, profiles)
        if not target.base_url and not target.static:
            target.static.append(Finding("not-configured", SKIP, agent.NAME, "no custom endpoint configured"))
    return result


def targets_from_profile(profile: Profile, agents: list[ModuleType], environ: env.Environ) -> list[Target]:
    """Each agent as `agentcfg switch PROFILE` would configure it, with the key `agentcfg exec` would give."""
    result = []
    for agent in agents:
        claude = agent.NAME == "claude"
        target = Target(
            agent.NAME,
            "anthropic" if claude else "openai",
            profile.anthropic_base_url if claude else profile.base_url,
            profile.model,
            profile=profile.name,
            prompt_tokens=agent.PROMPT_TOKENS,
            output_tokens=None if agent.NAME == "codex" else budget.output_tokens(profile, agent.PROMPT_TOKENS),
            wire_api="responses" if agent.NAME == "codex" else None,
            key_env=profile.key_env,
            # the window switch tells the agent (Claude Code is told none)
            context_window={"codex": profile.context_window, "qwen": profile.context_window}.get(
                agent.NAME, budget.window(profile) if agent.NAME == "opencode" else None
            ),
        )
        result.append(target)
        if reason := agent.unsupported(profile):
            target.base_url = None
            target.static.append(Finding("not-configured", SKIP, agent.NAME, reason))
            continue
        if profile.key_env:
            # As `agentcfg exec` (and Claude's apiKeyHelper) would give it: the keyring first.
            target.key_header = "both" if claude else "bearer"
            target.key_owners = (profile.name,)
            try:
                target.key, source = _exec_key(profile, environ)
            except AgentcfgError as problem:
                target.static.append(_wrong_origin(agent.NAME, problem))
                continue
            target.key_source = f"{source} (as `agentcfg {'key get' if claude else 'exec'}` gives it)"
            if target.key is None:
                target.static.append(
                    Finding(
                        "key-missing",
                        FAIL,
                        agent.NAME,
                        f"no key stored for {profile.name} and {profile.key_env} is not set",
                        "",
                        f"agentcfg key set {profile.name}",
                    )
                )
            target.static += _key_checks(target, target.key)
        elif agent.NAME in ("qwen", "claude"):  # what `switch` writes: these two refuse to run without a key
            target.key, target.key_source = PLACEHOLDER_KEY, "placeholder"
            target.static += _key_checks(target, target.key)
    return result
