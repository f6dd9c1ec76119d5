"""The --json schemas of schemas/cli/, with their agent enums read from (and, for an agent a test registers,
extended by) the registry: test_registry.py holds each enum in the files to agentcfg.agents.AGENTS."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from agentcfg.agents import AGENTS
from tests.conftest import REPO

SCHEMAS = REPO / "schemas" / "cli"


def _is_agent_enum(node: dict) -> bool:
    enum = node.get("enum")
    return isinstance(enum, list) and bool(enum) and all(isinstance(v, str) and v in AGENTS for v in enum)


def _walk(node: Any) -> list[dict]:
    if isinstance(node, list):
        return [found for item in node for found in _walk(item)]
    if not isinstance(node, dict):
        return []
    return ([node] if _is_agent_enum(node) else []) + [found for value in node.values() for found in _walk(value)]


def agent_enums(schema: Path | dict) -> list[list[str]]:
    """Every enum in a schema whose values are all agent names (the registry's, as it is now)."""
    doc = json.loads(schema.read_text()) if isinstance(schema, Path) else schema
    return [node["enum"] for node in _walk(doc)]


def schema(command: str) -> dict:
    """schemas/cli/COMMAND.schema.json with each agent enum made the registry's names as they are now (a test's
    synthetic agent included)."""
    doc = json.loads((SCHEMAS / f"{command}.schema.json").read_text())
    for node in _walk(doc):
        node["enum"] = list(AGENTS)
    return doc


def validate(command: str, document: object) -> None:
    jsonschema.Draft202012Validator(schema(command)).validate(document)
