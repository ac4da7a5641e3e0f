"""SV-Ident equals the official scripts' rules (vadis-project/sv-ident, scripts/
evaluate_task1.py and evaluate_task2.py), checked against oracles written here:

- the unit is a (document, language) pair: a document with sentences in two
  languages is scored once in each language's average;
- Task 1: scikit-learn precision/recall/F1 with average='macro' and
  zero_division=0 per unit; Task 2: ranx map@10 / r-precision, the mean over
  the unit's sentences;
- units are averaged within a language, then languages are averaged.
The trial files' variables (``311-Yes,286-no``) are parsed here on their own.
"""
import csv
import json
import random
import re
import warnings
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from ranx import Qrels, Run, evaluate as ranx_evaluate
from sklearn.metrics import f1_score, precision_score, recall_score

from shareval.formats.errors import InvalidInput
from shareval.stats import compare_result
from shareval.tasks import get
from tests.conftest import SHARED_DATA, write

SV = SHARED_DATA / "sv-ident"
TRAIN = SV / "train" / "train.tsv"
TRIAL = SV / "trial" / "train"
TASK1 = {"f1_macro": f1_score, "precision_macro": precision_score, "recall_macro": recall_score}
TASK2 = {"map@10": "map@10", "r_precision": "r-precision"}


# ------------------------------------------------------------------ oracles

def units(uuids, doc_of, lang_of):
    """{language: {document: [uuid]}}, as the official loops over (lang, doc)."""
    out = defaultdict(lambda: defaultdict(list))
    for u in uuids:
        out[lang_of[u]][doc_of[u]].append(u)
    return out


def language_then_overall(per_unit: dict):
    """per_unit {lang: {doc: value}} -> (overall, {lang: mean over its documents})."""
    per_lang = {lang: sum(v.values()) / len(v) for lang, v in per_unit.items() if v}
    return sum(per_lang.values()) / len(per_lang), per_lang


def official_task1(true, pred, doc_of, lang_of):
    out = {}
    for name, fn in TASK1.items():
        per_unit = defaultdict(dict)
        for lang, docs in units(true, doc_of, lang_of).items():
            for doc, us in docs.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    per_unit[lang][doc] = fn([true[u] for u in us], [pred[u] for u in us],
                                             average="macro", zero_division=0)
        out[name] = language_then_overall(per_unit)
    return out


def official_task2(qrels, run, doc_of, lang_of):
    """ranx's per-sentence scores (one call: ranx is slow to set up), then each unit's
    mean, as ranx.evaluate on the unit's sentences returns; run scores must be tie-free."""
    qids = sorted(qrels)
    scores = ranx_evaluate(Qrels(qrels), Run({u: run[u] for u in qids}), list(TASK2.values()),
                           return_mean=False, make_comparable=True)
    out = {}
    for ours, theirs in TASK2.items():
        by_sentence = dict(zip(qids, scores[theirs]))
        per_unit = defaultdict(dict)
        for lang, docs in units(qrels, doc_of, lang_of).items():
            for doc, us in docs.items():
                per_unit[lang][doc] = float(np.mean([by_sentence[u] for u in us]))
        out[ours] = language_then_overall(per_unit)
    return out


def trial_relevant(cell: str) -> list[str]:
    """Ids marked yes in a trial cell such as '1897-Yes,1898-yes,12-No'."""
    out = []
    for item in cell.split(","):
        vid, _, mark = item.strip().rpartition("-")
        if vid and mark.lower() == "yes" and vid not in out:
            out.append(vid)
    return out


def assert_task1(result, expected):
    for m, (overall, per_lang) in expected.items():
        assert result.metrics[m] == pytest.approx(overall, abs=1e-9), m
        for lang, v in per_lang.items():
            assert result.breakdowns["per_language"][lang][m] == pytest.approx(v, abs=1e-9)


assert_task2 = assert_task1


