"""The key each agent would send, and whose it is: from its key command (agentcfg's helper: the keyring), the
variable its files name (or the one it falls back to), or a value in its files; and what is wrong with it before
any request (missing, malformed, a stand-in sent to a remote server). KeyRules lends these to the agents' own
hooks (agents.base.Doctoring)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from agentcfg import env, fixes, keystore
from agentcfg.agents import AGENTS, shapes
from agentcfg.agents.base import Binding, Header
from agentcfg.agents.keyhelper import helper_profile_name, is_helper
from agentcfg.doctor.guard import header_findings
from agentcfg.doctor.model import FAIL, SKIP, WARN, Finding, Target
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.profiles import PLACEHOLDER_KEY, PROJECT, Profile, is_loopback, is_placeholder

STAND_IN = "agentcfg's stand-in key (the placeholder it writes for servers that need no key)"


def exec_key(profile: Profile | None, environ: env.Environ) -> tuple[str | None, str]:
    """The profile's key as `agentcfg exec` would give it (keyring first, then the variable) and its source."""
    if profile is None or not profile.key_env:
        return None, "none"
    try:
        resolved = keystore.resolve(profile, environ)
    except keystore.KeyringProblem as problem:
        if problem.kind == "wrong-origin":  # stored for other hosts: the caller says so (key-wrong-host)
            raise
        return None, "none"
    if resolved is None:
        return None, "none"
    return resolved.value, "keyring" if resolved.source == "keyring" else f"env {profile.key_env}"


def keyring_key(profile: Profile | None, environ: env.Environ) -> str | None:
    """The profile's key as `agentcfg exec` would give it (None: none)."""
    return exec_key(profile, environ)[0]


def wrong_origin(agent: str, problem: AgentcfgError, profile: Profile | None) -> Finding:
    """The keyring's key was stored for other hosts than the profile's now (keystore's "wrong-origin").
    Storing the new host's key always fixes it; `key bind` (the hint) only when the old key is right there too."""
    fix = fixes.key_set(profile.name) if profile else ""
    return Finding("key-wrong-host", FAIL, agent, problem.message, "key from the keyring", fix, problem.hint or "")


def no_profile_key(agent: str, profile: Profile, environ: env.Environ) -> Finding:
    """Neither the keyring nor the variable (one that the profile may read) has the profile's key."""
    if keystore.reads_environment(profile, environ):
        message, hint = f"no key stored for {profile.name} and {profile.key_env} is not set", ""
    else:
        message = (
            f"no key stored for {profile.name}, and {profile.key_env} is not read for it: the project chose that "
            "variable, and you have not approved it"
        )
        from agentcfg import trust  # lazy: the approval command, for a project's own key variable only

        hint = f"if {profile.key_env} holds {profile.name}'s key, approve it: {trust.approve_command(profile)}"
    return Finding("key-missing", FAIL, agent, message, "", fixes.key_set(profile.name), hint)


def owners(variable: str | None, profiles: dict[str, Profile], environ: env.Environ) -> tuple[str, ...]:
    """The profiles whose key a variable of this shell holds: every loaded profile that names it as its key_env
    and may read it there (a project's only once you approved it: keystore.reads_environment)."""
    named = [p for p in profiles.values() if variable and p.key_env == variable]
    return tuple(p.name for p in named if keystore.reads_environment(p, environ))


def _own_variable(name: str) -> str:
    """The variable `agentcfg profile add` gives a keyed profile by default: NAME_API_KEY."""
    return name.upper().replace("-", "_") + "_API_KEY"


def key_checks(target: Target, value: str | None, profile: Profile | None = None) -> list[Finding]:
    """A key that cannot go as it is: malformed (extra characters), or a stand-in sent to a remote server."""
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


def _exec_advice(target: Target, profile: Profile | None, stored: bool) -> tuple[str, str]:
    """(fix, hint) for an agent that reads its key from a variable this shell does not set."""
    variable = target.key_env or "its key variable"
    if profile and profile.key_env and profile.key_env == target.key_env:
        run = fixes.exec_agent(profile.name, AGENTS[target.agent].TRAITS.binary)
        hint = f"`agentcfg exec` puts the key of {profile.name} in {variable} for that run"
        return (run if stored else fixes.then(fixes.key_set(profile.name), run)), hint
    return (
        "",
        f"export {variable} with the key for {shapes.host(target.base_url) if target.base_url else 'its endpoint'} "
        f"in the shell that starts {target.agent}",
    )


def _stored(profile: Profile | None, environ: env.Environ) -> bool:
    """Whether `agentcfg exec` would find the profile's key (a problem with the keyring counts as no)."""
    try:
        return keyring_key(profile, environ) is not None
    except AgentcfgError:
        return False


def resolve_key(
    target: Target, binding: Binding, profile: Profile | None, environ: env.Environ, profiles: dict[str, Profile]
) -> None:
    """Fill target.key with what the agent would send (and whose it is), and target.static with what is wrong.
    `profile`: whose key it is (the helper's profile, else the one the agent is attributed to)."""
    agent, traits = target.agent, AGENTS[target.agent].TRAITS
    if binding.helper:
        setting = traits.key_helper_setting or "its key command"
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
            target.key = keyring_key(profile, environ)
        except AgentcfgError as problem:
            target.static.append(wrong_origin(agent, problem, profile))
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
        target.key_owners = owners(binding.key_env, profiles, environ) if value else ()
        target.key_variable = binding.key_env if value else None
        if value is None and binding.key_env == "OPENAI_API_KEY" and binding.key_value is not None:
            value = binding.key_value
            target.key_source = "placeholder" if value == PLACEHOLDER_KEY else "plaintext in .env"
        fallback = traits.key_fallback
        if value is None and fallback and environ.get(fallback):
            value, target.key_source = environ[fallback], f"env {fallback} ({agent}'s fallback)"
            target.key_owners = owners(fallback, profiles, environ)
            target.key_variable = fallback
            fix, hint = _exec_advice(target, profile, _stored(profile, environ))
            target.static.append(
                Finding(
                    "key-missing",
                    WARN,
                    agent,
                    f"{binding.key_env} is unset, so {agent} falls "
                    f"back to {fallback} from this shell and sends it to {target.base_url}",
                    f"{fallback} is set",
                    fix,
                    hint,
                )
            )
        try:
            stored = None if value is not None else keyring_key(profile, environ)
        except AgentcfgError as problem:
            target.static.append(wrong_origin(agent, problem, profile))
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
            status = FAIL if traits.needs_key else WARN
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
    target.static += key_checks(target, target.key, profiles.get(target.profile or ""))


@dataclass
class KeyRules:
    """agents.base.Doctoring for one doctor run: the shared key rules, bound to this environment and profiles."""

    environ: env.Environ
    profiles: dict[str, Profile]
    cwd: Path

    def resolve_key(self, target: Target, binding: Binding, profile: Profile | None) -> None:
        resolve_key(target, binding, profile, self.environ, self.profiles)

    def header_findings(self, target: Target, headers: tuple[Header, ...], *, project: bool = False) -> list[Finding]:
        return header_findings(target, headers, self.profiles, self.environ, project=project)

    def key_checks(self, target: Target, value: str | None) -> list[Finding]:
        return key_checks(target, value, self.profiles.get(target.profile or ""))

    def owners(self, variable: str | None) -> tuple[str, ...]:
        return owners(variable, self.profiles, self.environ)
