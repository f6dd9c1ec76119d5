"""The JSON/JSONC editor, through `agentcfg.edit`: every byte that is not owned survives an edit."""

from __future__ import annotations

import json

import pytest

from agentcfg import edit
from agentcfg.edit import MISSING, REMOVE
from agentcfg.errors import ParseError

OC = ("provider", "agentcfg-local")
OC_MODEL = (*OC, "models", "qwen3-coder")
OPENCODE_ASSIGNMENTS = [
    (("model",), "agentcfg-local/qwen3-coder"),
    ((*OC, "npm"), "@ai-sdk/openai-compatible"),
    ((*OC, "name"), "agentcfg: local"),
    ((*OC, "options", "baseURL"), "http://127.0.0.1:8000/v1"),
    ((*OC, "options", "apiKey"), "{env:LOCAL_KEY}"),
    ((*OC_MODEL, "name"), "qwen3-coder"),
    ((*OC_MODEL, "tool_call"), True),
    ((*OC_MODEL, "limit", "context"), 65536),
    ((*OC_MODEL, "limit", "output"), 27768),
]
OPENCODE_OWNED = {
    "npm": "@ai-sdk/openai-compatible",
    "name": "agentcfg: local",
    "options": {"baseURL": "http://127.0.0.1:8000/v1", "apiKey": "{env:LOCAL_KEY}"},
    "models": {"qwen3-coder": {"name": "qwen3-coder", "tool_call": True, "limit": {"context": 65536, "output": 27768}}},
}

OPENCODE_TABS = """// opencode config, edited by hand
/* block
   comment */
{
\t"$schema": "https://opencode.ai/config.json",
\t"theme": "tokyonight", // my theme
\t"provider": {
\t\t"anthropic": {
\t\t\t"options": { "timeout": 600000 },
\t\t},
\t},
\t"mcp": {
\t\t"fs": { "type": "local", "command": ["npx", "fs"], "enabled": true },
\t},
}
"""

OPENCODE_TABS_EXPECTED = """// opencode config, edited by hand
/* block
   comment */
{
\t"$schema": "https://opencode.ai/config.json",
\t"theme": "tokyonight", // my theme
\t"provider": {
\t\t"anthropic": {
\t\t\t"options": { "timeout": 600000 },
\t\t},
\t\t"agentcfg-local": {
\t\t\t"npm": "@ai-sdk/openai-compatible",
\t\t\t"name": "agentcfg: local",
\t\t\t"options": {
\t\t\t\t"baseURL": "http://127.0.0.1:8000/v1",
\t\t\t\t"apiKey": "{env:LOCAL_KEY}"
\t\t\t},
\t\t\t"models": {
\t\t\t\t"qwen3-coder": {
\t\t\t\t\t"name": "qwen3-coder",
\t\t\t\t\t"tool_call": true,
\t\t\t\t\t"limit": {
\t\t\t\t\t\t"context": 65536,
\t\t\t\t\t\t"output": 27768
\t\t\t\t\t}
\t\t\t\t}
\t\t\t}
\t\t},
\t},
\t"mcp": {
\t\t"fs": { "type": "local", "command": ["npx", "fs"], "enabled": true },
\t},
\t"model": "agentcfg-local/qwen3-coder",
}
"""

OPENCODE_SPACES = """{
    // the schema helps the editor
    "$schema": "https://opencode.ai/config.json",
    "model": "openai/gpt-4.1", /* the previous default */
    "provider": {
        "openrouter": {
            "options": {
                "apiKey": "{env:OPENROUTER_API_KEY}", // from the shell
            },
        },
        "ollama": {
            "npm": "@ai-sdk/openai-compatible",
            "options": { "baseURL": "http://localhost:11434/v1" }
        }
    },
    "mcp": {
        "context7": {
            "type": "remote",
            "url": "https://mcp.context7.com/mcp",
            "enabled": true,
        },
    },
    "keybinds": { "leader": "ctrl+x" }
}
"""

