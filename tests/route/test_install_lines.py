"""No line agentcfg ships tells the user to install `agentcfg` from the package index: there that name is an
unrelated project's (0.2.0, 0.2.1), so `pip install 'agentcfg[route]'` installs someone else's code (issue 27).
Installing from a checkout (`.`, `'.[route]'`, a path) is what every install line says instead."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from agentcfg.route import server

REPO = Path(__file__).resolve().parents[2]
# An installer's install command, and what follows it up to the end of the shell command
_INSTALL = re.compile(r"\b(?:pip3?|pipx|uv\s+pip|uv\s+tool|uvx?)\s+(install|inject)\b([^\n`;&|#)]*)")
_FROM_INDEX = re.compile(r"agentcfg(\[[^\]]*\])?([<>=!~].*)?", re.IGNORECASE)


def index_installs(text: str) -> list[str]:
    """The install commands in `text` that name the distribution `agentcfg` (not a path to it)."""
    found = []
    for match in _INSTALL.finditer(text):
        words = match.group(2).replace("'", " ").replace('"', " ").split()
        if match.group(1) == "inject":  # `pipx inject VENV PACKAGE...`: the first word is the venv installed already
            words = [w for w in words if w.startswith("-")] + [w for w in words if not w.startswith("-")][1:]
        if any(_FROM_INDEX.fullmatch(word) for word in words):
            found.append(match.group(0).strip())
    return found


@pytest.mark.parametrize(
    ("line", "bad"),
    [("pip install 'agentcfg[route]'", True), ("pipx install agentcfg", True), ("uv tool install agentcfg==0.1", True),
     ("`.venv/bin/pip install agentcfg`", True), ("pip install -U 'agentcfg'", True),
     ("pip install .", False), (".venv/bin/pip install '.[route]'", False), ("pipx install .", False),
     ("pip install -e '/src/agentcfg[route]'", False), ("agentcfg route serve home  # pip install .", False),
     ("pipx inject agentcfg keyrings.cryptfile", False), ("pipx inject agentcfg agentcfg", True)],
)  # fmt: skip
def test_the_check_tells_an_index_install_from_a_checkout_install(line: str, bad: bool) -> None:
    assert bool(index_installs(line)) is bad


def test_no_shipped_file_installs_agentcfg_from_the_index() -> None:
    listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    shipped = [p for p in listed if not p.startswith("tests/") and p.endswith((".md", ".py", ".toml", ".txt", ".json"))]
    shipped += [p for p in listed if p.startswith(".ci/")]
    assert "README.md" in shipped and "agentcfg/route/server.py" in shipped
    found = {path: hits for path in shipped if (hits := index_installs((REPO / path).read_text(errors="replace")))}
    assert found == {}, found


def test_serve_names_the_route_extras_requirements_for_the_python_that_runs_agentcfg() -> None:
    """From the installed distribution's metadata, so the hint never drifts from pyproject.toml's `route` extra."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    pinned = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["route"]
    assert server.route_requirements() == pinned
    assert server.install_command() == shlex.join([sys.executable, "-m", "pip", "install", *pinned])
    assert any(word.startswith(f"litellm[proxy]=={server.TESTED_LITELLM}") for word in pinned)
