"""Doctor's two-turn tool probe for thinking models: a tool call, its result, and the continuation, in each
agent's own protocol and with the history replayed the way that agent replays it.

Why: in thinking mode a DeepSeek model needs its reasoning passed back after a tool call. DeepSeek's API
answers a history without it with a 400 ("The `reasoning_content` in the thinking mode must be passed back");
a local vLLM fails quietly (the turn after the tool result stops with nothing, or the tool call leaks into the
text as DSML markup). Which agents drop the reasoning, read from their sources:

- Codex replays a reasoning item without its `reasoning_text` content (codex-rs/protocol models.rs,
  `should_serialize_reasoning_content`): only `encrypted_content`, which no vLLM or DeepSeek sends. Doctor
  leaves the item out: the server gets the same reasoning, none (CLIProxyAPI #3451).
- Claude Code keeps no reasoning of a third-party model on the tool turn (claude-code-router #1355, #1378).
- qwen-code puts its thought parts back as `reasoning_content` on the assistant message with the tool calls
  (openaiContentGenerator/converter.ts), and for a model named deepseek always sends the field, "" when empty
  (provider/deepseek.ts, `ensureReasoningContentOnAssistantMessage`; seen in qwen-code 0.24.4).
- opencode sends `reasoning_content` back (its `interleaved` option, the default since PR #24630).

Pure: request builders, the readers of each protocol's answer and the judge take and give plain data. The
follow-up requests are chained under doctor's one deadline by send.py (`follow`).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from agentcfg.agents import AGENTS
from agentcfg.doctor.model import FAIL, PASS, SKIP, Finding, Target
from agentcfg.doctor.probes import TOOL, Probe, Result
from agentcfg.doctor.replies import error_message, is_event_stream, parse_json, sse_events
from agentcfg.lazyclass import dataclass
from agentcfg.patterns import lazy  # compiled when a turn is first judged, not when doctor is imported

# Kinds: thinking-<protocol>-1 (the forced first turn), -1a (the first turn again with automatic tool choice,
# after a server refused the forced one), -2 (the turn after the tool's result).
PROMPT = "Use the read_file tool to read README.md, then tell me in one sentence what the project is."
CLAUDE_PROMPT = PROMPT.replace("read_file", "Read")
SYSTEM = "You are a coding agent. Use the tools you are given."
TOOL_OUTPUT = "# demo\n\nA small demo project: one Python module that prints a greeting."
FALLBACK_ARGUMENTS = {"path": "README.md"}  # what is replayed when the model's arguments are not a JSON object
MAX_OUTPUT = 512  # room to think before the call; a stream still coming at the deadline is judged as read

# "must be passed back" (DeepSeek's chat API), "Missing reasoning_content field in the assistant message at
# message index N" (its older wording), "`reasoning_text` ... must be passed back" (its Responses API).
REASONING_REQUIRED = lazy(
    r"must be passed back|missing\s+`?reasoning_content|reasoning_text`?.{0,80}passed back", re.IGNORECASE | re.DOTALL
)
# A tool call written as text: DeepSeek V3.2/V4 DSML, DeepSeek V3/V3.1/R1 special tokens, Hermes/Qwen
# `<tool_call>{"name": ...`, Claude-style `<function_calls><invoke`. Each pattern needs the call's structure,
# not one token, so the gibberish of a tiny random model does not match by chance.
MARKUP = lazy(
    r"<｜DSML｜\s*(?:function_calls|invoke)"
    r"|<｜tool▁calls▁begin｜>\s*<｜tool▁call▁begin｜>"
    r"|<tool_call>\s*\{\s*\"name\""
    r"|<function_calls>\s*<invoke",
)
STOPPED = {"stop", "end_turn", "stop_sequence", "completed"}  # the protocol's "the model is done"


# -- the requests ------------------------------------------------------------------------------------------


def _tool(protocol: str) -> dict[str, Any]:
    function = TOOL["function"]
    if protocol == "responses":
        return {"type": "function", "name": function["name"], "description": function["description"],
                "parameters": function["parameters"]}  # fmt: skip
    if protocol == "messages":
        return {"name": "Read", "description": function["description"], "input_schema": function["parameters"]}
    return TOOL


def first_turn(agent: str, base_url: str, model: str, headers: dict[str, str]) -> Probe:
    """Turn 1: one tool and a prompt that asks for it, the call forced (a small or random model calls a tool
    only when forced; a server that refuses the forced choice gets `unforced`). Streaming, as the agents ask."""
    protocol = AGENTS[agent].TRAITS.protocol
    base = base_url.rstrip("/")
    body: dict[str, Any]
    if protocol == "responses":
        body = {"model": model, "instructions": SYSTEM, "input": [_user_input(PROMPT)], "tools": [_tool(protocol)],
                "tool_choice": "required", "max_output_tokens": MAX_OUTPUT, "stream": True, "store": False}  # fmt: skip
        return Probe("thinking-responses-1", base + "/responses", tuple(headers.items()), body)
    if protocol == "messages":
        body = {"model": model, "max_tokens": MAX_OUTPUT, "system": SYSTEM,
                "messages": [{"role": "user", "content": CLAUDE_PROMPT}], "tools": [_tool(protocol)],
                "tool_choice": {"type": "any"}, "stream": True}  # fmt: skip
        url = base + "/v1/messages?beta=true"
        return Probe("thinking-messages-1", url, (("anthropic-version", "2023-06-01"), *headers.items()), body)
    body = {"model": model, "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}],
            "tools": [_tool(protocol)], "tool_choice": "required", "max_tokens": MAX_OUTPUT, "stream": True,
            "stream_options": {"include_usage": True}}  # fmt: skip
    return Probe("thinking-chat-1", base + "/chat/completions", tuple(headers.items()), body)


def _user_input(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "input_text", "text": text}]}


def unforced(probe: Probe) -> Probe:
    """Turn 1 again with the tool choice the agents send (automatic): DeepSeek's API in thinking mode refuses
    some forced choices ("does not support this tool_choice")."""
    body = dict(probe.body)
    if probe.kind == "thinking-messages-1":
        body.pop("tool_choice", None)  # Claude Code sends none: automatic
    else:
        body["tool_choice"] = "auto"
    return replace(probe, kind=probe.kind + "a", body=body)


@dataclass(frozen=True)
class Turn:
    """What one turn's answer held, whatever the protocol."""

    text: str = ""
    reasoning: str = ""
    call: tuple[str, str, str] | None = None  # (id, name, arguments as sent)
    finish: str | None = None  # finish_reason, Responses' status, Messages' stop_reason; None: not seen
    reasoning_field: str | None = None  # the field it came in: reasoning (vLLM) or reasoning_content (DeepSeek)


