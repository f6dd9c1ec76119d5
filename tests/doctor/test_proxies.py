"""Which proxy each agent's request goes through (agentcfg.doctor.proxies): NO_PROXY matching and per-agent rules."""

from __future__ import annotations

import os
import shlex

import pytest

from agentcfg.doctor import proxies
from agentcfg.doctor.proxies import bypassed, proxy_for

# -- NO_PROXY ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "port", "no_proxy", "expected"),
    [
        # everything
        ("anything.example.org", 443, "*", True),
        ("127.0.0.1", 8000, " * ", True),
        # exact names
        ("localhost", 8000, "localhost", True),
        ("localhost", None, "localhost", True),
        ("gw.example.com", 443, "gw.example.com", True),
        ("other.example.com", 443, "gw.example.com", False),
        ("localhost", 8000, "", False),
        ("localhost", 8000, "  ,  , ", False),
        # suffixes, with and without the dot, and the wildcard form
        ("api.example.com", 443, ".example.com", True),
        ("example.com", 443, ".example.com", True),
        ("a.b.example.com", 443, "example.com", True),
        ("example.com", 443, "example.com", True),
        ("badexample.com", 443, "example.com", False),
        ("badexample.com", 443, ".example.com", False),
        ("api.example.com", 443, "*.example.com", True),
        ("example.com.evil.net", 443, "example.com", False),
        # IP addresses and ranges
        ("127.0.0.1", 8000, "127.0.0.1", True),
        ("127.0.0.2", 8000, "127.0.0.1", False),
        ("127.0.0.1", 8000, "127.0.0.0/8", True),
        ("127.255.0.9", 8000, "127.0.0.0/8", True),
        ("128.0.0.1", 8000, "127.0.0.0/8", False),
        ("10.1.2.3", 80, "10.0.0.0/8,192.168.0.0/16", True),
        ("192.168.7.7", 80, "10.0.0.0/8,192.168.0.0/16", True),
        ("172.16.0.1", 80, "10.0.0.0/8,192.168.0.0/16", False),
        ("localhost", 8000, "127.0.0.0/8", False),  # names are not resolved
        ("127.0.0.1", 8000, "localhost", False),  # and localhost does not cover 127.0.0.1
        # IPv6
        ("::1", 8000, "::1", True),
        ("[::1]", 8000, "::1", True),
        ("::1", 8000, "[::1]", True),
        ("[::1]", 8000, "[::1]", True),
        ("::2", 8000, "::1", False),
        ("fd00::5", 443, "fd00::/8", True),
        ("::1", 8000, "127.0.0.1,localhost", False),
        # entries for one port
        ("localhost", 8000, "localhost:8000", True),
        ("localhost", 9000, "localhost:8000", False),
        ("127.0.0.1", 8000, "127.0.0.1:8000", True),
        ("127.0.0.1", 8001, "127.0.0.1:8000", False),
        ("gw.example.com", 443, ".example.com:443", True),
        # lists: commas, spaces, both, and case
        ("gw.example.com", 443, "localhost,127.0.0.1,gw.example.com", True),
        ("gw.example.com", 443, "localhost 127.0.0.1 gw.example.com", True),
        ("gw.example.com", 443, "localhost, 127.0.0.1,\tgw.example.com\n", True),
        ("GW.Example.COM", 443, "gw.example.com", True),
        ("gw.example.com", 443, "GW.EXAMPLE.COM", True),
        ("LOCALHOST", 8000, "LocalHost:8000", True),
    ],
)
def test_bypassed(host: str, port: int | None, no_proxy: str, expected: bool) -> None:
    assert bypassed(host, port, no_proxy) is expected


def test_bypassed_bracketed_ipv6_with_port() -> None:
    assert bypassed("::1", 8000, "[::1]:8000")


# -- per agent ---------------------------------------------------------------------------------------------

HTTPS_URL = "https://gw.example.com/v1"
HTTP_URL = "http://127.0.0.1:8000/v1"
P_HTTPS, P_HTTP, P_ALL = "http://proxy-https:3128", "http://proxy-http:3128", "socks5://proxy-all:1080"


