"""RCC phase-2 evaluation: the 5:4:1 sample, Borda/Kemeny, Kendall's W checked
against scipy's Friedman test and mean Spearman correlation, and the related-to
confusion matrix checked against the spec's found-or-not vectors written out."""
from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from shareval.assessment import rcc_phase2 as r2
from shareval.assessment.rcc_phase2 import Candidate, Coded


def pool(per_stratum: dict[str, int], topics=("Education", "Finance")) -> list[Candidate]:
    out, k = [], 0
    for t in topics:
        for s, n in per_stratum.items():
            for _ in range(n):
                out.append(Candidate(f"p{k}", t, s))
                k += 1
    return out


@given(st.integers(0, 200), st.lists(st.integers(0, 9), min_size=1, max_size=4)
       .filter(lambda w: sum(w) > 0))
def test_quotas_sum_to_n_and_stay_within_one_of_the_exact_share(n, weights):
    mix = {f"s{i}": w for i, w in enumerate(weights)}
    q = r2.quotas(n, mix)
    assert sum(q.values()) == n
    for k, w in mix.items():
        assert abs(q[k] - n * w / sum(weights)) < 1


def test_sample_fills_the_5_4_1_mix_per_topic():
    s = r2.stratified_sample(pool({"titled": 30, "untitled": 30, "none": 30}), 20, seed=3)
    assert len(s.chosen) == 40 and not s.shortfall
    for topic in ("Education", "Finance"):
        assert s.got[topic] == {"titled": 10, "untitled": 8, "none": 2}
        got = [c for c in s.chosen if c.topic == topic]
        assert len({c.publication for c in got}) == 20


def test_sample_is_seeded_and_reports_a_short_stratum():
    cands = pool({"titled": 30, "untitled": 3, "none": 30})
    a, b = (r2.stratified_sample(cands, 20, seed=1) for _ in range(2))
    assert a.chosen == b.chosen
    assert a.chosen != r2.stratified_sample(cands, 20, seed=2).chosen
    assert any("5 untitled short" in m for m in a.shortfall)
    edu = [c for c in a.chosen if c.topic == "Education"]
    assert len(edu) == 20                       # filled from the other strata
    assert sum(c.stratum == "untitled" for c in edu) == 3


def test_sample_with_too_few_publications_says_so_and_rejects_bad_input():
    s = r2.stratified_sample(pool({"titled": 2, "untitled": 1, "none": 0}), 20)
    assert any("only 3 of 20" in m for m in s.shortfall)
    with pytest.raises(ValueError, match="unknown strata"):
        r2.stratified_sample([Candidate("p", "T", "maybe")], 5)
    with pytest.raises(ValueError, match="twice"):
        r2.stratified_sample([Candidate("p", "T", "none")] * 2, 5)


def test_where_teams_agree():
    outs = {"A": {"1", "2", "3"}, "B": {"1", "3"}}
    pubs = ["1", "2", "3", "4"]
    assert r2.agreement_levels(outs, pubs) == {"1": 1.0, "2": 0.5, "3": 1.0, "4": 0.0}
    assert r2.where_teams_agree(outs, pubs, 10) == ["1", "3", "4"]
    assert r2.where_teams_agree(outs, pubs, 10, data=True) == ["1", "3"]
    assert r2.where_teams_agree(outs, pubs, 10, data=False) == ["4"]


def test_topic_and_stratum_guesses():
    assert r2.topic_of("Bank stress testing") == "Finance"
    assert r2.topic_of("Reliability of reported age at menopause") == "Health care"
    assert r2.topic_of("On the shape of clouds") == "Other"
    assert r2.topic_of("An investigation of circulating contaminants") == "Other"
    assert r2.topic_of("Investment behaviour of fund managers") == "Finance"
    assert r2.stratum_proxy(True, 0) == "titled"
    assert r2.stratum_proxy(False, 2) == "untitled"
    assert r2.stratum_proxy(False, 0) == "none"


# consensus -----------------------------------------------------------------------

def test_borda_and_kemeny_on_a_known_profile():
    rankings = [["A", "B", "C"], ["A", "B", "C"], ["B", "C", "A"], ["C", "A", "B"]]
    order, pts = r2.borda(rankings)
    assert pts == {"A": 5.0, "B": 4.0, "C": 3.0} and order == ["A", "B", "C"]
    best, cost = r2.kemeny(rankings)
    assert best == ["A", "B", "C"] and cost == 0 + 0 + 2 + 2
    with pytest.raises(ValueError):
        r2.borda([["A", "A"]])


rankings_st = st.integers(2, 6).flatmap(lambda n: st.lists(
    st.permutations([f"T{i}" for i in range(n)]), min_size=1, max_size=7))


@given(rankings_st)
@settings(max_examples=60)
def test_kemeny_is_never_farther_than_borda_or_any_input(rankings):
    best, cost = r2.kemeny(rankings)
    total = lambda order: sum(r2.kendall_distance(order, r) for r in rankings)  # noqa: E731
    assert cost == total(best)
    assert cost <= total(r2.borda(rankings)[0])
    assert all(cost <= total(r) for r in rankings)


