"""How Claude Code finds its endpoint and key, for doctor: the ANTHROPIC_* variables of the shell and of every
settings file's env block (later layers win), a claude.ai login, an apiKeyHelper, and what is wrong with them
before any request."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from agentcfg import env, fixes, fsutil
from agentcfg.agents.base import Binding, Doctoring
from agentcfg.agents.claude.variables import API_KEY, CUSTOM_HEADERS, TOKEN, custom_headers, home
from agentcfg.agents.shapes import host
from agentcfg.doctor.model import FAIL, SKIP, WARN, Finding, Target
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.profiles import PLACEHOLDER_KEY, Profile

SHELL = "this shell"


@dataclass(frozen=True)
class Layer:
    """One place Claude Code takes env variables from."""

    shown: str  # SHELL, "~/.claude/settings.json", ".claude/settings.json (this project)"
    project: bool  # a project's file in the working directory (a cloned repository's, perhaps)
    variables: dict[str, str]


def read_json(path: Path) -> Any:
    """A JSON file's data, or None (missing, unreadable, not JSON, not a regular file, or too large)."""
    try:
        text = fsutil.read_text(path, str(path))  # never blocks on a FIFO a project put there
        return None if text is None else json.loads(text)
    except (AgentcfgError, OSError, ValueError, RecursionError):  # RecursionError: nested past json's limit
        return None


def login_of(home: Path) -> dict[str, Any] | None:
    """The claude.ai login kept in `home`: when it expires, and whether that has passed; None: no login."""
    data = read_json(home / ".credentials.json")
    oauth = data.get("claudeAiOauth") if isinstance(data, dict) else None
    if not isinstance(oauth, dict):
        return None
    expires = oauth.get("expiresAt")
    return {"expiresAt": expires, "expired": isinstance(expires, (int, float)) and expires / 1000 < time.time()}


def layers(environ: env.Environ, cwd: Path) -> list[Layer]:
    """The shell's ANTHROPIC_* variables, then the env blocks of user, project and local settings
    (Claude Code's order: later ones win). Files in the working directory are the project's, unless
    it is HOME or the user's own Claude directory (then they are yours)."""
    user = home(environ)
    found = [Layer(SHELL, False, {k: v for k, v in environ.items() if k.startswith("ANTHROPIC_")})]
    yours = {user.resolve(), (env.home(environ) / ".claude").resolve()}
    for path, project in (
        (user / "settings.json", False),
        (cwd / ".claude" / "settings.json", True),
        (cwd / ".claude" / "settings.local.json", True),
    ):
        project = project and path.parent.resolve() not in yours
        data = read_json(path)
        block = data.get("env") if isinstance(data, dict) else None
        if isinstance(block, dict):
            shown = env.display(path, environ) if not project else f"{path.relative_to(cwd)} (this project)"
            found.append(Layer(shown, project, {k: str(v) for k, v in block.items()}))
    return found


@dataclass
class ClaudeEnv:
    """Claude Code's env variables once every layer is merged, and the layer each one came from."""

    merged: dict[str, str]
    came_from: dict[str, Layer]


def merge(found: list[Layer]) -> ClaudeEnv:
    """The variables of every layer, later ones winning (as in Claude Code), and the layer each came from."""
    merged: dict[str, str] = {}
    came_from: dict[str, Layer] = {}
    for layer in found:
        merged.update(layer.variables)
        came_from.update(dict.fromkeys(layer.variables, layer))
    return ClaudeEnv(merged, came_from)


def locate(target: Target, binding: Binding, doctor: Doctoring) -> bool:
    """Claude Code's endpoint and model: the shell's and every settings file's env variables, later ones winning."""
    claude_env = merge(layers(doctor.environ, doctor.cwd))
    merged, came_from = claude_env.merged, claude_env.came_from
    target.base_url = merged.get("ANTHROPIC_BASE_URL") or binding.base_url
    target.model = merged.get("ANTHROPIC_MODEL") or binding.model
    if endpoint := came_from.get("ANTHROPIC_BASE_URL"):
        target.endpoint_from, target.endpoint_project = endpoint.shown, endpoint.project
    return True


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

    layer = claude_env.came_from[API_KEY]
    if layer.shown == SHELL:
        return fixes.command(
            "unset", API_KEY
        ), f"keep one: also remove {API_KEY} from your shell's startup file if it is set there"
    if not layer.project and not claude_env.came_from[TOKEN].project and target.profile:
        return fixes.switch(
            target.profile, "claude"
        ), "keep one: the switch writes the token and removes ANTHROPIC_API_KEY"
    return "", f"keep one: remove {API_KEY} from {layer.shown}"


