"""What every agent module offers (one module per agent, the same interface, as in pre-commit)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentcfg import env
from agentcfg.agents.traits import Traits
from agentcfg.edit import Assignment
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.patterns import lazy  # compiled when first used: every command loads this module
from agentcfg.profiles import Profile

if TYPE_CHECKING:  # doctor's types, for the doctor members of Agent (doctor.model imports nothing)
    from agentcfg.doctor.model import Finding, Target
    from agentcfg.mcp.model import Found, McpServer


@dataclass(frozen=True)
class AgentFile:
    """One file an agent reads, with the editor for its format."""

    path: Path
    format: str  # "toml", "json" or "dotenv": the editor in agentcfg.edit
    seed: str = ""  # the text a new file starts from, before the owned keys are set


Texts = dict[AgentFile, "str | None"]  # each of an agent's files -> its text; None: does not exist


@dataclass(frozen=True)
class FileEdit:
    """What a switch sets in one agent file."""

    file: AgentFile
    assignments: list[Assignment]
    notes: tuple[str, ...] = ()  # what the user should know about this file after the switch


@dataclass(frozen=True)
class KeySource:
    """How a keyed profile's key reaches the agents (a keyless profile needs none of this)."""

    helper: tuple[str, ...] = ()  # the argv that prints the key: `key get PROFILE` of invocation.self_command()
    runs_helper: frozenset[str] = frozenset()  # agents whose installed version runs `helper` itself
    literal: str | None = None  # the key itself, only with `switch --store-key-in-files`


@dataclass(frozen=True)
class Header:
    """A header the user set in an agent's file: the agent sends it with every request to its endpoint."""

    name: str
    where: str  # the setting it comes from, e.g. "env.ANTHROPIC_CUSTOM_HEADERS" (shown; the value never is)
    value: str | None = field(default=None, repr=False)  # None: the agent reads it from `variable`
    variable: str | None = None  # Codex's env_http_headers: the variable that holds the value


# Names that say what the value is (by word: `x-portkey-provider` is not a key, `x-portkey-api-key` is),
# and values that look like a key whatever the name (Bearer/Basic schemes, well-known key prefixes,
# or a long run of random-looking characters).
_CREDENTIAL_WORD = lazy(
    r"auth\w*|\w*token|apikey|key|secrets?|pass(word|wd)?|cookie|credentials?|session", re.IGNORECASE
)


def _credential_name(name: str) -> bool:
    words = re.split(r"[^A-Za-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", name))
    return any(_CREDENTIAL_WORD.fullmatch(word) for word in words if word)


_KEY_PREFIX = lazy(r"(bearer|basic)\s|(sk|pk|rk)[-_]|gh[pousr]_|github_pat_|xox[abprs]-|AKIA|AIza", re.IGNORECASE)
_RANDOM = lazy(r"[A-Za-z0-9_\-.+/=]{20,}")


def looks_like_key(value: str) -> bool:
    """Whether a value looks like a credential: a Bearer/Basic value, a known key prefix, or random text.

    "Random" is 20+ key characters with letters and digits and no run of 8 lowercase letters (words:
    `azure-anthropic-east-us2` is a routing value, `q8Xv...` is not).
    """
    value = value.strip()
    if _KEY_PREFIX.match(value):
        return True
    return bool(
        _RANDOM.fullmatch(value)
        and re.search(r"[0-9]", value)
        and re.search(r"[A-Za-z]", value)
        and not re.search(r"[a-z]{8}", value)
    )


def is_credential(header: Header, environ: env.Environ | None = None) -> bool:
    """A header whose name says it carries a credential, or whose value (or its variable's) looks like one."""
    if _credential_name(header.name) or looks_like_key(header.value or ""):
        return True
    if header.variable:
        return bool(_credential_name(header.variable) or looks_like_key((environ or {}).get(header.variable, "")))
    return False