def second_turn(agent: str, first: Probe, turn: Turn) -> Probe | None:
    """Turn 2: the tool's result, with the history as `agent` replays it; None without a tool call."""
    if turn.call is None:
        return None
    call_id, name, arguments = turn.call
    arguments = _arguments(arguments)
    body = dict(first.body)
    traits = AGENTS[agent].TRAITS
    keeps, protocol = traits.replays_reasoning, traits.protocol
    always = any(name in str(body.get("model", "")).lower() for name in traits.replays_empty_reasoning_for)
    if protocol == "responses":
        body["input"] = [
            *first.body["input"],
            {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments},
            {"type": "function_call_output", "call_id": call_id, "output": TOOL_OUTPUT},
        ]
    elif protocol == "messages":
        content: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text.strip() else []
        content.append({"type": "tool_use", "id": call_id, "name": name, "input": json.loads(arguments)})
        result = {"type": "tool_result", "tool_use_id": call_id, "content": TOOL_OUTPUT}
        body["messages"] = [
            *first.body["messages"],
            {"role": "assistant", "content": content},
            {"role": "user", "content": [result]},
        ]
    else:
        assistant: dict[str, Any] = {
            "role": "assistant",
            "content": turn.text or ("" if turn.reasoning else None),
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}],
        }
        if keeps and (turn.reasoning or always):
            assistant["reasoning_content"] = turn.reasoning
        body["messages"] = [
            *first.body["messages"],
            assistant,
            {"role": "tool", "tool_call_id": call_id, "content": TOOL_OUTPUT},
        ]
    body.pop("tool_choice", None)  # every agent continues with automatic choice
    if protocol != "messages":
        body["tool_choice"] = "auto"
    return replace(first, kind=re.sub(r"-1a?$", "-2", first.kind), body=body)


