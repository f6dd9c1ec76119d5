"""The real Codex with agentcfg's three kinds of provider id side by side in one CODEX_HOME: config.toml's
switched `profile-x` (`agentcfg-profile-x`), the profile file of `x`, and `agentcfg exec x` while config.toml
is on `exec-x`. Codex merges tables of one id across config.toml, a profile file and `-c` overrides, and
refuses to start when the merged table has two key methods (agentcfg.attribution keeps the ids apart)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from tests.conftest import AGENTCFG, Home
from tests.e2e import agents
from tests.e2e.agents import PROMPT, TEST_SERVER, matrix
from tests.fault_server import FaultServer

pytestmark = pytest.mark.e2e

TIMEOUT = 180
KEYS = {name: f"sk-e2e-ids-{name}-0123456789abcdef" for name in ("x", "profile-x", "exec-x")}


@contextlib.contextmanager
def servers() -> Iterator[dict[str, FaultServer]]:
    with contextlib.ExitStack() as stack:
        yield {name: stack.enter_context(FaultServer(key=key, model=f"model-{name}")) for name, key in KEYS.items()}


def add_profiles(home: Home, by_name: dict[str, FaultServer]) -> None:
    for name, server in by_name.items():
        variable = name.upper().replace("-", "_") + "_API_KEY"
        home.run(
            "profile", "add", name, "--base-url", server.base_url, "--model", f"model-{name}", "--key-env", variable
        )
        home.run("key", "set", name, stdin_text=KEYS[name] + "\n")


def only(by_name: dict[str, FaultServer], name: str) -> None:
    """Codex's turn went to `name`'s server with `name`'s key, and nothing to the others' (then forgets them)."""
    calls = [
        headers for method, path, headers, _ in by_name[name].requests if method == "POST" and "/responses" in path
    ]
    assert calls, f"nothing reached {name}'s server"
    sent = {value for headers in calls for header, value in headers.items() if header.lower() == "authorization"}
    assert sent == {f"Bearer {KEYS[name]}"}
    for other, server in by_name.items():
        assert other == name or server.requests == [], f"{other}'s server was asked: {server.requests}"
        server.requests.clear()


@pytest.mark.parametrize(("agent", "release"), matrix(["codex"]))
def test_switched_profile_x_profile_file_of_x_and_exec_load_side_by_side(
    agent, agent_home, keyring_file, agent_versions, compat
):
    compat(
        tier="e2e", agent=agent, agent_version=agent_versions[agent], server=TEST_SERVER,
        case="config.toml on profile `profile-x` (key in file) next to the profile file of `x`, and exec on x",
    )  # fmt: skip
    codex = ["codex", "exec", "--skip-git-repo-check", PROMPT]

    def run(*argv: str) -> None:
        result = agents.run(list(argv), agent_home.env, agent_home.root, TIMEOUT, agent)
        assert result.returncode == 0 and "ready" in result.stdout.lower(), result

    with servers() as by_name:
        add_profiles(agent_home, by_name)
        agent_home.run("switch", "x", "--agent", "codex")  # the profile file of x: `auth` runs `key get x`
        # config.toml's table of profile-x holds its key: merged with the file's `auth`, Codex would refuse
        agent_home.run("switch", "profile-x", "--agent", "codex", "--store-key-in-files")
        run("codex", "--profile", "agentcfg-x", *codex[1:])
        only(by_name, "x")
        run(*codex)
        only(by_name, "profile-x")

        agent_home.run("switch", "exec-x", "--agent", "codex")  # config.toml's table of exec-x fetches its key
        run(AGENTCFG, "exec", "x", "--", *codex)
        only(by_name, "x")
