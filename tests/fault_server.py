"""A small OpenAI/Anthropic-compatible server on 127.0.0.1 that plays one fault on purpose.

Answers are shaped like the captures of real vLLM 0.32 in ../shared/fixtures (error bodies, SSE
framing, `max_model_len` in /v1/models). Faults:

    healthy          everything works (a key is checked when `key` is given, as vLLM --api-key does)
    no-tool-parser   chat requests with tools get vLLM's 400; /responses answers plain text (as vLLM does)
    html             every path answers 200 with an HTML page (a reverse proxy's error page)
    no-choices       chat answers 200 JSON without `choices`, streams answer plain JSON
    broken-sse       streams send `data:` lines that are not JSON and never finish
    long-answer      streams answer at length: LONG_ANSWER bytes of text deltas, more than doctor reads
    no-responses     /v1/responses does not exist (404 {"detail": "Not Found"})
    oauth-expired    /v1/messages answers Anthropic's 401 "OAuth token has expired"
    no-v1            the API lives at / instead of /v1 (so a base URL with /v1 gets 404s)

The Gemini API a router serves (LiteLLM's /v1beta/models/MODEL:streamGenerateContent, the key in x-goog-api-key)
is answered too, healthy or with the shell fault (html and broken-sse as for the others).
    shell            the first turn calls the agent's shell tool (found by name among the request's tools)
                     with `command`; the turn after the tool's result answers "ready": what the model's
                     command printed then comes back in that request (FaultServer.tool_outputs)
    tool             the same with the tool the test names, `FaultServer("tool", tool=(PATTERN, ARGUMENTS))`: the
                     first of the request's tools whose name matches PATTERN (re.fullmatch; a tool inside a
                     Responses `namespace` tool, as Codex sends an MCP server's, is matched as NAMESPACE__NAME)

A thinking model with tools (doctor's two-turn probe): a request that forces a tool call gets one, after
reasoning (chat `reasoning`, a Responses reasoning item, a Messages thinking block); the turn after the tool's
result, when its history lacks that reasoning (`reasoning_field`: the chat field the server reads, None: it
reads none), plays the fault; with the reasoning it answers "ready":

    thinking         always "ready" (a healthy server)
    thinking-400     DeepSeek's 400 "The `reasoning_content` in the thinking mode must be passed back"
    thinking-stop    an early stop: reasoning, then finish_reason stop with no text and no tool call
    thinking-dsml    the tool call as DSML text in the answer
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "DeepSeek-V4-Flash"
LONG_ANSWER = 1_500_000  # bytes of a long answer's stream: over 1 MB, more than doctor reads of any answer


def chat_chunks(model: str, text: str, repeat: int = 1) -> list[dict[str, Any]]:
    """A complete chat stream as vLLM sends it: role, content (`repeat` chunks of it), finish_reason, then usage."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1796001113, "model": model}
    return [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
        *[{**base, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}] * repeat,
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {**base, "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13}},
    ]


def responses_events(model: str, text: str, repeat: int = 1) -> list[dict[str, Any]]:
    """A complete Responses stream (the event types vLLM 0.32 sends, in its order); `repeat` text deltas."""
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    done_item = {**item, "status": "completed", "content": [{**part, "text": text * repeat}]}
    response = {"id": "resp_1", "object": "response", "model": model, "status": "in_progress", "output": []}
    usage = {
        "input_tokens": 12,
        "output_tokens": 1,
        "total_tokens": 13,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    where = {"output_index": 0, "content_index": 0, "item_id": "msg_1"}
    events = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", **where, "part": part},
        *[{"type": "response.output_text.delta", **where, "delta": text, "logprobs": []}] * repeat,
        {"type": "response.output_text.done", **where, "text": text * repeat, "logprobs": []},
        {"type": "response.content_part.done", **where, "part": {**part, "text": text * repeat}},
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [done_item], "usage": usage},
        },
    ]
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


def messages_events(model: str, text: str, repeat: int = 1) -> list[dict[str, Any]]:
    """A complete Anthropic Messages stream; `repeat` text deltas."""
    usage = {"input_tokens": 12, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *[{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}] * repeat,
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_stop"},
    ]


