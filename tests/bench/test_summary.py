"""agentcfg.bench.summary: the figures and warnings of each profile and mode (the JSON document)."""

from __future__ import annotations

import pytest

from agentcfg.bench import metrics
from agentcfg.bench.measure import NON_STREAM, STREAM, Record
from agentcfg.bench.stats import FIGURE_KEYS
from agentcfg.bench.summary import (
    MIN_SAMPLES,
    Phase,
    ProfileRun,
    Run,
    Settings,
    exit_status,
    mode_dict,
    run_dict,
    without_credentials,
)
from tests.bench.samples import answered, streamed

FIGURES = ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "decode_tok_s", "tok_s", "output_tokens", "prompt_tokens")
MODE_KEYS = {
    "requests", "ok", "failed", "cancelled", "wall_s", "throughput_tok_s", *FIGURES, "usage_reported",
    "itl_histogram", "server", "errors", "warnings",
}  # fmt: skip


def phase_of(records: list[Record], mode: str = STREAM) -> Phase:
    return Phase(mode, planned=len(records), records=records, wall=1.0)


def ids(data: dict) -> list[str]:
    return [w["id"] for w in data["warnings"]]


SETTINGS = Settings(requests=10, max_tokens=16)


def test_every_key_and_figure_is_present():
    data = mode_dict(phase_of([streamed(i) for i in range(10)]), SETTINGS)
    assert set(data) == MODE_KEYS
    for name in FIGURES:
        assert tuple(data[name]) == FIGURE_KEYS
    assert data["ttft_ms"]["median"] == pytest.approx(50.0) and data["ttft_ms"]["n"] == 10
    assert data["itl_ms"]["median"] == pytest.approx(10.0) and data["itl_ms"]["n"] == 150
    assert data["decode_tok_s"]["median"] == pytest.approx(100.0)
    assert data["throughput_tok_s"] == pytest.approx(160.0)
    assert data["warnings"] == [] and data["errors"] == []


def test_non_stream_keeps_the_stream_figures_with_n_zero():
    data = mode_dict(phase_of([answered(i) for i in range(10)], NON_STREAM), SETTINGS)
    for name in ("ttft_ms", "itl_ms", "tpot_ms", "decode_tok_s"):
        assert data[name] == {key: (0 if key == "n" else None) for key in FIGURE_KEYS}
    assert data["e2e_ms"]["median"] == pytest.approx(200.0) and data["tok_s"]["median"] == pytest.approx(80.0)


def test_few_samples():
    few = mode_dict(phase_of([streamed(i) for i in range(MIN_SAMPLES - 1)]), SETTINGS)
    assert ids(few) == ["few-samples"] and "--requests 10" in few["warnings"][0]["message"]
    assert ids(mode_dict(phase_of([streamed(i) for i in range(MIN_SAMPLES)]), SETTINGS)) == []


def test_a_stream_in_one_burst():
    data = mode_dict(phase_of([streamed(i, per_chunk=16) for i in range(10)]), SETTINGS)
    assert ids(data) == ["burst"] and "buffers" in data["warnings"][0]["message"]


def test_chunks_of_several_tokens():
    data = mode_dict(phase_of([streamed(i, per_chunk=4) for i in range(10)]), SETTINGS)
    assert ids(data) == ["multi-token-chunks"] and "4.0 tokens" in data["warnings"][0]["message"]
    assert data["itl_ms"]["median"] == pytest.approx(40.0) and data["tpot_ms"]["median"] == pytest.approx(120 / 15)


def test_no_usage_stream_and_non_stream():
    stream = mode_dict(phase_of([streamed(i, usage=i > 2) for i in range(10)]), SETTINGS)
    assert ids(stream) == ["no-usage"] and "3 of 10" in stream["warnings"][0]["message"]
    assert "per token chunk" in stream["warnings"][0]["message"] and stream["usage_reported"] == 7
    plain = mode_dict(phase_of([answered(i, usage=False) for i in range(10)], NON_STREAM), SETTINGS)
    assert ids(plain) == ["no-usage"] and "4 characters" in plain["warnings"][0]["message"]