def tie_free_run(rng, qrels, pool):
    """Every evaluated sentence ranked (the official script requires it), no score ties."""
    run = {}
    for u, rel in qrels.items():
        cand = sorted(set(rng.sample(pool, min(len(pool), 12))) | {v for v in rel
                                                                   if rng.random() < 0.6})
        scores = rng.sample(range(1, 10 * len(cand) + 1), len(cand))
        run[u] = {v: float(s) for v, s in zip(cand, scores)}
    return run


# ------------------------------------------------------------------ small worked example

def test_a_document_in_two_languages_is_two_units(tmp_path):
    header = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
    rows = [("1", "a", "m", "u1", "en"), ("0", "", "m", "u2", "en"),
            ("1", "a", "m", "u3", "de"), ("0", "", "m", "u4", "de"),
            ("1", "b", "g", "u5", "de"), ("0", "", "g", "u6", "de")]
    ref = write(tmp_path / "ref.tsv", header + "".join(
        f"s\t{f}\t{v}\tR\t{d}\t{u}\t{lang}\n" for f, v, d, u, lang in rows))
    # m/en is all right, m/de all wrong, g/de half right
    pred = {"u1": 1, "u2": 0, "u3": 0, "u4": 1, "u5": 1, "u6": 1}
    r = get("svident-detection").score(ref, write(tmp_path / "p.json", json.dumps(pred)))
    # per unit F1-macro: m/en 1, m/de 0, g/de (2/3 + 0)/2 = 1/3
    # languages: en 1, de (0 + 1/3)/2 = 1/6; overall (1 + 1/6)/2 = 7/12
    assert r.metrics["f1_macro"] == pytest.approx(7 / 12, abs=1e-12)
    assert set(r.breakdowns["per_document"]) == {"m (en)", "m (de)", "g"}
    assert r.breakdowns["per_document"]["m (de)"]["doc_id"] == "m"
    assert r.breakdowns["per_language"]["de"]["documents"] == 2
    assert r.counts["documents"] == 2 and r.counts["units"] == 3
    assert any("scored as one unit per language" in w and "m (de, en)" in w for w in r.warnings)
    assert "(document, language)" in r.conventions["averaging"]

    run = {"u1": {"a": 2.0, "x": 1.0}, "u3": {"x": 2.0, "a": 1.0}, "u5": {"b": 1.0}}
    r2 = get("svident-disambiguation").score(ref, write(tmp_path / "r.json", json.dumps(run)))
    # en: m 1; de: (m 0.5 + g 1) / 2 = 0.75; overall 0.875 (a document-first average gives 0.75)
    assert r2.metrics["map@10"] == pytest.approx(0.875, abs=1e-12)
    assert r2.counts["units"] == 3


# ------------------------------------------------------------------ random inputs

@st.composite
def corpora(draw):
    """Documents spanning one or two languages, in the shared-task or trial layout."""
    layout = draw(st.sampled_from(["shared", "trial", "trial+context"]))
    rows, pool = [], [f"{i}" for i in range(1, 9)]
    for d in range(draw(st.integers(1, 5))):
        doc_langs = draw(st.lists(st.sampled_from(["en", "de", "fr"]), min_size=1, max_size=2,
                                  unique=True))
        for _ in range(draw(st.integers(1, 7))):
            relevant = draw(st.lists(st.sampled_from(pool), unique=True, max_size=4))
            rows.append({"doc": f"doc{d}", "lang": draw(st.sampled_from(doc_langs)),
                         "flag": draw(st.integers(0, 1)), "relevant": relevant,
                         "other": draw(st.lists(st.sampled_from(pool), unique=True, max_size=2)),
                         "case": draw(st.sampled_from(["Yes", "yes", "YES", "yEs"]))})
    if not any(r["relevant"] for r in rows):
        # Task 2 needs one relevant variable: constrain the input instead of returning early
        # (a corpus without any is its own test: "no evaluated sentence", below)
        rows[draw(st.integers(0, len(rows) - 1))]["relevant"] = [draw(st.sampled_from(pool))]
    return layout, rows, pool