# The shell tool of each agent as it names it, with the arguments it takes (seen in their requests: Codex 0.171
# `exec_command`, qwen-code `run_shell_command` (with --yolo), opencode `bash`, Claude Code `Bash`, Cline CLI 3.0.65
# `run_commands`, Droid `Execute`).
SHELL_TOOLS: dict[str, Callable[[str], dict[str, Any]]] = {
    "exec_command": lambda command: {"cmd": command},
    "shell_command": lambda command: {"command": command},
    "shell": lambda command: {"command": ["bash", "-lc", command]},
    "run_shell_command": lambda command: {"command": command, "is_background": False},
    "bash": lambda command: {"command": command, "description": "Prints the environment"},
    "Bash": lambda command: {"command": command, "description": "Prints the environment"},
    "run_commands": lambda command: {"commands": [command]},
    # Droid 0.225's `Execute`: a summary of 3-8 words and a risk level are required
    "Execute": lambda command: {
        "summary": "Print the whole environment",
        "command": command,
        "riskLevelReason": "It only prints the environment.",
        "riskLevel": "low",
    },
}


def _tool_names(tools: object) -> list[str]:
    names = []
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict):
            function = tool.get("function")
            names.append(str(tool.get("name") or (function.get("name") if isinstance(function, dict) else "")))
    return names


def shell_call(tools: object, command: str) -> tuple[str, str] | None:
    """(tool name, JSON arguments) of the call that runs `command` with the shell tool among `tools`."""
    name = next((n for n in _tool_names(tools) if n in SHELL_TOOLS), None)
    return (name, json.dumps(SHELL_TOOLS[name](command))) if name else None


def named_call(tools: object, pattern: str, arguments: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """(name, JSON arguments, namespace) of the call of the first tool among `tools` whose name matches
    `pattern`: function tools (chat, Responses, Messages, Gemini's declarations) by their name, the tools of
    a Responses `namespace` tool as NAMESPACE__NAME (their call carries the namespace apart)."""
    found: list[tuple[str, str, str | None]] = [(name, name, None) for name in _tool_names(tools)]
    found += [(name, name, None) for name in gemini_tools(tools)]
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict) and tool.get("type") == "namespace":
            space = str(tool.get("name"))
            found += [(f"{space}__{n}", n, space) for n in _tool_names(tool.get("tools"))]
    for qualified, name, space in found:
        if re.fullmatch(pattern, qualified):
            return name, json.dumps(arguments), space
    return None


def chat_tool_chunks(model: str, name: str, arguments: str) -> list[dict[str, Any]]:
    base = {"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1796001113, "model": model}
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": ""}}
    return [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]},
        {
            **base,
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]},
                    "finish_reason": None,
                }
            ],
        },
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {**base, "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13}},
    ]


def responses_tool_events(model: str, name: str, arguments: str, namespace: str | None = None) -> list[dict[str, Any]]:
    item = {"id": "fc_1", "type": "function_call", "status": "in_progress", "call_id": "call_1", "name": name,
            "arguments": "", **({"namespace": namespace} if namespace else {})}  # fmt: skip
    done = {**item, "status": "completed", "arguments": arguments}
    response = {"id": "resp_2", "object": "response", "model": model, "status": "in_progress", "output": []}
    usage = {"input_tokens": 12, "output_tokens": 1, "total_tokens": 13, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens_details": {"reasoning_tokens": 0}}  # fmt: skip
    where = {"output_index": 0, "item_id": "fc_1"}
    events = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.function_call_arguments.delta", **where, "delta": arguments},
        {"type": "response.function_call_arguments.done", **where, "arguments": arguments},
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [done], "usage": usage},
        },
    ]
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


def messages_tool_events(model: str, name: str, arguments: str) -> list[dict[str, Any]]:
    first = messages_events(model, "")[0]
    block = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
    return [
        first,
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": arguments}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_stop"},
    ]