@pytest.mark.parametrize(("ignore_eos", "why"), [(False, "asks only vLLM"), (True, "even with ignore_eos")])
def test_answers_that_stop_early(ignore_eos, why):
    data = mode_dict(phase_of([streamed(i, tokens=8) for i in range(10)]), SETTINGS, ignore_eos)
    assert ids(data) == ["early-stop"] and why in data["warnings"][0]["message"]
    assert "median 8 of 16" in data["warnings"][0]["message"]


def test_other_traffic_in_the_servers_figures():
    hist = metrics.Histogram(((0.1, 12.0), (float("inf"), 12.0)), total=0.6, count=12.0)
    phase = phase_of([streamed(i) for i in range(10)])
    phase.server = {"ttft_ms": hist, "itl_ms": None, "e2e_ms": None}
    data = mode_dict(phase, SETTINGS, metrics_url="http://h/metrics")
    assert ids(data) == ["other-traffic"] and "2 more" in data["warnings"][0]["message"]
    assert data["server"]["url"] == "http://h/metrics" and data["server"]["requests"] == 12
    assert data["server"]["ttft_ms"]["mean"] == pytest.approx(50.0) and data["server"]["itl_ms"]["n"] == 0


def test_failures_are_counted_grouped_and_left_out_of_the_figures():
    records = [streamed(i) for i in range(8)] + [streamed(8, error="timeout: x"), streamed(9, error="timeout: x")]
    phase = Phase(STREAM, planned=12, records=records, wall=1.0)
    data = mode_dict(phase, SETTINGS)
    assert (data["ok"], data["failed"], data["cancelled"]) == (8, 2, 2)
    assert data["errors"] == [{"error": "timeout: x", "count": 2}]
    assert data["ttft_ms"]["n"] == 8


def run_of(*phases: Phase, interrupted: str | None = None, proxy: str | None = None) -> Run:
    profile = ProfileRun("local", "http://localhost:8000/v1", "m", proxy=proxy, phases={p.mode: p for p in phases})
    settings = Settings(requests=10, max_tokens=16, modes=tuple(p.mode for p in phases))
    return Run(settings, [profile], interrupted, 3.0)


def test_the_document_and_the_stream_over_non_stream_ratio():
    stream = phase_of([streamed(i) for i in range(10)])
    plain = phase_of([answered(i, e2e=0.1) for i in range(10)], NON_STREAM)
    document = run_dict(run_of(stream, plain))
    assert set(document) == {"settings", "profiles", "interrupted", "elapsed_s", "ok"}
    assert document["settings"]["modes"] == ["stream", "non_stream"]
    entry = document["profiles"]["local"]
    assert {"base_url", "model", "proxy", "ignore_eos", "metrics_url", "stream", "non_stream"} < set(entry)
    # stream: 201 ms and 16 / 0.201 tok/s; non-stream: 100 ms and 160 tok/s
    assert entry["stream_vs_non_stream"] == {"e2e_ms": 2.01, "tok_s": 0.497}
    assert document["ok"] is True and exit_status(document) == 0


def test_a_mode_not_run_keeps_its_keys_and_no_ratio():
    document = run_dict(run_of(phase_of([streamed(i) for i in range(10)])))
    entry = document["profiles"]["local"]
    assert set(entry["non_stream"]) == MODE_KEYS and entry["non_stream"]["requests"] == 0
    assert entry["non_stream"]["e2e_ms"]["n"] == 0 and entry["stream_vs_non_stream"] is None


def test_exit_status_and_interruptions():
    failing = phase_of([streamed(0, error="refused: x")] + [streamed(i) for i in range(1, 10)])
    assert exit_status(run_dict(run_of(failing))) == 1
    ok = phase_of([streamed(i) for i in range(10)])
    assert exit_status(run_dict(run_of(ok, interrupted="ctrl-c"))) == 130
    assert exit_status(run_dict(run_of(ok, interrupted="deadline"))) == 1


def test_a_proxys_credentials_are_not_shown():
    assert without_credentials("http://user:secret@proxy:3128") == "http://****@proxy:3128"
    assert without_credentials("http://proxy:3128") == "http://proxy:3128"
    document = run_dict(run_of(phase_of([streamed()]), proxy="http://u:pw@p:1"))
    assert document["profiles"]["local"]["proxy"] == "http://****@p:1"