def _arguments(arguments: str) -> str:
    """The call's arguments as an agent would send them back: a JSON object (a random model's are often not)."""
    parsed = parse_json(arguments)
    return arguments if isinstance(parsed, dict) else json.dumps(FALLBACK_ARGUMENTS)


def follow(agent: str, result: Result) -> Probe | None:
    """The request that comes after this one in `agent`'s chain, or None: the first turn again unforced when
    the server refused the forced choice, turn 2 after a first turn that called the tool."""
    kind = result.probe.kind
    if kind.endswith("-1") and result.status in (400, 422):
        return unforced(result.probe)
    if kind.endswith(("-1", "-1a")) and result.status is not None and 200 <= result.status < 300:
        return second_turn(agent, result.probe, read_turn(result))
    return None


# -- reading an answer ---------------------------------------------------------------------------------------


def read_turn(result: Result) -> Turn:
    """The text, reasoning, first tool call and finish of an answer, streamed or whole, in any of the three
    protocols (vLLM's `reasoning` and DeepSeek's `reasoning_content` both read)."""
    if is_event_stream(result):
        events = [e for e in sse_events(result.body, whole=not result.truncated) if isinstance(e, dict)]
    else:
        whole = parse_json(result.body)
        events = [whole] if isinstance(whole, dict) else []
    protocol = result.probe.kind.split("-")[1] if result.probe.kind.startswith("thinking-") else "chat"
    reader = {"responses": _read_responses, "messages": _read_messages}.get(protocol, _read_chat)
    return reader(events)


def _read_chat(events: list[dict[str, Any]]) -> Turn:
    text, reasoning, field, finish = [], [], None, None
    calls: dict[int, list[str]] = {}
    for event in events:
        for choice in event.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            part = choice.get("delta") or choice.get("message") or {}
            if not isinstance(part, dict):
                continue
            text.append(str(part.get("content") or ""))
            for name in ("reasoning", "reasoning_content"):
                if part.get(name):
                    reasoning.append(str(part[name]))
                    field = field or name
            for call in part.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                slot = calls.setdefault(call.get("index", 0) if isinstance(call.get("index"), int) else 0, ["", "", ""])
                function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
                slot[0] = slot[0] or str(call.get("id") or "")
                slot[1] = slot[1] or str(function.get("name") or "")
                slot[2] += str(function.get("arguments") or "")
            finish = choice.get("finish_reason") or finish
    first = calls[min(calls)] if calls else None
    call = (first[0] or "call_0", first[1], first[2]) if first and first[1] else None
    return Turn("".join(text), "".join(reasoning), call, finish, field)


def _read_responses(events: list[dict[str, Any]]) -> Turn:
    text, reasoning, call, finish = [], [], None, None
    items: list[Any] = []
    for event in events:
        kind = str(event.get("type") or "")
        if kind == "response.output_text.delta":
            text.append(str(event.get("delta") or ""))
        elif "reasoning" in kind and kind.endswith(".delta"):
            reasoning.append(str(event.get("delta") or ""))
        elif kind == "response.output_item.done":
            items.append(event.get("item"))
        elif kind in ("response.completed", "response.incomplete", "response.failed") or "output" in event:
            response: dict[str, Any] = event["response"] if isinstance(event.get("response"), dict) else event
            finish = str(response.get("status") or kind.rsplit(".", 1)[-1])
            if not items and isinstance(response.get("output"), list):
                items = response["output"]  # a whole answer, or a stream without output_item events
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call" and call is None and item.get("name"):
            call = (str(item.get("call_id") or item.get("id") or "call_0"), str(item["name"]),
                    str(item.get("arguments") or ""))  # fmt: skip
        elif item.get("type") == "reasoning" and not reasoning:
            reasoning += [str(c.get("text") or "") for c in item.get("content") or [] if isinstance(c, dict)]
        elif item.get("type") == "message" and not text:
            text += [str(c.get("text") or "") for c in item.get("content") or [] if isinstance(c, dict)]
    return Turn("".join(text), "".join(reasoning), call, finish, "reasoning" if "".join(reasoning) else None)


