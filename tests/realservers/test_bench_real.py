"""`agentcfg bench` against the real vLLM: the client's figures and vLLM's own /metrics agree on
what happened inside the server, and differ by what HTTP on loopback costs."""

from __future__ import annotations

import time

import pytest

import agentcfg
from tests.conftest import Home
from tests.realservers.bias_proxy import SeparatorProxy, separator_tokens
from tests.realservers.helpers import add_profile
from tests.realservers.peers import VLLM_KEY

pytestmark = pytest.mark.realservers

REQUESTS, TOKENS = 6, 48
SLACK_MS = 2.0  # the two clocks start a hair apart: the client's before sending, vLLM's on arrival
LOOPBACK_MS = 250.0  # HTTP on loopback, with the agents' tests loading both cores meanwhile


def _gaps(bare: dict) -> list[tuple[str, float, float]]:
    """Each mean (client, server) whose gap is outside what HTTP on loopback costs."""
    pairs = [
        (f"{m} e2e", bare[m]["e2e_ms"]["mean"], bare[m]["server"]["e2e_ms"]["mean"]) for m in ("stream", "non_stream")
    ]
    pairs.append(("stream ttft", bare["stream"]["ttft_ms"]["mean"], bare["stream"]["server"]["ttft_ms"]["mean"]))
    return [(what, c, s) for what, c, s in pairs if not s - SLACK_MS <= c <= s + LOOPBACK_MS]


def quiet_run(home: Home) -> dict:
    """A bench run during which nothing else used the server (its /metrics deltas count every
    client's requests) nor held the CPU (vLLM's API server, which writes the first chunk, shares the
    two cores with the agents' tests): wait for a quiet moment, a few times over. A client that adds
    its own latency disagrees every time, and fails."""
    gaps: list[tuple[str, float, float]] = []
    for _ in range(10):
        data = home.json("bench", "bare", "--both", "-n", str(REQUESTS), "--max-tokens", str(TOKENS),
                         "--prompt-tokens", "300", "--timeout", "60")  # fmt: skip
        modes = [data["profiles"]["bare"][m] for m in ("stream", "non_stream")]
        # Both counts: an aborted request of another client's (doctor's probes, cut at their deadline)
        # is not a success, yet vLLM puts its latency into the e2e histogram.
        if all(m["server"] and m["server"]["requests"] == m["server"]["e2e_ms"]["n"] == m["ok"] for m in modes):
            gaps = _gaps(data["profiles"]["bare"])
            if not gaps:
                return data
        time.sleep(20)
    pytest.fail(f"vLLM never had a quiet minute for the bench run; last (client, server) gaps: {gaps}")


def test_bench_client_and_vllm_metrics_agree(home: Home, peers, keyring_file, compat):
    compat(
        tier="realservers", agent="bench", agent_version=f"agentcfg {agentcfg.__version__}",
        server=f"vLLM {peers.vllm_version} (CPU)", case="--enforce-eager: client figures vs vLLM /metrics",
    )  # fmt: skip
    add_profile(home, "bare", peers.vllm_bare, key=VLLM_KEY)
    data = quiet_run(home)
    bare = data["profiles"]["bare"]
    assert data["ok"] and bare["ignore_eos"] is True
    assert bare["metrics_url"] == peers.vllm_bare + "/metrics"
    for mode in ("stream", "non_stream"):
        figures = bare[mode]
        assert figures["ok"] == REQUESTS and figures["failed"] == 0
        # ignore_eos: every answer is exactly max_tokens long, by the server's own count
        assert figures["output_tokens"]["median"] == figures["output_tokens"]["max"] == TOKENS
        assert figures["usage_reported"] == REQUESTS
    assert _gaps(bare) == []  # e2e and TTFT: the client's means within loopback cost of vLLM's
    stream = bare["stream"]
    assert stream["server"]["itl_ms"]["n"] == REQUESTS * (TOKENS - 1)  # vLLM counts every gap
    assert 0 < stream["itl_ms"]["n"] <= REQUESTS * (TOKENS - 1)  # the client sees chunks, some holding several
    assert bare["stream_vs_non_stream"]["e2e_ms"] > 0
    assert VLLM_KEY not in str(data)


def test_bench_completes_on_a_stream_with_line_separators(home: Home, peers, keyring_file, compat):
    """Real vLLM writes U+2028 raw inside the JSON strings of a stream (tests/fixtures/vllm-0.32-cpu-u2028);
    bench's reader must count those chunks as tokens, as it does any other, and fail none."""
    compat(
        tier="realservers", agent="bench", agent_version=f"agentcfg {agentcfg.__version__}",
        server=f"vLLM {peers.vllm_version} (CPU)", case="U+2028 raw in every streamed token (logit_bias): completes",
    )  # fmt: skip
    tokens, eos = separator_tokens(peers.model_dir)
    with SeparatorProxy(peers.vllm, tokens["u2028"], eos) as proxy:
        add_profile(home, "sep", proxy.url, key=VLLM_KEY)
        data = home.json("bench", "sep", "--both", "-n", "2", "--max-tokens", "8", "--timeout", "60")
    sep = data["profiles"]["sep"]
    assert data["ok"] and sep["ignore_eos"] is True, data
    for mode in ("stream", "non_stream"):
        figures = sep[mode]
        assert figures["ok"] == 2 and figures["failed"] == 0, (mode, figures)
        assert figures["output_tokens"]["median"] == figures["output_tokens"]["max"] == 8, (mode, figures)
    # three separators open each of the 2 + 2 answers (streamed and not); then, ignore_eos, the
    # (biased) end-of-turn token, which vLLM counts but does not print
    assert proxy.separators_seen >= 4 * 3, proxy.paths
