"""Spearman's rho against scipy, its exact permutation p by hand."""
import numpy as np
import pytest
from scipy.stats import spearmanr

from shareval.metrics.correlation import average_ranks, spearman, spearman_test


def test_rho_equals_scipy_with_ties():
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(3, 30))
        x, y = rng.integers(0, 5, n), rng.normal(size=n).round(1)
        ours, theirs = spearman(x, y), spearmanr(x, y).statistic
        assert (np.isnan(ours) and np.isnan(theirs)) or ours == pytest.approx(theirs, abs=1e-12)


def test_average_ranks_by_hand():
    assert average_ranks([3, 1, 3, 2]).tolist() == [3.5, 1.0, 3.5, 2.0]


def test_exact_p_by_hand():
    # ranks 1..5 against 2,1,4,3,5: d = (1,1,1,1,0), rho = 1 - 6*4/(5*24) = 0.8;
    # of the 120 orderings, 16 reach |rho| >= 0.8 (8 at each end): p = 16/120
    rho, p = spearman_test([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert rho == pytest.approx(0.8) and p == pytest.approx(16 / 120)


def test_undefined_cases():
    assert np.isnan(spearman([1, 2], [2, 1]))
    rho, p = spearman_test([1, 1, 1, 1], [1, 2, 3, 4])
    assert np.isnan(rho) and np.isnan(p)


def test_monte_carlo_p_is_smoothed():
    x = np.arange(40)
    rho, p = spearman_test(x, x, samples=999)
    assert rho == pytest.approx(1.0) and p == pytest.approx(1 / 1000)
