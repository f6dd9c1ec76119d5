"""MCP servers' secrets in the keyring: one value per variable (an agent's environment holds one), stored under
model.secret_name(VAR) and bound to the origins of the remote servers that send it, as a profile's key is bound
to its hosts: a secret goes to a URL only once its value was given for that URL's origin.

A stdio server's secret reaches no host by agentcfg: it is bound to none, and given to every agent started
with `agentcfg exec`."""

from __future__ import annotations

from collections.abc import Mapping

from agentcfg import env
from agentcfg.errors import AgentcfgError
from agentcfg.key_rules import origin_text
from agentcfg.mcp.model import McpServer, secret_name


def origins_of(variable: str, servers: Mapping[str, McpServer]) -> list[str]:
    """The origins of the remote servers that send `variable` (in a header): where its value may go."""
    return sorted({origin_text(s.url) for s in servers.values() if s.url and s.remote and variable in s.variables()})


def unbound(variable: str, servers: Mapping[str, McpServer], bound: list[str] | None) -> list[str]:
    """The origins `variable` would go to that its stored value was not given for."""
    return [o for o in origins_of(variable, servers) if o not in (bound or [])]


def store(values: Mapping[str, str], servers: Mapping[str, McpServer], environ: env.Environ) -> None:
    """Keep each value in the keyring, bound to the origins of the servers in `servers` that send it."""
    if not values:
        return
    from agentcfg import keystore  # lazy: the keyring, for the commands that store a secret

    keys = keystore.KeyStore(environ)
    for variable, value in values.items():
        keys.set(secret_name(variable), value)
        keys.bind(secret_name(variable), origins_of(variable, servers))


def stored(variables: list[str], environ: env.Environ) -> dict[str, tuple[str, list[str] | None]]:
    """The values the keyring holds for `variables`, each with the origins it is bound to."""
    if not variables:
        return {}
    from agentcfg import keystore  # lazy: the keyring, for the commands that read a secret

    keys = keystore.KeyStore(environ)
    found = {}
    for variable in variables:
        value = keys.get(secret_name(variable))
        if value is not None:
            found[variable] = (value, keys.origins(secret_name(variable)))
    return found


def forget(variable: str, environ: env.Environ) -> bool:
    from agentcfg import keystore  # lazy: the keyring, for the commands that remove a secret

    return keystore.KeyStore(environ).delete(secret_name(variable))


def for_agents(servers: Mapping[str, McpServer], environ: env.Environ) -> tuple[dict[str, str], list[str]]:
    """The secrets `agentcfg exec` gives an agent: every variable of agentcfg's set the keyring holds, and it may
    send (bound to the origin of each remote server that sends it); notes on those held back. A variable the
    shell already exports is left to the shell (the agents would read that one)."""
    wanted = sorted({v for s in servers.values() for v in s.variables() if not environ.get(v)})
    variables, notes = {}, []
    for variable, (value, bound) in stored(wanted, environ).items():
        if stray := unbound(variable, servers, bound):
            notes.append(
                f"MCP secret {variable} was not given to the agent: its value was stored for other hosts than "
                f"{', '.join(stray)}; give it again with `agentcfg mcp secret {variable}` if it is meant for them"
            )
            continue
        variables[variable] = value
    return variables, notes


def check_value(variable: str, value: str) -> None:
    from agentcfg.key_rules import check_value as why_not  # lazy: key_rules' rules for a value given as a key

    if reason := why_not(value, typed=False):
        raise AgentcfgError(f"not storing the value of {variable}: {reason}", hint=f"Give {variable}'s value alone.")
