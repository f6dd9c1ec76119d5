"""agentcfg.bench.render: the table, the histogram, profiles side by side, CSV and the progress line."""

from __future__ import annotations

import csv
import io

import pytest

from agentcfg import redact
from agentcfg.bench import metrics
from agentcfg.bench.measure import NON_STREAM, STREAM
from agentcfg.bench.render import CSV_COLUMNS, csv_text, histogram_text, number, progress_line, text
from agentcfg.bench.summary import Phase, ProfileRun, Run, Settings, run_dict
from tests.bench.samples import answered, streamed

SECRET = "sk-render-secret-123456"


def phases(fail: str | None = None) -> dict[str, Phase]:
    stream = Phase(STREAM, 10, [streamed(i, error=fail if i == 0 else None) for i in range(10)], wall=1.0)
    stream.server = {
        "ttft_ms": metrics.Histogram(((0.04, 0.0), (0.06, 10.0), (float("inf"), 10.0)), 0.45, 10.0),
        "itl_ms": metrics.Histogram(((0.01, 150.0), (float("inf"), 150.0)), 1.35, 150.0),
        "e2e_ms": None,
    }
    plain = Phase(NON_STREAM, 10, [answered(i) for i in range(10)], wall=1.0)
    return {STREAM: stream, NON_STREAM: plain}


def run_of(*names: str, fail: str | None = None, interrupted: str | None = None) -> Run:
    profiles = [ProfileRun(n, f"http://{n}:8000/v1", "m", ignore_eos=True, phases=phases(fail)) for n in names]
    return Run(Settings(requests=10, max_tokens=16, modes=(STREAM, NON_STREAM)), profiles, interrupted, 4.2)


@pytest.mark.parametrize(
    ("value", "shown"), [(None, "-"), (0.2149, "0.21"), (10.345, "10.35"), (211.44, "211.4"), (12532.2, "12,532")]
)
def test_numbers(value, shown):
    assert number(value) == shown


def test_one_profile_both_modes_with_ratio_server_view_histogram_and_warnings():
    out = text(run_dict(run_of("local", fail="timeout: no complete answer within 1 s")), unicode=True)
    lines = out.splitlines()
    assert lines[0] == "agentcfg bench: 10 requests per mode, concurrency 1, max_tokens 16, prompt ≈512 tokens"
    assert "local: m at http://local:8000/v1, ignore_eos sent (vLLM)" in out
    header = next(line for line in lines if "median" in line)
    assert header.split() == ["median", "p90", "p99", "max", "n"] * 2 + ["non-stream"]
    ttft = next(line for line in lines if line.strip().startswith("TTFT ms"))
    assert ttft.split()[2:7] == ["50.00", "50.00", "50.00", "50.00", "9"]  # 9: one request failed
    e2e = next(line for line in lines if line.strip().startswith("E2E ms"))
    assert e2e.split()[-1] == "1.00×"
    assert "stream: 9/10 ok in 1.00 s" in out and "1 failed (timeout: no complete answer within 1 s)" in out
    server = next(line for line in lines if line.strip().startswith("TTFT ms (stream)"))
    assert server.split()[3] == "45.00" and server.split()[-1] == "+5.00"  # client mean 50, vLLM's 45
    assert "ITL histogram (135 gaps between token chunks):" in out and "█" in out
    assert "warning (stream, few-samples)" in out
    assert "`agentcfg doctor local` names the cause" in out
    assert "Side by side" not in out and "\x1b[" not in out


def test_two_profiles_side_by_side():
    out = text(run_dict(run_of("local", "gateway")))
    assert "gateway: m at http://gateway:8000/v1" in out
    table = out.split("Side by side (medians):\n", 1)[1].splitlines()
    assert table[0].split()[:4] == ["PROFILE", "MODE", "TTFT", "ms"]
    assert [row.split()[:2] for row in table[1:]] == [
        ["local", "stream"],
        ["local", "non-stream"],
        ["gateway", "stream"],
        ["gateway", "non-stream"],
    ]
    assert table[1].split()[2] == "50.00" and table[2].split()[2] == "-"


def test_interrupted_colour_and_ascii():
    out = text(run_dict(run_of("local", interrupted="ctrl-c")), colour=True, unicode=False)
    assert "Interrupted after 4.2 s" in out and "\x1b[33m" in out
    assert not {"█", "≈", "÷", "×", "–"} & set(out) and "#" in out and "1.00x" in out
    deadline = text(run_dict(run_of("local", interrupted="deadline")))
    assert "Stopped at the --deadline of 900 s" in deadline


def test_histogram_bars_scale_to_the_largest_bin():
    bins = [{"from_ms": 9.0, "to_ms": 10.0, "count": 100}, {"from_ms": 10.0, "to_ms": 11.0, "count": 1}]
    lines = histogram_text(bins, unicode=False)
    assert lines[0].split() == ["9.00-10.00", "ms", "#" * 30, "100"]
    assert lines[1].split() == ["10.00-11.00", "ms", "#", "1"]


def test_csv_has_one_row_per_request_and_the_gaps():
    rows = list(csv.reader(io.StringIO(csv_text(run_of("local", fail="refused: x")))))
    assert tuple(rows[0]) == CSV_COLUMNS
    body = [dict(zip(CSV_COLUMNS, row, strict=True)) for row in rows[1:]]
    assert len(body) == 20 and {r["mode"] for r in body} == {"stream", "non_stream"}
    failed = body[0]
    assert failed["ok"] == "0" and failed["error"] == "refused: x" and failed["output_tokens"] == ""
    good = body[1]
    assert good["ttft_ms"] == "50.000" and good["decode_tok_s"] == "100.00" and good["chunks"] == "16"
    assert [float(g) for g in good["itl_ms"].split()] == pytest.approx([10.0] * 15)
    plain = next(r for r in body if r["mode"] == "non_stream")
    assert plain["ttft_ms"] == "" and plain["itl_ms"] == "" and plain["e2e_ms"] == "200.000"


def test_keys_never_appear_in_text_or_csv():
    redact.register(SECRET)
    run = run_of("local", fail=f"HTTP 401: Invalid key {SECRET}")
    assert SECRET not in text(run_dict(run)) and SECRET not in csv_text(run)
    assert "Invalid key ****" in csv_text(run)


def test_progress_line():
    assert progress_line("local", STREAM, 5, 10, 0) == "local stream [██████████░░░░░░░░░░] 5/10"
    assert progress_line("gw", NON_STREAM, 10, 10, 2, unicode=False).endswith("[####################] 10/10, 2 failed")
