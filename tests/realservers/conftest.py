"""Fixtures for the realservers tier: the servers `peers.py` started (AGENTCFG_PEERS names its state
file, as `.ci/run` sets it), or, when it is unset, servers started here for this session (run the
tier with `-n 0` then, or each xdist worker starts its own)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.conftest import agent_home, agent_versions, agents_bin, release, run_agent  # noqa: F401 - shared fixtures
from tests.realservers import peers as peers_module

DEDICATED_READY = 600  # s: 40-90 s on two idle cores with --enforce-eager; the tier runs four workers beside it


@dataclass(frozen=True)
class Peers:
    vllm: str  # root URLs (no /v1): the healthy vLLM with a tool parser and --api-key (VLLM_KEY)
    vllm_bare: str  # no tool parser, --api-key, --enforce-eager
    litellm: str
    vllm_version: str
    litellm_version: str
    vllm_log: Path  # --enable-log-requests: each request's SamplingParams, max_tokens included
    model_dir: Path  # the tiny model (separator_tokens.json: the token ids bias_proxy.py forces)
    vllm_bin: str  # the `vllm` program the peers run (a test's own vLLM runs it too)
    litellm_venv: Path  # LiteLLM's venv: `agentcfg[route]` installed from this clone (.ci/install-servers)

    @classmethod
    def load(cls, state: dict) -> Peers:
        urls = {name: peer["url"] for name, peer in state["peers"].items()}
        log = Path(state["peers"]["vllm"]["log"])
        return cls(
            urls["vllm"],
            urls["vllm-bare"],
            urls["litellm"],
            state["vllm_version"],
            state["litellm_version"],
            log,
            Path(state["model_dir"]),
            state["peers"]["vllm"]["argv"][0],
            Path(state["peers"]["litellm"]["argv"][0]).parent.parent,
        )


@pytest.fixture(scope="session")
def peers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peers]:
    named = os.environ.get("AGENTCFG_PEERS")
    if named:
        yield Peers.load(json.loads(Path(named).read_text()))
        return
    if not (os.environ.get("VLLM_PYTHON") and os.environ.get("LITELLM_PYTHON")):
        pytest.fail("the realservers tier needs VLLM_PYTHON and LITELLM_PYTHON: run `bash .ci/run`, or "
                    "`bash .ci/install-servers FILE` and export the two lines it writes")  # fmt: skip
    state_file = tmp_path_factory.mktemp("peers") / "state.json"
    state = peers_module.up(state_file, os.environ["VLLM_PYTHON"], os.environ["LITELLM_PYTHON"])
    try:
        yield Peers.load(state)
    finally:
        peers_module.down(state_file, state)


@pytest.fixture
def dedicated_vllm(peers: Peers, tmp_path: Path) -> Iterator[peers_module.Vllm]:
    """A vLLM of this test's own, ready (the healthy peer's settings, --enforce-eager), that the test may stop and
    start again on its port; stopped by its PID at the end whatever happened."""
    server = peers_module.Vllm(peers.vllm_bin, peers.model_dir, tmp_path)
    try:
        server.start()
        server.wait_ready(DEDICATED_READY)
        yield server
    finally:
        server.stop()
