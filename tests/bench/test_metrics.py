"""agentcfg.bench.metrics: vLLM's histograms read from /metrics, and their change over a run."""

from __future__ import annotations

import math

import pytest

from agentcfg.bench import metrics
from agentcfg.bench.metrics import Histogram
from tests.conftest import SHARED_FIXTURES
from tests.scheduled_server import Observed, metrics_text

REAL = (SHARED_FIXTURES / "vllm-0.32-cpu" / "a_get_metrics.txt").read_text()


def test_the_real_vllm_metrics_parse():
    samples = metrics.parse(REAL)
    assert metrics.is_vllm(samples)
    ttft = metrics.histogram(samples, "vllm:time_to_first_token_seconds", "DeepSeek-V4-Flash")
    assert ttft.count == 7 and ttft.total == pytest.approx(0.14904141426086426)
    assert ttft.buckets[0] == (0.001, 0.0) and ttft.buckets[-1] == (math.inf, 7.0)
    itl = metrics.histogram(samples, "vllm:inter_token_latency_seconds", None)
    assert itl.count == 69


def test_quantiles_interpolate_inside_a_bucket_as_prometheus_does():
    samples = metrics.parse(REAL)
    ttft = metrics.histogram(samples, "vllm:time_to_first_token_seconds")
    # buckets (le: cumulative): 0.01: 2, 0.02: 4, 0.04: 6, 0.06: 7
    assert metrics.quantile(ttft, 0.5) == pytest.approx(0.0175)  # rank 3.5 in (0.01, 0.02]
    assert metrics.quantile(ttft, 0.9) == pytest.approx(0.046)  # rank 6.3 in (0.04, 0.06]
    figure = metrics.server_figure(ttft)
    assert figure == {"mean": 21.292, "median": 17.5, "p90": 46.0, "p99": 58.6, "max": None, "n": 7}


def test_a_quantile_beyond_the_last_finite_bucket_is_that_bound():
    hist = Histogram(((0.1, 1.0), (1.0, 1.0), (math.inf, 10.0)), total=50.0, count=10.0)
    assert metrics.quantile(hist, 0.99) == 1.0
    assert metrics.quantile(Histogram(((math.inf, 0.0),), 0.0, 0.0), 0.5) is None


def text(ttft: list[float], itl: list[float], model: str = "m") -> str:
    return metrics_text(Observed(ttft=ttft, itl=itl, e2e=[0.2] * len(ttft)), model)


def test_the_delta_over_a_run_holds_only_the_runs_requests():
    before = metrics.parse(text([5.0, 5.0], [0.5] * 10))  # earlier, slow traffic
    after = metrics.parse(text([5.0, 5.0, 0.05, 0.07], [0.5] * 10 + [0.01] * 30))
    hists = metrics.deltas(before, after, "m")
    assert metrics.served(hists) == 2
    assert hists["ttft_ms"].total == pytest.approx(0.12) and hists["itl_ms"].count == 30
    assert metrics.server_figure(hists["ttft_ms"])["mean"] == pytest.approx(60.0)
    assert metrics.server_figure(hists["itl_ms"])["mean"] == pytest.approx(10.0)


def test_a_restarted_server_gives_no_delta():
    before = metrics.parse(text([0.05] * 5, []))
    after = metrics.parse(text([0.05], []))
    assert metrics.deltas(before, after, "m") is None


def test_only_the_benchmarked_models_series_when_several_are_served():
    both = metrics.parse(text([0.05, 0.05], []) + text([9.0], [], model="other"))
    assert metrics.histogram(both, "vllm:time_to_first_token_seconds", "m").count == 2
    assert metrics.histogram(both, "vllm:time_to_first_token_seconds", "other").count == 1
    assert metrics.histogram(both, "vllm:time_to_first_token_seconds", "unknown").count == 3  # no such label: all


def test_older_vllm_names_for_the_inter_token_histogram():
    old = REAL.replace("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds")
    hists = metrics.deltas(metrics.parse(""), metrics.parse(old), None)
    assert hists is None  # nothing before: no delta
    hists = metrics.deltas(metrics.parse(old.replace(" 69.0", " 60.0")), metrics.parse(old), None)
    assert hists["itl_ms"].count == 9


def test_not_vllm_metrics_and_junk_lines():
    samples = metrics.parse('# HELP x\nhttp_requests_total{code="200"} 5\nbad line\nx{a="b"} notanumber\n')
    assert samples == {"http_requests_total": [({"code": "200"}, 5.0)]}
    assert not metrics.is_vllm(samples)
    assert metrics.parse('m{a="q\\"uote",b="x"} 1')["m"] == [({"a": 'q"uote', "b": "x"}, 1.0)]
