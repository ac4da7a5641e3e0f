"""MATERIAL CLIR's per-unit statistics (one unit per closed query) and the ``aqwv``
aggregate: equal to the task's primary AQWV (plan Eq. 3) on the whole set, on any
resample (checked against plain-Python arithmetic over the relevance and decision
sets) and on the demo's runs; `shareval compare`, the report's all-pairs tests and
intervals run on them; undefined sets give a clear error, never a number."""
import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from shareval.formats.errors import InvalidInput
from shareval.metrics.significance import paired_bootstrap, randomization_test
from shareval.overview import significance as sig
from shareval.stats import compare_result
from shareval.tasks import UnitStats, get
from shareval.tasks.base import AGGREGATES, aqwv
from tests.tasks.test_material import make_pack, random_packs, write_random_pack
from tests.tasks.test_material_groups import clir_run, with_status

TASK = get("material-clir")


def value(us, rows=None, weights=None):
    rows = np.arange(len(us.units)) if rows is None else np.asarray(rows)
    w = us.weights[rows] if weights is None else np.asarray(weights, dtype=float)
    return float(us.aggregate(us.stats[rows][None], w[None])[0])


def by_hand(p_miss, p_fa, has_rel, beta, rows):
    """Eq. 3 over the (resampled) rows, in plain Python."""
    rel = [p_miss[i] for i in rows if has_rel[i]]
    if not rel:
        return math.nan
    return 1 - (sum(rel) / len(rel) + beta * sum(p_fa[i] for i in rows) / len(rows))


# ---------------------------------------------------------------------------
# the hand-built pack of test_material.py: query1 finds doc 0 of {0, 1} with a false alarm
# on doc 2 (P_miss 1/2, P_FA 1/4), query2 has nothing relevant and retrieves nothing,
# query3 misses doc 4 (P_miss 1)

