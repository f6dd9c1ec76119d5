"""The real agents load their config files before a switch, after it, and after a rollback that
follows the agent's own edit — and the rolled-back file is the original plus that edit.

A unit test can only show that agentcfg writes what we believe an agent reads; this asks the agent.
Each agent is asked with the cheapest command that loads and validates its config and fails visibly
when the file is invalid (what each prints for the broken shapes: docs/testing.md):

    codex     `codex mcp list`                      exit 1, "Error: failed to load ... configuration"
    opencode  `opencode debug config --pure`        exit 1, "Error: Configuration is invalid at ..."
    qwen      `qwen` with no prompt (headless)      "Error in <file>: ..." / "An unexpected critical
              loads settings, models and auth,      error occurred"; a file that is not JSON is renamed
              then stops: "No input provided"       to settings.json.corrupted.<ms> and ignored
    claude    `claude doctor` on a terminal         an "Invalid settings" section naming the file and
              (`claude -p` ignores an invalid       each bad field
              file silently), + `claude auth status`

None of these calls a model or starts an MCP server, so each runs in a network namespace of its own
(agents.offline): files from the wild name MCP servers, plugins and hosts that must not be reached.

The files: tests/corpus/<agent>/ (real files from public repositories) when it exists, a few of
each agent's (AGENTCFG_E2E_CORPUS=all for every one), else the samples below; and always "no file".
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomlkit

from tests.conftest import REPO, Home, make_home
from tests.e2e import agents
from tests.fault_server import MODEL, dead_port

pytestmark = pytest.mark.e2e

CORPUS = REPO / "tests" / "corpus"
FILES_PER_AGENT = 6
QWEN_VERSION = 4  # the "$version" qwen-code 0.15 stamps into every settings.json it loads
CLINE_PROVIDERS = ".cline/data/settings/providers.json"
CLINE_GLOBAL = ".cline/data/settings/global-settings.json"


# -- where each agent reads its files -----------------------------------------------------------------


def main_file(agent: str, name: str = "") -> str:
    """The file (relative to HOME) a corpus or sample file of `agent` is placed at."""
    if agent == "codex":
        return ".codex/config.toml"
    if agent == "opencode":
        return ".config/opencode/opencode.jsonc" if name.endswith(".jsonc") else ".config/opencode/opencode.json"
    if agent == "claude":
        return ".claude/settings.json"
    if agent == "cline":
        return CLINE_GLOBAL if name.endswith(".global-settings.json") else CLINE_PROVIDERS
    if agent == "copilot":
        return ".copilot/settings.json" if name.startswith("settings") else ".copilot/providers.json"
    if agent == "gemini":
        return ".gemini/.env" if name.endswith(".env") else ".gemini/settings.json"
    if agent == "droid":
        return ".factory/settings.json"
    return ".qwen/.env" if name.endswith(".env") else ".qwen/settings.json"


# -- samples, for when the corpus is not there ----------------------------------------------------------

SAMPLES: dict[str, dict[str, str]] = {
    # No public repository holds a Copilot CLI providers.json (undocumented in `copilot help config`): samples.
    "copilot": {
        "providers-ollama.json": json.dumps(
            {
                "providers": [{"name": "ollama", "type": "openai", "baseUrl": "http://127.0.0.1:11434/v1"}],
                "models": [{"id": "qwen3-coder:30b", "provider": "ollama", "maxOutputTokens": 8192}],
            },
            indent=2,
        )
        + "\n",
        "settings-theme.json": '{\n  "theme": "dim",\n  "banner": "never",\n  "autoUpdate": false\n}\n',
    },
    "codex": {
        "mcp-projects.toml": """\
model = "gpt-5.1-codex"
approval_policy = "on-request"
sandbox_mode = "workspace-write"

[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_PERSONAL_ACCESS_TOKEN = "ghp_corpus_fake_0001" }

[projects."/home/dev/src/app"]
trust_level = "trusted"

[tui]
notifications = true
""",
        "own-provider.toml": """\
# my gateway
model = "qwen3-coder"
model_provider = "gateway"
model_reasoning_effort = "medium"

[model_providers.gateway]
name = "Gateway"
base_url = "https://gateway.example.invalid/v1"
env_key = "GATEWAY_API_KEY"
wire_api = "responses"

