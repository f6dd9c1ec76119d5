"""What is data about an agent: its Traits record (agents/base.py has the Agent interface, its behaviour).

A NamedTuple in a module without `from __future__ import annotations`: every command loads every agent, and a
frozen dataclass of this many fields costs ~2.5 ms of start-up to build, a NamedTuple of real types ~1 ms (with
string annotations, ~4 ms: typing evaluates each).
"""

from collections.abc import Mapping
from typing import NamedTuple


class Traits(NamedTuple):
    """What is data about an agent (its behaviour is its module's functions): every table that once said
    `"codex": ...` elsewhere is a field here, so a new agent states it once, in its own module."""

    name: str  # the registry key: `--agent NAME`, the schemas' enum, every report's "agent"
    title: str  # how its users know it ("Claude Code"), in messages
    binary: str  # the program on PATH
    prompt_tokens: int  # its first-turn prompt (system prompt + tool schemas), measured against vLLM
    protocol: str  # the API it speaks to its endpoint: "responses", "chat" or "messages"
    # The probes whose answer decides whether it works (doctor/probes.py names them), first the one it sends first.
    probes: tuple[str, ...]
    # The output tokens it asks for when its files set none; 0: it asks for no limit (the server's default).
    default_output: int
    bounds_output: bool  # whether switch gives it an output limit (Codex has none to give)
    # Where a window reaches it, as the user would look for it; None: it takes no window from a file.
    window_setting: str | None
    compacts_every_turn: bool  # when its window is too small for its output limit (opencode)
    replays_reasoning: bool  # sends a thinking model's reasoning back on the next turn (doctor/thinking.py)
    # The template syntaxes it expands in the strings agentcfg writes for it (regexes; fields.TEMPLATE_SYNTAXES
    # is their union, tests/agents/test_registry.py holds it to the registry).
    expands: tuple[str, ...]
    reads_all_proxy: bool  # honours ALL_PROXY (Codex's reqwest), not only HTTPS_PROXY
    ignores_no_proxy: bool  # sends even loopback requests through HTTPS_PROXY (qwen-code's undici)
    ca_variables: tuple[str, ...]  # variables it adds extra CA certificates from; the first is the one to advise
    # The first version that can run a key helper command itself: () any version, None never.
    key_helper_since: tuple[int, ...] | None
    key_helper_setting: str | None  # where its key command is written, in messages ("apiKeyHelper")
    # Keys the agent writes into its own files when it runs (qwen's `$version`): a file agentcfg
    # created that holds only these is still agentcfg's to remove on rollback.
    stamps: tuple[tuple[str, ...], ...] = ()
    # old key -> where the agent moves it when it migrates a file
    moves: Mapping[tuple[str, ...], tuple[str, ...]] = {}  # read, never written
    launch_by_version: bool = False  # exec asks its version first (LaunchContext.version)
    # The releases CI has run agentcfg against (tests/e2e, tests/realservers); tests/e2e/agents.py pins among them.
    proven: tuple[str, ...] = ()
    # After a reply reaches `default_output`, it asks again with a larger limit (doctor's Target.default_output):
    # qwen-code's 8000, then its limit for the model name.
    retries_output: bool = False
    # Its own proxy setting besides the variables, as the user would look for it (qwen-code's), where it
    # ignores NO_PROXY: running it without the proxy must leave that unset too.
    proxy_setting: str | None = None
    # For doctor: how it takes a key when its files name a variable, and how it sends one.
    needs_key: bool = False  # refuses to start when the variable its files name for the key is unset
    key_fallback: str | None = None  # the variable it reads a key from when that one is unset (qwen-code's)
    stand_in_key: bool = False  # switch writes agentcfg's stand-in key for a keyless profile (it needs one)
    # The one variable it reads a key from, whatever the profile's key_env (Gemini CLI's GEMINI_API_KEY): exec puts
    # the key there instead of in the profile's variable (such an agent does not read that: reads_key_variable).
    key_variable: str | None = None
    helper_header: str = "bearer"  # the header(s) it sends its key command's key in: bearer, x-api-key or both
    # Model names (a part of) for which it replays the reasoning field even when empty (qwen-code: deepseek).
    replays_empty_reasoning_for: tuple[str, ...] = ()
    # -- what switch and import say or write for it beyond its files (agentcfg.switch, agentcfg.onboard) --
    # The first version that layers a profile file per profile over its config (Codex 0.134: `codex --profile`),
    # which switch keeps current; None: it has none.
    profile_files_since: tuple[int, ...] | None = None
    # A variable it takes from the shell over the placeholder key a keyless profile leaves in its file, and that
    # file's name (qwen-code: OPENAI_API_KEY over its .env): switch says how to start it without.
    shell_key_over_placeholder: tuple[str, str] | None = None
    # False: neither it nor its files read a variable of agentcfg's choosing for the key (Copilot CLI's providers.json
    # and Cline CLI's providers.json take a key only in plaintext): a keyed profile's key reaches it through
    # `agentcfg exec` alone (or --store-key-in-files), never through `agentcfg env` in the shell; its own switch note
    # says so, and switch's and import's "reads the key from VAR" note leaves it out.
    reads_key_variable: bool = True
    # Variables it prefers, in the shell, to the key its helper fetches (Claude Code's token and API key).
    shell_keys_over_helper: tuple[str, ...] = ()
    # A variable of `Name: value` header lines it adds to every request from the shell (ANTHROPIC_CUSTOM_HEADERS).
    shell_headers: str | None = None
    # Its model may be named only by a model slot or an alias its read() leaves aside (importer.claude_model):
    # import resolves that, and asks for the model of an endpoint that names none.
    model_in_slots: bool = False
    # Whether its files keep agentcfg's id or label (agentcfg.attribution, rules 1 and 2). False: it rewrites its
    # file to its own schema whenever it runs, dropping any key of agentcfg's (Cline CLI), so only the journal
    # says which of two profiles with the same endpoint and model it was switched to.
    keeps_ids: bool = True
    # -- a project's MCP servers (agentcfg.mcp.project) --
    # Each file, from a project's root, in which a project defines MCP servers in this agent's format (its
    # mcp_read reads it), and the key that holds them: what `agentcfg trust` shows and records before any is used.
    mcp_project_files: tuple[tuple[str, str], ...] = ()
