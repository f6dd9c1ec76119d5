"""Shared steps of the realservers tests: a profile pointed at a real server, and doctor's verdict."""

from __future__ import annotations

import json

from tests.conftest import Home
from tests.realservers.peers import MODEL


def add_profile(
    home: Home, name: str, root: str, *, model: str = MODEL, v1: bool = True, key: str | None = None
) -> None:
    """`profile add` for a server at `root` (no /v1), as a user would: `--detect` first (window and,
    for vLLM, Claude Code's URL read from the server); where the server refuses that probe (a key it
    does not have yet, a wrong path or model) or is not vLLM, both given by hand. Then the key."""
    args = ["profile", "add", name, "--force", "--base-url", root + "/v1" if v1 else root, "--model", model]
    args += ["--key-env", f"{name.upper().replace('-', '_')}_API_KEY"] if key else ["--no-key"]
    detected = home.run(*args, "--detect", check=None)
    if detected.returncode != 0 or "anthropic_base_url" not in home.json("profile", "show", name):
        home.run(*args, "--anthropic-base-url", root, "--context-window", "65536")
    if key:
        home.run("key", "set", name, stdin_text=key + "\n")


def doctor(home: Home, *args: str, **env: str) -> tuple[int, list[dict]]:
    result = home.run("doctor", "--json", "--timeout", "60", *args, check=None, **env)
    assert result.returncode in (0, 1), (result.returncode, result.stdout, result.stderr)
    return result.returncode, json.loads(result.stdout)["findings"]


def failing(findings: list[dict]) -> set[tuple[str | None, str]]:
    return {(f["agent"], f["id"]) for f in findings if f["status"] == "fail"}
