"""vLLM's own view of a run: its Prometheus histograms at `/metrics`, before and after.

vLLM records TTFT and inter-token latency inside the engine, from the moment it received a request
to the moment each token was produced: no HTTP, no network, no proxy. The difference between its
figures and the client's is the time spent outside the model. Histograms keep counts per bucket and
a sum, not samples: the mean over the run is exact (delta sum / delta count); median and
percentiles are estimated by linear interpolation inside a bucket, as Prometheus'
`histogram_quantile` does, and the maximum is unknown.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from agentcfg.bench.stats import FIGURE_KEYS
from agentcfg.lazyclass import dataclass

# Figure name -> the vLLM histograms that hold it, newest name first (0.6-0.10 called ITL "time per output token").
HISTOGRAMS = {
    "ttft_ms": ("vllm:time_to_first_token_seconds",),
    "itl_ms": ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
    "e2e_ms": ("vllm:e2e_request_latency_seconds",),
}
_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')

Samples = dict[str, list[tuple[dict[str, str], float]]]


def parse(text: str) -> Samples:
    """Prometheus text exposition format -> {metric name: [(labels, value), ...]}; bad lines skipped."""
    samples: Samples = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line.strip())
        if not match or line.lstrip().startswith("#"):
            continue
        try:
            value = float(match.group("value"))
        except ValueError:
            continue
        labels = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _LABEL.findall(match["labels"] or "")}
        samples.setdefault(match.group("name"), []).append((labels, value))
    return samples


def is_vllm(samples: Samples) -> bool:
    return any(names[0] + "_count" in samples for names in HISTOGRAMS.values())


@dataclass(frozen=True)
class Histogram:
    """A Prometheus histogram as scraped from vLLM's /metrics."""

    buckets: tuple[tuple[float, float], ...]  # (upper bound `le`, cumulative count), ascending, +Inf last
    total: float  # the sum of observed values
    count: float

    def minus(self, earlier: Histogram) -> Histogram | None:
        """The observations between two scrapes; None when the server restarted in between."""
        before = dict(earlier.buckets)
        buckets = tuple((le, count - before.get(le, 0.0)) for le, count in self.buckets)
        if self.count < earlier.count or any(count < 0 for _, count in buckets):
            return None
        return Histogram(buckets, self.total - earlier.total, self.count - earlier.count)


def histogram(samples: Samples, name: str, model: str | None = None) -> Histogram | None:
    """One histogram, summed over its series (engines, ...); only `model`'s when a series names it."""

    def series(suffix: str) -> list[tuple[dict[str, str], float]]:
        found = samples.get(name + suffix, [])
        if model is not None and any(labels.get("model_name") == model for labels, _ in found):
            found = [(labels, value) for labels, value in found if labels.get("model_name") == model]
        return found

    counts = series("_count")
    if not counts:
        return None
    buckets: dict[float, float] = {}
    for labels, value in series("_bucket"):
        try:
            le = float(labels.get("le", ""))
        except ValueError:
            continue
        buckets[le] = buckets.get(le, 0.0) + value
    return Histogram(
        tuple(sorted(buckets.items())),
        math.fsum(value for _, value in series("_sum")),
        math.fsum(value for _, value in counts),
    )


def quantile(hist: Histogram, q: float) -> float | None:
    """Prometheus' histogram_quantile: interpolate linearly inside the bucket holding rank q x count."""
    if hist.count <= 0 or not hist.buckets:
        return None
    rank = q * hist.count
    lower_bound, lower_count = 0.0, 0.0
    finite = [(le, count) for le, count in hist.buckets if not math.isinf(le)]
    for le, count in hist.buckets:
        if count >= rank and count > lower_count:
            if math.isinf(le):  # above the last finite bound: that bound is all that is known
                return finite[-1][0] if finite else None
            return lower_bound + (le - lower_bound) * (rank - lower_count) / (count - lower_count)
        lower_bound, lower_count = le, count
    return finite[-1][0] if finite else None


def server_figure(hist: Histogram | None, scale: float = 1000.0, digits: int = 3) -> dict[str, Any]:
    """A histogram as a figure of the same shape as the client's: {mean, median, p90, p99, max, n}."""
    if hist is None or hist.count <= 0:
        return {key: (0 if key == "n" else None) for key in FIGURE_KEYS}

    def scaled(value: float | None) -> float | None:
        return None if value is None else round(value * scale, digits)

    return {
        "mean": scaled(hist.total / hist.count),
        "median": scaled(quantile(hist, 0.5)),
        "p90": scaled(quantile(hist, 0.9)),
        "p99": scaled(quantile(hist, 0.99)),
        "max": None,  # a histogram does not keep it
        "n": round(hist.count),
    }


def deltas(before: Samples, after: Samples, model: str | None) -> dict[str, Histogram | None] | None:
    """Each figure's histogram over the run; None when vLLM's histograms are missing or were reset."""
    result: dict[str, Histogram | None] = {}
    for figure_name, names in HISTOGRAMS.items():
        for name in names:
            earlier, later = histogram(before, name, model), histogram(after, name, model)
            if earlier is not None and later is not None:
                result[figure_name] = later.minus(earlier)
                break
        else:
            result[figure_name] = None
    if result["ttft_ms"] is None:
        return None
    return result


def served(hists: Mapping[str, Histogram | None]) -> int:
    """How many requests the server finished between the scrapes (its TTFT count)."""
    ttft = hists.get("ttft_ms")
    return round(ttft.count) if ttft else 0
