"""Deliberately broken setups: what each real agent shows, and that `doctor` names the same cause.

Claude Code retries silently for minutes (CLAUDE_CODE_MAX_RETRIES=0 makes it say what it saw);
Codex never gives up on a dead server or proxy ("Reconnecting... waiting for network"), so its
transcript up to the timeout is its error."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import Home, keyring_env
from tests.e2e.agents import AGENTS, TEST_SERVER, matrix
from tests.fault_server import MODEL, FaultServer, dead_port

pytestmark = pytest.mark.e2e

KEY = "sk-e2e-right-key-0123456789"
UNREACHABLE = r"Reconnecting\.\.\. waiting for network|Connection error|Cannot connect to API|Unable to connect"
# setup -> (what the agent's own output shows, the finding doctor must report)
CASES = {
    "wrong-key": (r"401|Unauthorized", "key-rejected"),
    "dead-port": (UNREACHABLE, "server-unreachable"),
    "proxy": (UNREACHABLE, "proxy-unreachable"),
    "no-v1": (r"404|Not Found", "base-url-path"),
    "wrong-model": (r"does not exist|issue with the selected model", "model-not-found"),
}
# Where an agent only hangs, the timeout ends it: the seconds each needs to show its error.
TIMEOUTS = {
    ("codex", "dead-port"): 20,
    ("codex", "proxy"): 20,
    ("opencode", "dead-port"): 150,  # ~85 s of retries before "Cannot connect to API"
    ("opencode", "proxy"): 150,
}
FINDINGS_TOO = {"proxy": {"proxy-intercepts-local"}}  # a proxy variable without NO_PROXY: also named


def cases() -> list:
    # Claude Code takes its Anthropic base URL without /v1; `profile add` refuses one with it, so the
    # missing-/v1 mistake cannot reach it through agentcfg.
    return [
        pytest.param(setup, agent, id=f"{setup}-{agent}")
        for setup in CASES
        for agent in AGENTS
        if not (setup == "no-v1" and agent == "claude")
    ]


@pytest.mark.parametrize(("setup", "agent", "release"), matrix(cases(), lambda values: values[1]))
def test_doctor_names_the_cause_the_agent_shows(
    setup, agent, agent_home: Home, run_agent, tmp_path, agent_versions, compat
):
    compat(tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
           case=f"broken: {setup} → doctor {CASES[setup][1]}")  # fmt: skip
    agent_home.env.update(keyring_env(tmp_path / "keyring.json"))
    shows, finding = CASES[setup]
    with FaultServer(key=KEY, max_model_len=131072) as server:
        url, anthropic, model, key, env = server.base_url, server.root, MODEL, KEY, {"CLAUDE_CODE_MAX_RETRIES": "0"}
        if setup == "wrong-key":
            key = "sk-e2e-wrong-key-9876543210"
        elif setup == "dead-port":
            port = dead_port()
            url, anthropic = f"http://127.0.0.1:{port}/v1", f"http://127.0.0.1:{port}"
        elif setup == "proxy":
            proxy = f"http://127.0.0.1:{dead_port()}"
            env.update(
                HTTPS_PROXY=proxy, HTTP_PROXY=proxy, https_proxy=proxy, http_proxy=proxy, NO_PROXY="", no_proxy=""
            )
        elif setup == "no-v1":
            url = server.root
        elif setup == "wrong-model":
            model = "deepseek-chat"
        agent_home.run(
            "profile", "add", "gw", "--base-url", url, "--model", model, "--anthropic-base-url", anthropic,
            "--key-env", "GW_API_KEY", "--context-window", "131072",
        )  # fmt: skip
        agent_home.run("key", "set", "gw", stdin_text=key + "\n")
        agent_home.run("switch", "gw", "--agent", agent)
        result = run_agent(agent, via="gw", timeout=TIMEOUTS.get((agent, setup), 90), **env)
        reached = [r for r in server.requests if r[0] == "POST"]
        doctor = agent_home.run("doctor", "--json", "--agent", agent, check=None, **env)

    assert re.search(shows, result.output), result
    assert result.returncode != 0, result  # an error exit, or killed at the timeout
    if setup in ("dead-port", "proxy"):
        assert not reached, "the agent's request reached the server"
    assert doctor.returncode == 1, (doctor.stdout, doctor.stderr)
    failed = {f["id"] for f in json.loads(doctor.stdout)["findings"] if f["status"] == "fail"}
    assert finding in failed, doctor.stdout
    assert failed <= {finding} | FINDINGS_TOO.get(setup, set()), doctor.stdout
    assert key not in doctor.stdout + result.output
