"""Red team: a key value is written literally into opencode.json by `switch --store-key-in-files`, and opencode
expands `{env:NAME}` / `{file:PATH}` in that file's raw text. A key that holds such a template (from an agent
file the user imports, an exported variable, or `key set`) made agentcfg write something opencode turns into
another secret (~/.ssh/id_ed25519) and sends to the profile's host."""

from __future__ import annotations

import json

from tests.conftest import Home

TEMPLATED = "x{file:~/.ssh/id_ed25519}"
CODEX = f"""model = "m"
model_provider = "team"
[model_providers.team]
name = "team"
base_url = "http://127.0.0.1:9/v1"
experimental_bearer_token = "{TEMPLATED}"
"""


def _opencode(home: Home) -> str:
    return home.read(".config/opencode/opencode.json")


def _add_gw(home: Home) -> None:
    home.run("profile", "add", "gw", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--key-env", "GW_API_KEY")


def test_key_set_refuses_an_opencode_template(home: Home, keyring_file) -> None:
    _add_gw(home)
    result = home.run("key", "set", "gw", check=2, stdin_text=TEMPLATED + "\n")
    assert "{file:" in result.stderr and "Traceback" not in result.stderr
    assert not keyring_file.exists() or "agentcfg/gw" not in json.loads(keyring_file.read_text())


def test_store_key_in_files_never_writes_an_exported_template(home: Home, keyring_file) -> None:
    _add_gw(home)
    home.write(".config/opencode/opencode.json", "{}\n")
    result = home.run(
        "switch", "gw", "--agent", "opencode", "--store-key-in-files", check=2, GW_API_KEY="a{env:OTHER_SECRET}"
    )
    assert "{env:" in result.stderr and "Traceback" not in result.stderr
    assert _opencode(home) == "{}\n"


def test_imported_templated_key_never_reaches_opencode(home: Home, keyring_file) -> None:
    home.write(".codex/config.toml", CODEX)
    home.write(".config/opencode/opencode.json", "{}\n")
    home.run("profile", "import", "--yes")
    stored = json.loads(keyring_file.read_text()) if keyring_file.exists() else {}
    assert TEMPLATED not in stored.values()
    home.run("switch", "local-9", "--agent", "opencode", "--store-key-in-files", check=None)
    assert "{file:" not in _opencode(home)
