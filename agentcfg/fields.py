r"""Field checks for every profile source: nothing agentcfg writes can be expanded by an agent.

A profile's strings end up verbatim in the agents' files (model, base URLs, description as the
provider's display name). A profile can come from a cloned repository or a URL, so a value must
never be something an agent turns into a secret on reading it. What each agent expands in the
files agentcfg writes (read from the installed agents, 2026-12-01):

agent, file       | what it expands, and where (installed agents: ~/.cache/agentcfg-ci/agents-1da400b248b5)
------------------|---------------------------------------------------------------------------------------
opencode 1.18.33  | `{env:NAME}` -> the variable ("" if unset), `{file:PATH}` -> the file's trimmed
opencode.json(c)  | text (`~/` = HOME, else relative to the config file). Case-sensitive, applied
                  | to the RAW TEXT before JSONC parsing (so a match may span several strings); `{file:`
                  | on a line starting `//` is skipped. Source: ConfigVariable.substitute,
                  | `text.replace(/\{env:([^}]+)\}/g, ...)`, `matchAll(/\{file:[^}]+\}/g)` (bin/opencode).
qwen-code 0.15.10 | `$NAME` and `${NAME}` -> the variable (unset: left as is) in every string VALUE of
and 0.24.4 (npm   | settings.json, user, workspace and system scopes (keys are not expanded). Source:
latest)           | packages/cli/src/utils/envVarResolver.ts `/\$(?:(\w+)|{([^}]+)})/g` (cli.js:470504),
                  | applied by loadSettings (cli.js:472397-472400); 0.24 leaves its internal secrets as is.
qwen-code .env    | nothing: `dotenv.parse` only, no dotenv-expand (loadEnvironment, cli.js:472196-472240).
Codex 0.171.0     | nothing: config.toml values are literal; `env_key` names a variable. openai/codex#2680
config.toml       | ("Support environment variable expansion") is open; PR #10275 was closed.
Claude Code       | settings.json `env` block: no expansion found. `${NAME}` / `${NAME:-default}` in MCP
2.1.197           | server configs (command, args, env, url, headers) and plugins: `Jre()`
                  | `/\$\{([A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?)\}/g`; `$NAME` / `${NAME}` in HTTP hook
                  | headers (allow-listed variables only); `${file:/abs}` and `${NAME}` in its dev config.

So every string field refuses `{env:` and `{file:` (any case), and `$` followed by a letter, digit,
`_` or `{`: the union of what any agent expands. agentcfg's own `{env:KEY_ENV}` for opencode's
apiKey is built from `key_env`, which is an identifier and so can hold no syntax at all.

Every pattern is matched against the whole string (`re.fullmatch`, or `(?![\s\S])` in the JSON
schema): `$` also matches before a trailing newline, which is how `model = "m\n"` used to pass.
schemas/profile.schema.json uses the same pattern strings (tests/test_fields.py checks both agree).
"""

from __future__ import annotations

import re
from typing import Any, TypeGuard

from agentcfg.errors import AgentcfgError
from agentcfg.patterns import lazy

