"""agentcfg.route.health: LiteLLM's /health answer read for one leg, with plain dicts."""

from __future__ import annotations

from agentcfg import redact
from agentcfg.route import health

ANSWER = {
    "healthy_endpoints": [{"model_id": "gw", "api_base": "http://127.0.0.1:9/v1", "model": "openai/m"}],
    "unhealthy_endpoints": [
        {"model_id": "local", "error": "litellm.InternalServerError: Connection error.\nTraceback ...\n  line 3",
         "exception_status": 500},
    ],
}  # fmt: skip


def test_a_healthy_leg() -> None:
    assert health.leg_state(ANSWER, "gw") == {"state": "healthy", "error": None}


def test_an_unhealthy_leg_gets_the_first_line_of_its_error_and_its_status() -> None:
    assert health.leg_state(ANSWER, "local") == {
        "state": "unhealthy", "error": "500: litellm.InternalServerError: Connection error."}  # fmt: skip


def test_a_leg_the_router_does_not_report_is_unknown() -> None:
    assert health.leg_state(ANSWER, "other")["state"] == "unknown"
    assert health.leg_state(["not", "a", "dict"], "gw")["state"] == "unknown"


def test_a_servers_error_text_cannot_drive_the_terminal_or_show_a_key() -> None:
    redact.register("sk-leaked-key-0123456789abcdef")
    entry = {"model_id": "x", "error": "\x1b[2J\x1b]0;owned\x07 bad key sk-leaked-key-0123456789abcdef"}
    shown = health.short_error(entry)
    assert "\x1b" not in shown and "\x07" not in shown and "\\x1b[2J" in shown
    assert "sk-leaked-key-0123456789abcdef" not in shown
