"""The real Claude Code and Codex run agentcfg's key helper inside a cloned repository that plants its own
`agentcfg/` (and what agentcfg imports), with an inherited PYTHONPATH whose empty entry is that directory.

agentcfg is switched both ways a user starts it: its console script and `python -m agentcfg` (which wrote
`python -m agentcfg key get P`: Python puts the current directory first, and the repository's code got
every key). The agent must send the keyring's key, and nothing planted may run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_helper_isolation import PLANTED
from tests.conftest import AGENTCFG, Home
from tests.e2e import agents
from tests.fault_server import MODEL, FaultServer

pytestmark = pytest.mark.e2e

KEY = "sk-e2e-helper-isolated-0123456789ab"
INVOCATIONS = {"console-script": [AGENTCFG], "python-m": [sys.executable, "-m", "agentcfg"]}


def plant(root: Path) -> tuple[Path, Path]:
    """A cloned repository whose planted modules append their name to the marker file; (repo, marker)."""
    repo, marker = root / "src" / "cloned-repo", root / "MARKER"
    for relative in PLANTED:
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\nprint('sk-planted-by-the-repo')\n")
    return repo, marker


@pytest.mark.parametrize("invocation", INVOCATIONS)
@pytest.mark.parametrize(("agent", "release"), agents.matrix(["claude", "codex"]))
def test_the_agent_runs_the_installed_helper_inside_a_planted_repository(
    agent, invocation, agent_home: Home, keyring_file, tmp_path, agent_versions, compat
):
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=agents.TEST_SERVER,
        case="key helper run inside a repository that plants `agentcfg/`, PYTHONPATH=:",
    )  # fmt: skip
    repo, marker = plant(tmp_path)
    with FaultServer(key=KEY, max_model_len=131072) as server:
        agent_home.run(
            "profile", "add", "gw", "--base-url", server.base_url, "--model", MODEL,
            "--anthropic-base-url", server.root, "--key-env", "GW_API_KEY", "--context-window", "131072",
        )  # fmt: skip
        agent_home.run("key", "set", "gw", stdin_text=KEY + "\n")
        switched = subprocess.run(
            [*INVOCATIONS[invocation], "switch", "gw", "--agent", agent],
            env=agent_home.env, cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
        )  # fmt: skip
        assert switched.returncode == 0, switched.stderr
        result = agents.run(agents.command(agent), {**agent_home.env, "PYTHONPATH": ":"}, repo, 120, agent)
        calls = [headers for method, path, headers, _ in server.requests if method == "POST"]

    planted = marker.read_text().split() if marker.exists() else []
    assert planted == [], (planted, str(result))
    assert result.returncode == 0 and "ready" in result.stdout.lower(), result
    assert calls, server.requests
    for headers in calls:
        lowered = {k.lower(): v for k, v in headers.items()}
        assert lowered["authorization"] == f"Bearer {KEY}"