# C0 (tab and newlines included), DEL, C1, the line/paragraph separators, bidi marks, embeddings,
# overrides and isolates (they reorder what a terminal shows), and zero-width characters.
CONTROL_CLASS = r"[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]"
# What opencode ({env:, {file:) and qwen-code / Claude Code ($NAME, ${...}) expand; see the table above. Each
# agent names the syntaxes it expands (Traits.expands); tests/agents/test_registry.py holds this union to them.
ENV_FILE_TEMPLATE = r"\{([Ee][Nn][Vv]|[Ff][Ii][Ll][Ee]):"
DOLLAR_TEMPLATE = r"\$[A-Za-z0-9_{]"
TEMPLATE_SYNTAXES = (ENV_FILE_TEMPLATE, DOLLAR_TEMPLATE)
TEMPLATE_PATTERN = "|".join(TEMPLATE_SYNTAXES)
_LABEL = r"[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?"
HOST_PATTERN = rf"{_LABEL}(\.{_LABEL})*\.?|\[[0-9A-Fa-f:.]+\]"  # a fully qualified name may end in "."
PORT_PATTERN = r"6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}"
URL_PATTERN = rf"https?://({HOST_PATTERN})(:({PORT_PATTERN}))?(/[^\s?#]*)?"
MODEL_PATTERN = r"\S+"
# Any case: a profile written before may read `my_key`, and a refusal would stop every command that loads it.
# The reserved names below are compared upper-cased (Windows does not tell PATH from Path).
KEY_ENV_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*"
NAME_MAX = 64
NAME_PATTERN = rf"[a-z0-9][a-z0-9_-]{{0,{NAME_MAX - 1}}}"
DESCRIPTION_MAX = 200
# Far above any real base URL (the longest in tests/corpus is 156 characters) and below what servers and
# proxies take in a request line (8 KiB); a longer value is a paste gone wrong.
URL_MAX = 2048
# The one statement of each number's range: the schema, `profile add`'s options, `profile set` and the docs
# say the same (tests/test_fields_ranges.py). 256: below that no agent's first prompt fits, and the smallest
# real window in the corpus is 25,000. 100,000,000: a hundred times the largest window served today (1,050,000),
# far inside Codex's i64 and JavaScript's exact integers.
INT_RANGES = {"context_window": (256, 100_000_000), "max_output_tokens": (16, 100_000_000)}
# Variables that steer programs rather than hold a secret: `agentcfg exec` sets key_env to the key in the child's
# environment and `agentcfg env` in the shell's, so a profile (a cloned repository's, a team file's) naming one
# would hand the key to the dynamic loader, Node, the shell or git as code or a path, point an agent at another
# config (CODEX_HOME, CLAUDE_CONFIG_DIR), and doctor and bench would read the variable's value as a key and send
# it to the profile's host. docs/switch.md lists them.
RUNTIME_VARIABLES = frozenset({
    "PATH", "HOME", "SHELL", "USER", "LOGNAME", "PWD", "OLDPWD", "TERM", "TMPDIR", "TEMP", "TMP", "LANG",
    "LANGUAGE", "TZ", "IFS", "ENV", "BASH_ENV", "CDPATH", "PROMPT_COMMAND", "PS1", "PS2", "PS3", "PS4", "ZDOTDIR",
    "EDITOR", "VISUAL", "PAGER", "LESSOPEN", "BROWSER", "DISPLAY", "WAYLAND_DISPLAY", "GNUPGHOME", "NODE_OPTIONS",
    "NODE_PATH", "NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED", "PERL5OPT", "PERL5LIB", "RUBYOPT",
    "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "COMSPEC", "PATHEXT", "SYSTEMROOT",
    "USERPROFILE", "APPDATA", "LOCALAPPDATA", "PSMODULEPATH", "CODEX_HOME", "CLAUDE_CONFIG_DIR",
    "OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR",
})  # fmt: skip
# Prefixes of whole families (the loader's LD_*, Python's PYTHON*, git's GIT_*, ...). A name ending in _API_KEY
# is left to the exact list: none of these programs reads one, and it is what `profile add` derives from a
# profile's name (a profile `git-mirror` reads GIT_MIRROR_API_KEY).
RUNTIME_PREFIXES = (
    "LD_", "DYLD_", "LC_", "PYTHON", "GIT_", "SSH_", "XDG_", "AGENTCFG_", "NPM_CONFIG_", "DBUS_", "KEYRING_",
)  # fmt: skip

_CONTROL = lazy(CONTROL_CLASS)
_TEMPLATE = lazy(TEMPLATE_PATTERN)
_URL = lazy(URL_PATTERN)
_HOST = lazy(HOST_PATTERN)
_MODEL = lazy(MODEL_PATTERN)
_KEY_ENV = lazy(KEY_ENV_PATTERN)
_NAME = lazy(NAME_PATTERN)
URL_FIELDS = ("base_url", "anthropic_base_url")

_EXPANDED_BY = {
    "{env:": "opencode replaces {env:NAME} in opencode.json with that variable's value",
    "{file:": "opencode replaces {file:PATH} in opencode.json with that file's content",
    "$": "qwen-code replaces $NAME and ${NAME} in settings.json with that variable's value "
    "(Claude Code does the same with ${NAME} in its MCP and hook settings)",
}


def reserved(variable: str) -> bool:
    """Whether a key_env names a variable that steers programs (RUNTIME_VARIABLES, RUNTIME_PREFIXES)."""
    upper = variable.upper()
    return upper in RUNTIME_VARIABLES or (upper.startswith(RUNTIME_PREFIXES) and not upper.endswith("_API_KEY"))


def splittable(url: str) -> bool:
    """Whether urllib can split `url` and read its port: an agent's file (or a project's) may hold anything,
    and `urlsplit` raises ValueError on some ("http://[::1": Invalid IPv6 URL) where agentcfg's guards call it."""
    from urllib.parse import urlsplit

    try:
        urlsplit(url).port  # noqa: B018 - raises on a bad bracket or port
    except ValueError:
        return False
    return True


def valid_name(name: str) -> bool:
    """A profile name: lower-case letters, digits, '-' and '_', at most 64, the whole string."""
    return _NAME.fullmatch(name) is not None


NAME_RULE = f"lower-case letters, digits, '-' and '_', starting with a letter or digit, at most {NAME_MAX} characters"


