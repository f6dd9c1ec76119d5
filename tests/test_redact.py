"""agentcfg.redact: known key values and key-like assignments never reach the output."""

from __future__ import annotations

import io

import click
import pytest

from agentcfg import redact
from agentcfg.profiles import PLACEHOLDER_KEY
from agentcfg.redact import MASK, RedactingStream

# --- register and scrub --------------------------------------------------------------------------------


def test_register_keeps_a_value(known_secrets):
    redact.register("sk-abcdef")
    assert known_secrets == {"sk-abcdef"}
    assert redact.is_secret("sk-abcdef")
    assert not redact.is_secret("sk-abcde")


@pytest.mark.parametrize("value", [None, "", "a", "12345", PLACEHOLDER_KEY])
def test_register_ignores_short_values_and_the_placeholder(known_secrets, value):
    redact.register(value)
    assert known_secrets == set()
    assert redact.scrub(f"token {PLACEHOLDER_KEY} 12345") == f"token {PLACEHOLDER_KEY} 12345"


def test_register_takes_values_of_exactly_the_minimum_length(known_secrets):
    redact.register("x" * redact.MIN_SECRET_LENGTH)
    redact.register("y" * (redact.MIN_SECRET_LENGTH - 1))
    assert known_secrets == {"xxxxxx"}


def test_scrub_replaces_every_occurrence():
    redact.register("sk-repeat-1234")
    assert redact.scrub("a sk-repeat-1234 b sk-repeat-1234c\nsk-repeat-1234") == "a **** b ****c\n****"


def test_scrub_leaves_text_without_keys_alone():
    redact.register("sk-repeat-1234")
    text = "nothing to see: sk-repeat-123 (one short)"
    assert redact.scrub(text) is text


def test_scrub_replaces_the_longest_key_first():
    redact.register("sk-abcdef")
    redact.register("sk-abcdef-and-more")
    assert redact.scrub("long=sk-abcdef-and-more short=sk-abcdef") == "long=**** short=****"


def test_scrub_longest_first_does_not_depend_on_registration_order():
    redact.register("sk-abcdef-and-more")
    redact.register("sk-abcdef")
    assert redact.scrub("x sk-abcdef-and-more") == "x ****"


def test_register_environment(known_secrets):
    redact.register_environment(
        {
            "OPENAI_API_KEY": "sk-openai-123456",
            "GITHUB_TOKEN": "ghp_abcdefghijkl",
            "AWS_SECRET_ACCESS_KEY": "aws/secret+value",
            "KEYRING_PASSWORD": "hunter2hunter2",
            "PYTHON_KEYRING_BACKEND": "keyrings.cryptfile.cryptfile.CryptFileKeyring",
            "GNOME_KEYRING_CONTROL": "/run/user/1000/keyring",
            "SSH_AUTH_SOCK": "/run/user/1000/ssh-agent.sock",
            "SOME_KEY_FILE": "relative/key.pem",
            "GW_API_KEY": "/home/u/.secrets/gw",  # a path, not a key
            "TOKEN_DIR": "~/tokens",
            "HOME": "/home/u",
            "LANG": "C.UTF-8-long-enough",
            "MY_TOKEN": "short",  # too short to mask
        }
    )
    assert known_secrets == {"sk-openai-123456", "ghp_abcdefghijkl", "aws/secret+value", "hunter2hunter2"}


@pytest.mark.parametrize("name", ["github_token", "Api_Key", "SECRET", "X_PASSWD", "OPENAI_APIKEY"])
def test_register_environment_names_any_case(known_secrets, name):
    redact.register_environment({name: "value-0123456789"})
    assert known_secrets == {"value-0123456789"}


@pytest.mark.parametrize("name", ["KEYBOARD", "MONKEY", "TOKENIZER", "API_KEY_PATH", "TOKEN_ID", "OPENAI_KEY_ENV"])
def test_register_environment_skips_names_that_only_contain_a_secret_word(known_secrets, name):
    redact.register_environment({name: "value-0123456789"})
    assert known_secrets == set()


# --- tail ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("sk-0123456789abcdef", "…cdef"),
        ("0123456789abcdef", "…cdef"),  # 16: long enough
        ("0123456789abcde", "…"),  # 15: not
        ("short", "…"),
        ("", "…"),
    ],
)
def test_tail(value, shown):
    assert redact.tail(value) == shown


