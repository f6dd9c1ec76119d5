"""A project's MCP definitions: untrusted input, read only to be shown, and used only once trusted.

A cloned repository's `.mcp.json` (Claude Code), `opencode.json`/`opencode.jsonc` (opencode) and
`.agentcfg/mcp.toml` (agentcfg's own set, `[servers.NAME]` tables) name programs that an agent starts, with
the user's environment, on its first run there. So agentcfg never imports or syncs them until `agentcfg trust`
has shown what they run and recorded their digests (trust.Record.mcp): a file added, removed or changed since
makes them untrusted again, like the project's profiles. A server with a value an agent would expand (`${VAR}`,
`{env:X}`, `$(...)`, backticks: mcp.model.refuses) is refused even when trusted: it could hand the project's
program a secret of yours, or run a shell.

The project is the directory that holds `.agentcfg/` or one of these files, the nearest from the working
directory up (HOME is not a project), as `agentcfg trust` finds it. Files are read bounded and non-blocking
(fsutil.read_limited); a symlink that leaves the project, a FIFO or a file that does not parse is a problem
reported with its file, never followed and never a traceback. Each agent's file is read by its own reader
(`Agent.mcp_read`), passed in as `reader` so that the rest is tested with a stub.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcfg import env, fsutil, redact, trust
from agentcfg.agents.base import AgentFile
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.mcp.model import Found, from_dict, refuses

OWN = "agentcfg"  # the `agent` of a server read from `.agentcfg/mcp.toml`
OWN_FILE = ".agentcfg/mcp.toml"
_SHOWN_MOST = 200  # characters of one value shown

# (agent, its file as AgentFile, the file's text, environ) -> the servers it defines: Agent.mcp_read.
Reader = Callable[[str, AgentFile, str, env.Environ], list[Found]]


def files() -> tuple[tuple[str, str, str], ...]:
    """Each MCP file a project may hold (from its root), the agent that reads it and the key of its servers:
    each agent's TRAITS.mcp_project_files, then agentcfg's own `.agentcfg/mcp.toml` (`[servers.NAME]`)."""
    from agentcfg.agents import AGENTS  # lazy: every agent module loads only where a project is looked at

    found = [(n, name, key) for name, agent in AGENTS.items() for n, key in agent.TRAITS.mcp_project_files]
    return (*found, (OWN_FILE, OWN, "servers"))


def agent_reader(agent: str, file: AgentFile, text: str, environ: env.Environ) -> list[Found]:
    """The agent's own reader of its MCP format."""
    from agentcfg.agents import AGENTS  # lazy: every agent module loads only when a project has MCP files

    return AGENTS[agent].mcp_read({file: text}, environ)


@dataclass(frozen=True)
class Runs:
    """What one server of a project file makes an agent start or reach, read from the file as the agent reads
    it (not through agentcfg's model, which may leave keys out): what `agentcfg trust` shows."""

    name: str
    file: str  # relative to the project root
    command: tuple[str, ...] = ()  # the program and its arguments
    url: str | None = None
    env: tuple[tuple[str, str], ...] = ()  # (variable, value as shown: a credential-looking value masked)
    headers: tuple[tuple[str, str], ...] = ()  # (header, value as shown)
    expands: tuple[str, ...] = ()  # "env.GITHUB_TOKEN: ${GITHUB_TOKEN}": each value an agent expands or runs
    secrets: tuple[str, ...] = ()  # agentcfg's own format: the variables whose secret values it asks for
    other: tuple[str, ...] = ()  # the entry's other keys (type, enabled, cwd, ...), by name

    @property
    def shell(self) -> str:
        """The command as one shell-quoted line ("" for a remote server)."""
        return shlex.join(self.command)

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "file": self.file, "command": list(self.command) or None,
                "shell": self.shell or None, "url": self.url, "env": dict(self.env), "headers": dict(self.headers),
                "expands": list(self.expands), "secrets": list(self.secrets), "other": list(self.other)}  # fmt: skip


