"""`agentcfg mcp` through the CLI, in a temporary HOME with Codex's and opencode's files: add, list, rm, sync,
import and rollback, each file byte for byte where the issue says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcfg.errors import Exit
from tests.conftest import Home

CODEX = ".codex/config.toml"
OPENCODE = ".config/opencode/opencode.json"
CODEX_TEXT = """# my codex config
model = "gpt-5"  # keep this comment

[mcp_servers.mine]
command = "my-server"
args = ["--port", "1"]
"""
OPENCODE_TEXT = '{\n  "$schema": "https://opencode.ai/config.json",\n  "theme": "tokyonight"\n}\n'


@pytest.fixture
def agents(home: Home) -> Home:
    home.write(CODEX, CODEX_TEXT)
    home.write(OPENCODE, OPENCODE_TEXT)
    return home


def add_json(home: Home, *args: str) -> dict:
    """`mcp add --json ...`: --json before the server's command, which takes every word after `--`."""
    return json.loads(home.run("mcp", "add", "--json", *args).stdout)


def test_add_writes_every_agent_once_and_rollback_gives_every_file_back(agents: Home):
    before = agents.snapshot()
    dry = agents.run("mcp", "add", "fs", "--dry-run", "--", "npx", "-y", "server-filesystem", "/src")
    assert agents.snapshot() == before and "+[mcp_servers.fs]" in dry.stdout and '"fs"' in dry.stdout
    added = add_json(agents, "fs", "--", "npx", "-y", "server-filesystem", "/src")
    assert {c["agent"]: c["action"] for c in added["changes"]} == {"codex": "modify", "opencode": "modify"}
    codex = agents.read(CODEX)
    assert codex.startswith(CODEX_TEXT) and '[mcp_servers.fs]\ncommand = "npx"' in codex
    assert json.loads(agents.read(OPENCODE))["mcp"]["fs"]["command"] == ["npx", "-y", "server-filesystem", "/src"]
    again = add_json(agents, "fs", "--", "npx", "-y", "server-filesystem", "/src")
    assert again["changed"] is False and again["journal_entry"] is None
    assert "fs" in agents.read(".config/agentcfg/mcp.toml")
    rolled = agents.run("rollback")
    assert "restored" in rolled.stderr
    assert agents.snapshot() == before and not agents.path(".config/agentcfg/mcp.toml").exists()


def test_list_shows_which_agents_have_each_server_and_how_they_differ(agents: Home):
    agents.run("mcp", "add", "fs", "--agent", "codex", "--", "npx", "server")
    listed = agents.json("mcp", "list")
    rows = {row["name"]: row for row in listed["servers"]}
    assert rows["fs"]["in_set"] and [c["agent"] for c in rows["fs"]["agents"]] == ["codex"]
    assert rows["fs"]["missing"] == []  # limited to codex: opencode does not lack it
    assert rows["mine"]["in_set"] is False and rows["mine"]["missing"] == ["opencode"]
    text = agents.run("mcp", "list").stdout
    assert "mine  my-server --port 1  (not in agentcfg set)" in text


def test_import_takes_the_agents_servers_and_sync_gives_them_to_every_agent(agents: Home):
    imported = agents.json("mcp", "import")
    assert imported["servers"] == ["mine"] and imported["sources"] == {"mine": "codex"}
    refused = agents.run("mcp", "sync", check=Exit.REFUSED)  # no terminal, no --yes
    assert "--yes" in refused.stderr and "mine" not in agents.read(OPENCODE)
    shown = agents.run("mcp", "sync", "--dry-run")
    assert '"mine"' in shown.stdout and "mine" not in agents.read(OPENCODE)
    agents.run("mcp", "sync", "--yes")
    assert json.loads(agents.read(OPENCODE))["mcp"]["mine"]["command"] == ["my-server", "--port", "1"]
    assert agents.json("mcp", "sync", "--yes")["changed"] is False


def test_copies_that_differ_need_a_choice(agents: Home):
    text = json.loads(OPENCODE_TEXT)
    text["mcp"] = {"mine": {"type": "local", "command": ["other-server"]}}
    agents.write(OPENCODE, json.dumps(text, indent=2))
    refused = agents.run("mcp", "import", check=Exit.REFUSED)
    assert "mine" in refused.stderr and "--prefer" in refused.stderr
    taken = agents.json("mcp", "import", "--prefer", "opencode")
    assert taken["sources"] == {"mine": "opencode"}
    assert 'command = ["other-server"]' in agents.read(".config/agentcfg/mcp.toml")


def test_a_plaintext_token_moves_to_the_keyring_and_the_file_gets_a_reference(agents: Home, keyring_file: Path):
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    agents.write(CODEX, CODEX_TEXT + f'env = {{ GITHUB_TOKEN = "{token}" }}\n')
    listed = agents.json("mcp", "list")
    assert listed["servers"][0]["agents"][0]["plaintext_secrets"] == ["GITHUB_TOKEN"]
    assert token not in json.dumps(listed)
    imported = agents.run("mcp", "import")
    assert token not in imported.stdout + imported.stderr
    assert token not in agents.read(CODEX) and "GITHUB_TOKEN" in agents.read(CODEX)
    assert token in keyring_file.read_text()
    assert agents.run("exec", "local", "--", "sh", "-c", 'printf %s "$GITHUB_TOKEN"').stdout == token


def test_rm_takes_it_out_of_every_agent_and_the_set(agents: Home):
    agents.run("mcp", "add", "fs", "--", "npx", "server")
    removed = agents.json("mcp", "rm", "fs")
    assert {c["agent"] for c in removed["changes"]} == {"codex", "opencode"}
    assert "fs" not in agents.read(CODEX) and "fs" not in agents.read(".config/agentcfg/mcp.toml")
    assert agents.read(CODEX) == CODEX_TEXT
    agents.run("mcp", "rm", "fs", check=Exit.NOTHING)


def test_a_file_that_does_not_parse_is_reported_never_written(agents: Home):
    agents.write(CODEX, "model = [\n")
    refused = agents.run("mcp", "add", "fs", "--", "npx", "server", check=Exit.REFUSED)
    assert "config.toml" in refused.stderr and "Traceback" not in refused.stderr
    assert agents.read(CODEX) == "model = [\n" and "fs" not in agents.read(OPENCODE)


def test_a_project_s_mcp_files_are_not_imported_until_trusted(agents: Home):
    project = agents.root / "repo"
    (project / ".git").mkdir(parents=True)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"team": {"command": "team-mcp", "args": ["-v"]}}}))
    first = json.loads(agents.run("mcp", "import", "--json", cwd=project).stdout)
    assert "team" not in first["servers"] and any("agentcfg trust" in n for n in first["notes"])
    agents.run("trust", cwd=project)
    second = json.loads(agents.run("mcp", "import", "--json", cwd=project).stdout)
    assert "team" in second["servers"] and second["sources"]["team"].endswith(".mcp.json: mcpServers.team")


def test_import_s_dry_run_masks_the_token_it_would_move(agents: Home, keyring_file: Path):
    token = "plainValue2024xyz"  # looks like no key: masked because import moves it
    agents.write(CODEX, CODEX_TEXT + f'env = {{ SERVICE_PASSWORD = "{token}" }}\n')
    shown = agents.run("mcp", "import", "--dry-run")
    assert "-env = " in shown.stdout and token not in shown.stdout + shown.stderr
    assert token in agents.read(CODEX)  # a dry run writes nothing
