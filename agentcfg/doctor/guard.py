"""The host guard: a key goes only to the hosts of the profiles it belongs to, and a project's file in the working
directory never sends your key (or a credential header of yours) to a host it chose. Also a base URL urllib cannot
split, dropped before any guard splits it."""

from __future__ import annotations

from agentcfg import env, fields, fixes, redact
from agentcfg.agents import shapes
from agentcfg.agents.base import Header, is_credential
from agentcfg.doctor.model import FAIL, WARN, Finding, Target
from agentcfg.keystore import key_allowed
from agentcfg.profiles import PROJECT, Profile, is_placeholder


def unusable_endpoint(target: Target) -> bool:
    """Drop (with a FAIL) a base URL urllib cannot split: it comes from a file, perhaps a cloned repository's,
    and every guard below splits it. The value is not shown: it may hold anything, a password too."""
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


def guard(target: Target, profiles: dict[str, Profile]) -> None:
    """One rule for every key doctor sends, whatever its source.

    A key that belongs to profiles (its keyring entry or helper; a variable they name as key_env)
    goes only to those profiles' hosts. A key no profile owns (plaintext in a file, a variable no
    profile names) goes only to an endpoint from your own files or shell, never to one a project's
    file in the working directory set; a key that came from that project's file is its own. A variable of
    this shell that no profile may read goes to no host that only a project's profiles have.
    A withheld key becomes a FAIL, and the probes go without it.
    """
    if not target.key or not target.base_url or is_placeholder(target.key):
        return
    host = shapes.host(target.base_url)
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
    hosts = [p for p in profiles.values() if target.base_url and key_allowed(p, target.base_url)]
    if not hosts or not all(p.source.startswith(PROJECT) for p in hosts):
        return None
    variable, project = str(target.key_variable), hosts[0]
    own = project.key_env == variable  # the profile's own variable: approving it is the fix
    from agentcfg import trust  # lazy: the approval command, for a project profile's host only

    return Finding(
        "key-wrong-host",
        FAIL,
        target.agent,
        f"{target.agent} would send {variable} from this shell to {shapes.host(str(target.base_url))}, the host of "
        f"project profile {project.name}, which may not read that variable (you have not approved it): "
        "doctor withheld it",
        f"key from {target.key_source}; endpoint {target.base_url}",
        trust.approve_command(project) if own else "",
        f"if {variable} holds {project.name}'s key, approve it with that command; otherwise store the key "
        f"({fixes.key_set(project.name)}) and switch again"
        if own
        else f"start {target.agent} without {variable} in its environment (it is not {project.name}'s key variable)",
    )


def header_findings(
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
    if not target.base_url:
        return []
    hosts = [p for p in profiles.values() if key_allowed(p, target.base_url)]
    credentials = [h for h in headers if is_credential(h, environ)]
    if not credentials:
        return []
    host = shapes.host(target.base_url)
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
