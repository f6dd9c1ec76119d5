"""Which proxy an agent's request to a URL goes through, by the rules of that agent's HTTP stack.

Most stacks: HTTPS_PROXY/HTTP_PROXY by scheme, and NO_PROXY with names, IPs and CIDR ranges. An agent's
TRAITS say where its stack differs: reads_all_proxy (Codex's Rust reqwest also takes ALL_PROXY),
ignores_no_proxy (qwen-code's undici ProxyAgent sends every request through HTTPS_PROXY, then HTTP_PROXY, and
never reads NO_PROXY). Lower-case variants count everywhere (lower case first, as curl does).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from agentcfg.agents import AGENTS


def _get(environ: Mapping[str, str], name: str) -> str | None:
    return environ.get(name.lower()) or environ.get(name.upper()) or None


def bypassed(host: str, port: int | None, no_proxy: str) -> bool:
    """Whether NO_PROXY (comma or space separated: names, .suffixes, IPs, CIDR ranges, *) covers host."""
    host = host.lower().strip("[]")
    for entry in re.split(r"[,\s]+", no_proxy.strip()):
        entry = entry.lower().strip()
        if not entry:
            continue
        if entry == "*":
            return True
        name, entry_port = entry, ""
        if entry.startswith("[") and "]:" in entry:  # [::1]:8000
            name, entry_port = entry[1:].split("]:", 1)
        elif entry.count(":") == 1:  # host:port (an IPv6 address has several colons)
            name, entry_port = entry.split(":")
        if entry_port and port is not None and entry_port != str(port):
            continue
        name = name.strip("[]")
        try:
            if ipaddress.ip_address(host) in ipaddress.ip_network(name, strict=False):
                return True
            continue
        except ValueError:
            pass
        suffix = name.lstrip("*").lstrip(".")
        if host == suffix or host.endswith("." + suffix):
            return True
    return False


def proxy_for(agent: str, url: str, environ: Mapping[str, str]) -> str | None:
    """The proxy URL `agent` would send a request to `url` through, or None for a direct connection (an agent
    not registered, e.g. agentcfg's own bench, by the rules most stacks share)."""
    known = AGENTS.get(agent)
    parts = urlsplit(url)
    if known and known.TRAITS.ignores_no_proxy:
        return _get(environ, "https_proxy") or _get(environ, "http_proxy")
    proxy = _get(environ, "https_proxy" if parts.scheme == "https" else "http_proxy")
    if proxy is None and known and known.TRAITS.reads_all_proxy:
        proxy = _get(environ, "all_proxy")
    if proxy is None:
        return None
    no_proxy = _get(environ, "no_proxy") or ""
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        port = None
    return None if bypassed(parts.hostname or "", port, no_proxy) else proxy
