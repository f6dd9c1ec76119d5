"""Issue 13 items 2 and 7 through the installed console script: a profile value an agent would
expand, a URL with credentials, a trailing newline or a control character never reaches an agent's
file, a server, or the profile directory (every run in a temporary HOME, servers on loopback only)."""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.fault_server import FaultServer

PROFILES = ".config/agentcfg/profiles"
AGENT_FILES = (".codex/config.toml", ".config/opencode/opencode.json", ".qwen/settings.json", ".qwen/.env",
               ".claude/settings.json")  # fmt: skip
ISSUE_MODEL = "qwen3-{env:TAOTOKEN_API_KEY}-${TAOTOKEN_API_KEY}-{file:~/.ssh/id_ed25519}"
SECRET = "sk-gateway-secret-0123456789abcdef"


def _no_agent_file(home: Home) -> None:
    for relative in AGENT_FILES:
        assert not home.path(relative).exists(), relative


def _clean(stderr: str) -> None:
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr


def test_switch_refuses_a_user_profile_with_the_issue_template_model(home: Home):
    home.write(f"{PROFILES}/team.toml", f'base_url = "http://127.0.0.1:9/v1"\nmodel = "{ISSUE_MODEL}"\n')
    failed = home.run("switch", "team", "--all", check=2, TAOTOKEN_API_KEY=SECRET)
    _clean(failed.stderr)
    assert "team.toml" in failed.stderr and "'model'" in failed.stderr and "{env:" in failed.stderr
    assert "opencode" in failed.stderr
    _no_agent_file(home)


def test_add_from_refuses_the_template_model_and_writes_no_profile(home: Home, tmp_path: Path):
    shared = tmp_path / "team.toml"
    shared.write_text(f'base_url = "http://127.0.0.1:9/v1"\nmodel = "{ISSUE_MODEL}"\n')
    failed = home.run("profile", "add", "team", "--from", str(shared), check=2)
    _clean(failed.stderr)
    assert "'model'" in failed.stderr and "{env:" in failed.stderr
    assert not home.path(f"{PROFILES}/team.toml").exists()
    assert "unknown profile 'team'" in home.run("switch", "team", "--all", check=2).stderr
    _no_agent_file(home)


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--model", "qwen3-$TAOTOKEN_API_KEY", "qwen-code"),
        ("--model", "m\n", "U+000A"),
        ("--description", "esc\x1b[2Jcleared", "U+001B"),
        ("--description", "two\nlines", "U+000A"),
        ("--key-env", "TAOTOKEN_API_KEY\n", "U+000A"),
        ("--base-url", "http://127.0.0.1:9/v1\n", "U+000A"),
        ("--anthropic-base-url", "http://127.0.0.1:9/{file:~/.ssh/id_ed25519}", "{file:"),
    ],
)
def test_profile_add_refuses_each_bad_option_and_writes_nothing(home: Home, option: str, value: str, says: str):
    args = {"--base-url": "http://127.0.0.1:9/v1", "--model": "m", option: value}
    failed = home.run("profile", "add", "team", *[x for pair in args.items() for x in pair], check=2)
    _clean(failed.stderr)
    assert says in failed.stderr and "\x1b" not in failed.stderr
    assert not home.path(PROFILES).exists() or not list(home.path(PROFILES).iterdir())


@pytest.mark.parametrize("name", ["nn\n", "nn\r", "nn\x00"[:-1] + "\t"])
def test_profile_add_refuses_a_name_with_a_trailing_control_character(home: Home, name: str):
    failed = home.run("profile", "add", name, "--base-url", "http://127.0.0.1:9/v1", "--model", "m", check=2)
    _clean(failed.stderr)
    assert "not a valid profile name" in failed.stderr
    assert not home.path(PROFILES).exists() or not list(home.path(PROFILES).iterdir())


@pytest.mark.parametrize(
    ("field", "toml"),
    [
        ("model", 'model = "m\\n"'),
        ("description", 'model = "m"\ndescription = "gateway\\n"'),
        ("description", 'model = "m"\ndescription = "bidi \\u202e evil"'),
        ("key_env", 'model = "m"\nkey_env = "TEAM_KEY\\n"'),
        ("base_url", 'model = "m"\nbase_url = "http://127.0.0.1:9/v1\\n"'),
    ],
)
def test_a_trailing_newline_or_control_in_any_field_is_exit_2_not_an_internal_error(home: Home, field: str, toml: str):
    text = toml if "base_url" in toml else 'base_url = "http://127.0.0.1:9/v1"\n' + toml
    home.write(f"{PROFILES}/team.toml", text + "\n")
    failed = home.run("switch", "team", "--all", check=2)
    _clean(failed.stderr)
    assert f"'{field}'" in failed.stderr and "control character" in failed.stderr
    _no_agent_file(home)


