"""Under `agentcfg exec`, the commands the model runs never see the profile's key: the test server answers the
first turn with a call of the agent's own shell tool running `env`, and what that printed comes back to the
server in the next turn. The agent itself still sends the key (the server checks it), and once the agent has
ended no file of agentcfg's runtime directory holds it (docs/exec.md: where each agent gets it from)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import AGENTCFG
from tests.e2e import agents
from tests.e2e.agents import TEST_SERVER, matrix
from tests.fault_server import FaultServer

pytestmark = pytest.mark.e2e

TIMEOUT = 240
KEY = "sk-e2e-keyout-0123456789abcdef"
PROMPT = "Print your environment"
# Each agent headless, allowed to run its shell tool without asking (none of these flags changes its environment).
COMMANDS = {
    "codex": ["codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", PROMPT],
    "qwen": ["qwen", "-p", PROMPT, "--yolo"],
    "opencode": ["opencode", "run", PROMPT],
    "claude": ["claude", "-p", PROMPT, "--allowedTools", "Bash"],
    "cline": ["cline", PROMPT],  # it approves every tool by default
    "copilot": ["copilot", "-p", PROMPT, "--allow-all-tools", "-s", "--no-auto-update"],
    "gemini": ["gemini", "-p", PROMPT, "--yolo"],
    "droid": ["droid", "exec", PROMPT, "--auto", "high"],
}


def holding(directory: Path, secret: str) -> list[str]:
    return sorted(str(p) for p in directory.rglob("*") if p.is_file() and secret.encode() in p.read_bytes())


@pytest.mark.parametrize(("agent", "release"), matrix())
def test_the_models_commands_never_see_the_key(agent, agent_home, keyring_file, agent_versions, compat):
    if refused := agents.plain_profile_refused(agent):  # a plain profile: it needs a route
        pytest.skip(refused)
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
        case="`agentcfg exec` (key in the keyring): the model's shell command prints its environment, no key in it",
    )  # fmt: skip
    with FaultServer("shell", key=KEY, model="model-k", max_model_len=131072) as server:
        agent_home.run("profile", "add", "k", "--base-url", server.base_url, "--model", "model-k",
                       "--anthropic-base-url", server.root, "--key-env", "K_API_KEY")  # fmt: skip
        agent_home.run("key", "set", "k", stdin_text=KEY + "\n")
        argv = [AGENTCFG, "exec", "k", "--", *COMMANDS[agent]]
        result = agents.run(argv, agent_home.env, agent_home.root, TIMEOUT, agent)
        printed = "\n".join(server.tool_outputs)

    assert result.returncode == 0 and "ready" in result.stdout.lower(), result
    assert "AGENTCFG_PROFILE=k" in printed, f"the model's command printed no environment: {printed[:2000]}"
    assert KEY not in printed, f"{agent}'s shell tool passed the key on"
    assert "K_API_KEY=" not in printed and "\nOPENAI_API_KEY=sk" not in printed
    # The key reached the server the right way (the server refuses any other), and left no file behind.
    runtime = Path(agent_home.env["XDG_RUNTIME_DIR"])
    deadline = time.monotonic() + 10  # a file that held it goes when the agent's process has ended
    while holding(runtime, KEY) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert holding(runtime, KEY) == []
    assert holding(agent_home.root, KEY) == []
