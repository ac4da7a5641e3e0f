"""The documented rules of the estimation building blocks (docs/assessment.md), one test per
rule, each built so that a broken rule gives a different number.

The expected values are computed here from the textbook formulas (written out, not by calling
the module), on inputs where every term matters: unequal weights, strata of different sizes,
intervals that are clipped and intervals that are not.
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from shareval.metrics.estimation import (WEIGHTINGS, effective_size, importance_weights,
                                         mixture_importance, percentile_interval,
                                         weighted_proportion, wilson_interval, z_value)

Z95 = 1.959963984540054          # the two-sided 95% normal quantile


# --- z_value -------------------------------------------------------------------------------

def test_z_value_is_the_two_sided_quantile():
    assert z_value(0.95) == pytest.approx(Z95, abs=1e-12)
    assert z_value(0.5) == pytest.approx(0.6744897501960817, abs=1e-12)   # the quartile
    assert z_value(0.99) == pytest.approx(2.5758293035489004, abs=1e-12)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5])
def test_z_value_refuses_confidence_outside_the_open_unit_interval(bad):
    with pytest.raises(ValueError, match="^confidence must be between 0 and 1$"):
        z_value(bad)


# --- wilson_interval -----------------------------------------------------------------------

def wilson_by_hand(k, n, z):
    """Wilson (1927): the p solving (p_hat - p)^2 = z^2 p (1 - p) / n, a quadratic in p."""
    ph = k / n
    a = 1 + z * z / n
    b = -(2 * ph + z * z / n)
    c = ph * ph
    d = math.sqrt(b * b - 4 * a * c)
    return (-b - d) / (2 * a), (-b + d) / (2 * a)


@pytest.mark.parametrize("k,n", [(0, 1), (1, 1), (3, 10), (7, 9), (0, 25), (25, 25)])
def test_wilson_is_the_root_pair_of_the_score_equation_with_default_95(k, n):
    lo, hi = wilson_interval(k, n)
    want = wilson_by_hand(k, n, Z95)
    assert (lo, hi) == pytest.approx(want, abs=1e-12)
    assert 0.0 <= lo <= hi <= 1.0
    if k == 0:
        assert lo == pytest.approx(0.0, abs=1e-15)
    if k == n:
        assert hi == pytest.approx(1.0, abs=1e-15)


def test_wilson_bounds_are_probabilities_even_after_rounding():
    """The two roots are 0 and 1 exactly when k = 0 or k = n; in floating point the sum
    centre + half can come out as 1 + 2^-52 (and the difference as -1e-17): the bounds are
    clipped to [0, 1]."""
    for conf in (0.8, 0.9, 0.95, 0.99):
        for n in range(1, 60):
            for k in (0, n):
                lo, hi = wilson_interval(k, n, conf)
                assert 0.0 <= lo <= hi <= 1.0, (k, n, conf, lo, hi)


def test_wilson_without_items_knows_nothing():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(0, 0, 0.5) == (0.0, 1.0)


# --- weighted_proportion (Hajek, delta method) ----------------------------------------------

def hajek_by_hand(y, pi, z):
    """Hajek ratio R = sum(y/pi) / sum(1/pi); linearized variable z_k = (y_k - R) / pi_k / N_hat,
    with-replacement variance n/(n-1) * sum (z_k - mean z)^2 (Sarndal et al., 5.7)."""
    w = [1 / p for p in pi]
    n_hat = sum(w)
    r = sum(wk * yk for wk, yk in zip(w, y)) / n_hat
    zs = [wk * (yk - r) / n_hat for wk, yk in zip(w, y)]
    mz = sum(zs) / len(zs)
    var = len(zs) / (len(zs) - 1) * sum((zk - mz) ** 2 for zk in zs)
    se = math.sqrt(var)
    return r, r - z * se, r + z * se


def test_hajek_estimate_and_delta_method_interval_by_hand():
    rng = np.random.default_rng(3)
    y = (rng.random(60) < 0.6).astype(float)
    pi = rng.choice([0.1, 0.25, 0.5, 1.0], size=60)       # 1.0 is allowed: a census item
    est, lo, hi = weighted_proportion(y, pi)
    r, wlo, whi = hajek_by_hand(y, pi, Z95)
    assert 0 < wlo < whi < 1                               # no clipping here
    assert (est, lo, hi) == pytest.approx((r, wlo, whi), abs=1e-12)
    # the confidence is passed on
    est50, lo50, hi50 = weighted_proportion(y, pi, 0.5)
    assert (est50, lo50, hi50) == pytest.approx(hajek_by_hand(y, pi, z_value(0.5)), abs=1e-12)
    # the weights matter: the plain mean differs
    assert abs(est - y.mean()) > 1e-3


def test_hajek_interval_is_clipped_to_the_unit_interval():
    y, pi = [1, 0, 1], [0.5, 0.25, 1.0]      # w = 2, 4, 1: R = 3/7, se = sqrt(336)/49
    est, lo, hi = weighted_proportion(y, pi)
    assert est == pytest.approx(3 / 7, abs=1e-15)
    r, wlo, whi = hajek_by_hand(y, pi, Z95)
    assert wlo < 0 and whi > 1
    assert (lo, hi) == (0.0, 1.0)
    # clipped on one side only
    y2, pi2 = [1] * 9 + [0], [0.5] * 10
    est, lo, hi = weighted_proportion(y2, pi2)
    r, wlo, whi = hajek_by_hand(y2, pi2, Z95)
    assert whi > 1 and 0 < wlo
    assert est == pytest.approx(0.9) and lo == pytest.approx(wlo, abs=1e-12) and hi == 1.0
    y3 = [0] * 9 + [1]
    est, lo, hi = weighted_proportion(y3, pi2)
    r, wlo, whi = hajek_by_hand(y3, pi2, Z95)
    assert wlo < 0 < whi < 1
    assert lo == 0.0 and hi == pytest.approx(whi, abs=1e-12)


def test_hajek_two_items_already_have_a_delta_method_interval():
    y, pi = [1, 0], [0.5, 0.25]
    est, lo, hi = weighted_proportion(y, pi, 0.5)
    r, wlo, whi = hajek_by_hand(y, pi, z_value(0.5))
    assert 0 < wlo < whi < 1
    assert (est, lo, hi) == pytest.approx((1 / 3, wlo, whi), abs=1e-12)


def test_hajek_one_item_gives_its_value_and_the_whole_interval():
    assert weighted_proportion([0], [0.2]) == (0.0, 0.0, 1.0)
    assert weighted_proportion([0.5], [1.0]) == (0.5, 0.0, 1.0)


def test_hajek_no_items_is_nan():
    got = weighted_proportion([], [])
    assert len(got) == 3 and all(math.isnan(v) for v in got)


@pytest.mark.parametrize("pi", [[0.5, 0.0], [0.5, -0.1], [0.5, 1.0000001]])
def test_inclusion_probabilities_must_be_in_zero_one(pi):
    with pytest.raises(ValueError, match=r"^inclusion probabilities must be in \(0, 1\]$"):
        weighted_proportion([1, 0], pi)


def test_hajek_lengths_must_agree():
    with pytest.raises(ValueError, match="^correct and inclusion must have the same length$"):
        weighted_proportion([1, 0, 1], [0.5, 0.5])


# --- importance_weights ----------------------------------------------------------------------

SHARED = np.array([[4, 2, 0], [2, 6, 3], [0, 3, 3]])
SIZES = [4, 6, 3]
COUNTS = [2, 0, 5]          # submission 1 has no draws


def test_heuristic_weights_by_hand():
    """w_ij ~ n_j |X_i & X_j| / (|X_i| |X_j|), rows normalized."""
    w = importance_weights(SHARED, SIZES, COUNTS)              # heuristic is the default
    want = np.zeros((3, 3))
    for i in range(3):
        raw = [COUNTS[j] * SHARED[i][j] / (SIZES[i] * SIZES[j]) for j in range(3)]
        want[i] = [r / sum(raw) for r in raw]
    assert w == pytest.approx(want, abs=1e-15)
    # row 0: only its own draws overlap (X_0 & X_2 is empty, n_1 = 0): weight 1 on itself
    assert list(w[0]) == [1.0, 0.0, 0.0]


def test_size_weights_are_the_draw_shares_for_every_target():
    w = importance_weights(SHARED, SIZES, COUNTS, "size")
    assert w.shape == (3, 3)
    assert w == pytest.approx(np.tile([2 / 7, 0, 5 / 7], (3, 1)), abs=1e-15)


def test_uniform_weights_are_equal_over_submissions_with_draws():
    w = importance_weights(SHARED, SIZES, COUNTS, "uniform")
    assert w == pytest.approx(np.tile([0.5, 0, 0.5], (3, 1)), abs=1e-15)


def test_a_row_without_positive_weight_is_nan():
    """Target 1 overlaps only submission 1 (no draws) under the heuristic: NaN, not 0."""
    shared = np.array([[2, 0], [0, 3]])
    w = importance_weights(shared, [2, 3], [4, 0])
    assert list(w[0]) == [1.0, 0.0]
    assert np.isnan(w[1]).all()
    for weighting in ("size", "uniform"):
        assert np.isnan(importance_weights(shared, [2, 3], [0, 0], weighting)).all()


def test_a_nan_row_is_silent():
    """NaN is the documented answer for a target without weight, not a numpy warning printed
    to the user's terminal."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for weighting in WEIGHTINGS:
            w = importance_weights(np.array([[2, 0], [0, 3]]), [2, 3], [0, 0], weighting)
            assert np.isnan(w).all()