@pytest.mark.parametrize("agent", ["codex", "opencode", "claude"])
def test_scheme_picks_the_variable(agent: str) -> None:
    environ = {"HTTPS_PROXY": P_HTTPS, "HTTP_PROXY": P_HTTP}
    assert proxy_for(agent, HTTPS_URL, environ) == P_HTTPS
    assert proxy_for(agent, HTTP_URL, environ) == P_HTTP
    assert proxy_for(agent, HTTPS_URL, {"HTTP_PROXY": P_HTTP}) is None
    assert proxy_for(agent, HTTP_URL, {"HTTPS_PROXY": P_HTTPS}) is None


@pytest.mark.parametrize("agent", ["codex", "qwen", "opencode", "claude"])
def test_no_variables_no_proxy(agent: str) -> None:
    assert proxy_for(agent, HTTPS_URL, {}) is None
    assert proxy_for(agent, HTTP_URL, {"NO_PROXY": "*", "PATH": "/usr/bin"}) is None
    assert proxy_for(agent, HTTP_URL, {"HTTP_PROXY": "", "HTTPS_PROXY": ""}) is None


def test_codex_reads_all_proxy() -> None:
    assert proxy_for("codex", HTTPS_URL, {"ALL_PROXY": P_ALL}) == P_ALL
    assert proxy_for("codex", HTTP_URL, {"all_proxy": P_ALL}) == P_ALL
    assert proxy_for("codex", HTTPS_URL, {"ALL_PROXY": P_ALL, "HTTPS_PROXY": P_HTTPS}) == P_HTTPS  # scheme first
    assert proxy_for("codex", HTTPS_URL, {"ALL_PROXY": P_ALL, "NO_PROXY": ".example.com"}) is None


@pytest.mark.parametrize("agent", ["qwen", "opencode", "claude"])
def test_the_others_ignore_all_proxy(agent: str) -> None:
    assert proxy_for(agent, HTTPS_URL, {"ALL_PROXY": P_ALL}) is None
    assert proxy_for(agent, HTTP_URL, {"all_proxy": P_ALL}) is None


@pytest.mark.parametrize("agent", ["codex", "opencode", "claude"])
def test_no_proxy_honoured(agent: str) -> None:
    environ = {"HTTPS_PROXY": P_HTTPS, "HTTP_PROXY": P_HTTP, "NO_PROXY": "localhost,127.0.0.1,.example.com"}
    assert proxy_for(agent, HTTP_URL, environ) is None
    assert proxy_for(agent, "http://localhost:8000/v1", environ) is None
    assert proxy_for(agent, HTTPS_URL, environ) is None
    assert proxy_for(agent, "https://api.openai.com/v1", environ) == P_HTTPS
    assert proxy_for(agent, "http://[::1]:8000/v1", environ) == P_HTTP  # ::1 not listed
    assert proxy_for(agent, "http://[::1]:8000/v1", {**environ, "no_proxy": "::1"}) is None


def test_codex_no_proxy_cidr() -> None:
    environ = {"HTTP_PROXY": P_HTTP, "NO_PROXY": "127.0.0.0/8"}
    assert proxy_for("codex", "http://127.0.0.1:8000/v1", environ) is None
    assert proxy_for("codex", "http://10.0.0.1:8000/v1", environ) == P_HTTP


def test_no_proxy_port_entry() -> None:
    environ = {"HTTP_PROXY": P_HTTP, "NO_PROXY": "localhost:8000"}
    assert proxy_for("opencode", "http://localhost:8000/v1", environ) is None
    assert proxy_for("opencode", "http://localhost:9000/v1", environ) == P_HTTP


def test_no_proxy_port_entry_against_the_default_port() -> None:
    environ = {"HTTP_PROXY": P_HTTP, "NO_PROXY": "localhost:8000"}
    assert proxy_for("opencode", "http://localhost/v1", environ) == P_HTTP


def test_qwen_ignores_no_proxy_and_prefers_https_proxy() -> None:
    environ = {"HTTPS_PROXY": P_HTTPS, "HTTP_PROXY": P_HTTP, "NO_PROXY": "*", "no_proxy": "localhost,127.0.0.1"}
    assert proxy_for("qwen", HTTP_URL, environ) == P_HTTPS  # HTTPS_PROXY even for an http URL
    assert proxy_for("qwen", HTTPS_URL, environ) == P_HTTPS
    assert proxy_for("qwen", "http://localhost:8000/v1", {"HTTP_PROXY": P_HTTP, "NO_PROXY": "localhost"}) == P_HTTP
    assert proxy_for("qwen", HTTPS_URL, {"http_proxy": P_HTTP}) == P_HTTP  # HTTP_PROXY for an https URL too


