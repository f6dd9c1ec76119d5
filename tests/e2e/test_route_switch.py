"""Each real agent, switched to a route, answers through its router: the router is tests/route/fake_litellm.py (as
`agentcfg route serve` starts LiteLLM; the real LiteLLM is tests/realservers/test_route_real.py's), its legs the
project's recording test server. An agent that speaks only what a router serves (Gemini CLI: the Gemini API) runs
here, after a switch, with the key in the variable its files name (as the switch's note tells the user)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcfg.agents import AGENTS
from agentcfg.current import read_current
from tests.conftest import AGENTCFG, Home
from tests.e2e import agents
from tests.e2e.agents import TEST_SERVER, matrix
from tests.e2e.test_exec_key_out_of_commands import COMMANDS, PROMPT
from tests.fault_server import MODEL, FaultServer, dead_port
from tests.loopback_proxy import LoopbackProxy
from tests.route.fake_litellm import program

pytestmark = pytest.mark.e2e


def _leg(home: Home, name: str, root: str) -> None:
    home.write(
        f".config/agentcfg/profiles/{name}.toml",
        f'base_url = "{root}/v1"\nanthropic_base_url = "{root}"\nmodel = "{MODEL}"\ncontext_window = 131072\n',
    )


@pytest.mark.parametrize(("agent", "release"), matrix())
def test_switch_to_a_route_then_the_agent_answers_through_the_router(
    agent, agent_home: Home, keyring_file: Path, run_agent, agent_versions, compat, tmp_path: Path
):
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
        case="`switch ROUTE` (a router in front of the test server)",
    )  # fmt: skip
    agent_home.env["AGENTCFG_LITELLM"] = str(program(tmp_path, "ok"))
    with FaultServer(max_model_len=131072) as server:
        _leg(agent_home, "pri", server.root)
        _leg(agent_home, "spare", server.root)
        agent_home.run("route", "add", "home", "--primary", "pri", "--fallback", "spare", "--port", str(dead_port()))
        try:
            agent_home.run("route", "serve", "home")
            # Copilot CLI and Cline take a key only in plaintext in their files: a switch gives it to them only
            # when asked (without, its note says `agentcfg exec`, which the exec tests below run)
            traits = AGENTS[agent].TRAITS
            plaintext_only = not traits.reads_key_variable and traits.key_variable is None
            agent_home.run("switch", "home", "--agent", agent, *(["--store-key-in-files"] if plaintext_only else []))
            key = agent_home.run("key", "get", "home").stdout.strip()
            binding = AGENTS[agent].read(read_current(AGENTS[agent], agent_home.env))
            variables = {binding.key_env: key} if binding.key_env and not binding.helper else {}
            with LoopbackProxy() as proxy:  # and nothing of it leaves loopback (tests/e2e/test_no_phone_home.py)
                result = run_agent(agent, **variables, **proxy.variables())
        finally:
            agent_home.run("route", "stop", "home", check=None)
        calls = [path for method, path, _, _ in server.requests if method == "POST"]
    assert result.returncode == 0, result
    assert "ready" in result.stdout.lower(), result
    assert calls, f"{agent} sent nothing through the router: {server.requests}"
    assert key not in result.output
    assert not proxy.refused, f"{agent} asked for hosts besides loopback: {proxy.refused}"


@pytest.mark.parametrize(("agent", "release"), matrix())
def test_exec_on_a_route_answers_and_writes_none_of_the_agents_files(
    agent, agent_home: Home, keyring_file: Path, run_agent, agent_versions, compat, tmp_path: Path
):
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
        case="`exec ROUTE` (a router in front of the test server)",
    )  # fmt: skip
    agent_home.env["AGENTCFG_LITELLM"] = str(program(tmp_path, "ok"))
    with FaultServer(max_model_len=131072) as server:
        _leg(agent_home, "pri", server.root)
        _leg(agent_home, "spare", server.root)
        agent_home.run("route", "add", "home", "--primary", "pri", "--fallback", "spare", "--port", str(dead_port()))
        try:
            agent_home.run("route", "serve", "home")
            files = [f.path for f in AGENTS[agent].files(agent_home.env)]
            result = run_agent(agent, via="home")
        finally:
            agent_home.run("route", "stop", "home", check=None)
        calls = [path for method, path, _, _ in server.requests if method == "POST"]
    assert result.returncode == 0, result
    assert "ready" in result.stdout.lower(), result
    assert calls, f"{agent} sent nothing through the router: {server.requests}"
    assert not any(path.exists() for path in files), "exec wrote the agent's own files"


# The agents that run only on a route (Agent.unsupported refuses a plain profile): tests/e2e/
# test_exec_key_out_of_commands.py is theirs on a route.
ROUTE_ONLY = [agent for agent in agents.AGENTS if agents.plain_profile_refused(agent)]


@pytest.mark.parametrize(("agent", "release"), matrix(ROUTE_ONLY))
def test_exec_on_a_route_keeps_the_router_key_from_the_models_commands(
    agent, agent_home: Home, keyring_file: Path, agent_versions, compat, tmp_path: Path
):
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
        case="`exec ROUTE`: the model's shell command prints its environment, no router key in it",
    )  # fmt: skip
    agent_home.env["AGENTCFG_LITELLM"] = str(program(tmp_path, "ok"))
    with FaultServer("shell", max_model_len=131072) as server:
        _leg(agent_home, "pri", server.root)
        _leg(agent_home, "spare", server.root)
        agent_home.run("route", "add", "home", "--primary", "pri", "--fallback", "spare", "--port", str(dead_port()))
        try:
            agent_home.run("route", "serve", "home")
            key = agent_home.run("key", "get", "home").stdout.strip()
            argv = [AGENTCFG, "exec", "home", "--", *COMMANDS[agent]]
            result = agents.run(argv, agent_home.env, agent_home.root, 240, agent)
        finally:
            agent_home.run("route", "stop", "home", check=None)
        printed = "\n".join(server.tool_outputs)
    assert result.returncode == 0 and "ready" in result.stdout.lower(), result
    assert "PATH=" in printed, f"the shell tool's output did not come back: {server.requests}"
    assert PROMPT and key and key not in printed
