"""`agentcfg bench`: time to first token, inter-token latency and decode rate, streaming and not.

A functional core and one edge. Pure: `stats` (percentiles as vLLM's benchmark computes them),
`sse` (incremental server-sent events), `measure` (what a request sends, and its timings from the
arrival time of each chunk), `metrics` (vLLM's Prometheus histograms, their deltas over a run),
`summary` (figures and warnings per profile and mode: the JSON document) and `render` (table,
histogram, CSV, progress line). The edge: `runner` (httpx, one pool per profile, asyncio).

Nothing here is imported by other commands: `agentcfg switch` never pays for it.
"""
