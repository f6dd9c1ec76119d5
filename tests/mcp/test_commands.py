"""agentcfg.mcp.commands and ops, their pure parts: what import takes in, what list shows, what each agent gets."""

from __future__ import annotations

import pytest

from agentcfg.agents import AGENTS
from agentcfg.errors import AgentcfgError
from agentcfg.mcp import commands, ops
from agentcfg.mcp.model import Found, McpServer

FS = McpServer("fs", command=("npx", "-y", "server-filesystem", "/src"))
FS_OTHER = McpServer("fs", command=("npx", "-y", "server-filesystem", "/elsewhere"))
GH = McpServer("gh", command=("gh-mcp",), secrets=("GITHUB_TOKEN",))


def reading(agent: str, *found: Found) -> ops.Reading:
    return ops.Reading(AGENTS[agent], {}, found)


def found(agent: str, server: McpServer, **kw) -> Found:
    return Found(agent, server, f"{agent}'s file: {server.name}", **kw)


def test_one_copy_everywhere_is_taken_from_the_first_agent():
    readings = [reading("codex", found("codex", FS)), reading("claude", found("claude", FS))]
    gathered = commands.gather(readings, {})
    assert gathered.servers == {"fs": FS} and gathered.source == {"fs": "codex"} and not gathered.conflicts


def test_copies_that_differ_are_a_conflict_until_an_agent_is_preferred():
    readings = [reading("codex", found("codex", FS)), reading("claude", found("claude", FS_OTHER))]
    gathered = commands.gather(readings, {})
    assert gathered.servers == {} and gathered.conflicts == {"fs": {"codex": [], "claude": ["command"]}}
    preferred = commands.gather(readings, {}, prefer=("opencode", "claude"))
    assert preferred.servers == {"fs": FS_OTHER} and preferred.source == {"fs": "claude"}


def test_a_server_already_in_the_set_is_not_taken_again_and_a_different_copy_is_said():
    readings = [reading("codex", found("codex", FS_OTHER))]
    gathered = commands.gather(readings, {"fs": FS})
    assert gathered.servers == {} and "agentcfg mcp sync" in gathered.notes[0]


def test_plaintext_secrets_are_collected_from_the_copy_taken_only():
    plain = found("claude", GH, plaintext=(("GITHUB_TOKEN", "ghp_value_one"),))
    other = found("codex", McpServer("gh", command=("other",), secrets=("GITHUB_TOKEN",)),
                  plaintext=(("GITHUB_TOKEN", "ghp_value_two"),))  # fmt: skip
    gathered = commands.gather([reading("claude", plain), reading("codex", other)], {}, prefer=("claude",))
    assert gathered.plaintext == {"GITHUB_TOKEN": "ghp_value_one"}


def test_one_variable_with_two_values_is_refused():
    a = found("claude", GH, plaintext=(("GITHUB_TOKEN", "ghp_value_one"),))
    b = found("codex", McpServer("gh2", command=("x",), secrets=("GITHUB_TOKEN",)),
              plaintext=(("GITHUB_TOKEN", "ghp_value_two"),))  # fmt: skip
    with pytest.raises(AgentcfgError, match="two different values"):
        commands.gather([reading("claude", a), reading("codex", b)], {})


def test_listing_names_each_copy_its_differences_and_the_agents_without_it():
    readings = [
        reading("codex", found("codex", FS)),
        reading("claude", found("claude", FS_OTHER, unmodelled=("cwd",))),
        reading("qwen"),
    ]
    data = commands.listing(readings, {"fs": FS}, {"HOME": "/home/u"})
    (row,) = data["servers"]
    assert row["in_set"] and row["missing"] == ["qwen"]
    assert [(c["agent"], c["differs"], c["unmodelled"]) for c in row["agents"]] == [
        ("codex", [], []),
        ("claude", ["command"], ["cwd"]),
    ]


def test_a_server_limited_to_some_agents_is_missing_only_from_those():
    limited = McpServer("fs", command=FS.command, agents=("codex", "qwen"))
    data = commands.listing(
        [reading("codex", found("codex", FS)), reading("claude"), reading("qwen")], {"fs": limited}, {}
    )
    assert data["servers"][0]["missing"] == ["qwen"]


def test_each_agent_gets_what_is_its_own():
    codex, claude = reading("codex", found("codex", GH)), reading("claude")
    limited = McpServer("fs", command=FS.command, agents=("claude",))
    assert ops.wanted({"fs": limited, "gh": None}, codex) == {"gh": None}  # removed where it is, not added
    assert ops.wanted({"fs": limited, "gh": None}, claude) == {"fs": limited}  # nothing to remove there


def test_a_secret_goes_only_to_the_origins_its_value_was_given_for():
    from agentcfg.mcp import secrets

    docs = McpServer("docs", url="https://mcp.example.com/mcp", transport="http", bearer="DOCS_TOKEN")
    servers = {"docs": docs}
    assert secrets.origins_of("DOCS_TOKEN", servers) == ["https://mcp.example.com:443"]
    assert secrets.unbound("DOCS_TOKEN", servers, ["https://mcp.example.com:443"]) == []
    assert secrets.unbound("DOCS_TOKEN", servers, ["https://other.example:443"]) == ["https://mcp.example.com:443"]
    assert secrets.unbound("GITHUB_TOKEN", {"gh": GH}, None) == []  # a stdio server's: no host
