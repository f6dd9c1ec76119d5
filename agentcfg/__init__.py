"""agentcfg: one command to point every coding agent at one provider."""

__version__ = "0.1.0"
