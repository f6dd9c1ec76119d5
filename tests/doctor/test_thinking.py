"""The two-turn tool probe for thinking models: its requests and its judge on plain data, then doctor against a
fault server that plays each failure (and a healthy thinking server) in every agent's protocol."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentcfg import doctor
from agentcfg.doctor import thinking
from agentcfg.doctor.model import Target
from agentcfg.doctor.probes import Probe, Result
from tests.fault_server import DSML, MODEL, REASONING_REQUIRED, FaultServer

AGENTS = ("codex", "qwen", "opencode", "claude")
HEADERS = {"Authorization": "Bearer k"}
CALL = ("call_1", "read_file", '{"path": "README.md"}')


def target(agent: str, base: str = "http://127.0.0.1:9/v1", model: str = MODEL) -> Target:
    root = base.removesuffix("/v1")
    return Target(agent, "anthropic" if agent == "claude" else "openai", root if agent == "claude" else base, model)


def sse(events: list[Any]) -> str:
    return "".join(f"data: {json.dumps(e) if not isinstance(e, str) else e}\n\n" for e in events)


def answer(probe: Probe, events: list[Any], status: int = 200) -> Result:
    return Result(probe, status, "text/event-stream", sse(events))


def chat_events(delta: dict[str, Any], finish: str | None = "stop") -> list[Any]:
    return [{"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}, "[DONE]"]  # fmt: skip


# -- the requests -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("agent", "path", "choice"),
    [
        ("codex", "/v1/responses", "required"),
        ("qwen", "/v1/chat/completions", "required"),
        ("opencode", "/v1/chat/completions", "required"),
        ("claude", "/v1/messages?beta=true", {"type": "any"}),
    ],
)
def test_first_turn_forces_the_one_tool_in_the_agents_protocol(agent: str, path: str, choice: object) -> None:
    probe = thinking.first_turn(agent, target(agent).base_url or "", MODEL, HEADERS)
    assert probe.url.endswith(path) and probe.stream and probe.kind.endswith("-1")
    assert probe.body["tool_choice"] == choice and len(probe.body["tools"]) == 1
    again = thinking.unforced(probe)  # DeepSeek's API in thinking mode refuses some forced choices
    assert again.kind.endswith("-1a") and again.body.get("tool_choice", "auto") == "auto"
    assert probe.body["tool_choice"] == choice  # the first is left as it was


def test_qwen_and_opencode_share_their_first_turn() -> None:
    assert thinking.first_turn("qwen", "http://h/v1", MODEL, {}) == thinking.first_turn(
        "opencode", "http://h/v1", MODEL, {}
    )


def test_second_turn_replays_the_history_each_agent_sends() -> None:
    turn = thinking.Turn(text="", reasoning="I should read it.", call=CALL, finish="tool_calls")
    codex = thinking.second_turn("codex", thinking.first_turn("codex", "http://h/v1", MODEL, {}), turn)
    assert codex is not None and codex.kind == "thinking-responses-2"
    types = [item.get("type") for item in codex.body["input"]]
    assert types == [None, "function_call", "function_call_output"]  # no reasoning item: Codex drops its text
    assert codex.body["input"][2]["call_id"] == "call_1" and codex.body["tool_choice"] == "auto"

    for agent in ("qwen", "opencode"):
        chat = thinking.second_turn(agent, thinking.first_turn(agent, "http://h/v1", MODEL, {}), turn)
        assert chat is not None
        assistant, tool = chat.body["messages"][-2:]
        assert assistant["reasoning_content"] == "I should read it." and assistant["content"] == ""
        assert assistant["tool_calls"][0]["function"] == {"name": "read_file", "arguments": '{"path": "README.md"}'}
        assert tool == {"role": "tool", "tool_call_id": "call_1", "content": thinking.TOOL_OUTPUT}

    claude = thinking.second_turn("claude", thinking.first_turn("claude", "http://h", MODEL, {}), turn)
    assert claude is not None and "tool_choice" not in claude.body
    assistant, user = claude.body["messages"][-2:]
    assert assistant["content"] == [{"type": "tool_use", "id": "call_1", "name": "read_file",
                                     "input": {"path": "README.md"}}]  # fmt: skip  # no thinking block
    assert user["content"][0]["tool_use_id"] == "call_1"


def test_qwen_sends_an_empty_reasoning_content_to_a_deepseek_model_and_random_arguments_are_replaced() -> None:
    turn = thinking.Turn(call=("c", "read_file", "93026"), finish="length")  # a random model's "arguments"
    qwen = thinking.second_turn("qwen", thinking.first_turn("qwen", "http://h/v1", MODEL, {}), turn)
    opencode = thinking.second_turn("opencode", thinking.first_turn("opencode", "http://h/v1", MODEL, {}), turn)
    assert qwen is not None and opencode is not None
    assert qwen.body["messages"][-2]["reasoning_content"] == "" and qwen.body["messages"][-2]["content"] is None
    assert "reasoning_content" not in opencode.body["messages"][-2]
    assert json.loads(qwen.body["messages"][-2]["tool_calls"][0]["function"]["arguments"]) == {"path": "README.md"}


def test_no_tool_call_no_second_turn() -> None:
    first = thinking.first_turn("qwen", "http://h/v1", MODEL, {})
    assert thinking.second_turn("qwen", first, thinking.Turn(text="hello", finish="stop")) is None
    assert thinking.follow("qwen", answer(first, chat_events({"content": "hello"}))) is None
    assert thinking.follow("qwen", Result(first, 400, "application/json", '{"error": "tool_choice"}')).kind.endswith(
        "1a"
    )


# -- reading the answers ---------------------------------------------------------------------------------------


def test_read_turn_takes_reasoning_under_both_names_and_assembles_the_call() -> None:
    first = thinking.first_turn("qwen", "http://h/v1", MODEL, {})
    events = [
        {"choices": [{"index": 0, "delta": {"reasoning_content": "Deep"}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"reasoning": "Seek"}, "finish_reason": None}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": '{"pa'}}]
                    },
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": 'th": "x"}'}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        "[DONE]",
    ]
    turn = thinking.read_turn(answer(first, events))
    assert turn.reasoning == "DeepSeek" and turn.reasoning_field == "reasoning_content"
    assert turn.call == ("c1", "read_file", '{"path": "x"}') and turn.finish == "tool_calls"


# -- the judge ---------------------------------------------------------------------------------------------------


def chain(agent: str, second: list[Any] | None, *, status: int = 200, body: str = "") -> list[Result]:
    """Turn 1 that reasoned and called the tool, then turn 2 answered with `second` (or an error body)."""
    first = thinking.first_turn(agent, target(agent).base_url or "", MODEL, {})
    one = answer(first, chat_events({"reasoning": "think", "tool_calls": [
        {"index": 0, "id": "c", "function": {"name": "read_file", "arguments": "{}"}}]}, "tool_calls"))  # fmt: skip
    two = thinking.second_turn(agent, first, thinking.Turn(reasoning="think", call=("c", "read_file", "{}")))
    assert two is not None
    if second is None:
        return [one, Result(two, status, "application/json", body)]
    return [one, answer(two, second)]


@pytest.mark.parametrize(
    "message",
    [
        "The `reasoning_content` in the thinking mode must be passed back to the API.",
        "Missing reasoning_content field in the assistant message at message index 2",
        "The `reasoning_text` of the reasoning item must be passed back",
    ],
)
def test_a_400_asking_for_the_reasoning_is_reasoning_dropped(message: str) -> None:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    finding = thinking.judge(target("codex"), chain("qwen", None, status=400, body=body))
    assert (finding.id, finding.status) == ("thinking-reasoning-dropped", "fail")
    assert message in finding.evidence and "passes the reasoning back" in finding.hint and "thinking" in finding.hint


def test_another_400_on_turn_2_is_a_skip_not_a_failure() -> None:
    body = json.dumps({"error": {"message": "messages: field required"}})
    finding = thinking.judge(target("qwen"), chain("qwen", None, status=400, body=body))
    assert (finding.id, finding.status) == ("thinking-tools", "skip")


def test_an_early_stop_after_reasoning() -> None:
    finding = thinking.judge(target("opencode"), chain("opencode", chat_events({"reasoning": "done"})))
    assert (finding.id, finding.status) == ("thinking-early-stop", "fail")
    assert "interleaved" in finding.hint


def test_a_stop_without_reasoning_in_turn_1_is_not_an_early_stop() -> None:
    """A model that reasons in no separate field (no --reasoning-parser; a random model) had nothing to drop."""
    results = chain("qwen", chat_events({"content": ""}))
    first = thinking.first_turn("qwen", "http://h/v1", MODEL, {})
    results[0] = answer(first, chat_events({"tool_calls": [
        {"index": 0, "id": "c", "function": {"name": "read_file", "arguments": "{}"}}]}, "tool_calls"))  # fmt: skip
    assert thinking.judge(target("qwen"), results).status == "pass"


@pytest.mark.parametrize(
    "text",
    [
        DSML,
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file",
        '<tool_call>\n{"name": "read_file", "arguments": {}}\n</tool_call>',
        '<function_calls>\n<invoke name="read_file">',
    ],
)
def test_tool_call_markup_in_the_text(text: str) -> None:
    finding = thinking.judge(
        target("qwen"), chain("qwen", chat_events({"content": text})), ("deepseek_v4", "deepseek_v4")
    )
    assert (finding.id, finding.status) == ("thinking-tool-markup", "fail")
    assert "--tool-call-parser deepseek_v4 --reasoning-parser deepseek_v4" in finding.hint


@pytest.mark.parametrize("text", ["<tool_call> gibberish", "<｜tool▁calls▁begin｜> x", "a <tool_call>", "DSML"])
def test_a_lone_markup_token_is_not_a_tool_call(text: str) -> None:
    assert thinking.markup(text) is None


def test_going_on_is_a_pass_and_no_tool_call_in_turn_1_a_skip() -> None:
    assert thinking.judge(target("qwen"), chain("qwen", chat_events({"content": "A demo."}))).status == "pass"
    assert thinking.judge(target("qwen"), chain("qwen", chat_events({"reasoning": "hm"}, "length"))).status == "pass"
    first = thinking.first_turn("qwen", "http://h/v1", MODEL, {})
    skipped = thinking.judge(target("qwen"), [answer(first, chat_events({"content": "hello"}))])
    assert (skipped.id, skipped.status) == ("thinking-tools", "skip") and "no tool call" in skipped.summary


# -- against a fault server, every agent's protocol ------------------------------------------------------------


def run_doctor(server: FaultServer, model: str = MODEL) -> dict[str, tuple[str, str]]:
    """{agent: (id, status)} of the probe's finding for each of the four agents."""
    targets = [target(agent, server.base_url, model) for agent in AGENTS]
    report = doctor.run(targets, {}, deadline=5)
    assert len(server.requests) == report.probes  # what was sent is what was counted
    return {f.agent: (f.id, f.status) for f in report.findings if f.id.startswith("thinking-") and f.agent}


