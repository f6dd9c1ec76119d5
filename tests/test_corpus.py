"""Every real-world config file in tests/corpus/ through two round trips, in process.

For each file (placed where its agent reads it, in a throw-away HOME):
  plain: switch local, switch taotoken, rollback, rollback -> every agent file byte for byte as before,
         and a second identical switch changes nothing;
  edit:  switch local, then the edit the agent itself (or its user) makes, then rollback -> exactly the
         original plus that edit, computed by applying the same edit function to the original;
  and after every step each agent file still parses as its format (checked with parsers that are not
  agentcfg's own: tomllib, json, a JSONC reader below, python-dotenv).

The edits mimic what each agent writes (read from their source):
  - Codex trusting a folder: `set_project_trust_level` (codex-rs config edit, toml_edit) adds an explicit
    `[projects."<path>"]` table with `trust_level = "trusted"`; toml_edit places a new table right after
    the table that precedes it in document order (the last `[projects.*]` table, or the last table of the
    document when there is none), with one blank line before its header (DEFAULT_TABLE_DECOR = "\\n"),
    before the comments and blank lines that lead the next header, and ends every key/value line with a
    newline. A user appending an `[mcp_servers.*]` table at the end is the second Codex edit.
  - qwen-code stamping `"$version": 4`: its settings writer (packages/cli/src/utils/jsonc-editor.ts) edits
    in place with jsonc-parser's `modify`: an existing `$version` gets its value replaced; a missing one is
    appended as the root object's last member, on its own line, indented like the file's first key.
    A settings.json that does not exist is written as `JSON.stringify(updates, null, 2)` (no final newline).
  - opencode: the user adds an `"mcp"` server entry by hand, as the first member of `"mcp"` (or adds `"mcp"`
    as the root's first member).
  - Claude Code: the user adds a rule at the top of `permissions.allow` (creating it when missing); or Claude
    Code itself appends one and rewrites the whole file reformatted (JSON.stringify(settings, null, 2)).
Files whose original does not parse are not round-tripped: agentcfg must refuse them with one clear error.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agentcfg import profiles
from agentcfg.agents import AGENTS
from agentcfg.apply import Journal
from agentcfg.errors import AgentcfgError
from agentcfg.profile_model import Route
from agentcfg.profiles import Profile
from agentcfg.switch import key_source, plan_switch
from tests.bare_home import make_environ

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CORPUS = Path(__file__).parent / "corpus"
AGENT_DIRS = ("codex", "claude", "opencode", "qwen", "cline", "gemini", "droid")
QWEN_VERSION = 4  # SETTINGS_VERSION in qwen-code's packages/cli/src/config/settings.ts
TRUSTED_PATH = "/tmp/corpus-project"  # a path toml_edit must quote, like every real project path


# -- the corpus ---------------------------------------------------------------------------------------


def corpus_files() -> list[Path]:
    return sorted(p for agent in AGENT_DIRS for p in (CORPUS / agent).iterdir() if p.is_file())


def corpus_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def destination(path: Path, home: Path) -> Path:
    """Where the file's agent reads it (HOME/.config is XDG_CONFIG_HOME in make_environ)."""
    agent = path.parent.name
    if agent == "codex":
        return home / ".codex" / "config.toml"
    if agent == "claude":
        return home / ".claude" / "settings.json"
    if agent == "opencode":
        return home / ".config" / "opencode" / ("opencode.jsonc" if path.suffix == ".jsonc" else "opencode.json")
    if agent == "cline":
        settings = home / ".cline" / "data" / "settings"
        return settings / ("global-settings.json" if path.name.endswith(".global-settings.json") else "providers.json")
    if agent == "gemini":
        return home / ".gemini" / (".env" if path.suffix == ".env" else "settings.json")
    if agent == "droid":
        return home / ".factory" / "settings.json"
    return home / ".qwen" / (".env" if path.suffix == ".env" else "settings.json")


# -- parsers that are not agentcfg's own --------------------------------------------------------------


def _skip(text: str, i: int) -> int:
    """Past whitespace and comments."""
    n = len(text)
    while i < n:
        if text[i] in " \t\r\n\ufeff":
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            i = text.index("*/", i + 2) + 2
        else:
            break
    return i


def _string_end(text: str, i: int) -> int:
    i += 1
    while text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


