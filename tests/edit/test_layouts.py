"""Edits that hold on every layout TOML and JSON/JSONC allow, a parent of the wrong type refused, values
put back verbatim. Each of the issue's reports is reproduced here first (see test names "issue_")."""

from __future__ import annotations

import copy
import json
import sys

import pytest

from agentcfg import edit
from agentcfg.edit import REMOVE, Verbatim, toml
from agentcfg.errors import AgentcfgError, ParseError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PROVIDER = ("model_providers", "agentcfg-local")
CODEX = [
    (("model",), "qwen3-coder"),
    (("model_provider",), "agentcfg-local"),
    (("model_context_window",), 65536),
    ((*PROVIDER, "name"), "agentcfg: local"),
    ((*PROVIDER, "base_url"), "http://127.0.0.1:8000/v1"),
    ((*PROVIDER, "wire_api"), "responses"),
    ((*PROVIDER, "env_key"), REMOVE),
    ((*PROVIDER, "experimental_bearer_token"), REMOVE),
    ((*PROVIDER, "auth"), REMOVE),
]
CODEX_HELPER = [
    *CODEX[:6],
    ((*PROVIDER, "auth", "command"), "agentcfg"),
    ((*PROVIDER, "auth", "args"), ["key", "get", "local"]),
]
OURS = {"name": "agentcfg: local", "base_url": "http://127.0.0.1:8000/v1", "wire_api": "responses"}
UNDO = [(key, REMOVE) for key, _ in CODEX_HELPER]

# Layouts of a Codex config.toml, none with a key agentcfg owns yet.
TOML_LAYOUTS = {
    "dotted inline providers at the top": (
        'approval_policy = "never"\n'
        'model_providers.myollama = { name = "Ollama", base_url = "http://localhost:11434/v1" }\n'
        "\n"
        "[mcp_servers.docs]\n"
        'command = "npx"\n'
    ),
    "dotted leaf providers at the top": (
        'model_providers.mine.name = "Mine"\n'
        'model_providers.mine.base_url = "http://mine/v1"\n'
        "\n"
        '[projects."/home/u"]\n'
        'trust_level = "trusted"\n'
    ),
    "one inline table of providers": ('model_providers = { mine = { name = "Mine", base_url = "http://m/v1" } }\n'),
    "a super table with dotted children": ('[model_providers]\nmine.name = "Mine"\nmine.base_url = "http://m/v1"\n'),
    "sub-tables only (implicit super table)": (
        '[model_providers.mine]\nname = "Mine"\n\n[model_providers.mine.http_headers]\nX = "y"\n\n[tui]\nx = 1\n'
    ),
    "arrays of tables elsewhere": (
        'notify = ["a"]\n\n[[hooks]]\nname = "one"\n\n[[hooks]]\nname = "two"\n\n[hooks.extra]\nk = 1\n'
    ),
    "multi-line strings near the keys": (
        'instructions = """\n[model_providers.fake]\nmodel = "not a key"\n"""\n'
        "prompt = '''\n[tui]\nmodel_provider = 'not either'\n'''\n"
        "\n"
        "[profiles.x]\n"
        'notes = """a ""quoted"" end"""""\n'
    ),
    "no trailing newline": '[tui]\nnotifications = true\nmodel = "in a table, not ours"',
    "comments after the last key": (
        'approval_policy = "never"\n# the end of the top level\n\n[tui]\nx = 1\n# trailing comment\n'
    ),
    "only comments": "# a config\n# nothing yet\n",
    "empty": "",
    "indented tables": '[model_providers.mine]\n  name = "Mine"\n  base_url = "http://m/v1"\n',
    "datetimes and odd numbers": (
        "when = 1979-05-27 07:32:00Z\nbig = 1_000_000\nhex = 0xDEAD\n\n[t]\nday = 1979-05-27\nf = -inf\n"
    ),
}


def _assert_only_owned_changed(before: str, after: str) -> dict:
    old, new = tomllib.loads(before), tomllib.loads(after)
    providers = dict(new.get("model_providers", {}))
    providers.pop("agentcfg-local", None)
    rest = {k: v for k, v in new.items() if k not in ("model", "model_provider", "model_context_window")}
    if providers:
        rest["model_providers"] = providers
    else:
        rest.pop("model_providers", None)
    assert rest == {k: v for k, v in old.items()}
    return new