def write_corpus(path, layout, rows):
    if layout == "shared":
        lines = ["sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang"]
        for i, r in enumerate(rows):
            cell = ";".join(r["relevant"] + (["unk"] if r["other"] else []))
            lines.append(f"s\t{r['flag']}\t{cell}\tR\t{r['doc']}\tu{i}\t{r['lang']}")
    else:
        ctx = layout == "trial+context"
        lines = ["doc_id\t" + ("context_id\t" if ctx else "") + "text\tis_variable\tvariable\t"
                 "uuid\tlang"]
        for i, r in enumerate(rows):
            items = [f"{v}-{r['case']}" for v in r["relevant"]] + \
                [f"{v}-No" for v in r["other"] if v not in r["relevant"]]
            cell = ",".join(items) or ("No" if i % 2 else "NoSkip")
            lines.append(f"{r['doc']}\t" + ("7\t" if ctx else "") +
                         f"s\t{r['flag']}\t{cell}\tu{i}\t{r['lang']}")
    return write(path, "\n".join(lines) + "\n")


@settings(max_examples=60, deadline=None)
@given(corpora(), st.randoms(use_true_random=False))
def test_random_corpora_equal_the_official_rules(tmp_path_factory, corpus, rng):
    layout, rows, pool = corpus
    tmp = tmp_path_factory.mktemp("sv")
    ref = write_corpus(tmp / "ref.tsv", layout, rows)
    doc_of = {f"u{i}": r["doc"] for i, r in enumerate(rows)}
    lang_of = {f"u{i}": r["lang"] for i, r in enumerate(rows)}
    true = {f"u{i}": r["flag"] for i, r in enumerate(rows)}
    pred = {u: rng.randint(0, 1) for u in true}
    r1 = get("svident-detection").score(ref, write(tmp / "p.json", json.dumps(pred)))
    assert_task1(r1, official_task1(true, pred, doc_of, lang_of))
    assert r1.counts["units"] == len({(doc_of[u], lang_of[u]) for u in true})

    qrels = {f"u{i}": {v: 1 for v in r["relevant"]} for i, r in enumerate(rows) if r["relevant"]}
    r2 = get("svident-disambiguation")
    assert qrels, "corpora() gives at least one relevant variable"
    run = tie_free_run(rng, qrels, pool)
    res = r2.score(ref, write(tmp / "r.json", json.dumps(run)))
    assert res.counts["sentences_evaluated"] == len(qrels)
    assert_task2(res, official_task2(qrels, run, doc_of, lang_of))


# ------------------------------------------------------------------ real data

def real_rows(path):
    if not path.is_file():
        pytest.skip(f"SV-Ident data not found at {path} (set SHAREVAL_SHARED_DATA)")
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def test_real_train_task1_equals_official_rules(tmp_path):
    rows = real_rows(TRAIN)
    langs = defaultdict(set)
    for r in rows:
        langs[r["doc_id"]].add(r["lang"])
    assert {d for d, ls in langs.items() if len(ls) > 1} == {"12715", "39802"}
    doc_of = {r["uuid"]: r["doc_id"] for r in rows}
    lang_of = {r["uuid"]: r["lang"] for r in rows}
    true = {r["uuid"]: int(r["is_variable"]) for r in rows}
    for seed, flip in ((0, 0.2), (1, 0.3), (2, 0.1)):
        rng = random.Random(seed)
        pred = {u: (1 - y if rng.random() < flip else y) for u, y in true.items()}
        r = get("svident-detection").score(TRAIN, write(tmp_path / "p.json", json.dumps(pred)))
        assert_task1(r, official_task1(true, pred, doc_of, lang_of))
        assert r.counts["units"] == 32 and r.counts["documents"] == 30
        assert {"12715 (de)", "12715 (en)", "39802 (de)", "39802 (en)"} <= \
            set(r.breakdowns["per_document"])


def test_real_train_task2_equals_official_rules(tmp_path):
    rows = real_rows(TRAIN)
    doc_of = {r["uuid"]: r["doc_id"] for r in rows}
    lang_of = {r["uuid"]: r["lang"] for r in rows}
    qrels = {}
    for r in rows:
        ids = [v.strip() for v in r["variable"].split(";") if v.strip() not in ("", "unk")]
        if ids:
            qrels[r["uuid"]] = {v: 1 for v in ids}
    pool = sorted({v for rel in qrels.values() for v in rel})
    for seed in (0, 1, 2):
        run = tie_free_run(random.Random(seed), qrels, pool)
        r = get("svident-disambiguation").score(TRAIN, write(tmp_path / "r.json",
                                                             json.dumps(run)))
        assert r.counts["sentences_evaluated"] == len(qrels)
        assert_task2(r, official_task2(qrels, run, doc_of, lang_of))


