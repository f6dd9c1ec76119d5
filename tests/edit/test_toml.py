"""The TOML editor, through `agentcfg.edit`: Codex's config.toml keeps every byte it does not own."""

from __future__ import annotations

import difflib
import sys

import pytest

from agentcfg import edit
from agentcfg.edit import MISSING, REMOVE
from agentcfg.errors import ParseError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PROVIDER = ("model_providers", "agentcfg-local")
CODEX_ASSIGNMENTS = [
    (("model",), "qwen3-coder"),
    (("model_provider",), "agentcfg-local"),
    (("model_context_window",), 65536),
    ((*PROVIDER, "name"), "agentcfg: local"),
    ((*PROVIDER, "base_url"), "http://127.0.0.1:8000/v1"),
    ((*PROVIDER, "wire_api"), "responses"),
    ((*PROVIDER, "env_key"), REMOVE),
]

CODEX_CONFIG = """# Codex CLI configuration — ~/.codex/config.toml
# Ünïcødé in a comment: 日本語

model = "gpt-5-codex"  # what I normally use
model_reasoning_effort = "high"
approval_policy = "on-request"
tools = { web_search = true, view_image = false }
notify = ["notify-send", "Codex — fertig"]

[mcp_servers.docs]
command = "npx"
args = ["-y", "@docs/server"]   # pinned
env = { DOCS_TOKEN = "from-env" }

[mcp_servers."github"]
command = "gh-mcp"
startup_timeout_sec = 20

[projects."/home/u/x"]
trust_level = "trusted"

[profiles.fast]
model = "gpt-5-mini"
model_reasoning_effort = "low"

[tui]
notifications = true
"""

CODEX_CONFIG_EXPECTED = """# Codex CLI configuration — ~/.codex/config.toml
# Ünïcødé in a comment: 日本語

model = "qwen3-coder"  # what I normally use
model_reasoning_effort = "high"
approval_policy = "on-request"
tools = { web_search = true, view_image = false }
notify = ["notify-send", "Codex — fertig"]
model_provider = "agentcfg-local"
model_context_window = 65536

[mcp_servers.docs]
command = "npx"
args = ["-y", "@docs/server"]   # pinned
env = { DOCS_TOKEN = "from-env" }

[mcp_servers."github"]
command = "gh-mcp"
startup_timeout_sec = 20

[projects."/home/u/x"]
trust_level = "trusted"

[profiles.fast]
model = "gpt-5-mini"
model_reasoning_effort = "low"

[tui]
notifications = true

[model_providers.agentcfg-local]
name = "agentcfg: local"
base_url = "http://127.0.0.1:8000/v1"
wire_api = "responses"
"""

# A config agentcfg already switched once (to a keyed gateway), next to a provider of the user's own.
SWITCHED_BEFORE = """model = "glm-4.6"
model_provider = "agentcfg-gw"

[model_providers.mine]
name = "My proxy"
base_url = "https://proxy.example/v1"
env_key = "MY_PROXY_KEY"
query_params = { "api-version" = "2025-04-01" }

[model_providers.agentcfg-gw]
name = "agentcfg: Gateway"
base_url = "https://gw.example/v1"
wire_api = "responses"
env_key = "GW_API_KEY"

[projects."/home/u/x"]
trust_level = "trusted"
"""


def _diff(before: str, after: str) -> tuple[list[str], list[str]]:
    """(lines removed, lines added)."""
    removed, added = [], []
    for line in difflib.ndiff(before.split("\n"), after.split("\n")):
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


# --- round trips -------------------------------------------------------------------------------


def test_codex_config_gets_exactly_the_owned_keys():
    out = edit.apply("toml", CODEX_CONFIG, CODEX_ASSIGNMENTS, path="config.toml")
    assert out == CODEX_CONFIG_EXPECTED


def test_codex_config_only_owned_lines_change():
    out = edit.apply("toml", CODEX_CONFIG, CODEX_ASSIGNMENTS)
    removed, added = _diff(CODEX_CONFIG, out)
    assert removed == ['model = "gpt-5-codex"  # what I normally use']
    assert [line for line in added if line] == [
        'model = "qwen3-coder"  # what I normally use',
        'model_provider = "agentcfg-local"',
        "model_context_window = 65536",
        "[model_providers.agentcfg-local]",
        'name = "agentcfg: local"',
        'base_url = "http://127.0.0.1:8000/v1"',
        'wire_api = "responses"',
    ]
    assert "[model_providers]\n" not in out  # no empty super-table header


