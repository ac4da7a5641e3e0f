"""All-pairs significance: verdicts, Holm, groups, undecidable pairs, intervals; the
shared-draw shortcut gives exactly what metrics.significance gives pair by pair."""
import math

import numpy as np
import pytest

from shareval.metrics.multiple import holm
from shareval.metrics.significance import paired_bootstrap, randomization_test
from shareval.overview.significance import PairTest, all_pairs, groups, interval
from shareval.stats import MIN_UNITS, too_few_units
from shareval.tasks.base import UnitStats, micro_f1, weighted_mean

N = 40
UNITS = [f"q{i}" for i in range(N)]


def mean_stats(values, units=UNITS, strata=None):
    v = np.asarray(values, dtype=float)
    return UnitStats("map", list(units), v[:, None], weighted_mean, np.ones(len(v)), strata)


def four_systems():
    """A and B clearly equal (B = A but 0.01 higher on one unit), C clearly below
    them (-0.3 on every unit, some noise), D far below C."""
    rng = np.random.default_rng(5)
    a = rng.uniform(0.6, 0.9, N)
    b = a.copy()
    b[0] += 0.01
    c = a - 0.3 + rng.normal(0, 0.02, N)
    d = c - 0.3 + rng.normal(0, 0.02, N)
    # given in no particular order
    return [("C", mean_stats(c)), ("B", mean_stats(b)), ("D", mean_stats(d)),
            ("A", mean_stats(a))]


def test_four_systems_verdicts_holm_and_groups():
    m = all_pairs(four_systems(), samples=2000, seed=1)
    assert m.systems == ["B", "A", "C", "D"]
    assert m.tests[("A", "B")].verdict == "no difference"
    for pair in [("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"), ("C", "D")]:
        t = m.tests[pair]
        assert t.verdict == "differ" and t.p_holm < 0.05 and t.note == ""
        assert t.ci_low < t.difference < t.ci_high and t.ci_low > 0
    ab = m.tests[("B", "A")]
    assert ab.difference == pytest.approx(0.01 / N) and ab.p_randomization == 1.0
    # Holm over the 6 pairs' randomization p, in any order
    ranked = [(a, b) for i, a in enumerate(m.systems) for b in m.systems[i + 1:]]
    raw = [m.tests[p].p_randomization for p in ranked]
    assert [m.tests[p].p_holm for p in ranked] == pytest.approx(holm(raw).tolist())
    assert all(m.tests[p].p_holm >= m.tests[p].p_randomization for p in ranked)
    # the smallest p is multiplied by 6: 6 / 2001
    assert min(m.tests[p].p_holm for p in ranked) == pytest.approx(6 / 2001)
    assert m.groups == [["B", "A"], ["C"], ["D"]]
    assert len(m.tests) == 12 and m.notes == []


def test_mirrored_pairs():
    m = all_pairs(four_systems(), samples=500)
    for (a, b), t in m.tests.items():
        u = m.tests[(b, a)]
        assert (u.a, u.b) == (b, a) == (t.b, t.a)
        assert u.difference == -t.difference
        assert (u.ci_low, u.ci_high) == (-t.ci_high, -t.ci_low)
        assert (u.p_randomization, u.p_holm, u.verdict) == (t.p_randomization, t.p_holm,
                                                            t.verdict)
        assert t.difference == pytest.approx(m.values[a] - m.values[b])


def _check_against_pairwise(named, samples=700, seed=3, confidence=0.9):
    m = all_pairs(named, samples=samples, seed=seed, confidence=confidence)
    for i, a in enumerate(m.systems):
        for b in m.systems[i + 1:]:
            ua, ub = dict(named)[a], dict(named)[b]
            boot = paired_bootstrap(ua.stats, ub.stats, ua.aggregate, ua.weights, ua.strata,
                                    samples, confidence, seed)
            rand = randomization_test(ua.stats, ub.stats, ua.aggregate, ua.weights,
                                      samples, seed)
            t = m.tests[(a, b)]
            assert t.difference == pytest.approx(boot.statistic, abs=1e-12)
            assert (t.ci_low, t.ci_high) == pytest.approx((boot.ci_low, boot.ci_high),
                                                          abs=1e-12)
            assert t.p_bootstrap == pytest.approx(boot.p_value, abs=1e-12)
            assert t.p_randomization == pytest.approx(rand.p_value, abs=1e-12)


def test_same_numbers_as_the_pairwise_tests_weighted_mean_with_strata():
    rng = np.random.default_rng(11)
    strata = np.array(["de"] * 15 + ["en"] * 25)
    w = np.where(strata == "de", 1 / (2 * 15), 1 / (2 * 25))
    named = [(f"s{k}", UnitStats("f1", UNITS, (rng.random(N) + 0.05 * k)[:, None],
                                 weighted_mean, w, strata)) for k in range(5)]
    _check_against_pairwise(named)


def test_same_numbers_as_the_pairwise_tests_micro_f1():
    rng = np.random.default_rng(12)
    named = [(f"s{k}", UnitStats("micro_f1", UNITS,
                                 rng.integers(0, 4 + k, (N, 3)).astype(float), micro_f1,
                                 np.ones(N))) for k in range(5)]
    _check_against_pairwise(named)