[model_providers.ollama-box]
name = "Ollama box"
base_url = "http://box.invalid:11434/v1"
""",
        "crlf-dotted.toml": 'model = "o4-mini"\r\nmodel_providers.lab.name = "Lab"\r\n'
        'model_providers.lab.base_url = "https://lab.invalid/v1"\r\n\r\n[features]\r\nweb_search_request = true\r\n',
    },
    "qwen": {
        "v4-mcp.json": """\
{
  "$version": 4,
  "ui": {
    "theme": "GitHub"
  },
  "general": {
    "vimMode": true
  },
  "mcpServers": {
    "context7": {
      "command": "npx",
      "args": ["-y", "@upstash/context7-mcp"]
    }
  }
}
""",
        "dashscope-provider.json": """\
{
  "$version": 4,
  "security": {
    "auth": {
      "selectedType": "openai"
    }
  },
  "model": {
    "name": "qwen3-coder-plus"
  },
  "modelProviders": {
    "openai": [
      {
        "id": "qwen3-coder-plus",
        "name": "DashScope",
        "baseUrl": "https://dashscope.example.invalid/compatible-mode/v1",
        "envKey": "DASHSCOPE_API_KEY"
      }
    ]
  }
}
""",
        "no-version.json": '{\n  "ui": {\n    "hideTips": true\n  }\n}\n',
        "dashscope.env": "OPENAI_API_KEY=sk-corpus-fake-0001\n"
        "OPENAI_BASE_URL=https://dashscope.example.invalid/compatible-mode/v1\nOPENAI_MODEL=qwen3-coder-plus\n",
    },
    "opencode": {
        "comments-mcp.jsonc": """\
{
  // keep in sync with the team's setup
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight",
  "autoupdate": false,
  "mcp": {
    "context7": {"type": "remote", "url": "https://mcp.example.invalid/mcp", "enabled": true},
  },
  /* a local model */
  "provider": {
    "ollama": {
      "npm": "@ai-sdk/openai-compatible",
      "options": {"baseURL": "http://localhost:11434/v1"},
      "models": {"qwen3:8b": {"limit": {"context": 32768, "output": 4096}}},
    },
  },
}
""",
        "agents.json": """\
{
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5",
  "agent": {
    "review": {
      "description": "Reviews code",
      "mode": "subagent",
      "tools": {"write": false, "edit": false}
    }
  },
  "permission": {"bash": "ask"}
}
""",
    },
    "claude": {
        "hooks-permissions.json": """\
{
  "env": {
    "DISABLE_TELEMETRY": "1"
  },
  "permissions": {
    "allow": [
      "Bash(git status:*)",
      "Read(~/.zshrc)"
    ],
    "deny": ["Read(./.env)"]
  },
  "hooks": {
    "PostToolUse": [
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --write ."}]}
    ]
  }
}
""",
        # tabs, no newline at the end
        "statusline.json": '{\n\t"model": "sonnet",\n\t"statusLine": {"type": "command", "command": "~/s.sh"}\n}',
    },
}


@dataclass(frozen=True)
class Case:
    agent: str
    name: str  # the corpus or sample file's name; "no-file" for an agent without a config file
    files: dict[str, str]  # relative to HOME -> the text placed there
    ours: bool  # written by this test (an agent rejecting it is the test's bug), not found in the wild


def _spread(names: list[str], count: int) -> list[str]:
    """`count` names spread evenly over the sorted list: the corpus is numbered by kind of file."""
    if len(names) <= count:
        return names
    return [names[round(i * (len(names) - 1) / (count - 1))] for i in range(count)]


def cases() -> list:
    chosen = []
    for agent in agents.AGENTS:
        corpus = CORPUS / agent
        ours = not corpus.is_dir()
        if ours:
            found = SAMPLES[agent]
        else:
            found = {p.name: p.read_bytes().decode("utf-8") for p in sorted(corpus.iterdir()) if p.is_file()}
        names = sorted(found)
        if os.environ.get("AGENTCFG_E2E_CORPUS") != "all":
            names = _spread(names, FILES_PER_AGENT)
        chosen.append(Case(agent, "no-file", {}, ours=True))
        chosen += [Case(agent, name, {main_file(agent, name): found[name]}, ours) for name in names]
    return [pytest.param(case, id=f"{case.agent}-{case.name}") for case in chosen]


# -- the agent's own edit --------------------------------------------------------------------------------


def _scan(text: str) -> list[tuple[int, tuple[str, ...], str]]:
    """Every `{` or `[` of a JSON(C) text outside strings and comments: (offset just past it, key path
    of the value it opens, the character). Enough to insert text the way a person editing would."""
    found: list[tuple[int, tuple[str, ...], str]] = []
    stack: list[tuple[str, ...]] = []
    key: str | None = None
    last_string = None
    i = 0
    while i < len(text):
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else len(text)
            continue
        if text.startswith("/*", i):
            i = text.index("*/", i) + 2
            continue
        if c == '"':
            end = i + 1
            while text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            last_string = json.loads(text[i : end + 1])
            i = end + 1
            continue
        if c == ":":
            key = last_string
        elif c in "{[":
            path = (*stack[-1], key) if stack and key is not None else stack[-1] if stack else ()
            found.append((i + 1, path, c))
            stack.append(path)
            key = None
        elif c in "}]":
            stack.pop()
            key = None
        elif c == ",":
            key = None
        i += 1
    return found


def _insert(text: str, path: tuple[str, ...], bracket: str, item: str) -> str | None:
    """`item` as the first member of the object/array at `path`; None when there is none."""
    for offset, at, c in _scan(text):
        if at == path and c == bracket:
            empty = text[offset:].lstrip().startswith("}]"[bracket == "["])
            return text[:offset] + item + ("" if empty else ",") + text[offset:]
    return None


def codex_edit(text: str, home: Path) -> str:
    """Codex trusting a folder: toml_edit appends a `[projects."<dir>"]` table. Where `projects` is an
    inline table or dotted keys (Codex would rewrite it into tables), a user's new `[mcp_servers.x]`
    table at the end instead: appending a `[projects.…]` table there would not be TOML."""
    nl = "\r\n" if "\r\n" in text else "\n"
    if text and not text.endswith("\n"):
        text += nl
    gap = nl if text.strip() else ""
    tables = (
        f'[projects."{home}"]{nl}trust_level = "trusted"{nl}',
        f'[mcp_servers.agentcfg-e2e]{nl}command = "true"{nl}enabled = false{nl}',
    )
    for table in tables:
        try:
            tomlkit.parse(text + gap + table)
        except tomlkit.exceptions.TOMLKitError:
            continue
        return text + gap + table
    raise AssertionError(f"neither edit fits this file:\n{text}")


MCP = '"e2e-notes": {"type": "local", "command": ["true"], "enabled": false}'


def opencode_edit(text: str, home: Path) -> str:
    """A person adding an MCP server to opencode's `mcp` block (making the block if there is none)."""
    inserted = _insert(text, ("mcp",), "{", f"\n    {MCP}")
    return inserted or _insert(text or "{}\n", (), "{", f'\n  "mcp": {{{MCP}}}') or text