@pytest.mark.parametrize("text", list(TOML_LAYOUTS.values()), ids=list(TOML_LAYOUTS))
@pytest.mark.parametrize("assignments", [CODEX, CODEX_HELPER], ids=["env", "helper"])
def test_toml_every_layout_takes_the_owned_keys(text, assignments):
    out = edit.apply("toml", text, assignments)
    data = _assert_only_owned_changed(text, out)
    assert data["model"] == "qwen3-coder" and data["model_context_window"] == 65536
    expected = dict(OURS)
    if assignments is CODEX_HELPER:
        expected["auth"] = {"command": "agentcfg", "args": ["key", "get", "local"]}
    assert data["model_providers"]["agentcfg-local"] == expected
    # new top-level keys are at the top level: before the first header
    sections = toml.Layout(out, set()).sections  # the scanner knows a "[" in a multi-line string is no header
    header = sections[1].start if len(sections) > 1 else len(out)
    for key in ("model = ", "model_provider = ", "model_context_window = "):
        assert out.startswith(key) or -1 < out.find("\n" + key) < header, (key, out)
    assert edit.apply("toml", out, assignments) is out  # twice: zero bytes change


@pytest.mark.parametrize("text", list(TOML_LAYOUTS.values()), ids=list(TOML_LAYOUTS))
def test_toml_removing_everything_agentcfg_added_gives_back_the_bytes(text):
    out = edit.apply("toml", text, CODEX_HELPER)
    back = edit.apply("toml", out, UNDO)
    if text and not text.endswith("\n"):  # the newline added before new lines stays
        assert back == text + "\n"
    else:
        assert back == text


def test_issue_dotted_providers_at_the_top_level_take_the_new_keys():
    """The report: `model_providers.myollama = {...}` at the top made switch stop with 'did not take'."""
    text = 'model_providers.myollama = { name = "Ollama", base_url = "http://localhost:11434/v1" }\n'
    out = edit.apply("toml", text, CODEX)
    assert out == (
        'model_providers.myollama = { name = "Ollama", base_url = "http://localhost:11434/v1" }\n'
        'model_providers.agentcfg-local = { name = "agentcfg: local", base_url = "http://127.0.0.1:8000/v1", '
        'wire_api = "responses" }\n'
        'model = "qwen3-coder"\n'
        'model_provider = "agentcfg-local"\n'
        "model_context_window = 65536\n"
    )


def test_dotted_leaf_providers_get_dotted_leaf_lines():
    text = 'model_providers.mine.name = "Mine"\n\n[tui]\nx = 1\n'
    out = edit.apply("toml", text, CODEX[3:5])
    assert out == (
        'model_providers.mine.name = "Mine"\n'
        'model_providers.agentcfg-local.name = "agentcfg: local"\n'
        'model_providers.agentcfg-local.base_url = "http://127.0.0.1:8000/v1"\n'
        "\n[tui]\nx = 1\n"
    )


def test_a_new_table_goes_after_its_family_with_blank_lines_around():
    text = '[model_providers.mine]\nname = "Mine"\n[tui]\nx = 1\n'
    out = edit.apply("toml", text, CODEX[3:4])
    ours = '[model_providers.agentcfg-local]\nname = "agentcfg: local"\n'
    assert out == '[model_providers.mine]\nname = "Mine"\n\n' + ours + "\n[tui]\nx = 1\n"


def test_new_text_follows_the_indentation_of_the_table():
    text = '[model_providers.agentcfg-local]\n    name = "old"\n'
    out = edit.apply("toml", text, CODEX[3:5])
    assert (
        out
        == '[model_providers.agentcfg-local]\n    name = "agentcfg: local"\n    base_url = "http://127.0.0.1:8000/v1"\n'
    )


def test_the_auth_table_comes_and_goes():
    once = edit.apply("toml", "", CODEX_HELPER[3:])
    assert once == (
        "[model_providers.agentcfg-local]\n"
        'name = "agentcfg: local"\n'
        'base_url = "http://127.0.0.1:8000/v1"\n'
        'wire_api = "responses"\n'
        "\n"
        "[model_providers.agentcfg-local.auth]\n"
        'command = "agentcfg"\n'
        'args = ["key", "get", "local"]\n'
    )
    keyless = edit.apply("toml", once, CODEX[3:])
    assert keyless == "[model_providers.agentcfg-local]\n" + once.split("\n", 1)[1].split("\n\n")[0] + "\n"