@dataclass
class Node:
    """A JSONC value and where it is: objects keep (key, key offset, value) members, arrays their items."""

    kind: str
    start: int
    end: int
    members: list[tuple[str, int, Node]] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)

    def get(self, key: str) -> Node | None:
        return next((v for k, _, v in self.members if k == key), None) if self.kind == "object" else None


def _value(text: str, i: int) -> Node:
    i = _skip(text, i)
    c = text[i]
    if c in "{[":
        close = "}" if c == "{" else "]"
        node = Node("object" if c == "{" else "array", i, -1)
        j = _skip(text, i + 1)
        while text[j] != close:
            if c == "{":
                if text[j] != '"':
                    raise ValueError(f"expected a key at offset {j}")
                key_end = _string_end(text, j)
                key = json.loads(text[j:key_end])
                colon = _skip(text, key_end)
                if text[colon] != ":":
                    raise ValueError(f"expected ':' at offset {colon}")
                value = _value(text, colon + 1)
                node.members.append((key, j, value))
            else:
                value = _value(text, j)
                node.items.append(value)
            j = _skip(text, value.end)
            if text[j] == ",":
                j = _skip(text, j + 1)
            elif text[j] != close:
                raise ValueError(f"expected ',' or {close!r} at offset {j}")
        node.end = j + 1
        return node
    if c == '"':
        return Node("string", i, _string_end(text, i))
    m = _SCALAR.match(text, i)
    if not m:
        raise ValueError(f"unexpected {c!r} at offset {i}")
    return Node("scalar", i, m.end())


def jsonc_tree(text: str) -> Node:
    """JSON with comments and trailing commas, as opencode and qwen-code read it."""
    try:
        root = _value(text, 0)
        if _skip(text, root.end) != len(text):
            raise ValueError(f"text after the value at offset {root.end}")
    except (IndexError, ValueError) as exc:
        raise ValueError(f"not JSONC: {exc}") from None
    return root


def jsonc_data(text: str) -> Any:
    def data(node: Node) -> Any:
        if node.kind == "object":
            return {k: data(v) for k, _, v in node.members}
        if node.kind == "array":
            return [data(v) for v in node.items]
        return json.loads(text[node.start : node.end])

    return data(jsonc_tree(text))


def file_format(path: Path) -> str:
    """toml, dotenv or json, for a corpus file or an agent's file."""
    if path.suffix == ".toml":
        return "toml"
    return "dotenv" if path.name == ".env" or path.suffix == ".env" else "json"


def oracle(path: Path, text: str, strict_json: bool) -> Any:
    """Parse `text` as the agent's file format; raises on a file the agent could not read."""
    fmt = file_format(path)
    if fmt == "toml":
        return tomllib.loads(text)
    if fmt == "dotenv":
        from dotenv import dotenv_values

        return dict(dotenv_values(stream=io.StringIO(text)))
    if strict_json:
        return json.loads(text)
    return jsonc_data(text)


def is_strict_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def parses(path: Path, text: str) -> bool:
    try:
        oracle(path, text, strict_json=False)
    except (ValueError, tomllib.TOMLDecodeError):
        return False
    return True


# -- the edits, as each agent (or its user) makes them --------------------------------------------------