def test_importance_weights_check_their_arguments():
    with pytest.raises(ValueError, match="^shared must be m x m and sizes, counts of length m$"):
        importance_weights(np.eye(2), [1, 1, 1], [1, 1, 1])
    with pytest.raises(ValueError, match="^shared must be m x m"):
        importance_weights(np.eye(2), [1, 1], [1, 1, 1])
    with pytest.raises(ValueError, match="^output sizes must be positive$"):
        importance_weights(np.eye(2), [1, 0], [1, 1])
    with pytest.raises(ValueError,
                       match="^weighting must be one of heuristic, size, uniform$"):
        importance_weights(np.eye(2), [1, 1], [1, 1], "best")
    assert WEIGHTINGS == ("heuristic", "size", "uniform")


# --- mixture_importance ----------------------------------------------------------------------

def mixture_by_hand(f, p, q, s, weights, z):
    """sum_j w_j mean_j(p/q f), variance sum_j w_j^2 s_j^2 / n_j (s_j with ddof 1; a
    stratum with one draw adds no variance estimate), strata of weight 0 left out."""
    est, var = 0.0, 0.0
    for j in sorted(set(s)):
        wj = weights[j]
        if wj == 0:
            continue
        g = [pk / qk * fk for fk, pk, qk, sk in zip(f, p, q, s) if sk == j]
        m = sum(g) / len(g)
        est += wj * m
        if len(g) > 1:
            s2 = sum((x - m) ** 2 for x in g) / (len(g) - 1)
            var += wj * wj * s2 / len(g)
    se = math.sqrt(var)
    return est, est - z * se, est + z * se, se


