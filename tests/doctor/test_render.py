"""doctor's text report: every line of a summary, evidence, fix or hint stays under its column."""

from __future__ import annotations

from agentcfg.doctor import Report
from agentcfg.doctor.model import FAIL, PASS, WARN, Finding, Target
from agentcfg.doctor.render import as_text

LITELLM_MESSAGE = (
    "HTTP 404: litellm.NotFoundError: NotFoundError: OpenAIException - The model `gpt-retired` does not exist."
    "\n\nLiteLLM: model group 'stale-upstream-model' failed with the error above. No fallback was attempted."
)


def report(*findings: Finding) -> Report:
    target = Target("qwen", "openai", "http://127.0.0.1:4000/v1", "stale-upstream-model", profile="gw")
    return Report([target], list(findings), elapsed=0.5, probes=4)


def body_lines(text: str) -> list[str]:
    """The lines under the agent's title, up to the totals."""
    lines = text.splitlines()
    return lines[1 : lines.index("")]


def test_a_multi_line_evidence_stays_in_its_column() -> None:
    finding = Finding("model-not-found", FAIL, "qwen", "the gateway lists it", LITELLM_MESSAGE, "", "ask\nthe admin")
    lines = body_lines(as_text(report(finding), colour=False))
    head = lines[0]
    column = head.index("the gateway")
    evidence = next(i for i, line in enumerate(lines) if "evidence: " in line)
    text_column = lines[evidence].index("evidence: ") + len("evidence: ")
    assert lines[evidence + 1] == "" or lines[evidence + 1][:text_column].strip() == ""
    for line in lines[1:]:
        assert line == "" or line[:column].strip() == "", line  # nothing in the status and id columns
    continued = next(line for line in lines if "LiteLLM: model group" in line)
    assert continued.index("LiteLLM") == text_column
    hint = next(i for i, line in enumerate(lines) if "hint: " in line)
    assert lines[hint + 1].index("the admin") == lines[hint].index("ask")


def test_no_blank_line_breaks_the_block() -> None:
    finding = Finding("model-not-found", FAIL, "qwen", "s", "a\n\nb")
    lines = body_lines(as_text(report(finding), colour=False))  # up to the first empty line
    assert [line.strip() for line in lines[1:]] == ["evidence: a", "b"]  # a server's blank line says nothing


def test_a_long_id_does_not_push_every_summary_right() -> None:
    short = Finding("key-missing", WARN, "qwen", "short one")
    long = Finding("a-finding-id-that-is-much-longer-than-any-other", FAIL, "qwen", "long one", "why")
    lines = body_lines(as_text(report(short, long), colour=False))
    short_line = next(line for line in lines if "short one" in line)
    assert short_line.index("short one") <= 2 + 4 + 2 + 24 + 2
    at = next(i for i, line in enumerate(lines) if "a-finding-id-that-is" in line)
    summary = lines[at] if "long one" in lines[at] else lines[at + 1]
    assert summary.index("long one") == short_line.index("short one")
    evidence = next(line for line in lines if "evidence: why" in line)
    assert evidence.index("evidence") == short_line.index("short one")


def test_control_characters_from_a_server_are_shown_not_obeyed() -> None:
    finding = Finding("server-error", FAIL, "qwen", "s", "HTTP 500: \x1b[2J\x1b]0;owned\x07boom\r\nnext")
    text = as_text(report(finding), colour=False)
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert "boom" in text and "next" in text


def test_passes_stay_one_line() -> None:
    text = as_text(report(Finding("stream-broken", PASS, "qwen", "streaming works")), colour=False)
    assert "ok    streaming works" in text


def test_the_title_says_what_a_stand_in_key_is() -> None:
    target = Target("qwen", "openai", "http://127.0.0.1:8000/v1", "m", key_source="placeholder", profile="local")
    title = as_text(Report([target], []), colour=False).splitlines()[0]
    assert "key: agentcfg's stand-in (the server needs none)" in title and "placeholder" not in title


def test_a_route_shows_the_router_then_each_leg_then_the_verdict_and_counts_legs_apart() -> None:
    router = Target("codex", "openai", "http://127.0.0.1:4000/v1", "m", profile="home")
    local = Target("codex", "openai", "http://127.0.0.1:8000/v1", "m", profile="local", leg="local")
    gateway = Target("codex", "openai", "https://gw.example/v1", "m", profile="gw", leg="gw")
    findings = [
        Finding("server-unreachable", FAIL, "codex", "nothing listens at 8000", leg="local"),
        Finding("route-leg-down", WARN, None, "leg local (primary) is failing"),
        Finding("route-serving", PASS, None, "route home is serving: answers come from gw"),
    ]
    route = {"name": "home", "legs": [{"profile": "local", "role": "primary"}, {"profile": "gw", "role": "fallback 1"}]}
    result = Report([router, local, gateway], findings, route=route)
    lines = as_text(result, colour=False).splitlines()
    order = [
        "codex    http://127.0.0.1:4000",
        "--- leg local (primary) ---",
        "codex    http://127.0.0.1:8000",
        "  FAIL  server-unreachable",
        "--- leg gw (fallback 1) ---",
        "--- route home ---",
        "  WARN  route-leg-down",
    ]
    at = [next(i for i, line in enumerate(lines) if line.startswith(start)) for start in order]
    assert at == sorted(at), lines
    assert not result.failed and result.summary()["fail"] == 0 and result.leg_summary()["fail"] == 1
    assert lines[-1].startswith("0 failed, 1 warning, 1 passed; the legs' own 1 failed")
