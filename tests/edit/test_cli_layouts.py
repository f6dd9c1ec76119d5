"""The installed CLI on files whose layout the old editor broke: a temporary HOME, exit 2, nothing written."""

from __future__ import annotations

import pytest
import tomllib

CASES = {
    "codex array of tables": (
        "codex",
        ".codex/config.toml",
        'model = "gpt-5"\n\n[[model_providers]]\nname = "a"\n',
        "model_providers at line 3 is an array of tables; agentcfg needs a table there",
    ),
    "codex string": (
        "codex",
        ".codex/config.toml",
        'model_providers = "x"\n',
        "model_providers at line 1 is a string; agentcfg needs a table there",
    ),
    "opencode array": (
        "opencode",
        ".config/opencode/opencode.json",
        '{\n  "model": "x/y",\n  "provider": []\n}\n',
        "provider at line 3 is an array; agentcfg needs an object there",
    ),
}


@pytest.mark.parametrize(("agent", "relative", "text", "message"), list(CASES.values()), ids=list(CASES))
def test_a_parent_of_another_type_stops_the_switch_with_a_message(home, agent, relative, text, message):
    home.write(relative, text)
    before = home.snapshot()
    result = home.run("switch", "local", "--agent", agent, check=2)
    assert message in result.stderr
    assert f"{relative}:" in result.stderr  # where: the file and line
    assert "--agent" in result.stderr  # what to do next
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert home.snapshot() == before


def test_dotted_providers_at_the_top_level_switch_and_roll_back(home):
    text = (
        "# hand-written\n"
        'model = "gpt-5"\n'
        'model_providers.myollama = { name = "Ollama", base_url = "http://localhost:11434/v1" }\n'
        "\n"
        '[projects."/home/u"]\n'
        'trust_level = "trusted"\n'
    )
    home.write(".codex/config.toml", text)
    home.run("switch", "local", "--agent", "codex")
    out = home.read(".codex/config.toml")
    data = tomllib.loads(out)
    assert data["model_provider"] == "agentcfg-local"
    assert data["model_providers"]["myollama"]["name"] == "Ollama"
    assert data["projects"] == {"/home/u": {"trust_level": "trusted"}}
    assert out.index("model_provider = ") < out.index("[projects")
    assert "nothing to change" in home.run("switch", "local", "--agent", "codex").stdout
    home.run("rollback")
    assert home.read(".codex/config.toml") == text