THINKING = ("thinking", "thinking-400", "thinking-stop", "thinking-dsml")
REASONING = "The user wants README.md read: call read_file."
REASONING_REQUIRED = "The `reasoning_content` in the thinking mode must be passed back to the API."
DSML = (
    '<｜DSML｜function_calls>\n<｜DSML｜invoke name="read_file">\n<｜DSML｜parameter name="path" string="true">'
    "README.md</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"
)


def forced(body: dict[str, Any]) -> bool:
    """Whether the request forces a tool call (vLLM answers one through guided decoding then)."""
    choice = body.get("tool_choice")
    return bool(body.get("tools")) and (
        choice == "required" or (isinstance(choice, dict) and choice.get("type") in ("any", "tool", "function"))
    )


def replays_reasoning(body: dict[str, Any], field: str | None) -> bool:
    """Whether the history passes the model's reasoning back: the chat `field`, a Responses reasoning item with
    its text, a Messages thinking block. `field` None: the server reads no reasoning at all."""
    if field is None:
        return False
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "assistant":
            if message.get(field):
                return True
            content = message.get("content")
            if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "thinking" for b in content):
                return True
    items = body.get("input") if isinstance(body.get("input"), list) else []
    return any(isinstance(i, dict) and i.get("type") == "reasoning" and i.get("content") for i in items)


def thinking_chat_chunks(model: str, name: str, arguments: str) -> list[dict[str, Any]]:
    """Reasoning (in vLLM's `reasoning` field), then the tool call."""
    chunks = chat_tool_chunks(model, name, arguments)
    thought = {**chunks[0], "choices": [{"index": 0, "delta": {"reasoning": REASONING}, "finish_reason": None}]}
    return [chunks[0], thought, *chunks[1:]]


def stop_chat_chunks(model: str) -> list[dict[str, Any]]:
    """Reasoning, then finish_reason stop: no text, no tool call."""
    chunks = chat_chunks(model, "")
    thought = {**chunks[0], "choices": [{"index": 0, "delta": {"reasoning": "Done."}, "finish_reason": None}]}
    return [chunks[0], thought, *chunks[2:]]


def thinking_responses_events(model: str, name: str, arguments: str) -> list[dict[str, Any]]:
    events = responses_tool_events(model, name, arguments)
    item = {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": REASONING}],
    }
    reasoning = [
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {"type": "response.reasoning_text.delta", "output_index": 0, "item_id": "rs_1", "delta": REASONING},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
    ]
    ordered = [*events[:2], *reasoning, *events[2:]]
    return [{**event, "sequence_number": n} for n, event in enumerate(ordered)]


def stop_responses_events(model: str) -> list[dict[str, Any]]:
    events = responses_events(model, "")
    done = {**events[-1], "response": {**events[-1]["response"], "output": []}}
    return [{**event, "sequence_number": n} for n, event in enumerate([*events[:2], done])]


def thinking_messages_events(model: str, name: str, arguments: str) -> list[dict[str, Any]]:
    events = messages_tool_events(model, name, arguments)
    thinking = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": REASONING}},
        {"type": "content_block_stop", "index": 0},
    ]
    shifted = [{**e, "index": 1} if "index" in e else e for e in events[1:]]
    return [events[0], *thinking, *shifted]


def stop_messages_events(model: str) -> list[dict[str, Any]]:
    events = messages_events(model, "")
    thinking = {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "Done."}}
    return [events[0], thinking, {"type": "content_block_stop", "index": 0}, *events[-2:]]


def tool_outputs(body: object) -> list[str]:
    """What tool results a request carries back (chat `tool` messages, Responses `function_call_output`
    items, Messages `tool_result` blocks), as text."""
    if not isinstance(body, dict):
        return []
    found: list[str] = []
    for item in [*body.get("messages", []), *(body.get("input") if isinstance(body.get("input"), list) else [])]:
        if not isinstance(item, dict):
            continue
        if item.get("role") == "tool" or item.get("type") == "function_call_output":
            found.append(json.dumps(item.get("content", item.get("output"))))
        content = item.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.append(json.dumps(block.get("content")))
    return found


