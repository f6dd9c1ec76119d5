"""MCP servers' secrets: kept in the keyring, given to an agent by `agentcfg exec` and `env`, never printed, and
sent only to the hosts their value was given for."""

from __future__ import annotations

import json
from pathlib import Path

from agentcfg.errors import Exit
from tests.conftest import Home

SECRET = "mcp-secret-value-4f9a2c7e1b"
PRINT = ("--", "sh", "-c", 'printf "%s|%s" "$GH_TOKEN" "$DOCS_TOKEN"')


def test_a_secret_given_at_add_goes_to_the_keyring_and_to_exec_never_to_a_file(home: Home, keyring_file: Path):
    added = home.run("mcp", "add", "gh", "--secret", "GH_TOKEN", "--", "gh-mcp", check=Exit.NOTHING, GH_TOKEN=SECRET)
    assert SECRET not in added.stdout + added.stderr
    assert SECRET not in home.read(".config/agentcfg/mcp.toml")
    assert 'secrets = ["GH_TOKEN"]' in home.read(".config/agentcfg/mcp.toml")
    ran = home.run("exec", "local", *PRINT)
    assert ran.stdout == f"{SECRET}|"
    described = home.json("env", "local")["variables"]["GH_TOKEN"]
    assert described["source"] == "keyring" and described["value"] is None and SECRET not in json.dumps(described)


def test_the_shell_s_own_value_is_left_to_the_shell(home: Home, keyring_file: Path):
    home.run("mcp", "add", "gh", "--secret", "GH_TOKEN", "--", "gh-mcp", check=Exit.NOTHING, GH_TOKEN=SECRET)
    assert home.run("exec", "local", *PRINT, GH_TOKEN="from-the-shell").stdout == "from-the-shell|"


def test_adding_again_takes_the_stored_value_without_asking(home: Home, keyring_file: Path):
    home.run("mcp", "add", "gh", "--secret", "GH_TOKEN", "--", "gh-mcp", check=Exit.NOTHING, GH_TOKEN=SECRET)
    before = home.read(".config/agentcfg/mcp.toml")
    home.run("mcp", "add", "gh", "--secret", "GH_TOKEN", "--", "gh-mcp", check=Exit.NOTHING)  # no GH_TOKEN: stored
    assert home.read(".config/agentcfg/mcp.toml") == before


def test_no_value_and_no_terminal_is_refused_before_anything_is_written(home: Home, keyring_file: Path):
    refused = home.run("mcp", "add", "gh", "--secret", "GH_TOKEN", "--", "gh-mcp", check=Exit.REFUSED)
    assert "GH_TOKEN" in refused.stderr and "Traceback" not in refused.stderr
    assert not home.path(".config/agentcfg/mcp.toml").exists()


def test_a_remote_secret_goes_only_to_the_host_it_was_given_for(home: Home, keyring_file: Path):
    home.run("mcp", "add", "docs", "--url", "http://127.0.0.1:9/mcp", "--secret", "DOCS_TOKEN", check=Exit.NOTHING,
             DOCS_TOKEN=SECRET)  # fmt: skip
    assert home.run("exec", "local", *PRINT).stdout == f"|{SECRET}"
    # agentcfg's set edited to send it elsewhere: exec holds it back until it is given for that host
    text = home.read(".config/agentcfg/mcp.toml").replace("http://127.0.0.1:9/mcp", "https://elsewhere.example/mcp")
    home.write(".config/agentcfg/mcp.toml", text)
    held = home.run("exec", "local", *PRINT)
    assert held.stdout == "|" and "DOCS_TOKEN" in held.stderr and "elsewhere.example" in held.stderr
    # so does `mcp add` for that host: the value must be given again
    refused = home.run("mcp", "add", "docs", "--url", "https://elsewhere.example/mcp", "--secret", "DOCS_TOKEN",
                       check=Exit.REFUSED)  # fmt: skip
    assert "DOCS_TOKEN" in refused.stderr
    home.run("mcp", "secret", "DOCS_TOKEN", stdin_text=SECRET + "\n")
    assert home.run("exec", "local", *PRINT).stdout == f"|{SECRET}"


def test_mcp_secret_stores_replaces_and_removes(home: Home, keyring_file: Path):
    home.run("mcp", "add", "gh", "--secret", "GH_TOKEN", "--", "gh-mcp", check=Exit.NOTHING, GH_TOKEN=SECRET)
    stored = home.json("mcp", "secret", "GH_TOKEN", GH_TOKEN="another-value-1234567")
    assert stored == {"variable": "GH_TOKEN", "stored": True, "removed": False, "origins": []}
    assert home.run("exec", "local", *PRINT).stdout == "another-value-1234567|"
    assert home.json("mcp", "secret", "GH_TOKEN", "--rm")["removed"] is True
    assert home.run("exec", "local", *PRINT).stdout == "|"
    assert home.run("mcp", "secret", "GH_TOKEN", "--rm", check=Exit.NOTHING).returncode == Exit.NOTHING
    assert home.run("mcp", "secret", "PATH", check=Exit.REFUSED).returncode == Exit.REFUSED