TRIAL_TEST_COLUMNS = ["doc_id", "text", "is_variable", "variable", "uuid"]


def trial_layouts(tmp_path, lang):
    """The real trial file as released (with context_id), as the trial *test* files
    (no context_id, other column order), and with every Yes/No in other letter cases."""
    rows = real_rows(TRIAL / f"{lang}.tsv")
    out = {"with context_id": TRIAL / f"{lang}.tsv"}
    for name, recase in (("test layout", str), ("upper case", str.upper),
                         ("lower case", str.lower)):
        def cell(text, recase=recase):  # only the Yes/No marks change case, not the ids
            return re.sub(r"-(yes|no)\b", lambda m: "-" + recase(m.group(1)), text, flags=re.I)

        d = tmp_path / name.replace(" ", "_")
        d.mkdir()
        text = "\t".join(TRIAL_TEST_COLUMNS) + "\n" + "".join(
            "\t".join(cell(r[c]) if c == "variable" else r[c] for c in TRIAL_TEST_COLUMNS)
            + "\n" for r in rows)
        out[name] = write(d / f"{lang}.tsv", text)
    return rows, out


@pytest.mark.parametrize("lang", ["en", "de"])
def test_real_trial_files_in_every_layout_equal_the_official_rules(tmp_path, lang):
    rows, layouts = trial_layouts(tmp_path, lang)
    qrels = {r["uuid"]: {v: 1 for v in trial_relevant(r["variable"])} for r in rows
             if trial_relevant(r["variable"])}
    doc_of = {r["uuid"]: r["doc_id"] for r in rows}
    lang_of = {r["uuid"]: lang for r in rows}
    true = {r["uuid"]: int(r["is_variable"]) for r in rows}
    rng = random.Random(3)
    pred = {u: (1 - y if rng.random() < 0.2 else y) for u, y in true.items()}
    pool = sorted({v for rel in qrels.values() for v in rel})
    run = tie_free_run(rng, qrels, pool)
    perfect = {u: sorted(rel) for u, rel in qrels.items()}
    sub1 = write(tmp_path / "p.json", json.dumps(pred))
    sub2 = write(tmp_path / "r.json", json.dumps(run))
    sub3 = write(tmp_path / "gold.json", json.dumps(perfect))
    expected_perfect = official_task2(qrels, {u: {v: float(len(ids) - i) for i, v in
                                                  enumerate(ids)} for u, ids in perfect.items()},
                                      doc_of, lang_of)
    for name, ref in layouts.items():
        assert_task1(get("svident-detection").score(ref, sub1),
                     official_task1(true, pred, doc_of, lang_of))
        res = get("svident-disambiguation").score(ref, sub2)
        assert res.counts["sentences_evaluated"] == len(qrels), name
        assert_task2(res, official_task2(qrels, run, doc_of, lang_of))
        best = get("svident-disambiguation").score(ref, sub3)
        assert_task2(best, expected_perfect)
        assert best.metrics["r_precision"] == 1.0 and best.warnings == [], name


def test_lower_case_yes_is_a_relevant_variable_in_the_real_trial_data(tmp_path):
    rows = real_rows(TRIAL / "en.tsv")
    lower = {r["uuid"]: r["variable"] for r in rows if "-yes" in r["variable"]}
    assert len(lower) == 2  # in the shared trial train files (issue 19 counts 3 in all trial data)
    ref = get("svident-disambiguation").reference(TRIAL / "en.tsv")
    assert ref.sentences["a4d86d63-4590-43fb-861d-33ab0408de79"].variables == ["1897", "1898"]
    assert ref.sentences["9f6494cb-c3c9-4c47-817c-2cd57dcd8f23"].variables == ["1328"]


