"""What a profile is: the record every module passes around, its `[route]` table, and the host and key
predicates they need. Pure.

The leaf under the profile modules: loading (profiles), parsing (profile_parse), routes (route/spec), budget,
trust and the keystore import it, and it imports none of them.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, NamedTuple

from agentcfg import fields
from agentcfg.lazyclass import dataclass
from agentcfg.patterns import lazy
from agentcfg.redact import PLACEHOLDER_KEY

# \A...\Z (not ^...$): `$` also matches before a trailing newline, and NAME_RE.match is used as a test.
NAME_RE = lazy(rf"\A{fields.NAME_PATTERN}\Z")
BUILT_IN = "built-in"
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}
# Values people (and agentcfg) put where a key must be but none is needed: never a real key.
PLACEHOLDER_KEYS = {PLACEHOLDER_KEY, "sk-local", "sk-local-anything", "empty", "none", "dummy", "sk-xxx",
                    "sk-dummy", "no-key", "token", "x"}  # fmt: skip


def is_placeholder(value: str) -> bool:
    return value.lower() in PLACEHOLDER_KEYS


def is_loopback(host: str) -> bool:
    """localhost or a loopback address (not a DNS name that merely starts with "127.")."""
    if host.lower() in LOOPBACK_HOSTS:
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


PROJECT = "project:"  # the source prefix of a profile from a project's .agentcfg/profiles/

DEFAULT_HOST = "127.0.0.1"
DEFAULT_COOLDOWN = 30  # s: LiteLLM's default cooldown is 5 s; a vLLM restart takes minutes
DEFAULT_TIMEOUT = 120  # s a leg may take to start answering (a GPU vLLM prefills an agent's prompt in seconds)
WILDCARD_HOSTS = {"0.0.0.0", "::", "[::]"}  # listen everywhere: agents here still connect over loopback


class Route(NamedTuple):
    """The legs a route's router sends requests to, first to last, and how it treats them. A NamedTuple, not a
    dataclass: creating one is a hundredth of `agentcfg key get`, which loads this module for Profile."""

    primary: str
    fallbacks: tuple[str, ...]
    max_parallel: int | None = None  # the primary's concurrency: requests beyond it go to a fallback
    cooldown: int = DEFAULT_COOLDOWN
    host: str = DEFAULT_HOST
    timeout: int = DEFAULT_TIMEOUT  # a leg that has not started answering by then is failing

    @property
    def beyond_loopback(self) -> bool:
        """Whether other machines reach the router: its file must then name its key (no serve may add it)."""
        return not is_loopback(self.host)

    @property
    def legs(self) -> tuple[str, ...]:
        return (self.primary, *self.fallbacks)

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> Route:
        """From a profile file's validated `[route]` table."""
        return cls(
            primary=table["primary"],
            fallbacks=tuple(table["fallbacks"]),
            max_parallel=table.get("max_parallel"),
            cooldown=table.get("cooldown", DEFAULT_COOLDOWN),
            host=table.get("host", DEFAULT_HOST),
            timeout=table.get("timeout", DEFAULT_TIMEOUT),
        )  # `router_key = true` of an older file: every route has one now

    def table(self) -> dict[str, Any]:
        """The `[route]` table as written (defaults left out, so a file says only what was chosen)."""
        data: dict[str, Any] = {"primary": self.primary, "fallbacks": list(self.fallbacks)}
        if self.max_parallel is not None:
            data["max_parallel"] = self.max_parallel
        if self.cooldown != DEFAULT_COOLDOWN:
            data["cooldown"] = self.cooldown
        if self.timeout != DEFAULT_TIMEOUT:
            data["timeout"] = self.timeout
        if self.host != DEFAULT_HOST:
            data["host"] = self.host
        return data


# dataclasses writes __init__, __repr__, __eq__ and __hash__ by compiling their source in every process: for
# Profile, half a millisecond of `agentcfg key get`, which Claude Code and Codex run on every start. They are
# written out below instead, as dataclasses would write them (tests/test_profile_model.py compares the two).
@dataclass(frozen=True, init=False, repr=False, eq=False)
class Profile:
    """A provider: where its OpenAI (and Anthropic) endpoint is, the model, and how its key is found."""

    name: str
    base_url: str
    model: str
    anthropic_base_url: str | None = None
    key_env: str | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    description: str | None = None
    route: Route | None = None  # a route's legs (agentcfg route add); None for a server's profile
    source: str = BUILT_IN

    def __init__(
        self,
        name: str,
        base_url: str,
        model: str,
        anthropic_base_url: str | None = None,
        key_env: str | None = None,
        context_window: int | None = None,
        max_output_tokens: int | None = None,
        description: str | None = None,
        route: Route | None = None,
        source: str = BUILT_IN,
    ) -> None:
        values = (name, base_url, model, anthropic_base_url, key_env, context_window, max_output_tokens, description,
                  route, source)  # fmt: skip
        for field, value in zip(self.__dataclass_fields__, values, strict=True):
            object.__setattr__(self, field, value)  # frozen: as dataclasses' own __init__ sets them

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, field) for field in self.__dataclass_fields__)

    def __repr__(self) -> str:
        shown = ", ".join(f"{field}={getattr(self, field)!r}" for field in self.__dataclass_fields__)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    @property
    def needs_key(self) -> bool:
        return self.key_env is not None

    @property
    def is_local(self) -> bool:
        from urllib.parse import urlsplit

        return is_loopback(urlsplit(self.base_url).hostname or "")

    @property
    def label(self) -> str:
        return self.description or self.name

    def fields(self) -> dict[str, Any]:
        """The TOML/JSON fields, without name and source; unset ones left out."""
        data = asdict(self)
        del data["name"], data["source"]
        if self.route is not None:
            data["route"] = self.route.table()
        return {k: v for k, v in data.items() if v is not None}