def _read_messages(events: list[dict[str, Any]]) -> Turn:
    text, reasoning, finish = [], [], None
    call: list[str] | None = None
    call_index: object = None
    blocks: list[Any] = []
    for event in events:
        kind = event.get("type")
        if kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            blocks.append(event["content_block"])
            call_index = event.get("index") if call is None else call_index
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            delta = event["delta"]
            text.append(str(delta.get("text") or ""))
            reasoning.append(str(delta.get("thinking") or ""))
            if call is not None and event.get("index") == call_index:
                call[2] += str(delta.get("partial_json") or "")
        elif kind == "message_delta" and isinstance(event.get("delta"), dict):
            finish = event["delta"].get("stop_reason") or finish
        elif kind == "message" or isinstance(event.get("content"), list):  # a whole answer
            blocks += [b for b in event.get("content") or [] if isinstance(b, dict)]
            finish = event.get("stop_reason") or finish
        if blocks and call is None and blocks[-1].get("type") == "tool_use":
            block = blocks[-1]
            given = block.get("input")
            call = [str(block.get("id") or "toolu_0"), str(block.get("name") or ""),
                    json.dumps(given) if given else ""]  # fmt: skip
    for block in blocks:
        text.append(str(block.get("text") or "") if block.get("type") == "text" else "")
        reasoning.append(str(block.get("thinking") or "") if block.get("type") == "thinking" else "")
    found = (call[0], call[1], call[2]) if call and call[1] else None
    return Turn("".join(text), "".join(reasoning), found, finish, "thinking" if "".join(reasoning) else None)


# -- the judge -------------------------------------------------------------------------------------------------


def markup(text: str) -> str | None:
    """The tool-call markup in a text, if any (what matched, for the evidence)."""
    match = MARKUP.search(text)
    return match.group(0) if match else None


def judge(target: Target, chain: list[Result], parsers: tuple[str | None, str | None] = (None, None)) -> Finding:
    """One finding from the chain of results (turn 1, maybe turn 1 unforced, maybe turn 2). `parsers`: the
    family's tool and reasoning parser, for the fix a markup finding gives."""
    agent = target.agent
    last = chain[-1]
    if not last.probe.kind.endswith("-2"):
        return _first_turn_only(target, last, parsers)
    first = read_turn(chain[-2])
    if last.error:
        return _skip(agent, "turn 2 got no answer" + (" within the deadline" if last.error == "timeout" else ""),
                     f"{last.error}: {last.detail}")  # fmt: skip
    status = last.status or 0
    if status >= 400:
        message = error_message(last.body) or " ".join(last.body.split())[:200]
        if REASONING_REQUIRED.search(message):
            return _reasoning_dropped(target, f"turn 2: HTTP {status}: {message}")
        return _skip(agent, f"turn 2 was refused (HTTP {status}), for another reason", message)
    turn = read_turn(last)
    if found := markup(turn.text):
        return _markup(target, f"turn 2's text holds {found!r}", parsers)
    if turn.finish in STOPPED and not turn.text.strip() and turn.call is None and first.reasoning:
        # Only where turn 1 reasoned (a field the server split off): then the agent had reasoning to keep or drop,
        # and a model that stops with nothing after the tool's result is the failure the field reports name.
        said = f"finish {turn.finish!r}, no text, no tool call" + (" (reasoning only)" if turn.reasoning else "")
        return _early_stop(target, f"turn 2: {said}; turn 1 reasoned in `{first.reasoning_field}`")
    went_on = "a tool call" if turn.call else "text" if turn.text.strip() else f"finish {turn.finish or 'not yet'}"
    return Finding(
        "thinking-tools",
        PASS,
        agent,
        f"a tool turn goes on after the tool's result, with the history {agent} replays ({went_on})",
    )