def test_kendall_distance_counts_discordant_pairs():
    assert r2.kendall_distance("ABC", "ABC") == 0
    assert r2.kendall_distance("ABC", "CBA") == 3
    assert r2.kendall_distance("ABCD", "BADC") == 2


# Kendall's W ------------------------------------------------------------------------

@given(st.integers(2, 7), st.integers(3, 7), st.integers(0, 10 ** 6), st.booleans())
@settings(max_examples=150)
def test_kendall_w_equals_friedman_chi2_over_m_n_minus_1(m, n, seed, ties):
    rng = np.random.default_rng(seed)
    table = rng.integers(1, 4, (m, n)) if ties else np.array(
        [rng.permutation(n) + 1 for _ in range(m)])
    w = r2.kendall_w(table)
    if any(len(set(row)) == 1 for row in table) and np.isnan(w):
        return
    chi2 = stats.friedmanchisquare(*table.T).statistic     # objects as groups
    if not math.isfinite(chi2):
        assert np.isnan(w)
        return
    assert w == pytest.approx(chi2 / (m * (n - 1)), abs=1e-9)
    assert -1e-12 <= w <= 1 + 1e-12


@given(st.integers(2, 6), st.integers(2, 8), st.integers(0, 10 ** 6))
@settings(max_examples=100)
def test_kendall_w_matches_mean_spearman_without_ties(m, n, seed):
    rng = np.random.default_rng(seed)
    table = np.array([rng.permutation(n) + 1 for _ in range(m)])
    rhos = [stats.spearmanr(a, b).statistic for a, b in itertools.combinations(table, 2)]
    assert r2.kendall_w(table) == pytest.approx((1 + (m - 1) * np.mean(rhos)) / m, abs=1e-9)


def test_kendall_w_edges():
    assert r2.kendall_w([[1, 2, 3], [1, 2, 3], [1, 2, 3]]) == pytest.approx(1.0)
    assert r2.kendall_w([[1, 2], [2, 1]]) == pytest.approx(0.0)
    assert math.isnan(r2.kendall_w([[1, 2, 3]]))
    assert r2.ranks_table([["B", "A"], ["A", "B"]], ["A", "B"]) == [[2, 1], [1, 2]]
    with pytest.raises(ValueError):
        r2.ranks_table([["A"]], ["A", "B"])


# related-to confusion matrix -------------------------------------------------------

def vectors_confusion(pubs: list[Coded], team: str) -> tuple[int, int, int]:
    """The spec's procedure written out: found-or-not vectors, baseline 1 for every
    reference and 0 for each publication's false-positive item, compared pairwise."""
    base, mine = [], []
    for p in pubs:
        rel = p.related.get(team, {})
        for ref in p.references:
            base.append(1)
            mine.append(1 if rel.get(ref) else 0)
        related = set()
        for ref in p.references:
            related |= set(rel.get(ref, []))
        base.append(0)
        mine.append(1 if [o for o in p.outputs.get(team, []) if o not in related] else 0)
    tp = sum(b == 1 and t == 1 for b, t in zip(base, mine))
    fn = sum(b == 1 and t == 0 for b, t in zip(base, mine))
    fp = sum(b == 0 and t == 1 for b, t in zip(base, mine))
    return tp, fn, fp


def random_pubs(rng: random.Random, n: int) -> list[Coded]:
    pubs = []
    for k in range(n):
        refs = [f"r{k}.{i}" for i in range(rng.randint(0, 4))]
        outputs, related = {}, {}
        for t in ("A", "B"):
            outs = [f"d{i}" for i in rng.sample(range(8), rng.randint(0, 4))]
            outputs[t] = outs
            related[t] = {r: rng.sample(outs, rng.randint(0, len(outs))) for r in refs
                          if outs and rng.random() < 0.6}
        pubs.append(Coded(str(k), refs, outputs, related))
    return pubs


@given(st.integers(0, 10 ** 6), st.integers(1, 12))
@settings(max_examples=150)
def test_related_scores_match_the_vector_procedure(seed, n):
    pubs = random_pubs(random.Random(seed), n)
    res = r2.related_scores(pubs, ["A", "B"])
    for t in ("A", "B"):
        tp, fn, fp = vectors_confusion(pubs, t)
        assert (res[t]["tp"], res[t]["fn"], res[t]["fp"]) == (tp, fn, fp)
        if tp + fp + fn:
            assert res[t]["f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
        if tp + fp and tp + fn and tp:
            p, r = tp / (tp + fp), tp / (tp + fn)
            assert res[t]["f1"] == pytest.approx(2 * p * r / (p + r))


def test_related_scores_example():
    pub = Coded("1", ["ALLBUS", "own survey"], {"A": ["d1", "d2"], "B": []},
                {"A": {"ALLBUS": ["d1"]}})
    res = r2.related_scores([pub], ["A", "B"])
    assert (res["A"]["tp"], res["A"]["fn"], res["A"]["fp"]) == (1, 1, 1)   # d2 unrelated
    assert res["A"]["f1"] == pytest.approx(0.5)
    assert (res["B"]["tp"], res["B"]["fn"], res["B"]["fp"]) == (0, 2, 0)
    assert res["B"]["f1"] == 0.0 and math.isnan(res["B"]["precision"])
