"""Secrets agentcfg never saw are masked by their shape in every output: --dry-run diffs (text and --json),
doctor (text and --json), error messages; ordinary output is left as it was.

The agent files hold the shapes real ones do (a gateway token in ANTHROPIC_CUSTOM_HEADERS, a proxy with a
password, an MCP server's `--token` argument, opencode provider headers); the pure functions are checked
against a table of must-mask and must-not-mask strings, many taken from tests/corpus/.
"""

from __future__ import annotations

import json

import pytest

from agentcfg import redact
from agentcfg.redact import MASK
from tests.conftest import Home
from tests.fault_server import dead_port

# -- agent files holding secrets agentcfg never saw --------------------------------------------------

SECRETS = {
    "claude-header-key": "gwk_9f8e7d6c5b4a3210",
    "claude-header-bearer": "ghp_AbCdEf0123456789xyzXYZ",
    "claude-proxy-password": "s3cr3tpass",
    "codex-args-token": "ghp_Zyx9876543210abcdefABCDEF0123456789",
    "codex-args-api-key": "sk-argsecret-0123456789",
    "codex-basic": "dXNlcjpodW50ZXIyaHVudGVyMg==",
    "opencode-url-password": "opencodepw99",
    "opencode-portkey": "pk-live-aaaabbbbcccc",
    "opencode-bearer": "sk-ant-oc-0123456789abcdef",
    "opencode-multiline-password": "hunter2hunter2pw",
}

CLAUDE = """{
  "env": {
    "ANTHROPIC_CUSTOM_HEADERS": "x-api-key: gwk_9f8e7d6c5b4a3210\\nAuthorization: Bearer ghp_AbCdEf0123456789xyzXYZ",
    "HTTPS_PROXY": "http://alice:s3cr3tpass@proxy.corp:3128",
    "ANTHROPIC_MODEL": "old"
  }
}
"""
CODEX = """model = "old"

[mcp_servers.gh]
command = "gh-mcp"
args = ["--token", "ghp_Zyx9876543210abcdefABCDEF0123456789", "--api-key=sk-argsecret-0123456789"]
http_headers = { "Authorization" = "Basic dXNlcjpodW50ZXIyaHVudGVyMg==" }
"""
OPENCODE = """{
  "mcp": {"db": {"type": "local", "command": [
    "db-mcp",
    "--password",
    "hunter2hunter2pw"
  ]}},
  "model": "old",
  "provider": {
    "gw": {
      "options": {
        "baseURL": "https://bob:opencodepw99@gw.example/v1",
        "headers": {"x-portkey-api-key": "pk-live-aaaabbbbcccc", "Authorization": "Bearer sk-ant-oc-0123456789abcdef"}
      }
    }
  }
}
"""
# What must still be shown, unmasked, in the same output.
KEPT = (
    '"envKey": "OPENAI_API_KEY"',
    "OPENAI_API_KEY=agentcfg-no-key",
    '"ANTHROPIC_AUTH_TOKEN": "agentcfg-no-key"',
    "http://localhost:8000/v1",
    '"max_tokens": 32000',
    '"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "32000"',
    "model_context_window = 1048576",
    '"npm": "@ai-sdk/openai-compatible"',
    "~/.claude/settings.json",
)
# How the masked values read: the user and host of a URL stay, so do header and flag names.
MASKED_FORMS = (
    "http://alice:****@proxy.corp:3128",
    "https://bob:****@gw.example/v1",
    "x-api-key: ****",
    "Authorization: Bearer ****",
    '"--token", "****"',
    "--api-key=****",
    '"Authorization" = "Basic ****"',
    '"x-portkey-api-key": "****"',
    '"Authorization": "Bearer ****"',
)


@pytest.fixture
def agent_files(home: Home) -> Home:
    home.write(".claude/settings.json", CLAUDE)
    home.write(".codex/config.toml", CODEX)
    home.write(".config/opencode/opencode.json", OPENCODE)
    return home


def leaked(text: str) -> list[str]:
    return [name for name, secret in SECRETS.items() if secret in text]


def test_dry_run_text_masks_every_secret_shape_in_context_lines(agent_files):
    result = agent_files.run("switch", "local", "--all", "--dry-run")
    out = result.stdout + result.stderr
    assert leaked(out) == []
    for form in MASKED_FORMS:
        assert form in out, form
    assert '"--password",\n     "****"' in out  # the value on the diff's next line
    for kept in KEPT:
        assert kept in out, kept


