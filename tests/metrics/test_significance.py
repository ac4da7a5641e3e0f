"""Paired tests: checked against exact enumeration and known behaviour."""
import itertools

import numpy as np
import pytest

from shareval.metrics.significance import paired_bootstrap, randomization_test
from shareval.tasks.base import micro_f1, weighted_mean


def exact_randomization_p(a, b):
    """All 2^n sign flips of the per-unit differences (independent brute force)."""
    d = np.asarray(a) - np.asarray(b)
    obs = abs(d.mean())
    flips = [abs(np.mean(d * np.array(s))) >= obs - 1e-12
             for s in itertools.product([1, -1], repeat=len(d))]
    return np.mean(flips)


def test_randomization_matches_exact_enumeration():
    rng = np.random.default_rng(1)
    a = rng.random(10)
    b = a - rng.normal(0.05, 0.1, 10)
    exact = exact_randomization_p(a, b)
    approx = randomization_test(a, b, weighted_mean, samples=20000, seed=3).p_value
    assert approx == pytest.approx(exact, abs=0.01)


def test_identical_systems_are_not_different():
    a = np.linspace(0, 1, 50)
    for r in (paired_bootstrap(a, a, weighted_mean), randomization_test(a, a, weighted_mean)):
        assert r.statistic == 0.0 and r.p_value == 1.0


def test_clear_difference_is_significant_and_ci_covers_it():
    rng = np.random.default_rng(2)
    a = rng.random(200)
    b = a - 0.1 + rng.normal(0, 0.02, 200)
    boot = paired_bootstrap(a, b, weighted_mean, samples=5000)
    assert boot.p_value < 0.001
    assert boot.ci_low < boot.statistic < boot.ci_high
    assert boot.ci_low > 0.09 and boot.ci_high < 0.11
    assert randomization_test(a, b, weighted_mean, samples=5000).p_value < 0.001


def test_micro_f1_aggregate_and_strata():
    # per-publication (tp, fp, fn); micro F1 of the full set
    a = np.array([[3, 0, 1], [1, 1, 0], [0, 2, 2]], dtype=float)
    assert micro_f1(a[None], np.ones((1, 3)))[0] == pytest.approx(8 / (8 + 3 + 3))
    b = a.copy()
    b[:, 1] += 1
    r = paired_bootstrap(a, b, micro_f1, strata=np.array(["x", "x", "y"]), samples=500)
    assert r.statistic > 0


def test_bootstrap_is_seeded():
    a = np.random.default_rng(0).random(30)
    b = a[::-1]
    assert paired_bootstrap(a, b, weighted_mean, seed=7) == paired_bootstrap(a, b, weighted_mean, seed=7)
