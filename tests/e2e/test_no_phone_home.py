"""No agent's request leaves loopback: each real agent, after `agentcfg switch`, completes a turn behind a
proxy that forwards to loopback only and refuses (and records) every other host, its vendor's API,
telemetry and update checks among them. What is refused fails the test with the hosts it asked for.

The proxy sees the agents that honour the proxy variables (all eight do: their vendors' hosts were seen
through such a proxy when they were first run here); CI's network namespace stops any other request too."""

from __future__ import annotations

import pytest

from tests.e2e import agents
from tests.e2e.agents import matrix
from tests.fault_server import MODEL, FaultServer
from tests.loopback_proxy import LoopbackProxy

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(("agent", "release"), matrix())
def test_a_turn_after_switch_reaches_no_host_but_loopback(agent, agent_home, run_agent):
    if refused := agents.plain_profile_refused(agent):  # a plain profile: it runs on a route (test_route_switch.py)
        pytest.skip(refused)
    with FaultServer(max_model_len=131072) as server, LoopbackProxy() as proxy:
        agent_home.run(
            "profile", "add", "local", "--force", "--base-url", server.base_url, "--model", MODEL,
            "--anthropic-base-url", server.root, "--context-window", "131072",
        )  # fmt: skip
        switched = agent_home.run("switch", "local", "--agent", agent, check=None)
        assert switched.returncode == 0, switched.stderr
        result = run_agent(agent, **proxy.variables())
    assert result.returncode == 0, result
    assert "ready" in result.stdout.lower(), result
    assert not proxy.refused, f"{agent} asked for hosts besides loopback: {proxy.refused}"
