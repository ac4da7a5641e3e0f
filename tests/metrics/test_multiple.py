"""Holm's step-down correction: against statsmodels and a hand-worked example."""
import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from shareval.metrics.multiple import holm


def test_hand_worked():
    # sorted 0.005, 0.01, 0.03, 0.04 (m = 4): * 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04;
    # running maximum 0.02, 0.03, 0.06, 0.06; back in the given order
    got = holm([0.03, 0.005, 0.04, 0.01])
    assert got == pytest.approx([0.06, 0.02, 0.06, 0.03])


def test_capped_at_one_and_never_below_raw():
    p = np.array([0.3, 0.6, 0.02, 0.9])
    got = holm(p)
    assert got.tolist() == pytest.approx([0.9, 1.0, 0.08, 1.0])
    assert np.all(got >= p)


@pytest.mark.parametrize("seed", range(25))
def test_against_statsmodels_random(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 60))
    p = rng.random(m) ** 3                   # many small p-values
    if seed % 2:
        p = np.round(p, 2)                   # ties
    expected = multipletests(p, method="holm")[1]
    assert holm(p) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_nan_stays_nan_and_is_not_counted(seed):
    rng = np.random.default_rng(100 + seed)
    p = np.round(rng.random(30) ** 2, 2)
    p[rng.random(30) < 0.3] = np.nan
    p[0] = np.nan
    got = holm(p)
    known = ~np.isnan(p)
    assert np.isnan(got[~known]).all()
    assert got[known] == pytest.approx(multipletests(p[known], method="holm")[1], abs=1e-12)


def test_ties_get_the_same_value_and_order_is_kept():
    got = holm([0.01, 0.02, 0.01, 0.5])
    # sorted 0.01, 0.01, 0.02, 0.5: 0.04, 0.03 -> 0.04, 0.04, 0.5
    assert got.tolist() == pytest.approx([0.04, 0.04, 0.04, 0.5])


def test_monotone_in_the_raw_p():
    p = np.random.default_rng(7).random(40) ** 4
    got = holm(p)
    order = np.argsort(p)
    assert np.all(np.diff(got[order]) >= 0)


def test_empty_and_all_nan():
    assert holm([]).tolist() == []
    assert np.isnan(holm([np.nan, np.nan])).all()


@pytest.mark.parametrize("bad", [[0.1, 1.5], [-0.01], [np.inf]])
def test_p_outside_unit_interval_is_an_error(bad):
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm(bad)


def test_two_d_input_is_an_error():
    with pytest.raises(ValueError, match="1-d"):
        holm([[0.1, 0.2]])
