"""The spec's cost arithmetic (002, "Economics"), and the sample size's coverage."""
from __future__ import annotations

import numpy as np
import pytest

from shareval.assessment.plan import plan_for_budget, plan_for_width, z_value


def test_spec_worked_example():
    # "To estimate precision within 1% with 95% probability, we need about
    #  4*10^2 < 4*10^4 p(1-p) < 10^4 ... 4-5 seconds ... $12/hr ... $150"
    p = plan_for_width(0.01, z=2, precision=0.5, seconds=4.5, rate=12)
    assert p.sample == 10_000 and p.cost == pytest.approx(150.0)
    assert plan_for_width(0.01, z=2, precision=0.01).sample == 396        # > 4*10^2 bound
    # "80% overlap ... each new evaluation costs about $30"
    assert plan_for_width(0.01, z=2, overlap=0.8).cost == pytest.approx(30.0)
    # "a precision of about 2% ... under $15"
    two = plan_for_width(0.02, z=2, overlap=0.8)
    assert two.sample == 2_500 and two.cost < 15


def test_budget_is_the_inverse():
    b = plan_for_budget(20, z=2, overlap=0.8)
    assert (b.judgments, b.sample) == (1333, 6665) and b.cost <= 20
    assert b.half_width == pytest.approx(2 * np.sqrt(0.25 / b.sample))
    assert plan_for_width(b.half_width, z=2, overlap=0.8).sample <= b.sample + 1


def test_exact_normal_quantile_and_finite_population():
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert plan_for_width(0.01).sample == 9604
    assert plan_for_width(0.01, population=1000).sample == 906
    with pytest.raises(ValueError):
        plan_for_width(0.0)


def test_planned_sample_size_gives_nominal_coverage():
    rng = np.random.default_rng(0)
    for p_true in (0.5, 0.8):
        plan = plan_for_width(0.03, precision=p_true)
        k = rng.binomial(plan.sample, p_true, size=20_000)
        est = k / plan.sample
        hw = plan.z * np.sqrt(est * (1 - est) / plan.sample)
        coverage = np.mean(np.abs(est - p_true) <= hw)
        assert abs(coverage - 0.95) < 0.01, (p_true, coverage)
        assert np.median(hw) == pytest.approx(0.03, abs=0.002)


def test_cli_plan_and_bad_arguments(cli):
    import json
    code, out, _ = cli("assess", "plan", "--half-width", "0.01", "--z", "2", "--overlap", "0.8",
                       "--format", "json")
    m = json.loads(out)["metrics"]
    assert code == 0 and (m["sample"], m["judgments"], m["cost"]) == (10000, 2000, 30.0)
    code, _, err = cli("assess", "plan", "--half-width", "2")
    assert code == 2 and "half_width must be between 0 and 1" in err
