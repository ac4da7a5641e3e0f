"""SV-Ident: per-unit sklearn F1-macro, Eq. 3 averaging, strict uuids, real data.

Parity with the official scripts' rules is in test_svident_official.py."""
import csv
import json
import random
import warnings
from collections import defaultdict

import numpy as np
import pytest
import pytrec_eval
from sklearn.metrics import f1_score

from shareval.formats.errors import InvalidInput
from shareval.tasks import get
from tests.conftest import write

HEADER = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"


def reference(tmp_path, rows, extra_header=""):
    text = HEADER.rstrip("\n") + extra_header + "\n" + "".join("\t".join(r) + "\n" for r in rows)
    return write(tmp_path / "ref.tsv", text)


def test_equation_3_average_over_documents_then_languages(tmp_path):
    rows = [["s", "1", "v1", "R", "e1", "u1", "en"], ["s", "0", "", "R", "e1", "u2", "en"],
            ["s", "1", "v1", "R", "e2", "u3", "en"], ["s", "0", "", "R", "e2", "u4", "en"],
            ["s", "1", "v1", "R", "g1", "u5", "de"], ["s", "0", "", "R", "g1", "u6", "de"],
            ["s", "1", "v1", "R", "g1", "u7", "de"]]
    ref = reference(tmp_path, rows)
    pred = {"u1": 1, "u2": 0, "u3": 0, "u4": 1, "u5": 1, "u6": 1, "u7": 0}
    sub = write(tmp_path / "sub.json", json.dumps(pred))
    r = get("svident-detection").score(ref, sub)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = {d: f1_score([int(rows[i][1]) for i in idx], [pred[rows[i][5]] for i in idx],
                         average="macro")
             for d, idx in {"e1": [0, 1], "e2": [2, 3], "g1": [4, 5, 6]}.items()}
    expected = ((f["e1"] + f["e2"]) / 2 + f["g1"]) / 2
    assert r.metrics["f1_macro"] == pytest.approx(expected, abs=1e-12)
    assert r.breakdowns["per_language"]["en"]["f1_macro"] == pytest.approx((f["e1"] + f["e2"]) / 2)
    assert r.breakdowns["per_document"]["g1"]["f1_macro"] == pytest.approx(f["g1"])


def test_tsv_submission_and_strict_uuids(tmp_path):
    rows = [["s", "1", "v1", "R", "d", "u1", "en"], ["s", "0", "", "R", "d", "u2", "en"]]
    ref = reference(tmp_path, rows)
    ok = write(tmp_path / "ok.tsv", "uuid\tis_variable\nu1\t1\nu2\t0\n")
    assert get("svident-detection").score(ref, ok).metrics["f1_macro"] == 1.0
    bad = write(tmp_path / "bad.tsv", "u1\t1\nu9\t0\nu1\t0\nu2\tyes\n")
    with pytest.raises(InvalidInput) as e:
        get("svident-detection").score(ref, bad)
    msgs = [str(p) for p in e.value.problems]
    # u2's bad value is its only problem: no "no prediction" for it as well
    assert sorted(msgs) == sorted([f"{bad}:3: uuid: duplicate (first at line 1)",
                                   f"{bad}:4: is_variable: expected 0 or 1, found 'yes'",
                                   f"{bad}:2: uuid: 1 uuid is not in the reference: 'u9'"])


def test_disambiguation_only_disambiguated_sentences_and_mention_types(tmp_path):
    rows = [["s", "1", "a;b", "R", "d1", "u1", "en", "explicit"],
            ["s", "1", "unk", "R", "d1", "u2", "en", "implicit"],
            ["s", "0", "", "R", "d1", "u3", "en", ""],
            ["s", "1", "c;unk", "R", "d2", "u4", "de", "implicit"]]
    ref = reference(tmp_path, rows, "\tmention_type")
    sub = write(tmp_path / "sub.json", json.dumps(
        {"u1": {"a": 0.9, "x": 0.5, "b": 0.1}, "u3": {"a": 1.0}, "u4": ["x", "c"]}))
    r = get("svident-disambiguation").score(ref, sub)
    ap_u1 = (1 + 2 / 3) / 2
    assert r.counts["sentences_evaluated"] == 2
    assert r.counts["predictions_ignored"] == 1
    assert r.metrics["map@10"] == pytest.approx((ap_u1 + 0.5) / 2)
    assert r.breakdowns["per_mention_type"]["explicit"]["map@10"] == pytest.approx(ap_u1)
    assert r.breakdowns["per_mention_type"]["implicit"]["map@10"] == pytest.approx(0.5)


