"""agentcfg.mcp.store: agentcfg's set of MCP servers, its own file."""

from __future__ import annotations

import pytest

from agentcfg.errors import AgentcfgError, ParseError
from agentcfg.mcp import model, store
from agentcfg.mcp.model import McpServer

SERVERS = {
    "fs": McpServer("fs", command=("npx", "-y", "@modelcontextprotocol/server-filesystem", "/src dir")),
    "gh": McpServer("gh", command=("gh-mcp",), env=(("LOG", "1"),), secrets=("GITHUB_TOKEN",), agents=("codex",)),
    "docs": McpServer(
        "docs", url="https://mcp.example.com/mcp", transport="http", bearer="DOCS_TOKEN", headers=(("X-Team", "a"),)
    ),
}


def test_the_set_file_reads_back_what_was_written_and_holds_no_value_of_a_secret():
    text = store.render(SERVERS)
    assert store.parse(text, "mcp.toml") == SERVERS
    assert text.index("[servers.docs]") < text.index("[servers.fs]") < text.index("[servers.gh]")
    assert store.render(store.parse(text, "mcp.toml")) == text  # a second write changes nothing


def test_no_file_is_no_servers(tmp_path):
    environ = {"AGENTCFG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    assert store.load(environ) == {}
    store.save(environ, store.render(SERVERS))
    assert store.load(environ) == SERVERS
    assert (store.path(environ).stat().st_mode & 0o777) == 0o600


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[servers.x\n", ParseError),
        ("servers = 3\n", AgentcfgError),
        ("other = 1\n[servers.x]\ncommand = ['a']\n", AgentcfgError),
        ("[servers.x]\ncommand = ['a', '${HOME}']\n", AgentcfgError),  # edited by hand to hold a template
        ("[servers.x]\ncommand = ['a']\nurl = 'https://a.example/'\n", AgentcfgError),
    ],
)
def test_a_set_file_agentcfg_would_not_write_is_refused(text, error):
    with pytest.raises(error):
        store.parse(text, "mcp.toml")


def test_render_is_what_model_to_dict_holds():
    text = store.render({"gh": SERVERS["gh"]})
    assert 'secrets = ["GITHUB_TOKEN"]' in text and 'agents = ["codex"]' in text
    assert model.to_dict(SERVERS["gh"])["env"] == {"LOG": "1"}
