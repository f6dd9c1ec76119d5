"""The test server's `tool` fault finds the tool a test names among a request's tools, in each API's shape."""

from __future__ import annotations

import json

from tests.fault_server import named_call

ECHO = {"message": "hi"}


def test_a_chat_or_messages_tool_is_matched_by_its_name():
    chat = [
        {"type": "function", "function": {"name": "everything_echo"}},
        {"type": "function", "function": {"name": "bash"}},
    ]
    messages = [{"name": "Bash"}, {"name": "mcp__everything__echo", "input_schema": {}}]
    assert named_call(chat, r"everything_echo", ECHO) == ("everything_echo", json.dumps(ECHO), None)
    assert named_call(messages, r"mcp__everything__echo", ECHO) == ("mcp__everything__echo", json.dumps(ECHO), None)
    assert named_call(chat, r"echo", ECHO) is None  # the whole name matches, not a part of it


def test_a_responses_namespace_tool_is_matched_as_namespace__name_and_called_by_its_own_name():
    tools = [
        {"type": "function", "name": "exec_command"},
        {"type": "namespace", "name": "mcp__everything", "tools": [{"type": "function", "name": "echo"}]},
    ]
    assert named_call(tools, r"mcp__everything__echo", ECHO) == ("echo", json.dumps(ECHO), "mcp__everything")
    assert named_call(tools, r"mcp__other__echo", ECHO) is None


def test_a_gemini_declaration_is_matched_by_its_name():
    tools = [{"functionDeclarations": [{"name": "run_shell_command"}, {"name": "mcp_everything_echo"}]}]
    assert named_call(tools, r"mcp_everything_echo", ECHO) == ("mcp_everything_echo", json.dumps(ECHO), None)