# ------------------------------------------------------------------ compare

def test_compare_resamples_document_language_units(tmp_path):
    rows = real_rows(TRAIN)
    true = {r["uuid"]: int(r["is_variable"]) for r in rows}
    subs = []
    for seed in (0, 1):
        rng = random.Random(seed)
        pred = {u: (1 - y if rng.random() < 0.2 else y) for u, y in true.items()}
        subs.append(write(tmp_path / f"{seed}.json", json.dumps(pred)))
    task = get("svident-detection")
    stats = task.unit_stats(TRAIN, subs[0])
    result = task.score(TRAIN, subs[0])
    assert stats.units == list(result.breakdowns["per_document"])
    assert len(stats.units) == 32
    strata = dict(zip(stats.units, stats.strata))
    assert strata["12715 (en)"] == "en" and strata["12715 (de)"] == "de"
    assert strata["39802 (en)"] == "en" and strata["39802 (de)"] == "de"
    # the full sample aggregates to the score: same units, same weights
    cmp = compare_result("svident-detection", TRAIN, subs[0], subs[1], samples=200)
    assert cmp.counts["units"] == 32
    assert cmp.metrics["f1_macro A"] == pytest.approx(result.metrics["f1_macro"], abs=1e-12)
    for weight_of_lang in (stats.weights[stats.strata == "en"].sum(),
                           stats.weights[stats.strata == "de"].sum()):
        assert weight_of_lang == pytest.approx(0.5)


def test_compare_task2_units_are_the_scored_units(tmp_path):
    rows = real_rows(TRAIN)
    qrels = {r["uuid"]: {v: 1 for v in r["variable"].split(";") if v not in ("", "unk")}
             for r in rows}
    qrels = {u: rel for u, rel in qrels.items() if rel}
    pool = sorted({v for rel in qrels.values() for v in rel})
    subs = [write(tmp_path / f"{s}.json", json.dumps(tie_free_run(random.Random(s), qrels, pool)))
            for s in (0, 1)]
    task = get("svident-disambiguation")
    stats, result = task.unit_stats(TRAIN, subs[0]), task.score(TRAIN, subs[0])
    assert stats.units == list(result.breakdowns["per_document"])
    assert [result.breakdowns["per_document"][u]["lang"] for u in stats.units] == \
        list(stats.strata)
    assert len([u for u in stats.units if u.startswith(("12715 (", "39802 ("))]) >= 3
    cmp = compare_result("svident-disambiguation", TRAIN, subs[0], subs[1], samples=200)
    assert cmp.metrics["map@10 A"] == pytest.approx(result.metrics["map@10"], abs=1e-12)


# ------------------------------------------------------------------ layouts and warnings

def trial_file(tmp_path, cells, name="en.tsv", context=False):
    head = "doc_id\t" + ("context_id\t" if context else "") + "text\tis_variable\tvariable\tuuid"
    body = "".join(f"d\t" + ("1\t" if context else "") + f"s\t{int(c not in ('No', 'NoSkip'))}"
                   f"\t{c}\tu{i}\n" for i, c in enumerate(cells))
    return write(tmp_path / name, head + "\n" + body)


def test_no_relevant_variable_is_a_clear_warning(tmp_path):
    only_no = trial_file(tmp_path, ["311-No,286-no", "No", "NoSkip"])
    sub = write(tmp_path / "r.json", json.dumps({"u0": ["311"]}))
    r = get("svident-disambiguation").score(only_no, sub)
    assert r.metrics["map@10"] == 0.0 and r.counts["sentences_evaluated"] == 0
    assert any("no evaluated sentence" in w and "-Yes" in w for w in r.warnings)
    (tmp_path / "shared").mkdir()
    only_unk = write(tmp_path / "shared" / "ref.tsv",
                     "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
                     "s\t1\tunk\tR\td\tu0\ten\n")
    r = get("svident-disambiguation").score(only_unk, write(tmp_path / "e.json", "{}"))
    assert any("no evaluated sentence" in w and "'unk'" in w for w in r.warnings)


