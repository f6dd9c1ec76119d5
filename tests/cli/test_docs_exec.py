"""docs/exec.md's examples run as written: every `agentcfg ...` line of its code blocks, in a temporary HOME
with the four agents faked on PATH (tests/cli/test_keys_exec.py: they dump what they were given and reach no
server) and a key stored for every built-in profile that needs one. An `exec` on a profile the agent cannot
run on (Claude Code and a profile without an Anthropic URL) exits 2 and fails here."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from agentcfg.profiles import BUILT_IN, Profile, load_own
from tests.cli.test_keys_backends import run, set_key
from tests.cli.test_keys_exec import agents  # noqa: F401 - a fixture
from tests.conftest import REPO, Home

EXEC_MD = REPO / "docs" / "exec.md"


def command_lines(text: str) -> list[list[str]]:
    """The `agentcfg` command lines of the fenced code blocks, as words (comments dropped)."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    return [shlex.split(line, comments=True) for line in lines if line.startswith("agentcfg ")]


def builtins(home: Home) -> dict[str, Profile]:
    return {name: p for name, p in load_own(home.env).items() if p.source == BUILT_IN}


def test_the_scan_finds_the_examples():
    found = command_lines(EXEC_MD.read_text(encoding="utf-8"))
    assert len([words for words in found if words[1] == "exec"]) >= 3, found
    assert command_lines("```sh\nagentcfg exec a -- claude   # here\n  x\n```\n") == [
        ["agentcfg", "exec", "a", "--", "claude"]
    ]


def test_every_example_runs_as_written(home: Home, keyring_file: Path, agents) -> None:  # noqa: F811
    shipped = builtins(home)
    for profile in shipped.values():
        if profile.key_env:
            set_key(home, profile.name, "sk-docs-example-0123456789abcdef")
    for words in command_lines(EXEC_MD.read_text(encoding="utf-8")):
        result = run(home, *words[1:], check=None)
        assert result.returncode == 0, f"docs/exec.md: `{shlex.join(words)}` exits {result.returncode}: {result.stderr}"
        if words[1] == "exec" and words[4:5] == ["claude"] and words[2] in shipped:
            assert shipped[words[2]].anthropic_base_url, words  # what Claude Code needs, as shipped