@pytest.mark.parametrize("agent", ["codex", "qwen", "opencode", "claude"])
def test_lower_case_wins(agent: str) -> None:
    environ = {"https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:2"}
    assert proxy_for(agent, HTTPS_URL, environ) == "http://lower:1"
    assert proxy_for(agent, HTTPS_URL, {"HTTPS_PROXY": "http://upper:2"}) == "http://upper:2"
    assert proxy_for(agent, HTTPS_URL, {"https_proxy": "http://lower:1"}) == "http://lower:1"


@pytest.mark.parametrize("agent", ["codex", "opencode", "claude"])
def test_lower_case_no_proxy_wins(agent: str) -> None:
    environ = {"HTTPS_PROXY": P_HTTPS, "no_proxy": "other.net", "NO_PROXY": ".example.com"}
    assert proxy_for(agent, HTTPS_URL, environ) == P_HTTPS
    environ = {"HTTPS_PROXY": P_HTTPS, "no_proxy": ".example.com", "NO_PROXY": "other.net"}
    assert proxy_for(agent, HTTPS_URL, environ) is None


def test_codex_lower_case_all_proxy_wins() -> None:
    assert proxy_for("codex", HTTPS_URL, {"all_proxy": "socks5://lower:1", "ALL_PROXY": "socks5://upper:2"}) == (
        "socks5://lower:1"
    )


def test_bad_port_in_url_still_answers() -> None:
    environ = {"HTTP_PROXY": P_HTTP, "NO_PROXY": "localhost"}
    assert proxy_for("opencode", "http://localhost:99999/v1", environ) is None
    assert proxy_for("opencode", "http://gw:99999/v1", environ) == P_HTTP


# -- the fixes doctor prints really send the agent past the proxy, pasted into a shell as they are -----------


def _proxy_after(fix: str, agent: str, url: str, environ: dict[str, str], *, wraps: bool) -> str:
    """Run `fix` in sh with `environ`, then ask proxy_for in what the agent would see (its own process)."""
    import subprocess
    import sys

    ask = f"import os; from agentcfg.doctor.proxies import proxy_for; print(proxy_for({agent!r}, {url!r}, os.environ))"
    python = f"{shlex.quote(sys.executable)} -c {shlex.quote(ask)}"
    # a wrapping fix (`env -u ... qwen`) runs the agent: the agent's place is taken by python
    script = fix.removesuffix(" qwen") + " " + python if wraps else f"{fix}\n{python}"
    result = subprocess.run(["sh", "-c", script], env=environ, capture_output=True, text=True, timeout=30, check=True)
    return result.stdout.strip()


@pytest.mark.parametrize("agent", ["codex", "opencode", "claude"])
@pytest.mark.parametrize("existing", ["", "example.org"])
def test_the_no_proxy_fix_sends_local_requests_direct(agent: str, existing: str) -> None:
    from agentcfg.doctor.model import Target
    from agentcfg.doctor.rules import _bypass

    url = "http://127.0.0.1:8000/v1/models"
    environ = {"PATH": os.environ["PATH"], "HTTP_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}
    if existing:
        environ["NO_PROXY"] = environ["no_proxy"] = existing
    assert proxies.proxy_for(agent, url, environ) == "http://127.0.0.1:9"
    fix, _ = _bypass(Target(agent, "openai", url, "m"), "127.0.0.1")
    assert _proxy_after(fix, agent, url, environ, wraps=False) == "None"


def test_the_qwen_fix_runs_it_without_the_proxy_variables() -> None:
    from agentcfg.doctor.model import Target
    from agentcfg.doctor.rules import _bypass

    url = "http://127.0.0.1:8000/v1/models"
    environ = {
        "PATH": os.environ["PATH"],
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "http_proxy": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    assert proxies.proxy_for("qwen", url, environ) == "http://127.0.0.1:9"  # NO_PROXY does not help qwen
    fix, _ = _bypass(Target("qwen", "openai", url, "m"), "127.0.0.1")
    assert fix.endswith(" qwen")
    assert _proxy_after(fix, "qwen", url, environ, wraps=True) == "None"