def test_codex_config_new_keys_stay_top_level():
    data = tomllib.loads(edit.apply("toml", CODEX_CONFIG, CODEX_ASSIGNMENTS))
    assert data["model"] == "qwen3-coder"
    assert data["model_provider"] == "agentcfg-local"
    assert data["model_context_window"] == 65536
    assert data["model_providers"] == {
        "agentcfg-local": {"name": "agentcfg: local", "base_url": "http://127.0.0.1:8000/v1", "wire_api": "responses"}
    }
    # nothing leaked into the tables
    assert data["mcp_servers"]["docs"] == {
        "command": "npx",
        "args": ["-y", "@docs/server"],
        "env": {"DOCS_TOKEN": "from-env"},
    }
    assert data["mcp_servers"]["github"] == {"command": "gh-mcp", "startup_timeout_sec": 20}
    assert data["projects"] == {"/home/u/x": {"trust_level": "trusted"}}
    assert data["profiles"] == {"fast": {"model": "gpt-5-mini", "model_reasoning_effort": "low"}}
    assert data["tui"] == {"notifications": True}
    assert data["tools"] == {"web_search": True, "view_image": False}
    assert data["notify"] == ["notify-send", "Codex — fertig"]


@pytest.mark.parametrize(
    "text",
    [
        '[mcp_servers.docs]\ncommand = "npx"\n',
        '# only a comment\n\n[projects."/a"]\ntrust_level = "trusted"\n',
        "a = 1\n\n[t]\nx = 1\n",
        "",
        "# nothing but a comment\n",
        "approval_policy = 'never'",  # no final newline
    ],
)
def test_new_top_level_keys_land_before_the_first_table(text):
    out = edit.apply("toml", text, CODEX_ASSIGNMENTS[:3])
    data = tomllib.loads(out)
    assert data["model"] == "qwen3-coder"
    assert data["model_context_window"] == 65536
    first_table = out.find("\n[")
    if first_table >= 0:
        assert out.index("model_context_window = 65536") < first_table
    before = tomllib.loads(text)
    assert {k: v for k, v in data.items() if not k.startswith("model")} == before


def test_switching_to_a_keyless_profile_removes_env_key_and_keeps_the_users_provider():
    out = edit.apply("toml", SWITCHED_BEFORE, CODEX_ASSIGNMENTS)
    data = tomllib.loads(out)
    assert data["model_provider"] == "agentcfg-local"
    assert data["model_providers"]["mine"] == {
        "name": "My proxy",
        "base_url": "https://proxy.example/v1",
        "env_key": "MY_PROXY_KEY",
        "query_params": {"api-version": "2025-04-01"},
    }
    assert "env_key" not in data["model_providers"]["agentcfg-local"]
    assert data["model_providers"]["agentcfg-gw"]["env_key"] == "GW_API_KEY"  # another profile's table
    assert '[model_providers.mine]\nname = "My proxy"\n' in out
    assert 'query_params = { "api-version" = "2025-04-01" }\n' in out


def test_removing_a_key_from_our_table_keeps_its_neighbours():
    assignments = [(("model_providers", "agentcfg-gw", "env_key"), REMOVE)]
    out = edit.apply("toml", SWITCHED_BEFORE, assignments)
    assert out == SWITCHED_BEFORE.replace('env_key = "GW_API_KEY"\n', "")


def test_replacing_a_value_keeps_its_comment_and_place():
    text = 'model = "gpt-5"  # default model\nmodel_context_window = 1000 # window\n\n[t]\nx = 1\n'
    out = edit.apply("toml", text, [(("model",), "qwen3"), (("model_context_window",), 65536)])
    assert out == 'model = "qwen3"  # default model\nmodel_context_window = 65536 # window\n\n[t]\nx = 1\n'