RULE = "Bash(agentcfg-e2e:*)"


def claude_edit(text: str, home: Path) -> str:
    """A person (or `/permissions`) allowing one more command."""
    return (
        _insert(text, ("permissions", "allow"), "[", f'"{RULE}"')
        or _insert(text, ("permissions",), "{", f'"allow": ["{RULE}"]')
        or _insert(text or "{}\n", (), "{", f'\n  "permissions": {{"allow": ["{RULE}"]}}')
        or text
    )


def qwen_edit(text: str, home: Path) -> str:
    """qwen stamps `"$version"` itself whenever it loads a file without one; this only fills in a
    stamp it has not made (e.g. it found the file invalid)."""
    if '"$version"' in text:
        return text
    return _insert(text or "{}\n", (), "{", f'\n  "$version": {QWEN_VERSION}') or text


def cline_edit(text: str, home: Path) -> str:
    """The user's own setting: the voice input model in providers.json (`modes`), a theme in global-settings.json."""
    if '"modes"' in text or '"tuiTheme"' in text:
        return text
    if '"telemetryDisabled"' in text or '"telemetryOptOut"' in text:  # global-settings.json
        return _insert(text, (), "{", '\n  "tuiTheme": "dark"') or text
    item = '\n  "modes": {"voiceInput": {"providerId": "openai-compatible", "modelId": "whisper-1"}}'
    return _insert(text or "{}\n", (), "{", item) or text


def copilot_edit(text: str, home: Path) -> str:
    """`copilot config banner never` (settings.json, beside the `model` agentcfg sets)."""
    return _insert(text or "{}\n", (), "{", '\n  "banner": "never"') or text


def gemini_edit(text: str, home: Path) -> str:
    """A person (or `gemini mcp add`) adding an MCP server to Gemini CLI's `mcpServers`."""
    server = '"agentcfg-e2e": {"command": "agentcfg-e2e-mcp"}'
    inserted = _insert(text, ("mcpServers",), "{", f"\n    {server}")
    return inserted or _insert(text or "{}\n", (), "{", f'\n  "mcpServers": {{{server}}}') or text


def droid_edit(text: str, home: Path) -> str:
    """A person adding a status line (a top-level key in Droid's settings.json)."""
    line = '"statusLine": {"type": "command", "command": "agentcfg-e2e-status"}'
    return _insert(text or "{}\n", (), "{", f"\n  {line}") or text


EDITS: dict[str, Callable[[str, Path], str]] = {
    "codex": codex_edit,
    "opencode": opencode_edit,
    "claude": claude_edit,
    "qwen": qwen_edit,
    "cline": cline_edit,
    "copilot": copilot_edit,
    "gemini": gemini_edit,
    "droid": droid_edit,
}


def edited_file(case: Case) -> str:
    """The file the edit goes into: the case's own file, or where the agent would have it."""
    if case.agent == "qwen":
        return ".qwen/settings.json"
    if case.agent == "copilot":  # its providers list is agentcfg's to roll back whole: the user's edit goes here
        return ".copilot/settings.json"
    if case.agent == "gemini":  # its settings, whichever of its files the case is
        return ".gemini/settings.json"
    return next(iter(case.files), main_file(case.agent))


# -- asking the agent --------------------------------------------------------------------------------