def test_a_table_replaced_by_a_value_and_back():
    text = '[model_providers.agentcfg-local]\nname = "n"\n\n[model_providers.agentcfg-local.auth]\ncommand = "x"\n'
    out = edit.apply("toml", text, [((*PROVIDER, "auth"), "inline now")])
    assert tomllib.loads(out)["model_providers"]["agentcfg-local"] == {"name": "n", "auth": "inline now"}
    back = edit.apply("toml", out, [((*PROVIDER, "auth"), {"command": "x"})])
    assert tomllib.loads(back)["model_providers"]["agentcfg-local"] == {"name": "n", "auth": {"command": "x"}}


def test_inline_members_are_edited_inside_their_inline_table():
    text = 'model_providers = { agentcfg-local = { name = "old", env_key = "K" }, mine = { name = "m" } }\n'
    out = edit.apply("toml", text, CODEX[3:])
    assert out == (
        'model_providers = { agentcfg-local = { name = "agentcfg: local", base_url = "http://127.0.0.1:8000/v1", '
        'wire_api = "responses" }, mine = { name = "m" } }\n'
    )


def test_an_emptied_inline_table_goes_with_its_key_but_a_top_level_one_stays():
    text = 'model_providers = { agentcfg-local = { name = "n" } }\n'
    assert edit.apply("toml", text, [((*PROVIDER, "name"), REMOVE)]) == "model_providers = {}\n"
    text = 'model_providers.agentcfg-local = { name = "n" }\nx = 1\n'
    assert edit.apply("toml", text, [((*PROVIDER, "name"), REMOVE)]) == "x = 1\n"


# --- line endings ----------------------------------------------------------------------------------


def test_issue_mixed_line_endings_new_lines_follow_the_file():
    """The report: text inserted into a CRLF file came out LF. It was a file with mixed endings (one LF
    line, e.g. from a multi-line string pasted in): the CRLF-only conversion did not apply."""
    text = 'a = 1\r\n\r\n[x]\r\ny = """\nz"""\r\n'
    out = edit.apply("toml", text, CODEX[:4])
    assert out.count("\n") == out.count("\r\n") + 1  # only the user's one LF line
    assert '[model_providers.agentcfg-local]\r\nname = "agentcfg: local"\r\n' in out
    text = '{\r\n  "a": 1,\n  "b": 2\r\n}\r\n'
    out = edit.apply("json", text, [(("c",), 3), (("d", "e"), 4)])
    assert out == '{\r\n  "a": 1,\n  "b": 2,\r\n  "c": 3,\r\n  "d": {\r\n    "e": 4\r\n  }\r\n}\r\n'
    text = "A=1\r\nB=2\nC=3\r\n"
    assert edit.apply("dotenv", text, [(("D",), "4")]) == text + "D=4\r\n"


def test_crlf_toml_round_trip():
    text = '\ufeffmodel = "m"\r\n\r\n[tui]\r\nx = 1\r\n'
    out = edit.apply("toml", text, CODEX_HELPER)
    assert "\n" not in out.replace("\r\n", "")
    assert edit.apply("toml", out, CODEX_HELPER) is out
    assert edit.apply("toml", out, [(("model",), "m"), *UNDO[1:]]) == text


# --- a parent of the wrong type ------------------------------------------------------------------------

WRONG_TOML = {
    "array of tables": (
        'x = 1\n\n\n[[model_providers]]\nname = "a"\n',
        "model_providers at line 4 is an array of tables",
    ),
    "a string": ('model_providers = "x"\n', "model_providers at line 1 is a string"),
    "an array": ("\nmodel_providers = [1, 2]\n", "model_providers at line 2 is an array"),
    "our table is an integer": (
        "model_providers.agentcfg-local = 3\n",
        "model_providers.agentcfg-local at line 1 is an integer",
    ),
    "inside an inline table": (
        'model_providers = { agentcfg-local = "x" }\n',
        "model_providers.agentcfg-local at line 1 is a string",
    ),
}