def _eol(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _indent_of(text: str, offset: int) -> str | None:
    """The whitespace before `offset` on its line, or None when something else precedes it."""
    before = text[_line_start(text, offset) : offset]
    return before if before.strip() == "" else None


def _insert_first(text: str, container: Node, entry: str) -> str:
    """Insert `entry` (a member or an item, without comma) as the container's first, the way a person types it."""
    first = container.members[0][1] if container.members else (container.items[0].start if container.items else None)
    if first is None:
        return text[: container.start + 1] + entry + text[container.start + 1 :]
    indent = _indent_of(text, first)
    if indent is None:  # on the same line as something else: `{"a": 1}` -> `{<entry>, "a": 1}`
        return text[:first] + entry + ", " + text[first:]
    start = _line_start(text, first)
    return text[:start] + indent + entry + "," + _eol(text) + text[start:]


def claude_permission(text: str | None) -> str | None:
    """The user adds `Bash(corpus-test:*)` at the top of permissions.allow."""
    assert text is not None
    rule = '"Bash(corpus-test:*)"'
    root = jsonc_tree(text)
    permissions = root.get("permissions")
    if permissions is None:
        return _insert_first(text, root, f'"permissions": {{"allow": [{rule}]}}')
    allow = permissions.get("allow")
    if allow is None:
        return _insert_first(text, permissions, f'"allow": [{rule}]')
    assert allow.kind == "array", "permissions.allow is not a list"
    return _insert_first(text, allow, rule)


def claude_rewrite(text: str | None) -> str | None:
    """Claude Code itself adding a rule ("always allow"): it appends to permissions.allow and rewrites the
    whole file, reformatted (anthropics/claude-code#15808), as JSON.stringify(settings, null, 2) does."""
    assert text is not None
    data = json.loads(text)
    data.setdefault("permissions", {}).setdefault("allow", []).append("Bash(corpus-test:*)")
    return json.dumps(data, indent=2, ensure_ascii=False)


def opencode_mcp(text: str | None) -> str | None:
    """The user adds a local MCP server under "mcp"."""
    assert text is not None
    server = '"corpus-test": {"type": "local", "command": ["corpus-mcp", "--stdio"], "enabled": true}'
    root = jsonc_tree(text)
    mcp = root.get("mcp")
    if mcp is None:
        return _insert_first(text, root, f'"mcp": {{{server}}}')
    return _insert_first(text, mcp, server)


def droid_status_line(text: str | None) -> str | None:
    """The user adds a status line: `statusLine` at the root (Droid's settings are flat), as the first member."""
    assert text is not None
    return _insert_first(text, jsonc_tree(text), '"statusLine": {"type": "command", "command": "corpus-status"}')


def qwen_version(text: str | None) -> str | None:
    """qwen-code stamps `"$version": 4` (jsonc-editor.ts: jsonc-parser modify; a new file: JSON.stringify)."""
    if text is None:
        return json.dumps({"$version": QWEN_VERSION}, indent=2)
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom) :]
    root = jsonc_tree(body)
    current = root.get("$version")
    if current is not None:
        if body[current.start : current.end] == str(QWEN_VERSION):
            return text  # already current: qwen writes nothing
        return bom + body[: current.start] + str(QWEN_VERSION) + body[current.end :]
    member = f'"$version": {QWEN_VERSION}'
    if not root.members:
        return bom + body[: root.start] + "{" + _eol(body) + "  " + member + _eol(body) + "}" + body[root.end :]
    # detectFormattingOptions: the indentation is what precedes the first key on its line, else two spaces.
    indent = _indent_of(body, root.members[0][1]) or "  "
    last = root.members[-1][2].end
    return bom + body[:last] + "," + _eol(body) + indent + member + body[last:]


# Codex: a line-level view of the TOML document, enough to place a table where toml_edit puts it.


@dataclass
class _Table:
    position: int | None  # index among the document's headers; None: implicit (never written as a header)
    header_line: int = -1
    children: dict[str, Any] = field(default_factory=dict)  # key -> _Table or list[_Table] (array of tables)


def _toml_lines(text: str) -> list[tuple[str, str]]:
    """Each line with its kind: 'header', 'code' (a key/value or the rest of a multi-line value), 'blank'
    (blank or comment only), 'string' (inside a multi-line string)."""
    kinds = []
    depth, in_string = 0, ""
    for line in text.splitlines(keepends=True):
        if in_string:
            kinds.append((line, "string"))
            if in_string in line:
                in_string = ""
            continue
        stripped = line.strip()
        if depth == 0 and stripped.startswith("["):
            kinds.append((line, "header"))
            continue
        if depth == 0 and (not stripped or stripped.startswith("#")):
            kinds.append((line, "blank"))
            continue
        kinds.append((line, "code"))
        i = 0
        while i < len(line):
            c = line[i]
            if line.startswith(('"""', "'''"), i):
                delim = line[i : i + 3]
                close = line.find(delim, i + 3)
                if close < 0:
                    in_string = delim
                    break
                i = close + 3
            elif c == '"':
                i += 1
                while i < len(line) and line[i] != '"':
                    i += 2 if line[i] == "\\" else 1
                i += 1
            elif c == "'":
                i = line.find("'", i + 1) + 1 or len(line)
            elif c == "#":
                break
            else:
                depth += (c in "[{") - (c in "]}")
                i += 1
    return kinds


def _header_path(line: str) -> tuple[list[str], bool]:
    stripped = line.strip()
    is_array = stripped.startswith("[[")
    data: Any = tomllib.loads(stripped)
    path = []
    while isinstance(data, dict) and data:
        (key,) = data
        path.append(key)
        data = data[key]
        if isinstance(data, list):
            data = data[-1]
    return path, is_array