@dataclass(frozen=True)
class McpFile:
    """One of a project's MCP files as read: its digest (None: it could not be read, so it never equals a
    record), the servers its agent's reader found, what each runs, and what is wrong with it."""

    name: str  # relative to the project root
    agent: str
    digest: str | None
    parsed: bool = True  # False: not read, or it does not parse (trust refuses it)
    found: tuple[Found, ...] = ()
    runs: tuple[Runs, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProjectMcp:
    """A project's MCP files, and whether they are what `agentcfg trust` recorded."""

    root: Path
    files: tuple[McpFile, ...]
    comparison: trust.Comparison

    @property
    def trusted(self) -> bool:
        """Whether every MCP file of the project is byte for byte what `agentcfg trust` recorded."""
        return self.comparison.state == trust.TRUSTED

    def refused(self) -> dict[str, str]:
        """`FILE: NAME` -> why, for each server never imported even when trusted."""
        found: dict[str, str] = {}
        for file in self.files:
            runs = {r.name: r for r in file.runs}
            for item in file.found:
                shown = runs.get(item.server.name)
                label = f"{file.name}: {item.server.name}"
                if shown is None:
                    found[label] = "it is not a server of the file as its agent reads it"
                elif shown.expands:
                    found[label] = f"an agent would expand or run {shown.expands[0]}"
                elif asked := item.server.variables() or shown.secrets:
                    found[label] = f"it asks for the value of your secret {asked[0]}"
        return found

    def importable(self) -> list[Found]:
        """The servers `mcp import`/`sync` may take from the project: none unless it is trusted, and never one
        that `refused` names."""
        if not self.trusted:
            return []
        refused = self.refused()
        return [f for file in self.files for f in file.found if f"{file.name}: {f.server.name}" not in refused]

    def problems(self) -> list[str]:
        """What to tell the user: each file's problems, and the untrusted state with the command that trusts."""
        lines = [f"{self.root / file.name}: {p}" for file in self.files for p in file.problems]
        if self.files and not self.trusted:
            why = "not trusted" if self.comparison.state == trust.UNTRUSTED else trust.describe(self.comparison)
            names = ", ".join(trust.shown(f.name) for f in self.files)
            lines.append(
                f"this project's MCP files ({names}) are ignored: {why}. Check them, then run "
                f"`{trust.trust_command(self.root)}`."
            )
        return lines


# -- the pure core -------------------------------------------------------------------------------------------


def _shown(value: str) -> str:
    value = redact.terminal_safe(value)
    return value if len(value) <= _SHOWN_MOST else value[:_SHOWN_MOST] + "..."


def _masked(name: str, value: str) -> str:
    """A value as shown: masked when its name or shape says it is a credential, or it is a key agentcfg knows."""
    strength = redact.name_strength(name)
    secret = trust.general_secret(name) or (strength is not None and redact.could_be_secret(value, strong=strength))
    if secret and not refuses(value):  # a reference (`${VAR}`) or a shell is what the user must see
        return redact.MASK
    return redact.mask_text(_shown(value))


_DEEPEST = 32  # levels of an entry searched; below, the entry is flagged as a whole (no server nests that deep)


def _expansions(data: Any, path: str = "", depth: int = 0) -> list[str]:
    """Every key or string value in `data` that an agent would expand or run, as `path: value`."""
    found: list[str] = []
    if depth > _DEEPEST and isinstance(data, (dict, list)):
        return [f"{_shown(path)}: nested too deeply for agentcfg to show"]
    if isinstance(data, str):
        if refuses(data):
            found.append(f"{path}: {redact.mask_text(_shown(data))}")
    elif isinstance(data, dict):
        for key, value in data.items():
            where = f"{path}.{key}" if path else str(key)
            if refuses(str(key)):
                found.append(f"{_shown(where)} (its name)")
            found += _expansions(value, where, depth + 1)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _expansions(value, f"{path}[{index}]", depth + 1)
    return found


def _table(value: object) -> tuple[tuple[str, str], ...]:
    items = value.items() if isinstance(value, dict) else ()
    return tuple((_shown(str(k)), _masked(str(k), v if isinstance(v, str) else str(v))) for k, v in items)


def _secrets(entry: dict[str, Any]) -> tuple[str, ...]:
    """The variables agentcfg's own format gives a server from your keyring: `secrets`, `bearer`,
    `secret_headers`' values (what a project must not ask for: the value would go to its program)."""
    secrets, bearer, headers = entry.get("secrets"), entry.get("bearer"), entry.get("secret_headers")
    found = [*(secrets if isinstance(secrets, list) else []), *([bearer] if bearer else [])]
    found += list(headers.values()) if isinstance(headers, dict) else []
    return tuple(_shown(str(v)) for v in found)


def _command(words: list[Any]) -> tuple[str, ...]:
    """The words as shown: the value of a flag that names a secret (`--api-key sk-...`) masked."""
    shown: list[str] = []
    for index, word in enumerate(str(w) for w in words):
        flag = str(words[index - 1]) if index else ""
        strength = redact.flag_strength(flag) if flag.startswith("-") else None
        secret = strength is not None and redact.could_be_secret(word, strong=strength) and not refuses(word)
        shown.append(redact.MASK if secret else redact.mask_text(_shown(word)))
    return tuple(shown)


def runs(name: str, entry: Any, file: str) -> Runs:
    """What one raw server entry starts or reaches, in any of the three formats: `command` (a string, or
    opencode's list) with `args`, `url`, `env`/`environment`, `headers`."""
    if not isinstance(entry, dict):
        return Runs(_shown(name), file, expands=tuple(_expansions(entry, "(the entry)")))
    command = entry.get("command")
    words = [command] if isinstance(command, str) else list(command) if isinstance(command, list) else []
    args = entry.get("args")
    words += args if isinstance(args, list) else []
    url = entry.get("url")
    shown_keys = {"command", "args", "url", "env", "environment", "headers", "secrets", "bearer", "secret_headers"}
    return Runs(
        name=_shown(name),
        file=file,
        command=_command(words),
        url=redact.mask_text(_shown(url)) if isinstance(url, str) else None,
        env=_table(entry.get("env", entry.get("environment"))),
        headers=_table(entry.get("headers")),
        expands=tuple(_expansions(entry)),
        secrets=_secrets(entry),
        other=tuple(_shown(str(k)) for k in entry if k not in shown_keys),
    )


def read_own(text: str, where: str) -> tuple[list[Found], list[str]]:
    """The servers of agentcfg's own `.agentcfg/mcp.toml` (`[servers.NAME]` tables), and the problems of those
    that do not validate (each one skipped)."""
    from agentcfg import edit  # lazy: the editors load only when a project has MCP files

    data = edit.load("toml", text, path=where)
    servers = data.get("servers", {}) if isinstance(data, dict) else {}
    if not isinstance(servers, dict):
        return [], ["`servers` is not a table"]
    found: list[Found] = []
    problems: list[str] = []
    for name, table in servers.items():
        try:
            if not isinstance(table, dict):
                raise AgentcfgError(f"servers.{name} is not a table")
            found.append(Found(OWN, from_dict(name, table, where), f"{where}: servers.{name}"))
        except AgentcfgError as exc:
            problems.append(f"servers.{_shown(name)}: {' '.join(exc.message.split())}")
    return found, problems


def parse(name: str, agent: str, text: str, path: Path, environ: env.Environ, reader: Reader) -> McpFile:
    """One file's text read: what its servers run (from the raw entries), and its agent's reader's servers.
    A file that does not parse, or that its reader refuses, is a problem of the file (its digest is set by the
    caller)."""
    from agentcfg import edit  # lazy: the editors load only when a project has MCP files

    key = {n: k for n, _, k in files()}.get(name, "servers")
    fmt = "toml" if name.endswith(".toml") else "json"  # the json editor reads JSONC too
    try:
        data = edit.load(fmt, text, path=str(path))
    except AgentcfgError as exc:
        return McpFile(name, agent, None, parsed=False, problems=(" ".join(exc.message.split()),))
    entries = data.get(key, {}) if isinstance(data, dict) else {}
    if not isinstance(entries, dict):
        return McpFile(name, agent, None, parsed=False, problems=(f"`{key}` is not an object of servers",))
    shown = tuple(runs(str(n), e, name) for n, e in entries.items())
    problems: list[str] = []
    try:
        if agent == OWN:
            found, problems = read_own(text, str(path))
        else:
            found = reader(agent, AgentFile(path, fmt), text, environ)
    except AgentcfgError as exc:
        found, problems = [], [" ".join(exc.message.split())]
    except Exception as exc:  # a reader's bug on hostile input: reported with the file, not a traceback
        found, problems = [], [f"the {agent} reader failed on it ({type(exc).__name__}: {_shown(str(exc))})"]
    return McpFile(name, agent, None, True, tuple(found), shown, tuple(problems))


def with_digest(file: McpFile, digest: str | None) -> McpFile:
    from dataclasses import replace

    return replace(file, digest=digest)


def digests(files: tuple[McpFile, ...] | list[McpFile]) -> dict[str, str | None]:
    return {f.name: f.digest for f in files}


def compare(record: trust.Record | None, files: tuple[McpFile, ...] | list[McpFile]) -> trust.Comparison:
    """The files against what trust recorded of them; a record from before MCP files were recorded (mcp None)
    trusts none."""
    if record is None or record.mcp is None:
        return trust.Comparison(trust.UNTRUSTED)
    return trust.compare(trust.Record(record.mcp, record.trusted_at), digests(files))


# -- the files (the edge) --------------------------------------------------------------------------------------


def _inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except (ValueError, OSError, RuntimeError):  # outside, or a symlink loop
        return False
    return True


def read_file(root: Path, name: str, agent: str, environ: env.Environ, reader: Reader) -> McpFile | None:
    """One MCP file of the project (None: it does not exist): a symlink that leaves the project, a FIFO, a
    device or a file over the limit is refused before it is read."""
    path = root / name
    if not os.path.lexists(path):
        return None
    if not _inside(root, path):
        return McpFile(name, agent, None, False, problems=("is a symlink to a file outside the project: refused",))
    try:
        data = fsutil.read_limited(path, str(path), fsutil.PROFILE_LIMIT)
    except AgentcfgError as exc:
        return McpFile(name, agent, None, False, problems=(exc.message,))
    if data is None:
        return None  # removed since
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return McpFile(name, agent, trust.digest(data), False, problems=(f"is not UTF-8 text (byte {exc.start})",))
    return with_digest(parse(name, agent, text, path, environ, reader), trust.digest(data))


def read_files(root: Path, environ: env.Environ, reader: Reader = agent_reader) -> list[McpFile]:
    return [f for name, agent, _ in files() if (f := read_file(root, name, agent, environ, reader)) is not None]


def project_servers(root: Path, environ: env.Environ, reader: Reader = agent_reader) -> ProjectMcp:
    """A project's MCP files, their servers, and whether they are what `agentcfg trust` recorded (for `mcp
    import` and `mcp sync`: take `importable()`, print `problems()`)."""
    root = root.resolve()
    files = tuple(read_files(root, environ, reader))
    return ProjectMcp(root, files, compare(trust.record_for(root, environ), files))


def trusted(root: Path, environ: env.Environ, reader: Reader = agent_reader) -> bool:
    """Whether the project's MCP files are byte for byte what `agentcfg trust` recorded."""
    return project_servers(root, environ, reader).trusted


def has_files(directory: Path) -> bool:
    return any(os.path.lexists(directory / name) for name, _, _ in files())


def find_root(environ: env.Environ, cwd: Path | None = None) -> Path | None:
    """The project here: the nearest directory from the working directory up that holds `.agentcfg/profiles/`
    or an MCP file (HOME is not a project; one another user owns is not yours, as git's safe.directory asks)."""
    try:
        start = (cwd or Path.cwd()).resolve()
    except OSError:  # the working directory was removed
        return None
    home = env.home(environ).resolve()
    for directory in (start, *start.parents):
        if directory == home:
            return None
        if (directory / ".agentcfg" / "profiles").is_dir() or has_files(directory):
            return directory if _yours(directory) else None
    return None


def _yours(directory: Path) -> bool:
    """Whether you own what makes `directory` a project: its `.agentcfg`, `.agentcfg/profiles` and MCP files
    (another local user can create /tmp/.mcp.json)."""
    if not hasattr(os, "geteuid"):
        return True
    names = (".agentcfg", ".agentcfg/profiles", *(name for name, _, _ in files()))
    try:
        return all(os.lstat(p).st_uid == os.geteuid() for n in names if os.path.lexists(p := directory / n))
    except OSError:
        return False


# -- what `agentcfg trust` shows and records -------------------------------------------------------------------


@dataclass(frozen=True)
class Review:
    """A project's MCP files reviewed before they are trusted: each server as shown, the warnings, the digests
    to record."""

    servers: list[dict[str, object]]
    warnings: list[str]
    files: dict[str, str]


def review(files: list[McpFile] | tuple[McpFile, ...], root: Path) -> Review:
    """The review of files read (read_files): one that cannot be read or does not parse raises, naming it, so
    nothing is recorded; a value an agent would expand is a warning (and the server is refused on import)."""
    for file in files:
        if file.digest is None or not file.parsed:
            raise AgentcfgError(
                f"cannot trust this project: {'; '.join(file.problems) or 'it could not be read'}",
                where=str(root / file.name),
                hint="Replace it with a regular file of the project that parses (or remove it), then run "
                "`agentcfg trust` again.",
            )
    warnings: list[str] = []
    for file in files:
        warnings += [f"{file.name}: {p}" for p in file.problems]
        for shown in file.runs:
            if shown.secrets:
                warnings.append(
                    f"{file.name}: server {shown.name!r} asks for the value of your secret {shown.secrets[0]}: "
                    "agentcfg will not import or sync this server"
                )
            for expansion in shown.expands:
                warnings.append(
                    f"{file.name}: server {shown.name!r}: {expansion}: an agent expands this (a variable, a file) "
                    "or runs it in a shell; agentcfg will not import or sync this server"
                )
    servers = [r.as_dict() for file in files for r in file.runs]
    return Review(servers, warnings, {f.name: str(f.digest) for f in files})


def lines(servers: list[dict[str, Any]]) -> list[str]:
    """The servers as `agentcfg trust` prints them: what each would run or reach, and with what."""
    out: list[str] = []
    for server in servers:
        what = f"runs {server['shell']}" if server["shell"] else f"connects to {server['url']}"
        if not server["shell"] and not server["url"]:
            what = "runs nothing agentcfg can tell (no command, no url)"
        out.append(f"  {server['name']} ({server['file']}): {what}")
        for label, table in (("env", server["env"]), ("header", server["headers"])):
            for key, value in table.items():
                out.append(f"      {label} {key}={value}")
        if server["secrets"]:
            out.append(f"      your secrets: {', '.join(server['secrets'])}")
        if server["other"]:
            out.append(f"      also: {', '.join(server['other'])}")
    return out