def gemini_chunk(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One chunk of a Gemini API stream (as LiteLLM's Gemini endpoint sends them), finished."""
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 1, "totalTokenCount": 13},
    }


def gemini_tools(tools: object) -> list[str]:
    """The function names of a Gemini API request's `tools` ({functionDeclarations: [...]})."""
    return [
        str(d.get("name"))
        for tool in (tools if isinstance(tools, list) else [])
        if isinstance(tool, dict)
        for d in tool.get("functionDeclarations") or []
        if isinstance(d, dict)
    ]


def gemini_outputs(body: object) -> list[str]:
    """The function responses a Gemini API request carries back, as text."""
    contents = body.get("contents") if isinstance(body, dict) else None
    return [
        json.dumps(part["functionResponse"].get("response"))
        for content in (contents if isinstance(contents, list) else [])
        if isinstance(content, dict)
        for part in content.get("parts") or []
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)
    ]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def handle(self) -> None:
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):  # a client that stopped reading and left
            super().handle()

    # -- helpers --------------------------------------------------------------------------------------

    def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else (json.dumps(body) if not isinstance(body, str) else body).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, lines: list[str]) -> None:
        data = "".join(lines).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a client that read what it wanted
            self.wfile.write(data)

    @property
    def _repeat(self) -> int:
        """How many text deltas a stream sends: one, or (long-answer) more than LONG_ANSWER bytes of them."""
        return LONG_ANSWER // 100 + 1 if self.server.fault == "long-answer" else 1  # each is over 100 bytes

    def _error(self, status: int, message: str, kind: str = "BadRequestError") -> None:
        self._send(status, {"error": {"message": message, "type": kind, "param": None, "code": status}})

    # -- routing --------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._route("GET", None)

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        self._route("POST", body)

    def _route(self, method: str, body: Any) -> None:
        srv, fault = self.server, self.server.fault
        srv.requests.append((method, self.path, dict(self.headers), body))
        if fault == "html":
            self._send(200, "<!DOCTYPE html><html><body>Bad gateway</body></html>", "text/html")
            return
        path = self.path.split("?")[0]
        if path.startswith("/v1beta/models/") and method == "POST":
            self._generate(path.removeprefix("/v1beta/models/"), body)
            return
        prefix = "" if fault == "no-v1" else "/v1"
        if not path.startswith(prefix + "/") or (prefix == "" and path.startswith("/v1/")):
            self._send(404, {"detail": "Not Found"})
            return
        path = path[len(prefix) :]
        if srv.key is not None and self.headers.get("authorization") != f"Bearer {srv.key}":
            self._send(401, {"error": "Unauthorized"})
            return
        if method == "GET" and path == "/models":
            self._send(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": srv.model, "object": "model", "owned_by": "vllm", "max_model_len": srv.max_model_len}
                    ],
                },
            )
            return
        if method != "POST":
            self._send(404, {"detail": "Not Found"})
            return
        if path == "/messages":
            self._messages(body)
            return
        model = body.get("model")
        if model != srv.model:
            self._error(404, f"The model `{model}` does not exist. Valid aliases: {srv.model}.", "NotFoundError")
            return
        if path == "/chat/completions":
            self._chat(body)
        elif path == "/responses":
            self._responses(body)
        else:
            self._send(404, {"detail": "Not Found"})

    def _chat(self, body: dict[str, Any]) -> None:
        fault = self.server.fault
        if fault == "no-tool-parser" and body.get("tools"):
            self._error(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')
            return
        if isinstance(body.get("max_tokens"), int) and body["max_tokens"] > self.server.max_model_len:
            self._error(
                400,
                f"max_tokens={body['max_tokens']} cannot be greater than max_model_len="
                f"{self.server.max_model_len}. Please request fewer output tokens.",
            )
            return
        if fault == "no-choices":
            self._send(200, {"id": "x", "object": "chat.completion", "result": "ready"})
            return
        if not body.get("stream"):
            self._send(
                200,
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": "ready"}, "finish_reason": "stop"}
                    ],
                },
            )
            return
        if fault == "broken-sse":
            self._stream(["data: {not json\n\n", 'data: {"choices": [\n\n'])
            return
        chunks = chat_chunks(body["model"], "ready", self._repeat)
        if call := self._shell_call(body):
            chunks = chat_tool_chunks(body["model"], *call[:2])
        elif play := self._thinking(body):
            if play == "400":
                self._error(400, REASONING_REQUIRED, "invalid_request_error")
                return
            chunks = {
                "call": lambda: thinking_chat_chunks(body["model"], *self._forced_call(body)),
                "stop": lambda: stop_chat_chunks(body["model"]),
                "dsml": lambda: chat_chunks(body["model"], DSML),
            }[play]()
        self._stream([f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"])

    def _responses(self, body: dict[str, Any]) -> None:
        fault = self.server.fault
        if fault == "no-responses":
            self._send(404, {"detail": "Not Found"})
            return
        if fault == "no-choices":
            self._send(200, {"id": "resp_1", "status": "completed"})
            return
        if fault == "broken-sse":
            self._stream(["event: response.created\n", "data: nonsense\n\n"])
            return
        events = responses_events(body["model"], "ready", self._repeat)
        if call := self._shell_call(body):
            events = responses_tool_events(body["model"], *call)
        elif play := self._thinking(body):
            if play == "400":
                self._error(400, REASONING_REQUIRED.replace("reasoning_content", "reasoning_text"))
                return
            events = {
                "call": lambda: thinking_responses_events(body["model"], *self._forced_call(body)),
                "stop": lambda: stop_responses_events(body["model"]),
                "dsml": lambda: responses_events(body["model"], DSML),
            }[play]()
        self._stream([f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events])

    def _messages(self, body: dict[str, Any]) -> None:
        fault = self.server.fault
        if fault == "oauth-expired":
            self._send(
                401,
                {
                    "type": "error",
                    "error": {
                        "type": "authentication_error",
                        "message": "OAuth token has expired. Please obtain a new token or refresh your existing token.",
                    },
                },
            )
            return
        if fault == "no-tool-parser" and body.get("tools"):
            self._error(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')
            return
        if body.get("model") != self.server.model:
            self._error(404, f"The model `{body.get('model')}` does not exist.", "NotFoundError")
            return
        if fault == "broken-sse":
            self._stream(["event: message_start\n", "data: {oops\n\n"])
            return
        events = messages_events(body["model"], "ready", self._repeat)
        if call := self._shell_call(body):
            events = messages_tool_events(body["model"], *call[:2])
        elif play := self._thinking(body):
            if play == "400":
                self._send(
                    400, {"type": "error", "error": {"type": "invalid_request_error", "message": REASONING_REQUIRED}}
                )
                return
            events = {
                "call": lambda: thinking_messages_events(body["model"], *self._forced_call(body)),
                "stop": lambda: stop_messages_events(body["model"]),
                "dsml": lambda: messages_events(body["model"], DSML),
            }[play]()
        self._stream([f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events])

    def _generate(self, target: str, body: dict[str, Any]) -> None:
        """The Gemini API, as a router serves it: MODEL:streamGenerateContent (SSE) or MODEL:generateContent."""
        srv, fault = self.server, self.server.fault
        model, _, method = target.partition(":")
        if srv.key is not None and self.headers.get("x-goog-api-key") != srv.key:
            self._send(401, {"error": {"code": 401, "message": "Unauthorized", "status": "UNAUTHENTICATED"}})
            return
        if model != srv.model:
            self._send(400, {"error": {"code": 400, "message": f"Invalid model name passed in model={model}"}})
            return
        parts: list[dict[str, Any]] = [{"text": "ready"}]
        shell = next((n for n in gemini_tools(body.get("tools")) if n in SHELL_TOOLS), None)
        if fault == "shell" and shell and not gemini_outputs(body):
            parts = [{"functionCall": {"name": shell, "args": SHELL_TOOLS[shell](srv.command)}}]
        if fault == "tool" and srv.tool and not gemini_outputs(body):
            named = next((n for n in gemini_tools(body.get("tools")) if re.fullmatch(srv.tool[0], n)), None)
            parts = [{"functionCall": {"name": named, "args": srv.tool[1]}}] if named else parts
        if method == "generateContent":
            self._send(200, gemini_chunk(parts))
        elif fault == "broken-sse":
            self._stream(["data: {oops\n\n"])
        else:
            self._stream([f"data: {json.dumps(gemini_chunk(parts))}\r\n\r\n"])

    def _thinking(self, body: dict[str, Any]) -> str | None:
        """What a thinking fault plays for this request: "call" (turn 1, forced), or for a turn after a tool's
        result whose history lacks the reasoning "400", "stop" or "dsml"; None: the usual answer."""
        fault = self.server.fault
        if fault not in THINKING:
            return None
        if not tool_outputs(body):
            return "call" if forced(body) else None
        if fault == "thinking" or replays_reasoning(body, self.server.reasoning_field):
            return None
        return fault.removeprefix("thinking-")

    def _forced_call(self, body: dict[str, Any]) -> tuple[str, str]:
        names = _tool_names(body.get("tools"))
        return (names[0] if names else "read_file"), json.dumps({"path": "README.md"})

    def _shell_call(self, body: dict[str, Any]) -> tuple[str, str, str | None] | None:
        """The tool call the `shell` and `tool` faults answer a turn with, (name, JSON arguments, Responses
        namespace); none once a tool's result came back."""
        srv = self.server
        if srv.fault not in ("shell", "tool") or tool_outputs(body):
            return None
        if srv.fault == "tool":
            return named_call(body.get("tools"), *srv.tool) if srv.tool else None
        call = shell_call(body.get("tools"), srv.command)
        return (*call, None) if call else None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # socketserver's default of 5 drops concurrent connects: 1 s SYN retries

    def __init__(self, fault: str, key: str | None, model: str, max_model_len: int, command: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fault, self.key, self.model, self.max_model_len = fault, key, model, max_model_len
        self.command = command
        self.tool: tuple[str, dict[str, Any]] | None = None  # the `tool` fault's (name pattern, arguments)
        self.reasoning_field: str | None = "reasoning_content"  # what a thinking fault reads back (None: nothing)
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []


class FaultServer:
    """`with FaultServer("no-tool-parser") as server: server.base_url` (http://127.0.0.1:PORT/v1)."""

    def __init__(
        self,
        fault: str = "healthy",
        *,
        key: str | None = None,
        model: str = MODEL,
        max_model_len: int = 1_048_576,
        command: str = "env",
        reasoning_field: str | None = "reasoning_content",
        tool: tuple[str, dict[str, Any]] | None = None,
    ) -> None:
        self._server = _Server(fault, key, model, max_model_len, command)
        self._server.tool = tool
        self._server.reasoning_field = reasoning_field
        self.port = self._server.server_address[1]
        self.root = f"http://127.0.0.1:{self.port}"
        self.base_url = self.root + ("" if fault == "no-v1" else "/v1")
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def requests(self) -> list[tuple[str, str, dict[str, str], Any]]:
        return self._server.requests

    @property
    def tool_outputs(self) -> list[str]:
        """What the model's commands printed (the `shell` fault) or its tool answered (`tool`), as the agent sent
        it back."""
        return [out for _, _, _, body in self.requests for out in (*tool_outputs(body), *gemini_outputs(body))]

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class BlackHole:
    """Accepts connections and never answers: the endpoint that must not make doctor hang."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.port = self._sock.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        self._sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
                self._held.append(conn)
            except OSError:
                continue

    def __enter__(self) -> BlackHole:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(2)
        for conn in self._held:
            conn.close()
        self._sock.close()


@contextlib.contextmanager
def raw_server(handle: Callable[[socket.socket, threading.Event], None]) -> Iterator[int]:
    """A loopback port whose every connection goes to `handle(conn, stop)` on a thread of its own: for answers
    no HTTP server would send (a trickle, an endless body, bytes nested past any parser's limit)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                handle(conn, stop)
            except OSError:
                pass

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()


def dead_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
