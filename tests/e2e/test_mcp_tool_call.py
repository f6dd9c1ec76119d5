"""A turn in which the real agent calls a tool of a real MCP server: the test server plays the model (its `tool`
fault), answering the first turn with a call of server-everything's `echo` by the name the agent gave it, and
the agent's next request carries the tool's answer ("Echo: <message>") back; then it answers "ready". Over stdio
and over streamable HTTP, the server given to the agent in its own file (tests/e2e/mcp_agents.py hand_write).

How each agent offers an MCP server's tool to the model, seen in their requests (pinned releases):
- Codex: a Responses `namespace` tool `mcp__NAME` holding `echo` (the call names the namespace apart);
- Claude Code: `mcp__NAME__echo`, once tool search is off (ENABLE_TOOL_SEARCH=false; else it is deferred behind
  its ToolSearch tool), and allowed in headless mode (--allowedTools);
- opencode: `NAME_echo`; Copilot CLI: `NAME-echo`; Cline CLI: `NAME__echo`;
- qwen-code: deferred, named `mcp__NAME__echo` in the system prompt and called through its `tool_call` bridge.
Not here: Droid (its MCP tools are deferred behind ToolSearch and none were named in its first request), Gemini
CLI (it needs a route)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import AGENTCFG
from tests.e2e import agents, mcp_servers
from tests.e2e.agents import TEST_SERVER, matrix
from tests.e2e.mcp_agents import Server, hand_write, require_mcp_add
from tests.e2e.test_exec_key_out_of_commands import COMMANDS
from tests.fault_server import MODEL, FaultServer

pytestmark = pytest.mark.e2e

TIMEOUT = 240
MESSAGE = "mcp-e2e-echo-5c2e91"  # what the model asks the tool to echo: found in the next request, it went through
NAME = "everything"
VARIABLE = "EVERYTHING_TOKEN"
TOKEN = "mcp-e2e-fake-token-0d6b2f83c4a1e975"


def call(agent: str, name: str, tool: str = "echo", arguments: dict[str, Any] | None = None) -> tuple[str, dict]:
    """(the pattern of the tool's name among the request's tools, the arguments of the call) for `agent`'s call
    of server `name`'s `tool` (server-everything's names: echo, get-env; Codex writes get_env)."""
    args = {"message": MESSAGE} if arguments is None else arguments
    codex_tool = tool.replace("-", "_")
    return {
        "codex": (rf"mcp__{name}__{codex_tool}", args),  # NAMESPACE__NAME, as tests/fault_server.py matches them
        "claude": (rf"mcp__{name}__{tool}", args),
        "opencode": (rf"{name}_{tool}", args),
        "copilot": (rf"{name}-{tool}", args),
        "qwen": ("tool_call", {"name": f"mcp__{name}__{tool}", "arguments": args}),
        "cline": (rf"{name}__{tool}", args),
    }[agent]


def command(agent: str, name: str, tool: str = "echo") -> tuple[list[str], dict[str, str]]:
    """The agent headless, allowed to call the MCP tool without asking, and what it needs in its environment."""
    if agent == "claude":
        return [*COMMANDS[agent], "--allowedTools", f"mcp__{name}__{tool}"], {"ENABLE_TOOL_SEARCH": "false"}
    return list(COMMANDS[agent]), {}


CALLING = ("codex", "claude", "opencode", "copilot", "qwen", "cline")


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


@pytest.mark.parametrize(("agent", "release"), matrix(CALLING))
def test_a_secret_given_by_reference_reaches_the_stdio_server(agent, agent_home, agent_versions, compat):
    """The stdio server is given the secret's variable by each agent's own reference to it (hand_write: Codex
    `env_vars`, Claude Code `${VAR}`, opencode `{env:VAR}`, qwen-code `$VAR`; Copilot CLI and Cline CLI pass
    their whole environment on, so none is written): the model calls `get-env` and the value is in the server's answer.
    Without the reference none of Codex, Claude Code, opencode and qwen-code hands the variable on (seen: they
    start a server with a few of their own variables, HOME, PATH, TERM...). agentcfg's writers are checked
    against this."""
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
        case="an MCP stdio server given a secret by the agent's own reference to its variable",
    )  # fmt: skip
    mcp_servers.install()
    hand_write(agent_home.root, [Server(NAME, command=tuple(mcp_servers.stdio_command()), secret=VARIABLE)])
    argv, env = command(agent, NAME, "get-env")
    with FaultServer("tool", max_model_len=131072, tool=call(agent, NAME, "get-env", {})) as server:
        agent_home.run("profile", "add", "model", "--base-url", server.base_url, "--model", MODEL,
                       "--anthropic-base-url", server.root, "--context-window", "131072")  # fmt: skip
        agent_home.run("switch", "model", "--agent", agent)
        result = agents.run(argv, {**agent_home.env, **env, VARIABLE: TOKEN}, agent_home.root, TIMEOUT, agent)
        answered = "\n".join(server.tool_outputs)

    assert result.returncode == 0 and "ready" in result.stdout.lower(), result
    assert "PATH" in answered, f"get-env was not called: {answered[:2000]}\n{result}"
    assert TOKEN in answered, f"the server's environment lacks {VARIABLE}: {answered[:3000]}"


@pytest.mark.parametrize(("agent", "release"), matrix(CALLING))
def test_after_mcp_add_the_agent_under_exec_starts_the_server_with_the_secret(
    agent, agent_home, keyring_file, agent_versions, compat
):
    """`agentcfg mcp add --secret VAR` keeps the value in the keyring and writes each agent a reference to VAR;
    under `agentcfg exec` the agent starts the stdio server with VAR set: the model calls server-everything's
    `get-env`, whose answer (the server's environment) carries the value. No file under HOME holds it before the
    agent runs (after, the agent's own transcript of the turn does: the tool's answer is in it)."""
    require_mcp_add()
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
        case="`agentcfg mcp add --secret` then `agentcfg exec`: the MCP server gets the secret",
    )  # fmt: skip
    mcp_servers.install()
    argv, env = command(agent, NAME, "get-env")
    with FaultServer("tool", max_model_len=131072, tool=call(agent, NAME, "get-env", {})) as server:
        agent_home.run("profile", "add", "model", "--base-url", server.base_url, "--model", MODEL,
                       "--anthropic-base-url", server.root, "--context-window", "131072")  # fmt: skip
        agent_home.run("switch", "model", "--agent", agent)
        agent_home.run("mcp", "add", NAME, "--agent", agent, "--secret", VARIABLE, "--", *mcp_servers.stdio_command(),
                       **{VARIABLE: TOKEN})  # fmt: skip
        holding = [str(p) for p in agent_home.root.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
        result = agents.run(
            [AGENTCFG, "exec", "model", "--", *argv], {**agent_home.env, **env}, agent_home.root, TIMEOUT, agent
        )
        answered = "\n".join(server.tool_outputs)

    assert result.returncode == 0 and "ready" in result.stdout.lower(), result
    assert VARIABLE in answered and TOKEN in answered, f"the server's environment lacks the secret: {answered[:3000]}"
    assert holding == [], "a file under HOME holds the secret"