def test_same_numbers_as_the_pairwise_tests_any_other_aggregate():
    def median(stats, weights):                      # no shortcut: pair by pair
        return np.median(stats[..., 0], axis=-1)
    rng = np.random.default_rng(13)
    named = [(f"s{k}", UnitStats("median", UNITS, (rng.random(N) + 0.1 * k)[:, None],
                                 median, np.ones(N))) for k in range(4)]
    _check_against_pairwise(named, samples=300)


def test_too_few_units_cannot_decide():
    few = UNITS[:MIN_UNITS - 1]
    m = all_pairs([("X", mean_stats([1.0] * len(few), few)),
                   ("Y", mean_stats([0.0] * len(few), few))], samples=200)
    t = m.tests[("X", "Y")]
    assert t.verdict == "cannot decide" and t.note == too_few_units(MIN_UNITS - 1)
    assert t.units == MIN_UNITS - 1 and math.isnan(t.p_holm)
    assert t.difference == 1.0
    assert m.groups == [["X", "Y"]]                  # undecided counts as not differing
    assert "1 of 1 pairs cannot be decided" in m.notes[0]


def test_different_unit_lists_cannot_decide_and_the_rest_is_still_tested():
    rng = np.random.default_rng(2)
    other = [f"d{i}" for i in range(N)]
    named = [("A", mean_stats(rng.random(N) + 1)), ("B", mean_stats(rng.random(N))),
             ("Z", mean_stats(rng.random(N) + 0.5, other))]
    m = all_pairs(named, samples=500)
    assert m.systems == ["A", "Z", "B"]
    for pair in [("A", "Z"), ("Z", "B")]:
        t = m.tests[pair]
        assert t.verdict == "cannot decide" and "different units" in t.note
        assert t.units == 0 and math.isnan(t.p_randomization) and math.isnan(t.p_holm)
    ab = m.tests[("A", "B")]
    assert ab.verdict == "differ" and ab.p_holm == ab.p_randomization   # m = 1
    assert m.groups == [["A", "Z"], ["Z", "B"]]


def test_same_units_in_another_order_cannot_decide():
    m = all_pairs([("A", mean_stats(np.ones(N))),
                   ("B", mean_stats(np.zeros(N), UNITS[::-1]))], samples=100)
    assert m.tests[("A", "B")].verdict == "cannot decide"


def test_undefined_metric_cannot_decide():
    m = all_pairs([("A", mean_stats(np.ones(N))), ("B", mean_stats([np.nan] * N))],
                  samples=100)
    assert m.systems == ["A", "B"]
    t = m.tests[("A", "B")]
    assert t.verdict == "cannot decide" and "undefined" in t.note and "B" in t.note


def test_lower_is_better_ordering():
    named = four_systems()
    up = all_pairs(named, samples=300)
    down = all_pairs(named, samples=300, lower_is_better=True)
    assert up.systems == ["B", "A", "C", "D"]
    assert down.systems == ["D", "C", "A", "B"]
    assert down.tests[("D", "C")].difference < 0
    assert down.groups == [["D"], ["C"], ["A", "B"]]


def test_ties_ordered_by_name():
    m = all_pairs([("b", mean_stats(np.ones(N))), ("a", mean_stats(np.ones(N))),
                   ("c", mean_stats(np.zeros(N)))], samples=100)
    assert m.systems == ["a", "b", "c"]


def test_groups_overlap_like_a_compact_letter_display():
    def tests(differing, names):
        out = {}
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                v = "differ" if (a, b) in differing else "no difference"
                out[(a, b)] = PairTest(a, b, 20, 0, 0, 0, 0, 0, 0, v)
        return out
    names = list("ABCDE")
    assert groups(names, tests({("A", "C"), ("A", "D"), ("A", "E"), ("B", "E")}, names)) == \
        [["A", "B"], ["B", "C", "D"], ["C", "D", "E"]]
    assert groups(names, tests(set(), names)) == [names]
    everything = {(a, b) for i, a in enumerate(names) for b in names[i + 1:]}
    assert groups(names, tests(everything, names)) == [[n] for n in names]
    assert groups([], {}) == []
    # or a function saying which pairs differ
    assert groups(list("ABC"), lambda a, b: {a, b} == {"A", "C"}) == [["A", "B"], ["B", "C"]]


def test_duplicate_names_are_an_error():
    with pytest.raises(ValueError, match="unique.*A"):
        all_pairs([("A", mean_stats(np.ones(N))), ("A", mean_stats(np.ones(N)))])


def test_interval_contains_the_value():
    rng = np.random.default_rng(4)
    us = mean_stats(rng.random(N))
    lo, hi = interval(us, samples=2000)
    value = float(np.mean(us.stats))
    assert lo < value < hi
    assert interval(us, samples=2000, seed=1) != (lo, hi)
    assert interval(us, samples=2000) == (lo, hi)                  # seeded
    lo90, hi90 = interval(us, samples=2000, confidence=0.9)
    assert lo <= lo90 < hi90 <= hi


def test_interval_is_stratified():
    # two languages weighted equally: "en" units all 1, "de" all 0; value 0.5.
    # Within strata every resample keeps 20 + 20 units: always 0.5. Without, not.
    strata = np.array(["en"] * 20 + ["de"] * 20)
    values = np.r_[np.ones(20), np.zeros(20)]
    assert interval(mean_stats(values, strata=strata), samples=500) == (0.5, 0.5)
    lo, hi = interval(mean_stats(values), samples=500)
    assert lo < 0.5 < hi


def test_interval_undefined_below_two_units():
    assert all(math.isnan(v) for v in interval(mean_stats([0.7], ["q0"])))