@dataclass
class Load:
    """What an agent made of its config: `accepted` (no error about the file) and `outcome`, a short
    summary of what it then reports (to compare a rolled-back file with the original)."""

    accepted: bool
    outcome: str
    runs: list[agents.Run]

    def __str__(self) -> str:
        return f"accepted={self.accepted} outcome={self.outcome!r}\n" + "\n".join(map(str, self.runs))


QWEN_ERRORS = r"Error in .*|An unexpected critical error occurred:?\s*.*|FatalConfigError.*"


def at_least(version: str, first: str) -> bool:
    """Whether release `version` ("2.1.332") is `first` or later."""
    return tuple(map(int, version.split("."))) >= tuple(map(int, first.split(".")))


@functools.cache
def _version_of(agent: str, path: str) -> str:
    program = shutil.which(agent, path=path)
    assert program, f"{agent} is not on {path}"
    return agents.version(agent, Path(program).parent)


def release_in(home: Home, agent: str) -> str:
    """The version of `agent` that runs in `home` (the first on its PATH)."""
    return _version_of(agent, home.env["PATH"])


# qwen-code on a settings.json that is not JSON: 0.15.10 renames it to settings.json.corrupted.<ms> and
# carries on with empty settings; 0.24.4 copies it to settings.json.corrupted (no suffix), keeps it,
# and stops: "An unexpected critical error occurred: Error: Cannot read operator sandbox policy from
# <file>: SyntaxError: ... is not valid JSON. A copy was saved to <file>.corrupted" [run].
QWEN_COPIES_CORRUPT = "0.24.4"  # the first release seen doing the latter
# Claude Code's `claude doctor`: 2.1.197 draws a screen (on a terminal only) and waits for Enter; its
# section is "Invalid settings ✘" (the file is ignored) or "⚠" (it loads, less the rules it names),
# then "<file>", then "├ <field>: <why>" lines, before "Updates ✔". 2.1.332 prints a report and exits:
# "⚠ Invalid settings" whatever the consequence, then "- <file> › <field>: <why>" lines (a file
# whose only lines are "Invalid permission rule ... was skipped" still loads; any other line: ignored
# whole, as `claude auth status` shows for an env block beside `"model": 5`) [run, both releases].
CLAUDE_FLAT_DOCTOR = "2.1.332"  # the first release seen printing the flat report
CLAUDE_SKIPPED = r"Invalid permission rule .* was skipped"


def _claude_doctor(screen: str, flat: bool) -> tuple[bool, str] | None:
    """What `claude doctor` says of the settings: (file loads, its "Invalid settings" section on one
    line, "" when there is none); None when it drew no diagnostics."""
    if not flat:
        if "Updates" not in screen:
            return None
        invalid = re.search(r"Invalid settings (\S+)(.*?)(?=\n\s*\n|Updates)", screen, re.S)
        return (not invalid or invalid.group(1) == "⚠"), invalid.group(0) if invalid else ""
    if "For a full setup checkup" not in screen:
        return None
    invalid = re.search(r"⚠ Invalid settings\n(.*?)(?=\n\s*\n|\Z)", screen, re.S)
    if not invalid:
        return True, ""
    items = [line for line in invalid.group(1).splitlines() if line.startswith("- ")]
    return all(re.search(CLAUDE_SKIPPED, item) for item in items), invalid.group(0)


# What Copilot CLI 1.0.102 prints when it refuses providers.json (agents/copilot/checks.py).
COPILOT_ERRORS = (
    r"Invalid providers config[^\n]*|Invalid (named provider|provider model) configuration[^\n]*"
    r"|Provider model '[^']*' is not registered|BYOK model \"[^\"]*\" references unknown provider[^\n]*"
)