def name_problem(name: str) -> str | None:
    """What is wrong with a profile name, in words (None: nothing). An upper-case name gets its lower-case
    spelling back, which the caller puts into the command to run."""
    if valid_name(name):
        return None
    if not name:
        return "a profile name cannot be empty"
    if len(name) > NAME_MAX:
        return f"a profile name is at most {NAME_MAX} characters; this one has {len(name):,}"
    if valid_name(name.lower()):
        return f"profile names are lower-case: did you mean `{name.lower()}`?"
    bad = next((c for c in name.lower() if not re.fullmatch(r"[a-z0-9_-]", c)), None)
    if bad is None or name[0] in "-_":
        return f"a profile name starts with a letter or digit ({NAME_RULE})"
    shown = "a space" if bad == " " else repr(bad) if bad.isprintable() else f"U+{ord(bad):04X}"
    return f"a profile name is {NAME_RULE}; this one has {shown}"


def suggested_name(name: str) -> str | None:
    """A profile name close to `name` (lower-cased, other characters as '-', cut to NAME_MAX), or None."""
    text = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-_")[:NAME_MAX].strip("-_")
    return text if valid_name(text) else None


def _own_variable(name: str | None) -> str:
    return (name or "mygateway").upper().replace("-", "_") + "_API_KEY"


def _key_set_command(name: str | None) -> str:
    return f"`agentcfg key set {name}`" if name else "`agentcfg key set` followed by the profile's name"


def _control(field: str, value: str, where: str) -> None:
    found = _CONTROL.search(value)
    if found:
        char = found.group()
        raise AgentcfgError(
            f"field {field!r} contains the control character U+{ord(char):04X} at position {found.start()}",
            where=where,
            hint="Remove it (a trailing newline too): agentcfg never writes a control character into an agent's file.",
        )


def _template(field: str, value: str, where: str, name: str | None) -> None:
    found = _TEMPLATE.search(value)
    if not found:
        return
    start = found.start()
    if found.group().startswith("$"):  # $NAME, or ${...} up to its brace (at most 40 characters shown)
        kind, snippet = "$", "$" + _first(r"\{[^}]{0,40}\}?|\w{0,40}", value[start + 1 :])
    else:
        kind, snippet = found.group().lower(), _first(r"[^}]{0,40}\}?", value[start:])
    raise AgentcfgError(
        f"field {field!r} contains {snippet!r}, template syntax an agent expands: {_EXPANDED_BY[kind]}, "
        "so a profile could send a secret to its host",
        where=where,
        hint="Remove it: profile values are written literally. A key never goes in a profile: "
        f"name its variable with key_env and store it with {_key_set_command(name)}.",
    )


def _first(pattern: str, text: str) -> str:
    found = re.match(pattern, text)
    return found.group() if found else ""


def _credentials(field: str, value: str, where: str, name: str | None) -> None:
    """`user:pass@` or `user@` in a URL's authority. Checked before anything else that could quote the
    value, so no message shows a password."""
    scheme, sep, rest = value.partition("://")
    authority = re.split(r"[/?#]", rest if sep else value, maxsplit=1)[0]
    if "@" in authority:
        host = authority.rsplit("@", 1)[1]
        shown = _CONTROL.sub("?", f"{scheme if sep else 'https'}://***@{host[:60]}")
        raise AgentcfgError(
            f"field {field!r} has credentials in its URL ({shown}): they would be shown, logged, "
            "and sent as a Basic header instead of the profile's key",
            where=where,
            hint=f"Remove them from the URL and store the key with {_key_set_command(name)}.",
        )


def _url(field: str, value: str, where: str) -> None:
    scheme, sep, rest = value.partition("://")
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if not sep or scheme not in ("http", "https"):
        raise AgentcfgError(
            f"field {field!r} must be an http:// or https:// URL (lower-case scheme), not {value[:60]!r}",
            where=where,
            hint="For example https://gateway.example/v1 or http://localhost:8000/v1.",
        )
    if re.search(r"\s", value):
        raise AgentcfgError(f"field {field!r} contains whitespace", where=where, hint="Remove it.")
    if "?" in rest or "#" in rest:
        raise AgentcfgError(
            f"field {field!r} has a query or fragment (after '?' or '#'; not shown, it may hold a key)",
            where=where,
            hint="Give the base URL only, up to and including the version segment (e.g. /v1).",
        )
    host, colon, port = authority.rpartition(":") if not authority.endswith("]") else (authority, "", "")
    if not colon:
        host, port = authority, None
    if not _HOST.fullmatch(host) or (host.startswith("[") and not _ipv6(host[1:-1])):
        raise AgentcfgError(
            f"field {field!r} has no valid host ({host[:60]!r})",
            where=where,
            hint="Use a host name of letters, digits, '-', '.' (an IDN in its xn-- form), an IPv4 address, or [IPv6].",
        )
    if port is not None and not re.fullmatch(PORT_PATTERN, port):
        raise AgentcfgError(
            f"field {field!r} has an invalid port {port[:10]!r}", where=where, hint="A port is 1 to 65535."
        )
    if not _URL.fullmatch(value):  # the shape the schema requires; reached only by what the above misses
        raise AgentcfgError(f"field {field!r} is not a valid base URL ({value[:80]!r})", where=where)


