"""What each agent will use, read from its files and this environment into Targets: endpoint, model,
the key it would send (and whose it is), the profile it belongs to, and what is wrong before any
request is sent. Every `fix` here is a command built with agentcfg.fixes; advice in words is a hint."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentcfg import attribution, budget, env, fixes
from agentcfg.agents.base import Agent, Binding, Header, helper_profile_name, is_credential, is_helper
from agentcfg.agents.codex import BUILT_IN_PROVIDERS
from agentcfg.doctor import agentfiles, keyhelpers
from agentcfg.doctor.keyhelpers import HELPER_SETTING
from agentcfg.doctor.model import FAIL, SKIP, WARN, Finding, Target
from agentcfg.errors import AgentcfgError, ParseError
from agentcfg.profiles import PLACEHOLDER_KEY, PROJECT, Profile, is_loopback, is_placeholder

OPENAI_API = BUILT_IN_PROVIDERS["openai"]  # Codex's built-in provider
DEFAULT_OUTPUT = {"codex": 0, "qwen": 8000, "opencode": 32000, "claude": 32000}
STAND_IN = "agentcfg's stand-in key (the placeholder it writes for servers that need no key)"


# -- from files and environment to targets ------------------------------------------------------------------


def _qwen_default_output(model: str | None) -> int:
    """qwen-code asks for 8000, then after a reply hits that retries with its limit for the model name."""
    return 384_000 if (model or "").lower().startswith("deepseek-v4") else 64_000


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


def _wrong_origin(agent: str, problem: AgentcfgError, profile: Profile | None) -> Finding:
    """The keyring's key was stored for other hosts than the profile's now (keystore's "wrong-origin").
    Storing the new host's key always fixes it; `key bind` (the hint) only when the old key is right there too."""
    fix = fixes.key_set(profile.name) if profile else ""
    return Finding("key-wrong-host", FAIL, agent, problem.message, "key from the keyring", fix, problem.hint or "")


def _no_profile_key(agent: str, profile: Profile, environ: env.Environ) -> Finding:
    """Neither the keyring nor the variable (one that the profile may read) has the profile's key."""
    from agentcfg import keystore

    if keystore.reads_environment(profile, environ):
        message, hint = f"no key stored for {profile.name} and {profile.key_env} is not set", ""
    else:
        from agentcfg import trust

        message = (
            f"no key stored for {profile.name}, and {profile.key_env} is not read for it: the project chose that "
            "variable, and you have not approved it"
        )
        hint = f"if {profile.key_env} holds {profile.name}'s key, approve it: {trust.approve_command(profile)}"
    return Finding("key-missing", FAIL, agent, message, "", fixes.key_set(profile.name), hint)


def _owners(variable: str | None, profiles: dict[str, Profile], environ: env.Environ) -> tuple[str, ...]:
    """The profiles whose key a variable of this shell holds: every loaded profile that names it as its key_env
    and may read it there (a project's only once you approved it: keystore.reads_environment)."""
    from agentcfg.keystore import reads_environment

    named = [p for p in profiles.values() if variable and p.key_env == variable]
    return tuple(p.name for p in named if reads_environment(p, environ))


def _own_variable(name: str) -> str:
    """The variable `agentcfg profile add` gives a keyed profile by default: NAME_API_KEY."""
    return name.upper().replace("-", "_") + "_API_KEY"


def _key_checks(target: Target, value: str | None, profile: Profile | None = None) -> list[Finding]:
    from agentcfg import keystore

    findings = []
    if value and (reason := keystore.check_value(value)):
        from_keyring = target.key_source.startswith("keyring")
        findings.append(
            Finding(
                "key-malformed",
                FAIL,
                target.agent,
                f"the key from {target.key_source} is malformed: {reason}",
                f"{len(value)} characters",
                fixes.key_set(target.profile) if target.profile and from_keyring else "",
                "store it again without the extra characters"
                if from_keyring
                else f"set it again without the extra characters ({target.key_source})",
            )
        )
    host = urlsplit(target.base_url or "").hostname or ""
    if value and is_placeholder(value) and host and not is_loopback(host):
        fix, hint = "", "give the agent this server's key: a profile for it with key_env, its key stored, a switch"
        if profile and profile.key_env:
            fix, hint = fixes.then(fixes.key_set(profile.name), fixes.switch(profile.name, target.agent)), ""
        elif profile and not profile.source.startswith(PROJECT):  # needs no key, it says: give it one
            variable = _own_variable(profile.name)
            fix = fixes.then(
                fixes.profile_set(profile.name, key_env=variable),
                fixes.key_set(profile.name),
                fixes.switch(profile.name, target.agent),
            )
            hint = f"profile {profile.name} says its server needs no key; the fix gives it one, read from {variable}"
        findings.append(
            Finding(
                "key-placeholder-to-remote",
                FAIL,
                target.agent,
                f"{target.agent} sends {STAND_IN if value == PLACEHOLDER_KEY else 'a stand-in key, not a real one,'} "
                f"to {host}, a remote server, which will refuse it",
                f"key from {target.key_source}",
                fix,
                hint,
            )
        )
    return findings


def helper_profile(helper: str | None, profiles: dict[str, Profile]) -> Profile | None:
    """The profile an agentcfg key helper (`... key get NAME`) fetches the key of, if it exists."""
    name = helper_profile_name(helper)
    return profiles.get(name) if name else None


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
    where = f" in {target.endpoint_from}" if target.endpoint_from else ""
    target.static.append(
        Finding(
            "config-unreadable",
            FAIL,
            target.agent,
            f"its base URL{where} is not a valid URL (a bad [IPv6] bracket or port)",
            "base URL not shown",
            fixes.switch(target.profile, target.agent) if target.profile else "",
            f"correct the URL{where}",
        )
    )
    target.base_url = None
    return True


def _guard(target: Target, profiles: dict[str, Profile]) -> None:
    """One rule for every key doctor sends, whatever its source.

    A key that belongs to profiles (its keyring entry or helper; a variable they name as key_env)
    goes only to those profiles' hosts. A key no profile owns (plaintext in a file, a variable no
    profile names) goes only to an endpoint from your own files or shell, never to one a project's
    file in the working directory set; a key that came from that project's file is its own. A variable of
    this shell that no profile may read goes to no host that only a project's profiles have.
    A withheld key becomes a FAIL, and the probes go without it.
    """
    from agentcfg import redact
    from agentcfg.keystore import key_allowed

    if not target.key or not target.base_url or is_placeholder(target.key):
        return
    host = _host(target.base_url)
    owners = [profiles[name] for name in target.key_owners if name in profiles]
    where = f"endpoint {target.base_url}" + (f" from {target.endpoint_from}" if target.endpoint_from else "")
    untrusted = f"if you do not trust this project, remove ANTHROPIC_BASE_URL from {target.endpoint_from}"
    if owners:
        if any(key_allowed(profile, target.base_url) for profile in owners):
            return
        names = " or ".join(p.name for p in owners)
        # A project's file sets the endpoint: a switch does not change that file, so no command fixes it.
        finding = Finding(
            "key-wrong-host",
            FAIL,
            target.agent,
            f"{target.agent} would send the key from {target.key_source}, which is profile {names}'s, to {host}, "
            "not one of its hosts: doctor withheld it",
            f"key from {target.key_source}; {where}; " + "; ".join(f"{p.name}: {p.base_url}" for p in owners),
            "" if target.endpoint_project else fixes.switch(owners[0].name, target.agent),
            untrusted if target.endpoint_project else "make the agent's endpoint and key come from one profile",
        )
    elif target.endpoint_project and not target.key_from_project:
        # No command here: the endpoint's profile needs its own OpenAI base URL and key variable, which
        # doctor cannot know (a guessed name or URL would be a wrong fix).
        finding = Finding(
            "key-wrong-host",
            FAIL,
            target.agent,
            f"{target.agent} would send your key from {target.key_source} to {host}, the endpoint that "
            f"{target.endpoint_from} sets: doctor withheld it",
            f"key from {target.key_source}; {where}",
            "",
            f"{untrusted} ({target.agent} sends the key there too); if you do, give {host} a profile of its own "
            "with its Anthropic base URL and its own key variable (agentcfg profile add), store its key "
            "(agentcfg key set) and switch to it",
        )
    else:
        found = _unapproved_variable(target, profiles) if target.key_variable else None
        if found is None:
            return
        finding = found
    redact.register(target.key)  # never shown, though it is not sent
    target.static.append(finding)
    target.key, target.key_withheld = None, True


def _unapproved_variable(target: Target, profiles: dict[str, Profile]) -> Finding | None:
    """A variable of this shell that no profile may read going to a project profile's host (and none of yours):
    the project chose that host, and you have not approved the variable for it at `agentcfg trust`."""
    from agentcfg import trust
    from agentcfg.keystore import key_allowed

    hosts = [p for p in profiles.values() if target.base_url and key_allowed(p, target.base_url)]
    if not hosts or not all(p.source.startswith(PROJECT) for p in hosts):
        return None
    variable, project = str(target.key_variable), hosts[0]
    own = project.key_env == variable  # the profile's own variable: approving it is the fix
    return Finding(
        "key-wrong-host",
        FAIL,
        target.agent,
        f"{target.agent} would send {variable} from this shell to {_host(str(target.base_url))}, the host of "
        f"project profile {project.name}, which may not read that variable (you have not approved it): "
        "doctor withheld it",
        f"key from {target.key_source}; endpoint {target.base_url}",
        trust.approve_command(project) if own else "",
        f"if {variable} holds {project.name}'s key, approve it with that command; otherwise store the key "
        f"({fixes.key_set(project.name)}) and switch again"
        if own
        else f"start {target.agent} without {variable} in its environment (it is not {project.name}'s key variable)",
    )


def _exec_advice(target: Target, profile: Profile | None, stored: bool) -> tuple[str, str]:
    """(fix, hint) for an agent that reads its key from a variable this shell does not set."""
    from agentcfg.agents import AGENTS

    variable = target.key_env or "its key variable"
    if profile and profile.key_env and profile.key_env == target.key_env:
        run = fixes.exec_agent(profile.name, AGENTS[target.agent].TRAITS.binary)
        hint = f"`agentcfg exec` puts the key of {profile.name} in {variable} for that run"
        return (run if stored else fixes.then(fixes.key_set(profile.name), run)), hint
    return (
        "",
        f"export {variable} with the key for {_host(target.base_url) if target.base_url else 'its endpoint'} "
        f"in the shell that starts {target.agent}",
    )


def _stored(profile: Profile | None, environ: env.Environ) -> bool:
    """Whether `agentcfg exec` would find the profile's key (a problem with the keyring counts as no)."""
    try:
        return _keyring_key(profile, environ) is not None
    except AgentcfgError:
        return False


def _resolve_key(
    target: Target, binding: Binding, profile: Profile | None, environ: env.Environ, profiles: dict[str, Profile]
) -> None:
    """Fill target.key with what the agent would send (and whose it is), and target.static with what is wrong.
    `profile`: whose key it is (the helper's profile, else the one the agent is attributed to)."""
    agent = target.agent
    if binding.helper:
        setting = HELPER_SETTING.get(agent, "its key command")
        target.key_source = f"your own command ({setting})"
        if not is_helper(binding.helper):
            target.static.append(
                Finding(
                    "key-missing",
                    SKIP,
                    agent,
                    f"it gets its key by running your own command ({setting}); doctor does not run it",
                    binding.helper,
                )
            )
            return
        target.key_env = profile.key_env if profile else None
        target.key_source = "keyring (through `agentcfg key get`)"
        target.key_owners = (profile.name,) if profile else ()
        named = helper_profile_name(binding.helper)
        if profile is None and any(f.id == "profile-removed" for f in target.static):
            return  # its helper names the removed profile: that finding says so
        try:
            target.key = _keyring_key(profile, environ)
        except AgentcfgError as problem:
            target.static.append(_wrong_origin(agent, problem, profile))
            return
        if target.key is None:
            target.static.append(
                Finding(
                    "key-missing",
                    FAIL,
                    agent,
                    f"the command in {setting} that prints the key (agentcfg key get {named}) finds no key"
                    + ("" if profile else f": there is no profile {named}"),
                    binding.helper,
                    fixes.key_set(profile.name) if profile else "",
                    "" if profile else f"switch {agent} to one of your profiles (agentcfg profile list shows them)",
                )
            )
    elif binding.key_env:
        target.key_env = binding.key_env
        target.key_source = f"env {binding.key_env}"
        value = environ.get(binding.key_env) or None
        target.key_owners = _owners(binding.key_env, profiles, environ) if value else ()
        target.key_variable = binding.key_env if value else None
        if value is None and binding.key_env == "OPENAI_API_KEY" and binding.key_value is not None:
            value = binding.key_value
            target.key_source = "placeholder" if value == PLACEHOLDER_KEY else "plaintext in .env"
        if value is None and agent == "qwen" and environ.get("OPENAI_API_KEY"):
            value, target.key_source = environ["OPENAI_API_KEY"], "env OPENAI_API_KEY (qwen's fallback)"
            target.key_owners = _owners("OPENAI_API_KEY", profiles, environ)
            target.key_variable = "OPENAI_API_KEY"
            fix, hint = _exec_advice(target, profile, _stored(profile, environ))
            target.static.append(
                Finding(
                    "key-missing",
                    WARN,
                    agent,
                    f"{binding.key_env} is unset, so qwen falls "
                    f"back to OPENAI_API_KEY from this shell and sends it to {target.base_url}",
                    "OPENAI_API_KEY is set",
                    fix,
                    hint,
                )
            )
        try:
            stored = None if value is not None else _keyring_key(profile, environ)
        except AgentcfgError as problem:
            target.static.append(_wrong_origin(agent, problem, profile))
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
                    *_exec_advice(target, profile, True),
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
                    *_exec_advice(target, profile, False),
                )
            )
        target.key = value
    elif binding.key_value is not None:
        target.key = binding.key_value
        target.key_source = "placeholder" if binding.key_value == PLACEHOLDER_KEY else "plaintext in its file"
    target.static += _key_checks(target, target.key, profiles.get(target.profile or ""))


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
                hint=f"if you do not trust this project, remove ANTHROPIC_BASE_URL from {target.endpoint_from}",
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
            hint=f"if {header.name} is not meant for {host}, remove it from {header.where}",
        )
        for header in credentials
    ]