CLAUDE_SETTINGS = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "env": {
    "DISABLE_TELEMETRY": "1",
    "BASH_DEFAULT_TIMEOUT_MS": "600000"
  },
  "permissions": {
    "allow": [
      "Bash(npm run lint)",
      "Bash(git diff:*)",
      "Read(~/.zshrc)"
    ],
    "deny": [
      "Read(./.env)",
      "Read(./secrets/**)"
    ]
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          { "type": "command", "command": "ruff format \\"$CLAUDE_FILE_PATHS\\"" }
        ]
      }
    ]
  },
  "statusLine": { "type": "command", "command": "~/.claude/statusline.sh → ünïcødé ✓" },
  "outputStyle": "Erklärend — 日本語"
}
"""

CLAUDE_ASSIGNMENTS = [
    (("env", "ANTHROPIC_BASE_URL"), "http://127.0.0.1:8000"),
    (("env", "ANTHROPIC_AUTH_TOKEN"), "agentcfg-no-key"),
    (("env", "ANTHROPIC_MODEL"), "qwen3-coder"),
    (("env", "ANTHROPIC_DEFAULT_OPUS_MODEL"), "qwen3-coder"),
    (("env", "ANTHROPIC_DEFAULT_SONNET_MODEL"), "qwen3-coder"),
    (("env", "ANTHROPIC_DEFAULT_HAIKU_MODEL"), "qwen3-coder"),
    (("env", "CLAUDE_CODE_MAX_OUTPUT_TOKENS"), "16768"),
]


def _remove_all(text: str, keypaths: list[tuple[str, ...]]) -> str:
    return edit.apply("json", text, [(k, REMOVE) for k in keypaths])


# --- round trips -------------------------------------------------------------------------------


def test_opencode_jsonc_with_tabs_gets_exactly_the_owned_members():
    out = edit.apply("json", OPENCODE_TABS, OPENCODE_ASSIGNMENTS, path="opencode.jsonc")
    assert out == OPENCODE_TABS_EXPECTED


def test_opencode_jsonc_with_tabs_still_parses_with_comments_and_trailing_commas():
    out = edit.apply("json", OPENCODE_TABS, OPENCODE_ASSIGNMENTS)
    data = edit.load("json", out)
    assert data["provider"]["agentcfg-local"] == OPENCODE_OWNED
    assert data["provider"]["anthropic"] == {"options": {"timeout": 600000}}
    assert data["mcp"] == {"fs": {"type": "local", "command": ["npx", "fs"], "enabled": True}}
    assert data["model"] == "agentcfg-local/qwen3-coder"
    for kept in ("// opencode config, edited by hand\n", "/* block\n   comment */\n", '"tokyonight", // my theme\n'):
        assert kept in out
    assert '\t\t},\n\t\t"agentcfg-local"' in out  # the trailing comma after anthropic kept
    assert out.endswith('\t"model": "agentcfg-local/qwen3-coder",\n}\n')  # trailing-comma style followed


def test_opencode_jsonc_with_tabs_removing_the_owned_members_gives_back_the_original_bytes():
    out = edit.apply("json", OPENCODE_TABS, OPENCODE_ASSIGNMENTS)
    assert _remove_all(out, [OC, ("model",)]) == OPENCODE_TABS


def test_opencode_jsonc_with_four_spaces_keeps_everything_else():
    out = edit.apply("json", OPENCODE_SPACES, OPENCODE_ASSIGNMENTS, path="opencode.jsonc")
    before, after = OPENCODE_SPACES.split("\n"), out.split("\n")
    # the only line that changed in place is the owned "model" (its comment stays)
    assert '    "model": "agentcfg-local/qwen3-coder", /* the previous default */' in after
    assert [line for line in before if line not in after] == [
        '    "model": "openai/gpt-4.1", /* the previous default */'
    ]
    # the new provider is indented in the file's own 4-space step
    assert '        "agentcfg-local": {' in after
    assert '            "npm": "@ai-sdk/openai-compatible",' in after
    assert '                "baseURL": "http://127.0.0.1:8000/v1",' in after
    assert not any(line.startswith("\t") for line in after)
    # "ollama" had no trailing comma: one is added after its closing brace, nothing else
    assert '        },\n        "agentcfg-local": {' in out
    data = edit.load("json", out)
    assert set(data["provider"]) == {"openrouter", "ollama", "agentcfg-local"}
    assert data["provider"]["openrouter"] == {"options": {"apiKey": "{env:OPENROUTER_API_KEY}"}}
    assert data["provider"]["agentcfg-local"] == OPENCODE_OWNED
    assert data["mcp"]["context7"]["enabled"] is True
    assert data["keybinds"] == {"leader": "ctrl+x"}
    for comment in ("// the schema helps the editor", "// from the shell", "/* the previous default */"):
        assert out.count(comment) == 1


def test_opencode_jsonc_with_four_spaces_remove_restores_all_but_the_replaced_model():
    out = edit.apply("json", OPENCODE_SPACES, OPENCODE_ASSIGNMENTS)
    restored = edit.apply("json", _remove_all(out, [OC]), [(("model",), "openai/gpt-4.1")])
    assert restored == OPENCODE_SPACES


def test_claude_settings_keep_hooks_permissions_other_env_and_non_ascii():
    out = edit.apply("json", CLAUDE_SETTINGS, CLAUDE_ASSIGNMENTS, path="settings.json")
    data = json.loads(out)  # strict JSON in, strict JSON out
    original = json.loads(CLAUDE_SETTINGS)
    assert data["hooks"] == original["hooks"]
    assert data["permissions"] == original["permissions"]
    assert data["statusLine"] == original["statusLine"]
    assert data["outputStyle"] == "Erklärend — 日本語"
    assert data["env"] == {**original["env"], **{k[1]: v for k, v in CLAUDE_ASSIGNMENTS}}
    assert "ünïcødé ✓" in out and "\\u" not in out  # non-ASCII is not escaped
    assert '    "BASH_DEFAULT_TIMEOUT_MS": "600000",\n    "ANTHROPIC_BASE_URL": "http://127.0.0.1:8000",\n' in out
    assert _remove_all(out, [k for k, _ in CLAUDE_ASSIGNMENTS]) == CLAUDE_SETTINGS


def test_new_non_ascii_values_are_written_as_text():
    out = edit.apply("json", '{\n  "a": 1\n}\n', [(("provider", "x", "name"), "agentcfg: Lokal — ü")])
    assert '"name": "agentcfg: Lokal — ü"' in out
    assert edit.get("json", out, ("provider", "x", "name")) == "agentcfg: Lokal — ü"


def test_empty_text_becomes_an_object():
    out = edit.apply("json", "", [(("env", "A"), "1")])
    assert json.loads(out) == {"env": {"A": "1"}}
    assert out == '{\n  "env": {\n    "A": "1"\n  }\n}\n'


def test_opencode_seed_gets_the_owned_keys():
    seed = '{\n  "$schema": "https://opencode.ai/config.json"\n}\n'
    out = edit.apply("json", seed, [(("model",), "p/m")])
    assert out == '{\n  "$schema": "https://opencode.ai/config.json",\n  "model": "p/m"\n}\n'


def test_one_line_object_stays_on_one_line():
    assert edit.apply("json", '{"a": 1}', [(("b",), [1, "x"])]) == '{"a": 1, "b": [1, "x"]}'
    assert edit.apply("json", '{"a": 1,}', [(("b",), 2)]) == '{"a": 1, "b": 2,}'


def test_insert_after_a_last_member_with_a_trailing_comment_puts_the_comma_before_the_comment():
    out = edit.apply("json", '{\n  "a": 1 // one\n}\n', [(("b",), 2)])
    assert out == '{\n  "a": 1, // one\n  "b": 2\n}\n'


def test_insert_into_an_empty_nested_object():
    out = edit.apply("json", '{\n  "mcp": {},\n  "x": 1\n}\n', [(("mcp", "s"), {"type": "local"})])
    assert out == '{\n  "mcp": {\n    "s": {\n      "type": "local"\n    }\n  },\n  "x": 1\n}\n'


def test_a_null_in_the_way_of_a_nested_key_is_replaced_by_an_object():
    out = edit.apply("json", '{\n  "env": null,\n  "x": 1\n}\n', [(("env", "A"), "1")])
    assert edit.load("json", out) == {"env": {"A": "1"}, "x": 1}


@pytest.mark.parametrize(("old", "new"), [("1", True), ("true", 1), ("1", 1.0), ('"1"', 1), ("null", "null")])
def test_a_value_of_another_json_type_is_replaced(old, new):
    out = edit.apply("json", '{\n  "k": ' + old + "\n}\n", [(("k",), new)])
    got = edit.get("json", out, ("k",))
    assert type(got) is type(new) and got == new
    assert out == '{\n  "k": ' + json.dumps(new) + "\n}\n"


# --- get / load -----------------------------------------------------------------------------------


def test_get_reads_nested_values_and_missing_keys():
    text = '{ // c\n  "a": {"b": [1, {"c": null}]}, "d": "x",\n}'
    assert edit.get("json", text, ("a", "b")) == [1, {"c": None}]
    assert edit.get("json", text, ("d",)) == "x"
    assert edit.get("json", text, ("a", "x")) is MISSING
    assert edit.get("json", text, ("d", "e")) is MISSING  # through a string
    assert edit.get("json", "", ("a",)) is MISSING


def test_get_sees_the_last_of_duplicate_keys():
    assert edit.get("json", '{"a": 1, "a": 2}', ("a",)) == 2


def test_load_strips_a_bom_and_reads_comments():
    assert edit.load("json", '\ufeff{\r\n  // c\r\n  "a": 1, /* d */\r\n}\r\n') == {"a": 1}


# --- idempotence ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [OPENCODE_TABS, OPENCODE_SPACES, "", '{"a": 1}'])
def test_applying_twice_is_applying_once(text):
    once = edit.apply("json", text, OPENCODE_ASSIGNMENTS)
    assert once != text
    twice = edit.apply("json", once, OPENCODE_ASSIGNMENTS)
    assert twice == once


def test_values_already_in_place_leave_the_very_same_text():
    once = edit.apply("json", OPENCODE_TABS, OPENCODE_ASSIGNMENTS)
    again = edit.apply("json", once, OPENCODE_ASSIGNMENTS)
    assert again is once
    claude = edit.apply("json", CLAUDE_SETTINGS, CLAUDE_ASSIGNMENTS)
    assert edit.apply("json", claude, CLAUDE_ASSIGNMENTS) is claude


def test_removing_an_absent_key_changes_nothing():
    text = '{\n  "a": 1 // c\n}\n'
    assert edit.apply("json", text, [(("b",), REMOVE), (("a", "x"), REMOVE), (("q", "r", "s"), REMOVE)]) is text


# --- REMOVE ---------------------------------------------------------------------------------------

REMOVE_CASES = {
    "first, no trailing comma": ('{\n  "a": 1,\n  "b": 2,\n  "c": 3\n}\n', "a", '{\n  "b": 2,\n  "c": 3\n}\n'),
    "middle, no trailing comma": ('{\n  "a": 1,\n  "b": 2,\n  "c": 3\n}\n', "b", '{\n  "a": 1,\n  "c": 3\n}\n'),
    "last, no trailing comma": ('{\n  "a": 1,\n  "b": 2,\n  "c": 3\n}\n', "c", '{\n  "a": 1,\n  "b": 2\n}\n'),
    "first, trailing comma": ('{\n  "a": 1,\n  "b": 2,\n  "c": 3,\n}\n', "a", '{\n  "b": 2,\n  "c": 3,\n}\n'),
    "middle, trailing comma": ('{\n  "a": 1,\n  "b": 2,\n  "c": 3,\n}\n', "b", '{\n  "a": 1,\n  "c": 3,\n}\n'),
    "last, trailing comma": ('{\n  "a": 1,\n  "b": 2,\n  "c": 3,\n}\n', "c", '{\n  "a": 1,\n  "b": 2,\n}\n'),
    "first, // comment": ('{\n  "a": 1, // A\n  "b": 2 // B\n}\n', "a", '{\n  "b": 2 // B\n}\n'),
    "last, // comment": ('{\n  "a": 1, // A\n  "b": 2 // B\n}\n', "b", '{\n  "a": 1 // A\n}\n'),
    "middle, // comment": (
        '{\n  "a": 1, // A\n  "b": 2, // B\n  "c": 3 // C\n}\n',
        "b",
        '{\n  "a": 1, // A\n  "c": 3 // C\n}\n',
    ),
    "only member": ('{\n  "a": {"x": [1, 2]}\n}\n', "a", "{\n}\n"),
    "one-line first": ('{"a": 1, "b": 2}', "a", '{ "b": 2}'),
    "one-line last": ('{"a": 1, "b": 2}', "b", '{"a": 1 }'),
    "multi-line value": ('{\n  "a": {\n    "x": 1\n  },\n  "b": 2\n}\n', "a", '{\n  "b": 2\n}\n'),
}


@pytest.mark.parametrize(("text", "key", "expected"), list(REMOVE_CASES.values()), ids=list(REMOVE_CASES))
def test_remove_a_member(text, key, expected):
    out = edit.apply("json", text, [((key,), REMOVE)])
    assert edit.get("json", out, (key,)) is MISSING
    assert edit.load("json", out) == {k: v for k, v in edit.load("json", text).items() if k != key}
    assert out == expected


def test_remove_a_nested_member_keeps_its_siblings_and_parent():
    text = (
        '{\n  "env": {\n    "A": "1",\n    "ANTHROPIC_AUTH_TOKEN": "agentcfg-no-key", // placeholder\n'
        '    "B": "2"\n  }\n}\n'
    )
    out = edit.apply("json", text, [(("env", "ANTHROPIC_AUTH_TOKEN"), REMOVE)])
    assert out == '{\n  "env": {\n    "A": "1",\n    "B": "2"\n  }\n}\n'


def test_remove_the_last_nested_member_leaves_strict_json_strict():
    text = '{\n  "env": {\n    "A": "1",\n    "T": "x"\n  },\n  "z": 0\n}\n'
    out = edit.apply("json", text, [(("env", "T"), REMOVE)])
    assert json.loads(out) == {"env": {"A": "1"}, "z": 0}
    assert out == '{\n  "env": {\n    "A": "1"\n  },\n  "z": 0\n}\n'


def test_remove_a_duplicated_key_removes_every_copy():
    # JSONC readers take the last of duplicate keys; after removing the key, none may be left.
    text = '{\n  "env": {\n    "T": "old",\n    "A": "1",\n    "T": "agentcfg-no-key"\n  }\n}\n'
    out = edit.apply("json", text, [(("env", "T"), REMOVE)])
    assert edit.load("json", out) == {"env": {"A": "1"}}


# --- CRLF and BOM ------------------------------------------------------------------------------


def test_crlf_and_bom_survive_an_insert():
    text = '\ufeff{\r\n  "a": 1, // one\r\n  "b": {\r\n    "c": 2\r\n  }\r\n}\r\n'
    out = edit.apply("json", text, [(("b", "d"), "x"), (("e",), 3)])
    assert out.startswith("\ufeff{\r\n")
    assert "\n" not in out.replace("\r\n", "")
    assert out == '\ufeff{\r\n  "a": 1, // one\r\n  "b": {\r\n    "c": 2,\r\n    "d": "x"\r\n  },\r\n  "e": 3\r\n}\r\n'


def test_crlf_and_bom_survive_a_remove():
    text = '\ufeff{\r\n  "a": 1,\r\n  "b": 2\r\n}\r\n'
    assert edit.apply("json", text, [(("b",), REMOVE)]) == '\ufeff{\r\n  "a": 1\r\n}\r\n'


def test_crlf_file_with_values_in_place_is_untouched():
    text = '\ufeff{\r\n  "a": 1\r\n}\r\n'
    assert edit.apply("json", text, [(("a",), 1)]) is text


# --- parse errors ---------------------------------------------------------------------------------

PARSE_ERRORS = {
    "missing comma": ('{\n  "a": 1\n  "b": 2\n}\n', 3),
    "unterminated string": ('{\n  "a": 1,\n  "b": "abc\n}\n', 3),
    "only {": ("{", 1),
    "unterminated object": ('{\n  "a": 1,\n', 1),
    "bad literal": ('{\n\n  "a": tru\n}', 3),
    "unquoted key": ('{\n  "a": 1,\n  b: 2\n}', 3),
    "unterminated comment": ('{\n  "a": 1\n  /* no end\n}', 3),
    "extra closing brace": ('{\n  "a": 1\n}\n}\n', 4),
    "two documents": ('{"a": 1}\n\n{"b": 2}\n', 3),
    "unterminated array": ('{\n  "a": [1, 2\n}\n', 3),
    "top-level array": ("\n[1, 2]\n", 2),
    "missing colon": ('{\n  "a" 1\n}', 2),
}


@pytest.mark.parametrize(("text", "line"), list(PARSE_ERRORS.values()), ids=list(PARSE_ERRORS))
def test_malformed_json_is_a_parse_error_with_its_line(text, line):
    for call in (
        lambda: edit.apply("json", text, [(("model",), "x")], path="/h/opencode.json"),
        lambda: edit.load("json", text, path="/h/opencode.json"),
        lambda: edit.get("json", text, ("model",), path="/h/opencode.json"),
    ):
        with pytest.raises(ParseError) as info:
            call()
        assert info.value.line == line
        assert info.value.where.startswith(f"/h/opencode.json:{line}")
        assert "does not parse as JSON" in info.value.message


def test_a_malformed_file_is_refused_even_when_nothing_would_change():
    with pytest.raises(ParseError):
        edit.apply("json", '{"a": 1,, }', [])


def test_parse_error_column_is_one_based():
    with pytest.raises(ParseError) as info:
        edit.load("json", '{\n  "a": 1\n  "b": 2\n}\n')
    assert (info.value.line, info.value.col) == (3, 3)


# --- indentation ---------------------------------------------------------------------------------


def test_indent_step_ignores_block_comment_continuation_lines():
    text = '/*\n * my settings\n */\n{\n    "a": 1\n}\n'
    out = edit.apply("json", text, [(("p", "x"), 1)])
    assert out == '/*\n * my settings\n */\n{\n    "a": 1,\n    "p": {\n        "x": 1\n    }\n}\n'
