"""The MCP members of an agent whose servers are in the `mcpServers` dialect (agents/mcpservers.py), made once
here: each such agent keeps only its Spec (agents/<agent>/mcp.py, SPEC) and where its file is.

A module of its own, importing nothing at load: every command loads every agent module, and mcpservers (which
imports agents/base.py) loads only when an MCP format is needed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentcfg import env

if TYPE_CHECKING:
    from agentcfg.agents.base import FileEdit, Texts
    from agentcfg.mcp.model import Found, McpServer


def members(
    agent: str,
) -> tuple[
    Callable[[Texts, env.Environ], list[Found]], Callable[[Mapping[str, McpServer | None], Texts], list[FileEdit]]
]:
    """`mcp_read` and `mcp_edits` of an agent whose MCP servers are in the `mcpServers` dialect: agents/mcpservers.py
    with the Spec its agents/<agent>/mcp.py holds as SPEC. Both are imported on first use (every command loads every
    agent module, few need an MCP format)."""

    def spec() -> Any:
        import importlib

        return importlib.import_module(f"agentcfg.agents.{agent}.mcp").SPEC

    def mcp_read(current: Texts, environ: env.Environ) -> list[Found]:
        from agentcfg.agents import mcpservers  # lazy: as spec()

        return mcpservers.read(spec(), current, environ)

    def mcp_edits(servers: Mapping[str, McpServer | None], current: Texts) -> list[FileEdit]:
        from agentcfg.agents import mcpservers  # lazy: as spec()

        return mcpservers.edits(spec(), servers, current)

    return mcp_read, mcp_edits
