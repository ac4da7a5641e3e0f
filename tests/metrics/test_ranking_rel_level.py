"""rel_level <= 0: judged documents at or above the level are relevant, unjudged
ones never are (trec_eval's rule). pytrec_eval refuses such levels, so the
oracle below follows the documented rule directly."""
from hypothesis import given, settings, strategies as st

from shareval.metrics.ranking import evaluate


def oracle(qrels, run, level):
    """AP, P@5 and num_rel per query by the definitions, ties by doc id descending."""
    out = {}
    for q in qrels:
        judged = qrels[q]
        rel = {d for d, j in judged.items() if j >= level}
        ranked = sorted(run.get(q, {}).items(), key=lambda kv: (-kv[1], tuple(-ord(c) for c in kv[0])))
        hits, ap, p5 = 0, 0.0, 0
        for i, (d, _) in enumerate(ranked, 1):
            if d in rel:
                hits += 1
                ap += hits / i
                p5 += i <= 5
        out[q] = (ap / len(rel) if rel else 0.0, p5 / 5, float(len(rel)))
    return out


docs = st.sampled_from([f"d{i}" for i in range(8)])


@settings(max_examples=200, deadline=None)
@given(judg=st.dictionaries(docs, st.integers(-2, 2), min_size=1, max_size=6),
       scores=st.dictionaries(docs, st.integers(0, 5).map(float), min_size=1, max_size=8),
       level=st.integers(-3, 2))
def test_unjudged_documents_are_never_relevant_at_any_level(judg, scores, level):
    qrels, run = {"q": judg}, {"q": scores}
    got = evaluate(qrels, run, ["map", "P@5"], rel_level=level, score_precision="double")
    ap, p5, nrel = oracle(qrels, run, level)["q"]
    assert got["num_rel"]["q"] == nrel
    assert abs(got["map"]["q"] - ap) < 1e-12
    assert abs(got["P@5"]["q"] - p5) < 1e-12


def test_worked_example_level_zero_and_below():
    qrels = {"q1": {"d1": 0, "d2": 1, "d3": -1}}
    run = {"q1": {"d1": 3.0, "d4": 2.5, "d2": 2.0, "d3": 1.0}}   # d4 unjudged, ranked 2nd
    at0 = evaluate(qrels, run, ["map", "P@5"], rel_level=0)
    assert at0["map"]["q1"] == (1 / 1 + 2 / 3) / 2        # d1, d2 relevant; d4 is not
    assert at0["P@5"]["q1"] == 2 / 5
    below = evaluate(qrels, run, ["map", "P@5"], rel_level=-1)
    assert below["map"]["q1"] == (1 / 1 + 2 / 3 + 3 / 4) / 3
    assert below["P@5"]["q1"] == 3 / 5
