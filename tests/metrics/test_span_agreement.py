"""Span agreement between two annotators (exact and partial one-to-one matching) and
spans as per-token labels: checked against a brute-force maximum matching, examples
worked out by hand, and a test for every documented rule (ties, empty spans, touching
spans, undefined scores)."""
import itertools
import math
import random

import pytest
from hypothesis import given, settings, strategies as st

from shareval.metrics.agreement import (cohen_kappa, match_spans, pairwise_span_f1,
                                        span_agreement, token_labels, token_offsets)


def brute_force_matching_size(a, b, related):
    """The largest one-to-one set of related pairs, by trying every subset of a's
    spans against every ordered choice of b's spans (small inputs only)."""
    for size in range(min(len(a), len(b)), 0, -1):
        for rows in itertools.combinations(range(len(a)), size):
            for cols in itertools.permutations(range(len(b)), size):
                if all(related(a[i], b[j]) for i, j in zip(rows, cols)):
                    return size
    return 0


def overlaps(x, y):
    return x[2:] == y[2:] and max(x[0], y[0]) < min(x[1], y[1])


spans = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 5), st.sampled_from("DV"),
                           st.sampled_from(["", "t1"]))
                 .map(lambda s: (s[0], s[0] + s[1], s[2], s[3])), max_size=5)


@settings(max_examples=300, deadline=None)
@given(spans, spans)
def test_partial_matching_is_maximum_and_one_to_one(a, b):
    pairs = match_spans(a, b, "partial")
    assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)
    assert all(overlaps(a[i], b[j]) for i, j in pairs)
    assert len(pairs) == brute_force_matching_size(a, b, overlaps)


@settings(max_examples=300, deadline=None)
@given(spans, spans)
def test_exact_matching_is_maximum_and_one_to_one(a, b):
    pairs = match_spans(a, b, "exact")
    assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)
    assert all(a[i] == b[j] for i, j in pairs)
    assert len(pairs) == brute_force_matching_size(a, b, lambda x, y: x == y)


@settings(max_examples=200, deadline=None)
@given(spans, spans, st.randoms(use_true_random=False))
def test_the_pairs_do_not_depend_on_input_order(a, b, rnd):
    def matched(a, b):
        return sorted((a[i], b[j]) for i, j in match_spans(a, b, "partial"))
    a2, b2 = a[:], b[:]
    rnd.shuffle(a2)
    rnd.shuffle(b2)
    assert matched(a, b) == matched(a2, b2)


def test_partial_is_a_maximum_matching_not_first_come():
    # a0 overlaps b0 most (3 characters) and b1 (2), a1 only b0: a0 taking its first
    # choice b0 for good would leave a1 alone
    a = [(0, 10, "D", ""), (4, 6, "D", "")]
    b = [(2, 5, "D", ""), (8, 12, "D", "")]
    assert match_spans(a, b, "partial") == [(0, 1), (1, 0)]
    assert span_agreement(a, b, "partial")["f1"] == 1.0


def test_partial_ties_go_to_the_larger_overlap_then_the_earlier_span():
    a = [(0, 10, "D", "")]
    assert match_spans(a, [(1, 3, "D", ""), (2, 10, "D", "")], "partial") == [(0, 1)]
    assert match_spans(a, [(6, 10, "D", ""), (0, 4, "D", "")], "partial") == [(0, 1)]
    # equal overlap and position: the first of two identical spans
    assert match_spans(a, [(0, 4, "D", ""), (0, 4, "D", "")], "partial") == [(0, 0)]


def test_partial_needs_a_shared_character_and_the_same_label_and_target():
    a = [(0, 5, "D", "x")]
    assert match_spans(a, [(5, 9, "D", "x")], "partial") == []            # touching
    assert match_spans(a, [(4, 9, "D", "x")], "partial") == [(0, 0)]       # one character
    assert match_spans(a, [(0, 5, "V", "x")], "partial") == []            # other label
    assert match_spans(a, [(0, 5, "D", "y")], "partial") == []            # other target
    assert match_spans(a, [(0, 5, "D", "")], "partial") == []             # unlinked
    assert match_spans([(3, 3, "D", "x")], [(0, 5, "D", "x")], "partial") == []   # empty span
    assert match_spans([(3, 3, "D", "x")], [(3, 3, "D", "x")], "exact") == [(0, 0)]


def test_exact_needs_all_four_fields_and_matches_duplicates_once():
    a = [(0, 5, "D", "x"), (0, 5, "D", "x")]
    assert match_spans(a, [(0, 5, "D", "x")]) == [(0, 0)]
    assert match_spans(a[:1], [(0, 4, "D", "x")]) == []
    assert match_spans(a[:1], [(1, 5, "D", "x")]) == []
    assert match_spans(a[:1], [(0, 5, "D", "")]) == []
    # a span without a target is an unlinked one
    assert match_spans([(0, 5, "D")], [(0, 5, "D", "")]) == [(0, 0)]


