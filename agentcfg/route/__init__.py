"""`agentcfg route`: a LiteLLM router in front of a primary profile and its fallbacks.

A route is a profile whose endpoint is the router on this machine; its `[route]` table names the legs.
spec.py holds what a route is (pure), litellm.py the config and environment LiteLLM gets (pure), server.py
the LiteLLM process (the only I/O). LiteLLM itself is never imported: it runs as its own process.
"""
