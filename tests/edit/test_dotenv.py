"""The .env editor, through `agentcfg.edit`: qwen's ~/.qwen/.env keeps every line it does not own."""

from __future__ import annotations

import pytest

from agentcfg import edit
from agentcfg.edit import MISSING, REMOVE

QWEN_ASSIGNMENTS = [
    (("OPENAI_API_KEY",), "agentcfg-no-key"),
    (("OPENAI_BASE_URL",), "http://127.0.0.1:8000/v1"),
    (("OPENAI_MODEL",), "qwen3-coder"),
]

QWEN_ENV = """# qwen-code environment — ünïcødé
export OPENAI_BASE_URL="https://old.example/v1"  # the gateway
OPENAI_MODEL='old-model'

MULTI="line one
line two"
this line is malformed
export TAVILY_API_KEY=tvly-123 # search
EMPTY=
  INDENTED = "x"
"""

QWEN_ENV_EXPECTED = """# qwen-code environment — ünïcødé
export OPENAI_BASE_URL="http://127.0.0.1:8000/v1"  # the gateway
OPENAI_MODEL='qwen3-coder'

MULTI="line one
line two"
this line is malformed
export TAVILY_API_KEY=tvly-123 # search
EMPTY=
  INDENTED = "x"
OPENAI_API_KEY=agentcfg-no-key
"""


# --- round trips -------------------------------------------------------------------------------


def test_qwen_env_gets_exactly_the_owned_values():
    out = edit.apply("dotenv", QWEN_ENV, QWEN_ASSIGNMENTS, path="/h/.qwen/.env")
    assert out == QWEN_ENV_EXPECTED


def test_qwen_env_values_read_back():
    out = edit.apply("dotenv", QWEN_ENV, QWEN_ASSIGNMENTS)
    assert edit.load("dotenv", out) == {
        "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
        "OPENAI_MODEL": "qwen3-coder",
        "MULTI": "line one\nline two",
        "TAVILY_API_KEY": "tvly-123",
        "EMPTY": "",
        "INDENTED": "x",
        "OPENAI_API_KEY": "agentcfg-no-key",
    }


def test_replacing_keeps_export_quote_style_spacing_and_inline_comment():
    text = 'A=1\nexport OPENAI_BASE_URL = "https://old/v1"   # gateway\nB=2\n'
    out = edit.apply("dotenv", text, [(("OPENAI_BASE_URL",), "http://127.0.0.1:8000/v1")])
    assert out == 'A=1\nexport OPENAI_BASE_URL = "http://127.0.0.1:8000/v1"   # gateway\nB=2\n'


REWRITES = {
    "unquoted stays unquoted": ("K=old\n", "new-v1", "K=new-v1\n"),
    "unquoted with comment": ("K = old # c\n", "new", "K = new # c\n"),
    "single stays single": ("K='old'\n", "new value", "K='new value'\n"),
    "single with comment": ("K='old' # c\n", "new", "K='new' # c\n"),
    "double stays double": ('export K="old"\n', "new", 'export K="new"\n'),
    "escaped quote in the old value": ('K="a\\"b" # c\n', "z", 'K="z" # c\n'),
    "multi-line old value": ('K="one\ntwo"\nB=1\n', "x", 'K="x"\nB=1\n'),
    "space needs quotes": ("K=old\n", "has space", 'K="has space"\n'),
    "hash needs quotes": ("K=old\n", "a#b", 'K="a#b"\n'),
    "dollar needs quotes": ("K=old\n", "$HOME", 'K="$HOME"\n'),
    "apostrophe leaves single quotes": ("K='old'\n", "it's", 'K="it\'s"\n'),
    "double quotes are escaped": ("K=old\n", 'a "b"', 'K="a \\"b\\""\n'),
    "newline is escaped": ("K='old'\n", "x\ny", 'K="x\\ny"\n'),
    "backslash is escaped": ("K=old\n", "back\\slash", 'K="back\\\\slash"\n'),
    "non-ASCII": ("K=old\n", "Grüße", 'K="Grüße"\n'),
    "empty": ("K=old\n", "", "K=\n"),
    "bare key": ("A=1\nK\nB=2\n", "v", "A=1\nK=v\nB=2\n"),
    "no final newline": ("A=1\nK=old", "new", "A=1\nK=new"),
}


@pytest.mark.parametrize(("text", "value", "expected"), list(REWRITES.values()), ids=list(REWRITES))
def test_rewrite_a_value(text, value, expected):
    out = edit.apply("dotenv", text, [(("K",), value)])
    assert out == expected
    assert edit.get("dotenv", out, ("K",)) == value


def test_the_last_of_duplicate_bindings_is_rewritten():
    out = edit.apply("dotenv", "K=1\nA=1\nK=2\n", [(("K",), "3")])
    assert out == "K=1\nA=1\nK=3\n"
    assert edit.get("dotenv", out, ("K",)) == "3"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A=1\n", "A=1\nK=v\n"),
        ("A=1", "A=1\nK=v\n"),
        ("", "K=v\n"),
        ("# only a comment\n", "# only a comment\nK=v\n"),
    ],
)
def test_a_new_binding_is_appended_on_its_own_line(text, expected):
    assert edit.apply("dotenv", text, [(("K",), "v")]) == expected