def test_scores_by_hand():
    a = [(0, 4, "D", "x"), (10, 20, "D", ""), (30, 35, "V", "")]
    b = [(0, 4, "D", "x"), (12, 18, "D", ""), (40, 45, "V", ""), (50, 52, "D", "")]
    exact = span_agreement(a, b, "exact")
    assert exact == {"tp_a": 1, "tp_b": 1, "n_a": 3, "n_b": 4, "precision": 1 / 4,
                     "recall": 1 / 3, "f1": pytest.approx(2 / 7)}
    partial = span_agreement(a, b, "partial")
    assert (partial["tp_a"], partial["precision"], partial["recall"]) == (2, 2 / 4, 2 / 3)
    # f1 = 2PR / (P + R) = (tp_a + tp_b) / (n_a + n_b)
    assert partial["f1"] == pytest.approx(2 * (1 / 2) * (2 / 3) / (1 / 2 + 2 / 3))
    assert partial["f1"] == pytest.approx(4 / 7)


def test_f1_is_symmetric_and_precision_recall_swap():
    rng = random.Random(3)
    for _ in range(50):
        a = [(s, s + rng.randint(1, 4), "D", "") for s in rng.sample(range(30), 4)]
        b = [(s, s + rng.randint(1, 4), "D", "") for s in rng.sample(range(30), 3)]
        ab, ba = span_agreement(a, b, "partial"), span_agreement(b, a, "partial")
        assert ab["f1"] == ba["f1"]
        assert (ab["precision"], ab["recall"]) == (ba["recall"], ba["precision"])


def test_undefined_scores():
    none = span_agreement([], [])
    assert math.isnan(none["f1"]) and math.isnan(none["precision"])
    assert math.isnan(none["recall"])
    one_side = span_agreement([], [(0, 3, "D", "")])
    assert one_side["f1"] == 0.0 and one_side["precision"] == 0.0
    assert math.isnan(one_side["recall"])


def test_pairwise_pools_the_units_both_coded():
    u = {"ann": {"u1": [(0, 4, "D", ""), (6, 9, "D", "")], "u2": [], "u3": [(0, 1, "D", "")]},
         "bob": {"u1": [(0, 4, "D", "")], "u2": [(5, 9, "D", "")]},
         "cy": {"u3": [(0, 1, "D", "")]},
         "dee": {"u9": []}}
    r = pairwise_span_f1(u, "exact")
    ab = r["pairs"][("ann", "bob")]
    # u1 and u2 only (u3 is ann's alone): tp 1, n_a 2, n_b 2
    assert (ab["units"], ab["tp_a"], ab["n_a"], ab["n_b"], ab["f1"]) == (2, 1, 2, 2, 0.5)
    assert r["pairs"][("ann", "cy")]["f1"] == 1.0
    assert r["pairs"][("bob", "cy")]["units"] == 0
    assert math.isnan(r["pairs"][("bob", "cy")]["f1"])
    assert list(r["pairs"])[:3] == [("ann", "bob"), ("ann", "cy"), ("ann", "dee")]
    # the mean is over the pairs whose f1 is defined: (0.5 + 1.0) / 2
    assert r["mean_f1"] == 0.75
    assert math.isnan(pairwise_span_f1({"a": {"u": []}, "b": {"u": []}})["mean_f1"])
    # one unit given as plain lists
    one = pairwise_span_f1({"a": [(0, 2, "D", "")], "b": [(1, 3, "D", "")]}, "partial")
    assert one["mean_f1"] == 1.0


def test_unknown_mode_and_bad_spans_are_refused():
    with pytest.raises(ValueError, match="mode: 'fuzzy' is not one of exact, partial"):
        span_agreement([], [], "fuzzy")
    with pytest.raises(ValueError, match="expected .begin, end, label, target."):
        span_agreement([(0, 1)], [])


def test_tokens_are_words_and_single_punctuation_marks():
    assert token_offsets("ALLBUS 2010, wave 2.") == [(0, 6), (7, 11), (11, 12), (13, 17),
                                                     (18, 19), (19, 20)]
    assert token_offsets("") == []
    assert token_offsets("Umfrage (ALLBUS)") == [(0, 7), (8, 9), (9, 15), (15, 16)]


def test_token_labels_rules():
    text = "the ALLBUS 2010 survey, wave 2"
    tokens = token_offsets(text)      # the ALLBUS 2010 survey , wave 2
    spans = [(4, 15, "dataset", "ZA1"),          # ALLBUS 2010, linked
             (13, 22, "mention", ""),           # starts inside "2010": the token counts
             (24, 24, "dataset", "")]          # empty: covers nothing
    assert token_labels(tokens, spans) == [
        "O", "dataset/ZA1", "dataset/ZA1+mention", "mention", "O", "O", "O"]
    assert token_labels(tokens, []) == ["O"] * len(tokens)
    # a text length gives one token per character
    assert token_labels(5, [(1, 3, "D", "")]) == ["O", "D", "D", "O", "O"]
    with pytest.raises(ValueError, match="tokens: expected"):
        token_labels([(4, 6), (0, 3)], [])


def test_token_level_kappa_by_hand():
    text = "we used ALLBUS and the GLES panel"
    tokens = token_offsets(text)                      # 7 tokens
    ann = token_labels(tokens, [(8, 14, "D", ""), (23, 33, "D", "")])
    bob = token_labels(tokens, [(8, 14, "D", "")])
    assert ann == ["O", "O", "D", "O", "O", "D", "D"]
    assert bob == ["O", "O", "D", "O", "O", "O", "O"]
    codes = {"O": 0, "D": 1}
    # p_o = 5/7; p_e = (4/7 * 6/7) + (3/7 * 1/7) = 27/49
    kappa = cohen_kappa([codes[x] for x in ann], [codes[x] for x in bob])
    assert kappa == pytest.approx((5 / 7 - 27 / 49) / (1 - 27 / 49))
