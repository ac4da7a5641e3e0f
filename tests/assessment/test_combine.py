"""F1 with an interval from independent precision and recall estimates
(assessment/combine.py): the point is F1 of the points, the interval covers the
true F1 about as often as its level says when both inputs' intervals do."""
from __future__ import annotations

import numpy as np
import pytest

from shareval.assessment.combine import clipped, f1, f1_interval
from shareval.metrics.estimation import wilson_interval


def test_point_and_order():
    point, low, high = f1_interval((0.8, 0.7, 0.9), (0.5, 0.4, 0.6))
    assert point == pytest.approx(2 * 0.8 * 0.5 / 1.3)
    assert low < point < high and 0 <= low and high <= 1
    # a wider input interval widens the F1 interval
    _, low2, high2 = f1_interval((0.8, 0.6, 1.0), (0.5, 0.4, 0.6))
    assert low2 < low and high2 > high


def test_draws_are_clipped_and_seeded():
    a = f1_interval((0.98, 0.9, 1.0), (0.97, 0.85, 1.0))
    assert a == f1_interval((0.98, 0.9, 1.0), (0.97, 0.85, 1.0))
    assert a[2] <= 1.0
    assert f1_interval((0.0, 0.0, 0.1), (0.0, 0.0, 0.1))[0] == 0.0 == f1(0.0, 0.0)


def test_estimates_outside_zero_one_are_clipped_first():
    # an importance-sampling precision may come out above 1 in a finite sample
    assert clipped((1.05, 0.96, 1.0)) == (1.0, 0.96, 1.0)
    assert clipped((-0.02, -0.1, 0.05)) == (0.0, 0.0, 0.05)
    assert clipped((0.5, 0.6, 0.7)) == (0.5, 0.5, 0.7)        # the interval holds it
    point, low, high = f1_interval((1.05, 0.96, 1.0), (0.8, 0.7, 0.9))
    assert point == pytest.approx(f1(1.0, 0.8)) and low <= point <= high <= 1.0


def test_bad_intervals_are_refused():
    with pytest.raises(ValueError, match="precision"):
        f1_interval((float("nan"),) * 3, (0.5, 0.4, 0.6))
    with pytest.raises(ValueError, match="recall"):
        f1_interval((0.5, 0.4, 0.6), (0.7, 0.9, 0.8))


def test_coverage_from_binomial_estimates():
    """P and R each estimated from 150 Bernoulli draws with Wilson intervals: the
    95% F1 interval holds the true F1 in 93-99% of 400 repetitions."""
    rng = np.random.default_rng(5)
    p, r, n = 0.7, 0.4, 150
    hits = 0
    for k in range(400):
        est = []
        for truth in (p, r):
            x = rng.binomial(n, truth)
            lo, hi = wilson_interval(x, n, 0.95)
            est.append((x / n, lo, hi))
        _, low, high = f1_interval(*est, draws=4000, seed=k)
        hits += low <= f1(p, r) <= high
    assert 0.93 <= hits / 400 <= 0.99, hits / 400
