"""init offers `agentcfg serve` when the profile is this machine's vLLM, vLLM is installed and nothing answers."""

from __future__ import annotations

import json
import socket

import pytest

from tests.conftest import Home


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def mine(home: Home) -> int:
    port = free_port()
    home.run("profile", "add", "mine", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m", "--no-key")
    home.write(".codex/config.toml", "# configured\n")
    return port


def vllm_installed(home: Home) -> None:
    program = home.root.parent / "bin" / "vllm"  # the HOME's bin dir, first on its PATH
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)


def init(home: Home, name: str) -> dict:
    return json.loads(home.run("init", "--profile", name, "--yes", "--no-check", "--json").stdout)


def test_init_offers_serve_when_vllm_is_installed_and_nothing_answers(home: Home, mine: int) -> None:
    vllm_installed(home)
    assert init(home, "mine")["serve"] == "agentcfg serve mine --weights PATH_OR_HF_ID"
    shown = home.run("init", "--profile", "mine", "--yes", "--no-check").stdout
    assert "6. serve: vLLM is installed and nothing answers" in shown


def test_init_uses_the_kept_serve_options(home: Home, mine: int) -> None:
    vllm_installed(home)
    home.write(".config/agentcfg/serve/mine.json", json.dumps({"weights": "/models/m", "vllm": "/opt/vllm/bin/vllm"}))
    assert init(home, "mine")["serve"] == "agentcfg serve mine"


def test_no_offer_without_vllm_or_when_the_server_answers(home: Home, mine: int) -> None:
    assert init(home, "mine")["serve"] is None  # no vllm on PATH, none kept
    vllm_installed(home)
    with socket.socket() as server:
        server.bind(("127.0.0.1", mine))
        server.listen()
        assert init(home, "mine")["serve"] is None
    home.run("profile", "add", "far", "--base-url", "https://gw.example/v1", "--model", "m", "--no-key")
    assert init(home, "far")["serve"] is None  # not this machine's