def authorize(target: Target, binding: Binding, profile: Profile | None, doctor: Doctoring) -> None:
    """Claude Code's auth: variables from the shell and every settings file, a claude.ai login, a helper."""
    environ, profiles = doctor.environ, doctor.profiles
    claude_env = merge(layers(environ, doctor.cwd))
    home_dir = home(environ)
    merged, came_from = claude_env.merged, claude_env.came_from
    token, api_key = merged.get(TOKEN), merged.get(API_KEY)
    login = login_of(home_dir)
    if layer := came_from.get(CUSTOM_HEADERS):
        where = f"{CUSTOM_HEADERS} in {layer.shown}"
        target.static += doctor.header_findings(
            target, custom_headers(merged[CUSTOM_HEADERS], where), project=layer.project
        )
    if token and api_key:
        target.static.append(
            Finding(
                "claude-auth-conflict",
                FAIL,
                "claude",
                "both ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY are set: Claude Code warns and sends both",
                f"ANTHROPIC_AUTH_TOKEN from {came_from[TOKEN].shown}; "
                f"ANTHROPIC_API_KEY from {came_from[API_KEY].shown}",
                *_claude_conflict(target, claude_env, profiles),
            )
        )
    elif login and api_key:
        shell = came_from[API_KEY].shown == SHELL
        target.static.append(
            Finding(
                "claude-auth-conflict",
                FAIL,
                "claude",
                "a claude.ai login and ANTHROPIC_API_KEY are both present",
                f"{home_dir}/.credentials.json exists; ANTHROPIC_API_KEY from {came_from[API_KEY].shown}",
                fixes.command("unset", API_KEY) if shell else "",
                ("" if shell else f"remove ANTHROPIC_API_KEY from {came_from[API_KEY].shown}, ")
                + "or to use the key: log out of claude.ai (/logout inside claude)",
            )
        )
    elif api_key:
        shell = came_from[API_KEY].shown == SHELL
        fix, hint = _claude_switch(target, profiles)
        target.static.append(
            Finding(
                "claude-api-key-set",
                WARN,
                "claude",
                "ANTHROPIC_API_KEY is set: interactive Claude Code stops to ask whether to use it "
                "(a token or an apiKeyHelper, which agentcfg writes, is used without asking)",
                f"ANTHROPIC_API_KEY from {came_from[API_KEY].shown}",
                fixes.command("unset", API_KEY) if shell else fix,
                ""
                if shell
                else hint
                or f"a switch writes the token in its place (or remove ANTHROPIC_API_KEY from "
                f"{came_from[API_KEY].shown})",
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
                else f"give {host(target.base_url)} a profile (agentcfg profile add with its Anthropic base URL), "
                "then switch Claude Code to it: the switch writes its token or key command",
            )
        )
        return
    if binding.helper and not (token or api_key):
        doctor.resolve_key(target, binding, profile)
        target.key_header = "both"
    else:
        target.key = token or api_key
        variable = TOKEN if token else API_KEY
        target.key_source = "ANTHROPIC_AUTH_TOKEN" if token else "ANTHROPIC_API_KEY" if api_key else "claude.ai login"
        if target.key and (layer := came_from.get(variable)):
            target.key_source += f" in {layer.shown}"
            target.key_from_project = layer.project
            target.key_owners = doctor.owners(variable) if layer.shown == SHELL else ()
            target.key_variable = variable if layer.shown == SHELL else None
        target.key_header = "both" if token and api_key else "bearer" if token else "x-api-key"
        if target.key == PLACEHOLDER_KEY:
            target.key_source = "placeholder"
        target.static += doctor.key_checks(target, target.key)
    onboarding = read_json(
        home_dir.parent / ".claude.json" if home_dir.name == ".claude" else home_dir / ".claude.json"
    )
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