def load(agent: str, home: Home, timeout: float = 60) -> Load:
    env = {**home.env, "QWEN_CODE_DISABLE_PRECONNECT": "1"}  # qwen's start-up HEAD to its base URL

    def run(*argv: str) -> agents.Run:
        return agents.run(agents.offline(list(argv)), env, home.root, timeout, agent)

    if agent == "codex":
        r = run("codex", "mcp", "list")
        return Load(r.returncode == 0, "ok" if r.returncode == 0 else _first_error(r.output, home), [r])
    if agent == "opencode":
        r = run("opencode", "debug", "config", "--pure")  # prints the merged config as JSON
        if r.returncode != 0:
            return Load(False, _first_error(r.output, home), [r])
        try:
            return Load(True, f"model={json.loads(r.stdout).get('model')}", [r])
        except ValueError:
            return Load(False, "opencode debug config printed no JSON", [r])
    if agent == "qwen":
        # No prompt: qwen loads the settings, its models and auth, then stops ("No input provided").
        # --allowed-mcp-server-names keeps it from starting the file's MCP servers on the way.
        r = run("qwen", "--allowed-mcp-server-names", "agentcfg-e2e-none")
        copies = at_least(release_in(home, "qwen"), QWEN_COPIES_CORRUPT)
        corrupted = sorted(p.name for p in home.path(".qwen").glob("settings.json.corrupted*"))
        if corrupted and not copies:
            return Load(False, f"qwen renamed an invalid settings.json to {corrupted[0]}", [r])
        if error := re.search(QWEN_ERRORS, r.output):
            said = " ".join(error.group(0).replace(str(home.root), "~").split())
            return Load(False, said + (f" (qwen copied it to {corrupted[0]})" if corrupted else ""), [r])
        if corrupted:
            return Load(False, f"qwen copied an invalid settings.json to {corrupted[0]} and carried on", [r])
        if "No input provided via stdin" in r.output:
            return Load(True, "ready", [r])
        return Load(True, _first_error(r.output, home), [r])  # e.g. "No auth type is selected": loaded, no provider
    if agent == "cline":
        return _cline_load(home, env, timeout)
    if agent == "copilot":  # the files load before the first request (to a dead port here): refusals come first
        r = run("copilot", "-p", "ready", "--allow-all-tools", "-s", "--no-auto-update")
        if error := re.search(COPILOT_ERRORS, r.output):
            return Load(False, " ".join(error.group(0).replace(str(home.root), "~").split()), [r])
        return Load(True, _first_error(r.output, home), [r])  # e.g. it cannot reach the provider it was given
    if agent == "gemini":
        # `gemini mcp list` loads the settings (and the one .env) and stops: "Error in FILE: ..." (exit 52) for
        # a file it cannot read, "Invalid configuration in FILE" (a warning) for a value of the wrong type.
        r = run("gemini", "mcp", "list")
        warned = re.search(r"Invalid configuration in .*?(?=\n\n|\Z)", r.output, re.S)
        if r.returncode != 0:
            return Load(False, _first_error(r.output, home), [r])
        said = " ".join(warned.group(0).replace(str(home.root), "~").split()) if warned else ""
        return Load(True, "ok" + (f"; {said}" if said else ""), [r])
    if agent == "droid":
        return _droid_load(home, run)
    # Claude Code: `claude -p` silently ignores a settings file that fails validation; `claude doctor`
    # names it (CLAUDE_FLAT_DOCTOR: how each release shows it). `auth status` shows whether the file's
    # env block took effect (a file that fails validation is ignored whole).
    flat = at_least(release_in(home, "claude"), CLAUDE_FLAT_DOCTOR)
    until = r"For a full setup checkup" if flat else r"Updates"
    for _ in range(2):  # an empty screen (rc 0 in 0.8 s, once in CI) says nothing of the file: one more look
        doctor = agents.run_tty(
            agents.offline(["claude", "doctor"]), {**env, "TERM": "xterm-256color"}, home.root, timeout, until, agent
        )
        if doctor.stdout.strip():
            break
    status = run("claude", "auth", "status")
    seen = _claude_doctor(doctor.stdout, flat)
    if seen is None:
        return Load(False, "claude doctor drew no diagnostics", [doctor, status])
    loads, section = seen
    said = " ".join(section.replace(str(home.root), "~").split())
    if not loads:
        return Load(False, said, [doctor, status])
    try:
        logged_in = json.loads(status.stdout)["loggedIn"]
    except (ValueError, KeyError):
        return Load(False, "claude auth status printed no status", [doctor, status])
    return Load(True, f"loggedIn={logged_in}" + (f"; {said}" if said else ""), [doctor, status])


CLINE_SETTINGS = r"Provider\s+(\S.*?)\s{2,}Model\s+(\S.*?)\s{2,}Mode"


def _cline_load(home: Home, env: dict[str, str], timeout: float) -> Load:
    """Cline CLI refuses no providers.json: one that breaks its schema it drops without a word and uses its own
    "cline" provider instead. `cline config` (a terminal screen) shows the provider and model it took. cline
    rewrites providers.json whenever it starts (a new `updatedAt`, its stamp, on the provider it uses): the
    bytes are put back, so that the file compared is the user's and agentcfg's alone."""
    path = home.path(CLINE_PROVIDERS)
    before = path.read_bytes() if path.exists() else None
    # Its screen starts a hub daemon that outlives it: in a PID namespace of its own, it ends with the screen.
    argv = agents.offline(["unshare", "--pid", "--fork", "--kill-child", "cline", "config"])
    screen = agents.run_tty(argv, {**env, "TERM": "xterm-256color"}, home.root, timeout, CLINE_SETTINGS)
    if before is None:
        path.unlink(missing_ok=True)
    else:
        path.write_bytes(before)
    shown = re.search(CLINE_SETTINGS, screen.stdout)
    if not shown:
        return Load(False, "cline config drew no settings", [screen])
    return Load(True, f"provider={shown.group(1)} model={shown.group(2)}", [screen])


DROID_LOG = ".factory/logs/droid-log-single.log"
DROID_REJECTS = r"Failed to load settings file.*?\"message\":\"([^\"]*)|Ignoring malformed settings file"


