"""What each agent will use, read from its files and this environment into Targets: endpoint, model,
the key it would send (and whose it is), the profile it belongs to, and what is wrong before any
request is sent. The same steps for every agent; what differs is each agent's (its TRAITS and its doctor
members: configured, locate, authorize, ...). The key is keys.py's, the host guard guard.py's. Every `fix`
is a command built with agentcfg.fixes; advice in words is a hint."""

from __future__ import annotations

from pathlib import Path

from agentcfg import attribution, budget, env, fixes
from agentcfg.agents import AGENTS
from agentcfg.agents.base import Agent, Binding
from agentcfg.agents.keyhelper import helper_profile_name, is_helper
from agentcfg.current import read_current
from agentcfg.doctor import agentfiles, keyhelpers, keys
from agentcfg.doctor.guard import guard, unusable_endpoint
from agentcfg.doctor.keys import KeyRules, helper_profile, key_checks, no_profile_key, wrong_origin
from agentcfg.doctor.model import FAIL, SKIP, WARN, Finding, Target
from agentcfg.errors import AgentcfgError, ParseError
from agentcfg.profiles import PLACEHOLDER_KEY, PROJECT, Profile

__all__ = ["helper_profile", "targets_from_files", "targets_from_profile"]


def _wire(agent: Agent) -> str:
    """The Target's protocol: "anthropic" for an agent that speaks Messages, "generate-content" for one that speaks
    the Gemini API (at a router's host root, as the Anthropic URL is), else "openai" (chat, responses)."""
    if agent.TRAITS.protocol == "generate-content":
        return "generate-content"
    return "anthropic" if agent.TRAITS.protocol == "messages" else "openai"


def _unreadable(agent: str, problem: AgentcfgError) -> Finding:
    """An agent's files cannot be read, said as what it is (not "does not parse" for all of them)."""
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
        setting = AGENTS[agent].TRAITS.key_helper_setting or "its key command"
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
    from agentcfg.apply import Journal  # lazy: read only for a tie, which most runs never have

    try:
        return attribution.last_switches(Journal(environ).entries())
    except (AgentcfgError, OSError):
        return {}


def _attribute(
    target: Target, binding: Binding, profiles: dict[str, Profile], last_switch: str | None
) -> attribution.Attribution:
    return attribution.attribute(
        target.base_url, target.model, profiles, own=binding.profile, label=binding.label, last_switch=last_switch
    )


def _tied(target: Target, profiles: dict[str, Profile]) -> bool:
    """Several profiles have this endpoint and model: only then can the last switch decide (attribution.py)."""
    return sum(attribution.matches(p, target.base_url, target.model) for p in profiles.values()) > 1


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
    switched = last_switch  # None: read from the journal when a tie first needs it
    doctor = KeyRules(environ, profiles, cwd)
    result = []
    for agent in agents:
        name = agent.TRAITS.name
        target = Target(
            name,
            _wire(agent),
            None,
            None,
            prompt_tokens=agent.TRAITS.prompt_tokens,
            default_output=agent.TRAITS.default_output,
        )
        result.append(target)
        try:
            current = read_current(agent, environ)
        except AgentcfgError as problem:
            target.static.append(agent.unreadable(problem, environ) or _unreadable(name, problem))
            continue
        shown = ", ".join(env.display(f.path, environ) for f in current)
        if not agent.configured(current, environ):
            target.static.append(
                Finding(
                    "not-configured",
                    SKIP,
                    name,
                    "no config file",
                    shown,
                    hint=f"to set it up: agentcfg switch with one of your profiles and --agent {name} "
                    "(agentcfg profile list shows them)",
                )
            )
            continue
        try:
            binding = agent.read(current)
            target.static += agentfiles.check(name, current, environ)
        except AgentcfgError as problem:
            target.static.append(_unparsable(name, problem))
            continue
        owner = binding.profile if binding.profile in profiles else None
        helpers = agent.key_helpers(current, binding, environ, profiles)
        target.static += keyhelpers.findings(name, helpers, environ, owner)
        target.base_url, target.model = binding.base_url, binding.model
        target.output_tokens, target.wire_api = binding.output_tokens, binding.wire_api
        target.context_window = binding.context_window
        target.endpoint_from = shown
        if not agent.locate(target, binding, doctor):
            continue
        found = _attribute(target, binding, profiles, None if switched is None else switched.get(name))
        if found.by == "url+model" and switched is None and _tied(target, profiles):  # the journal may settle it
            switched = _journal_switches(environ)
            found = _attribute(target, binding, profiles, switched.get(name))
        target.profile = found.profile
        target.profile_project = bool(found.profile) and profiles[str(found.profile)].source.startswith(PROJECT)
        if found.removed:
            target.static.append(_removed(target, found.removed, binding, shown))
        if unusable_endpoint(target):
            continue
        # Whose key it is: the profile an agentcfg helper fetches it for (None: that profile is gone),
        # else the profile the agent belongs to.
        key_profile = helper_profile(binding.helper, profiles) if is_helper(binding.helper) else None
        if not is_helper(binding.helper) and target.profile:
            key_profile = profiles[target.profile]
        agent.authorize(target, binding, key_profile, doctor)
        guard(target, profiles)
        if not target.base_url and not target.static:
            target.static.append(Finding("not-configured", SKIP, name, "no custom endpoint configured"))
    return result


def targets_from_profile(profile: Profile, agents: list[Agent], environ: env.Environ) -> list[Target]:
    """Each agent as `agentcfg switch PROFILE` would configure it, with the key `agentcfg exec` would give."""
    result = []
    for agent in agents:
        traits = agent.TRAITS
        anthropic = _wire(agent) != "openai"  # both at the host root: profile.anthropic_base_url
        target = Target(
            traits.name,
            _wire(agent),
            profile.anthropic_base_url if anthropic else profile.base_url,
            profile.model,
            profile=profile.name,
            profile_project=profile.source.startswith(PROJECT),
            prompt_tokens=traits.prompt_tokens,
            output_tokens=budget.output_tokens(profile, traits.prompt_tokens) if traits.bounds_output else None,
            wire_api="responses" if traits.protocol == "responses" else None,
            key_env=profile.key_env,
            context_window=agent.told_window(profile),
        )
        result.append(target)
        if reason := agent.unsupported(profile):
            target.base_url, target.context_window = None, None  # a switch leaves it alone: told nothing
            target.static.append(Finding("not-configured", SKIP, traits.name, reason))
            continue
        if profile.key_env:
            # As `agentcfg exec` (and a key command any version of the agent runs) would give it: the keyring first.
            helper = traits.key_helper_since == ()
            target.key_header = traits.helper_header
            target.key_owners = (profile.name,)
            try:
                target.key, source = keys.exec_key(profile, environ)
            except AgentcfgError as problem:
                target.static.append(wrong_origin(traits.name, problem, profile))
                continue
            target.key_source = f"{source} (as `agentcfg {'key get' if helper else 'exec'}` gives it)"
            if target.key is None:
                target.static.append(no_profile_key(traits.name, profile, environ))
            target.static += key_checks(target, target.key, profile)
        elif traits.stand_in_key:  # what `switch` writes: these refuse to run without a key
            target.key, target.key_source = PLACEHOLDER_KEY, "placeholder"
            target.static += key_checks(target, target.key, profile)
    return result
