"""Tab completion offers only what the command accepts (issue 15, item 7).

Each case runs click's completion the way bash does (`_AGENTCFG_COMPLETE=bash_complete`, COMP_WORDS,
COMP_CWORD) in a temporary HOME that has the built-ins (local, taotoken), profiles of the user's own
(`mine` with a key, `plain` without, `local` overriding the built-in) and a trusted project's profile
(`proj`, with a key). On main every profile completer offered every profile, and `init --profile`,
`profile set NAME <field>` and `profile unset NAME <field>` offered nothing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import AGENTCFG, Home

MINE = 'base_url = "https://mine.example/v1"\nmodel = "m"\nkey_env = "MINE_API_KEY"\n'
PLAIN = 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
LOCAL = 'base_url = "http://localhost:8000/v1"\nmodel = "other-model"\n'
PROJ = 'base_url = "https://proj.example/v1"\nmodel = "m"\nkey_env = "PROJ_API_KEY"\n'


@pytest.fixture
def project(home: Home, tmp_path: Path) -> Path:
    for name, text in (("mine", MINE), ("plain", PLAIN), ("local", LOCAL)):
        home.write(f".config/agentcfg/profiles/{name}.toml", text)
    root = home.root / "work" / "repo"  # under HOME, as a checkout is
    (root / ".agentcfg" / "profiles").mkdir(parents=True)
    (root / ".agentcfg" / "profiles" / "proj.toml").write_text(PROJ)
    home.run("trust", str(root))
    return root


def offered(home: Home, cwd: Path, line: str, **extra: str) -> list[str]:
    """What bash would be offered for `line` (the last word is the one being completed; '' after a space)."""
    words = ["agentcfg", *line.split()] + ([""] if line.endswith(" ") else [])
    shell = {"_AGENTCFG_COMPLETE": "bash_complete", "COMP_WORDS": " ".join(words), "COMP_CWORD": str(len(words) - 1)}
    result = subprocess.run(
        [AGENTCFG],
        cwd=cwd,
        env={**home.env, **extra, **shell},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    assert result.returncode == 0 and result.stderr == "", (result.returncode, result.stderr)
    # bash_complete prints "type,value" per line: "plain,NAME" for a value, "file"/"dir" for paths
    return [value for kind, _, value in (ln.partition(",") for ln in result.stdout.splitlines()) if kind == "plain"]


def test_the_project_profile_is_trusted_and_seen(home, project):
    assert offered(home, project, "switch ") == ["local", "mine", "plain", "proj", "taotoken"]
    assert offered(home, home.root, "switch ") == ["local", "mine", "plain", "taotoken"]  # outside the project


def test_init_profile_offers_every_profile(home, project):
    assert offered(home, project, "init --profile ") == ["local", "mine", "plain", "proj", "taotoken"]
    assert offered(home, project, "init --profile p") == ["plain", "proj"]


@pytest.mark.parametrize("command", ["key set", "key get", "key bind"])
def test_key_commands_offer_profiles_with_a_key_env(home, project, command):
    assert offered(home, project, f"{command} ") == ["mine", "proj", "taotoken"]


def test_profile_rm_offers_only_your_own_files(home, project):
    # local is yours too (it overrides the built-in: rm goes back to the built-in); taotoken and proj are not
    assert offered(home, project, "profile rm ") == ["local", "mine", "plain"]


@pytest.mark.parametrize("command", ["profile set", "profile unset"])
def test_profile_set_and_unset_offer_yours_and_built_ins_not_the_projects(home, project, command):
    assert offered(home, project, f"{command} ") == ["local", "mine", "plain", "taotoken"]


def test_key_rm_offers_keyed_profiles_and_remembered_keys_without_asking_the_keyring(home, project, tmp_path):
    # `gone` was removed with --keep-key: its key is still stored, and agentcfg's record names it
    record = home.root / ".config" / "agentcfg" / "state" / "stored-keys"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text("gone\nmcp:GITHUB_TOKEN\nmine\n")  # an MCP secret: `mcp secret --rm` removes it
    # A keyring package that leaves a mark when imported: completion must never get that far.
    stub = tmp_path / "stub"
    (stub / "keyring").mkdir(parents=True)
    mark = tmp_path / "keyring-imported"
    (stub / "keyring" / "__init__.py").write_text(f"open({str(mark)!r}, 'w').close()\nraise ImportError('no')\n")
    assert offered(home, project, "key rm ", PYTHONPATH=str(stub)) == ["gone", "mine", "proj", "taotoken"]
    assert not mark.exists()


def test_profile_set_offers_field_names_followed_by_equals(home, project):
    every = ["anthropic_base_url=", "base_url=", "context_window=", "description=", "key_env=",
             "max_output_tokens=", "model="]  # fmt: skip
    assert offered(home, project, "profile set mine ") == every
    assert offered(home, project, "profile set mine m") == ["max_output_tokens=", "model="]
    assert offered(home, project, "profile set mine model=x ") == [f for f in every if f != "model="]
    assert offered(home, project, "profile set mine model=") == []  # the value is the user's


def test_profile_unset_offers_only_optional_fields(home, project):
    optional = ["anthropic_base_url", "context_window", "description", "key_env", "max_output_tokens"]
    assert offered(home, project, "profile unset mine ") == optional
    assert offered(home, project, "profile unset mine key_env ") == [f for f in optional if f != "key_env"]


def test_a_broken_profile_file_completes_quietly(home, project):
    home.write(".config/agentcfg/profiles/broken.toml", "base_url = [\n")
    assert offered(home, project, "switch ") == []  # nothing rather than a traceback in the shell
    assert offered(home, project, "profile rm b") == ["broken"]  # it can still be removed