def _traversal(table: _Table) -> list[_Table]:
    """The tables under `table` in the order toml_edit's encoder visits them: depth first, in key order."""
    order = []
    for child in table.children.values():
        for item in child if isinstance(child, list) else [child]:
            order += [item, *_traversal(item)]
    return order


def codex_trust(text: str | None) -> str | None:
    """Codex trusting TRUSTED_PATH: `[projects."<path>"]` / `trust_level = "trusted"`, where toml_edit puts it."""
    assert text is not None
    lines = _toml_lines(text)
    if lines and not text.endswith("\n") and lines[-1][1] != "blank":
        text += "\n"  # toml_edit ends every header and key/value line with a newline
        lines = _toml_lines(text)
    inline = [i for i, (line, kind) in enumerate(lines) if kind == "code" and re.match(r"projects\s*=\s*\{", line)]
    if inline and not any(kind == "header" for _, kind in lines[: inline[0]]):
        return _codex_trust_inline(lines, inline[0])
    root = _Table(position=0)
    headers = [i for i, (_, kind) in enumerate(lines) if kind == "header"]
    for position, index in enumerate(headers, start=1):
        path, is_array = _header_path(lines[index][0])
        table = root
        for key in path[:-1]:
            child = table.children.setdefault(key, _Table(None))
            table = child[-1] if isinstance(child, list) else child
        existing = table.children.get(path[-1])
        if is_array:
            table.children.setdefault(path[-1], []).append(_Table(position, index))
        elif isinstance(existing, _Table):  # declared after a subtable implied it: keeps its place in key order
            existing.position, existing.header_line = position, index
        else:
            table.children[path[-1]] = _Table(position, index)
    projects = root.children.get("projects")
    assert projects is None or isinstance(projects, _Table), "projects is an array of tables"
    # The new table joins the end of `projects` (or of the root): it is visited right after that subtree and
    # takes the position of the last positioned table visited before it; tables are then written by position.
    order = _traversal(root)
    if projects is not None:
        last = ([projects, *_traversal(projects)])[-1]
        order = order[: next(i for i, t in enumerate(order) if t is last) + 1]
    positions = [t.position for t in order if t.position is not None]
    after_table = positions[-1] if positions else 0
    # It goes after that table's last key/value line, before the blank and comment lines that toml_edit keeps
    # as the next header's prefix (or as the document's trailing text).
    start = headers[after_table - 1] if after_table else -1
    end = headers[after_table] if after_table < len(headers) else len(lines)
    body = [i for i in range(start + 1, end) if lines[i][1] != "blank"]
    after = body[-1] if body else start
    offset = sum(len(line) for line, _ in lines[: after + 1])
    table_text = f'\n[projects."{TRUSTED_PATH}"]\ntrust_level = "trusted"\n'
    return text[:offset] + table_text + text[offset:]


def _toml_value(value: Any) -> str:
    return (
        json.dumps(value) if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    )


def _codex_trust_inline(lines: list[tuple[str, str]], index: int) -> str:
    """A root `projects = { "/p" = { ... }, ... }` (one line): set_project_trust_level_inner turns it into an
    implicit table of explicit `[projects."/p"]` tables (new keys, default decor), then adds the new one. Having
    no position, they are written before every table of the file, right after the root's key/values."""
    entries = tomllib.loads(lines[index][0])["projects"]
    entries[TRUSTED_PATH] = {"trust_level": "trusted"}
    rest = lines[:index] + lines[index + 1 :]
    first_header = next((i for i, (_, kind) in enumerate(rest) if kind == "header"), len(rest))
    root_body = [i for i in range(first_header) if rest[i][1] != "blank"]
    cut = root_body[-1] + 1 if root_body else 0
    tables = []
    for n, (path, table) in enumerate(entries.items()):
        prefix = "" if n == 0 and not root_body else "\n"  # the document's first table has no blank line before it
        body = "".join(f"{key} = {_toml_value(value)}\n" for key, value in table.items())
        tables.append(f'{prefix}[projects."{path}"]\n{body}')
    head = "".join(line for line, _ in rest[:cut])
    tail = "".join(line for line, _ in rest[cut:])
    if not root_body:  # the blank lines before the first header stay its prefix, after the new tables
        head, tail = "", "".join(line for line, _ in rest)
    return head + "".join(tables) + tail


def codex_mcp(text: str | None) -> str | None:
    """The user appends an MCP server table at the end of config.toml."""
    assert text is not None
    if text and not text.endswith("\n"):
        text += "\n"
    return text + '\n[mcp_servers.corpus-test]\ncommand = "corpus-mcp"\nargs = ["--stdio"]\n'