@pytest.mark.parametrize(("old", "new"), [("65536.0", 65536), ('"65536"', 65536), ("1", True), ("true", 1)])
def test_a_value_of_another_toml_type_is_replaced(old, new):
    out = edit.apply("toml", f"k = {old}\n", [(("k",), new)])
    got = tomllib.loads(out)["k"]
    assert type(got) is type(new) and got == new


def test_an_inline_table_parent_gets_an_inline_member():
    text = 'model_providers = { mine = { name = "m" } }\n'
    out = edit.apply("toml", text, [((*PROVIDER, "name"), "n")])
    assert tomllib.loads(out)["model_providers"] == {"mine": {"name": "m"}, "agentcfg-local": {"name": "n"}}
    assert "[" not in out  # still one inline table


def test_dotted_keys_of_the_user_are_kept():
    text = 'model_providers.mine.name = "m"\n'
    out = edit.apply("toml", text, [((*PROVIDER, "name"), "n")])
    assert out.startswith(text)
    assert tomllib.loads(out)["model_providers"] == {"mine": {"name": "m"}, "agentcfg-local": {"name": "n"}}


def test_providers_split_around_another_table_are_all_kept():
    text = '[model_providers.a]\nx = 1\n\n[projects."/p"]\ntrust_level = "trusted"\n\n[model_providers.b]\ny = 2\n'
    out = edit.apply("toml", text, [((*PROVIDER, "name"), "n")])
    data = tomllib.loads(out)
    assert data["model_providers"] == {"a": {"x": 1}, "b": {"y": 2}, "agentcfg-local": {"name": "n"}}
    assert data["projects"] == {"/p": {"trust_level": "trusted"}}


def test_non_ascii_values_are_written_as_text():
    out = edit.apply("toml", "", [((*PROVIDER, "name"), "agentcfg: Lokal — ü")])
    assert 'name = "agentcfg: Lokal — ü"' in out


# --- get / load -----------------------------------------------------------------------------------


def test_get_and_load():
    assert edit.get("toml", CODEX_CONFIG, ("projects", "/home/u/x", "trust_level")) == "trusted"
    assert edit.get("toml", CODEX_CONFIG, ("mcp_servers", "docs", "env")) == {"DOCS_TOKEN": "from-env"}
    assert edit.get("toml", CODEX_CONFIG, ("model_provider",)) is MISSING
    assert edit.get("toml", CODEX_CONFIG, ("model", "x")) is MISSING
    assert edit.load("toml", "") == {}
    assert edit.load("toml", "\ufeffa = 1\r\n") == {"a": 1}


# --- idempotence ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [CODEX_CONFIG, SWITCHED_BEFORE, ""])
def test_applying_twice_is_applying_once(text):
    once = edit.apply("toml", text, CODEX_ASSIGNMENTS)
    assert once != text
    assert edit.apply("toml", once, CODEX_ASSIGNMENTS) == once


def test_values_already_in_place_leave_the_very_same_text():
    once = edit.apply("toml", CODEX_CONFIG, CODEX_ASSIGNMENTS)
    assert edit.apply("toml", once, CODEX_ASSIGNMENTS) is once
    text = "x = 1  # odd   spacing\n[t]\ny='single'\n"
    assert edit.apply("toml", text, [(("x",), 1), (("t", "y"), "single"), (("t", "z"), REMOVE)]) is text


# --- REMOVE ---------------------------------------------------------------------------------------

TABLE = """top = 1

[model_providers.agentcfg-a]
name = "a"  # first
base_url = "http://a/v1"
# about the key
env_key = "A_KEY"
wire_api = "responses"

[mcp_servers.x]
command = "x"
"""


@pytest.mark.parametrize(
    ("key", "line"),
    [
        ("name", 'name = "a"  # first\n'),
        ("env_key", 'env_key = "A_KEY"\n'),
        ("wire_api", 'wire_api = "responses"\n'),
    ],
    ids=["first", "middle", "last"],
)
def test_remove_a_table_member(key, line):
    out = edit.apply("toml", TABLE, [(("model_providers", "agentcfg-a", key), REMOVE)])
    assert out == TABLE.replace(line, "")
    data = tomllib.loads(out)
    assert key not in data["model_providers"]["agentcfg-a"]
    assert data["mcp_servers"] == {"x": {"command": "x"}}


