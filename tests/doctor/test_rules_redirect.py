"""Redirects: every agent follows them (reqwest for Codex, fetch for the others), resending a POST as a GET
after 301/302/303 and as a POST after 307/308. Doctor's probes follow them the same way; the rules say
what happened (base-url-redirect) and name the final URL."""

from __future__ import annotations

from agentcfg.doctor.model import FAIL, PASS, WARN
from agentcfg.doctor.probes import Result
from agentcfg.doctor.rules import classify, diagnose
from tests.doctor.test_rules import LITELLM, fail, healthy, ids, load, only, target

OLD = "http://127.0.0.1:8000/v1"
NEW = "http://127.0.0.1:9000/api/v1"


def redirected(result: Result, *hops: tuple[int, str]) -> Result:
    result.extra["redirects"] = list(hops)
    result.extra["final_url"] = hops[-1][1]
    return result


def test_a_307_to_the_same_api_moved_works_and_warns_with_the_new_base_url() -> None:
    seen = healthy("qwen", OLD)
    for kind in ("chat-stream", "chat"):
        seen[kind] = redirected(seen[kind], (307, NEW + "/chat/completions"))
    findings = diagnose(target("qwen", OLD), seen)
    finding = only(findings, "base-url-redirect")
    assert finding.status == WARN
    assert f"redirects to {NEW}/chat/completions" in finding.summary and "follow it" in finding.summary
    assert finding.fix == f"agentcfg profile set gw base_url={NEW} && agentcfg switch gw --agent {finding.agent}"
    assert "HTTP 307 to" in finding.evidence and finding.evidence.endswith("then it works")
    assert not ids(findings, FAIL) and "stream-broken" in ids(findings, PASS)


def test_a_301_turns_the_post_into_a_get_that_fails() -> None:
    # http -> https, as a web server in front of the API often does: the POST arrives as a GET (405)
    https = "https://127.0.0.1:8443/v1"
    seen = healthy("opencode", OLD)
    for kind in ("chat-stream", "chat"):
        seen[kind] = redirected(
            fail(kind, 405, {"detail": "Method Not Allowed"}, OLD), (301, https + "/chat/completions")
        )
    findings = diagnose(target("opencode", OLD), seen)
    assert ids(findings, FAIL) == ["base-url-redirect"]
    finding = only(findings, "base-url-redirect")
    assert "HTTP 301" in finding.summary and "as a GET" in finding.summary
    assert f"{https}/chat/completions" in finding.summary
    assert finding.fix == f"agentcfg profile set gw base_url={https} && agentcfg switch gw --agent {finding.agent}"
    assert "Method Not Allowed" in finding.evidence


def test_claude_moves_the_anthropic_base_url() -> None:
    base, moved = "http://127.0.0.1:8000", "http://127.0.0.1:9000"
    seen = healthy("claude", base)
    seen["messages-stream"] = redirected(seen["messages-stream"], (308, moved + "/v1/messages?beta=true"))
    finding = only(diagnose(target("claude", base), seen), "base-url-redirect")
    assert (
        finding.fix
        == f"agentcfg profile set gw anthropic_base_url={moved} && agentcfg switch gw --agent {finding.agent}"
    )


def test_a_redirect_to_another_path_names_it_without_a_fix() -> None:
    seen = healthy("qwen", OLD)
    seen["chat-stream"] = redirected(seen["chat-stream"], (302, "http://127.0.0.1:8000/login"))
    seen["chat-stream"] = redirected(
        fail("chat-stream", 404, {"detail": "Not Found"}), (302, "http://127.0.0.1:8000/login")
    )
    finding = only(diagnose(target("qwen", OLD), seen), "base-url-redirect")
    assert finding.status == FAIL and finding.fix == "" and "/login" in finding.summary


def test_a_307_followed_as_a_post_that_fails_there_is_that_failure() -> None:
    seen = healthy("qwen", OLD)
    bad = fail("chat-stream", 401, {"error": "Unauthorized"})
    seen["chat-stream"] = redirected(bad, (307, "https://other.example/v1/chat/completions"))
    findings = diagnose(target("qwen", OLD), seen)
    finding = only(findings, "key-rejected")  # fetch dropped the key at the other origin, say
    assert "after a redirect to https://other.example/v1/chat/completions" in finding.evidence


def test_a_redirect_no_agent_can_follow() -> None:
    captured = load(LITELLM / "f06-v1-trailing-slash.json")  # 307 without a Location the loader keeps
    assert classify(captured).id == "base-url-redirect"
    seen = healthy("qwen", OLD)
    seen["chat-stream"] = Result(seen["chat-stream"].probe, 307, "", "")
    finding = only(diagnose(target("qwen", OLD), seen), "base-url-redirect")
    assert finding.status == FAIL and "without a Location" in finding.evidence


def test_a_redirect_of_a_probe_outside_the_base_url_names_the_final_url() -> None:
    """A probe whose URL is not under the target's base URL (the base as written differs from what was sent):
    no base URL can be worked out, so the hint names the final URL (this raised UnboundLocalError)."""
    seen = healthy("qwen", OLD)
    seen["chat-stream"] = redirected(seen["chat-stream"], (307, NEW + "/chat/completions"))
    finding = only(diagnose(target("qwen", "http://localhost:8000/v1"), seen), "base-url-redirect")
    assert finding.status == WARN and finding.fix == ""
    assert finding.hint == f"use {NEW}/chat/completions as the base URL"