def header_table(table: object, where: str, *, from_variables: bool = False) -> tuple[Header, ...]:
    """The headers of a {name: value} table in an agent's file (values that are not strings: skipped)."""
    if not isinstance(table, dict):
        return ()
    headers = []
    for name, value in table.items():
        if not isinstance(value, str):
            continue
        reference = re.fullmatch(r"\{env:([^}]+)\}", value)  # opencode's `{env:VAR}`: the value is in VAR
        if from_variables or reference:
            headers.append(Header(str(name), where, variable=reference.group(1) if reference else value))
        else:
            headers.append(Header(str(name), where, value=value))
    return tuple(headers)


def header_lines(value: object, where: str) -> tuple[Header, ...]:
    """Headers as `Name: value` lines, as in Claude Code's ANTHROPIC_CUSTOM_HEADERS (Traits.shell_headers)."""
    if not isinstance(value, str):
        return ()
    lines = (line.partition(":") for line in value.splitlines())
    return tuple(
        Header(name.strip(), where, value=rest.strip()) for name, colon, rest in lines if colon and name.strip()
    )


@dataclass(frozen=True)
class Binding:
    """What an agent's files point it at now."""

    base_url: str | None = None
    model: str | None = None
    key: str | None = None  # how the key is found, e.g. "env TAOTOKEN_API_KEY", "placeholder", "in file"
    # For doctor: what the agent will really send.
    key_env: str | None = None  # the variable it reads the key from
    key_value: str | None = field(default=None, repr=False)  # a key (or placeholder) written in its file
    helper: str | None = None  # a command it runs for the key
    output_tokens: int | None = None  # the output limit its files set; None: its default
    wire_api: str | None = None  # Codex only
    headers: tuple[Header, ...] = ()  # the user's own headers that go with every request to base_url
    context_window: int | None = None  # the window its files tell it (it compacts by this); None: not set
    # Whose files these are (agentcfg.attribution): the profile agentcfg's own id in them names
    # (`agentcfg-NAME`, `agentcfg key get NAME`), and the label it wrote (`agentcfg: LABEL`).
    profile: str | None = None
    label: str | None = None


# Readers take what a file holds as it is: a value of the wrong type (a list where a table belongs,
# a number for a URL) reads as unset, never as an exception (doctor and status read any file).


def text(value: object) -> str | None:
    """A string value, or None."""
    return value if isinstance(value, str) else None


def table(value: object) -> dict:
    """A table/object value, or an empty one."""
    return value if isinstance(value, dict) else {}


def number(value: object) -> int | None:
    """An integer value (not a boolean), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class LaunchContext:
    """What an agent's `launch` may look at: its files as they are, the environment, its version."""

    current: Texts
    environ: env.Environ
    version: (
        tuple[int, ...] | None
    )  # the installed version (asked only of an agent whose TRAITS.launch_by_version); None: unknown
    runtime: Path  # agentcfg's private runtime directory, where Launch.files are written
    helper: tuple[str, ...] = ()  # the argv that prints the profile's key (`agentcfg key get NAME`), if it can
    # The profile's key as exec found it (keyring first, else its variable; None: keyless), for an agent that can
    # take it otherwise than in a variable that every command it runs inherits (Launch.key_files).
    key: str | None = None
    run: str = "0"  # this run's own part of a key file's name (run_name)


@dataclass(frozen=True)
class Launch:
    """How `agentcfg exec PROFILE -- AGENT ARGS` gives one agent process the profile, through what the
    agent offers for that (flags, variables, a settings file of its own), never through its files."""

    args: tuple[str, ...]  # the agent's arguments, agentcfg's inserted where the agent reads them
    env: dict[str, str] = field(default_factory=dict)  # variables to set in the process (never the key)
    # name -> text of files the agent reads (Claude Code's --settings), written owner-only in LaunchContext.runtime
    # and kept for the next run of the same text (never a key)
    files: dict[str, str] = field(default_factory=dict)
    # name (run_name) -> text of files that hold the key (qwen-code's settings): written owner-only for this run
    # alone, and removed once its process has ended (agentcfg.launch)
    key_files: dict[str, str] = field(default_factory=dict)
    # False: the key's variable is not set: the agent fetches the key itself (context.helper) or reads key_files
    key_in_env: bool = True
    notes: tuple[str, ...] = ()


