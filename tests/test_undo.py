"""agentcfg.undo: undoing one switch in a file edited since, with plain strings (no files, no journal)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcfg import edit, undo
from agentcfg.agents import codex, opencode, qwen
from agentcfg.agents.base import AgentFile, KeySource
from agentcfg.errors import AgentcfgError, ParseError
from agentcfg.profiles import load_all

PROFILES = load_all({"HOME": "/nonexistent", "AGENTCFG_HOME": "/nonexistent/agentcfg"})


def switched(agent, fmt: str, before: str | None, index: int = 0) -> tuple[str, list[tuple[str, ...]]]:
    """What `switch local` writes into one of the agent's files, and the keys it owns there."""
    files = [AgentFile(Path("config.toml"), "toml")] if agent is codex else agent.files({"HOME": "/h"})
    current = {f: (before if i == index else None) for i, f in enumerate(files)}
    file_edit = agent.edits(PROFILES["local"], current, KeySource())[index]
    start = before if before is not None else file_edit.file.seed
    written = edit.apply(fmt, start, file_edit.assignments)
    return written, [key for key, _ in file_edit.assignments]


CODEX = """# mine
model = "gpt-5"
model_context_window = 1_000_000   # big

[mcp_servers.docs]
command = "docs-mcp"
"""


def test_codex_trust_table_appended_by_codex_survives_and_agentcfg_table_goes():
    written, owned = switched(codex, "toml", CODEX)
    trusted = written + '\n[projects."/src/app"]\ntrust_level = "trusted"\n'
    result = undo.revert("toml", CODEX, written, trusted, owned)
    assert result.text == CODEX + '\n[projects."/src/app"]\ntrust_level = "trusted"\n'
    assert result.how == undo.MERGED
    assert "agentcfg" not in result.text and "1_000_000   # big" in result.text


def test_unchanged_file_comes_back_byte_for_byte():
    written, owned = switched(codex, "toml", CODEX)
    assert undo.revert("toml", CODEX, written, written, owned) == undo.Reverted(CODEX, undo.RESTORED)


def test_created_file_with_only_agent_stamps_is_removed():
    written, owned = switched(qwen, "json", None, index=1)
    # qwen-code rewrites the file it reads with its version stamp first
    data = {"$version": 4, **json.loads(written)}
    result = undo.revert("json", None, written, json.dumps(data, indent=2) + "\n", owned, stamps=qwen.TRAITS.stamps)
    assert result == undo.Reverted(None, undo.REMOVED)


def test_created_file_keeps_what_others_added_without_agentcfg_containers():
    written, owned = switched(qwen, "json", None, index=1)
    data = {"$version": 4, **json.loads(written), "ui": {"theme": "dark"}}
    result = undo.revert("json", None, written, json.dumps(data, indent=2) + "\n", owned, stamps=qwen.TRAITS.stamps)
    assert result.how == undo.KEPT
    assert json.loads(result.text) == {"$version": 4, "ui": {"theme": "dark"}}


OPENCODE = """{
  // my config
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight"
}
"""


def test_opencode_mcp_added_right_after_agentcfg_provider_falls_back_to_structural_undo():
    written, owned = switched(opencode, "json", OPENCODE)
    # a person adds a member at the end: edits the line agentcfg's provider block ends on
    edited = edit.apply("json", written, [(("mcp",), {"docs": {"type": "local", "command": ["docs"]}})])
    result = undo.revert("json", OPENCODE, written, edited, owned)
    data = edit.load("json", result.text)
    assert data == {**edit.load("json", OPENCODE), "mcp": {"docs": {"type": "local", "command": ["docs"]}}}
    assert "agentcfg" not in result.text and "// my config" in result.text


def test_owned_key_comes_back_as_its_original_text_in_the_structural_undo():
    before = 'model = "gpt-5"\nmodel_context_window = 1_000_000\n'
    written, owned = switched(codex, "toml", before)
    # the user put a key of their own into agentcfg's table: the lines overlap, so no text merge
    edited = written.replace('wire_api = "responses"', 'wire_api = "responses"\nrequest_max_retries = 2')
    result = undo.revert("toml", before, written, edited, owned)
    data = edit.load("toml", result.text)
    assert data["model"] == "gpt-5" and data["model_context_window"] == 1_000_000
    assert data["model_providers"] == {"agentcfg-local": {"request_max_retries": 2}}  # theirs: kept


