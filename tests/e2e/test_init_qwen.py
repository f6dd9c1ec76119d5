"""Real qwen-code after `agentcfg init` moves its plaintext key into the keyring: qwen cannot run a command
to fetch it, so plain `qwen` has no key, and the command init prints for it (`agentcfg exec PROFILE -- qwen`)
answers. Without the move (a terminal's `n`), plain qwen answers as before (tests/cli/test_onboarding_check.py)."""

from __future__ import annotations

import pytest

from tests.e2e.agents import matrix
from tests.fault_server import MODEL, FaultServer

pytestmark = pytest.mark.e2e
KEY = "sk-e2e-qwen-0123456789abcdef"


@pytest.mark.parametrize(("agent", "release"), matrix(["qwen"]))
def test_qwen_after_init_moved_its_key_answers_through_the_command_init_printed(
    agent, release, agent_home, keyring_file, run_agent
) -> None:
    with FaultServer(key=KEY) as server:
        agent_home.write(
            ".qwen/.env", f"OPENAI_API_KEY={KEY}\nOPENAI_BASE_URL={server.base_url}\nOPENAI_MODEL={MODEL}\n"
        )
        before = run_agent("qwen")  # as the user had it: a plaintext key in qwen's .env
        name = f"local-{server.base_url.split(':')[2].split('/')[0]}"
        done = agent_home.run("init", "--profile", name, "--yes", "--agents", "qwen")
        plain = run_agent("qwen")
        through = run_agent("qwen", via=name)
    assert before.returncode == 0 and "ready" in before.stdout.lower(), before
    assert f"`agentcfg exec {name} -- qwen`" in done.stdout + done.stderr
    assert "qwen: key-missing (warning)" in done.stdout  # init's check says what doctor says
    assert plain.returncode != 0 and "Missing API key" in plain.output, plain
    assert through.returncode == 0 and "ready" in through.stdout.lower(), through
    assert KEY not in agent_home.read(".qwen/.env")