def _droid_load(home: Home, run: Callable[..., agents.Run]) -> Load:
    """`droid exec --list-tools --model custom:agentcfg-local` loads its settings, looks the model up among its
    custom models and prints "Available tools for NAME" (the entry's displayName), or "Invalid model: ..."
    when it has none of that id, without calling it. (--list-tools reads only --model, not the default model
    of the settings: test_agents_answer.py runs a turn on that.) A settings.json it cannot load (not JSON, an
    unknown provider) it drops whole without a word on the terminal: its log says so."""
    log = home.path(DROID_LOG)
    start = log.stat().st_size if log.exists() else 0
    r = run("droid", "exec", "--list-tools", "--model", "custom:agentcfg-local")
    said = log.read_bytes()[start:].decode("utf-8", "replace") if log.exists() else ""
    if rejected := re.search(DROID_REJECTS, said):
        return Load(False, " ".join(filter(None, rejected.groups())) or rejected.group(0), [r])
    if model := re.search(r"Available tools for (.+)", r.stdout):
        return Load(r.returncode == 0, f"model={model.group(1).strip()}", [r])
    if invalid := re.search(r"Invalid model: \S+", r.output):  # rc 1: loaded, and the model is not among them
        return Load(True, invalid.group(0), [r])
    return Load(False, _first_error(r.output, home), [r])


def _first_error(output: str, home: Home) -> str:
    """The start of what an agent printed, on one line: HOME as ~, colours and Codex's PATH-alias
    warning dropped."""
    output = re.sub(r"\x1b\[[0-9;]*m", "", output).replace(str(home.root), "~")
    lines = [line.strip() for line in output.splitlines() if line.strip() and "PATH aliases" not in line]
    return " ".join(lines[:4])[:300] if lines else "(nothing)"


# -- the test ----------------------------------------------------------------------------------------

SWITCHED = {  # what each agent reports once `switch local` has pointed it at the test server
    "codex": "ok",
    "opencode": f"model=agentcfg-local/{MODEL}",
    "qwen": "ready",
    "claude": "loggedIn=True",
    "cline": f"provider=OpenAI Compatible model={MODEL}",
    "copilot": "Could not connect to local model provider at http://127.0.0.1:",  # switched to a dead port
    "gemini": "ok",
    "droid": "model=agentcfg: ",
}


def _read(home: Home, relative: str) -> str | None:
    path = home.path(relative)
    return path.read_bytes().decode("utf-8") if path.exists() else None


def _parsed(relative: str, text: str) -> object:
    if relative.endswith(".toml"):
        return tomlkit.parse(text).unwrap()
    from agentcfg.edit import load as parse  # agentcfg's JSONC reader: opencode's files may have comments

    return parse("json", text, path=relative)


# Claude Code migrates the user's settings when it loads them, by what the provider offers, and writes the
# whole file back in its own layout. Under agentcfg's env block (a gateway) 2.1.332 does what it does not
# on the first-party default of the probe [run, tests/corpus/claude/024-iimuz-sandbox.json, 001-0maru-...]:
# "migration_opus_to_opus1m" (`if(Dd("userSettings")?.model!=="opus")return!0;…Qr("userSettings",
# {model:"opus[1m]"})`) and the auto-mode reset (`if(o?.skipAutoPermissionPrompt&&o?.permissions?.
# defaultMode!=="auto")…Qr("userSettings",{skipAutoPermissionPrompt:void 0})`) in its binary. The
# rollback keeps those changes, as it keeps any edit not agentcfg's. (2.1.197 drops `"model": "opus"`
# there, and the rollback puts it back: step 4 holds byte for byte.)
MIGRATES = {"claude": ("2.1.332", {"model", "skipAutoPermissionPrompt"})}  # agent: (first release, keys)


def _own_migration(agent: str, home: Home, written: dict[str, str | None]) -> dict[str, dict]:
    """The top-level keys (and their new values, None: removed) the agent changed in its files while it
    loaded them, by file, at a release MIGRATES names: only the keys it names, any other change fails."""
    found: dict[str, dict] = {}
    first, keys = MIGRATES.get(agent, ("", set()))
    if not first or not at_least(release_in(home, agent), first):
        return found
    for relative, before in written.items():
        after = _read(home, relative)
        if after == before:
            continue
        old, new = _parsed(relative, before or "{}"), _parsed(relative, after or "{}")
        assert isinstance(old, dict) and isinstance(new, dict), relative
        changed = {k: new.get(k) for k in {*old, *new} if old.get(k) != new.get(k)}
        assert set(changed) <= keys, f"{agent} changed {sorted(set(changed) - keys)} in {relative}:\n{after}"
        found[relative] = changed
    return found


