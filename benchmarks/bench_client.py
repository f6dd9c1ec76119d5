#!/usr/bin/env python3
"""Is `agentcfg bench`'s client ever the bottleneck? Its timing error per token, and its top speed.

Starts tests/scheduled_server.py in its own process (so the two do not share a GIL) and drives it
with bench's own runner (agentcfg.bench.runner.request: httpx, incremental SSE, the Record):

1. Paced: one token per chunk every 0.2 ms (5,000 tokens/s). The server notes when it wrote each
   chunk (`time.perf_counter_ns()`; on Linux and macOS the same system-wide monotonic clock as the
   client's `perf_counter()`), and the timing error of every token is the client's arrival time
   minus that. A client that fell behind would show an error growing along the stream.
2. Flat out: the server writes 20,000 chunks as fast as it can. bench's client is compared in the
   same run with a bare httpx reader that only counts chunks (no SSE, no JSON, no timing): the
   ratio is what bench's parsing and bookkeeping cost, and its rate is the ceiling of what it can
   measure.

    python benchmarks/bench_client.py [--requests 10] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agentcfg.bench.measure import STREAM  # noqa: E402
from agentcfg.bench.runner import Target, request  # noqa: E402
from agentcfg.bench.stats import percentile  # noqa: E402
from agentcfg.bench.summary import Settings  # noqa: E402
from tests.scheduled_server import MODEL  # noqa: E402

PACED_ITL = 0.0002  # 5,000 tokens/s
PACED_TOKENS = 2000
FLAT_TOKENS = 20000


class Server:
    """tests/scheduled_server.py in a process of its own."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.scheduled_server", *args], cwd=REPO, stdout=subprocess.PIPE, text=True
        )
        port = int(self.process.stdout.readline())
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def sends(self) -> list[list[int]]:
        import httpx

        return httpx.get(self.base_url.removesuffix("/v1") + "/debug/sends", timeout=10).json()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(5)


async def measured(base_url: str, requests: int, tokens: int) -> tuple[list[Any], float]:
    """Requests one at a time through bench's own request path; returns the records and the CPU used."""
    import httpx

    settings = Settings(requests=requests, max_tokens=tokens, prompt_tokens=32, timeout=120)
    target = Target("bench", base_url, MODEL)
    async with httpx.AsyncClient(trust_env=False, timeout=120) as client:
        await request(client, target, STREAM, -1, settings, False, 8)  # warm-up: a pooled connection
        cpu = time.process_time()
        records = [await request(client, target, STREAM, i, settings, False, tokens) for i in range(requests)]
        return records, time.process_time() - cpu


async def bare(base_url: str, requests: int, tokens: int) -> float:
    """A reader that only counts chunks: the fastest an httpx client gets the same stream. Tokens/s."""
    import httpx

    body = {"model": MODEL, "messages": [{"role": "user", "content": "x"}], "max_tokens": tokens, "stream": True}
    rates = []
    async with httpx.AsyncClient(trust_env=False, timeout=120) as client:
        for _ in range(requests + 1):  # the first one warms the connection up
            started = time.perf_counter()
            async with client.stream("POST", base_url + "/chat/completions", json=body) as response:
                count = 0
                async for chunk in response.aiter_bytes():
                    count += chunk.count(b"data: ")
            rates.append((count - 3) / (time.perf_counter() - started))  # role, finish/usage, [DONE]
    return statistics.median(rates[1:])


def paced(requests: int) -> dict[str, float]:
    with Server("--ttft", "0", "--itl", str(PACED_ITL)) as server:
        records, cpu = asyncio.run(measured(server.base_url, requests, PACED_TOKENS))
        sends = server.sends()[1:]  # the first is the warm-up
    errors, gaps = [], []
    for record, sent in zip(records, sends, strict=True):
        assert record.ok and len(record.token_times) == len(sent) == PACED_TOKENS, record.error
        errors += [(arrived - ns / 1e9) * 1000 for arrived, ns in zip(record.token_times, sent, strict=True)]
        gaps += [gap * 1000 for gap in record.itl]
    errors.sort()
    tokens = sum(r.output_tokens for r in records)
    return {
        "target_tok_s": 1 / PACED_ITL,
        "decode_tok_s": statistics.median(r.decode_tok_s for r in records),
        "itl_median_ms": statistics.median(gaps),
        "error_median_ms": percentile(errors, 50),
        "error_p99_ms": percentile(errors, 99),
        "error_max_ms": errors[-1],
        "under_1ms_share": sum(e < 1.0 for e in errors) / len(errors),
        "client_cpu_us_per_token": cpu / tokens * 1e6,
    }


def flat_out(requests: int) -> dict[str, float]:
    with Server("--ttft", "0", "--itl", "0") as server:
        records, cpu = asyncio.run(measured(server.base_url, requests, FLAT_TOKENS))
        baseline = asyncio.run(bare(server.base_url, requests, FLAT_TOKENS))
    rate = statistics.median(r.output_tokens / r.e2e for r in records)
    return {
        "bench_tok_s": rate,
        "bare_httpx_tok_s": baseline,
        "ratio": rate / baseline,
        "client_cpu_us_per_token": cpu / sum(r.output_tokens for r in records) * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    result = {"paced": paced(args.requests), "flat_out": flat_out(args.requests)}
    result["load_average"] = {"before": load, "after": os.getloadavg()[0]}  # a busy machine shows in the errors
    if args.json:
        print(json.dumps({"requests": args.requests, **result}, indent=2))
        return
    p, f = result["paced"], result["flat_out"]
    load = result["load_average"]
    print(f"{args.requests} streamed requests each, one token per chunk, server in its own process")
    print(f"load average {load['before']:.2f} before, {load['after']:.2f} after ({os.cpu_count()} cores)")
    print(f"paced at {p['target_tok_s']:,.0f} tok/s ({PACED_TOKENS} tokens per request):")
    print(f"  bench measured          {p['decode_tok_s']:>9,.0f} tok/s, median ITL {p['itl_median_ms']:.3f} ms")
    print(
        f"  timing error per token  median {p['error_median_ms']:.3f} ms, p99 {p['error_p99_ms']:.3f} ms, "
        f"max {p['error_max_ms']:.3f} ms; {p['under_1ms_share']:.2%} of tokens under 1 ms"
    )
    print(f"  client CPU              {p['client_cpu_us_per_token']:.1f} µs per token")
    print(f"flat out ({FLAT_TOKENS:,} tokens per request):")
    cpu = f["client_cpu_us_per_token"]
    print(f"  bench's client          {f['bench_tok_s']:>9,.0f} tok/s, {cpu:.1f} µs CPU per token")
    print(f"  bare httpx reader       {f['bare_httpx_tok_s']:>9,.0f} tok/s")
    print(f"  ratio                   {f['ratio']:>9.2f}")


if __name__ == "__main__":
    main()
