"""What a key may be and where it may go. Pure.

A value given as a key is refused when an agent would expand it, a header could not carry it, or it is a stand-in
(check_value); a stored key goes only to the origins (scheme, host, port) of its profile's URLs (auth_headers).
"""

from __future__ import annotations

import re

from agentcfg import fields, redact
from agentcfg.errors import AgentcfgError
from agentcfg.patterns import lazy
from agentcfg.profile_model import Profile, is_loopback, is_placeholder

# -- what the key commands refuse ---------------------------------------------------------------------


def header_problem(value: str) -> str | None:
    """Why `value` cannot go into an HTTP header (httpx encodes headers as ASCII), or None."""
    if bad := re.search(r"[^\x00-\x7f]", value):
        return f"it contains a non-ASCII character at position {bad.start() + 1}: a key in a header is ASCII only"
    if bad := re.search(r"[\x00-\x1f\x7f]", value):
        return f"it contains a control character (U+{ord(bad.group()):04X}) at position {bad.start() + 1}"
    return None


# opencode expands these in opencode.json's raw text, where `switch --store-key-in-files` writes the key
# literally: a "key" holding one would be replaced by another variable or a file (~/.ssh/id_ed25519) and sent
# to the profile's host. The other agents' files that can hold a key (qwen's .env, Codex's config.toml,
# Claude Code's env block) expand nothing (see fields.py).
_OPENCODE_TEMPLATE = lazy(r"\{(env|file):", re.IGNORECASE)


def template_problem(value: str) -> str | None:
    """Why `value` cannot be written into an agent's file as a key (an agent would expand it), or None."""
    if found := _OPENCODE_TEMPLATE.search(value):
        return (
            f"it contains {found.group()!r}, which opencode replaces with a variable or a file's content "
            "(a key is never a template)"
        )
    return None


MIN_LENGTH = redact.MIN_SECRET_LENGTH  # a shorter key would not be masked in agentcfg's output (redact.register)
# Room for any real key: OpenAI's sk-proj- keys are ~164 characters, a gateway's JWT 1-2k; beyond 4k a key no
# longer fits a server's header limit (nginx reads a request line and each header into 8k buffers with Bearer).
MAX_LENGTH = 4_096
# What people (and agentcfg, for keyless profiles) put where a key must be: never a real key when typed.
_STAND_IN = lazy(
    r"<[^<>]*>|\[[^\[\]]*\]|(sk-)?x{3,}|(your|my)[-_ ]?(api[-_ ]?)?(key|token|secret)([-_ ]?here)?"
    r"|change[-_ ]?me|replace[-_ ]?me|placeholder|api[-_ ]?key|\.{3,}|…",
    re.IGNORECASE,
)
# $NAME, ${NAME} (POSIX shells, fish) and %NAME% (cmd.exe) left as they were typed: the shell did not expand them.
_UNEXPANDED = lazy(r"\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\}|%[A-Za-z_][A-Za-z0-9_]*%")


def _count(n: int) -> str:
    return f"{n:,} character" + ("" if n == 1 else "s")


def check_value(value: str, *, typed: bool = False) -> str | None:
    """Why `value` cannot be a key as typed, or None when it can.

    `typed`: the value is one a person gives agentcfg as a key (key set, profile add --key-stdin, init), so a
    stand-in (agentcfg's own `agentcfg-no-key`, `EMPTY`, `<key>`) and a key too short to be masked are refused
    too; without it (a key read from an agent's file), the stand-in agentcfg writes for keyless profiles passes.
    """
    if not value:
        return "the key is empty"
    if typed and (is_placeholder(value) or _STAND_IN.fullmatch(value)):
        return f"{value!r} is a placeholder, not a key: give the key the provider issued"
    if _UNEXPANDED.fullmatch(value):
        return f"it is {value}, the name of a variable the shell did not expand (single quotes keep it): give the key"
    if len(value) > MAX_LENGTH:
        return f"it is {_count(len(value))}; a key is at most {MAX_LENGTH:,} (was a file given instead of a key?)"
    if typed and len(value) < MIN_LENGTH:
        return f"it is {_count(len(value))}; a key is at least {MIN_LENGTH}"
    if value.lower().startswith("bearer "):
        return "it starts with 'Bearer ': store the key alone; agents add that prefix themselves"
    if re.search(r"\s", value):
        return "it contains whitespace (a line break or space from copying?)"
    if re.search(r"[\"'`]", value):
        return "it contains quotes: store the key without them"
    return header_problem(value) or template_problem(value)


# -- which hosts a stored key may go to --------------------------------------------------------------


def origin_text(url: str) -> str:
    """scheme://host:port as origin() sees it (loopback names unified), e.g. http://loopback:8000."""
    scheme, host, port = origin(url)
    return f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"


def profile_origins(profile: Profile) -> list[str]:
    return sorted({origin_text(u) for u in (profile.base_url, profile.anthropic_base_url) if u})


def origin(url: str) -> tuple[str, str, int]:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:  # from an agent's file ("http://[::1"): an origin no profile has
        return "", "", -1
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if is_loopback(host):
        host = "loopback"  # one machine, whichever name reaches it
    try:
        port = parts.port
    except ValueError:  # not a port: matches no profile
        return scheme, host, -1
    return scheme, host, port or {"http": 80, "https": 443}.get(scheme, 0)


def key_allowed(profile: Profile, url: str) -> bool:
    """Whether `url` is on one of the profile's own hosts (same scheme, host and port)."""
    own = {origin(u) for u in (profile.base_url, profile.anthropic_base_url) if u}
    return origin(url) in own


def auth_headers(profile: Profile, url: str, key: str | None) -> dict[str, str]:
    """The Authorization header for a request to `url`, refusing to send a profile's key anywhere else."""
    if not key:
        return {}
    if not key_allowed(profile, url):
        raise AgentcfgError(
            f"refusing to send the key of profile {profile.name!r} to {url}: "
            f"it is not one of the profile's hosts ({profile.base_url})",
            hint="This is a bug in agentcfg if you did not ask for it; please report it.",
        )
    if reason := header_problem(key):  # the last guard: httpx would raise UnicodeEncodeError mid-run
        raise AgentcfgError(
            f"the key of profile {profile.name!r} cannot be sent: {reason}",
            hint=f"Store it again: `agentcfg key set {profile.name}`.",
        )
    return {"Authorization": f"Bearer {key}"}


def refuse_runtime_variable(found: Profile) -> None:
    """Never put a key into a variable that steers programs (PATH, LD_PRELOAD, NODE_OPTIONS, ...). fields.py
    refuses such a key_env when a profile is written or loaded; this is the last check before one is set."""
    from agentcfg import fixes  # lazy: `key get` loads this module, and only this refusal needs a fix line

    variable = str(found.key_env)
    if variable.upper() in fields.RUNTIME_VARIABLES or variable.upper().startswith(fields.RUNTIME_PREFIXES):
        raise AgentcfgError(
            f"profile {found.name!r} names {variable} as its key variable, a variable that steers programs (not "
            "one that holds a key): agentcfg sets no key into it",
            where=str(found.source),
            hint=f"Give the profile a variable of its own: "
            f"`{fixes.profile_set(found.name, key_env=found.name.upper().replace('-', '_') + '_API_KEY')}`.",
        )
