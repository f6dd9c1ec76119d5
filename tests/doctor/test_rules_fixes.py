"""Every `fix` the rules give is a command that works when pasted (no PROFILE, NAME, `...`, `<key>`,
/path/to placeholders; values quoted), and every summary is in the user's words. Swept over every
captured answer, as each agent's request, with a profile and without one."""

from __future__ import annotations

import shlex

import pytest

from agentcfg.doctor.model import Finding
from agentcfg.doctor.probes import Probe, Result
from agentcfg.doctor.rules import diagnose
from tests.doctor.test_rules import ALL_FIXTURES, BASE, PROXY, fail, healthy, load, ok, target, window_models

PLACEHOLDERS = ("PROFILE", "NAME", "...", "<", ">", "/path/to", "ID")
JARGON = ("reading choices", "key placeholder", "key helper command")
COMMANDS = ("agentcfg", "export", "env", "kill")
PRIMARY = {"codex": "responses-stream", "qwen": "chat-stream", "opencode": "chat", "claude": "messages-stream"}


def scenarios() -> list[tuple[str, str, dict[str, Result]]]:
    """(name, agent, seen): each captured answer as the agent's own request, plus the hand-made cases."""
    found = []
    for path in ALL_FIXTURES:
        result = load(path)
        if result is None:
            continue
        for agent, kind in PRIMARY.items():
            seen = healthy(agent, BASE)
            seen[kind] = Result(Probe(kind, result.probe.url, (), result.probe.body), *_answer(result))
            found.append((f"{path.stem}-{agent}", agent, seen))
    for agent in PRIMARY:
        seen = healthy(agent, BASE)
        seen["models"] = window_models(4096)
        found.append((f"small-window-{agent}", agent, seen))
        dead = {k: fail(k, None, error="refused", detail="ConnectError", proxy=PROXY) for k in seen}
        dead["models-direct"] = ok("models-direct")
        found.append((f"dead-proxy-{agent}", agent, dead))
        tls = {k: fail(k, None, error="tls", detail="CERTIFICATE_VERIFY_FAILED") for k in seen}
        found.append((f"tls-{agent}", agent, tls))
    return found


def _answer(result: Result) -> tuple[int | None, str, str]:
    return result.status, result.content_type, result.body


SCENARIOS = scenarios()


def check(finding: Finding) -> None:
    for phrase in JARGON:
        assert phrase not in finding.summary + finding.hint, (finding.id, phrase)
    if not finding.fix:
        return
    for placeholder in PLACEHOLDERS:
        assert placeholder not in finding.fix, (finding.id, finding.fix)
    for command in finding.fix.split(" && "):
        words = shlex.split(command)
        assert words and words[0] in COMMANDS, (finding.id, finding.fix)


@pytest.mark.parametrize("with_profile", [True, False], ids=["profile", "no-profile"])
def test_every_fix_is_a_pasteable_command(with_profile: bool) -> None:
    checked = 0
    for _name, agent, seen in SCENARIOS:
        base = "http://127.0.0.1:8000" if agent == "claude" else BASE
        t = target(agent, base, proxy=PROXY if "models-direct" in seen else None, context_window=131_072)
        if not with_profile:
            t.profile = None
        for finding in diagnose(t, seen, proxy_open=False if "models-direct" in seen else None):
            check(finding)
            if not with_profile:
                assert "agentcfg" not in finding.fix, (finding.id, finding.fix)  # no profile to name
            checked += bool(finding.fix)
    assert checked > (20 if with_profile else 3)