@pytest.mark.parametrize(("case", "release"), agents.matrix(cases(), lambda values: values[0].agent))
def test_the_agent_loads_its_file_after_switch_and_rollback(
    case: Case, agent_home: Home, agents_bin: Path, tmp_path: Path
) -> None:
    agent, home, edit = case.agent, agent_home, EDITS[case.agent]
    edited = edited_file(case)
    paths = sorted({*case.files, edited})

    # 1. The original, loaded in a HOME of its own: what the agent leaves there is the file as its
    # user has it (qwen stamps "$version" into what it loads; the others leave it as it is).
    (tmp_path / "probe").mkdir()
    probe = make_home(tmp_path / "probe")
    probe.env = agents.environment(probe.env, agents_bin)
    for relative, text in case.files.items():
        probe.write(relative, text)
    first = load(agent, probe)
    if not first.accepted:
        if case.ours:
            pytest.fail(f"{agent} rejects {case.name}, which the test wrote:\n{first}")
        pytest.skip(f"{agent} rejects this file as found, before any switch: {first.outcome}")
    base = {relative: _read(probe, relative) for relative in paths}

    # 2. `agentcfg switch local`, pointed at a loopback port (no check calls a model, so no server
    # needs to listen there): the agent loads what agentcfg wrote.
    for relative, text in case.files.items():
        home.write(relative, text)
    root = f"http://127.0.0.1:{dead_port()}"
    home.run(
        "profile", "add", "local", "--force", "--base-url", f"{root}/v1", "--model", MODEL,
        "--anthropic-base-url", root, "--context-window", "131072",
    )  # fmt: skip
    profile = "local"
    if agents.plain_profile_refused(agent):  # it runs on a route: one at that port, in front of `local` (not served)
        profile, text = "route", f'base_url = "{root}/v1"\nanthropic_base_url = "{root}"\nmodel = "{MODEL}"\n'
        home.write(".config/agentcfg/profiles/spare.toml", text)
        home.write(
            f".config/agentcfg/profiles/{profile}.toml", text + '[route]\nprimary = "local"\nfallbacks = ["spare"]\n'
        )
    home.run("switch", profile, "--agent", agent)
    written = {relative: _read(home, relative) for relative in paths}
    switched = load(agent, home)
    assert switched.accepted, f"{agent} rejects what `agentcfg switch local` wrote:\n{switched}"
    assert switched.outcome.startswith(SWITCHED[agent]), f"{agent} does not see the profile:\n{switched}"
    migrated = _own_migration(agent, home, written)  # what the agent itself wrote while it was switched

    # 3. The agent's (or its user's) own edit, then `agentcfg rollback`: the agent loads the result,
    # and treats it as it treated the original.
    home.write(edited, edit(_read(home, edited) or "", home.root))
    undone = home.run("rollback", check=None)
    assert undone.returncode == 0, (undone.stdout, undone.stderr)
    back = load(agent, home)
    left = _read(home, edited)
    assert back.accepted, f"{agent} rejects the file that the edit and `agentcfg rollback` left:\n{back}\n---\n{left}"
    assert back.outcome == first.outcome, f"{agent} treats the rolled-back file unlike the original:\n{back}"

    # 4. ... and it is the original plus the edit, byte for byte.
    for relative in paths:
        now = _read(home, relative)
        if relative == edited and base[relative] is None:
            # agentcfg created the file and the edit went into it: the edit alone must be left (for
            # qwen, whose "edit" is its own stamp, no file at all is as good).
            want = _parsed(relative, edit("", home.root))
            got = _parsed(relative, now) if now is not None else None
            if isinstance(got, dict):
                got.pop("$schema", None)  # opencode's seed line, which agentcfg may keep
            allowed = [want, None] if agent == "qwen" else [want]
            assert got in allowed, f"{relative}: not just the edit after rollback; it holds\n{now}"
        else:
            want_text = edit(base[relative], home.root) if relative == edited else base[relative]
            if agent == "qwen" and relative == edited and "$version" not in case.files.get(relative, "$version"):
                # qwen migrated an old-layout file when it first read it, rewriting it whole: the keys it
                # moved land in an order that depends on where agentcfg's keys were, so compare the data.
                assert _parsed(relative, now) == _parsed(relative, want_text), f"{relative}:\n{now}\n  !=\n{want_text}"
                continue
            if relative in migrated:
                # the agent rewrote the file itself (whole): the original's data, plus what it changed, plus the edit
                want_data = {**_parsed(relative, want_text), **migrated[relative]}  # type: ignore[dict-item]
                want_data = {k: v for k, v in want_data.items() if v is not None}
                assert _parsed(relative, now) == want_data, f"{relative}:\n{now}\n  !=\n{want_data}"
                continue
            assert now == want_text, f"{relative} is not the original plus the edit:\n{now!r}\n  !=\n{want_text!r}"


# -- each check can fail ------------------------------------------------------------------------------