# --- mask_line -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "masked"),
    [
        ("OPENAI_API_KEY=sk-abcdefgh123", "OPENAI_API_KEY=****"),
        ('+    "apiKey": "sk-abcdefgh123",', '+    "apiKey": "****",'),
        ('experimental_bearer_token = "sk-abcdefgh123"', 'experimental_bearer_token = "****"'),
        ("  'ANTHROPIC_AUTH_TOKEN': 'tok-abcdefgh'", "  'ANTHROPIC_AUTH_TOKEN': '****'"),
        ("password: hunter2hunter2 # note", "password: **** # note"),
    ],
)
def test_mask_line_masks_key_like_assignments(line, masked):
    assert redact.mask_line(line) == masked


@pytest.mark.parametrize(
    "line",
    [
        f'"ANTHROPIC_AUTH_TOKEN": "{PLACEHOLDER_KEY}",',
        '"apiKey": "{env:GW_API_KEY}"',
        '"apiKey": "{file:~/.secrets/gw}"',
        'env_key = "GW_API_KEY"',
        '"envKey": "OPENAI_API_KEY"',
        "OPENAI_API_KEY=short",  # under 8 characters
        '"ANTHROPIC_BASE_URL": "https://gw.example/anthropic"',
        'model = "glm-4.6"',
    ],
)
def test_mask_line_leaves_names_placeholders_and_short_values(line):
    assert redact.mask_line(line) == line


def test_mask_line_scrubs_known_values_anywhere():
    redact.register("k3y-n0t-shaped-like-one")
    assert redact.mask_line("curl https://h/?q=k3y-n0t-shaped-like-one&x=1") == "curl https://h/?q=****&x=1"
    assert redact.mask_line("base_url = k3y-n0t-shaped-like-one") == "base_url = ****"


# --- RedactingStream -----------------------------------------------------------------------------------


def test_stream_write_scrubs_and_returns_the_length_written():
    redact.register("sk-stream-secret-1")
    raw = io.StringIO()
    stream = RedactingStream(raw)
    text = "key sk-stream-secret-1 here\n"
    assert stream.write(text) == len(text)
    stream.writelines(["a sk-stream-secret-1\n", "b\n"])
    assert raw.getvalue() == "key **** here\na ****\nb\n"


def test_stream_rejects_bytes():
    raw = io.StringIO()
    stream = RedactingStream(raw)
    with pytest.raises(TypeError):
        stream.write(b"sk-bytes-secret")  # type: ignore[arg-type]
    assert raw.getvalue() == ""


def test_stream_has_no_buffer_to_write_around_it():
    raw = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert hasattr(raw, "buffer")
    stream = RedactingStream(raw)
    assert not hasattr(stream, "buffer")
    with pytest.raises(AttributeError):
        stream.buffer  # noqa: B018
    assert stream.encoding == "utf-8"


def test_stream_delegates_isatty_and_flush():
    class Raw(io.StringIO):
        flushed = 0

        def isatty(self) -> bool:
            return True

        def flush(self) -> None:
            self.flushed += 1

    raw = Raw()
    stream = RedactingStream(raw)
    assert stream.isatty() is True
    stream.flush()
    stream.flush()
    assert raw.flushed == 2
    assert RedactingStream(io.StringIO()).isatty() is False


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_click_echo_through_the_stream_is_scrubbed(encoding):
    redact.register("sk-echo-secret-0123")
    data = io.BytesIO()
    raw = io.TextIOWrapper(data, encoding=encoding, errors="strict", write_through=True)
    stream = RedactingStream(raw)
    click.echo("key=sk-echo-secret-0123", file=stream)
    click.echo("again sk-echo-secret-0123", file=stream, err=True)
    raw.flush()
    assert data.getvalue() == b"key=****\nagain ****\n"


def test_click_echo_to_stderr_stream_is_scrubbed():
    redact.register("sk-echo-secret-0123")
    raw = io.StringIO()
    click.echo("agentcfg: error: sk-echo-secret-0123 failed", file=RedactingStream(raw))
    assert raw.getvalue() == "agentcfg: error: **** failed\n"
    assert MASK == "****"