def _first_turn_only(target: Target, last: Result, parsers: tuple[str | None, str | None]) -> Finding:
    agent = target.agent
    if last.error:
        return _skip(agent, "turn 1 got no answer" + (" within the deadline" if last.error == "timeout" else ""),
                     f"{last.error}: {last.detail}")  # fmt: skip
    if (last.status or 0) >= 400:
        message = error_message(last.body) or " ".join(last.body.split())[:200]
        return _skip(agent, f"turn 1 was refused (HTTP {last.status})", message)
    turn = read_turn(last)
    if found := markup(turn.text):
        return _markup(target, f"turn 1's text holds {found!r} instead of a tool call", parsers)
    return _skip(agent, "the model made no tool call in turn 1", f"finish {turn.finish!r}")


def _skip(agent: str, why: str, evidence: str) -> Finding:
    return Finding(
        "thinking-tools",
        SKIP,
        agent,
        f"the two-turn tool probe could not check the thinking model's tool turns: {why}",
        evidence,
        hint="run doctor again with a longer --timeout if the model is slow to answer",
    )


THINKING_OFF = '`chat_template_kwargs: {"thinking": false}` on vLLM'


def advice(agent: str) -> str:
    """How to keep `agent`'s tool turns working with a thinking model (issue 28: the field reports' fixes)."""
    # agentcfg's route (LiteLLM) does not replay reasoning: named as not doing it, so no one tries it for this
    router = (
        f"put a proxy in front of {agent} that passes the reasoning back (cc-switch's proxy does since 3.15; "
        "agentcfg's route does not)"
    )
    return AGENTS[agent].reasoning_advice(router, THINKING_OFF)


def _reasoning_dropped(target: Target, evidence: str) -> Finding:
    agent = target.agent
    who = (
        f"{agent} does not pass the model's reasoning back after a tool call"
        if not AGENTS[agent].TRAITS.replays_reasoning
        else f"the reasoning {agent} passes back after a tool call is not what the server reads"
    )
    return Finding(
        "thinking-reasoning-dropped",
        FAIL,
        agent,
        f"{who}, and {target.base_url} requires it in thinking mode: every turn after a tool call is refused",
        evidence,
        hint=advice(agent),
    )


def _early_stop(target: Target, evidence: str) -> Finding:
    agent = target.agent
    return Finding(
        "thinking-early-stop",
        FAIL,
        agent,
        f"after a tool's result the thinking model stops with no answer and no tool call: {agent} ends the task "
        "silently (the reasoning of the tool turn "
        + ("is dropped" if not AGENTS[agent].TRAITS.replays_reasoning else "does not reach the model")
        + ")",
        evidence,
        hint=advice(agent),
    )


def _markup(target: Target, evidence: str, parsers: tuple[str | None, str | None]) -> Finding:
    tool, reasoning = parsers
    flags = " ".join(
        f"{name} {value}" for name, value in (("--tool-call-parser", tool), ("--reasoning-parser", reasoning)) if value
    )
    return Finding(
        "thinking-tool-markup",
        FAIL,
        target.agent,
        f"the model writes its tool call as text: {target.agent} shows the markup and never runs the tool",
        evidence,
        hint=(
            f"restart vLLM with --enable-auto-tool-choice {flags} (the parsers of {target.model}'s family)"
            if flags
            else "restart vLLM with --enable-auto-tool-choice and the --tool-call-parser and --reasoning-parser "
            "of your model's family (vLLM's tool calling and reasoning docs)"
        ),
    )