PROVIDER = '[model_providers.agentcfg-local]\nname = "x"\nbase_url = "http://127.0.0.1:9/v1"\nwire_api = "responses"\n'
OPENCODE_LEFTOVER = '{"provider": {"agentcfg-local": {"options": {}, "models": {"M": {"limit": {}}}}}}'
CLINE_ENTRY = (
    '{"version": 1, "lastUsedProvider": "openai-compatible", "providers": {"openai-compatible": {"settings": '
    '{"provider": "openai-compatible", "model": "m", "baseUrl": "http://127.0.0.1:9/v1"}, '
    '"updatedAt": "2000-01-01T00:00:00.000Z"}}}'
)
QWEN_LEFTOVER = '{"security": {"auth": {}}, "model": {}, "modelProviders": {}}'
# (agent, what, the file, rejected?, what the agent says): the shapes a rollback that leaves agentcfg's
# emptied containers behind produces today, and a control each agent must reject.
BROKEN = [
    ("codex", "empty provider table, selected", 'model_provider = "agentcfg-local"\n[model_providers.agentcfg-local]\n',
     True, r"provider name must not be empty"),
    ("codex", "empty provider table, not selected", "[model_providers.agentcfg-local]\n",
     True, r"provider name must not be empty"),
    ("codex", "empty auth table", f"{PROVIDER}[model_providers.agentcfg-local.auth]\n",
     True, r"missing field `command`"),
    ("opencode", "limit without context and output", OPENCODE_LEFTOVER, True, r"Missing key .*limit\.context"),
    ("opencode", "empty provider and model", '{"provider": {"agentcfg-local": {"options": {}, "models": {"M": {}}}}}',
     False, r"model=None"),
    ("claude", "empty env block", '{"env": {}}', False, r"loggedIn=False"),
    ("claude", "env that is not an object (control)", '{"env": "x"}',
     True, r"env: ?Expected record, ?but received string"),
    ("claude", "not JSON (control)", '{"env": }', True, r"Invalid or malformed JSON"),
    ("qwen", "emptied auth, model and providers", QWEN_LEFTOVER, False, r"No auth type is selected"),
    ("qwen", "a provider list that is not a list (control)", '{"modelProviders": {"openai": "x"}}',
     True, r"missing required field: id"),
    ("qwen", "not JSON (control)", '{"model": }',
     True, r"renamed an invalid settings\.json to settings\.json\.corrupted\."),
    # cline drops a providers.json that breaks its schema without a word: its own provider, not the file's
    ("cline", "an entry without updatedAt", CLINE_ENTRY.replace(', "updatedAt": "2000-01-01T00:00:00.000Z"', ""),
     False, r"provider=Cline Usage-Billing"),
    ("cline", "the same entry with updatedAt (control)", CLINE_ENTRY, False, r"provider=OpenAI Compatible model=m$"),
    ("droid", "emptied list and session defaults", '{"customModels": [], "sessionDefaultSettings": {}}',
     False, r"Invalid model: custom:agentcfg-local"),
    ("droid", "an unknown provider (control)",
     '{"customModels": [{"model": "m", "id": "custom:agentcfg-local", "baseUrl": "http://127.0.0.1:9/v1", '
     '"provider": "chat"}]}', True, r"Unsupported custom model provider"),
    # Droid says nothing of a settings.json that is not JSON, but that it ignores the project's (here the same
    # file: the test runs it in HOME).
    ("droid", "not JSON (control)", '{"customModels": }', True, r"Ignoring malformed settings file"),
]  # fmt: skip


# Where a later release treats the file otherwise: (agent, what) -> [(first release seen, rejected?,
# what it says)], newest first; a release before all of them does what BROKEN says.
LATER = {
    # qwen-code 0.24.4 drops a modelProviders.<k> that is not a list (a string, a number; an object is
    # the v5 shape, which it downgrades to its `models` list) and loads the rest; 0.15.10 stops with
    # "missing required field: id" or "models is not iterable". A list entry without an id stops both.
    ("qwen", "a provider list that is not a list (control)"): [("0.24.4", False, r"No auth type is selected")],
    ("qwen", "not JSON (control)"): [
        ("0.24.4", True, r"Cannot read operator sandbox policy from ~/\.qwen/settings\.json: SyntaxError: .*"
         r"not valid JSON.*\(qwen copied it to settings\.json\.corrupted\)$"),
    ],
}  # fmt: skip


def expected(agent: str, what: str, rejected: bool, says: str, version: str) -> tuple[bool, str]:
    """(rejected?, what the agent says) for `agent` at `version`."""
    for first, later_rejected, later_says in LATER.get((agent, what), []):
        if at_least(version, first):
            return later_rejected, later_says
    return rejected, says


@pytest.mark.parametrize(
    ("agent", "what", "text", "rejected", "says", "release"),
    agents.matrix([pytest.param(*case, id=f"{case[0]}-{case[1]}") for case in BROKEN]),
)
def test_the_check_tells_a_broken_file(
    agent: str, what: str, text: str, rejected: bool, says: str, agent_home: Home
) -> None:
    rejected, says = expected(agent, what, rejected, says, release_in(agent_home, agent))
    agent_home.write(main_file(agent), text)
    seen = load(agent, agent_home)
    assert seen.accepted is not rejected, seen
    assert re.search(says, seen.outcome), seen