def test_a_malformed_line_mentioning_the_key_is_left_alone():
    text = 'OPENAI_MODEL "x"\nA=1\n'
    out = edit.apply("dotenv", text, [(("OPENAI_MODEL",), "m")])
    assert out == 'OPENAI_MODEL "x"\nA=1\nOPENAI_MODEL=m\n'
    assert edit.get("dotenv", out, ("OPENAI_MODEL",)) == "m"


def test_get():
    assert edit.get("dotenv", QWEN_ENV, ("OPENAI_MODEL",)) == "old-model"
    assert edit.get("dotenv", QWEN_ENV, ("MULTI",)) == "line one\nline two"
    assert edit.get("dotenv", QWEN_ENV, ("OPENAI_API_KEY",)) is MISSING
    assert edit.get("dotenv", "", ("A",)) is MISSING
    assert edit.get("dotenv", "K\n", ("K",)) is None  # declared, no value


# --- REMOVE ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("OPENAI_API_KEY=agentcfg-no-key\nA=1\nB=2\n", "A=1\nB=2\n"),
        ("A=1\nOPENAI_API_KEY=agentcfg-no-key\nB=2\n", "A=1\nB=2\n"),
        ("A=1\nB=2\nOPENAI_API_KEY=agentcfg-no-key\n", "A=1\nB=2\n"),
        ("A=1\nB=2\nOPENAI_API_KEY=agentcfg-no-key", "A=1\nB=2\n"),
        ("# mine\nexport OPENAI_API_KEY='x' # c\n# after\n", "# mine\n# after\n"),
        ("OPENAI_API_KEY=1\nA=1\nOPENAI_API_KEY=2\n", "A=1\n"),  # every copy, or the first would show
        ('OPENAI_API_KEY="multi\nline"\nA=1\n', "A=1\n"),
    ],
    ids=["first", "middle", "last", "last without newline", "with comments", "duplicates", "multi-line"],
)
def test_remove(text, expected):
    out = edit.apply("dotenv", text, [(("OPENAI_API_KEY",), REMOVE)])
    assert out == expected
    assert edit.get("dotenv", out, ("OPENAI_API_KEY",)) is MISSING


def test_remove_an_absent_key_changes_nothing():
    assert edit.apply("dotenv", QWEN_ENV, [(("OPENAI_API_KEY",), REMOVE)]) is QWEN_ENV


def test_remove_keeps_the_blank_line_above():
    text = "FOO=1\n\nOPENAI_API_KEY=agentcfg-no-key\n"
    assert edit.apply("dotenv", text, [(("OPENAI_API_KEY",), REMOVE)]) == "FOO=1\n\n"


def test_rewrite_of_a_bare_key_keeps_what_surrounds_it():
    out = edit.apply("dotenv", "A=1\n\nexport K\n", [(("K",), "v")])
    assert out == "A=1\n\nexport K=v\n"


# --- idempotence ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [QWEN_ENV, "", "A=1", "OPENAI_API_KEY=sk-real\n"])
def test_applying_twice_is_applying_once(text):
    once = edit.apply("dotenv", text, QWEN_ASSIGNMENTS)
    assert once != text
    assert edit.apply("dotenv", once, QWEN_ASSIGNMENTS) == once


def test_values_already_in_place_leave_the_very_same_text():
    once = edit.apply("dotenv", QWEN_ENV, QWEN_ASSIGNMENTS)
    assert edit.apply("dotenv", once, QWEN_ASSIGNMENTS) is once
    quoted = "export OPENAI_MODEL='qwen3-coder'   # spacing kept\n"
    assert edit.apply("dotenv", quoted, [(("OPENAI_MODEL",), "qwen3-coder")]) is quoted


# --- CRLF and BOM ---------------------------------------------------------------------------------


def test_crlf_and_bom_survive_an_edit():
    text = "\ufeff# env\r\nexport OPENAI_MODEL='old'  # c\r\nA=1\r\n"
    out = edit.apply("dotenv", text, QWEN_ASSIGNMENTS[1:])
    assert out == (
        "\ufeff# env\r\nexport OPENAI_MODEL='qwen3-coder'  # c\r\nA=1\r\nOPENAI_BASE_URL=http://127.0.0.1:8000/v1\r\n"
    )
    assert edit.load("dotenv", out) == {
        "OPENAI_MODEL": "qwen3-coder",
        "A": "1",
        "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
    }


def test_crlf_remove():
    text = "A=1\r\nOPENAI_API_KEY=agentcfg-no-key\r\nB=2\r\n"
    assert edit.apply("dotenv", text, [(("OPENAI_API_KEY",), REMOVE)]) == "A=1\r\nB=2\r\n"
