"""A turn in which the real agent calls a tool of a real MCP server: the test server plays the model (its `tool`
fault), answering the first turn with a call of server-everything's `echo` by the name the agent gave it, and
the agent's next request carries the tool's answer ("Echo: <message>") back; then it answers "ready". Over stdio
and over streamable HTTP, the server given to the agent in its own file (tests/e2e/mcp_agents.py hand_write).

How each agent offers an MCP server's tool to the model, seen in their requests (pinned releases):
- Codex: a Responses `namespace` tool `mcp__NAME` holding `echo` (the call names the namespace apart);
- Claude Code: `mcp__NAME__echo`, once tool search is off (ENABLE_TOOL_SEARCH=false; else it is deferred behind
  its ToolSearch tool), and allowed in headless mode (--allowedTools);
- opencode: `NAME_echo`; Copilot CLI: `NAME-echo`;
- qwen-code: deferred, named `mcp__NAME__echo` in the system prompt and called through its `tool_call` bridge.
Not here: Droid (its MCP tools are deferred behind ToolSearch and none were named in its first request), Gemini
CLI (it needs a route), Cline CLI (no hand-written format checked yet)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e import agents, mcp_servers
from tests.e2e.agents import TEST_SERVER, matrix
from tests.e2e.mcp_agents import Server, hand_write
from tests.e2e.test_exec_key_out_of_commands import COMMANDS
from tests.fault_server import MODEL, FaultServer

pytestmark = pytest.mark.e2e

TIMEOUT = 240
MESSAGE = "mcp-e2e-echo-5c2e91"  # what the model asks the tool to echo: found in the next request, it went through
NAME = "everything"


def call(agent: str, name: str) -> tuple[str, dict[str, Any]]:
    """(the pattern of the tool's name among the request's tools, the arguments of the call) for `agent`."""
    echo = {"message": MESSAGE}
    return {
        "codex": (rf"mcp__{name}__echo", echo),  # NAMESPACE__NAME, as tests/fault_server.py matches a namespace's
        "claude": (rf"mcp__{name}__echo", echo),
        "opencode": (rf"{name}_echo", echo),
        "copilot": (rf"{name}-echo", echo),
        "qwen": ("tool_call", {"name": f"mcp__{name}__echo", "arguments": echo}),
    }[agent]


def command(agent: str, name: str) -> tuple[list[str], dict[str, str]]:
    """The agent headless, allowed to call the MCP tool without asking, and what it needs in its environment."""
    if agent == "claude":
        return [*COMMANDS[agent], "--allowedTools", f"mcp__{name}__echo"], {"ENABLE_TOOL_SEARCH": "false"}
    return list(COMMANDS[agent]), {}


CALLING = ("codex", "claude", "opencode", "copilot", "qwen")


@pytest.fixture(params=["stdio", "http"])
def mcp_server(request) -> Iterator[Server]:
    """server-everything as the agent gets it: a command it starts (stdio), or a URL this test serves (HTTP)."""
    mcp_servers.install()
    if request.param == "stdio":
        yield Server(NAME, command=tuple(mcp_servers.stdio_command()))
        return
    with mcp_servers.http_server() as http:
        yield Server(NAME, url=http.url)


@pytest.mark.parametrize(("agent", "release"), matrix(CALLING))
def test_the_agent_calls_the_mcp_servers_tool_and_sends_its_answer_back(
    agent, mcp_server, agent_home, agent_versions, compat
):
    transport = "HTTP" if mcp_server.remote else "stdio"
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
        case=f"an MCP tool call (server-everything `echo`, {transport})",
    )  # fmt: skip
    hand_write(agent_home.root, [mcp_server])
    argv, env = command(agent, mcp_server.name)
    with FaultServer("tool", max_model_len=131072, tool=call(agent, mcp_server.name)) as server:
        agent_home.run("profile", "add", "model", "--base-url", server.base_url, "--model", MODEL,
                       "--anthropic-base-url", server.root, "--context-window", "131072")  # fmt: skip
        agent_home.run("switch", "model", "--agent", agent)  # into the agent's file beside the MCP server
        result = agents.run(argv, {**agent_home.env, **env}, agent_home.root, TIMEOUT, agent)
        answered = server.tool_outputs

    assert result.returncode == 0 and "ready" in result.stdout.lower(), result
    assert any(f"Echo: {MESSAGE}" in out for out in answered), f"no echo came back: {answered}\n{result}"
