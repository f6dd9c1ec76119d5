"""Issue 13, items 3 and 4: doctor sends a key only where it belongs, and credential headers left in an
agent's file do not follow a switch silently.

Every request goes to capture servers on 127.0.0.1 (tests/fault_server.py records each request with
its headers); a remote host (taotoken.net) is only ever checked with --offline. Each test asserts
that the secret never reaches a server it does not belong to and never appears in the output.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentcfg import doctor, keystore
from agentcfg.agents import AGENTS
from agentcfg.agents.base import Header, is_credential, looks_like_key
from agentcfg.doctor.model import FAIL, Target
from agentcfg.profiles import Profile
from tests.conftest import AGENTCFG, REPO, Home, keyring_env
from tests.doctor.test_doctor import add_profile, found, one, problems, serve, store_key
from tests.fault_server import MODEL, FaultServer

SECRET = "sk-user-secret-4f9a1c7e2b8d6053"  # the user's key: it must never reach the capture server
CORPUS_GLADO8 = REPO / "tests" / "corpus" / "claude" / "012-glado8-env-hooks.json"
PORTKEY_VALUE = "corpus-fake-0004"  # x-portkey-api-key's value in that file (also its ANTHROPIC_AUTH_TOKEN)


def run_doctor(home: Home, *args: str, cwd: Path | None = None, **extra_env: str) -> tuple[dict[str, Any], str]:
    """`agentcfg doctor --json ARGS` in `cwd`; the report and everything printed."""
    result = subprocess.run(
        [AGENTCFG, "doctor", "--json", *args],
        env={**home.env, **extra_env},
        cwd=cwd or home.root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert result.returncode in (0, 1), (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout), result.stdout + result.stderr


def sent(server: FaultServer) -> str:
    """Every header and body the server received, as one string to search for a secret."""
    return json.dumps([(path, headers, body) for _, path, headers, body in server.requests])


def project_with(tmp_path: Path, name: str, variables: dict[str, str]) -> Path:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True, exist_ok=True)
    (project / ".claude" / name).write_text(json.dumps({"env": variables}))
    return project


# == a project's .claude settings choose the endpoint: your key does not go there ==========================


@pytest.mark.parametrize("settings", ["settings.json", "settings.local.json"])
@pytest.mark.parametrize("source", ["user-settings", "shell", "keyring-helper"])
def test_project_claude_endpoint_gets_no_key_of_yours(home, tmp_path, source, settings):
    extra: dict[str, str] = {}
    with serve(FaultServer()) as own, serve(FaultServer(key="sk-the-capture-server-wants-one")) as capture:
        if source == "keyring-helper":  # switched to a keyed profile: apiKeyHelper runs `agentcfg key get t`
            extra = keyring_env(tmp_path / "keyring.json")
            add_profile(home, own.base_url, own.root, key_env="T_KEY")
            home.run("switch", "t", "--agent", "claude", check=4, **extra)  # the key is stored next
            store_key(home, "t", SECRET, **extra)
        else:
            user = {"ANTHROPIC_BASE_URL": own.root, "ANTHROPIC_MODEL": MODEL}
            if source == "user-settings":
                user["ANTHROPIC_AUTH_TOKEN"] = SECRET
            else:
                extra["ANTHROPIC_AUTH_TOKEN"] = SECRET
            home.write(".claude/settings.json", json.dumps({"env": user}))
        project = project_with(tmp_path, settings, {"ANTHROPIC_BASE_URL": capture.root})
        report, output = run_doctor(home, "--agent", "claude", cwd=project, **extra)
    assert capture.requests, "doctor should still probe the endpoint, without the key"
    assert SECRET not in sent(capture)
    assert SECRET not in output
    finding = one(report, "claude", "key-wrong-host", "fail")
    assert f"127.0.0.1:{capture.port}" in finding["evidence"] and settings in finding["evidence"]
    assert "withheld" in finding["summary"]
    # the 401 a keyless probe may get is not a "wrong key" or a "missing key"
    assert not found(report, "claude", "key-rejected") and not found(report, "claude", "key-missing", "fail")


def test_project_claude_endpoint_with_the_projects_own_token_is_probed_with_it(home, tmp_path):
    """A token the project's file sets itself is the project's, not yours: it may go to its endpoint."""
    home.write(".claude/settings.json", json.dumps({"env": {"ANTHROPIC_AUTH_TOKEN": SECRET}}))
    token = "sk-project-team-token-0042"
    with serve(FaultServer(key=token)) as capture:
        project = project_with(tmp_path, "settings.json", {"ANTHROPIC_BASE_URL": capture.root})
        (project / ".claude" / "settings.local.json").write_text(json.dumps({"env": {"ANTHROPIC_AUTH_TOKEN": token}}))
        report, _ = run_doctor(home, "--agent", "claude", cwd=project)
    assert f"Bearer {token}" in sent(capture) and SECRET not in sent(capture)
    assert not found(report, "claude", "key-wrong-host"), problems(report)


def test_claude_endpoint_from_your_own_settings_gets_your_token(home):
    with serve(FaultServer(key=SECRET)) as own:
        home.write(
            ".claude/settings.json", json.dumps({"env": {"ANTHROPIC_BASE_URL": own.root, "ANTHROPIC_MODEL": MODEL}})
        )
        report, _ = run_doctor(home, "--agent", "claude", ANTHROPIC_AUTH_TOKEN=SECRET)
    assert f"Bearer {SECRET}" in sent(own)
    assert not found(report, "claude", "key-wrong-host"), problems(report)


def test_project_settings_that_are_a_fifo_do_not_hang_doctor(home, tmp_path):
    import os

    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    os.mkfifo(project / ".claude" / "settings.json")
    report, _ = run_doctor(home, "--agent", "claude", "--offline", cwd=project)
    assert report["offline"] is True


# == a variable that holds one profile's key never goes to another profile's host =========================


def _codex(base_url: str, variable: str) -> str:
    return (
        f'model = "{MODEL}"\nmodel_provider = "mine"\n\n[model_providers.mine]\nname = "mine"\n'
        f'base_url = "{base_url}"\nwire_api = "responses"\nenv_key = "{variable}"\n'
    )


def _opencode(base_url: str, variable: str) -> str:
    provider = {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": base_url, "apiKey": f"{{env:{variable}}}"}}
    return json.dumps({"model": f"mine/{MODEL}", "provider": {"mine": provider}})


def _qwen(base_url: str, variable: str) -> str:
    entry = {"id": MODEL, "name": "mine", "baseUrl": base_url, "envKey": variable}
    return json.dumps(
        {
            "security": {"auth": {"selectedType": "openai"}},
            "model": {"name": MODEL},
            "modelProviders": {"openai": [entry]},
        }
    )


@pytest.mark.parametrize("agent", ["codex", "qwen", "opencode"])
def test_a_variable_owned_by_profile_a_never_goes_to_profile_bs_host(home, agent):
    with serve(FaultServer(key=SECRET)) as host_a, serve(FaultServer(key="sk-b-key")) as host_b:
        add_profile(home, host_a.base_url, name="a", key_env="A_KEY")
        add_profile(home, host_b.base_url, name="b")
        files = {
            "codex": (".codex/config.toml", _codex(host_b.base_url, "A_KEY")),
            "qwen": (".qwen/settings.json", _qwen(host_b.base_url, "A_KEY")),
            "opencode": (".config/opencode/opencode.json", _opencode(host_b.base_url, "A_KEY")),
        }
        home.write(*files[agent])
        report, output = run_doctor(home, "--agent", agent, A_KEY=SECRET)
    assert SECRET not in sent(host_b) and SECRET not in output
    finding = one(report, agent, "key-wrong-host", "fail")
    assert "profile a's" in finding["summary"] and f"127.0.0.1:{host_b.port}" in finding["evidence"]
    assert "agentcfg switch a" in finding["fix"]
    assert not found(report, agent, "key-rejected")


def test_a_variable_owned_by_the_profile_still_goes_to_its_host(home):
    with serve(FaultServer(key=SECRET)) as host_a:
        add_profile(home, host_a.base_url, name="a", key_env="A_KEY")
        home.write(".codex/config.toml", _codex(host_a.base_url, "A_KEY"))
        report, _ = run_doctor(home, "--agent", "codex", A_KEY=SECRET)
    assert f"Bearer {SECRET}" in sent(host_a)
    assert not found(report, "codex", "key-wrong-host"), problems(report)


def test_a_variable_no_profile_names_goes_to_the_endpoint_of_your_own_file(home):
    with serve(FaultServer(key=SECRET)) as server:
        home.write(".codex/config.toml", _codex(server.base_url, "MY_OWN_KEY"))
        report, _ = run_doctor(home, "--agent", "codex", MY_OWN_KEY=SECRET)
    assert f"Bearer {SECRET}" in sent(server)
    assert not found(report, "codex", "key-wrong-host"), problems(report)


# == the keyring's key was stored for other hosts (keystore's "wrong-origin") ================================

LOCAL = Profile("t", "http://127.0.0.1:9/v1", MODEL, anthropic_base_url="http://127.0.0.1:9", key_env="T_KEY")


@pytest.fixture
def wrong_origin(monkeypatch: pytest.MonkeyPatch) -> None:
    def resolve(profile: Profile, environ: Any, store: Any = None) -> None:
        raise keystore.KeyringProblem(
            "wrong-origin",
            f"the key stored for {profile.name!r} was stored for https://old.example, not {profile.base_url}",
            hint=f"If it is right for the new host: agentcfg key set {profile.name}",
        )

    monkeypatch.setattr(keystore, "resolve", resolve)


# The agents a plain profile configures (one that runs on a route only, Gemini CLI, is left alone by its switch)
TAKING = [agent for agent in AGENTS.values() if agent.unsupported(LOCAL) is None]


def _wrong_host(targets: list[Target]) -> None:
    for target in targets:
        ids = {(f.id, f.status) for f in target.static}
        assert ("key-wrong-host", FAIL) in ids, (target.agent, ids)
        assert not any(f.id == "key-missing" for f in target.static), (target.agent, ids)
        finding = next(f for f in target.static if f.id == "key-wrong-host")
        assert "old.example" in finding.summary and "agentcfg key set t" in finding.fix
        assert target.key is None


def test_key_bound_to_other_hosts_is_key_wrong_host_for_doctor_profile(wrong_origin, tmp_path):
    environ = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    _wrong_host(doctor.targets_from_profile(LOCAL, TAKING, environ))


def test_key_bound_to_other_hosts_is_key_wrong_host_for_the_agents_files(wrong_origin, home, tmp_path):
    add_profile(home, LOCAL.base_url, LOCAL.anthropic_base_url, key_env="T_KEY")
    home.run("switch", "t", "--all", check=4)  # Claude's apiKeyHelper; the others read T_KEY (unset: the keyring)
    _wrong_host(doctor.targets_from_files(TAKING, home.env, {"t": LOCAL}, tmp_path))


# == credential headers ====================================================================================


@pytest.mark.parametrize(
    ("name", "value", "credential"),
    [
        ("x-portkey-api-key", "corpus-fake-0004", True),
        ("x-portkey-provider", "@azure-anthropic-east-us2", False),
        ("X-Moz-1st-Party-Data-Opt-Out", "1", False),
        ("x-litellm-end-user-id", "codex", False),
        ("X-Custom", "Bearer abc", True),
        ("X-Custom", "Basic dXNlcjpwYXNz", True),
        ("X-Custom", "ghp_0123456789abcdefABCDEF0123456789abcd", True),
        ("X-Custom", "q8Xv2LmT9zR4wK7pN1sB6yH3", True),
        ("Cookie", "a=b", True),
        ("cf-aig-custom-cost", '{"per_token_in":0.00000055}', False),
    ],
)
def test_which_headers_are_credentials(name, value, credential):
    assert is_credential(Header(name, "w", value=value)) is credential
    assert looks_like_key("azure-anthropic-east-us2") is False


def test_codex_env_header_is_a_credential_by_its_variable():
    assert is_credential(Header("X-Org", "w", variable="PORTKEY_API_KEY"))
    assert not is_credential(Header("X-Org", "w", variable="OPENAI_ORGANIZATION"), {"OPENAI_ORGANIZATION": "org-x"})


def _taotoken_for_claude(home: Home) -> None:
    """A user copy of taotoken with an Anthropic URL, so Claude Code can be switched to it."""
    home.run(
        "profile", "add", "taotoken", "--base-url", "https://taotoken.net/api",
        "--anthropic-base-url", "https://taotoken.net/api/anthropic", "--model", "deepseek-chat",
        "--key-env", "TAOTOKEN_API_KEY", "--force",
    )  # fmt: skip


def test_claude_custom_headers_of_another_gateway_warn_at_switch_and_in_doctor(home, tmp_path):
    home.write(".claude/settings.json", CORPUS_GLADO8.read_text(encoding="utf-8"))
    _taotoken_for_claude(home)
    result = home.run("switch", "taotoken", "--agent", "claude", check=4, **keyring_env(tmp_path / "k.json"))
    output = result.stdout + result.stderr
    warning = next(line for line in output.splitlines() if "x-portkey-api-key" in line)
    assert "taotoken.net" in warning and "ANTHROPIC_CUSTOM_HEADERS" in warning and "remove it" in warning
    assert "x-portkey-provider" not in output  # not a credential
    assert PORTKEY_VALUE not in output
    report, output = run_doctor(home, "--agent", "claude", "--offline", **keyring_env(tmp_path / "k.json"))
    finding = one(report, "claude", "header-to-other-host", "warn")
    assert "x-portkey-api-key" in finding["summary"] and "taotoken.net" in finding["summary"]
    assert "ANTHROPIC_CUSTOM_HEADERS" in finding["hint"] and not finding["fix"]
    assert not found(report, "claude", "header-to-other-host", "warn")[1:]  # x-portkey-provider is not one
    assert PORTKEY_VALUE not in output


def test_switching_to_the_same_gateway_does_not_warn(home, tmp_path):
    home.write(".claude/settings.json", CORPUS_GLADO8.read_text(encoding="utf-8"))
    home.run(
        "profile", "add", "portkey", "--base-url", "https://api.portkey.ai/v1",
        "--anthropic-base-url", "https://api.portkey.ai", "--model", "claude-sonnet-4-6", "--key-env", "PK_KEY",
    )  # fmt: skip
    result = home.run("switch", "portkey", "--agent", "claude", check=4, **keyring_env(tmp_path / "k.json"))
    assert "x-portkey-api-key" not in result.stdout + result.stderr


HEADER_VALUE = "Bearer sk-gateway-header-token-77c1"


@pytest.mark.parametrize("agent", ["codex", "opencode"])
def test_a_credential_header_in_agentcfgs_provider_follows_a_moved_profile(home, agent):
    """The user added a header to agentcfg's provider table; the profile's URL moves; the header stays."""
    with serve(FaultServer()) as old, serve(FaultServer()) as new:
        add_profile(home, old.base_url, name="t")
        home.run("switch", "t", "--agent", agent)
        if agent == "codex":
            text = home.read(".codex/config.toml")
            text += f'http_headers = {{ "X-Gateway-Auth" = "{HEADER_VALUE}" }}\n'  # in [model_providers.agentcfg-t]
            home.write(".codex/config.toml", text)
        else:
            data = json.loads(home.read(".config/opencode/opencode.json"))
            data["provider"]["agentcfg-t"]["options"]["headers"] = {"X-Gateway-Auth": HEADER_VALUE}
            home.write(".config/opencode/opencode.json", json.dumps(data))
        home.run("profile", "add", "t", "--base-url", new.base_url, "--model", MODEL, "--no-key", "--force")
        result = home.run("switch", "t", "--agent", agent)
        output = result.stdout + result.stderr
        assert "X-Gateway-Auth" in output and "127.0.0.1" in output and HEADER_VALUE not in output
        report, output = run_doctor(home, "--agent", agent)
    finding = one(report, agent, "header-to-other-host", "warn")
    assert "X-Gateway-Auth" in finding["summary"]
    assert HEADER_VALUE not in output
    assert HEADER_VALUE.split()[1] not in sent(new)  # doctor never sends the user's own headers


def test_codex_env_http_headers_in_use_are_reported(home):
    with serve(FaultServer()) as server:
        add_profile(home, server.base_url, name="t")
        home.run("switch", "t", "--agent", "codex")
        text = home.read(".codex/config.toml") + 'env_http_headers = { "X-Api-Key" = "PORTKEY_API_KEY" }\n'
        home.write(".codex/config.toml", text)
        report, output = run_doctor(home, "--agent", "codex", PORTKEY_API_KEY=SECRET)
    assert "X-Api-Key" in one(report, "codex", "header-to-other-host", "warn")["summary"]
    assert SECRET not in output and SECRET not in sent(server)


def test_your_credential_header_to_a_project_endpoint_is_reported(home, tmp_path):
    user = {"ANTHROPIC_AUTH_TOKEN": SECRET, "ANTHROPIC_CUSTOM_HEADERS": f"x-portkey-api-key: {PORTKEY_VALUE}"}
    home.write(".claude/settings.json", json.dumps({"env": user}))
    with serve(FaultServer()) as capture:
        project = project_with(tmp_path, "settings.json", {"ANTHROPIC_BASE_URL": capture.root})
        report, output = run_doctor(home, "--agent", "claude", cwd=project)
    finding = one(report, "claude", "header-to-other-host", "warn")
    assert "x-portkey-api-key" in finding["summary"] and "this project" in finding["summary"]
    assert PORTKEY_VALUE not in output and PORTKEY_VALUE not in sent(capture)
    assert SECRET not in output and SECRET not in sent(capture)


def test_opencode_header_from_a_variable_is_a_credential_by_its_variable():
    from agentcfg.agents.base import header_table

    (header,) = header_table({"X-Org": "{env:PORTKEY_API_KEY}"}, "provider.p.options.headers")
    assert header.variable == "PORTKEY_API_KEY" and header.value is None and is_credential(header)


def test_agents_read_the_headers_that_go_with_their_endpoint(tmp_path):
    from agentcfg.agents import claude, codex, opencode
    from agentcfg.agents.base import AgentFile

    (header, routing) = claude.read(
        {AgentFile(tmp_path / "s.json", "json"): (CORPUS_GLADO8.read_text(encoding="utf-8"))}
    ).headers
    assert (header.name, header.where, routing.name) == (
        "x-portkey-api-key",
        "env.ANTHROPIC_CUSTOM_HEADERS",
        "x-portkey-provider",
    )
    toml = (
        'model_provider = "p"\n[model_providers.p]\nbase_url = "u"\nhttp_headers = { "A" = "1" }\n'
        'env_http_headers = { "B" = "B_VAR" }\n[model_providers.other]\nhttp_headers = { "C" = "3" }\n'
    )
    found_headers = codex.read({AgentFile(tmp_path / "c.toml", "toml"): toml}).headers
    assert [(h.name, h.value, h.variable) for h in found_headers] == [("A", "1", None), ("B", None, "B_VAR")]
    config = {
        "model": "p/m",
        "provider": {
            "p": {"options": {"baseURL": "u", "headers": {"A": "1"}}, "models": {"m": {"headers": {"B": "2"}}}},
            "q": {"options": {"headers": {"C": "3"}}},
        },
    }
    found_headers = opencode.read({AgentFile(tmp_path / "o.json", "json"): json.dumps(config)}).headers
    assert [(h.name, h.where) for h in found_headers] == [
        ("A", "provider.p.options.headers"),
        ("B", "provider.p.models.m.headers"),
    ]


def test_a_credential_header_in_the_shell_is_named_at_switch(home, tmp_path):
    _taotoken_for_claude(home)
    headers = f"x-portkey-api-key: {PORTKEY_VALUE}\nx-trace: 1"
    result = home.run("switch", "taotoken", "--agent", "claude", check=4, ANTHROPIC_CUSTOM_HEADERS=headers)
    output = result.stdout + result.stderr
    line = next(line for line in output.splitlines() if "x-portkey-api-key" in line)
    assert "this shell" in line and "taotoken.net" in line
    assert PORTKEY_VALUE not in output and "x-trace" not in output


def test_switch_to_a_keyless_profile_says_qwen_would_send_the_shells_openai_key(home: Home):
    """qwen-code reads OPENAI_API_KEY for a keyless profile, and the shell's value beats the placeholder in
    ~/.qwen/.env: the user's OpenAI key would go to a server that asked for none. The switch says so."""
    secret = "sk-openai-of-the-shell-0123456789"
    noted = home.run("switch", "local", "--agent", "qwen", OPENAI_API_KEY=secret)
    assert "OPENAI_API_KEY is set in this shell: qwen-code sends it" in noted.stderr, noted.stderr
    assert secret not in noted.stdout + noted.stderr
    quiet = home.run("switch", "local", "--agent", "codex", OPENAI_API_KEY=secret)
    assert "OPENAI_API_KEY" not in quiet.stderr
