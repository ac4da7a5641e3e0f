"""The on-demand evaluation's documented defaults (docs/kbp-assessment.md, "Assessing
every run"): a pilot of 50 draws, then at least as many main draws, to an interval
half-width of 0.05."""
from __future__ import annotations

import numpy as np
import pytest

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


def _oracle_main_draws(x_a, a_draws, x_b, pilot_items, label, half_width, pilot):
    """Stage 2's n from docs/assessment.md, written from the formulas: for each n >= pilot,
    heuristic weights w_Bj ~ n_j |X_B & X_j| / (|X_B| |X_j|) with n_B = n, the mixture
    q(x) = sum_j w_Bj [x in X_j] / |X_j|, per draw g = [x in X_B] / |X_B| / q(x) * y(x),
    predicted variance sum_j w_Bj^2 s_j^2 / n_j (s_j^2 of g over stratum j's draws, the
    pilot standing in for B's); n is the smallest whose z * sd fits the half-width."""
    z = 1.959963984540054
    sizes = {"A": len(x_a), "B": len(x_b)}
    sets = {"A": set(x_a), "B": set(x_b)}
    shared = {j: len(sets["B"] & sets[j]) for j in sets}
    for n in range(pilot, 10_001):
        counts = {"A": len(a_draws), "B": n}
        raw = {j: counts[j] * shared[j] / (sizes["B"] * sizes[j]) for j in sets}
        w = {j: v / sum(raw.values()) for j, v in raw.items()}

        def g(x):
            q = sum(w[j] * (x in sets[j]) / sizes[j] for j in sets)
            return (x in sets["B"]) / sizes["B"] / q * label[x]
        strata = {"A": [g(x) for x in a_draws], "B": [g(x) for x in pilot_items]}
        var = sum(w[j] ** 2 * np.var(strata[j], ddof=1) / counts[j] for j in sets)
        if z * np.sqrt(var) <= half_width:
            return n
    return 10_000


@pytest.mark.parametrize("half_width, share_true", [(0.05, 0.5), (0.04, 0.8), (0.08, 0.3)])
def test_the_main_draws_are_the_smallest_n_the_predicted_variance_allows(half_width,
                                                                           share_true):
    x_a = [f"m{i}" for i in range(600)]
    x_b = [f"m{i}" for i in range(300, 1000)]             # half of B's output is A's too
    rng = np.random.default_rng(7)
    label = {x: float(rng.random() < share_true) for x in set(x_a) | set(x_b)}
    od = OnDemand(seed=1)
    od.add("A", x_a)
    a_draws = od.draw("A", 300)
    od.labels.update({x: label[x] for x in a_draws})
    od.record("A", a_draws)
    od.add("B", x_b)
    trial = od.draw("B", 50)
    od.labels.update({x: label[x] for x in trial})
    n = od.sample_size("B", trial, half_width)
    assert n == _oracle_main_draws(x_a, a_draws, x_b, trial, label, half_width, 50)


def test_the_paper_heuristic_is_the_default_weighting():
    x_a, x_b = [f"m{i}" for i in range(600)], [f"m{i}" for i in range(300, 1000)]
    truth = {x: float(int(x[1:]) % 3 > 0) for x in set(x_a) | set(x_b)}

    def late(**kw):
        od = OnDemand(seed=2, **kw)
        od.evaluate("A", x_a, truth.__getitem__)
        return od.evaluate("B", x_b, truth.__getitem__)
    assert late() == late(weights="heuristic") != late(weights="size")
