"""Importance-sampling weights of Chaganty et al. (2017): heuristic, size, uniform.

The oracle below is written from the paper's formulas with explicit
distributions over the item universe (dicts, loops), independently of the
matrix code in metrics/estimation.py and assessment/estimate.py:

    w_ij ~ n_j sum_x p_i(x) p_j(x)   (heuristic)  |  n_j (size)  |  1 (uniform)
    q_i(x) = sum_j w_ij p_j(x)
    pi_i = sum_j w_ij / n_j sum_{x in draws of j} p_i(x) / q_i(x) f(x)
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from shareval.assessment.estimate import estimate_all
from shareval.assessment.judgments import Judgment, Judgments, read_judgments
from shareval.formats.errors import Problems
from shareval.metrics.estimation import WEIGHTINGS, importance_weights, mixture_importance


def oracle(outputs: dict[str, set], draws: dict[str, list], truth: dict, weighting: str):
    """(weights, estimates) straight from the paper's sums."""
    names = sorted(outputs)
    universe = sorted(set().union(*outputs.values()))
    p = {i: {x: (1 / len(outputs[i]) if x in outputs[i] else 0.0) for x in universe}
         for i in names}
    n = {j: len(draws.get(j, [])) for j in names}
    weights, est = {}, {}
    for i in names:
        raw = {}
        for j in names:
            if weighting == "heuristic":
                raw[j] = n[j] * sum(p[i][x] * p[j][x] for x in universe)
            elif weighting == "size":
                raw[j] = float(n[j])
            else:
                raw[j] = 1.0 if n[j] else 0.0
        z = sum(raw.values())
        if z == 0:
            weights[i], est[i] = None, math.nan
            continue
        w = {j: raw[j] / z for j in names}
        weights[i] = w
        q = {x: sum(w[j] * p[j][x] for j in names) for x in universe}
        total = 0.0
        for j in names:
            if w[j] > 0:
                total += w[j] / n[j] * sum(p[i][x] / q[x] * truth[x] for x in draws[j])
        est[i] = total
    return weights, est


def judgments_of(outputs, draws, truth, with_overlaps=True) -> Judgments:
    """One judged unit per distinct drawn item; drawn_by repeats a submission
    once per draw of it (the draws are with replacement)."""
    by: dict[str, list[str]] = {}
    for j, xs in draws.items():
        for x in xs:
            by.setdefault(x, []).append(j)
    recs = [Judgment(x, tuple(s for s in sorted(outputs) if x in outputs[s]), "j1", "correct",
                     float(truth[x]), 0.5, "d", "precision", tuple(js), k)
            for k, (x, js) in enumerate(sorted(by.items()))]
    names = sorted(outputs)
    ov = {(a, b): len(outputs[a] & outputs[b]) for a, b in itertools.combinations(names, 2)}
    return Judgments(recs, {s: len(outputs[s]) for s in names}, ov if with_overlaps else None)


@st.composite
def worlds(draw):
    items = [f"x{k}" for k in range(draw(st.integers(1, 10)))]
    m = draw(st.integers(1, 4))
    outputs = {}
    for s in range(m):
        chosen = draw(st.sets(st.sampled_from(items), min_size=1))
        outputs[f"S{s}"] = set(chosen)
    truth = {x: draw(st.sampled_from([0.0, 0.5, 1.0])) for x in items}
    draws = {}
    for s, out in outputs.items():
        draws[s] = draw(st.lists(st.sampled_from(sorted(out)), max_size=6))
    # at least one submission drew something
    if not any(draws.values()):
        s = draw(st.sampled_from(sorted(outputs)))
        draws[s] = [sorted(outputs[s])[0]]
    return outputs, draws, truth


@settings(max_examples=300, deadline=None)
@given(worlds(), st.sampled_from(WEIGHTINGS))
def test_weights_and_estimates_equal_the_paper_oracle(world, weighting):
    outputs, draws, truth = world
    names = sorted(outputs)
    want_w, want = oracle(outputs, draws, truth, weighting)
    shared = np.array([[len(outputs[a] & outputs[b]) for b in names] for a in names])
    got_w = importance_weights(shared, [len(outputs[s]) for s in names],
                               [len(draws[s]) for s in names], weighting)
    for a, i in enumerate(names):
        if want_w[i] is None:
            assert np.all(np.isnan(got_w[a]))
        else:
            assert got_w[a] == pytest.approx([want_w[i][j] for j in names], abs=1e-9)
            assert got_w[a].sum() == pytest.approx(1.0, abs=1e-12)
    table, _ = estimate_all(judgments_of(outputs, draws, truth), "importance", bootstrap=0,
                            weights=weighting)
    judged = {x for xs in draws.values() for x in xs}
    for i in names:
        if math.isnan(want[i]) or not outputs[i] & judged:
            # no judged item of its own: the paper's sum is 0 (every target weight 0);
            # docs/assessment.md gives NaN, precision unknown
            assert math.isnan(table[i]["precision"])
        else:
            assert table[i]["precision"] == pytest.approx(want[i], abs=1e-9)


