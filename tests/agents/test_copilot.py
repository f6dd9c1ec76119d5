"""GitHub Copilot CLI's module: what a switch writes into providers.json and settings.json, how status reads it
back, what exec sets for one process, and the offline checks (each built on a run of copilot 1.0.102 against a
loopback server: docs/copilot.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcfg import edit
from agentcfg.agents import copilot
from agentcfg.agents.base import KeySource, LaunchContext
from agentcfg.agents.copilot import checks
from agentcfg.profiles import Profile

LOCAL = Profile(name="local", base_url="http://127.0.0.1:8000/v1", model="M", context_window=65536)
KEYED = Profile(name="gw", base_url="https://gw.example/v1", model="G", key_env="GW_KEY", context_window=65536)
USER = {
    "providers": [{"name": "mine", "type": "openai", "baseUrl": "http://h/v1", "apiKey": "sk-user"}],
    "models": [{"id": "x", "provider": "mine"}],
}


NO_KEY = KeySource()


def switched(profile: Profile, providers: dict | None = None, keys: KeySource = NO_KEY):
    environ = {"HOME": "/h"}
    files = copilot.files(environ)
    current = dict.fromkeys(files, None)
    if providers is not None:
        current[files[0]] = json.dumps(providers)
    edits = copilot.edits(profile, current, keys)
    after = {e.file: edit.apply("json", current[e.file] or e.file.seed, e.assignments) for e in edits}
    return after, edits


def test_files_follow_copilot_home_and_the_providers_variable():
    assert [f.path for f in copilot.files({"HOME": "/h"})] == [
        Path("/h/.copilot/providers.json"),
        Path("/h/.copilot/settings.json"),
    ]
    named = copilot.files({"HOME": "/h", "COPILOT_HOME": "/c", "COPILOT_PROVIDERS_CONFIG": "/p.json"})
    assert [f.path for f in named] == [Path("/p.json"), Path("/c/settings.json")]


def test_switch_adds_its_provider_and_selects_it_keeping_the_users():
    after, _ = switched(LOCAL, USER)
    providers_file, settings_file = after
    data = json.loads(after[providers_file])
    assert data["providers"][0] == USER["providers"][0] and data["models"][0] == USER["models"][0]
    assert data["providers"][1] == {
        "name": "agentcfg-local",
        "type": "openai",
        "baseUrl": "http://127.0.0.1:8000/v1",
        "wireApi": "completions",
    }
    output = data["models"][1]["maxOutputTokens"]
    assert data["models"][1] == {
        "id": "M",
        "provider": "agentcfg-local",
        "maxOutputTokens": output,
        "maxPromptTokens": 65536 - output,
    }
    assert json.loads(after[settings_file]) == {"model": "agentcfg-local/M"}
    binding = copilot.read(after)
    assert (binding.base_url, binding.model, binding.profile, binding.context_window) == (
        "http://127.0.0.1:8000/v1",
        "M",
        "local",
        65536,
    )
    assert binding.key is None and binding.output_tokens == output


def test_a_second_switch_rewrites_its_own_entries_only():
    first, _ = switched(LOCAL, USER)
    providers_file = next(iter(first))
    again, _ = switched(LOCAL, json.loads(first[providers_file]))
    assert json.loads(again[providers_file]) == json.loads(first[providers_file])


def test_a_keyed_profile_keeps_its_key_out_unless_asked_and_says_how_to_start_copilot():
    after, edits = switched(KEYED)
    providers_file = next(iter(after))
    assert "apiKey" not in json.loads(after[providers_file])["providers"][0]
    assert any("agentcfg exec gw -- copilot" in note for note in edits[0].notes)
    stored, edits = switched(KEYED, keys=KeySource(literal="sk-real"))
    assert json.loads(stored[providers_file])["providers"][0]["apiKey"] == "sk-real" and not edits[0].notes
    assert copilot.read(stored).key == "in file"


def context(profile_key: str | None = None, helper: tuple[str, ...] = ()) -> LaunchContext:
    return LaunchContext({}, {}, None, Path("/run"), helper=helper, key=profile_key, run="7")


def test_exec_sets_copilots_byok_variables_and_fetches_the_key_by_command():
    launch = copilot.launch(KEYED, ("-p", "hi"), context(helper=("agentcfg", "key", "get", "gw")))
    assert launch.args == ("-p", "hi") and not launch.key_in_env
    variables = launch.env
    assert variables["COPILOT_PROVIDER_BASE_URL"] == "https://gw.example/v1" and variables["COPILOT_MODEL"] == "G"
    assert variables["COPILOT_PROVIDER_API_KEY_COMMAND"] == "agentcfg key get gw"
    assert variables["COPILOT_OFFLINE"] == "true" and variables["COPILOT_AUTO_UPDATE"] == "false"
    # a token in the shell would win over the command (run against 1.0.102): exec clears it
    assert variables["COPILOT_PROVIDER_BEARER_TOKEN"] == "" and variables["COPILOT_PROVIDER_API_KEY"] == ""
    prompt, output = (
        int(variables["COPILOT_PROVIDER_MAX_PROMPT_TOKENS"]),
        int(variables["COPILOT_PROVIDER_MAX_OUTPUT_TOKENS"]),
    )
    assert prompt + output == 65536


def test_exec_without_a_helper_reads_a_key_file_of_its_run():
    launch = copilot.launch(KEYED, (), context(profile_key="sk-real"))
    ((name, text),) = launch.key_files.items()
    assert text == "sk-real" and "sk-real" not in json.dumps(launch.env)
    assert launch.env["COPILOT_PROVIDER_API_KEY_COMMAND"] == f"cat /run/{name}" and not launch.key_in_env


def test_exec_of_a_keyless_profile_sends_no_key():
    launch = copilot.launch(LOCAL, (), context())
    assert launch.env["COPILOT_PROVIDER_API_KEY_COMMAND"] == "" and not launch.key_files


def parsed(providers: object, model: str = "agentcfg-local/M") -> list:
    files = copilot.files({"HOME": "/h"})
    return [(files[0], providers), (files[1], {"model": model})]


GOOD = {
    "providers": [{"name": "agentcfg-local", "type": "openai", "baseUrl": "http://127.0.0.1:9/v1"}],
    "models": [{"id": "M", "provider": "agentcfg-local", "maxOutputTokens": 4096}],
}


@pytest.mark.parametrize(
    ("providers", "says"),
    [
        ({"providers": {"x": 1}}, "`providers` is not an array"),
        ({"providers": [{"baseUrl": "http://h/v1"}], "models": []}, "missing field `name`"),
        ({"providers": [{"name": "p"}], "models": []}, "missing field `baseUrl`"),
        ({**GOOD, "models": [{"id": "M"}]}, "missing field `provider`"),
        ({**GOOD, "models": [{"id": "M", "provider": "agentcfg-local", "maxOutputTokens": "2048"}]}, "expected u32"),
        ({**GOOD, "models": [{"id": "M", "provider": "nope"}]}, 'references unknown provider "nope"'),
        ({**GOOD, "models": [{"id": "other", "provider": "agentcfg-local"}]}, "is not registered"),
    ],
)
def test_checks_say_what_copilot_refuses(providers: dict, says: str):
    profiles = {"local": LOCAL}
    (finding,) = checks.check(parsed(providers), {"HOME": "/h"}, profiles)
    assert finding.id == "copilot-config-rejected" and says in finding.summary, finding.summary
    assert finding.fix == "agentcfg switch local --agent copilot"


def test_checks_are_quiet_on_what_copilot_loads():
    assert checks.check(parsed(GOOD), {"HOME": "/h"}, {}) == []
    assert checks.check(parsed({**GOOD, "extra": 1}, model="claude-sonnet-4.6"), {"HOME": "/h"}, {}) == []


def test_the_journal_keeps_a_list_it_set_only_as_a_digest():
    """providers.json's `providers` is set as one list, the user's entries (and their plaintext keys) in it."""
    from agentcfg.plan import drifted, owned_to_json

    providers = [{"name": "mine", "apiKey": "sk-user-0123456789"}, {"name": "agentcfg-local"}]
    (item,) = owned_to_json(((("providers",), providers),))
    assert "sk-user" not in json.dumps(item) and item["json"] is True
    text = json.dumps({"providers": providers})
    assert drifted("json", text, [item], "p.json") == []
    assert drifted("json", json.dumps({"providers": providers[1:]}), [item], "p.json") == ["providers"]
    without = [{"name": "mine", "baseUrl": "http://h/v1"}]  # no key in it: kept as it is, as any other value
    assert owned_to_json(((("providers",), without),)) == [{"key": ["providers"], "value": without}]


def test_import_moves_the_selected_providers_key_and_plain_copilot_is_told_how_to_start(home, keyring_file):
    """The key of the provider settings.json selects goes into the keyring; providers.json cannot name a variable,
    so the user's entry keeps its copy (a later rollback needs no other) and the move says how copilot starts."""
    key = "sk-import-0123456789abcdef"
    providers = {
        "providers": [{"name": "mine", "type": "openai", "baseUrl": "https://gw.example/v1", "apiKey": key}],
        "models": [{"id": "gm", "provider": "mine", "maxOutputTokens": 4096}],
    }
    home.write(".copilot/providers.json", json.dumps(providers, indent=2) + "\n")
    home.write(".copilot/settings.json", '{"model": "mine/gm"}\n')
    report = home.json("profile", "import", "--yes")
    (row,) = report["profiles"]
    assert row["base_url"] == "https://gw.example/v1" and row["model"] == "gm" and row["found_in"] == ["copilot"]
    assert key not in json.dumps(report)
    notes = " ".join(report["notes"])
    assert "`agentcfg exec gw -- copilot` (it fetches the key itself)" in notes
    assert "reads the key from GW_API_KEY" not in notes  # it does not: no file of it can name a variable
    assert json.loads(keyring_file.read_text())  # the key is in the keyring now
    data = json.loads(home.read(".copilot/providers.json"))
    ours = [p for p in data["providers"] if p["name"].startswith("agentcfg-")]
    assert ours and "apiKey" not in ours[0]
    assert json.loads(home.read(".copilot/settings.json"))["model"] == f"{ours[0]['name']}/gm"