@dataclass(frozen=True)
class Layer:
    """One place Claude Code takes env variables from."""

    shown: str  # "this shell", "~/.claude/settings.json", ".claude/settings.json (this project)"
    project: bool  # a project's file in the working directory (a cloned repository's, perhaps)
    variables: dict[str, str]


@dataclass
class ClaudeEnv:
    """Claude Code's env variables once every layer is merged, and the layer each one came from."""

    merged: dict[str, str]
    came_from: dict[str, Layer]


def _claude_endpoint(target: Target, binding: Binding, layers: list[Layer]) -> ClaudeEnv:
    """Claude Code's endpoint and model: the shell's and every settings file's env variables, later ones winning."""
    merged: dict[str, str] = {}
    came_from: dict[str, Layer] = {}
    for layer in layers:  # later layers win, as in Claude Code
        merged.update(layer.variables)
        came_from.update(dict.fromkeys(layer.variables, layer))
    target.base_url = merged.get("ANTHROPIC_BASE_URL") or binding.base_url
    target.model = merged.get("ANTHROPIC_MODEL") or binding.model
    if endpoint := came_from.get("ANTHROPIC_BASE_URL"):
        target.endpoint_from, target.endpoint_project = endpoint.shown, endpoint.project
    return ClaudeEnv(merged, came_from)