def test_worked_example_by_hand():
    """A = {a, b}, B = {b, c, d}, A drew a once, B drew b and c twice each; a, b correct.
    Heuristic row A: n_A sum p_A p_A = 1 * 2/4 = 1/2, n_B sum p_A p_B = 4 * 1/6 = 2/3,
    so w_A = (3/7, 4/7); q_A(a) = 3/7 * 1/2 = 3/14, q_A(b) = 3/14 + 4/7 * 1/3 = 17/42.
    pi_A = 3/7 * (1/2)/(3/14) + 4/7 * 1/4 * 2 * (1/2)/(17/42) = 1 + 6/17 (an unbiased
    estimate may leave [0, 1] on a small sample)."""
    outputs = {"A": {"a", "b"}, "B": {"b", "c", "d"}}
    draws = {"A": ["a"], "B": ["b", "c", "b", "c"]}
    truth = {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0}
    wA = (3 / 7, 4 / 7)
    qb = 3 / 7 * 1 / 2 + 4 / 7 * 1 / 3
    expect_a = wA[0] * (0.5 / (3 / 14)) + wA[1] / 4 * 2 * (0.5 / qb)
    assert qb == pytest.approx(17 / 42)
    assert expect_a == pytest.approx(1.0 + 6 / 17)
    table, _ = estimate_all(judgments_of(outputs, draws, truth), "importance", bootstrap=0)
    assert table["A"]["precision"] == pytest.approx(expect_a, abs=1e-12)
    # size weighting: w = (1/5, 4/5) for both targets
    table, _ = estimate_all(judgments_of(outputs, draws, truth), "importance", bootstrap=0,
                            weights="size")
    q = {"a": 1 / 5 * 1 / 2, "b": 1 / 5 * 1 / 2 + 4 / 5 * 1 / 3, "c": 4 / 5 * 1 / 3}
    expect = np.mean([0.5 / q[x] * truth[x] for x in ["a", "b", "c", "b", "c"]])
    assert table["A"]["precision"] == pytest.approx(expect, abs=1e-12)


@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_exactly_unbiased_by_enumeration(weighting):
    """Every outcome of one draw from A, two from B and one from C (with
    replacement): the expected estimate equals each true precision exactly."""
    outs = {"A": ["a", "b", "c"], "B": ["b", "c", "d", "e"], "C": ["e", "f"]}
    truth = {"a": 1, "b": 0, "c": 1, "d": 1, "e": 0, "f": 1}
    n = {"A": 1, "B": 2, "C": 1}
    names = sorted(outs)
    shared = np.array([[len(set(outs[a]) & set(outs[b])) for b in names] for a in names])
    w = importance_weights(shared, [len(outs[s]) for s in names], [n[s] for s in names],
                           weighting)
    per = [list(itertools.product(outs[s], repeat=n[s])) for s in names]
    for t, s in enumerate(names):
        ests = []
        for combo in itertools.product(*per):
            draws = [(x, names[k]) for k, xs in enumerate(combo) for x in xs]
            xs = [x for x, _ in draws]
            q = [sum(w[t, k] / len(outs[j]) for k, j in enumerate(names) if x in outs[j])
                 for x in xs]
            p = [1 / len(outs[s]) if x in outs[s] else 0.0 for x in xs]
            ests.append(mixture_importance([truth[x] for x in xs], p, q, [j for _, j in draws],
                                           weights=dict(zip(names, w[t])))[0])
        assert np.mean(ests) == pytest.approx(np.mean([truth[x] for x in outs[s]]), abs=1e-12)


def test_heuristic_weights_drop_disjoint_submissions():
    """The authors' own unit cases: disjoint outputs give the identity; identical
    outputs give n_j / n for every row; uniform gives 1/m."""
    eye = importance_weights(np.diag([3, 3, 3]), [3, 3, 3], [10, 50, 100], "heuristic")
    assert np.allclose(eye, np.eye(3))
    same = importance_weights(np.full((3, 3), 3), [3, 3, 3], [10, 50, 100], "heuristic")
    assert np.allclose(same, np.tile([10 / 160, 50 / 160, 100 / 160], (3, 1)))
    assert np.allclose(importance_weights(np.diag([3, 3, 3]), [3, 3, 3], [10, 50, 100],
                                          "uniform"), 1 / 3)
    # a submission without draws gets no weight, even under uniform
    assert np.allclose(importance_weights(np.full((2, 2), 2), [2, 2], [0, 5], "uniform"),
                       [[0, 1], [0, 1]])
    with pytest.raises(ValueError, match="weighting must be"):
        importance_weights(np.eye(2), [1, 1], [1, 1], "best")