def test_healthy_thinking_server_every_agent_passes() -> None:
    with FaultServer("thinking") as server:
        assert run_doctor(server) == dict.fromkeys(AGENTS, ("thinking-tools", "pass"))


def test_a_400_for_the_agents_that_drop_the_reasoning() -> None:
    with FaultServer("thinking-400", reasoning_field="reasoning_content") as server:
        found = run_doctor(server)
    assert found == {
        "codex": ("thinking-reasoning-dropped", "fail"),
        "claude": ("thinking-reasoning-dropped", "fail"),
        "qwen": ("thinking-tools", "pass"),  # they pass reasoning_content back: DeepSeek's API reads it
        "opencode": ("thinking-tools", "pass"),
    }


def test_a_400_for_every_agent_when_the_server_reads_no_reasoning_they_send() -> None:
    with FaultServer("thinking-400", reasoning_field=None) as server:
        assert run_doctor(server) == dict.fromkeys(AGENTS, ("thinking-reasoning-dropped", "fail"))
        assert any(REASONING_REQUIRED in json.dumps(r) for r in server.requests) is False  # sent, not echoed


def test_an_early_stop_for_every_agent_on_a_vllm_that_reads_reasoning() -> None:
    with FaultServer("thinking-stop", reasoning_field="reasoning") as server:  # vLLM's name; they send the other
        assert run_doctor(server) == dict.fromkeys(AGENTS, ("thinking-early-stop", "fail"))


