"""Each real agent, configured only by agentcfg, answers through the profile's server: the right
path, model and auth header, seen by the project's own recording test server."""

from __future__ import annotations

import pytest

from agentcfg.profiles import PLACEHOLDER_KEY
from tests.e2e import agents
from tests.e2e.agents import TEST_SERVER, matrix
from tests.fault_server import MODEL, FaultServer

pytestmark = pytest.mark.e2e

PATHS = {
    "codex": "/v1/responses",
    "qwen": "/v1/chat/completions",
    "opencode": "/v1/chat/completions",
    "claude": "/v1/messages",
    "cline": "/v1/chat/completions",
    "copilot": "/v1/chat/completions",
    "droid": "/v1/chat/completions",
}
KEY = "sk-e2e-keyring-0123456789abcdef"


def model_calls(server: FaultServer, agent: str) -> list[tuple[dict[str, str], dict]]:
    """The agent's generation requests (headers lower-cased, body), leaving out model lists."""
    return [
        ({k.lower(): v for k, v in headers.items()}, body)
        for method, path, headers, body in server.requests
        if method == "POST" and path.split("?")[0] == PATHS[agent]
    ]


@pytest.mark.parametrize(("agent", "release"), matrix())
def test_switch_local_then_the_agent_answers_through_the_server(agent, agent_home, run_agent, agent_versions, compat):
    if refused := agents.plain_profile_refused(agent):  # a plain profile: it needs a route
        pytest.skip(refused)
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER, case="`switch local`, no key"
    )
    with FaultServer(max_model_len=131072) as server:
        agent_home.run(
            "profile", "add", "local", "--force", "--base-url", server.base_url, "--model", MODEL,
            "--anthropic-base-url", server.root, "--context-window", "131072",
        )  # fmt: skip
        agent_home.run("switch", "local")  # no --agent: all four are on PATH, so all four switch
        result = run_agent(agent)
        calls = model_calls(server, agent)
    # The agent rewrote its own state files as it ran; what agentcfg owns is untouched, so the same
    # switch again writes nothing, and rollback still undoes the first one.
    again = agent_home.json("switch", "local")
    undone = agent_home.run("rollback")

    assert result.returncode == 0, result
    assert "ready" in result.stdout.lower(), result
    assert again["changed"] is False, again
    assert "Rolled back" in undone.stdout, undone.stdout
    assert calls, f"{agent} sent no {PATHS[agent]} request: {server.requests}"
    for headers, body in calls:
        assert body["model"] == MODEL
        for name in ("authorization", "x-api-key"):  # a keyless server: nothing or the placeholder
            assert headers.get(name, PLACEHOLDER_KEY).removeprefix("Bearer ") == PLACEHOLDER_KEY, headers


@pytest.mark.secretservice
@pytest.mark.parametrize(("agent", "release"), matrix())
def test_exec_with_the_key_from_the_real_keyring(agent, agent_home, real_keyring, run_agent, agent_versions, compat):
    if refused := agents.plain_profile_refused(agent):  # a plain profile: it needs a route
        pytest.skip(refused)
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
        case="`agentcfg exec`, key in the Secret Service",
    )  # fmt: skip
    with FaultServer(key=KEY, max_model_len=131072) as server:
        agent_home.run(
            "profile", "add", "gw", "--base-url", server.base_url, "--model", MODEL,
            "--anthropic-base-url", server.root, "--key-env", "GW_API_KEY", "--context-window", "131072",
        )  # fmt: skip
        agent_home.run("key", "set", "gw", stdin_text=KEY + "\n")
        assert real_keyring.lookup("gw") == KEY
        agent_home.run("switch", "gw")
        result = run_agent(agent, via="gw")
        calls = model_calls(server, agent)

    assert result.returncode == 0, result
    assert "ready" in result.stdout.lower(), result
    assert calls
    for headers, body in calls:
        assert body["model"] == MODEL
        assert headers["authorization"] == f"Bearer {KEY}"
        if agent == "claude":  # apiKeyHelper's key goes out as both headers
            assert headers["x-api-key"] == KEY
    on_disk = agent_home.snapshot()
    assert not [path for path, data in on_disk.items() if KEY.encode() in data], "a key was written to a file"
    assert KEY not in result.output