def test_three_queries_by_hand(tmp_path):
    pack = make_pack(tmp_path / "pack")
    sub = clir_run(tmp_path)
    us = TASK.unit_stats(pack, sub)
    assert us.metric == "aqwv" and us.units == ["query1", "query2", "query3"]
    assert us.aggregate is aqwv and AGGREGATES["aqwv"] is aqwv
    # columns: P_miss * r, r (has relevant documents), beta * P_FA with beta 20 (1A)
    assert us.stats.tolist() == [[0.5, 1.0, 5.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    assert us.weights.tolist() == [1.0, 1.0, 1.0]
    assert us.strata.tolist() == ["with relevant", "without relevant", "with relevant"]
    # 1 - ((1/2 + 1) / 2 + 20 (1/4 + 0 + 0) / 3) = 1 - 3/4 - 5/3 = -17/12
    assert value(us) == pytest.approx(-17 / 12, abs=1e-12)
    assert abs(value(us) - TASK.score(pack, sub).metrics["aqwv"]) <= 1e-12
    # a resample: query1 twice and query2: 1 - 1/2 - 20 (1/4 + 1/4 + 0) / 3 = -17/6
    assert value(us, [0, 0, 1]) == pytest.approx(-17 / 6, abs=1e-12)
    # query3 twice, query2: 1 - 1 - 0 = 0
    assert value(us, [2, 1, 2]) == pytest.approx(0.0, abs=1e-12)
    # weights (renormalised): 2 on query1, 1 on query2, 1 on query3:
    # P_miss = (2 * 1/2 + 1) / 3 = 2/3, beta P_FA = (2 * 5 + 0 + 0) / 4 = 5/2
    assert value(us, weights=[2, 1, 1]) == pytest.approx(1 - 2 / 3 - 5 / 2, abs=1e-12)
    assert value(us, weights=[4, 2, 2]) == pytest.approx(1 - 2 / 3 - 5 / 2, abs=1e-12)
    # only query2, nothing relevant: undefined, never a number
    assert math.isnan(value(us, [1, 1, 1]))


def test_the_json_form_gives_the_same_values(tmp_path):
    pack = make_pack(tmp_path / "pack")
    us = TASK.unit_stats(pack, clir_run(tmp_path))
    d = json.loads(json.dumps(us.to_dict()))
    assert d["aggregate"] == "aqwv" and d["shape"] == [3, 3]
    back = UnitStats.from_dict(d)
    assert back.aggregate is aqwv and back.units == us.units
    assert back.strata.tolist() == us.strata.tolist()
    for rows in ([0, 1, 2], [0, 0, 1], [2, 1, 2]):
        assert value(back, rows) == value(us, rows)


def test_beta_option(tmp_path):
    pack = make_pack(tmp_path / "pack")
    sub = clir_run(tmp_path)
    us = TASK.unit_stats(pack, sub, beta=40.0)
    assert us.stats[:, 2].tolist() == [10.0, 0.0, 0.0]
    assert abs(value(us) - TASK.score(pack, sub, beta=40.0).metrics["aqwv"]) <= 1e-12
    with pytest.raises(InvalidInput):
        TASK.unit_stats(pack, sub, beta="many")


def test_open_queries_are_no_units(tmp_path):
    pack = with_status(make_pack(tmp_path / "pack"),
                       {"query1": "open", "query2": "closed", "query3": ""})
    sub = clir_run(tmp_path)
    us = TASK.unit_stats(pack, sub)
    assert us.units == ["query2", "query3"]
    assert us.stats.tolist() == [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    # closed: query2 (QV 1) and query3 (P_miss 1): 1 - (1 + 20 * 0) = 0
    r = TASK.score(pack, sub)
    assert value(us) == r.metrics["aqwv"] == pytest.approx(0.0)
    assert r.metrics["open_aqwv"] != pytest.approx(0.0)


def test_no_closed_query_with_relevant_documents_is_an_error_not_a_number(tmp_path):
    # query2 alone is closed: nothing relevant, the primary AQWV is NaN
    pack = with_status(make_pack(tmp_path / "pack"),
                       {"query1": "open", "query2": "", "query3": "open"})
    sub = clir_run(tmp_path)
    assert math.isnan(TASK.score(pack, sub).metrics["aqwv"])
    with pytest.raises(InvalidInput, match="no closed query has a relevant document"):
        TASK.unit_stats(pack, sub)
    with pytest.raises(InvalidInput, match="no closed query has a relevant document"):
        compare_result("material-clir", pack, sub, sub, samples=10)
    every = with_status(make_pack(tmp_path / "every"),
                        {"query1": "open", "query2": "open", "query3": "open"})
    assert math.isnan(TASK.score(every, sub).metrics["aqwv"])
    with pytest.raises(InvalidInput, match="every query is open"):
        TASK.unit_stats(every, sub)


def test_material_e2e_keeps_no_unit_statistics():
    """E2E's AQWV is judged: it inherits the CLIR task but not its units."""
    with pytest.raises(NotImplementedError, match="material-e2e does not support"):
        get("material-e2e").unit_stats(None, None)


@settings(max_examples=60, deadline=None)
@given(random_packs(), st.lists(st.integers(0, 3), min_size=1, max_size=8),
       st.lists(st.integers(1, 4), min_size=8, max_size=8))
def test_any_resample_equals_eq_3_by_hand(pack_data, draw, weights):
    rel, dec = pack_data
    n_docs = len(rel[0])
    p_miss = [sum(r and not y for r, y in zip(rq, yq)) / sum(rq) if any(rq) else 0.0
              for rq, yq in zip(rel, dec)]
    p_fa = [sum(y and not r for r, y in zip(rq, yq)) / (n_docs - sum(rq))
            if n_docs > sum(rq) else 0.0 for rq, yq in zip(rel, dec)]
    has_rel = [any(rq) for rq in rel]
    with tempfile.TemporaryDirectory() as d:
        pack, sub = write_random_pack(Path(d), rel, dec)
        score = TASK.score(pack, sub).metrics["aqwv"]
        if not any(has_rel):
            with pytest.raises(InvalidInput, match="no closed query has a relevant"):
                TASK.unit_stats(pack, sub)
            assert math.isnan(score)
            return
        us = TASK.unit_stats(pack, sub)
    full = list(range(len(rel)))
    assert abs(value(us) - score) <= 1e-12
    assert value(us) == pytest.approx(by_hand(p_miss, p_fa, has_rel, 20.0, full), abs=1e-12)
    rows = [k % len(rel) for k in draw]
    want = by_hand(p_miss, p_fa, has_rel, 20.0, rows)
    got = value(us, rows)
    assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, abs=1e-12)
    # integer weights are repeated rows
    w = weights[:len(rel)]
    repeated = [i for i in full for _ in range(w[i])]
    want = by_hand(p_miss, p_fa, has_rel, 20.0, repeated)
    assert value(us, weights=w) == pytest.approx(want, abs=1e-12)


# ---------------------------------------------------------------------------
# the demo's CLIR runs (16 closed queries a pack, 8 open)

@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from shareval.platform.demo_material.generate import generate
    langs = generate(tmp_path_factory.mktemp("material-demo"))
    out = {}
    for lang, period in langs.items():
        for run, path in period.runs:
            if run.task != "E2E":
                out.setdefault((lang, run.pack), []).append(
                    (run.name, period.packs[run.pack], path))
    return out


def test_every_demo_run_gives_its_aqwv(demo):
    for (lang, pack), runs in demo.items():
        for name, ref, path in runs:
            r = TASK.score(str(ref), str(path))
            us = TASK.unit_stats(str(ref), str(path))
            assert len(us.units) == r.counts["closed_queries"] == 16, name
            assert abs(value(us) - r.metrics["aqwv"]) <= 1e-12, name
            assert int(us.stats[:, 1].sum()) == r.counts["queries_with_relevant"]


def _pack_runs(demo):
    """The runs of the demo's pack with most runs, and queries with and without
    relevant documents (two strata)."""
    key = max((k for k in demo), key=lambda k: (len(demo[k]), k))
    stats = [(name, TASK.unit_stats(str(ref), str(path))) for name, ref, path in demo[key]]
    return key, demo[key], stats


def test_resamples_keep_the_queries_with_relevant_documents(demo):
    _, _, stats = _pack_runs(demo)
    us = stats[0][1]
    assert us.strata is not None and set(us.strata) == {"with relevant", "without relevant"}
    # within the strata, every resample has as many queries with relevant documents as
    # the set: the AQWV is defined on each one
    b = paired_bootstrap(us.stats, stats[1][1].stats, us.aggregate, us.weights, us.strata,
                         samples=500, seed=3)
    assert np.isfinite([b.ci_low, b.ci_high, b.p_value]).all()
    lo, hi = sig.interval(us, samples=500, seed=3)
    assert lo <= value(us) <= hi and np.isfinite([lo, hi]).all()


def test_shareval_compare_on_two_runs(demo, cli):
    (_, _), runs, stats = _pack_runs(demo)
    (_, ref, a), (_, _, b) = runs[0], runs[1]
    code, out, err = cli("compare", "material-clir", "-r", ref, a, b, "--samples", "2000",
                         "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    m = d["metrics"]
    sa = TASK.score(str(ref), str(a)).metrics["aqwv"]
    sb = TASK.score(str(ref), str(b)).metrics["aqwv"]
    assert m["aqwv A"] == pytest.approx(sa, abs=1e-12)
    assert m["aqwv B"] == pytest.approx(sb, abs=1e-12)
    assert m["difference"] == pytest.approx(sa - sb, abs=1e-12)
    assert m["ci_low"] <= m["difference"] <= m["ci_high"]
    assert 0 < m["p_randomization"] <= 1 and 0 < m["p_bootstrap"] <= 1
    assert d["counts"]["units"] == 16
    ua, ub = stats[0][1], stats[1][1]
    rand = randomization_test(ua.stats, ub.stats, aqwv, ua.weights, samples=2000, seed=0)
    assert m["p_randomization"] == rand.p_value


def test_all_pairs_equal_the_tests_pair_by_pair(demo, monkeypatch):
    """The report's matrix: the aqwv fast path gives exactly randomization_test's p."""
    _, _, stats = _pack_runs(demo)
    assert len(stats) >= 3
    calls = []
    real = sig.randomization_test
    monkeypatch.setattr(sig, "randomization_test",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    m = sig.all_pairs(stats, samples=1000, seed=5)
    named = dict(stats)
    for (a, b), t in m.tests.items():
        if t.a != a:
            continue
        assert t.verdict in (sig.DIFFER, sig.SAME) and t.units == 16
        ua, ub = named[a], named[b]
        assert t.difference == pytest.approx(value(ua) - value(ub), abs=1e-12)
        r = randomization_test(ua.stats, ub.stats, aqwv, ua.weights, 1000, 5)
        boot = paired_bootstrap(ua.stats, ub.stats, aqwv, ua.weights, ua.strata, 1000, 0.95, 5)
        assert t.p_randomization == r.p_value
        assert (t.ci_low, t.ci_high, t.p_bootstrap) == pytest.approx(
            (boot.ci_low, boot.ci_high, boot.p_value), abs=1e-12)
    assert calls == []                       # no fallback: the fast path ran
    # the same units but another reference's relevance (column 1): no fast path; the
    # fallback gives randomization_test's p
    ua, ub = stats[0][1], stats[1][1]
    a = ua.stats.copy()
    b = ub.stats.copy()
    k = int(np.flatnonzero(a[:, 1] == 0)[0])
    b[k, 1] = 1.0
    assert sig._fast_differences(aqwv, a[..., None], b[..., None], ua.weights) is None
    other = UnitStats("aqwv", ua.units, b, aqwv, ub.weights, ub.strata)
    m2 = sig.all_pairs([("A", ua), ("B", other)], samples=500, seed=1)
    t = m2.tests[("A", "B")]
    assert calls == [1]
    want = randomization_test(a, b, aqwv, ua.weights, 500, 1).p_value
    assert t.p_randomization == want