def test_ids_that_never_match_are_warned(tmp_path):
    ref = trial_file(tmp_path, ["311-yes,286-No", "No"])
    r = get("svident-disambiguation").score(ref, write(tmp_path / "r.json",
                                                       json.dumps({"u0": ["V311", "x286"]})))
    assert r.metrics["map@10"] == 0.0
    assert any("no predicted variable id occurs" in w and "reference 311;" in w
               and "predicted V311, x286" in w for w in r.warnings)
    ok = get("svident-disambiguation").score(ref, write(tmp_path / "ok.json",
                                                        json.dumps({"u0": ["311"]})))
    assert ok.metrics["map@10"] == 1.0 and ok.warnings == []


def test_trial_vocabulary_ids_are_the_labels_ids(tmp_path):
    """The trial vocabulary writes v311 for the labels' 311 (its baseline maps 'v' + id):
    a ranking in either form scores the same, with no warning."""
    ref = trial_file(tmp_path, ["311-yes,286-No", "7-Yes", "No"])
    task = get("svident-disambiguation")

    def score(rankings, name):
        return task.score(ref, write(tmp_path / name, json.dumps(rankings)))
    labels = score({"u0": ["286", "311"], "u1": ["9", "7"]}, "labels.json")
    vocabulary = score({"u0": ["v286", "v311"], "u1": ["v9", "v7"]}, "vocabulary.json")
    assert labels.metrics == vocabulary.metrics and vocabulary.warnings == []
    assert vocabulary.metrics["map@10"] == pytest.approx(0.5)
    assert "trial_vocabulary_ids" in vocabulary.conventions
    # both forms of one id in a ranking: one variable, at the higher score
    both = score({"u0": {"v311": 0.2, "286": 0.5, "311": 0.9}, "u1": ["7"]}, "both.json")
    assert both.metrics["map@10"] == 1.0


def test_shared_task_ids_are_compared_as_they_are(tmp_path):
    """Only the trial layout's labels lack the vocabulary's 'v': the shared task's ids are
    the vocabulary's own."""
    ref = write(tmp_path / "ref.tsv", "sentence\tis_variable\tvariable\tresearch_data\t"
                                      "doc_id\tuuid\tlang\ns\t1\t311\tR\td\tu0\ten\n")
    r = get("svident-disambiguation").score(ref, write(tmp_path / "r.json",
                                                       json.dumps({"u0": ["v311"]})))
    assert r.metrics["map@10"] == 0.0 and "trial_vocabulary_ids" in r.conventions


@pytest.mark.parametrize("context", [False, True])
def test_trial_layout_is_told_by_content_in_any_letter_case(tmp_path, context):
    ref = trial_file(tmp_path, ["311-yes,286-No", "12-YES", "7-Yes,8-yEs,9-NO", "No",
                                "ZA5254-v1-YES, ZA5254-v2-no"], context=context)
    sentences = get("svident-disambiguation").reference(ref).sentences
    assert [sentences[f"u{i}"].variables for i in range(5)] == \
        [["311"], ["12"], ["7", "8"], [], ["ZA5254-v1"]]
    assert {s.lang for s in sentences.values()} == {"en"}


def test_a_file_mixing_layouts_is_invalid_with_the_line(tmp_path, cli):
    ref = write(tmp_path / "ref.tsv",
                "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
                "s\t1\ta;b\tR\td\tu0\ten\ns\t1\tc\tR\td\tu1\ten\ns\t1\t311-yes\tR\td\tu2\ten\n")
    with pytest.raises(InvalidInput) as e:
        get("svident-disambiguation").reference(ref)
    assert str(e.value.problems[0]) == (
        f"{ref}:4: variable: trial ID-Yes/ID-No items here, but ids without -Yes/-No on 2 "
        f"other lines (first: line 2); a file must use one layout")
    sub = write(tmp_path / "s.json", json.dumps({"u0": 1, "u1": 1, "u2": 1}))
    code, _, err = cli("score", "svident-detection", "-s", sub, "-r", ref)
    assert code == 2 and f"{ref}:4: variable:" in err and "Traceback" not in err
