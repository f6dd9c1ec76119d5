"""Red team: a base URL that urllib cannot split (`http://[::1`: "Invalid IPv6 URL") in an agent file, an
imported one, or a cloned repository's `.claude/settings.json`, made switch, profile import and doctor stop
with an internal error (ValueError from urlsplit, which several guards call)."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import AGENTCFG, Home

BAD = "http://[::1"
CODEX = f'model = "m"\nmodel_provider = "team"\n[model_providers.team]\nname = "team"\nbase_url = "{BAD}"\n'
CLAUDE = json.dumps({"env": {"ANTHROPIC_BASE_URL": BAD, "ANTHROPIC_AUTH_TOKEN": "tok-user"}})


def _clean(result) -> None:
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert "could not run" not in result.stderr, result.stderr


@pytest.mark.parametrize("file", [".codex/config.toml", ".claude/settings.json"])
@pytest.mark.parametrize(
    "command", [("switch", "local", "--all", "--dry-run"), ("profile", "import", "--yes"), ("doctor", "--offline")]
)
def test_an_unsplittable_url_in_an_agent_file(home: Home, file: str, command: tuple[str, ...]) -> None:
    home.write(file, CODEX if file.endswith(".toml") else CLAUDE)
    _clean(home.run(*command, check=None))


def test_an_unsplittable_url_in_a_project_claude_settings(home: Home) -> None:
    home.write(".claude/settings.json", '{"env": {"ANTHROPIC_AUTH_TOKEN": "tok-user"}}\n')
    project = home.path("repo")
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(json.dumps({"env": {"ANTHROPIC_BASE_URL": BAD}}))
    command = [AGENTCFG, "doctor", "--offline", "--agent", "claude"]
    result = subprocess.run(command, cwd=project, env=home.env, capture_output=True, text=True, timeout=60)
    _clean(result)
    assert "tok-user" not in result.stdout + result.stderr