@pytest.mark.parametrize(("text", "message"), list(WRONG_TOML.values()), ids=list(WRONG_TOML))
def test_issue_a_toml_parent_of_another_type_is_refused_not_replaced(text, message):
    with pytest.raises(AgentcfgError) as info:
        edit.apply("toml", text, CODEX, path="/h/.codex/config.toml")
    assert not isinstance(info.value, ParseError)
    assert message in info.value.message
    assert "agentcfg needs a table there" in info.value.message
    assert info.value.where.startswith("/h/.codex/config.toml:")
    assert "--agent" in info.value.hint


WRONG_JSON = {
    "provider is an array": ('{\n  "provider": []\n}\n', ("provider", "x", "npm"), "provider at line 2 is an array"),
    "env is a string": ('{"env": "x"}', ("env", "K"), "env at line 1 is a string"),
    "a number deeper": (
        '{"provider": {"x": {"options": 5}}}',
        ("provider", "x", "options", "baseURL"),
        "provider.x.options at line 1 is a number",
    ),
    "a boolean": ('{\n"a": true}', ("a", "b"), "a at line 2 is a boolean"),
}


@pytest.mark.parametrize(("text", "key", "message"), list(WRONG_JSON.values()), ids=list(WRONG_JSON))
def test_issue_a_json_parent_of_another_type_is_refused_not_replaced(text, key, message):
    with pytest.raises(AgentcfgError) as info:
        edit.apply("json", text, [(key, "v")], path="/h/opencode.json")
    assert message in info.value.message and "agentcfg needs an object there" in info.value.message
    assert "--agent" in info.value.hint


def test_removing_through_a_parent_of_another_type_changes_nothing():
    text = "[[model_providers]]\nname = 'a'\n"
    assert edit.apply("toml", text, [((*PROVIDER, "env_key"), REMOVE)]) is text
    text = '{"provider": []}'
    assert edit.apply("json", text, [(("provider", "x"), REMOVE)]) is text


# --- JSON / JSONC layouts ---------------------------------------------------------------------------------

OPENCODE = [
    (("model",), "agentcfg-local/qwen3"),
    (("provider", "agentcfg-local", "npm"), "@ai-sdk/openai-compatible"),
    (("provider", "agentcfg-local", "options", "baseURL"), "http://127.0.0.1:8000/v1"),
    (("provider", "agentcfg-local", "models", "qwen3", "limit", "context"), 32768),
]
JSON_LAYOUTS = {
    "comments everywhere": '{\n  // line\n  "a": /* between */ 1, /* after */\n  "provider": // c\n    {}\n}\n',
    "trailing commas": '{\n  "a": [1, 2,],\n  "provider": {\n    "x": {"k": 1,},\n  },\n}\n',
    "tabs": '{\n\t"a": 1,\n\t"provider": {\n\t\t"x": {}\n\t}\n}\n',
    "bom": '\ufeff{\n  "a": 1\n}\n',
    "one line": '{"a": 1, "provider": {"x": {"k": 1}}}',
    "crlf": '{\r\n  "a": 1,\r\n  "provider": {}\r\n}\r\n',
    "empty object": "{}",
    "empty object with a space": "{ }",
    "deep nesting elsewhere": '{\n  "deep": '
    + "[" * 300
    + "]" * 300
    + ',\n  "d": '
    + '{"a": ' * 200
    + "1"
    + "}" * 200
    + "\n}\n",
    "duplicate keys": '{\n  "model": "first",\n  "model": "second",\n  "provider": {}\n}\n',
    "block comment between key and value": '{\n  "provider": /* the providers */ {\n    "x": {}\n  }\n}\n',
}


@pytest.mark.parametrize("text", list(JSON_LAYOUTS.values()), ids=list(JSON_LAYOUTS))
def test_json_every_layout_takes_the_owned_keys(text):
    out = edit.apply("json", text, OPENCODE)
    # what load() returns is shared by every reader of that text (parsed once): copied to be changed here
    data, before = copy.deepcopy(edit.load("json", out)), copy.deepcopy(edit.load("json", text))
    assert data["model"] == "agentcfg-local/qwen3"
    assert data["provider"]["agentcfg-local"] == {
        "npm": "@ai-sdk/openai-compatible",
        "options": {"baseURL": "http://127.0.0.1:8000/v1"},
        "models": {"qwen3": {"limit": {"context": 32768}}},
    }
    data["provider"].pop("agentcfg-local")
    data.pop("model")
    before.pop("model", None)
    before.setdefault("provider", {})
    assert data == before
    assert edit.apply("json", out, OPENCODE) is out
    if "\t" in text:
        assert '\n\t\t"agentcfg-local": {\n\t\t\t"npm"' in out
    if "\r\n" in text:
        assert "\n" not in out.replace("\r\n", "")
    if text.startswith("\ufeff"):
        assert out.startswith("\ufeff{")


