"""The on-demand evaluation's documented defaults (docs/kbp-assessment.md, "Assessing
every run"): a pilot of 50 draws, then at least as many main draws, to an interval
half-width of 0.05."""
from __future__ import annotations

from shareval.assessment.ondemand import OnDemand


def _evaluate(truth: dict, **kw):
    return OnDemand(seed=3).evaluate("run", sorted(truth), truth.__getitem__, **kw)


def test_a_pilot_of_50_then_at_least_50_main_draws():
    """Every item true: the variance is 0, so stage 2 takes its floor, the pilot's size."""
    truth = {f"m{i}": 1.0 for i in range(500)}
    ev = _evaluate(truth)
    assert ev.draws == 50 + 50 and ev.precision == 1.0
    assert _evaluate(truth, pilot=20).draws == 20 + 20


def test_the_main_draws_reach_a_half_width_of_005_by_default():
    """Half the items true: about z^2 p(1-p) / 0.05^2 = 384 draws, 150 for 0.08."""
    truth = {f"m{i}": float(i % 2) for i in range(2000)}
    default = _evaluate(truth)
    assert default.draws == _evaluate(truth, half_width=0.05, pilot=50).draws
    assert 300 <= default.draws - 50 <= 480, default.draws
    assert (default.high - default.low) / 2 <= 0.06
    assert _evaluate(truth, half_width=0.08).draws < 0.6 * default.draws