def test_dry_run_json_masks_every_secret_shape_and_stays_json(agent_files):
    result = agent_files.run("switch", "local", "--all", "--dry-run", "--json")
    assert leaked(result.stdout + result.stderr) == []
    data = json.loads(result.stdout)
    diffs = "".join(change.get("diff", "") for change in data["changes"])
    for form in MASKED_FORMS:
        assert form in diffs, form
    assert "x-api-key: ****\\nAuthorization: Bearer ****" in diffs  # the JSON escape between headers kept
    for kept in KEPT:
        assert kept in diffs, kept


def test_the_real_switch_writes_the_secrets_back_untouched(agent_files):
    agent_files.run("switch", "local", "--all")
    files = agent_files.read(".claude/settings.json") + agent_files.read(".codex/config.toml")
    files += agent_files.read(".config/opencode/opencode.json")
    assert leaked(files) == list(SECRETS)  # masking is for output only


# -- doctor: a proxy with a password ---------------------------------------------------------------


def test_doctor_masks_a_proxy_password_in_text_and_json(home):
    home.run("switch", "local", "--all")
    port = dead_port()
    proxy = f"http://user:secretpass@127.0.0.1:{port}"
    shown = f"http://user:{MASK}@127.0.0.1:{port}"
    text = home.run("doctor", "--agent", "codex", check=1, HTTPS_PROXY=proxy, HTTP_PROXY=proxy, NO_PROXY="")
    assert "secretpass" not in text.stdout + text.stderr
    assert shown in text.stdout  # the user and the host stay: the message must say which proxy
    result = home.run("doctor", "--agent", "codex", "--json", check=1, HTTPS_PROXY=proxy, HTTP_PROXY=proxy, NO_PROXY="")
    assert "secretpass" not in result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["agents"][0]["proxy"] == shown
    assert any(shown in finding["summary"] for finding in report["findings"])


# -- errors ----------------------------------------------------------------------------------------


def test_an_error_naming_a_url_with_credentials_masks_the_password(home):
    url = f"http://user:urlsecret99@127.0.0.1:{dead_port()}/team.toml"
    result = home.run("profile", "add", "team", "--from", url, check=2)
    assert "urlsecret99" not in result.stdout + result.stderr
    assert "agentcfg: error: could not fetch http://user:****@127.0.0.1:" in result.stderr
    assert "Traceback" not in result.stderr


def test_exec_of_a_file_named_like_a_secret_says_permission_denied(home, tmp_path):
    # The walkthrough's `exec local -- /etc/passwd`, with a file of that name that is not executable.
    passwd = tmp_path / "etc" / "passwd"
    passwd.parent.mkdir()
    passwd.write_text("root:x:0:0::/root:/bin/sh\n")
    result = home.run("exec", "local", "--", str(passwd), check=126)
    assert result.stderr.startswith(f"agentcfg: error: cannot run {passwd}: permission denied\n")


def test_a_profile_url_with_credentials_is_never_shown(home):
    """However such a profile got there (a hand-written file), no listing or preview shows its password."""
    home.write(
        ".config/agentcfg/profiles/pw.toml",
        'base_url = "http://user:profilepw42@127.0.0.1:9/v1"\nmodel = "m"\nkey_env = "PW_API_KEY"\n',
    )
    for args in (("profile", "list"), ("profile", "show", "pw"), ("switch", "pw", "--all", "--dry-run")):
        for variant in (args, (*args, "--json")):
            result = home.run(*variant, check=None)
            assert "profilepw42" not in result.stdout + result.stderr, variant
            assert "Traceback" not in result.stderr


# -- the pure functions: what is masked and what is not --------------------------------------------