def test_heuristic_needs_the_overlaps_line_and_checks_it(tmp_path):
    outputs = {"A": {"a", "b"}, "B": {"b", "c"}}
    draws = {"A": ["a", "b"], "B": ["b", "c"]}
    truth = {"a": 1.0, "b": 1.0, "c": 0.0}
    j = judgments_of(outputs, draws, truth, with_overlaps=False)
    with pytest.raises(ValueError, match="overlaps"):
        estimate_all(j, "importance", bootstrap=0)
    table, _ = estimate_all(j, "importance", bootstrap=0, weights="size")   # size needs none
    assert table["A"]["judged_items"] == 2
    j.overlaps = {("A", "B"): 0}          # but b, judged, is in both
    with pytest.raises(ValueError, match="share 0 items, but 1 judged"):
        estimate_all(j, "importance", bootstrap=0)
    j.sizes = {"A": 1, "B": 2}            # a and b, both judged, are in A
    with pytest.raises(ValueError, match="says A has 1 items, but 2 judged"):
        estimate_all(j, "importance", bootstrap=0, weights="size")
    f = tmp_path / "j.tsv"
    f.write_text("# sizes: A=2,B=2\n# overlaps: A+B=1,A+Z=1,A+B=3,A+B=x\n"
                 "item\tsubmissions\tanswer\tinclusion_probability\tdrawn_by\n"
                 "b\tA,B\tyes\t0.5\tA\n")
    problems = Problems()
    got = read_judgments(f, problems)
    assert got.overlaps == {("A", "B"): 1}
    assert [(p.line, p.field) for p in problems.items] == [(2, "overlaps")] * 3


def test_bootstrap_and_interval_follow_the_weights():
    """The normal interval and the stratified bootstrap are centred on the
    weighted estimate for every weighting."""
    rng = np.random.default_rng(0)
    items = [f"x{k}" for k in range(40)]
    outputs = {"A": set(items[:25]), "B": set(items[10:40]), "C": set(items[30:40])}
    truth = {x: float(rng.random() < 0.6) for x in items}
    draws = {s: list(rng.choice(sorted(o), 15 + 10 * k)) for k, (s, o) in
             enumerate(sorted(outputs.items()))}
    j = judgments_of(outputs, draws, truth)
    for weighting in WEIGHTINGS:
        table, _ = estimate_all(j, "importance", bootstrap=2000, weights=weighting)
        for s in outputs:
            row = table[s]
            assert row["precision_low"] < row["precision"] < row["precision_high"]
            mid = (row["precision_boot_low"] + row["precision_boot_high"]) / 2
            assert abs(mid - row["precision"]) < 0.05, (weighting, s)


def test_cli_without_overlaps_line_is_a_clear_error(tmp_path, capsys):
    from shareval.cli import main
    f = tmp_path / "j.tsv"
    f.write_text("# sizes: A=2,B=2\n"
                 "item\tsubmissions\tanswer\tinclusion_probability\tdrawn_by\n"
                 "b\tA,B\tyes\t0.5\tA\nc\tB\tno\t0.5\tB\n")
    assert main(["assess", "estimate", str(f), "--method", "importance"]) == 2
    err = capsys.readouterr().err
    assert "j.tsv" in err and "overlaps" in err and "Traceback" not in err
    assert main(["assess", "estimate", str(f), "--method", "importance", "--weights",
                 "size"]) == 0


@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_on_demand_uses_the_same_weights(weighting):
    """OnDemand's estimate after three submissions equals the paper oracle on its draws."""
    from shareval.assessment.ondemand import OnDemand
    rng = np.random.default_rng(1)
    items = [f"x{k}" for k in range(60)]
    truth = {x: float(rng.random() < 0.5) for x in items}
    outputs = {"A": set(items[:30]), "B": set(items[20:50]), "C": set(items[45:])}
    od = OnDemand(seed=2, weights=weighting)
    for name, out in outputs.items():
        od.evaluate(name, out, truth.__getitem__, half_width=0.2, pilot=10, max_draws=40)
    draws = {s: [x for x, j in od.draws if j == s] for s in outputs}
    _, want = oracle(outputs, draws, truth, weighting)
    for s in outputs:
        assert od.precision(s)[0] == pytest.approx(want[s], abs=1e-9)


def test_cli_simulate_prints_all_three_weightings(tmp_path, capsys):
    import json

    from shareval.cli import main
    out = tmp_path / "sim.json"
    assert main(["assess", "simulate", "--sims", "3", "--world-docs", "60", "--format", "json",
                 "-o", str(out)]) == 0
    res = json.loads(out.read_text())
    rows = res["breakdowns"]["estimators"]
    for w in WEIGHTINGS:
        row = rows[f"joint/importance-{w} precision"]
        assert set(row) == {"bias", "worst |bias|/SE", "coverage", "median width"}
        assert f"joint/importance-{w}/uniform precision width" in res["metrics"]
    assert res["counts"]["narrowest importance weighting"] in WEIGHTINGS
    assert main(["assess", "simulate", "--coverage", "0"]) == 2
    assert "coverage must be in (0, 1]" in capsys.readouterr().err
