"""Cline CLI: ~/.cline/data/settings/providers.json (endpoint, model, window; the key only if asked) and
global-settings.json (telemetry and update checks off). What each test holds was seen with cline 3.0.65 on
loopback (docs/cline.md, Sources)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from agentcfg import edit
from agentcfg.agents import cline
from agentcfg.agents.base import KeySource, LaunchContext
from agentcfg.profiles import PLACEHOLDER_KEY, Profile
from tests.agents.samples import ENVIRON, GATEWAY_ANTHROPIC, NO_KEYS
from tests.agents.samples import switch as run_switch
from tests.test_crash import run  # noqa: F401 (fixture)

LOCAL = Profile(name="local", base_url="http://127.0.0.1:8000/v1", model="qwen3-coder", context_window=65536)
GW = GATEWAY_ANTHROPIC
LITERAL = KeySource(literal="sk-literal-0123456789abcdef")
ENTRY = ("providers", "openai-compatible")
USERS = {
    "version": 1,
    "lastUsedProvider": "anthropic",
    "modes": {},
    "providers": {
        "anthropic": {"settings": {"provider": "anthropic", "apiKey": "sk-ant-x"}, "updatedAt": "2026-01-02T03:04:05Z"},
        "openai-compatible": {
            "settings": {"provider": "openai-compatible", "apiKey": "sk-users-own-key-123456", "model": "old",
                         "baseUrl": "https://old.example/v1", "headers": {"X-Team": "a"}},
            "updatedAt": "2026-01-02T03:04:05.000Z",
            "tokenSource": "manual",
        },
    },
}  # fmt: skip


def texts(providers: object = None, settings: object = None) -> dict:
    files = cline.files(ENVIRON)
    return {
        files[0]: None if providers is None else json.dumps(providers, indent=2) + "\n",
        files[1]: None if settings is None else json.dumps(settings, indent=2) + "\n",
    }


def switched(profile: Profile, current: dict, keys: KeySource = NO_KEYS) -> tuple[dict, dict, tuple]:
    out, notes = run_switch(cline, profile, current, keys)
    providers, settings = cline.files(ENVIRON)
    return json.loads(out[providers]), json.loads(out[settings]), notes


def entry(data: dict) -> dict:
    return data["providers"]["openai-compatible"]


def test_files_are_where_cline_reads_them_and_move_with_its_variables():
    home = Path("/home/u/.cline/data/settings")
    assert [f.path for f in cline.files(ENVIRON)] == [home / "providers.json", home / "global-settings.json"]
    moved = cline.files({**ENVIRON, "CLINE_DIR": "/c"})
    assert [str(f.path) for f in moved] == ["/c/data/settings/providers.json", "/c/data/settings/global-settings.json"]
    data = cline.files({**ENVIRON, "CLINE_DIR": "/c", "CLINE_DATA_DIR": "/d"})
    assert str(data[0].path) == "/d/settings/providers.json"
    named = {**ENVIRON, "CLINE_PROVIDER_SETTINGS_PATH": "/p.json", "CLINE_GLOBAL_SETTINGS_PATH": "/g.json"}
    assert [str(f.path) for f in cline.files(named)] == ["/p.json", "/g.json"]


def test_keyless_profile_gets_a_placeholder_the_window_a_timestamp_and_telemetry_off():
    providers, settings, notes = switched(LOCAL, texts())
    assert providers["version"] == 1 and providers["lastUsedProvider"] == "openai-compatible"
    ours = entry(providers)
    assert ours["settings"] == {
        "provider": "openai-compatible",
        "apiKey": PLACEHOLDER_KEY,  # else cline sends OPENAI_API_KEY from the shell
        "model": "qwen3-coder",
        "baseUrl": "http://127.0.0.1:8000/v1",
        "contextWindow": 65536,
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", ours["updatedAt"])  # without it: ignored
    assert ours["tokenSource"] == "manual"
    assert settings == {"telemetryOptOut": True, "autoUpdateEnabled": False}
    assert notes == ()


def test_a_second_switch_keeps_the_timestamp():
    first, settings, _ = switched(LOCAL, texts())
    again, _, _ = switched(LOCAL, texts(first, settings))
    assert again == first


def test_keyed_profile_writes_a_placeholder_and_says_how_to_start_cline():
    providers, _, notes = switched(GW, texts())
    assert entry(providers)["settings"]["apiKey"] == PLACEHOLDER_KEY
    assert any("agentcfg exec gw -- cline" in n and "--store-key-in-files" in n for n in notes), notes


def test_keyed_profile_with_store_key_in_files_writes_the_key():
    providers, _, _ = switched(GW, texts(), LITERAL)
    assert entry(providers)["settings"]["apiKey"] == "sk-literal-0123456789abcdef"


def test_the_users_other_providers_and_headers_stay_and_a_replaced_key_is_said():
    providers, _, notes = switched(LOCAL, texts(USERS))
    assert providers["providers"]["anthropic"] == USERS["providers"]["anthropic"]
    ours = entry(providers)
    assert ours["settings"]["headers"] == {"X-Team": "a"} and ours["updatedAt"] == "2026-01-02T03:04:05.000Z"
    assert any("apiKey" in n and "rollback" in n for n in notes), notes
    assert "sk-users-own-key" not in " ".join(notes)


def test_an_invalid_timestamp_is_replaced():
    users = json.loads(json.dumps(USERS))
    users["providers"]["openai-compatible"]["updatedAt"] = "yesterday"
    providers, _, _ = switched(LOCAL, texts(users))
    assert entry(providers)["updatedAt"] != "yesterday"


def test_read_gives_the_provider_cline_uses():
    binding = cline.read(texts(USERS))
    assert binding.base_url is None and binding.model is None  # lastUsedProvider "anthropic": no base URL set
    users = {**USERS, "lastUsedProvider": "openai-compatible"}
    binding = cline.read(texts(users))
    assert (binding.base_url, binding.model, binding.key) == ("https://old.example/v1", "old", "in file")
    assert binding.key_value == "sk-users-own-key-123456" and [h.name for h in binding.headers] == ["X-Team"]
    providers, settings, _ = switched(LOCAL, texts())
    binding = cline.read(texts(providers, settings))
    assert (binding.key, binding.context_window, binding.output_tokens) == ("placeholder", 65536, None)
    del providers["providers"]["openai-compatible"]["settings"]["apiKey"]
    binding = cline.read(texts(providers))
    assert binding.key_env == "OPENAI_API_KEY"  # cline's fallback when the file has no key


def context(current: dict, key: str | None = None) -> LaunchContext:
    return LaunchContext(current, dict(ENVIRON), None, Path("/run/agentcfg"), (), key, "7")


def test_exec_points_cline_at_a_provider_file_of_this_run_with_the_key():
    current = texts(USERS, {"telemetryOptOut": False, "tuiTheme": "dark"})
    launch = cline.launch(GW, ("-y",), context(current, key="sk-the-key-0123456789"))
    assert launch.args == ("-y",) and not launch.key_in_env
    ((name, text),) = launch.key_files.items()
    assert launch.env["CLINE_PROVIDER_SETTINGS_PATH"] == f"/run/agentcfg/{name}"
    data = json.loads(text)
    assert data["lastUsedProvider"] == "openai-compatible"
    assert entry(data)["settings"] == {
        "provider": "openai-compatible",
        "apiKey": "sk-the-key-0123456789",
        "model": "glm-4.6",
        "baseUrl": "https://gw.example/v1",
        "contextWindow": 200000,
    }
    assert entry(data)["updatedAt"]
    # the user's global settings, with telemetry and update checks off, in a runtime file (no key in it)
    ((gname, gtext),) = launch.files.items()
    assert launch.env["CLINE_GLOBAL_SETTINGS_PATH"] == f"/run/agentcfg/{gname}"
    assert json.loads(gtext) == {"telemetryOptOut": True, "tuiTheme": "dark", "autoUpdateEnabled": False}
    assert launch.env["CLINE_NO_AUTO_UPDATE"] == "1"
    assert launch.env["CLINE_SESSION_BACKEND_MODE"] == "local"  # not a hub daemon started with other settings
    assert "sk-the-key" not in json.dumps(launch.env) + gtext


def test_exec_of_a_keyless_profile_gives_the_placeholder():
    launch = cline.launch(LOCAL, (), context(texts()))
    ((_, text),) = launch.key_files.items()
    assert entry(json.loads(text))["settings"]["apiKey"] == PLACEHOLDER_KEY


# -- doctor's offline checks: what cline ignores ----------------------------------------------------------------


def findings(data: object) -> list:
    from agentcfg.agents.cline import checks

    providers, settings = cline.files(ENVIRON)
    return checks.check([(providers, data), (settings, {})], ENVIRON, {"local": LOCAL})


def ours(**changes: object) -> dict:
    providers, _, _ = switched(LOCAL, texts())
    providers["providers"]["openai-compatible"].update(changes)
    return providers


def test_a_switched_file_has_no_finding():
    assert findings(ours()) == []


def test_an_entry_without_updated_at_makes_cline_ignore_the_file():
    data = ours()
    del data["providers"]["openai-compatible"]["updatedAt"]
    (found,) = findings(data)
    assert (found.id, found.status) == ("cline-config-ignored", "fail")
    assert "has no updatedAt" in found.summary and "agentcfg switch local --agent cline" in found.fix
    (found,) = findings(ours(updatedAt="2026-01-02T03:04:05+01:00"))  # an offset: refused by zod's datetime()
    assert found.id == "cline-config-ignored"
    (found,) = findings({**ours(), "version": 2})
    assert found.id == "cline-config-ignored" and "version" in found.summary


def test_last_used_provider_naming_no_entry():
    (found,) = findings({**ours(), "lastUsedProvider": "gone"})
    assert (found.id, found.status) == ("cline-provider-missing", "fail") and '"gone"' in found.summary


def test_a_base_url_without_a_path_and_a_plaintext_key_are_warned_of():
    data = ours()
    data["providers"]["openai-compatible"]["settings"].update(baseUrl="http://127.0.0.1:8000", apiKey="sk-x-123")
    found = {f.id: f for f in findings(data)}
    assert set(found) == {"cline-base-url", "cline-key-in-file"}
    assert found["cline-base-url"].status == "warn" and "sk-x-123" not in repr(found)


# -- cline stamps a new updatedAt into providers.json on every run: not an edit of the user's -----------------


def test_the_timestamp_cline_writes_on_every_run_is_neither_drift_nor_kept_by_rollback():
    from agentcfg import plan, undo

    providers_file = cline.files(ENVIRON)[0]
    edit_ = cline.edits(LOCAL, texts(), NO_KEYS)[0]
    written = edit.apply("json", providers_file.seed, edit_.assignments, path="f")
    ran = json.loads(written)
    entry(ran)["updatedAt"] = "2027-01-01T00:00:00.000Z"  # as cline rewrites it when it runs
    ran["modes"] = {}
    ran_text = json.dumps(ran, indent=2) + "\n"
    owned = plan.owned_to_json(tuple(edit_.assignments))
    assert plan.drifted("json", ran_text, owned, "f") == ["providers.openai-compatible.updatedAt"]
    assert plan.drifted("json", ran_text, owned, "f", cline.TRAITS.stamps) == []
    keys = [tuple(a[0]) for a in edit_.assignments]
    reverted = undo.revert("json", None, written, ran_text, keys, stamps=cline.TRAITS.stamps, shown="f")
    assert reverted.how == undo.REMOVED


# -- import: the plaintext key goes to the keyring, a placeholder into providers.json, and exec starts cline -------


def test_import_moves_the_key_to_the_keyring_and_says_how_to_start_cline(home, environ, run) -> None:  # noqa: F811
    import keyring

    users = {**USERS, "lastUsedProvider": "openai-compatible"}
    path = cline.files(environ)[0].path
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(users, indent=2) + "\n")
    before = path.read_bytes()
    code, out, err = run("profile", "import", "--yes", "--json")
    assert code == 0, (code, out, err)
    (row,) = [r for r in json.loads(out)["profiles"] if "cline" in r["found_in"]]
    assert row["base_url"] == "https://old.example/v1" and row["model"] == "old"
    assert keyring.get_password("agentcfg", row["name"]) == "sk-users-own-key-123456"
    # the file keeps the endpoint, with a placeholder; the move's note says what starts cline with the key
    data = json.loads(path.read_text())
    settings = entry(data)["settings"]
    assert settings["apiKey"] == PLACEHOLDER_KEY and settings["baseUrl"] == row["base_url"]
    assert data["providers"]["anthropic"] == USERS["providers"]["anthropic"] and path.read_bytes() != before
    assert f"agentcfg exec {row['name']} -- cline" in out + err, (out, err)
    assert "sk-users-own-key" not in out + err
