"""Deliberately broken setups: what each real agent shows, and that `doctor` names the same cause.

Claude Code retries silently for minutes (CLAUDE_CODE_MAX_RETRIES=0 makes it say what it saw);
Codex never gives up on a dead server or proxy ("Reconnecting... waiting for network"), so its
transcript up to the timeout is its error."""

from __future__ import annotations

import json
import re
from typing import TypeVar

import pytest

from tests.conftest import Home, keyring_env
from tests.e2e import agents
from tests.e2e.agents import AGENTS, TEST_SERVER, matrix
from tests.e2e.test_config_loads import at_least
from tests.fault_server import MODEL, FaultServer, dead_port

pytestmark = pytest.mark.e2e
T = TypeVar("T")

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
# What a later release shows instead: (agent, setup) -> [(first release seen, regex)], newest first.
SHOWS_FROM = {
    # Claude Code 2.1.197: "API Error: Unable to connect to API (ConnectionRefused)"; 2.1.332: "API Error:
    # Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)" [run].
    ("claude", "dead-port"): [("2.1.332", r"API Error: Connection refused .*\(ECONNREFUSED\)")],
    ("claude", "proxy"): [("2.1.332", r"API Error: Connection refused .*\(ECONNREFUSED\)")],
    # Copilot CLI 1.0.102, after ~25 s of retries: "Could not connect to local model provider at URL." [run];
    # a 404 for the model: "Model 'M' not found on provider at URL (HTTP 404)." [run]
    ("copilot", "dead-port"): [("1.0.102", r"Could not connect to local model provider at http://127\.0\.0\.1:")],
    ("copilot", "proxy"): [("1.0.102", r"Could not connect to local model provider at http://127\.0\.0\.1:")],
    ("copilot", "wrong-model"): [("1.0.102", r"Model '[^']+' not found on provider at \S+ \(HTTP 404\)")],
    # Droid 0.225 prints only "Error during droid execution: Exec failed" whatever went wrong (the cause is in
    # ~/.factory/logs/droid-log-single.log, and in `droid exec -o stream-json`) [run]: doctor names it.
    **{("droid", setup): [("0", r"Error during droid execution: Exec failed")] for setup in CASES},
}
# Where an agent only hangs or retries, the timeout ends it: the seconds each needs to show its error,
# as [(first release seen, seconds)], newest first (no entry: 90).
TIMEOUTS = {
    ("codex", "dead-port"): [("0", 20)],
    ("codex", "proxy"): [("0", 20)],
    ("opencode", "dead-port"): [("0", 150)],  # ~85 s of retries before "Cannot connect to API"
    ("opencode", "proxy"): [("0", 150)],
    # qwen-code 0.15.10 says "Connection error" after one try (8 s). 0.24.4 retries a refused connection
    # (ECONNREFUSED is a transport error, "retryable"): 7 attempts, 1.5 s doubling to 30 s, ±30 % jitter
    # (DEFAULT_RETRY_OPTIONS, chunks/chunk-HP5Q3XUS.js), 76.5 s of waits: "[API Error: Connection error.
    # (cause: connect ECONNREFUSED ...)]" after 96 s (proxy) and 101 s (dead port), at most ~105 s [run].
    ("qwen", "dead-port"): [("0.24.4", 150)],
    ("qwen", "proxy"): [("0.24.4", 150)],
}
FINDINGS_TOO = {"proxy": {"proxy-intercepts-local"}}  # a proxy variable without NO_PROXY: also named


def at(table: dict[tuple[str, str], list[tuple[str, T]]], agent: str, setup: str, version: str, default: T) -> T:
    """The value `table` has for `agent` at `version` in `setup`: that of the newest release it names
    at or before `version`; else `default`."""
    for first, value in table.get((agent, setup), []):
        if at_least(version, first):
            return value
    return default


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
    if refused := agents.plain_profile_refused(agent):  # a plain profile: it needs a route
        pytest.skip(refused)
    compat(tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
           case=f"broken: {setup} → doctor {CASES[setup][1]}")  # fmt: skip
    agent_home.env.update(keyring_env(tmp_path / "keyring.json"))
    shows, finding = CASES[setup]
    shows = at(SHOWS_FROM, agent, setup, agent_versions[agent], shows)
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
        result = run_agent(agent, via="gw", timeout=at(TIMEOUTS, agent, setup, agent_versions[agent], 90), **env)
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