def cline_run(text: str | None) -> str | None:
    """Cline CLI rewrites providers.json whenever it runs (`JSON.stringify(data, null, 2)`): `modes` added where
    missing and a new `updatedAt` on the provider it saves (here on every entry, which covers that one). Its
    global settings it leaves as they are."""
    assert text is not None
    data = json.loads(text)
    if not isinstance(data.get("providers"), dict):
        return text
    data.setdefault("modes", {})
    for entry in data["providers"].values():
        entry["updatedAt"] = "2027-01-01T00:00:00.000Z"
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def gemini_mcp(text: str | None) -> str | None:
    """The user (or `gemini mcp add`) adds an MCP server to settings.json."""
    data = json.loads(text or "{}")
    data.setdefault("mcpServers", {})["corpus-test"] = {"command": "corpus-mcp", "args": ["--stdio"]}
    return json.dumps(data, indent=2) + "\n"


EDITS: dict[str, dict[str, Callable[[str | None], str | None]]] = {
    "codex": {"trust": codex_trust, "mcp": codex_mcp},
    "qwen": {"version": qwen_version},
    "opencode": {"mcp": opencode_mcp},
    "claude": {"permission": claude_permission, "rewrite": claude_rewrite},
    "cline": {"run": cline_run},
    "gemini": {"mcp": gemini_mcp},
    "droid": {"status-line": droid_status_line},
}


# -- the harness ----------------------------------------------------------------------------------------


@dataclass
class World:
    """A temporary HOME holding one corpus file where its agent reads it."""

    corpus: Path
    home: Path
    environ: dict[str, str]
    agent: ModuleType
    placed: Path

    @property
    def agent_files(self) -> list[Path]:
        return [f.path for f in self.agent.files(self.environ)]

    def snapshot(self) -> dict[str, bytes | None]:
        return {str(p.relative_to(self.home)): (p.read_bytes() if p.exists() else None) for p in self.agent_files}

    def profile(self, name: str) -> Profile:
        profile = profiles.get(name, self.environ)
        if self.agent.TRAITS.name == "claude" and not profile.anthropic_base_url:
            # taotoken states no Anthropic URL, so Claude Code would be skipped: give it one to switch to
            profile = dataclasses.replace(profile, anthropic_base_url="https://taotoken.net/api/anthropic")
        if self.agent.unsupported(profile):  # an agent that runs on a route only (Gemini CLI): the profile as one
            profile = dataclasses.replace(
                profile, anthropic_base_url="http://127.0.0.1:4000", route=Route(name, ("spare",)), name="route"
            )
        return profile

    def plan(self, name: str):
        profile = self.profile(name)
        keys, _ = key_source(profile, [self.agent], self.environ)
        return plan_switch(profile, [self.agent], self.environ, keys)

    def switch(self, name: str) -> bool:
        journal = Journal(self.environ)
        with journal.locked():
            plan = self.plan(name)
            done = journal.commit(plan.changes, {"kind": "switch", "profile": name, "label": f"switch {name}"})
        return done is not None

    def rollback(self) -> None:
        journal = Journal(self.environ)
        with journal.locked():
            entry, changes, _ = journal.rollback_plan(False)
            journal.rollback(entry, changes)


def make_world(corpus: Path, tmp: Path) -> World:
    home = tmp / "home"
    home.mkdir()
    empty_bin = tmp / "bin"  # no agent "installed": no version probe runs, every agent reads its key from a variable
    empty_bin.mkdir()
    environ = {**make_environ(home), "PATH": str(empty_bin)}
    placed = destination(corpus, home)
    placed.parent.mkdir(parents=True, exist_ok=True)
    placed.write_bytes(corpus.read_bytes())
    return World(corpus, home, environ, AGENTS[corpus.parent.name], placed)


def edited_file(world: World) -> Path:
    """The file the edit goes into: qwen's settings.json even when the corpus file is its .env."""
    if world.agent.TRAITS.name == "qwen":
        return world.home / ".qwen" / "settings.json"
    return world.placed


def read(path: Path) -> str | None:
    return path.read_bytes().decode("utf-8") if path.exists() else None


def unparsed(world: World, strict: dict[str, bool], step: str) -> list[str]:
    problems = []
    for path in world.agent_files:
        text = read(path)
        if text is None:
            continue
        rel = str(path.relative_to(world.home))
        try:
            oracle(path, text, strict.get(rel, True))
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            problems.append(f"after {step}: {rel} no longer parses: {exc}")
    return problems