def _ipv6(text: str) -> bool:
    import ipaddress  # only for a bracketed host: `agentcfg switch` stays quick to start

    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def check(data: dict[str, Any], where: str, *, name: str | None = None) -> None:
    """Refuse (AgentcfgError, exit 2) any string field an agent could expand or a terminal misshow.

    Pure; runs on every parse of every profile source. Types, required and unknown fields are the
    schema's to report: non-string values are skipped here. `name` (the profile's) goes in hints.
    """
    for field, value in data.items():
        if field in INT_RANGES and isinstance(value, int | float) and not isinstance(value, bool):
            _number(field, value, where)
        if not isinstance(value, str):
            continue
        if field in URL_FIELDS and len(value) > URL_MAX:  # before anything quotes it (a pasted page, a key)
            raise AgentcfgError(
                f"field {field!r} is {len(value):,} characters; a base URL is at most {URL_MAX:,}",
                where=where,
                hint="Give the base URL only, up to and including the version segment (e.g. https://gw.example/v1).",
            )
        if field in URL_FIELDS:
            _credentials(field, value, where, name)
        _control(field, value, where)
        _template(field, value, where, name)
        if field in URL_FIELDS:
            _url(field, value, where)
        elif field == "model" and not _MODEL.fullmatch(value):
            raise AgentcfgError(
                f"field 'model' must be one model id without whitespace, not {value[:80]!r}",
                where=where,
                hint="Give the id as the server lists it in GET /v1/models.",
            )
        elif field == "key_env" and _KEY_ENV.fullmatch(value) and reserved(value):
            raise AgentcfgError(
                f"field 'key_env' is {value}, a variable that steers programs (not one that holds a key); "
                "`agentcfg exec` and `agentcfg env` would set it to the key, and doctor would send its value as one",
                where=where,
                hint=f"Name a variable of the profile's own, for example {_own_variable(name)}.",
            )
        elif field == "key_env" and not _KEY_ENV.fullmatch(value):
            raise AgentcfgError(
                "field 'key_env' must be a variable name (ASCII letters, digits, '_'; not starting with a digit), "
                f"not {value[:80]!r}",
                where=where,
                hint="For example MYGATEWAY_API_KEY.",
            )
        elif field == "description" and len(value) > DESCRIPTION_MAX:
            raise AgentcfgError(
                f"field 'description' is {len(value)} characters; at most {DESCRIPTION_MAX}",
                where=where,
                hint="Shorten it: it is a label shown in agent UIs.",
            )
    window, output = data.get("context_window"), data.get("max_output_tokens")
    if _whole(window) and _whole(output) and output > window:
        raise AgentcfgError(
            f"field 'max_output_tokens' is {output:,}, larger than context_window ({window:,}): "
            "no reply can be longer than the window",
            where=where,
            hint=f"Give max_output_tokens at most {window:,}, or leave it out: agentcfg bounds each agent's output "
            "to what its prompt leaves of the window.",
        )


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(field: str, value: float, where: str) -> None:
    """A whole number in its range. Not a float, even `32768.0`: JSON Schema's "integer" takes it, and the agents'
    files would get it as written (Codex reads model_context_window as an i64 and refuses the whole file)."""
    least, most = INT_RANGES[field]
    if isinstance(value, int) and least <= value <= most:
        return
    digits = len(str(abs(value))) if isinstance(value, int) else 0
    shown = (
        f"{value!r}, not a whole number"
        if isinstance(value, float)
        else f"{value:,}"
        if digits <= 15
        else f"a {digits}-digit number"
    )
    what = "the model's context window" if field == "context_window" else "the bound on each reply"
    hint = (
        "Give a number in that range: the server's max_model_len (--detect reads it from a vLLM server)."
        if field == "context_window"
        else "Give a number in that range, or leave it out: agentcfg then bounds each agent's output to fit."
    )
    if isinstance(value, float) and value.is_integer() and least <= value <= most:
        hint = f"Write it without the decimal point: {field} = {int(value)}."
    raise AgentcfgError(
        f"field {field!r} is {shown}; {what} is a whole number of tokens from {least:,} to {most:,}",
        where=where,
        hint=hint,
    )