# four strata of unequal size and weight; "c" has a single draw, "d" two
F = [1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0.5]
P = [0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.0, 0.2, 0.3, 0.1]
Q = [0.25, 0.3, 0.2, 0.2, 0.15, 0.3, 0.25, 0.1, 0.4, 0.5, 0.4]
S = ["a", "a", "a", "b", "b", "b", "b", "b", "c", "d", "d"]


def test_mixture_estimate_variance_and_interval_by_hand():
    weights = {"a": 0.4, "b": 0.3, "c": 0.2, "d": 0.1}
    got = mixture_importance(F, P, Q, S, weights=weights)
    want = mixture_by_hand(F, P, Q, S, weights, Z95)
    assert 0 < want[1] < want[2] < 1
    assert got == pytest.approx(want, abs=1e-12)
    assert len(got) == 4
    got50 = mixture_importance(F, P, Q, S, confidence=0.5, weights=weights)
    assert got50 == pytest.approx(mixture_by_hand(F, P, Q, S, weights, z_value(0.5)), abs=1e-12)


def test_mixture_default_weights_are_the_draw_shares():
    got = mixture_importance(F, P, Q, S)
    shares = {"a": 3 / 11, "b": 5 / 11, "c": 1 / 11, "d": 2 / 11}
    assert got == pytest.approx(mixture_by_hand(F, P, Q, S, shares, Z95), abs=1e-12)