def run_name(stem: str, run: str, suffix: str = ".settings.json") -> str:
    """A key file's name: this run's alone (agentcfg.launch removes it when the run's process has ended)."""
    return f"{stem}-run{run}{suffix}"


def runtime_name(stem: str, text: str, suffix: str = ".settings.json") -> str:
    """A runtime file's name: its text's digest in it, so a run never reads a file another run (another
    project's profile of the same name, the profile before an edit) has just replaced under it."""
    import hashlib

    return f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:16]}{suffix}"


def flatten(data: dict, prefix: tuple[str, ...] = ()) -> list[Assignment]:
    """A nested settings object as assignments, one per leaf (a list is one leaf)."""
    out: list[Assignment] = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out += flatten(value, (*prefix, key))
        else:
            out.append(((*prefix, key), value))
    return out


class Agent(Protocol):
    """The interface every module in agentcfg/agents/ implements; agents/__init__.py holds each to it (mypy)."""

    TRAITS: Traits

    def files(self, environ: env.Environ) -> list[AgentFile]: ...

    def unsupported(self, profile: Profile) -> str | None: ...

    def edits(self, profile: Profile, current: Texts, keys: KeySource) -> list[FileEdit]: ...

    def read(self, current: Texts) -> Binding: ...

    def launch(self, profile: Profile, args: tuple[str, ...], context: LaunchContext) -> Launch: ...

    def foreign_format(self, current: Texts) -> tuple[AgentFile, str] | None: ...

    def key_references(self, current: Texts, key: str, key_env: str) -> list[FileEdit]: ...

    def kept_files(self, environ: env.Environ) -> list[tuple[Path, str]]:
        """Files besides files() a switch may write (a name pattern may stand for many): rollback's too."""
        ...

    def profile_file_names(self, environ: env.Environ) -> list[str]:
        """The profiles that have a file of their own now (Traits.profile_files_since)."""
        ...

    def profile_file_edit(self, profile: Profile, environ: env.Environ, keys: KeySource) -> FileEdit | None:
        """What a switch keeps in `profile`'s own file (None: it has none)."""
        ...

    # -- MCP servers: its own format (agentcfg.mcp holds the rest) ------------------------------------------

    def mcp_files(self, environ: env.Environ) -> list[AgentFile]:
        """The files that hold its user-scope MCP servers ([]: agentcfg does not write them for it)."""
        ...

    def mcp_read(self, current: Texts, environ: env.Environ) -> list[Found]:
        """The MCP servers its files (mcp_files, as read) define, in agentcfg's model: pure."""
        ...

    def mcp_edits(self, servers: Mapping[str, McpServer | None], current: Texts) -> list[FileEdit]:
        """What sets each named server (None: removes it) in its files, leaving its other servers and every key
        of a server that agentcfg does not model as they are: pure."""
        ...

    # -- doctor: what the agent itself says of its files, and how it finds its endpoint and key -------------

    def check(self, parsed: Parsed, environ: env.Environ, profiles: dict[str, Profile]) -> list[Finding]:
        """What it rejects (or silently undercuts) in its files when it loads them: offline, pure."""
        ...

    def unreadable(self, problem: AgentcfgError, environ: env.Environ) -> Finding | None:
        """Its own words for files that cannot be read (None: doctor's generic config-unreadable)."""
        ...

    def configured(self, current: Texts, environ: env.Environ) -> bool:
        """Whether it has anything for doctor to look at (its files, or what it takes besides them)."""
        ...

    def key_helpers(
        self, current: Texts, binding: Binding, environ: env.Environ, profiles: dict[str, Profile]
    ) -> list[KeyHelper]:
        """The key commands it runs from agentcfg's files."""
        ...

    def locate(self, target: Target, binding: Binding, doctor: Doctoring) -> bool:
        """Fill the target's endpoint as it finds it beyond its files; False: nothing to probe (a finding says why)."""
        ...

    def authorize(self, target: Target, binding: Binding, profile: Profile | None, doctor: Doctoring) -> None:
        """Fill the key it sends (and the findings about it); `profile`: whose key it is."""
        ...

    def told_window(self, profile: Profile) -> int | None:
        """The context window a switch to `profile` tells it (None: it is told none)."""
        ...

    def reasoning_advice(self, router: str, thinking_off: str) -> str:
        """How to keep its tool turns working with a thinking model whose reasoning it does not pass back right."""
        ...


