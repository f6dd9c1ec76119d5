"""Keep key values out of everything agentcfg prints.

Two layers, both applied by `RedactingStream` (the CLI's stdout and stderr), so no output path can forget:
every key value agentcfg has seen in this process (read from the keyring or the environment) is replaced
wherever it appears, and secrets agentcfg never saw are masked by their shape (`mask_text`):

- `Bearer <token>`, `Basic <base64>`, and whatever scheme follows `Authorization:`;
- the password in any URL (`http://user:****@host`: the user and host stay, to keep messages useful),
  and a user part that is itself a token (`https://****@github.com`);
- the value after `--token`, `--api-key`, `--password`, ... in command lines and in TOML/JSON argument
  lists (`"--token", "…"`, also across the lines of a diff), and `--token=…`;
- the value of any key or header whose name says key/token/secret/password/auth (`OPENAI_API_KEY=…`,
  `"x-portkey-api-key": "…"`, the `x-api-key: …` lines of ANTHROPIC_CUSTOM_HEADERS).

A value is masked only if it could be a secret: references (`{env:VAR}`, `$VAR`), variable names, paths,
numbers, URLs, the placeholder key and, where the name is only weakly secret-like (`key`, `auth`), plain
words (`"key_source": "plaintext in its file"`) are left alone. Masks never eat a quote or a backslash,
so JSON stays JSON. `key get` and `env` print a key on purpose through `RedactingStream.raw`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from agentcfg.patterns import lazy

MASK = "****"
# Written where a keyless server still needs some key (qwen-code, Claude Code refuse to run without).
# Here rather than in profiles, which imports far more than `agentcfg --help` needs.
PLACEHOLDER_KEY = "agentcfg-no-key"
MIN_SECRET_LENGTH = 6  # shorter values would mask ordinary words; no real API key is this short
MIN_SHAPED_LENGTH = 8  # a value masked by shape alone: shorter ones are flags, ports, `openai`
_known: set[str] = set()


# What a value may be made of: it stops at quotes, backslashes (a JSON escape such as the `\n` between
# two headers), whitespace and the punctuation that ends a value in TOML, JSON, .env and query strings.
_VALUE = r"""[^"'\s,#}\]\\&;)]+"""
_SECRET_WORD = r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|AUTH|AUTHORIZATION|CREDENTIALS?)"
# A name starts where a run of name characters starts (the lookbehind) and says KEY, TOKEN, ... within its
# first 64 characters (the lookahead): both keep the pattern linear on a long run of letters. A run that
# follows a path separator is a file's name, not a key's (`cannot run /etc/passwd: permission denied`).
_SECRET_ASSIGNMENT = lazy(
    rf"""(?P<lead>(?P<name>(?<![\w.\-/\\])["']?(?=[\w.-]{{0,64}}{_SECRET_WORD})[\w.-]{{1,128}}["']?)"""
    rf"""\s{{0,16}}[:=]\s{{0,16}}["']?)(?P<value>{_VALUE})""",
    re.IGNORECASE,
)
# A name is judged by its parts (OPENAI_API_KEY, apiKey, x-portkey-api-key: split at _ - . and camelCase),
# so that taotoken, monkey, keyring, oauth and MAX_OUTPUT_TOKENS are not secret names.
_NAME_PART = lazy(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_STRONG_PARTS = frozenset({"token", "secret", "password", "passwd", "pass", "credential", "credentials", "apikey"})
_WEAK_PARTS = frozenset({"key", "auth", "authorization"})  # key_source, authType: masked only if not a word
_STRONG_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key")})
# The last part of a name about a secret, not the secret: apiKeyHelper (a command), key_env, token_limit, KEY_ID.
_ABOUT_PARTS = frozenset(
    {"helper", "helpers", "command", "cmd", "url", "uri", "env", "var", "file", "path", "dir", "name", "id", "type"}
    | {"limit", "source", "method", "mode", "header", "headers", "count", "set"}
)
# `Authorization: <scheme> <credentials>` (any scheme: token, Bearer, Basic, Digest ...), and Bearer/Basic
# wherever they stand (a header in a diff line, an error message, a curl command).
_AUTH_HEADER = lazy(
    r"""(?P<lead>\b(?:proxy-)?authorization["']?\s{0,16}[:=]\s{0,16}["']?[A-Za-z][\w-]{0,32}\s{1,16})"""
    r"""(?P<value>[A-Za-z0-9._~+/=:-]+)""",
    re.IGNORECASE,
)
_AUTH_SCHEME = lazy(r"(?P<lead>\b(?:Bearer|Basic)\s{1,16})(?P<value>[A-Za-z0-9._~+/=-]+)", re.IGNORECASE)
# scheme://user:password@ (the password masked) and scheme://token@ (a user part shaped like a token).
_URL_PASSWORD = lazy(
    r"""(?P<lead>\b[A-Za-z][\w+.-]{0,31}://[^\s/?#@:"'\\]{0,256}:)(?P<value>[^\s/?#@"'\\]{1,256})(?=@)"""
)
_URL_USER = lazy(r"""(?P<lead>\b[A-Za-z][\w+.-]{0,31}://)(?P<value>[^\s/?#@:"'\\]{20,256})(?=@)""")
# --token VALUE, --token=VALUE, "--token", "VALUE" (TOML and JSON lists, also when a diff splits the list
# over lines: the separator may hold a newline and the next line's diff marker).
# Every pattern starts only where a run of letters starts and repeats a bounded number of times: the stream
# masks every write, and an unbounded `[\w.-]*KEY` was quadratic on a long line (a base64 blob in a diff).
_SECRET_FLAG = lazy(
    r"""(?P<lead>(?<![\w-])--?(?P<name>[\w-]{1,64})"""
    r"""(?:=|["']\s{0,16},\s{0,16}(?:\n[-+ ]?\s{0,64})?["']|[ \t]{1,16}["']?))(?!-)(?P<value>""" + _VALUE + ")"
)
_VARIABLE_NAME = lazy(r"[A-Z_][A-Z0-9_]*")
_PLAIN_WORDS = lazy(r"[A-Za-z][a-z]*(?:[-.][a-z]+)*")  # plaintext, oauth-personal, Keyring
_NUMBER = lazy(r"[\d.:_-]+")  # 1048576, 32000, 2026-12-01, 12:00:00
_REFERENCES = ("{env:", "{file:", "$", "/", "~", "<", "…", MASK)

# A name part, as in OPENAI_API_KEY or GITHUB_TOKEN (not PYTHON_KEYRING_BACKEND); not *_KEY_FILE and such.
_SECRET_NAME = lazy(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD)(?:$|_)", re.IGNORECASE)
_NOT_SECRET_NAME = lazy(r"_(?:FILE|PATH|DIR|SOCK|ENV|ID|NAME)$", re.IGNORECASE)


def register(value: str | None) -> None:
    """Remember a key value so that no later output shows it."""
    if value and len(value) >= MIN_SECRET_LENGTH and value != PLACEHOLDER_KEY:
        _known.add(value)


def register_environment(environ: Mapping[str, str]) -> None:
    """Register the value of every variable whose name looks like a secret's (paths and sockets aside)."""
    for name, value in environ.items():
        if _SECRET_NAME.search(name) and not _NOT_SECRET_NAME.search(name) and not value.startswith(("/", "~")):
            register(value)


def is_secret(value: str) -> bool:
    """Whether `value` is a key agentcfg has seen in this process."""
    return value in _known


def tail(value: str) -> str:
    """A masked form that still tells keys apart (`…a1b2`), shown only for keys long enough to spare 4 chars."""
    return f"…{value[-4:]}" if len(value) >= 16 else "…"


def scrub(text: str) -> str:
    """`text` with every known key value replaced by a mask."""
    for value in sorted(_known, key=len, reverse=True):
        if value in text:
            text = text.replace(value, MASK)
    return text


# What a terminal would obey in a server's (or a child process's) text; tab and line feed stay as they are.
_TERMINAL_CONTROL = lazy(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def terminal_safe(text: str) -> str:
    """`text` with the control characters a terminal would obey shown as `\\xNN` escapes."""
    return _TERMINAL_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def could_be_secret(value: str, *, strong: bool = True) -> bool:
    """Whether a value found where a secret may stand is shaped like one (`strong`: the name says so)."""
    if len(value) < MIN_SHAPED_LENGTH or value == PLACEHOLDER_KEY or value.startswith(_REFERENCES):
        return False
    if "://" in value or _VARIABLE_NAME.fullmatch(value) or _NUMBER.fullmatch(value):
        return False  # a URL (masked on its own), the name of a variable, a number or a date
    return strong or not _PLAIN_WORDS.fullmatch(value)


def name_strength(name: str) -> bool | None:
    """Whether a key or header name says its value is secret: True when its last part does (OPENAI_API_KEY,
    x-auth-token, password), False when only another part or a weak word does (key, auth, SecretService:
    the value must then look like a key), None not at all (taotoken, key_env, apiKeyHelper)."""
    parts = [part.lower() for part in _NAME_PART.findall(name)]
    if not parts or parts[-1] in _ABOUT_PARTS:
        return None
    if parts[-1] in _STRONG_PARTS or tuple(parts[-2:]) in _STRONG_PAIRS:
        return True
    return False if any(part in _STRONG_PARTS or part in _WEAK_PARTS for part in parts) else None


def flag_strength(name: str) -> bool | None:
    """As name_strength, for a command-line option: its last part decides (--api-key, --auth-token; not
    --key-env, --max-tokens, --password-file)."""
    parts = [part.lower() for part in _NAME_PART.findall(name)]
    if not parts:
        return None
    if parts[-1] in _STRONG_PARTS or tuple(parts[-2:]) in _STRONG_PAIRS:
        return True
    return False if parts[-1] in _WEAK_PARTS else None


def _masker(strong: bool | None, judge: Any = name_strength) -> Any:
    """A re.sub callback masking group `value` if it could be a secret; `strong` None: `judge` tells from
    group `name` (None from it: not a secret's name)."""

    def mask(match: re.Match[str]) -> str:
        is_strong = strong if strong is not None else judge(match.group("name"))
        if is_strong is None or not could_be_secret(match.group("value"), strong=is_strong):
            return match.group(0)
        return match.group("lead") + MASK

    return mask


def _mask_url_password(match: re.Match[str]) -> str:
    value = match.group("value")
    if value == MASK or value.startswith(("{env:", "{file:", "$")):
        return match.group(0)
    return match.group("lead") + MASK  # any password, however short: it is in a password's place


_NAME_WORDS = ("key", "token", "secret", "pass", "auth", "credential")
# Each shape with what its match cannot do without, looked for in the lower-cased text first: a pattern is run
# only on text that could hold its shape (plain `in` tests cost next to nothing; the patterns do not).
_MASKS = (
    (("://",), ("@",), _URL_PASSWORD, _mask_url_password),
    (("://",), ("@",), _URL_USER, _masker(False)),
    ((), ("authorization",), _AUTH_HEADER, _masker(False)),
    ((), ("bearer", "basic"), _AUTH_SCHEME, _masker(False)),
    (("-",), _NAME_WORDS, _SECRET_FLAG, _masker(None, flag_strength)),
    ((), _NAME_WORDS, _SECRET_ASSIGNMENT, _masker(None)),
)


def mask_text(text: str) -> str:
    """`text` with known keys scrubbed and secret-shaped values masked; the rest as it was."""
    text = scrub(text)
    lower = text.lower()
    for needs_all, needs_any, pattern, replace in _MASKS:
        if all(cue in lower for cue in needs_all) and any(cue in lower for cue in needs_any):
            text = pattern.sub(replace, text)
    return text


def mask_line(line: str) -> str:
    """One line, masked (the name diffs and errors have used)."""
    return mask_text(line)


def mask_data(data: Any) -> Any:
    """Every string in a JSON-ready value masked (keys too), before it is encoded: the document stays valid."""
    if isinstance(data, str):
        return mask_text(data)
    if isinstance(data, dict):
        return {mask_data(k) if isinstance(k, str) else k: mask_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [mask_data(v) for v in data]
    return data


def dumps(data: Any) -> str:
    """JSON for --json, every string in it masked before encoding (mask_data): a shape that a JSON
    escape would hide from the stream's masking (a value on a diff's next line, after `\\n`) is masked in
    the string itself, and the document stays valid JSON."""
    import json

    return json.dumps(mask_data(data), indent=2, ensure_ascii=False)


class RedactingStream:
    """A text stream that masks known key values and secret-shaped values in everything written through it.

    `raw` is the stream underneath, for the few places that print a key on purpose (`key get`, `env`).
    Each write is masked on its own: click.echo writes a message (and its newline) in one call.
    """

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError("write() argument must be str")
        self.raw.write(mask_text(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, ...
        if name == "buffer":  # click would write bytes around the scrubbing through it
            raise AttributeError(name)
        return getattr(self.raw, name)


def file_tail(path: Path, lines: int) -> str:
    """The last `lines` lines of a server's log, keys masked and safe for a terminal ("(no log)", "(empty)")."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return terminal_safe(scrub("\n".join(text.splitlines()[-lines:]))) or "(empty)"