def test_mixture_leaves_out_strata_of_weight_zero_even_with_a_zero_proposal():
    q = list(Q)
    q[8] = 0.0                       # stratum c's draw has q = 0, but c weighs nothing
    weights = {"a": 0.5, "b": 0.4, "c": 0.0, "d": 0.1}
    got = mixture_importance(F, P, q, S, weights=weights)
    assert got == pytest.approx(mixture_by_hand(F, P, q, S, weights, Z95), abs=1e-12)
    # a stratum missing from the weights weighs nothing too
    got = mixture_importance(F, P, q, S, weights={"a": 0.5, "b": 0.4, "d": 0.1})
    assert got == pytest.approx(mixture_by_hand(F, P, q, S, weights, Z95), abs=1e-12)
    with pytest.raises(ValueError, match="^the proposal must be positive at every draw of a "
                                         "weighted stratum$"):
        mixture_importance(F, P, q, S, weights={"a": 0.4, "b": 0.3, "c": 0.2, "d": 0.1})


def test_mixture_with_a_nan_weight_is_nan():
    got = mixture_importance(F, P, Q, S, weights={"a": 0.5, "b": float("nan"), "c": 0.5,
                                                  "d": 0.0})
    assert len(got) == 4 and all(math.isnan(v) for v in got)


def test_mixture_interval_is_clipped_and_single_draw_strata_add_no_variance():
    # one draw per stratum: no variance estimate anywhere, the interval is the point
    est, lo, hi, se = mixture_importance([1, 0], [0.5, 0.5], [0.5, 0.5], ["a", "b"],
                                         weights={"a": 0.7, "b": 0.3})
    assert (est, lo, hi, se) == pytest.approx((0.7, 0.7, 0.7, 0.0), abs=1e-15)
    # an estimate above 1 (unbiased estimates may leave [0, 1]) with a wide interval
    f, p, q, s = [1, 0, 0, 1], [0.5] * 4, [0.2] * 4, ["a"] * 4
    est, lo, hi, se = mixture_importance(f, p, q, s)
    want = mixture_by_hand(f, p, q, s, {"a": 1.0}, Z95)
    assert want[1] < 0 and want[2] > 1
    assert (est, se) == pytest.approx((want[0], want[3]), abs=1e-12)
    assert (lo, hi) == (0.0, 1.0)


def test_mixture_checks_lengths_and_no_draws_is_nan():
    with pytest.raises(ValueError, match="^values, target, proposal and stratum must have the "
                                         "same length$"):
        mixture_importance([1, 0], [0.5, 0.5], [0.5], ["a", "a"])
    with pytest.raises(ValueError, match="same length"):
        mixture_importance([1, 0], [0.5, 0.5], [0.5, 0.5], ["a"])
    got = mixture_importance([], [], [], [])
    assert len(got) == 4 and all(math.isnan(v) for v in got)


# --- effective_size, percentile_interval -----------------------------------------------------

def test_kish_effective_size():
    assert effective_size([1, 1, 1, 1]) == 4.0
    assert effective_size([1, 2, 3]) == pytest.approx(36 / 14, abs=1e-15)
    assert effective_size([5.0]) == 1.0
    assert effective_size([]) == 0.0


def test_percentile_interval_drops_nans_and_uses_the_two_tails():
    r = [float(v) for v in range(101)] + [float("nan")] * 7
    # numpy's default (linear) quantile on 0..100: the a-quantile is 100 a
    assert percentile_interval(r) == pytest.approx((2.5, 97.5), abs=1e-12)
    assert percentile_interval(r, 0.8) == pytest.approx((10.0, 90.0), abs=1e-12)
    assert percentile_interval([3.0, 1.0, 2.0], 0.5) == pytest.approx((1.5, 2.5), abs=1e-12)
    assert percentile_interval([0.25, float("nan")]) == (0.25, 0.25)     # one replicate
    got = percentile_interval([float("nan")] * 3)
    assert len(got) == 2 and all(math.isnan(v) for v in got)
    got = percentile_interval([])
    assert len(got) == 2 and all(math.isnan(v) for v in got)
