"""A real MCP server from the registries (server-everything, tests/e2e/mcp_servers.py), over stdio and over
streamable HTTP, as each real agent's own listing command shows it (tests/e2e/mcp_agents.py: what each prints):

- written by hand in each agent's own format, every listing shows both servers, connected where it connects,
  and no agent writes the token it was given into a file;
- added once with `agentcfg mcp add` (with a `--secret`), every installed agent lists it the same way, no file
  under HOME holds the secret, and `agentcfg rollback` gives back every file byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.e2e import agents, mcp_servers
from tests.e2e.agents import matrix
from tests.e2e.mcp_agents import LISTED, LISTINGS, Server, hand_write, plain, require_mcp_add

pytestmark = pytest.mark.e2e

TIMEOUT = 120  # a listing that connects starts every server (opencode takes ~8 s on this machine)
VARIABLE = "EVERYTHING_TOKEN"
TOKEN = "mcp-e2e-fake-token-7f3a9c2e51d04b86"  # recognisable: found in a file means it was written
CLINE_FILE = ".cline/data/settings/cline_mcp_settings.json"


@pytest.fixture
def everything() -> Path:
    return mcp_servers.install()  # cached: .ci/run installed it before the tests went offline


@pytest.fixture
def http_server(everything):
    with mcp_servers.http_server() as server:
        yield server


def stdio(name: str = "everything", secret: str | None = VARIABLE) -> Server:
    return Server(name, command=tuple(mcp_servers.stdio_command()), secret=secret)


def remote(url: str, name: str = "everything-http", secret: str | None = VARIABLE) -> Server:
    return Server(name, url=url, secret=secret)


def listing(agent: str, home: Home, **env: str) -> agents.Run:
    return agents.run(list(LISTINGS[agent].argv), {**home.env, **env}, home.root, TIMEOUT, agent)


def holding(root: Path, secret: str) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes())


@pytest.mark.parametrize(("agent", "release"), matrix(LISTED))
def test_each_agent_lists_a_hand_written_stdio_and_http_server(agent, agent_home, http_server):
    servers = [stdio(), remote(http_server.url)]
    hand_write(agent_home.root, servers)

    result = listing(agent, agent_home, **{VARIABLE: TOKEN})

    assert result.returncode == 0, result
    for server in servers:
        assert LISTINGS[agent].sees(result, server), f"{server.name} not shown as expected:\n{result}"
    assert TOKEN not in result.output, "the listing printed the token"
    assert holding(agent_home.root, TOKEN) == [], f"{agent} wrote the token it was given into a file"


@pytest.mark.parametrize(("agent", "release"), matrix([a for a in LISTED if LISTINGS[a].connects]))
def test_a_listing_that_connects_tells_a_dead_server_from_a_live_one(agent, agent_home, everything):
    """The listing assertions can fail: a server that does not start and a URL nothing answers are not shown
    connected (so "connected" in the test above is the agent's word, not the pattern's)."""
    dead = [Server("everything", command=(mcp_servers.node(), str(everything.with_name("missing.js")))),
            remote(f"http://127.0.0.1:{mcp_servers.free_port()}/mcp", secret=None)]  # fmt: skip
    hand_write(agent_home.root, dead)

    result = listing(agent, agent_home)

    assert result.returncode == 0, result
    for server in dead:
        assert server.name in plain(result.output), result
        assert not LISTINGS[agent].sees(result, server), f"{server.name} shown connected:\n{result}"


# -- `agentcfg mcp add`: once, for every installed agent -------------------------------------------------------


def add_args(server: Server, *options: str) -> list[str]:
    """`agentcfg mcp add` for `server`: `--secret VAR` (its value from the environment, into the keyring);
    `options` (--json) before the `--` after which every word is the server's command."""
    secret = ["--secret", server.secret] if server.secret else []
    if server.remote:
        return ["mcp", "add", server.name, "--url", str(server.url), "--transport", "http", *secret, *options]
    return ["mcp", "add", server.name, *secret, *options, "--", *server.command]


def _add_then_list(transport: str, agent_home: Home, keyring: Path, url: str | None) -> None:
    server = remote(url) if transport == "http" else stdio()
    mine = stdio("mine", secret=None)  # the user's own server, in every agent's file before agentcfg comes
    hand_write(agent_home.root, [mine])
    before = agent_home.snapshot()

    # Added, then rolled back before any agent ran: every file is back byte for byte.
    agent_home.run(*add_args(server), **{VARIABLE: TOKEN})
    assert holding(agent_home.root, TOKEN) == []  # agentcfg's own state included
    assert TOKEN in json.loads(keyring.read_text()).values()  # the keyring holds it (outside HOME)
    assert agent_home.snapshot() != before
    assert "Rolled back" in agent_home.run("rollback").stdout
    assert agent_home.snapshot() == before

    # Added again: every installed agent's own listing shows it beside the user's own, connected where the listing
    # connects; nothing the agents wrote as they listed holds the token.
    added = agent_home.run(*add_args(server, "--json"), **{VARIABLE: TOKEN})
    assert TOKEN not in added.stdout + added.stderr
    assert server.name in json.dumps(agent_home.json("mcp", "list"))
    for agent in LISTED:
        result = listing(agent, agent_home, **{VARIABLE: TOKEN})
        assert result.returncode == 0, result
        assert LISTINGS[agent].sees(result, server), f"{agent} does not list {server.name}:\n{result}"
        assert LISTINGS[agent].sees(result, mine), f"{agent} lost the user's own server:\n{result}"
    assert holding(agent_home.root, TOKEN) == [], "a file holds the token"
    # Cline CLI has no listing command: its own file has the server beside the user's.
    assert {server.name, mine.name} <= set(json.loads(agent_home.read(CLINE_FILE))["mcpServers"])

    # The agents rewrote their own state as they listed (Claude Code's ~/.claude.json); rollback still takes the
    # server out of every agent, and leaves the user's own.
    assert "Rolled back" in agent_home.run("rollback").stdout
    for agent in LISTED:
        result = listing(agent, agent_home)
        assert not LISTINGS[agent].sees(result, server), f"{agent} still lists it after rollback:\n{result}"
        assert LISTINGS[agent].sees(result, mine), result


def test_mcp_add_a_stdio_server_then_every_agent_lists_it_and_rollback_restores(agent_home, keyring_file, everything):
    require_mcp_add()
    _add_then_list("stdio", agent_home, keyring_file, None)


def test_mcp_add_an_http_server_then_every_agent_lists_it_and_rollback_restores(agent_home, keyring_file, http_server):
    require_mcp_add()
    _add_then_list("http", agent_home, keyring_file, http_server.url)