def _anthropic_profiles(profiles: dict[str, Profile]) -> list[str]:
    return [p.name for p in profiles.values() if p.anthropic_base_url]


def _claude_switch(target: Target, profiles: dict[str, Profile]) -> tuple[str, str]:
    """(fix, hint) that point Claude Code at a profile: the one it belongs to, else the only one with an
    Anthropic URL; with several to choose from, a hint naming them."""
    if target.profile:
        return fixes.switch(target.profile, "claude"), ""
    names = _anthropic_profiles(profiles)
    if len(names) == 1:
        return fixes.switch(names[0], "claude"), ""
    if names:
        return (
            "",
            f"switch Claude Code to a profile with an Anthropic URL: agentcfg switch with one of {', '.join(names)} "
            "and --agent claude",
        )
    return (
        "",
        "add a profile with an Anthropic base URL (agentcfg profile add with --anthropic-base-url), "
        "then switch Claude Code to it",
    )


def _claude_conflict(target: Target, claude_env: ClaudeEnv, profiles: dict[str, Profile]) -> tuple[str, str]:
    """(fix, hint) for ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY both set: a switch rewrites the user
    settings (the token stays, the key goes); a shell variable is unset; a project's file is edited by hand."""
    from agentcfg.agents import claude

    layer = claude_env.came_from[claude.API_KEY]
    if layer.shown == SHELL:
        return fixes.command(
            "unset", claude.API_KEY
        ), f"keep one: also remove {claude.API_KEY} from your shell's startup file if it is set there"
    if not layer.project and not claude_env.came_from[claude.TOKEN].project and target.profile:
        return fixes.switch(
            target.profile, "claude"
        ), "keep one: the switch writes the token and removes ANTHROPIC_API_KEY"
    return "", f"keep one: remove {claude.API_KEY} from {layer.shown}"


