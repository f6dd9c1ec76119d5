"""The data doctor works on: what each agent will send (Target) and what doctor found (Finding)."""

from __future__ import annotations

from dataclasses import field

from agentcfg.lazyclass import dataclass

FAIL, WARN, PASS, SKIP = "fail", "warn", "pass", "skip"
# Static findings after which probing an agent would only add noise.
BLOCKING = {"config-unreadable", "codex-wire-api", "claude-login-required", "not-configured"}
# The agent's own refusals of its files (doctor/agentfiles.py): it never sends what a probe would test,
# and what else its files say (no login, no key) is moot.
REFUSALS = {
    "codex-config-rejected",
    "opencode-config-rejected",
    "opencode-provider-disabled",
    "opencode-model-undefined",
    "qwen-oauth-selected",
    "qwen-auth-type",
    "qwen-config-rejected",
    "claude-settings-invalid",
    "copilot-config-rejected",
}
BLOCKING |= REFUSALS
# A cause, and the findings it explains for the same agent: only the cause is reported.
EXPLAINS = {
    "key-malformed": {"key-rejected", "key-missing"},  # the key cannot be sent as it is
    "profile-removed": {"key-missing"},  # its key went with the profile
}


@dataclass(frozen=True)
class Finding:
    """One thing doctor concluded, for an agent or for the endpoint, with its evidence and fix."""

    id: str
    status: str  # fail, warn, pass or skip
    agent: str | None  # None: about the endpoint or the server, not one agent
    summary: str  # one line, in the user's words: what is wrong and what it does to the agent
    evidence: str = ""  # what doctor saw (redacted): a status and the server's message, a file's line
    fix: str = ""  # shell command(s) that fix it, runnable as pasted (agentcfg.fixes builds them); "" if none
    hint: str = ""  # what to do, in words, where no command can do it (or what the command does not cover)
    leg: str | None = None  # a route's leg (its profile) this was found on, probed directly; None: not a leg's
    server: str | None = None  # an MCP server's name (doctor/mcp.py): about it, for the agents its summary names


@dataclass
class Target:
    """What one agent will talk to, as its files and this environment say (or as a profile would)."""

    agent: str
    protocol: str  # "openai" (chat/responses) or "anthropic" (Claude Code's /v1/messages)
    base_url: str | None
    model: str | None
    key: str | None = None  # the value the agent would send (never printed)
    key_source: str = "none"  # e.g. "env TAOTOKEN_API_KEY", "keyring (as agentcfg exec gives it)", "placeholder"
    key_env: str | None = None  # the variable the agent reads, if it reads one
    key_header: str = "bearer"  # bearer, x-api-key or both (Claude Code's two variables)
    profile: str | None = None  # the profile it matches, for fixes like `agentcfg switch NAME`
    profile_project: bool = False  # that profile is a project's (.agentcfg/profiles): `profile set` refuses it
    output_tokens: int | None = None  # what it asks for; None: its default
    default_output: int = 32000
    prompt_tokens: int = 0
    wire_api: str | None = None  # Codex only
    context_window: int | None = None  # the window its files tell it (it compacts by this); None: not set
    proxy: str | None = None  # the proxy its requests go through, if a proxy variable applies
    ca_file: str | None = None  # the extra CA certificates it trusts (from its variable), if any
    static: list[Finding] = field(default_factory=list)  # from its files and the environment
    # For the host guard (doctor._guard): where the endpoint and the key came from.
    endpoint_from: str = ""  # the file or variable that set base_url, e.g. "~/.claude/settings.json"
    endpoint_project: bool = False  # base_url came from a project's file in the working directory
    key_owners: tuple[str, ...] = ()  # the profiles the key belongs to (its keyring entry, or naming its variable)
    key_from_project: bool = False  # the key itself came from the project's file: the project's, not yours
    key_variable: str | None = None  # the variable of this shell the key was read from (None: not from the shell)
    key_withheld: bool = False  # the guard kept the key back: the probes go without it
    leg: str | None = None  # `doctor ROUTE`: the leg (its profile) these probes go to directly; None: the router
