"""Rules of the design estimator (docs/assessment.md) on cases where breaking a rule
changes the number: unequal inclusion probabilities, unanswered questions, documents
drawn more than once by the bootstrap."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from shareval.assessment.estimate import estimate_all
from shareval.assessment.judgments import Judgment, Judgments


def test_entity_precision_weights_each_question_over_the_items_it_was_answered_on():
    """P_e = P_r P_s P_o, each a Hajek ratio over the items where that question has an
    answer: the denominator is the weight of the answered items only."""
    pi = [0.5, 0.25, 1.0, 0.2]
    answers = {"relation": [1, 0, 1, 1], "subject": [1, None, 0, 1],
               "object": [0, 1, None, None]}
    recs = [Judgment(f"x{i}", ("A",), "j1", q, float(v), pi[i], "d", "precision", ("A",), n)
            for n, (q, vs) in enumerate(answers.items()) for i, v in enumerate(vs)
            if v is not None]
    row = estimate_all(Judgments(recs, {}), bootstrap=0)[0]["A"]
    w = 1 / np.array(pi)
    parts = {}
    for q, vs in answers.items():
        ok = [i for i, v in enumerate(vs) if v is not None]
        parts[q] = sum(vs[i] * w[i] for i in ok) / sum(w[i] for i in ok)
        assert row[f"precision_{q}"] == pytest.approx(parts[q])
    assert row["entity_precision"] == pytest.approx(np.prod(list(parts.values())))
    # item precision: a judge's item is correct when every question they answered is yes
    y = [0, 0, 0, 1]
    assert row["precision"] == pytest.approx(np.sum(y * w) / np.sum(w))


def _recall_records(docs):
    """docs: {doc: [(in A's output, correct), ...]} as recall rows (exhaustive annotation)."""
    recs, n = [], 0
    for d, items in docs.items():
        for k, (in_a, correct) in enumerate(items):
            subs = ("A",) if in_a else ()
            recs.append(Judgment(f"{d}-{k}", subs, "j1", "correct", float(correct), 1.0, d,
                                 "recall", subs, n))
            n += 1
    return recs


def test_recall_is_the_share_of_true_items_the_output_contains():
    docs = {"d1": [(False, 1), (True, 1), (True, 0)], "d2": [(True, 1)], "d3": [(False, 0)]}
    row = estimate_all(Judgments(_recall_records(docs), {"A": 3}), bootstrap=0)[0]["A"]
    assert row["recall"] == pytest.approx(2 / 3)       # false items count in neither part


def test_recall_bootstrap_counts_a_document_drawn_k_times_k_times():
    """Three documents resampled with replacement: recall of a replicate is
    sum k_d num_d / sum k_d den_d. The exact distribution over the 27 equally likely
    replicates puts 6/27 on 1/3, a value a set of distinct documents never gives
    (0, 1/2, 2/3 or 1); its quartiles are 1/3 and 1."""
    docs = {"d1": [(False, 1)], "d2": [(True, 1)], "d3": [(True, 1)]}
    num = {"d1": 0, "d2": 1, "d3": 1}
    reps = [sum(num[d] for d in r) / 3 for r in itertools.product(docs, repeat=3)]
    q25, q75 = np.quantile(reps, [0.25, 0.75], method="inverted_cdf")
    assert (q25, q75) == (pytest.approx(1 / 3), 1.0)
    row = estimate_all(Judgments(_recall_records(docs), {"A": 2}), confidence=0.5,
                       bootstrap=40_000, seed=3)[0]["A"]
    assert row["recall"] == pytest.approx(2 / 3)
    assert row["recall_boot_low"] == pytest.approx(q25)
    assert row["recall_boot_high"] == pytest.approx(q75)
