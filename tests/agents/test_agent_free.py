"""No module outside agentcfg/agents/ names an agent (issue 29): what agentcfg knows of one agent is that agent's
module's (its TRAITS and its members of the Agent interface), so a new agent needs no line elsewhere. Checked in
the code, not in docstrings and comments."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentcfg.doctor
from agentcfg.agents import AGENTS

DOCTOR = Path(agentcfg.doctor.__file__).parent
# The one name doctor keeps: claude-oauth-expired is an expired claude.ai login, Claude Code's by definition, so its
# fix switches Claude Code whichever agent met the answer.
KEPT = {"problems.py": ["'claude'"]}


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
    }


def _agent_names(path: Path) -> list[str]:
    """Each place the module's code names an agent: a string that is an agent's name, an agent module imported."""
    tree = ast.parse(path.read_text())
    docstrings = _docstrings(tree)
    found = [
        f"{path.name}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in AGENTS and id(node) not in docstrings
    ]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("agentcfg.agents"):
            modules = [node.module.rsplit(".", 1)[-1], *(alias.name for alias in node.names)]
            found += [f"{path.name}:{node.lineno}: imports {name}" for name in modules if name in AGENTS]
    return found


PACKAGE = DOCTOR.parent
OUTSIDE_AGENTS = sorted(p for p in PACKAGE.rglob("*.py") if PACKAGE / "agents" not in p.parents)


@pytest.mark.parametrize("path", OUTSIDE_AGENTS, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_doctor_module_names_no_agent(path: Path) -> None:
    assert [found.rsplit(": ", 1)[-1] for found in _agent_names(path)] == KEPT.get(path.name, [])


def test_the_check_sees_a_name(tmp_path: Path) -> None:
    """The check itself finds a name where one is (so an empty result above means something)."""
    module = tmp_path / "example.py"
    module.write_text('"""codex"""\nfrom agentcfg.agents import qwen\nTABLE = {"opencode": 1}\n')
    assert _agent_names(module) == ["example.py:3: 'opencode'", "example.py:2: imports qwen"]
