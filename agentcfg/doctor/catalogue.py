"""Every finding id doctor can report, in one place: its severities, what triggers it, the fixes it builds.

A new finding starts here (and in docs/doctor.md, which tests/doctor/test_catalogue.py holds to this list);
its producer is the module that knows the cause: rules.py and its problem rules for what a probe showed,
collect.py and agentfiles.py for the agent's files, keyhelpers.py, localserver.py, thinking.py, route.py.
`Verdict` (verdicts.py) refuses an id that is not here, and the doctor test-suite fails on a Finding with one
(tests/doctor/conftest.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from agentcfg import fixes
from agentcfg.doctor.model import FAIL, PASS, SKIP, WARN
from agentcfg.lazyclass import dataclass

Builder = Callable[..., str]


@dataclass(frozen=True)
class Entry:
    """One finding doctor can report: when, with which statuses, and how it is fixed."""

    id: str
    severities: frozenset[str]  # the statuses it is reported with, as docs/doctor.md states them
    trigger: str  # one line: what makes doctor report it
    fix: tuple[Builder, ...] = ()  # the agentcfg.fixes builders its `fix` lines are made of; (): hint only
    # Said as a pass for an agent whose requests all worked (the check it names came out well).
    passed: str = ""


Row = tuple[str, str, str, tuple[Builder, ...]] | tuple[str, str, str, tuple[Builder, ...], str]


def _entries(*rows: Row) -> Iterator[Entry]:
    """(id, severities joined by commas, trigger, fix builders[, passed]) rows as Entries."""
    for row in rows:
        ident, severities, trigger, builders, *passed = row
        yield Entry(ident, frozenset(severities.split(",")), trigger, builders, *passed)


_PROFILE = (fixes.profile_set, fixes.switch)
_KEY = (fixes.key_set, fixes.exec_agent)

CATALOGUE: dict[str, Entry] = {
    entry.id: entry
    for entry in _entries(
        # -- routes (doctor/route.py)
        ("route-open", FAIL, "the running router was started without a router key", (fixes.command,)),
        ("route-not-running", FAIL, "the route's LiteLLM has no live process", (fixes.command,)),
        (
            "route-not-answering",
            FAIL,
            "the router's process runs but its liveliness check does not answer",
            (fixes.command,),
        ),
        ("route-leg-down", WARN, "a leg answered nothing while the router answered the agents", ()),
        ("route-serving", PASS, "the router answered the agents' requests", ()),
        ("route-down", FAIL, "every leg fails and the router answers none of the agents' requests", ()),
        (
            "route-not-serving",
            FAIL,
            "the router answers its health check but no agent request, a leg answers directly",
            (fixes.command,),
        ),
        # -- reaching the server (rules: classify, then the problem rules)
        (
            "server-unreachable",
            FAIL,
            "every request of the agent was refused, or its host does not resolve",
            (),
            "reached the server",
        ),
        ("server-not-answering", f"{FAIL},{WARN}", "the server took the connection but sent no status in time", ()),
        ("server-slow", WARN, "a status came, then no complete answer within the deadline", ()),
        ("proxy-intercepts-local", f"{FAIL},{WARN}", "a live proxy applies to a loopback endpoint", (fixes.command,)),
        (
            "proxy-unreachable",
            FAIL,
            "nothing answers on the proxy's port, or the host works only directly",
            (fixes.command,),
        ),
        ("tls-untrusted", FAIL, "the endpoint's certificate does not verify", ()),
        # -- the key (collect.py, keyhelpers.py, rules)
        (
            "key-missing",
            f"{FAIL},{WARN},{SKIP}",
            "the agent sends no key (its variable unset) where one is wanted",
            (*_KEY, fixes.command),  # command: `agentcfg trust` approving a project profile's variable
        ),
        ("key-malformed", FAIL, "the key cannot be sent as a header (whitespace, a line break)", _KEY),
        (
            "key-rejected",
            FAIL,
            "401/403 (or LiteLLM's key errors) to the key the agent sends",
            _KEY,
            "the key was accepted (or none is needed)",
        ),
        (
            "key-wrong-host",
            FAIL,
            "the key the agent would send belongs to another host: doctor withheld it",
            (fixes.switch, fixes.key_set, fixes.command),
        ),
        ("header-to-other-host", WARN, "a credential-looking header of yours goes to a profile's host", ()),
        (
            "key-placeholder-to-remote",
            FAIL,
            "agentcfg's stand-in key would go to a host off this machine",
            (*_PROFILE, fixes.key_set),
        ),
        (
            "profile-removed",
            f"{FAIL},{WARN}",
            "the agent's files name a profile that no longer exists",
            (fixes.switch,),
        ),
        (
            "key-helper-not-isolated",
            f"{FAIL},{WARN}",
            "an earlier agentcfg's key helper, not isolated, runs in the project",
            (fixes.switch,),
        ),
        # -- paths, models and shapes (rules)
        ("base-url-path", FAIL, "the base URL answers 404 (or a web page)", _PROFILE),
        ("base-url-redirect", f"{FAIL},{WARN}", "a request was redirected", _PROFILE),
        (
            "model-not-found",
            f"{FAIL},{WARN}",
            "the server (or a gateway's upstream) has no such model, or /models lacks it",
            _PROFILE,
        ),
        # The order of the entries with `passed` is the order their passes are listed in (passes()).
        (
            "tool-parser-missing",
            FAIL,
            "a request with tools is refused, or vllm serve runs without a tool parser",
            (),
            "a request with tools was accepted",
        ),
        (
            "stream-broken",
            FAIL,
            "a stream the agent's parser cannot read, or none where it asked for one",
            (),
            "streaming works",
        ),
        (
            "response-not-openai",
            FAIL,
            "a 2xx that is not what the agent's client parses",
            (),
            "answers in the shape the agent parses",
        ),
        ("responses-api-missing", FAIL, "POST /responses answers 404 while /models works", ()),
        ("codex-wire-api", FAIL, 'wire_api in Codex\'s provider table is not "responses"', (fixes.switch,)),
        (
            "context-window-too-large",
            FAIL,
            "the agent is told a larger window than the server's max_model_len",
            _PROFILE,
        ),
        (
            "context-limit-exceeded",
            f"{FAIL},{WARN},{PASS}",
            "prompt or output do not fit the server's window",
            _PROFILE,
        ),
        # -- Claude Code's login (collect.py, rules)
        (
            "claude-auth-conflict",
            FAIL,
            "ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY are both set",
            (fixes.command, fixes.switch),
        ),
        (
            "claude-api-key-set",
            WARN,
            "ANTHROPIC_API_KEY without a token or login: claude asks at start",
            (fixes.command, fixes.switch),
        ),
        (
            "claude-login-required",
            f"{FAIL},{WARN}",
            "Claude Code has no key, token, helper or login for its endpoint",
            (fixes.switch,),
        ),
        ("claude-oauth-expired", FAIL, "the claude.ai login has expired", (fixes.switch,)),
        # -- what each agent refuses in its own files (agentfiles.py)
        ("codex-config-rejected", FAIL, "Codex refuses its config.toml", (fixes.switch,)),
        ("codex-legacy-profiles", WARN, "[profiles.x] tables: `codex --profile x` refuses to start", ()),
        ("codex-model-slot", WARN, "review_model differs from agentcfg's model", ()),
        ("opencode-config-rejected", FAIL, "opencode refuses its file", (fixes.switch,)),
        ("copilot-config-rejected", FAIL, "GitHub Copilot CLI refuses its providers.json", (fixes.switch,)),
        ("opencode-provider-disabled", FAIL, "the provider `model` names is disabled (or not enabled)", ()),
        (
            "opencode-model-undefined",
            FAIL,
            "`model` names an agentcfg provider or model the file lacks",
            (fixes.switch,),
        ),
        ("opencode-model-slot", WARN, "small_model names another model than agentcfg's", ()),
        ("gemini-config-rejected", f"{FAIL},{WARN}", "Gemini CLI refuses a value in its files", (fixes.switch,)),
        ("gemini-dotenv-hidden", WARN, "Gemini CLI loads another .env here than the one switch writes", ()),
        ("qwen-oauth-selected", FAIL, "qwen-code's auth type is the discontinued qwen-oauth", (fixes.switch,)),
        ("qwen-auth-type", FAIL, "an unknown or foreign auth type over agentcfg's provider", (fixes.switch,)),
        ("qwen-config-rejected", FAIL, "a modelProviders entry qwen-code crashes on", ()),
        (
            "cline-config-ignored",
            FAIL,
            "providers.json breaks cline's schema: it uses its own provider",
            (fixes.switch,),
        ),
        ("cline-provider-missing", FAIL, "lastUsedProvider names no entry of providers.json", (fixes.switch,)),
        ("cline-base-url", WARN, "cline's base URL has no path (no /v1)", (fixes.switch,)),
        ("cline-key-in-file", WARN, "cline's key is in plaintext in providers.json", (fixes.key_set, fixes.exec_agent)),
        ("droid-settings-rejected", FAIL, "Droid drops its whole settings.json (an unknown provider)", (fixes.switch,)),
        ("droid-model-dropped", f"{FAIL},{WARN}", "a customModels entry Droid leaves out (a key missing)", ()),
        ("droid-local-override", WARN, "settings.local.json overrides agentcfg's default model or customModels", ()),
        ("droid-legacy-config", WARN, "the legacy config.json custom_models, where ${VAR} is not expanded", ()),
        ("claude-settings-invalid", FAIL, "Claude Code ignores its settings file as invalid", ()),
        (
            "claude-output-too-small",
            WARN,
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS is below the 4096 Claude Code plans with",
            _PROFILE,
        ),
        ("claude-model-slot", WARN, "another model slot still names a Claude model on a custom endpoint", ()),
        # -- the local vLLM (localserver.py)
        ("vllm-enforce-eager", WARN, "the vllm serve for the port runs with --enforce-eager", ()),
        ("vllm-stray-workers", FAIL, "vLLM workers of yours without a live vllm serve parent", (fixes.command,)),
        ("vllm-window-differs", WARN, "vllm serve's --max-model-len is larger than the agents are told", _PROFILE),
        ("vllm-parser-differs", WARN, "the server's tool or reasoning parser is not its family's", ()),
        ("vllm-duplicate-servers", WARN, "more than one vllm serve for one port", ()),
        (  # the fix: serve/unit.py's `systemctl disable --now` lines, joined by fixes.then
            "vllm-duplicate-units",
            f"{FAIL},{WARN}",
            "several systemd units start vLLM on the agents' port",
            (fixes.then,),
        ),
        # -- thinking models with tools (thinking.py)
        ("thinking-reasoning-dropped", FAIL, "turn 2 is refused for want of the reasoning the agent dropped", ()),
        ("thinking-early-stop", FAIL, "turn 2 ends with no text and no tool call after a turn 1 that reasoned", ()),
        ("thinking-tool-markup", FAIL, "a tool call written as text", ()),
        ("thinking-tools", f"{PASS},{SKIP}", "the two-turn tool probe went on (pass) or could not check (skip)", ()),
        # -- the MCP servers the agents start (mcp.py; the wire: agentcfg/mcp/probe.py)
        ("mcp-config-unreadable", WARN, "an agent's user-scope MCP file cannot be read or parsed", ()),
        ("mcp-command-missing", FAIL, "a stdio server's program is not on PATH (or not an executable file)", ()),
        (
            "mcp-secret-missing",
            FAIL,
            "a server's secret variable is neither set here nor in the keyring",
            (fixes.command,),
        ),
        (
            "mcp-secret-keyring-only",
            WARN,
            "a server's secret is in the keyring but not set here: the agent started plainly lacks it",
            (fixes.exec_agent,),
        ),
        (
            "mcp-secret-in-file",
            WARN,
            "a server's secret is written in plain text in the agent's file",
            (fixes.command,),
        ),
        (
            "mcp-secret-wrong-host",
            FAIL,
            "a keyring secret was not stored for the remote server's origin: doctor withheld it",
            (fixes.command,),
        ),
        ("mcp-keyring-unavailable", WARN, "a secret is not set here and the keyring cannot be read", ()),
        ("mcp-unmodelled", SKIP, "a server has settings doctor does not check", ()),
        ("mcp-ok", PASS, "the server answered initialize", ()),
        ("mcp-no-answer", FAIL, "a server gave no answer to initialize within the deadline", ()),
        ("mcp-exited", FAIL, "a stdio server ended (or could not start) before it answered", ()),
        ("mcp-bad-answer", FAIL, "an answer that is no initialize result (text, a JSON-RPC error, a 5xx)", ()),
        ("mcp-unreachable", FAIL, "no connection to a remote server: refused, no such host, TLS, timeout", ()),
        ("mcp-unauthorized", f"{FAIL},{SKIP}", "a remote server answered 401/403", (fixes.command,)),
        ("mcp-wrong-url", FAIL, "a remote server answered 404/405: the wrong URL or transport", ()),
        # -- other ids
        ("config-unreadable", FAIL, "the agent's config cannot be read", (fixes.command,)),
        ("not-configured", SKIP, "no config for the agent, or an endpoint doctor does not probe", ()),
        ("server-error", FAIL, "a 5xx (or a gateway's upstream failing)", ()),
        ("rate-limited", WARN, "a 429", ()),
        ("request-rejected", FAIL, "another 4xx", ()),
    )
}


def entry(ident: str) -> Entry:
    """The catalogue's entry for an id; a KeyError that says where ids are added for one it lacks."""
    try:
        return CATALOGUE[ident]
    except KeyError:
        raise KeyError(f"finding id {ident!r} is not in agentcfg/doctor/catalogue.py") from None


def passes() -> dict[str, str]:
    """The ids said as a pass for an agent whose requests all worked, with what the pass says, in the
    catalogue's order (the order the report lists them in)."""
    return {e.id: e.passed for e in CATALOGUE.values() if e.passed}
