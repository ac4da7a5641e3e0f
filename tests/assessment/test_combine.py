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


def _oracle_f1_interval(p, r, n=400_000, seed=11):
    """docs/kbp-assessment.md's recipe built another way: each estimate's split normal
    as a fair coin between the half-normal below (spread (est - low) / 1.96) and the one
    above ((high - est) / 1.96), P and R drawn independently, clipped, F1 percentiles."""
    rng = np.random.default_rng(seed)

    def split(est, low, high):
        side = rng.random(n) < 0.5
        mag = np.abs(rng.normal(size=n))
        return np.clip(np.where(side, est - mag * (est - low) / 1.96,
                                est + mag * (high - est) / 1.96), 0, 1)
    ps, rs = split(*p), split(*r)
    fs = 2 * ps * rs / np.maximum(ps + rs, 1e-300)
    return tuple(np.quantile(fs, [0.025, 0.975]))


@pytest.mark.parametrize("p, r", [
    ((0.5, 0.3, 0.7), (0.5, 0.3, 0.7)),            # independent: narrower than either
    ((0.6, 0.3, 0.65), (0.9, 0.85, 0.99)),         # asymmetric both ways
    ((0.97, 0.85, 1.0), (0.4, 0.35, 0.5))])        # precision's upper tail clipped at 1
def test_interval_equals_an_independent_oracle(p, r):
    _, low, high = f1_interval(p, r)
    o_low, o_high = _oracle_f1_interval(p, r)
    assert low == pytest.approx(o_low, abs=0.006) and high == pytest.approx(o_high, abs=0.006)


def test_a_fixed_recall_gives_the_precision_interval_through_f1():
    """R known exactly: F1 rises with P, so its percentiles are F1 at P's: the split
    normal's 2.5th and 97.5th percentiles are the interval's ends, on each side."""
    _, low, high = f1_interval((0.6, 0.3, 0.65), (1.0, 1.0, 1.0))
    assert low == pytest.approx(f1(0.3, 1.0), abs=0.004)
    assert high == pytest.approx(f1(0.65, 1.0), abs=0.004)


def test_draws_beyond_zero_and_one_are_clipped():
    from shareval.assessment.combine import _split_normal
    got = _split_normal(0.9, 0.5, 1.0, 1.96, np.array([-10.0, -1.96, 0.0, 1.96, 10.0]))
    assert got == pytest.approx([0.0, 0.5, 0.9, 1.0, 1.0])


def test_twenty_thousand_draws_by_default():
    p, r = (0.6, 0.45, 0.72), (0.5, 0.3, 0.66)
    assert f1_interval(p, r) == f1_interval(p, r, draws=20_000)
    assert f1_interval(p, r) != f1_interval(p, r, draws=2_000)