def empty_leftovers(expected: Any, got: Any, path: tuple[str, ...] = ()) -> list[str]:
    """Containers in `got` that are empty and absent from `expected` (what agentcfg created and left)."""
    found = []
    if isinstance(got, dict):
        for key, value in got.items():
            here = (*path, key)
            there = expected.get(key) if isinstance(expected, dict) else None
            if (
                isinstance(value, (dict, list))
                and not value
                and (not isinstance(expected, dict) or key not in expected)
            ):
                found.append(".".join(here))
            elif isinstance(value, dict):
                found += empty_leftovers(there, value, here)
    return found


@pytest.fixture(autouse=True)
def no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """These checks are about bytes, not durability (test_crash covers that): skip the disk flushes, which
    dominate the run time on a busy machine."""
    from agentcfg import fsutil

    monkeypatch.setattr(fsutil.os, "fsync", lambda fd: None)


_RESULTS: dict[tuple[str, str], Any] = {}  # one run of each scenario per file, shared by the checks below


def once(key: tuple[str, str], factory: pytest.TempPathFactory, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`run()`'s result, computed once per test run: under xdist the workers share it through a file under
    the run's common temporary directory (the first to take the lock computes, the other reads)."""
    if key in _RESULTS:
        return _RESULTS[key]
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: each worker computes its own
        run_id = None
    if not run_id:
        _RESULTS[key] = run()
        return _RESULTS[key]
    import hashlib
    import pickle

    shared = factory.getbasetemp().parent / f"corpus-results-{run_id}"
    shared.mkdir(exist_ok=True)
    name = hashlib.sha256(repr(key).encode()).hexdigest()[:20]
    with open(shared / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / f"{name}.pickle"
        if done.exists():
            _RESULTS[key] = pickle.loads(done.read_bytes())
        else:
            _RESULTS[key] = run()
            done.write_bytes(pickle.dumps(_RESULTS[key]))
    return _RESULTS[key]


def plain_round_trip(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        world = make_world(corpus, tmp_path_factory.mktemp("plain"))
        strict = {str(world.placed.relative_to(world.home)): is_strict_json(corpus.read_text("utf-8"))}
        result: dict[str, Any] = {"before": world.snapshot(), "problems": [], "error": None}
        try:
            world.switch("local")
            result["after_local"] = world.snapshot()
            result["problems"] += unparsed(world, strict, "switch local")
            result["second_local"] = [str(c.path) for c in world.plan("local").pending]
            result["second_commit"] = world.switch("local")
            result["after_second_local"] = world.snapshot()
            world.switch("taotoken")
            result["problems"] += unparsed(world, strict, "switch taotoken")
            world.rollback()
            result["after_rollback_1"] = world.snapshot()
            result["problems"] += unparsed(world, strict, "first rollback")
            world.rollback()
            result["after_rollback_2"] = world.snapshot()
            result["problems"] += unparsed(world, strict, "second rollback")
        except AgentcfgError as exc:
            result["error"] = f"{type(exc).__name__}: {exc}"
        return result

    return once((corpus_id(corpus), "plain"), tmp_path_factory, run)


def edit_round_trip(corpus: Path, edit: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        world = make_world(corpus, tmp_path_factory.mktemp(f"edit-{edit}"))
        change = EDITS[world.agent.TRAITS.name][edit]
        target = edited_file(world)
        rel = str(target.relative_to(world.home))
        before = world.snapshot()
        expected = dict(before)
        done = change(original := read(target))
        if original is None and edit == "version":
            done = None  # a file agentcfg created that holds only qwen's own stamp goes with the rollback
        expected[rel] = None if done is None else done.encode("utf-8")
        strict = {rel: is_strict_json(read(target) or "{}")}
        result: dict[str, Any] = {"expected": expected, "rel": rel, "error": None, "problems": []}
        try:
            world.switch("local")
            edited = change(read(target))
            assert edited is not None
            target.write_bytes(edited.encode("utf-8"))
            result["problems"] += unparsed(world, strict, f"the {edit} edit")
            world.rollback()
            result["problems"] += unparsed(world, strict, "rollback")
            result["got"] = world.snapshot()
        except AgentcfgError as exc:
            result["error"] = f"{type(exc).__name__}: {exc}"
        return result

    return once((corpus_id(corpus), edit), tmp_path_factory, run)


def _diff(expected: bytes | None, got: bytes | None) -> str:
    import difflib

    if expected is None or got is None:
        return f"expected {'no file' if expected is None else 'a file'}, got {'no file' if got is None else 'a file'}"
    lines = difflib.unified_diff(
        expected.decode("utf-8").splitlines(keepends=True),
        got.decode("utf-8").splitlines(keepends=True),
        "expected",
        "got",
        n=1,
    )
    return "".join(list(lines)[:60])


def _snapshots_differ(expected: dict[str, bytes | None], got: dict[str, bytes | None]) -> str:
    return "\n".join(
        f"{rel}:\n{_diff(expected[rel], got.get(rel))}" for rel in expected if expected[rel] != got.get(rel)
    )


# -- the checks -----------------------------------------------------------------------------------------

FILES = corpus_files()
READABLE = [p for p in FILES if parses(p, p.read_bytes().decode("utf-8"))]
UNREADABLE = [p for p in FILES if p not in READABLE]


def test_the_corpus_is_large_and_varied() -> None:
    counts = {agent: sum(p.parent.name == agent for p in FILES) for agent in AGENT_DIRS}
    assert counts["codex"] >= 20 and counts["claude"] >= 20 and counts["opencode"] >= 15 and counts["qwen"] >= 8
    assert sum(counts.values()) >= 70
    sources = (CORPUS / "SOURCES.md").read_text("utf-8")
    for path in FILES:
        assert f"| {corpus_id(path)} |" in sources, f"{corpus_id(path)} has no row in SOURCES.md"


@pytest.mark.parametrize("corpus", UNREADABLE, ids=corpus_id)
def test_a_file_the_agent_cannot_read_is_refused_cleanly(corpus: Path, tmp_path: Path) -> None:
    world = make_world(corpus, tmp_path)
    with pytest.raises(AgentcfgError) as raised:
        world.switch("local")
    assert str(world.placed.relative_to(world.home)) in str(raised.value)
    assert world.placed.read_bytes() == corpus.read_bytes()


def check_plain_round_trip(corpus: Path, factory: pytest.TempPathFactory) -> None:
    """switch local, switch taotoken, rollback, rollback: every agent file as before, byte for byte."""
    result = plain_round_trip(corpus, factory)
    assert result["error"] is None, result["error"]
    assert result["after_rollback_1"] == result["after_local"], _snapshots_differ(
        result["after_local"], result["after_rollback_1"]
    )
    assert result["after_rollback_2"] == result["before"], _snapshots_differ(
        result["before"], result["after_rollback_2"]
    )


def check_second_switch(corpus: Path, factory: pytest.TempPathFactory) -> None:
    """A second identical switch plans nothing, commits nothing and changes no byte."""
    result = plain_round_trip(corpus, factory)
    assert result["error"] is None, result["error"]
    assert result["second_local"] == [], f"a second switch would rewrite {result['second_local']}"
    assert result["second_commit"] is False
    assert result["after_second_local"] == result["after_local"]


def check_every_step_parses(corpus: Path, factory: pytest.TempPathFactory) -> None:
    """After every step of both round trips, each agent file still parses as its format."""
    plain = plain_round_trip(corpus, factory)
    problems = list(plain["problems"])
    for edit in EDITS[corpus.parent.name]:
        problems += edit_round_trip(corpus, edit, factory)["problems"]
    assert plain["error"] is None, plain["error"]
    assert problems == []


def check_edit(corpus: Path, edit: str, factory: pytest.TempPathFactory) -> None:
    """switch local, the agent's (or user's) edit, rollback: exactly the original plus that edit."""
    result = edit_round_trip(corpus, edit, factory)
    assert result["error"] is None, result["error"]
    rel, expected, got = result["rel"], result["expected"], result["got"]
    problems = []
    if expected[rel] is not None and got.get(rel) is not None:
        path = Path(rel)
        strict = is_strict_json(expected[rel].decode("utf-8"))
        want = oracle(path, expected[rel].decode("utf-8"), strict)
        have = oracle(path, got[rel].decode("utf-8"), strict)
        problems = empty_leftovers(want, have)
    left = f"empty containers agentcfg created are left in {rel}: {problems}\n" if problems else ""
    if (corpus_id(corpus), edit) in BLANK_LINES_ONLY:
        expected, got = _blank_lines_aside(expected), _blank_lines_aside(got)
    assert not problems and got == expected, left + _snapshots_differ(expected, got)


# Where Codex's own edit rewrites the very lines agentcfg's edit touched, which blank line (or final newline)
# belongs to whom is a matter of taste: these pairs are held to every byte but blank lines and the last newline.
# codex/028: an inline `projects = {...}` (the file's first line, right above agentcfg's `model` lines) that
# Codex turns into tables when it trusts a folder; the file has no final newline, which Codex adds.
BLANK_LINES_ONLY = {("codex/028-yingchuan-projects-mcp.toml", "trust")}


def _blank_lines_aside(files: dict[str, bytes | None]) -> dict[str, bytes | None]:
    return {
        rel: None if b is None else b"\n".join(line for line in b.split(b"\n") if line.strip())
        for rel, b in files.items()
    }


# One test per (file, check), a file's checks next to each other: xdist then tends to run them on one worker,
# and `once` shares each round trip between the checks (and the workers) that read it.
CASES = [
    (path, check)
    for path in READABLE
    for check in ("plain-round-trip", "second-switch", "parses", *(f"edit-{e}" for e in EDITS[path.parent.name]))
]


@pytest.mark.parametrize(("corpus", "check"), CASES, ids=[f"{corpus_id(p)}:{c}" for p, c in CASES])
def test_corpus_file(corpus: Path, check: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    if check == "plain-round-trip":
        check_plain_round_trip(corpus, tmp_path_factory)
    elif check == "second-switch":
        check_second_switch(corpus, tmp_path_factory)
    elif check == "parses":
        check_every_step_parses(corpus, tmp_path_factory)
    else:
        check_edit(corpus, check.removeprefix("edit-"), tmp_path_factory)


# -- the edit functions themselves: what they produce on small known inputs ------------------------------


def test_codex_trust_lands_after_the_last_project_table() -> None:
    text = '[projects."/a"]\ntrust_level = "trusted"\n\n# tui\n[tui]\nx = 1\n'
    assert codex_trust(text) == (
        '[projects."/a"]\ntrust_level = "trusted"\n'
        f'\n[projects."{TRUSTED_PATH}"]\ntrust_level = "trusted"\n'
        "\n# tui\n[tui]\nx = 1\n"
    )


def test_codex_trust_without_projects_goes_after_the_last_table_before_trailing_comments() -> None:
    text = 'model = "m"\n[a]\nx = 1\n# end\n'
    assert (
        codex_trust(text) == f'model = "m"\n[a]\nx = 1\n\n[projects."{TRUSTED_PATH}"]\ntrust_level = "trusted"\n# end\n'
    )
    assert codex_trust('model = "m"') == f'model = "m"\n\n[projects."{TRUSTED_PATH}"]\ntrust_level = "trusted"\n'


def test_codex_trust_follows_toml_edit_key_order_not_file_order() -> None:
    # root keys in order a, b: the new `projects` table comes after b's last table, which is [b] here
    text = "[a]\nx = 1\n[b]\ny = 2\n[a.c]\nz = 3\n"
    out = codex_trust(text)
    assert out == f'[a]\nx = 1\n[b]\ny = 2\n\n[projects."{TRUSTED_PATH}"]\ntrust_level = "trusted"\n[a.c]\nz = 3\n'


def test_qwen_version_appends_or_replaces_in_place() -> None:
    assert qwen_version('{\n    "a": 1\n}') == '{\n    "a": 1,\n    "$version": 4\n}'
    assert qwen_version('{\n  "$version": 2,\n  "a": 1\n}\n') == '{\n  "$version": 4,\n  "a": 1\n}\n'
    assert qwen_version(None) == '{\n  "$version": 4\n}'


def test_textual_json_inserts() -> None:
    assert claude_permission('{\n  "permissions": {\n    "allow": [\n      "Read"\n    ]\n  }\n}\n') == (
        '{\n  "permissions": {\n    "allow": [\n      "Bash(corpus-test:*)",\n      "Read"\n    ]\n  }\n}\n'
    )
    assert (
        claude_permission('{"theme": "dark"}') == '{"permissions": {"allow": ["Bash(corpus-test:*)"]}, "theme": "dark"}'
    )
    assert opencode_mcp('{\n  // c\n  "a": 1\n}') == (
        '{\n  // c\n  "mcp": {"corpus-test": {"type": "local", "command": ["corpus-mcp", "--stdio"], '
        '"enabled": true}},\n'
        '  "a": 1\n}'
    )
    assert jsonc_data('{"a": [1, 2,], /* x */ "b": {"c": "//"},}') == {"a": [1, 2], "b": {"c": "//"}}