def test_json_a_null_on_the_way_of_several_keys_becomes_one_object():
    out = edit.apply("json", '{\n  "env": null\n}\n', [(("env", "A"), "1"), (("env", "B"), "2")])
    assert out == '{\n  "env": {\n    "A": "1",\n    "B": "2"\n  }\n}\n'


def test_json_the_last_duplicate_is_the_one_edited():
    text = '{\n  "model": "first",\n  "model": "second"\n}\n'
    assert edit.apply("json", text, OPENCODE[:1]) == '{\n  "model": "first",\n  "model": "agentcfg-local/qwen3"\n}\n'


def test_json_nesting_too_deep_is_a_parse_error_not_a_crash():
    text = '{"a": ' + "[" * 100_000 + "]" * 100_000 + ', "x": /* c */ 1}'
    with pytest.raises(ParseError, match="nested too deeply"):
        edit.apply("json", text, OPENCODE)


# --- verbatim values ----------------------------------------------------------------------------------

VERBATIM = [
    ("toml", "window = 1_000_000  # a million\nx = 1\n", ("window",), 8192),
    ("toml", "[t]\nurl = 'http://literal/v1'  # literal\n", ("t", "url"), "http://x"),
    ("toml", 'm = { u = "esc\\u00e9" }\n', ("m", "u"), "plain"),
    ("toml", "k = 0x10\n", ("k",), 1),
    ("toml", 's = """\nmulti\nline"""\nz = 1\n', ("s",), "one"),
    ("json", '{\n  "n": 1.50e3, // keep\n  "x": 1\n}\n', ("n",), 7),
    ("json", '{"a": {"s": "\\u00e9t\\u00e9"}}', ("a", "s"), "ete"),
    ("json", '{\n  "o": { "b":  [1,2] }\n}\n', ("o",), 3),
    ("dotenv", "A='single'  # c\nB=1\n", ("A",), "other"),
    ("dotenv", 'export A="with \\"quotes\\""\n', ("A",), "x"),
    ("dotenv", "A=bare\n", ("A",), "changed value"),
]


@pytest.mark.parametrize(("fmt", "text", "key", "other"), VERBATIM)
def test_raw_then_verbatim_gives_back_the_original_bytes(fmt, text, key, other):
    raw = edit.raw(fmt, text, key)
    assert raw is not None and raw in text
    original = edit.get(fmt, text, key)
    changed = edit.apply(fmt, text, [(key, other)])
    assert changed != text
    assert edit.apply(fmt, changed, [(key, Verbatim(original, raw))]) == text


def test_raw_of_what_has_no_text_of_its_own_is_none():
    assert edit.raw("toml", "[t]\nx = 1\n", ("t",)) is None
    assert edit.raw("toml", "a.b = 1\n", ("a",)) is None
    assert edit.raw("toml", "a = 1\n", ("b",)) is None
    assert edit.raw("json", '{"a": 1}', ("a", "b")) is None
    assert edit.raw("json", "", ("a",)) is None
    assert edit.raw("dotenv", "A=1\n", ("B",)) is None
    assert edit.raw("toml", "a.b = 1\n", ("a", "b")) == "1"
    assert edit.raw("json", '{"a": {"b": [1, 2]}}', ("a",)) == '{"b": [1, 2]}'


def test_verbatim_into_a_missing_key_is_inserted_as_its_text():
    out = edit.apply("toml", "x = 1\n", [(("w",), Verbatim(1000000, "1_000_000"))])
    assert out == "x = 1\nw = 1_000_000\n"
    out = edit.apply("json", '{\n  "x": 1\n}\n', [(("a", "b"), Verbatim(1.5, "1.50"))])
    assert json.loads(out) == {"x": 1, "a": {"b": 1.5}} and '"b": 1.50' in out


def test_a_verbatim_text_that_does_not_parse_to_its_value_never_reaches_the_disk():
    with pytest.raises(AssertionError):
        edit.apply("toml", "x = 1\n", [(("x",), Verbatim(2, "3"))])