def test_trec_run_submission(tmp_path):
    rows = [["s", "1", "a", "R", "d1", "u1", "en"]]
    ref = reference(tmp_path, rows)
    run = write(tmp_path / "run.txt", "u1 Q0 x 1 2.0 sys\nu1 Q0 a 2 1.0 sys\n")
    assert get("svident-disambiguation").score(ref, run).metrics["map@10"] == 0.5
    bad = write(tmp_path / "bad.txt", "u1 Q0 x 1 2.0 sys\nzz Q0 a 1 1.0 sys\n")
    with pytest.raises(InvalidInput) as e:
        get("svident-disambiguation").score(ref, bad)
    assert [str(p) for p in e.value.problems] == [
        f"{bad}:2: uuid: 1 uuid is not in the reference: 'zz'"]


def test_disambiguation_keeps_sentences_without_variables_out_unlike_trec(tmp_path):
    """SV-Ident's official Task 2 scoring evaluates only sentences with a relevant
    variable; trec's default (trec_eval -c: every judged query counts 0) must not leak in."""
    rows = [["s", "1", "a", "R", "d1", "u1", "en"], ["s", "1", "unk", "R", "d1", "u2", "en"],
            ["s", "0", "", "R", "d1", "u3", "en"]]
    ref = reference(tmp_path, rows)
    run = write(tmp_path / "run.txt", "u1 Q0 a 1 2.0 sys\nu2 Q0 b 1 2.0 sys\nu3 Q0 c 1 1.0 sys\n")
    r = get("svident-disambiguation").score(ref, run)
    assert r.metrics["map@10"] == 1.0 and r.counts["sentences_evaluated"] == 1
    assert "exclude_empty" not in r.conventions and "queries" in r.conventions


# ---------------------------------------------------------------------------- real data

def read_rows(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def test_real_train_gold_against_itself_and_perturbed(shared_data, tmp_path):
    ref = shared_data / "sv-ident" / "train" / "train.tsv"
    rows = read_rows(ref)
    gold = {r["uuid"]: int(r["is_variable"]) for r in rows}
    sub = write(tmp_path / "gold.json", json.dumps(gold))
    r = get("svident-detection").score(ref, sub)
    assert r.metrics == {"f1_macro": 1.0, "precision_macro": 1.0, "recall_macro": 1.0}
    # documents 12715 and 39802 have sentences in German and English: two units each
    assert r.counts == {"sentences": 3823, "documents": 30, "units": 32, "languages": 2}
    rng = random.Random(0)
    pred = {u: (1 - y if rng.random() < 0.2 else y) for u, y in gold.items()}
    r = get("svident-detection").score(ref, write(tmp_path / "p.json", json.dumps(pred)))
    docs, langs = defaultdict(list), {}
    for row in rows:
        docs[row["doc_id"], row["lang"]].append(row["uuid"])
        langs[row["doc_id"], row["lang"]] = row["lang"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        per_doc = {d: f1_score([gold[u] for u in us], [pred[u] for u in us], average="macro")
                   for d, us in docs.items()}
    by_lang = defaultdict(list)
    for d, v in per_doc.items():
        by_lang[langs[d]].append(v)
    expected = np.mean([np.mean(v) for v in by_lang.values()])
    assert r.metrics["f1_macro"] == pytest.approx(expected, abs=1e-9)


def test_real_trial_disambiguation_equals_pytrec_eval(shared_data, tmp_path):
    ref = shared_data / "sv-ident" / "trial" / "train" / "en.tsv"
    rows = read_rows(ref)
    vocab = [r["id"].removeprefix("v") for r in read_rows(
        shared_data / "sv-ident" / "trial" / "vocabulary" / "en.tsv")]
    rng = random.Random(1)
    qrels, run = {}, {}
    for r in rows:
        gold = [v[:-4] for v in r["variable"].split(",") if v.lower().endswith("-yes")]
        if gold:
            qrels[r["uuid"]] = {v: 1 for v in gold}
            run[r["uuid"]] = {v: rng.random() for v in rng.sample(vocab, 30) + gold[:2]}
    sub = write(tmp_path / "run.json", json.dumps(run))
    res = get("svident-disambiguation").score(ref, sub)
    assert res.counts["sentences_evaluated"] == len(qrels) > 100
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map_cut", "Rprec"}).evaluate(run)
    docs = defaultdict(list)
    for r in rows:
        if r["uuid"] in qrels:
            docs[r["doc_id"]].append(r["uuid"])
    for ours, theirs in (("map@10", "map_cut_10"), ("r_precision", "Rprec")):
        expected = np.mean([np.mean([ev[u][theirs] for u in us]) for us in docs.values()])
        assert res.metrics[ours] == pytest.approx(expected, abs=1e-9)
    perfect = write(tmp_path / "gold.json", json.dumps({u: list(g) for u, g in qrels.items()}))
    assert get("svident-disambiguation").score(ref, perfect).metrics["r_precision"] == 1.0