def test_credentials_in_a_base_url_are_refused_and_never_sent(home: Home):
    with FaultServer() as server:
        url = f"http://alice:{SECRET}@127.0.0.1:{server.port}/v1"
        failed = home.run("profile", "add", "gw", "--base-url", url, "--model", "m", "--detect", check=2)
        _clean(failed.stderr)
        assert "credentials" in failed.stderr and "agentcfg key set gw" in failed.stderr
        assert SECRET not in failed.stderr + failed.stdout and "alice" not in failed.stderr
        assert not home.path(f"{PROFILES}/gw.toml").exists()
        # The same URL written into a profile by hand: every command stops before a request is made.
        home.write(f"{PROFILES}/gw.toml", f'base_url = "{url}"\nmodel = "m"\n')
        for args in (("doctor", "gw"), ("switch", "gw", "--all"), ("profile", "show", "gw")):
            shown = home.run(*args, check=2)
            _clean(shown.stderr)
            assert SECRET not in shown.stdout + shown.stderr and "credentials" in shown.stderr
        assert server.requests == []
    _no_agent_file(home)


def test_a_key_only_user_at_in_anthropic_base_url_is_refused(home: Home):
    failed = home.run(
        "profile", "add", "gw", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
        "--anthropic-base-url", f"http://{SECRET}@127.0.0.1:9", check=2,
    )  # fmt: skip
    assert "'anthropic_base_url'" in failed.stderr and SECRET not in failed.stderr


def test_the_built_in_profiles_still_switch(home: Home):
    home.run("switch", "local", "--all")
    home.run("switch", "taotoken", "--all", check=4)  # switched; no key stored
    assert "{env:TAOTOKEN_API_KEY}" in home.read(".config/opencode/opencode.json")  # agentcfg's own template


class _Serve:
    """A loopback server answering every GET with `body` (optionally dripping it)."""

    def __init__(self, body: bytes, drip: float = 0.0) -> None:
        serve = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.end_headers()
                try:
                    for start in range(0, len(serve.body), 1 << 16):
                        self.wfile.write(serve.body[start : start + (1 << 16)])
                        time.sleep(drip)
                except OSError:
                    pass  # the client stopped reading: what the size limit is for

            def log_message(self, *args: object) -> None:
                pass

        self.body = body
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/team.toml"

    def __enter__(self) -> _Serve:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_add_from_url_applies_the_same_checks(home: Home):
    with _Serve(f'base_url = "http://127.0.0.1:9/v1"\nmodel = "{ISSUE_MODEL}"\n'.encode()) as served:
        failed = home.run("profile", "add", "web", "--from", served.url, check=2)
    _clean(failed.stderr)
    assert "'model'" in failed.stderr and "{env:" in failed.stderr
    assert not home.path(f"{PROFILES}/web.toml").exists()


def test_add_from_url_stops_reading_past_one_mebibyte(home: Home):
    body = b'model = "m"\nbase_url = "http://127.0.0.1:9/v1"\n' + b"# padding\n" * 300_000  # ~3 MiB
    with _Serve(body) as served:
        failed = home.run("profile", "add", "web", "--from", served.url, check=2)
    _clean(failed.stderr)
    assert "more than 1 MiB" in failed.stderr
    assert not home.path(f"{PROFILES}/web.toml").exists()


def test_add_from_a_fifo_or_a_device_fails_fast(home: Home, tmp_path: Path):
    fifo = tmp_path / "team.toml"
    os.mkfifo(fifo)
    started = time.monotonic()
    failed = home.run("profile", "add", "team", "--from", str(fifo), check=2)
    assert "named pipe" in failed.stderr
    zero = home.run("profile", "add", "team", "--from", "/dev/zero", check=2)
    assert "character device" in zero.stderr
    assert time.monotonic() - started < 20
    big = tmp_path / "big.toml"
    big.write_bytes(b'model = "m"\nbase_url = "http://127.0.0.1:9/v1"\n' + b"#" * (1 << 20))
    assert "larger than 1 MiB" in home.run("profile", "add", "team", "--from", str(big), check=2).stderr


def test_profile_import_skips_an_endpoint_with_credentials_or_template_syntax(home: Home):
    home.write(
        ".codex/config.toml",
        f'model = "m"\nmodel_provider = "box"\n\n[model_providers.box]\nbase_url = "http://bob:{SECRET}@127.0.0.1:9/v1"\n',
    )
    home.write(
        ".config/opencode/opencode.json",
        json.dumps(
            {
                "model": "gw/qwen3-${TAOTOKEN_API_KEY}",
                "provider": {
                    "gw": {
                        "options": {"baseURL": "http://127.0.0.1:19/v1"},
                        "models": {"qwen3-${TAOTOKEN_API_KEY}": {}},
                    }
                },
            }
        ),
    )
    home.write(".qwen/.env", "OPENAI_BASE_URL=http://127.0.0.1:29/v1\nOPENAI_MODEL=fine-model\n")
    data = json.loads(home.run("profile", "import", "--json").stdout)
    assert [p["model"] for p in data["profiles"]] == ["fine-model"]
    notes = " ".join(data["notes"])
    assert "credentials" in notes and ".codex/config.toml" in notes and SECRET not in notes
    assert "${TAOTOKEN_API_KEY}" in notes and "opencode.json" in notes
    assert sorted(p.name for p in home.path(PROFILES).iterdir()) == ["local-29.toml"]
    text = home.run("profile", "import").stdout + home.run("profile", "import").stderr
    assert SECRET not in text
