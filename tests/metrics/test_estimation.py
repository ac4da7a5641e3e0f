"""Wilson intervals against statsmodels; the weighted estimator by simulation."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from shareval.metrics.estimation import weighted_proportion, wilson_interval


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5000), st.data(), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_matches_statsmodels(n, data, conf):
    k = data.draw(st.integers(0, n))
    lo, hi = wilson_interval(k, n, conf)
    slo, shi = proportion_confint(k, n, alpha=1 - conf, method="wilson")
    assert lo == pytest.approx(slo, abs=1e-12) and hi == pytest.approx(shi, abs=1e-12)


def test_edge_cases():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert np.isnan(weighted_proportion([], [])[0])
    assert weighted_proportion([1], [0.5]) == (1.0, 0.0, 1.0)
    with pytest.raises(ValueError):
        weighted_proportion([1, 0], [0.5, 0])


def test_uniform_inclusion_is_the_plain_mean():
    y = np.array([1, 0, 1, 1, 0, 1])
    est, lo, hi = weighted_proportion(y, np.full(6, 0.1))
    assert est == pytest.approx(y.mean()) and lo < est < hi


def test_unequal_probability_sampling_is_unbiased_and_covers():
    """Poisson sampling with probabilities tied to correctness: the naive mean is
    biased, the weighted estimate is not, and its interval covers ~95%."""
    rng = np.random.default_rng(1)
    N = 20_000
    truth = rng.random(N) < 0.7
    pi = np.where(truth, 0.02, 0.06)             # oversample errors
    ests, naive, cover = [], [], []
    for _ in range(1000):
        take = rng.random(N) < pi
        est, lo, hi = weighted_proportion(truth[take], pi[take])
        ests.append(est)
        naive.append(truth[take].mean())
        cover.append(lo <= truth.mean() <= hi)
    ests = np.array(ests)
    se = ests.std(ddof=1) / np.sqrt(len(ests))
    print(f"bias {ests.mean() - truth.mean():+.5f} (3 SE = {3 * se:.5f}), "
          f"naive bias {np.mean(naive) - truth.mean():+.4f}, coverage {np.mean(cover):.3f}")
    assert abs(ests.mean() - truth.mean()) < 3 * se
    assert abs(np.mean(naive) - truth.mean()) > 0.1
    assert abs(np.mean(cover) - 0.95) < 0.02