def _claude_auth(
    target: Target,
    binding: Binding,
    profile: Profile | None,
    environ: env.Environ,
    claude_env: ClaudeEnv,
    profiles: dict[str, Profile],
) -> None:
    """Claude Code's auth: variables from the shell and every settings file, a claude.ai login, a helper."""
    from agentcfg.agents import claude

    home = claude.home(environ)
    merged, came_from = claude_env.merged, claude_env.came_from
    token, api_key = merged.get(claude.TOKEN), merged.get(claude.API_KEY)
    login = _claude_login(home)
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
                f"ANTHROPIC_AUTH_TOKEN from {came_from[claude.TOKEN].shown}; "
                f"ANTHROPIC_API_KEY from {came_from[claude.API_KEY].shown}",
                *_claude_conflict(target, claude_env, profiles),
            )
        )
    elif login and api_key:
        shell = came_from[claude.API_KEY].shown == SHELL
        target.static.append(
            Finding(
                "claude-auth-conflict",
                FAIL,
                "claude",
                "a claude.ai login and ANTHROPIC_API_KEY are both present",
                f"{home}/.credentials.json exists; ANTHROPIC_API_KEY from {came_from[claude.API_KEY].shown}",
                fixes.command("unset", claude.API_KEY) if shell else "",
                ("" if shell else f"remove ANTHROPIC_API_KEY from {came_from[claude.API_KEY].shown}, ")
                + "or to use the key: log out of claude.ai (/logout inside claude)",
            )
        )
    elif api_key:
        shell = came_from[claude.API_KEY].shown == SHELL
        fix, hint = _claude_switch(target, profiles)
        target.static.append(
            Finding(
                "claude-api-key-set",
                WARN,
                "claude",
                "ANTHROPIC_API_KEY is set: interactive Claude Code stops to ask whether to use it "
                "(a token or an apiKeyHelper, which agentcfg writes, is used without asking)",
                f"ANTHROPIC_API_KEY from {came_from[claude.API_KEY].shown}",
                fixes.command("unset", claude.API_KEY) if shell else fix,
                ""
                if shell
                else hint
                or f"a switch writes the token in its place (or remove ANTHROPIC_API_KEY from "
                f"{came_from[claude.API_KEY].shown})",
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
                    *_claude_switch(target, profiles),
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
                hint="run claude and log in again (/login)",
            )
        )
    if not (token or api_key or binding.helper or login):
        fix, hint = _claude_switch(target, profiles)
        target.static.append(
            Finding(
                "claude-login-required",
                FAIL,
                "claude",
                "ANTHROPIC_BASE_URL is set but no token, key or apiKeyHelper: Claude Code asks for /login",
                f"ANTHROPIC_BASE_URL={target.base_url}",
                fix if target.profile else "",
                hint
                if target.profile
                else f"give {_host(target.base_url)} a profile (agentcfg profile add with its Anthropic base URL), "
                "then switch Claude Code to it: the switch writes its token or key command",
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
            target.key_owners = _owners(variable, profiles, environ) if layer.shown == SHELL else ()
            target.key_variable = variable if layer.shown == SHELL else None
        target.key_header = "both" if token and api_key else "bearer" if token else "x-api-key"
        if target.key == PLACEHOLDER_KEY:
            target.key_source = "placeholder"
        target.static += _key_checks(target, target.key, profiles.get(target.profile or ""))
    onboarding = _read_json(home.parent / ".claude.json" if home.name == ".claude" else home / ".claude.json")
    if isinstance(onboarding, dict) and not onboarding.get("hasCompletedOnboarding"):
        target.static.append(
            Finding(
                "claude-login-required",
                WARN,
                "claude",
                "interactive `claude` will show its first-run login screens (hasCompletedOnboarding is not set)",
                "~/.claude.json",
                hint='set "hasCompletedOnboarding": true in ~/.claude.json (not while claude runs: it rewrites it)',
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


def _unreadable(agent: str, problem: AgentcfgError, environ: env.Environ) -> Finding:
    """An agent's files cannot be read, said as what it is (not "does not parse" for all of them)."""
    from agentcfg.agents import codex

    if isinstance(problem, codex.HomeMissing):
        what = "is a file, not a directory" if problem.exists else "does not exist"
        return Finding(
            "config-unreadable",
            FAIL,
            agent,
            f"CODEX_HOME points to {problem.value}, which {what}: Codex refuses to start",
            f"CODEX_HOME={problem.value}",
            "" if problem.exists else fixes.command("mkdir", "-p", problem.value),
            ("point CODEX_HOME at a directory, or unset it" if problem.exists else "or unset CODEX_HOME")
            + f" (Codex then uses {env.display(env.home(environ) / '.codex', environ)})",
        )
    message = problem.message
    if message.startswith("cannot read it: "):  # fsutil's wording, as a predicate of the file
        message = f"cannot be read ({message.removeprefix('cannot read it: ')})"
    return Finding(
        "config-unreadable",
        FAIL,
        agent,
        " ".join(filter(None, ("its config file", problem.where, message))),
        problem.where or "",
        hint=problem.hint or "",
    )


def _unparsable(agent: str, problem: AgentcfgError) -> Finding:
    """A file that reads but does not parse (or holds a value agentcfg cannot take)."""
    where = problem.where or "its config file"
    if isinstance(problem, ParseError):
        return Finding(
            "config-unreadable",
            FAIL,
            agent,
            f"its config file does not parse: {problem.message}",
            where,
            hint="fix the file at the line named; agentcfg never rewrites a file that does not parse",
        )
    return Finding("config-unreadable", FAIL, agent, f"{where}: {problem.message}", where, hint=problem.hint or "")


def _removed(target: Target, name: str, binding: Binding, shown: str) -> Finding:
    """agentcfg's id in the files names a profile that is gone (`profile remove`, or a project's profile
    no longer loaded here). With the agent's key command naming it, the agent gets no key: a FAIL."""
    agent = target.agent
    keyless = helper_profile_name(binding.helper) == name
    summary = f"its files were written by `agentcfg switch {name}`, but there is no profile {name} any more"
    if keyless:
        setting = HELPER_SETTING.get(agent, "its key command")
        summary += f": the command in {setting} that prints the key (agentcfg key get {name}) fails, so it gets no key"
    return Finding(
        "profile-removed",
        FAIL if keyless else WARN,
        agent,
        summary,
        f"{shown} names profile {name}",
        fixes.switch(target.profile, agent) if target.profile else "",
        ""
        if target.profile
        else f"add profile {name} again (agentcfg profile add {name} with its base URL and model), "
        f"or switch {agent} to one of your profiles (agentcfg profile list shows them)",
    )


def _journal_switches(environ: env.Environ) -> dict[str, str]:
    """agent -> the profile of its last switch in the journal; {} when the journal cannot be read
    (it only settles a tie between profiles: doctor goes on without it)."""
    from agentcfg.apply import Journal

    try:
        return attribution.last_switches(Journal(environ).entries())
    except (AgentcfgError, OSError):
        return {}


def _unconfigured(agent: Agent, current: dict[Any, str | None], environ: env.Environ) -> bool:
    unconfigured = not any(text is not None for text in current.values())
    if agent.TRAITS.name == "claude":  # Claude Code also takes its endpoint from the shell, or a login
        unconfigured = (
            unconfigured and not env.which(agent.TRAITS.binary, environ) and not environ.get("ANTHROPIC_BASE_URL")
        )
    return unconfigured


def _key_helpers(
    agent: Agent,
    current: dict[Any, str | None],
    binding: Binding,
    environ: env.Environ,
    profiles: dict[str, Profile],
) -> list[keyhelpers.KeyHelper]:
    """The key helpers the agent runs from agentcfg's files: the one its files name now (Claude Code's apiKeyHelper,
    Codex's auth command in config.toml), and for Codex the one of each profile file agentcfg keeps
    (`codex --profile agentcfg-NAME`), which a switch rewrites while NAME is a profile."""
    found = [keyhelpers.KeyHelper(", ".join(env.display(f.path, environ) for f in current), binding.helper or "")]
    if agent.TRAITS.name == "codex":
        from agentcfg import fsutil
        from agentcfg.agents import codex

        for name in codex.profile_file_names(environ):
            file = codex.profile_file(name, environ)
            shown = env.display(file.path, environ)
            try:
                helper = codex.read({file: fsutil.read_text(file.path, shown)}).helper
            except AgentcfgError:
                continue  # unreadable: Codex says so when started with that profile
            found.append(keyhelpers.KeyHelper(shown, helper or "", name in profiles))
    return [h for h in found if h.command]


def targets_from_files(
    agents: list[Agent],
    environ: env.Environ,
    profiles: dict[str, Profile],
    cwd: Path,
    last_switch: dict[str, str] | None = None,
) -> list[Target]:
    """Each agent as its files and this environment configure it now.

    `last_switch`: agent -> the profile of its last switch (default: read from agentcfg's journal).
    """
    from agentcfg.current import read_current

    switched = _journal_switches(environ) if last_switch is None else last_switch
    result = []
    for agent in agents:
        target = Target(
            agent.TRAITS.name,
            "anthropic" if agent.TRAITS.name == "claude" else "openai",
            None,
            None,
            prompt_tokens=agent.TRAITS.prompt_tokens,
            default_output=DEFAULT_OUTPUT[agent.TRAITS.name],
        )
        result.append(target)
        try:
            current = read_current(agent, environ)
        except AgentcfgError as problem:
            target.static.append(_unreadable(agent.TRAITS.name, problem, environ))
            continue
        shown = ", ".join(env.display(f.path, environ) for f in current)
        if _unconfigured(agent, current, environ):
            target.static.append(
                Finding(
                    "not-configured",
                    SKIP,
                    agent.TRAITS.name,
                    "no config file",
                    shown,
                    hint=f"to set it up: agentcfg switch with one of your profiles and --agent {agent.TRAITS.name} "
                    "(agentcfg profile list shows them)",
                )
            )
            continue
        try:
            binding = agent.read(current)
            target.static += agentfiles.check(agent.TRAITS.name, current, environ)
        except AgentcfgError as problem:
            target.static.append(_unparsable(agent.TRAITS.name, problem))
            continue
        owner = binding.profile if binding.profile in profiles else None
        helpers = _key_helpers(agent, current, binding, environ, profiles)
        target.static += keyhelpers.findings(agent.TRAITS.name, helpers, environ, owner)
        target.base_url, target.model = binding.base_url, binding.model
        target.output_tokens, target.wire_api = binding.output_tokens, binding.wire_api
        target.context_window = binding.context_window
        target.endpoint_from = shown
        if agent.TRAITS.name == "codex" and target.base_url == OPENAI_API:
            # Codex's built-in provider: OpenAI's own API, like Claude Code's own: never probed (the
            # probes would leave this machine, and a ChatGPT login is not a key doctor can send).
            target.base_url = None
            target.static.append(
                Finding("not-configured", SKIP, "codex", "uses OpenAI's own API; doctor probes only custom endpoints")
            )
            continue
        if agent.TRAITS.name == "qwen":
            if not target.base_url and environ.get("OPENAI_BASE_URL"):
                target.base_url, target.endpoint_from = environ["OPENAI_BASE_URL"], "OPENAI_BASE_URL in this shell"
            target.default_output = _qwen_default_output(target.model)
        claude_env = (
            _claude_endpoint(target, binding, _claude_layers(environ, cwd)) if agent.TRAITS.name == "claude" else None
        )
        found = attribution.attribute(
            target.base_url,
            target.model,
            profiles,
            own=binding.profile,
            label=binding.label,
            last_switch=switched.get(agent.TRAITS.name),
        )
        target.profile = found.profile
        target.profile_project = bool(found.profile) and profiles[str(found.profile)].source.startswith(PROJECT)
        if found.removed:
            target.static.append(_removed(target, found.removed, binding, shown))
        if _unusable_endpoint(target):
            continue
        # Whose key it is: the profile an agentcfg helper fetches it for (None: that profile is gone),
        # else the profile the agent belongs to.
        key_profile = helper_profile(binding.helper, profiles) if is_helper(binding.helper) else None
        if not is_helper(binding.helper) and target.profile:
            key_profile = profiles[target.profile]
        if claude_env is not None:
            _claude_auth(target, binding, key_profile, environ, claude_env, profiles)
        else:
            target.static += _header_findings(target, binding.headers, profiles, environ)
            if agent.TRAITS.name == "codex" and target.wire_api not in (None, "responses"):
                target.static.append(
                    Finding(
                        "codex-wire-api",
                        FAIL,
                        "codex",
                        f'wire_api = "{target.wire_api}": current Codex refuses to load the config',
                        f"wire_api={target.wire_api}",
                        fixes.switch(target.profile, "codex") if target.profile else "",
                        f'set wire_api = "responses" in the provider\'s table in {shown}',
                    )
                )
            _resolve_key(target, binding, key_profile, environ, profiles)
        _guard(target, profiles)
        if not target.base_url and not target.static:
            target.static.append(Finding("not-configured", SKIP, agent.TRAITS.name, "no custom endpoint configured"))
    return result


def targets_from_profile(profile: Profile, agents: list[Agent], environ: env.Environ) -> list[Target]:
    """Each agent as `agentcfg switch PROFILE` would configure it, with the key `agentcfg exec` would give."""
    result = []
    for agent in agents:
        claude = agent.TRAITS.name == "claude"
        target = Target(
            agent.TRAITS.name,
            "anthropic" if claude else "openai",
            profile.anthropic_base_url if claude else profile.base_url,
            profile.model,
            profile=profile.name,
            profile_project=profile.source.startswith(PROJECT),
            prompt_tokens=agent.TRAITS.prompt_tokens,
            output_tokens=None
            if agent.TRAITS.name == "codex"
            else budget.output_tokens(profile, agent.TRAITS.prompt_tokens),
            wire_api="responses" if agent.TRAITS.name == "codex" else None,
            key_env=profile.key_env,
            # the window switch tells the agent (Claude Code is told none)
            context_window={"codex": profile.context_window, "qwen": profile.context_window}.get(
                agent.TRAITS.name, budget.window(profile) if agent.TRAITS.name == "opencode" else None
            ),
        )
        result.append(target)
        if reason := agent.unsupported(profile):
            target.base_url = None
            target.static.append(Finding("not-configured", SKIP, agent.TRAITS.name, reason))
            continue
        if profile.key_env:
            # As `agentcfg exec` (and Claude's apiKeyHelper) would give it: the keyring first.
            target.key_header = "both" if claude else "bearer"
            target.key_owners = (profile.name,)
            try:
                target.key, source = _exec_key(profile, environ)
            except AgentcfgError as problem:
                target.static.append(_wrong_origin(agent.TRAITS.name, problem, profile))
                continue
            target.key_source = f"{source} (as `agentcfg {'key get' if claude else 'exec'}` gives it)"
            if target.key is None:
                target.static.append(_no_profile_key(agent.TRAITS.name, profile, environ))
            target.static += _key_checks(target, target.key, profile)
        elif agent.TRAITS.name in ("qwen", "claude"):  # what `switch` writes: these two refuse to run without a key
            target.key, target.key_source = PLACEHOLDER_KEY, "placeholder"
            target.static += _key_checks(target, target.key, profile)
    return result