def test_remove_top_level_keys():
    text = 'model = "m"\nmodel_context_window = 8192\nz = 3\n\n[t]\nx = 1\n'
    for key, expected in [
        ("model", "model_context_window = 8192\nz = 3\n\n[t]\nx = 1\n"),
        ("model_context_window", 'model = "m"\nz = 3\n\n[t]\nx = 1\n'),
        ("z", 'model = "m"\nmodel_context_window = 8192\n\n[t]\nx = 1\n'),
    ]:
        out = edit.apply("toml", text, [((key,), REMOVE)])
        assert out == expected
        assert key not in tomllib.loads(out)


def test_remove_through_missing_or_scalar_parents_changes_nothing():
    assert edit.apply("toml", TABLE, [(("nope", "x", "y"), REMOVE), (("top", "x"), REMOVE)]) is TABLE


# --- CRLF and BOM ---------------------------------------------------------------------------------


def test_crlf_and_bom_survive_an_edit():
    text = '\ufeff# c\r\nmodel = "old"\r\n\r\n[t]\r\nx = 1\r\n'
    out = edit.apply("toml", text, [(("model",), "new"), ((*PROVIDER, "name"), "n")])
    assert out.startswith("\ufeff# c\r\n")
    assert "\n" not in out.replace("\r\n", "")
    assert (
        out
        == '\ufeff# c\r\nmodel = "new"\r\n\r\n[t]\r\nx = 1\r\n\r\n[model_providers.agentcfg-local]\r\nname = "n"\r\n'
    )
    assert tomllib.loads(out.lstrip("\ufeff")) == {
        "model": "new",
        "t": {"x": 1},
        "model_providers": {"agentcfg-local": {"name": "n"}},
    }


# --- parse errors ---------------------------------------------------------------------------------

PARSE_ERRORS = {
    "missing value": ("a = 1\nb = \n", 2),
    "unclosed header": ('a = 1\n[mcp_servers.x\ncommand = "x"\n', 2),
    "duplicate key": ("a = 1\n\na = 2\n", 3),
    "duplicate table": ("[t]\nx = 1\n\n[t]\ny = 2\n", 4),
    "unterminated string": ('x = 1\ny = "abc\n', 2),
    "two statements on a line": ("a = 1 b = 2\n", 1),
    "bare key": ("\n\n\nkey\n", 4),
    "key redefined in a later table": ("[t]\nx = 1\n[u]\ny = 2\n[t.x]\nz = 3\n", 5),
}


@pytest.mark.parametrize(("text", "line"), list(PARSE_ERRORS.values()), ids=list(PARSE_ERRORS))
def test_malformed_toml_is_a_parse_error_with_its_line(text, line):
    for call in (
        lambda: edit.apply("toml", text, CODEX_ASSIGNMENTS, path="/h/.codex/config.toml"),
        lambda: edit.load("toml", text, path="/h/.codex/config.toml"),
        lambda: edit.get("toml", text, ("model",), path="/h/.codex/config.toml"),
    ):
        with pytest.raises(ParseError) as info:
            call()
        assert info.value.line == line
        assert info.value.where.startswith(f"/h/.codex/config.toml:{line}")
        assert "does not parse as TOML" in info.value.message


def test_a_malformed_file_is_refused_even_when_nothing_would_change():
    with pytest.raises(ParseError):
        edit.apply("toml", "a = \n", [])


def test_error_at_end_of_document_names_a_line():
    with pytest.raises(ParseError) as info:
        edit.load("toml", 'a = 1\nargs = ["-y",\n  "x",\n', path="config.toml")
    assert info.value.line in (3, 4)


# --- comments stay with what they describe ---------------------------------------------------------


def test_a_comment_above_the_first_table_stays_above_it():
    text = 'approval_policy = "never"\n\n# my MCP servers\n[mcp_servers.docs]\ncommand = "npx"\n'
    out = edit.apply("toml", text, [(("model",), "qwen3")])
    assert tomllib.loads(out)["model"] == "qwen3"
    assert "# my MCP servers\n[mcp_servers.docs]\n" in out
