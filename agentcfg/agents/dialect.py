"""An agent's MCP members, made once here: its format lives in agents/<agent>/mcp.py, imported on first use.

That module holds either its own `mcp_read` and `mcp_edits` (Codex, opencode), or a `SPEC` of the `mcpServers`
dialect that agents/mcpservers.py reads and edits (the other agents). A module of its own, importing nothing at
load: every command loads every agent module, and few need an MCP format."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING

from agentcfg import env

if TYPE_CHECKING:
    from agentcfg.agents.base import FileEdit, Texts
    from agentcfg.mcp.model import Found, McpServer


def members(
    agent: str,
) -> tuple[
    Callable[[Texts, env.Environ], list[Found]], Callable[[Mapping[str, McpServer | None], Texts], list[FileEdit]]
]:
    """`mcp_read` and `mcp_edits` of `agent` (the Agent interface's), from agents/<agent>/mcp.py."""

    def format_module() -> ModuleType:
        import importlib

        return importlib.import_module(f"agentcfg.agents.{agent}.mcp")

    def mcp_read(current: Texts, environ: env.Environ) -> list[Found]:
        found = format_module()
        if not hasattr(found, "SPEC"):
            return found.mcp_read(current, environ)
        from agentcfg.agents import mcpservers  # lazy: as format_module()

        return mcpservers.read(found.SPEC, current, environ)

    def mcp_edits(servers: Mapping[str, McpServer | None], current: Texts) -> list[FileEdit]:
        found = format_module()
        if not hasattr(found, "SPEC"):
            return found.mcp_edits(servers, current)
        from agentcfg.agents import mcpservers  # lazy: as format_module()

        return mcpservers.edits(found.SPEC, servers, current)

    return mcp_read, mcp_edits