MUST_MASK = [
    # (text, masked)
    ('"Authorization": "Bearer ghp_AbCdEf0123456789xyz"', '"Authorization": "Bearer ****"'),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic ****"),
    ("Authorization: token ghp_AbCdEf0123456789xyz", "Authorization: token ****"),
    ("curl -H 'Authorization: Bearer sk-0123456789'", "curl -H 'Authorization: Bearer ****'"),
    ("bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "bearer ****"),
    ("HTTPS_PROXY=http://user:pass@proxy:3128", "HTTPS_PROXY=http://user:****@proxy:3128"),
    ('"baseURL": "https://u:p4ssw0rd@gw.example/v1"', '"baseURL": "https://u:****@gw.example/v1"'),
    ("https://x-access-token:ghs_abcdef0123456789@github.com/o/r", "https://x-access-token:****@github.com/o/r"),
    ("https://ghp_AbCdEf0123456789xyzXYZ@github.com/o/r", "https://****@github.com/o/r"),
    ("socks5://me:pw@127.0.0.1:1080", "socks5://me:****@127.0.0.1:1080"),
    ('args = ["--token", "ghp_Zyx9876543210abc"]', 'args = ["--token", "****"]'),
    ('"args": ["--api-key", "sk-0123456789abc"]', '"args": ["--api-key", "****"]'),
    ("args = ['--password', 'correcthorse']", "args = ['--password', '****']"),
    ('"--token=ghp_Zyx9876543210abc"', '"--token=****"'),
    ("vllm serve m --api-key sk-local-0123456789 --port 8000", "vllm serve m --api-key **** --port 8000"),
    ('+    "--auth-token",\n+    "tok_0123456789ab"', '+    "--auth-token",\n+    "****"'),
    ('"x-portkey-api-key": "pk-live-aaaabbbbcccc"', '"x-portkey-api-key": "****"'),
    ("x-api-key: gwk_9f8e7d6c5b4a3210", "x-api-key: ****"),
    ('"x-api-key: gwk_9f8e7d6c5b\\nx-team: blue"', '"x-api-key: ****\\nx-team: blue"'),
    ("OPENAI_API_KEY=sk-abcdefgh123", "OPENAI_API_KEY=****"),
    ('experimental_bearer_token = "sk-abcdefgh123"', 'experimental_bearer_token = "****"'),
    ("password: correcthorsebattery", "password: ****"),  # the name says so: even a plain word
    ("https://h/v1/models?api_key=sk-0123456789&x=1", "https://h/v1/models?api_key=****&x=1"),
    ('"accessToken": "ya29.a0AfH6SMBx"', '"accessToken": "****"'),
    ("OPENAI_APIKEY=sk-abcdefgh123", "OPENAI_APIKEY=****"),
    ('"APIKey": "Zm9vYmFyYmF6MTIz"', '"APIKey": "****"'),
    ("key: sk-0123456789abcdef", "key: ****"),  # only weakly a secret's name, but shaped like a key
    ("SecretService: sk-0123456789abcdef", "SecretService: ****"),
    ('AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"', 'AWS_SECRET_ACCESS_KEY="****"'),
    ('"secretKey": "plainwordsecret"', '"secretKey": "****"'),
]

MUST_NOT_MASK = [
    '"key_source": "plaintext in its file"',
    "key: plaintext in its file  (profile t)",
    "key: keyring (through `agentcfg key get`)",
    "key: env OPENAI_API_KEY (qwen's fallback)",
    '"key_env": "GW_API_KEY"',
    'key_env = "TAOTOKEN_API_KEY"',
    '"apiKey": "{env:GW_API_KEY}"',
    '"Authorization": "Bearer {env:GW_API_KEY}"',
    "Authorization: Bearer ${GW_TOKEN}",
    "Authorization: Bearer <token>",
    '"ANTHROPIC_AUTH_TOKEN": "agentcfg-no-key"',
    "OPENAI_API_KEY=agentcfg-no-key",
    "stored …a1b2",
    '"tail": "…a1b2"',
    '"apiKeyHelper": "~/bin/gw-key"',
    '"apiKeyHelper": "security find-generic-password -s gw -w"',
    "model_auto_compact_token_limit = 12000000",  # tests/corpus/codex/019-tkersey-features.toml, larger
    '"max_tokens": 32000',
    '"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "32000"',
    '"url": "https://mcp.brightdata.com/sse?token=YOUR_BRIGHTDATA_TOKEN&groups=advanced_scraping"',  # qwen/008
    '"baseUrl": "https://token-plan.ap-southeast-1.maas.aliyuncs.com/compatible-mode/v1"',  # qwen/009
    '# bearer_token_env_var = "GITHUB_TOKEN"        # optional; Authorization: Bearer <token>',  # codex/003
    'args = ["-y", "@modelcontextprotocol/server-github"]',  # codex/022
    'args = ["--from", "awslabs.ecs-mcp-server@latest", "ecs-mcp-server"]',  # codex/014
    '[plugins."github@openai-curated"]',  # codex/012
    'http_headers = { "x-litellm-end-user-id" = "codex" }',  # codex/005
    'preferred_auth_method = "apikey"',
    '"selectedAuthType": "oauth-personal"',
    "keyring: keyrings.alt.file.PlaintextKeyring",
    "git@github.com:owner/repo.git",
    "http://user@127.0.0.1:3128",  # a user and no password: nothing secret
    "https://gw.example/v1",
    "ssh://git@github.com/owner/repo",
    "uses Basic authentication",
    "a Bearer token is sent",
    "  --key-env VAR      Variable the agents read the key from",
    "  --no-key           The server needs no key.",
    "  --api-key KEY",
    "agentcfg key set taotoken && agentcfg switch taotoken",
    '"model": "qwen3-coder-plus"',
    "DeepSeek-V4-Flash at http://localhost:8000/v1",
    "~/.config/opencode/opencode.json",
    "FAIL  header-to-other-host  ANTHROPIC_CUSTOM_HEADERS goes to gw.example",
    "taotoken: DeepSeek-V4-Flash at https://taotoken.example/v1",  # a profile whose name ends in token
    "monkey: Banana-Split-42",
    '"MAX_OUTPUT_TOKENS": "Unlimited-32k"',
    "codex: key keyring …a1b2",
    '"key_in_environment": false',
    "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",  # an id, not the secret
    # keyring's own message, in `key list` when no backend works
    "Secret Service: Unable to initialize SecretService: Environment variable DBUS_SESSION_BUS_ADDRESS is unset",
]


@pytest.mark.parametrize(("text", "masked"), MUST_MASK)
def test_mask_text_masks(text, masked):
    assert redact.mask_text(text) == masked
    assert redact.mask_text(masked) == masked  # masking twice (diff, then the stream) changes nothing


@pytest.mark.parametrize("text", MUST_NOT_MASK)
def test_mask_text_leaves_ordinary_output_alone(text):
    assert redact.mask_text(text) == text


def test_mask_data_keeps_json_valid():
    data = {"diff": 'x "Authorization": "Bearer sk-0123456789abc"\n', "list": ["--token", "ghp_0123456789abcdef"]}
    text = json.dumps(redact.mask_data(data))
    assert "sk-0123456789abc" not in text
    assert json.loads(redact.mask_text(text))["diff"] == 'x "Authorization": "Bearer ****"\n'


# -- cost: the stream masks every write, so no input may make a pattern backtrack for long ---------

LONG_LINES = [
    "A" * 1_000_000,  # a base64 image in a statusline script, say
    "key" * 300_000,
    "x-api-key-" * 100_000,
    "http" * 250_000,
    "--token" * 150_000,
    "Bearer " * 150_000,
    "a:" * 500_000 + "@",
    "http://" + "a:" * 500_000 + "@",
    '"key": ' * 100_000,
    "Authorization: " * 70_000,
]


@pytest.mark.parametrize("text", LONG_LINES, ids=lambda text: text[:12])
def test_mask_text_is_linear_on_long_lines(text):
    import time

    start = time.perf_counter()
    redact.mask_text(text)
    # Linear takes under a second for a megabyte; the quadratic patterns this guards against took 1-3 minutes.
    # The bound leaves room for a machine shared with other test runs.
    assert time.perf_counter() - start < 10.0


# -- ordinary English and the OS's own messages are never masked ------------------------------------
# `exec local -- /etc/passwd` printed "cannot run /etc/passwd: **** denied": the file's name, the last part of
# a path, was read as a secret's name. Every errno's text, alone and where agentcfg or Python prints it after
# a path whose file is named like a secret, must come through as it is.

SECRET_NAMED_PATHS = (
    "/etc/passwd",
    "/run/secrets/api_token",
    "~/.config/gw/password",
    "./.secret_key",
    r"C:\Users\me\.api-key",
)
OS_MESSAGE_SHAPES = (
    "{message}",
    "cannot run {path}: {message}",  # exec's message
    "cannot run {path}: {lower}",
    "[Errno {number}] {message}: '{path}'",  # str(OSError)
    "{path}: {message}",  # a tool's own message about a file
)


def _os_messages() -> list[str]:
    import errno
    import os

    return [
        shape.format(message=os.strerror(number), lower=os.strerror(number).lower(), number=number, path=path)
        for number in sorted(errno.errorcode)
        for path in SECRET_NAMED_PATHS
        for shape in OS_MESSAGE_SHAPES
    ]


def test_no_os_error_message_is_masked():
    changed = [(text, redact.mask_text(text)) for text in _os_messages() if redact.mask_text(text) != text]
    assert changed == []


def test_a_secret_after_a_path_is_still_masked():
    # The path's file name is not a key's name, but what a key's name says still is, after it.
    assert redact.mask_text("/etc/app.env: OPENAI_API_KEY=sk-abcdefgh123") == "/etc/app.env: OPENAI_API_KEY=****"
    assert redact.mask_text("cat /run/secrets/x; password: correcthorsebattery") == (
        "cat /run/secrets/x; password: ****"
    )
