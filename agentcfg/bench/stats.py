"""Summary statistics without numpy, computed the way vLLM's serving benchmark computes them.

`vllm bench serve` reports `np.percentile(values, q)` with numpy's default (linear) interpolation
and `np.median`; `percentile` here gives the same numbers, so a figure from agentcfg and one from
vLLM's benchmark over the same samples agree to the last digit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

FIGURE_KEYS = ("mean", "median", "p90", "p99", "max", "n")


def percentile(ordered: Sequence[float], q: float) -> float:
    """numpy's default percentile (linear interpolation between closest ranks) of sorted values."""
    if not ordered:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is outside 0..100")
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    fraction = rank - low
    return ordered[low] + (ordered[high] - ordered[low]) * fraction


def figure(values: Iterable[float], digits: int = 3) -> dict[str, Any]:
    """`{mean, median, p90, p99, max, n}` of `values`; nulls and n 0 when there are none, so a
    script can read every key of every figure whether or not it was measured."""
    ordered = sorted(values)
    if not ordered:
        return {key: (0 if key == "n" else None) for key in FIGURE_KEYS}

    def rounded(value: float) -> float:
        return round(value, digits)

    return {
        "mean": rounded(math.fsum(ordered) / len(ordered)),
        "median": rounded(percentile(ordered, 50)),
        "p90": rounded(percentile(ordered, 90)),
        "p99": rounded(percentile(ordered, 99)),
        "max": rounded(ordered[-1]),
        "n": len(ordered),
    }


def histogram(values: Iterable[float], bins: int = 8) -> list[tuple[float, float, int]]:
    """Equal-width bins from the 1st to the 99th percentile, plus a bin for what lies beyond each end.

    A single stall (a 2 s gap among 10 ms ones) would otherwise squeeze every other sample into the
    first bin; cutting at p1 and p99 keeps the shape of the bulk readable and the outliers counted.
    """
    ordered = sorted(values)
    if not ordered:
        return []
    low, high = percentile(ordered, 1), percentile(ordered, 99)
    if high <= low:
        return [(ordered[0], ordered[-1], len(ordered))]
    width = (high - low) / bins
    counts = [0] * bins
    below = above = 0
    for value in ordered:
        if value < low:
            below += 1
        elif value > high:
            above += 1
        else:
            counts[min(int((value - low) / width), bins - 1)] += 1
    result = [(low + i * width, low + (i + 1) * width, count) for i, count in enumerate(counts)]
    return ([(ordered[0], low, below)] if below else []) + result + ([(high, ordered[-1], above)] if above else [])
