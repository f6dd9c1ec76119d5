"""agentcfg.bench.stats: the same percentiles as vLLM's benchmark (numpy's linear interpolation)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcfg.bench.stats import FIGURE_KEYS, figure, histogram, percentile

# Values numpy gives: np.percentile(values, q) with its default method="linear".
NUMPY = [
    ([1.0, 2.0, 3.0, 4.0], 50, 2.5),
    ([1.0, 2.0, 3.0, 4.0], 90, 3.7),
    ([15.0, 20.0, 35.0, 40.0, 50.0], 40, 29.0),
    ([float(i) for i in range(1, 11)], 99, 9.91),
    ([float(i) for i in range(1, 11)], 90, 9.1),
    ([7.0], 99, 7.0),
    ([1.0, 100.0], 0, 1.0),
    ([1.0, 100.0], 100, 100.0),
]


@pytest.mark.parametrize(("values", "q", "expected"), NUMPY)
def test_percentile_is_numpys_linear_interpolation(values, q, expected):
    assert percentile(values, q) == pytest.approx(expected)


def test_percentile_refuses_nothing_and_out_of_range():
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


@given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=1, max_size=200))
def test_percentiles_are_ordered_and_within_the_samples(values):
    ordered = sorted(values)
    figures = [percentile(ordered, q) for q in (0, 50, 90, 99, 100)]
    assert figures == sorted(figures)
    assert figures[0] == ordered[0] and figures[-1] == ordered[-1]


def test_figure_has_every_key_and_rounds():
    fig = figure([10.0004, 20.0, 30.0], digits=3)
    assert tuple(fig) == FIGURE_KEYS
    assert fig == {"mean": 20.0, "median": 20.0, "p90": 28.0, "p99": 29.8, "max": 30.0, "n": 3}


def test_figure_of_nothing_keeps_the_shape_with_nulls():
    assert figure([]) == {"mean": None, "median": None, "p90": None, "p99": None, "max": None, "n": 0}


def test_histogram_cuts_at_p1_and_p99_and_counts_the_rest():
    values = [0.1] + [10.0] * 99 + [20.0] * 99 + [500.0]  # one burst, two steady gaps, one stall
    bins = histogram(values, bins=4)
    assert bins[0] == (0.1, 10.0, 1)  # the burst, below p1
    assert bins[1:-1] == [(10.0, 12.5, 99), (12.5, 15.0, 0), (15.0, 17.5, 0), (17.5, 20.0, 99)]
    assert bins[-1] == (20.0, 500.0, 1)  # the stall, above p99


def test_histogram_of_equal_values_is_one_bin():
    assert histogram([5.0, 5.0, 5.0]) == [(5.0, 5.0, 3)]
    assert histogram([]) == []