def no_mcp_files(environ: env.Environ) -> list[AgentFile]:
    """An agent whose MCP servers agentcfg does not write."""
    return []


def no_mcp_read(current: Texts, environ: env.Environ) -> list[Found]:
    return []


def no_mcp_edits(servers: Mapping[str, McpServer | None], current: Texts) -> list[FileEdit]:
    return []


def no_foreign_format(current: Texts) -> tuple[AgentFile, str] | None:
    """An agent whose files have one format agentcfg writes: nothing to refuse."""
    return None


def no_key_references(current: Texts, key: str, key_env: str) -> list[FileEdit]:
    """An agent whose files never name a key's variable outside what switch sets."""
    return []


def no_kept_files(environ: env.Environ) -> list[tuple[Path, str]]:
    """An agent with no files besides files() that a switch writes (rollback and recovery may write those only:
    agentcfg.managed)."""
    return []


def no_profile_file_names(environ: env.Environ) -> list[str]:
    """An agent with no file per profile (Traits.profile_files_since is None)."""
    return []


def no_profile_file_edit(profile: Profile, environ: env.Environ, keys: KeySource) -> FileEdit | None:
    return None


# -- doctor's part of the interface -----------------------------------------------------------------------

Parsed = list[tuple[AgentFile, Any]]  # each existing file of an agent and its parsed data


@dataclass(frozen=True)
class KeyHelper:
    """A key helper the agent runs, from one of agentcfg's files."""

    where: str  # the file, as shown
    command: str
    rewritten: bool = True  # whether a switch of the agent's profile rewrites it (a gone profile's file: no)


class Doctoring(Protocol):
    """What doctor lends an agent's hooks: where it looks, and the key rules every agent shares
    (agentcfg.doctor.keys implements it), so an agent module needs no doctor module but its types."""

    environ: env.Environ
    profiles: dict[str, Profile]
    cwd: Path

    def resolve_key(self, target: Target, binding: Binding, profile: Profile | None) -> None: ...

    def header_findings(
        self, target: Target, headers: tuple[Header, ...], *, project: bool = False
    ) -> list[Finding]: ...

    def key_checks(self, target: Target, value: str | None) -> list[Finding]: ...

    def owners(self, variable: str | None) -> tuple[str, ...]: ...


def no_unreadable(problem: AgentcfgError, environ: env.Environ) -> Finding | None:
    """An agent with nothing of its own to say about files it cannot read."""
    return None


def configured_by_files(current: Texts, environ: env.Environ) -> bool:
    """An agent that is configured only by its files: any of them exists."""
    return any(text is not None for text in current.values())


def binding_helpers(
    current: Texts, binding: Binding, environ: env.Environ, profiles: dict[str, Profile]
) -> list[KeyHelper]:
    """The key command its files name now, if any."""
    found = KeyHelper(", ".join(env.display(f.path, environ) for f in current), binding.helper or "")
    return [found] if found.command else []


def located_by_files(target: Target, binding: Binding, doctor: Doctoring) -> bool:
    """An agent whose endpoint is what its files say."""
    return True


def authorize_by_files(target: Target, binding: Binding, profile: Profile | None, doctor: Doctoring) -> None:
    """An agent that sends the headers its files set and the key they name (variable, helper or value)."""
    target.static += doctor.header_findings(target, binding.headers)
    doctor.resolve_key(target, binding, profile)
