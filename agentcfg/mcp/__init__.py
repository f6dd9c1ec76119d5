"""MCP servers across agents: agentcfg's set (store), the model every agent's format is made from and read
back into (model), and the commands that add, import, sync and remove them (ops). Each agent's own format lives
in its agent module (`mcp_files`, `mcp_read`, `mcp_edits`: agents/base.py)."""
