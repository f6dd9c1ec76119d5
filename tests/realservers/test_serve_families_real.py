"""The family table against the installed vLLM (VLLM_PYTHON): every parser and tokenizer mode a row names is one
vLLM's own registries accept, and `vllm serve --help` knows every flag `serve`'s command can emit.

Needs only VLLM_PYTHON (a python that has vLLM; `.ci/install-servers` makes one), not the peers: nothing is served.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

from agentcfg.profiles import Profile
from agentcfg.serve import command, families
from agentcfg.serve.families import FAMILIES

pytestmark = pytest.mark.realservers

# Read in vLLM's own process: the names each registry holds, and --tokenizer-mode's choices.
REGISTRIES = r"""
import json
from vllm.tool_parsers import ToolParserManager
from vllm.reasoning import ReasoningParserManager
from typing import get_args
from vllm.config.model import TokenizerMode  # the Literal `--help` lists as --tokenizer-mode's choices
modes = get_args(TokenizerMode)
print(json.dumps({
    "tool": sorted(ToolParserManager.list_registered()),
    "reasoning": sorted(ReasoningParserManager.list_registered()),
    "tokenizer_modes": sorted(modes or []),
}))
"""


def vllm_python() -> str:
    python = os.environ.get("VLLM_PYTHON")
    if not python:
        pytest.skip("VLLM_PYTHON is unset: it names a python that has vLLM (`.ci/install-servers` makes one)")
    return python


@cache
def registries(python: str) -> dict[str, list[str]]:
    result = subprocess.run([python, "-c", REGISTRIES], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@cache
def serve_flags(python: str) -> set[str]:
    program = str(Path(python).parent / "vllm")
    result = subprocess.run([program, "serve", "--help=all"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", result.stdout))


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_the_rows_parsers_are_registered(family: families.Family) -> None:
    known = registries(vllm_python())
    assert family.tool_parser in known["tool"]
    if family.reasoning_parser:
        assert family.reasoning_parser in known["reasoning"]
    if family.tokenizer_mode:
        assert family.tokenizer_mode in known["tokenizer_modes"]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_serve_help_has_every_flag_the_command_emits(family: families.Family) -> None:
    profile = Profile(name="local", base_url="http://127.0.0.1:8000/v1", model="m", context_window=65_536)
    options = command.Options(weights="/models/m", family=family.name, enforce_eager=True, gpus=("0", "1"))
    cmd = command.build(profile, options, {}, gpu_count=2, key=None)
    emitted = {name for name in map(command.flag_name, cmd.argv[3:]) if name}
    assert emitted <= serve_flags(vllm_python())