def test_dsml_text_for_every_agent() -> None:
    with FaultServer("thinking-dsml", reasoning_field=None) as server:
        assert run_doctor(server) == dict.fromkeys(AGENTS, ("thinking-tool-markup", "fail"))


def test_a_model_that_does_not_think_gets_no_probe() -> None:
    with FaultServer("thinking-400", model="qwen3-coder", reasoning_field=None) as server:
        assert run_doctor(server, "qwen3-coder") == {}
        assert not any("thinking" in json.dumps(body) for _, _, _, body in server.requests)


def test_the_second_turn_stays_within_the_one_deadline() -> None:
    import time

    from tests.fault_server import _Handler

    class Slow(_Handler):
        def _chat(self, body: dict[str, Any]) -> None:
            if body.get("messages", [{}])[-1].get("role") == "tool":
                time.sleep(3)  # turn 2 outlives the deadline
            super()._chat(body)

    with FaultServer("thinking") as server:
        server._server.RequestHandlerClass = Slow
        started = time.monotonic()
        report = doctor.run([target("qwen", server.base_url)], {}, deadline=1.5)
        assert time.monotonic() - started < 2.5
    finding = next(f for f in report.findings if f.id.startswith("thinking"))
    assert (finding.id, finding.status) == ("thinking-tools", "skip") and "deadline" in finding.summary


@pytest.mark.parametrize(
    ("agent", "ends"),
    [
        ("codex", "(Codex sends back only `encrypted_content`, never the reasoning text)"),
        ("claude", '(`"alwaysThinkingEnabled": false` in its settings)'),
        ("opencode", "(opencode #35689: reasoning dropped on messages with tool calls)"),
        ("qwen", 'turn thinking off for tool turns: `chat_template_kwargs: {"thinking": false}` on vLLM'),
    ],
)
def test_each_agents_thinking_advice_is_a_whole_sentence(agent, ends):
    """Codex's and Claude Code's advice lost their last words to a line after `return` (issue 28's code)."""
    assert thinking.advice(agent).endswith(ends)
