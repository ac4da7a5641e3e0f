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


# --- rules of docs/conventions.md "Significance", each with a test that fails when broken

def exact_bootstrap(d, w=None):
    """Every one of the n^n equally likely resamples of n units: weighted mean differences."""
    d = np.asarray(d, float)
    w = np.ones(len(d)) if w is None else np.asarray(w, float)
    out = []
    for idx in itertools.product(range(len(d)), repeat=len(d)):
        idx = list(idx)
        out.append(np.sum(d[idx] * w[idx]) / np.sum(w[idx]))
    return np.array(out)


@pytest.mark.parametrize("d", [[0.3, 0.1, -0.2, 0.4], [-1.0, 0.0, 0.0], [1.0, 0.0, 0.0, -0.5],
                               [-0.2, 0.5, -0.4, -0.1, 0.05]])
def test_bootstrap_p_is_two_sided_share_on_the_other_side_of_zero(d):
    """p = 2 * share of resampled differences on the other side of 0 (0 included),
    against the exact bootstrap distribution enumerated."""
    d = np.asarray(d)
    exact = exact_bootstrap(d)
    obs = d.mean()
    other = np.mean(exact <= 0) if obs >= 0 else np.mean(exact >= 0)
    r = paired_bootstrap(d, np.zeros_like(d), weighted_mean, samples=40_000, seed=5)
    assert r.statistic == pytest.approx(obs)
    assert r.p_value == pytest.approx(min(1.0, 2 * other), abs=0.015)
    # two-sided: swapping the systems flips the sign, not the p-value
    s = paired_bootstrap(np.zeros_like(d), d, weighted_mean, samples=40_000, seed=5)
    assert s.statistic == pytest.approx(-obs) and s.p_value == r.p_value


def test_bootstrap_p_add_one_smoothing_worked_example():
    # every unit better: no resample is <= 0, so p = 2 * (0 + 1) / (9 + 1)
    a, b = np.array([0.5, 0.7, 0.9]), np.zeros(3)
    assert paired_bootstrap(a, b, weighted_mean, samples=9).p_value == pytest.approx(0.2)
    assert paired_bootstrap(b, a, weighted_mean, samples=9).p_value == pytest.approx(0.2)
    assert paired_bootstrap(a, b, weighted_mean, samples=99).p_value == pytest.approx(0.02)


def test_bootstrap_percentile_interval_matches_the_normal_limit():
    """Many units: the percentile CI of the mean difference is mean -/+ z se."""
    rng = np.random.default_rng(11)
    d = rng.normal(0.05, 1.0, 2000)
    r = paired_bootstrap(d, np.zeros_like(d), weighted_mean, samples=20_000, seed=2)
    se = d.std() / np.sqrt(d.size)
    assert r.ci_low == pytest.approx(d.mean() - 1.959964 * se, abs=0.06 * se)
    assert r.ci_high == pytest.approx(d.mean() + 1.959964 * se, abs=0.06 * se)
    r90 = paired_bootstrap(d, np.zeros_like(d), weighted_mean, samples=20_000, seed=2,
                           confidence=0.9)
    assert r90.ci_low == pytest.approx(d.mean() - 1.644854 * se, abs=0.06 * se)
    assert r.samples == 20_000 and r.method == "paired bootstrap"


def test_bootstrap_resamples_within_strata():
    """Strata of unequal sizes with constant differences: resampling within each
    stratum keeps every resample's mean at the observed one, so the CI is a point;
    resampling across strata would spread it."""
    d = np.array([1.0] * 3 + [0.0] * 3 + [0.5] * 4)
    strata = np.array(["x"] * 3 + ["y"] * 3 + ["z"] * 4)
    r = paired_bootstrap(d, np.zeros_like(d), weighted_mean, strata=strata, samples=2000)
    assert r.ci_low == pytest.approx(0.5) and r.ci_high == pytest.approx(0.5)
    flat = paired_bootstrap(d, np.zeros_like(d), weighted_mean, samples=2000)
    assert flat.ci_high - flat.ci_low > 0.2


def test_unit_weights_enter_the_statistic_the_interval_and_the_randomization_p():
    d = np.array([0.4, -0.3, 0.2, -0.5])
    w = np.array([3.0, 1.0, 2.0, 0.5])
    obs = np.sum(d * w) / w.sum()
    z = np.zeros_like(d)
    boot = paired_bootstrap(d, z, weighted_mean, weights=w, samples=40_000, seed=1)
    rand = randomization_test(d, z, weighted_mean, weights=w, samples=40_000, seed=1)
    assert boot.statistic == pytest.approx(obs) and rand.statistic == pytest.approx(obs)
    exact = exact_bootstrap(d, w)
    assert boot.ci_low == pytest.approx(np.quantile(exact, 0.025), abs=0.03)
    assert boot.ci_high == pytest.approx(np.quantile(exact, 0.975), abs=0.03)
    assert boot.p_value == pytest.approx(min(1, 2 * np.mean(exact <= 0)), abs=0.015)
    flips = [abs(np.sum(d * np.array(s) * w) / w.sum()) >= abs(obs) - 1e-12
             for s in itertools.product([1, -1], repeat=len(d))]
    assert rand.p_value == pytest.approx(np.mean(flips), abs=0.01)


def test_randomization_identical_systems_over_several_batches_give_p_one():
    """Enough units x samples for several vectorised batches: every sample counts."""
    from shareval.metrics import significance
    a = np.linspace(0, 1, 1000)
    samples = 3 * significance.BATCH_ELEMENTS // a.size + 7
    r = randomization_test(a, a, weighted_mean, samples=samples)
    assert r.p_value == 1.0 and r.samples == samples
    b = a + 1e-3 * np.sin(np.arange(a.size))
    r = paired_bootstrap(a, b, weighted_mean, samples=samples)
    assert r.samples == samples and 0 <= r.p_value <= 1


def test_randomization_reports_no_interval_and_is_seeded():
    rng = np.random.default_rng(4)
    a = rng.random(12)
    b = a - rng.normal(0.1, 0.3, 12)        # p well inside (0, 1): seeds give different p
    r = randomization_test(a, b, weighted_mean, samples=500, seed=9)
    assert np.isnan(r.ci_low) and np.isnan(r.ci_high)
    assert r.samples == 500 and r.method == "paired randomization"
    assert r.p_value == randomization_test(a, b, weighted_mean, samples=500, seed=9).p_value
    assert r.p_value != randomization_test(a, b, weighted_mean, samples=500, seed=10).p_value


def test_bad_unit_statistics_are_refused_with_a_reason():
    with pytest.raises(ValueError, match="different unit statistics"):
        paired_bootstrap(np.zeros(3), np.zeros(4), weighted_mean)
    with pytest.raises(ValueError, match="no units to compare"):
        randomization_test(np.zeros(0), np.zeros(0), weighted_mean)
    one = paired_bootstrap(np.array([0.5]), np.array([0.25]), weighted_mean, samples=50)
    assert one.statistic == 0.25 and one.ci_low == one.ci_high == 0.25