def test_legacy_entry_without_a_copy_of_what_was_written_undoes_structurally():
    written, owned = switched(codex, "toml", CODEX)
    trusted = written + '\n[projects."/src/app"]\ntrust_level = "trusted"\n'
    result = undo.revert("toml", CODEX, None, trusted, owned)
    data = edit.load("toml", result.text)
    assert data == {**edit.load("toml", CODEX), "projects": {"/src/app": {"trust_level": "trusted"}}}


def test_a_file_that_no_longer_parses_is_reported_not_undone():
    written, owned = switched(codex, "toml", CODEX)
    with pytest.raises(ParseError, match="does not parse as TOML"):
        undo.revert("toml", CODEX, written, "this is = = not toml", owned)


def test_a_result_without_the_expected_data_is_never_used(monkeypatch):
    written, owned = switched(codex, "toml", CODEX)
    trusted = written + '\n[projects."/src/app"]\ntrust_level = "trusted"\n'
    monkeypatch.setattr(undo, "_structural", lambda *args: written)  # as if the editor had failed to undo
    with pytest.raises(AgentcfgError, match="rollback --force"):
        undo.revert("toml", CODEX, None, trusted, owned)


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "merged"),
    [
        ("a\nb\nc\n", "a\nb\nc\nd\n", "a\nc\n", "a\nc\nd\n"),  # apart
        ("a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n", "a\nB\nC\n"),  # neighbours, not the same line
        ("a\nb\n", "a\nb\nx\n", "a\n", "a\nx\n"),  # insertion right after a deleted block
        ("a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n", None),  # the same line
        ("a\nb\n", "a\nx\nb\n", "a\ny\nb\n", None),  # two insertions at one place
        ("a\nb\nc\nd\n", "a\nb\nx\nc\nd\n", "a\nd\n", None),  # an insertion inside a deleted block
        ("a\r\nb\r\n", "a\r\nb\r\nc\r\n", "b\r\n", "b\r\nc\r\n"),  # CRLF lines stay whole
        ("a\u2028b\nc\n", "a\u2028b\nc\nd", "c\n", "c\nd"),  # only \n ends a line
        ("a\nb\nx\n", "a\nb\nx\n\n[t]\n", "a\nb", "a\nb\n\n[t]\n"),  # the user's file ended without one
    ],
)
def test_three_way(base, ours, theirs, merged):
    assert undo.three_way(base, ours, theirs) == merged


def test_created_containers_are_the_missing_parents_deepest_first():
    owned = [("provider", "agentcfg-local", "options", "baseURL"), ("provider", "agentcfg-local", "name"), ("model",)]
    assert undo.created_containers({"provider": {"mine": {}}}, owned) == [
        ("provider", "agentcfg-local", "options"),
        ("provider", "agentcfg-local"),
    ]


def test_a_value_the_agent_moved_when_it_migrated_its_file_comes_back_in_its_new_place():
    """qwen-code moves an old top-level `selectedAuthType` under security.auth (seen with 0.15)."""
    before = '{\n  "selectedAuthType": "qwen-oauth",\n  "theme": "Dracula"\n}\n'
    written, owned = switched(qwen, "json", before, index=1)
    data = json.loads(written)
    del data["selectedAuthType"]  # migrated: agentcfg's selectedType was already in the new place
    migrated = json.dumps({"$version": 4, **data}, indent=2) + "\n"
    result = undo.revert("json", before, written, migrated, owned, stamps=qwen.TRAITS.stamps, moves=qwen.TRAITS.moves)
    assert json.loads(result.text) == {
        "$version": 4,
        "theme": "Dracula",
        "security": {"auth": {"selectedType": "qwen-oauth"}},
    }
    # not migrated (the old key still there): the plain undo
    result = undo.revert(
        "json", before, written, written.replace("{", '{\n  "x": 1,', 1), owned, moves=qwen.TRAITS.moves
    )
    assert json.loads(result.text) == {"x": 1, **json.loads(before)}
