"""Spearman's rho and its permutation test: against scipy, exact enumeration and
hand-worked examples."""
import itertools
import math

import numpy as np
import pytest
from scipy.stats import rankdata, spearmanr

from shareval.metrics.correlation import average_ranks, spearman, spearman_test


@pytest.mark.parametrize("seed", range(10))
def test_average_ranks_against_scipy(seed):
    x = np.random.default_rng(seed).integers(0, 6, 25).astype(float)     # many ties
    assert average_ranks(x).tolist() == rankdata(x).tolist()


def test_average_ranks_hand_worked():
    assert average_ranks([5, 1, 5, 5, 2]).tolist() == [4.0, 1.0, 4.0, 4.0, 2.0]
    assert average_ranks([]).tolist() == []
    assert np.isnan(average_ranks([1, np.nan, 2])).all()


@pytest.mark.parametrize("seed", range(20))
def test_rho_against_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 40))
    x = rng.integers(0, 5, n).astype(float)
    y = x + rng.integers(-3, 4, n)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        pytest.skip("constant draw")
    assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)


def test_rho_hand_worked():
    # no ties: 1 - 6 * sum d^2 / (n (n^2 - 1)); d = (0, 1, 1, 0) -> 1 - 12/60
    assert spearman([1, 2, 3, 4], [10, 30, 20, 40]) == pytest.approx(0.8)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_exact_p_hand_worked():
    # n = 4, rho = 0.8: |rho*| >= 0.8 for sum d^2 in {0, 2, 18, 20}: the identity,
    # the 3 swaps of neighbours, the reversal and its 3 neighbour swaps: 8 of 24
    rho, p = spearman_test([1, 2, 3, 4], [10, 30, 20, 40])
    assert rho == pytest.approx(0.8) and p == pytest.approx(8 / 24)
    # n = 3, perfect order: only the identity and the reversal reach |rho*| = 1
    assert spearman_test([1, 2, 3], [4, 5, 6])[1] == pytest.approx(2 / 6)
    # the exact test does not depend on samples or seed
    assert spearman_test([1, 2, 3, 4], [10, 30, 20, 40], samples=1, seed=9)[1] == \
        pytest.approx(8 / 24)


@pytest.mark.parametrize("seed", range(4))
def test_exact_p_against_brute_force_with_scipy(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, 6).astype(float)            # ties too
    y = rng.random(6)
    obs = abs(spearmanr(x, y).statistic)
    hits = [abs(spearmanr(x, np.array(perm)).statistic) >= obs - 1e-9
            for perm in itertools.permutations(y)]
    assert spearman_test(x, y)[1] == pytest.approx(np.mean(hits), abs=1e-12)


def test_monte_carlo_p_close_to_exact():
    rng = np.random.default_rng(3)
    x, y = rng.random(9), rng.random(9)
    rx, ry = rankdata(x), rankdata(y)
    obs = abs(np.corrcoef(rx, ry)[0, 1])
    # all 9! = 362,880 orders, with numpy: the exact p
    perms = np.array(list(itertools.permutations(range(9))))
    r = ry[perms]
    rc, xc = r - r.mean(1, keepdims=True), rx - rx.mean()
    rhos = rc @ xc / np.sqrt((rc ** 2).sum(1) * (xc ** 2).sum())
    exact = np.mean(np.abs(rhos) >= obs - 1e-9)
    rho, p = spearman_test(x, y, samples=20_000, seed=1)      # n = 9: Monte Carlo
    assert rho == pytest.approx(spearmanr(x, y).statistic)
    assert p == pytest.approx(exact, abs=0.012)


def test_monte_carlo_add_one_smoothing_and_seed():
    x = np.arange(30.0)
    rho, p = spearman_test(x, x ** 2, samples=99)
    assert rho == 1.0 and p == pytest.approx(1 / 100)       # no permutation reaches 1
    y = np.random.default_rng(0).random(30)
    assert spearman_test(x, y, seed=4) == spearman_test(x, y, seed=4)


@pytest.mark.parametrize("x, y", [
    ([1, 2], [2, 1]),                       # n < 3
    ([], []),
    ([1, 1, 1, 1], [1, 2, 3, 4]),           # constant x
    ([1, 2, 3, 4], [5, 5, 5, 5]),           # constant y
    ([1, 2, np.nan, 4], [1, 2, 3, 4]),      # NaN
])
def test_undefined_is_nan(x, y):
    assert math.isnan(spearman(x, y))
    rho, p = spearman_test(x, y)
    assert math.isnan(rho) and math.isnan(p)


def test_different_lengths_is_an_error():
    with pytest.raises(ValueError, match="differ in length"):
        spearman([1, 2, 3], [1, 2])
