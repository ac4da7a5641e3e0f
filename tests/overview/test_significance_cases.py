"""All pairs of systems: Holm over the pairs, verdicts, groups, intervals."""
import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from shareval.metrics.multiple import holm
from shareval.overview.significance import (DIFFER, SAME, UNDECIDED, all_pairs, groups,
                                            interval)
from shareval.stats import MIN_UNITS
from shareval.tasks.base import UnitStats, hierarchical_weights, weighted_mean


def us(values, strata=None):
    v = np.asarray(values, dtype=float)
    w = np.ones(len(v)) if strata is None else hierarchical_weights(list(strata))
    return UnitStats("m", [f"u{i}" for i in range(len(v))], v[:, None], weighted_mean, w,
                     None if strata is None else np.asarray(strata))


def test_holm_equals_statsmodels_and_keeps_nan():
    rng = np.random.default_rng(3)
    for _ in range(100):
        p = rng.random(rng.integers(1, 15))
        p[rng.random(len(p)) < 0.3] = p[0]           # ties
        assert np.allclose(holm(p), multipletests(p, method="holm")[1])
    out = holm([0.01, np.nan, 0.04])
    assert np.isnan(out[1]) and np.allclose(out[[0, 2]], [0.02, 0.04])   # m = 2


def test_two_equal_and_two_distinct_systems():
    rng = np.random.default_rng(0)
    base = rng.random(40)
    named = [("low", us(base * 0.3)), ("top", us(np.clip(base + 0.3, 0, 1))),
             ("mid1", us(base)), ("mid2", us(base + rng.normal(0, 0.01, 40)))]
    m = all_pairs(named, samples=2000)
    assert m.systems[0] == "top" and m.systems[-1] == "low"
    assert m.tests[("mid1", "mid2")].verdict == SAME
    assert m.tests[("top", "low")].verdict == DIFFER
    assert m.tests[("low", "top")].difference == -m.tests[("top", "low")].difference
    # Holm: the adjusted p of the pairs equals statsmodels' on their raw p
    order = [(a, b) for i, a in enumerate(m.systems) for b in m.systems[i + 1:]]
    raw = [m.tests[k].p_randomization for k in order]
    assert np.allclose([m.tests[k].p_holm for k in order], multipletests(raw, method="holm")[1])
    assert sorted(map(sorted, m.groups)) == [["low"], ["mid1", "mid2"], ["top"]]


def test_too_few_units_and_different_units_cannot_decide():
    few = MIN_UNITS - 1
    m = all_pairs([("a", us(np.ones(few))), ("b", us(np.zeros(few)))], samples=200)
    t = m.tests[("a", "b")]
    assert t.verdict == UNDECIDED and "paired unit" in t.note and np.isnan(t.p_holm)
    assert m.groups == [["a", "b"]]                 # undecided counts as not differing
    other = us(np.zeros(20))
    other.units = [f"x{i}" for i in range(20)]
    m = all_pairs([("a", us(np.ones(20))), ("b", other)], samples=200)
    assert m.tests[("a", "b")].verdict == UNDECIDED
    assert "different units" in m.tests[("a", "b")].note


def test_lower_is_better_orders_ascending():
    m = all_pairs([("a", us(np.full(12, 0.9))), ("b", us(np.full(12, 0.1)))], samples=200,
                  lower_is_better=True)
    assert m.systems == ["b", "a"]


def test_groups_are_maximal_runs():
    differ = {("A", "C"), ("C", "A"), ("B", "D"), ("D", "B"), ("A", "D"), ("D", "A")}
    assert groups(list("ABCD"), lambda x, y: (x, y) in differ) == [["A", "B"], ["B", "C"],
                                                                    ["C", "D"]]
    assert groups(list("AB"), lambda x, y: True) == [["A"], ["B"]]


def test_interval_contains_the_value_and_resamples_within_strata():
    rng = np.random.default_rng(1)
    vals = np.r_[rng.random(15), rng.random(3) + 5]          # a small, high language
    strata = ["en"] * 15 + ["de"] * 3
    u = us(vals, strata)
    lo, hi = interval(u, samples=2000)
    v = float(weighted_mean(u.stats[None], u.weights[None])[0])
    assert lo <= v <= hi
    # within strata every resample keeps both languages at half the weight: never below 2.5
    assert lo > 2.5
    assert all(np.isnan(interval(us([0.5]), samples=100)))


@pytest.mark.parametrize("n", [3, 6])
def test_correlation_exact_permutation_p(n):
    from shareval.metrics.correlation import spearman_test
    x = np.arange(n)
    rho, p = spearman_test(x, x)
    assert rho == pytest.approx(1.0)
    # only the identity and the reversal reach |rho| = 1: p = 2 / n!
    assert p == pytest.approx(2 / np.prod(range(1, n + 1)))
