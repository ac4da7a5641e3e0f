"""Reference systems: functions, `shareval run` output passing the validators, HTTP services."""
import json
import threading
import urllib.error
import urllib.request

import numpy as np
import pytest

from shareval.systems import fields, material, rcc, rcc_features, rcc_mentions, svident
from shareval.systems.rcc_patterns import pattern_mentions
from shareval.systems.registry import get
from shareval.systems.serve import MAX_BODY, make_server
from shareval.systems.text import read_document
from tests.tasks.test_material import make_pack

CATALOG = {
    "101": "National Health and Nutrition Examination Survey (NHANES), 1999-2000 NHANES",
    "102": "National Health and Nutrition Examination Survey (NHANES), 2003-2004 NHANES",
    "103": "Panel Study of Income Dynamics (PSID) PSID income panel",
    "104": "General Social Survey, 1972-2014 (GSS) GSS",
    "105": "American Time Use Survey (ATUS) time diaries",
}
PAPER = ("We use data from the Panel Study of Income Dynamics (PSID), waves 1999 to 2009. "
         "PSID respondents report family income. Results hold in the PSID sample of heads. "
         "We also compare with the General Social Survey (GSS) of 2010.")


@pytest.fixture(scope="module")
def catalog():
    return rcc.Catalog.from_value(CATALOG)


# ---------------------------------------------------------------------------
# RCC

def test_candidates_and_acronyms(catalog):
    cands, X = rcc.features(rcc.normalize(PAPER), catalog)
    ids = {catalog.ids[c.entry] for c in cands}
    assert {"103", "104"} <= ids
    assert "105" not in ids                      # "survey" alone proposes nothing
    assert X.shape == (len(cands), len(rcc.FEATURES))
    assert rcc_features._acronyms(PAPER)["psid"] == "panel study of income dynamics"


def test_recency_features_compare_the_span_with_the_texts_latest_years(catalog):
    cols = [rcc.FEATURES.index(n) for n in ("start_vs_latest", "end_vs_latest", "start_vs_p95")]
    text = "We use NHANES 1999-2000 and NHANES 2003-2004, as in Smith (2001). " * 3
    cands, X = rcc.features(rcc.normalize(text), catalog)
    got = {catalog.ids[c.entry]: X[i, cols].tolist() for i, c in enumerate(cands)}
    # the latest year written is 2004; the 95th percentile of (1999, 2000, 2001, 2003, 2004)
    # x 3 is 2004 as well
    assert got["101"] == [1999 - 2004, 2000 - 2004, 1999 - 2004]
    assert got["102"] == [2003 - 2004, 0, 2003 - 2004]
    # no years in the text, or none in the entry: the declared placeholder
    _, X = rcc.features(rcc.normalize("We use NHANES data."), catalog)
    assert (X[:, cols] == rcc.NO_YEARS).all()
    cands, X = rcc.features(rcc.normalize(PAPER), catalog)
    psid = [i for i, c in enumerate(cands) if catalog.ids[c.entry] == "103"][0]
    assert (X[psid, cols] == rcc.NO_YEARS).all()


def test_a_waves_years_are_its_titles_and_count_near_any_of_its_matches():
    # a flat catalog string goes on with known mentions that every wave lists (1999-2006):
    # the span is the title's own first run of years
    flat = rcc.Catalog.from_value({
        "482": "National Health and Nutrition Examination Survey (NHANES), 2001-2002 (NHANES) "
               "1999-2006 NHANES 1999-2006 National Health and Nutrition Examination Survey",
        "483": "National Health and Nutrition Examination Survey (NHANES), 2003-2004 (NHANES) "
               "1999-2006 NHANES 1999-2006 National Health and Nutrition Examination Survey"})
    assert flat.title_years == [(2001, 2002), (2003, 2004)]
    assert rcc.title_span("disturbances in france 1830 1860 and 1930 1960".split()) == (1830, 1960)
    assert rcc.title_span("trend surveys september 1992 may 1993".split()) == (1992, 1993)
    assert rcc.title_span("a study without years".split()) is None
    # the years are written next to the short name only, far from the longest match
    filler = " ".join(["word"] * 60)
    text = (f"We use the National Health and Nutrition Examination Survey (NHANES). {filler}. "
            "NHANES 2003 to 2004 examined children.")
    cands, X = rcc.features(rcc.normalize(text), flat)
    cover = rcc.FEATURES.index("near_range_cover")
    got = {flat.ids[c.entry]: X[i, cover] for i, c in enumerate(cands)}
    assert got == {"482": 0.0, "483": 1.0}


def test_mentions_are_whole_names_as_written(catalog):
    # (the second line's digits stay below a tenth of it: rcc.prepare_text keeps it)
    text = ("Data come from the National Health and Nutrition\nExamination Survey of 1999-2000, "
            "which examines adults and children across the country. We also use NHANES lab files.")
    cites, mentions = rcc.find_citations(text, catalog, 7, threshold=0.0, use_embeddings=False)
    by_id = {c["data_set_id"]: c["mention_list"] for c in cites}
    # "survey" is a stopword, so no n-gram ends with it; the mention is widened to the name
    assert by_id["101"] == ["National Health and Nutrition Examination Survey", "NHANES"]
    assert {m["mention"] for m in mentions} == set(by_id["101"])
    cites, _ = rcc.find_citations(PAPER, catalog, 7, threshold=0.0, use_embeddings=False)
    by_id = {c["data_set_id"]: c["mention_list"] for c in cites}
    assert by_id["103"] == ["Panel Study of Income Dynamics (PSID)"]       # bracket closed
    assert by_id["104"] == ["General Social Survey", "GSS"]


NAMES = ("We use data from the Danish Longitudinal Study of Ageing (DLSA), 1997-2002, and the "
         "BRFSS survey. The Study shows that NHANES data and the Health and\nRetirement Study "
         "agree. In Table 2 we compare them.")


def test_pattern_mentions_find_dataset_names_as_written():
    found = pattern_mentions(NAMES)
    assert [m for m, _ in found] == ["Danish Longitudinal Study of Ageing (DLSA), 1997-2002",
                                     "BRFSS survey", "NHANES data",
                                     "Health and\nRetirement Study"]
    assert all(NAMES[s:s + len(m)] == m for m, s in found)
    # sentence-initial capitals ("The Study", "In Table 2") are not names
    assert not pattern_mentions("The Study shows it. In Table 2 we see more. We use Data.")
    # nor are heading words ("METHODS", "Data") before a name
    assert [m for m, _ in pattern_mentions(
        "METHODS Data were drawn. Data from the National Survey of Youth (NSY) were used.")] \
        == ["National Survey of Youth (NSY)"]
    # a run of capitalized words longer than a name (a heading, hostile input) is skipped
    assert not pattern_mentions("Survey \n" * 10_000)


def test_pattern_mentions_are_scored_and_not_repeated(catalog, tmp_path):
    text = PAPER + " " + NAMES
    _, every = rcc.find_citations(text, catalog, 3, mention_threshold=0.0,
                                  use_embeddings=False)
    got = {m["mention"]: m["score"] for m in every}
    assert {"Danish Longitudinal Study of Ageing (DLSA), 1997-2002", "BRFSS survey",
            "Health and Retirement Study"} <= set(got)
    assert all(0.0 <= v <= 1.0 for v in got.values())
    # a name already found through the catalog is not added again by pattern; its forms
    # are the name with its acronym, the name and the acronym
    assert {m for m in got if "Income Dynamics" in m} == {
        "Panel Study of Income Dynamics (PSID)", "Panel Study of Income Dynamics"}
    assert "PSID" in got
    _, default = rcc.find_citations(text, catalog, 3, use_embeddings=False)
    assert {m["mention"] for m in default} < set(got)
    assert all(got[m["mention"]] >= rcc.model().selector_threshold for m in default)
    # the mention trees, the selector and its prior survive a save and load; a model
    # without them adds no pattern mentions (models trained before them still load)
    shipped = rcc.model()
    shipped.save(tmp_path / "m.json")
    again = rcc.RccModel.load(tmp_path / "m.json")
    assert again.mention_threshold == shipped.mention_threshold
    assert again.selector_threshold == shipped.selector_threshold
    assert again.prior == shipped.prior and len(again.prior) > 1000
    _, reloaded = rcc.find_citations(text, catalog, 3, mention_threshold=0.0,
                                     use_embeddings=False, rcc_model=again)
    assert reloaded == every
    bare = rcc.RccModel(shipped.stage1, shipped.stage2, shipped.threshold, shipped.cosine_min)
    bare.save(tmp_path / "bare.json")
    _, plain = rcc.find_citations(text, catalog, 3, mention_threshold=0.0,
                                  use_embeddings=False,
                                  rcc_model=rcc.RccModel.load(tmp_path / "bare.json"))
    assert "BRFSS survey" not in {m["mention"] for m in plain}
    assert {m["mention"] for m in plain} <= set(got)


def test_mention_forms_are_the_ones_annotators_list():
    # "Name (ACRONYM)" is also given as its two parts; words before a name are dropped
    assert rcc_mentions.variants(
        "data from the National Health and Nutrition Examination Survey (NHANES)") == [
        ("National Health and Nutrition Examination Survey (NHANES)", False),
        ("National Health and Nutrition Examination Survey", True), ("NHANES", True)]
    # a name with years after it is also given without them
    assert [f for f, _ in rcc_mentions.variants("Survey of Youth (SY), 1997-2002")] == [
        "Survey of Youth (SY), 1997-2002", "Survey of Youth (SY)", "Survey of Youth", "SY"]
    # a match run on past a sentence end is cut there; an unclosed bracket is closed
    assert rcc_mentions.variants("Cambridge Study in Delinquent Development. Cambridge") == [
        ("Cambridge Study in Delinquent Development", False)]
    assert rcc_mentions.variants("1999-2002 Cambridge Study (CSDD")[0] == (
        "Cambridge Study (CSDD)", False)
    # organizations are not datasets: dropped with the acronym split off them, while a
    # dataset named "... Statistics" stays; a form found twice keeps both scores
    cands = rcc_mentions.candidates(
        {"National Center for Health Statistics (NCHS)": 0.9, "NCHS": 0.8,
         "Balance Sheet Statistics": 0.5, "Survey of Youth (SY)": 0.7},
        {"Survey of Youth": 0.2, "Centers for Disease Control": 0.6})
    assert set(cands) == {"balance sheet statistics", "survey of youth (sy)", "survey of youth",
                          "sy"}
    assert (cands["survey of youth"]["citation"], cands["survey of youth"]["pattern"]) == (0.7, 0.2)
    assert cands["sy"]["part"] and not cands["survey of youth"]["part"]
    X = rcc_mentions.features(cands, "We use the Survey of Youth (SY). SY data.", {"sy": [3, 4]})
    assert X.shape == (4, len(rcc_mentions.SELECT_FEATURES))
    col = rcc_mentions.SELECT_FEATURES.index
    sy = list(cands).index("sy")
    assert X[sy, col("prior")] == pytest.approx(np.log(3.5 / 1.5))
    assert X[sy, col("log_occ")] == pytest.approx(np.log1p(2))
    assert X[list(cands).index("balance sheet statistics"), col("prior")] == 0.0   # unseen
    assert rcc_mentions.prior_counts(["a", "a", "b"], [1, 0, 1]) == {"a": [1, 2]}


def test_catalog_forms_are_equivalent():
    structured = [{"data_set_id": 7, "title": "Panel Study of Income Dynamics",
                   "mentions": ["PSID"]}]
    a = rcc.Catalog.from_value(structured)
    b = rcc.Catalog.from_value({"7": {"title": "Panel Study of Income Dynamics",
                                      "mention_list": ["PSID"]}})
    assert a.ids == b.ids == ["7"] and a.index == b.index
    with pytest.raises(ValueError, match="no entries"):
        rcc.Catalog.from_value({})


def test_json_trees_equal_sklearn():
    from sklearn.ensemble import HistGradientBoostingClassifier
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.5, size=600)) > 0
    m = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(X, y)
    trees = rcc.Trees.from_sklearn(m, ["a", "b", "c", "d"])
    again = rcc.Trees.from_json(json.loads(json.dumps(trees.to_json())))
    Z = rng.normal(size=(300, 4))
    np.testing.assert_allclose(again.predict(Z), m.predict_proba(Z)[:, 1], atol=1e-5)


def test_compiled_tree_walk_reaches_sklearns_leaves_even_on_a_threshold():
    from sklearn.ensemble import HistGradientBoostingClassifier
    rng = np.random.default_rng(2)
    X = rng.normal(size=(1000, 5))
    y = (X[:, 0] * X[:, 4] + X[:, 2] + rng.normal(scale=0.5, size=1000)) > 0
    m = HistGradientBoostingClassifier(max_iter=40, max_leaf_nodes=15,
                                       random_state=0).fit(X, y)
    trees = rcc.Trees.from_sklearn(m, list("abcde"))
    # rows whose values are the trees' own thresholds: "<=" sends them left, as in sklearn
    thresholds = np.concatenate([t["threshold"][~t["leaf"]] for t in trees.trees])
    Z = np.vstack([rng.normal(size=(200, 5)), rng.choice(thresholds, size=(300, 5))])
    p = trees.predict(Z)
    np.testing.assert_allclose(np.log(p) - np.log1p(-p), m.decision_function(Z),
                               rtol=0, atol=1e-9)
    assert trees.predict(Z[:0]).shape == (0,)


def test_a_bag_of_trees_averages_the_members_log_odds():
    from sklearn.ensemble import HistGradientBoostingClassifier
    from shareval.systems.training import _fit_bag
    rng = np.random.default_rng(1)
    X = rng.normal(size=(800, 4))
    y = (X[:, 0] - X[:, 3] + rng.normal(scale=0.7, size=800)) > 0
    groups = np.arange(800) // 4          # 200 "publications" of 4 rows
    bag = _fit_bag(X, y, groups, ["a", "b", "c", "d"], k=3, share=0.7)
    assert len(bag.models) == 3
    # each member saw a different 70% of the publications
    assert not np.allclose(
        bag.models[0].decision_function(X), bag.models[1].decision_function(X))
    Z = rng.normal(size=(300, 4))
    raw = np.mean([m.decision_function(Z) for m in bag.models], axis=0)
    expected = 1 / (1 + np.exp(-raw))
    np.testing.assert_allclose(bag.predict_proba(Z)[:, 1], expected, atol=1e-12)
    members = [rcc.Trees.from_sklearn(m, ["a", "b", "c", "d"]) for m in bag.models]
    averaged = rcc.Trees.from_json(json.loads(json.dumps(rcc.Trees.average(members).to_json())))
    assert len(averaged.trees) == sum(len(m.trees) for m in members)
    np.testing.assert_allclose(averaged.predict(Z), expected, atol=1e-5)
    single = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(X, y)
    one = rcc.Trees.from_sklearn(single, ["a", "b", "c", "d"])
    np.testing.assert_allclose(rcc.Trees.average([one]).predict(Z), one.predict(Z))


def test_shipped_model_ranks_the_cited_dataset_first(catalog):
    # a five-entry catalog without known mentions is far from the training catalog, so the
    # absolute scores are low (docs/systems.md, "Limits"); the ranking is what must hold
    citations, mentions = rcc.find_citations(PAPER, catalog, 5, threshold=0.0)
    found = {c["data_set_id"]: c for c in citations}
    assert citations[0]["data_set_id"] == "103" and found["103"]["publication_id"] == 5
    assert any("PSID" in m or "Panel Study" in m for m in found["103"]["mention_list"])
    # every matched string is a mention candidate; which are output is the selector's call
    _, every = rcc.find_citations(PAPER, catalog, 5, threshold=0.0, mention_threshold=0.0)
    assert {m["mention"] for m in every} >= set(found["103"]["mention_list"])
    assert {m["mention"] for m in mentions} <= {m["mention"] for m in every}
    scores = [c["score"] for c in citations]
    assert scores == sorted(scores, reverse=True)


def _pdf(path, text):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(8.5, 11))
    for i in range(0, len(text), 90):
        fig.text(0.05, 0.95 - i / 90 * 0.03, text[i:i + 90], fontsize=9)
    fig.savefig(path, format="pdf")
    plt.close(fig)


def test_run_rcc_over_pdf_and_text_passes_validators(tmp_path, cli, catalog):
    pubs = tmp_path / "pubs"
    pubs.mkdir()
    _pdf(pubs / "11.pdf", PAPER)
    (pubs / "12.txt").write_text("A short note on weather without any data.", encoding="utf-8")
    (pubs / "13.pdf").write_bytes(b"%PDF-1.4 broken")
    assert "Panel Study" in read_document(pubs / "11.pdf")
    (tmp_path / "catalog.json").write_text(json.dumps(CATALOG))
    (tmp_path / "taxonomy.json").write_text(json.dumps(
        {"fields": ["Economics", {"label": "Sociology", "synonyms": ["social survey"]}],
         "methods": ["panel data", "fixed effects"]}))
    code, out, err = cli("run", "rcc", pubs, tmp_path / "out", "--catalog",
                         tmp_path / "catalog.json", "--taxonomy", tmp_path / "taxonomy.json",
                         "--threshold", "0.01", "--no-embeddings", "-q")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["publications"] == 2 and summary["unreadable"][0].startswith("13.pdf")
    cites = json.loads((tmp_path / "out" / "data_set_citations.json").read_text())
    assert {(c["publication_id"], c["data_set_id"]) for c in cites} >= {(11, "103")}
    for task, name in (("rcc-citations", "data_set_citations.json"),
                       ("rcc-mentions", "data_set_mentions.json"),
                       ("rcc-fields-methods", "research_fields.json"),
                       ("rcc-fields-methods", "methods.json")):
        code, out, err = cli("validate", task, "-s", tmp_path / "out" / name)
        assert code == 0, err
    # worker processes give the same files, in the same order
    code, out, err = cli("run", "rcc", pubs, tmp_path / "out2", "--catalog",
                         tmp_path / "catalog.json", "--taxonomy", tmp_path / "taxonomy.json",
                         "--threshold", "0.01", "--no-embeddings", "-q", "--workers", "2")
    assert code == 0, err
    assert json.loads(out)["unreadable"] == summary["unreadable"]
    for name in ("data_set_citations.json", "data_set_mentions.json", "methods.json"):
        assert (tmp_path / "out2" / name).read_text() == (tmp_path / "out" / name).read_text()
    code, out, err = cli("run", "rcc", pubs, tmp_path / "out3", "--catalog",
                         tmp_path / "catalog.json", "--workers", "0")
    assert code == 2 and "--workers" in err


def test_fields_and_methods_match_the_taxonomy():
    tax = {"fields": [("Economics", ["Economics", "income"]), ("Astronomy", ["Astronomy"])],
           "methods": [("panel regression", ["panel regression"])]}
    text = ("We estimate a panel regression of household income. Income panel regression "
            "models and a difference-in-differences estimation follow.")
    out = fields.fields_and_methods(text, tax, 3)
    assert [r["research_field"] for r in out["research_fields"]] == ["Economics"]
    assert out["methods"][0]["method"] == "panel regression"
    assert all(0 < r["score"] <= 1 for r in out["research_fields"] + out["methods"])
    assert any(r["method"].endswith("estimation") for r in out["candidate_methods"])


# ---------------------------------------------------------------------------
# SV-Ident

SENTENCES = [
    ("u1", "Respondents were asked how satisfied they are with the federal government.", "en"),
    ("u2", "The weather in Freiburg was pleasant that summer.", "en"),
    ("u3", "Wie zufrieden sind Sie mit der Arbeit der Bundesregierung?", "de"),
]
VOCAB_EN = ("id\tlabel\ttopic\tquestion\tanswer\n"
            "v16\tSATISFACTION WITH FED.GOV\tPolitics\tHow satisfied are you with the "
            "performance of the federal government?\tVery satisfied;Not satisfied\n"
            "v20\tAGE OF RESPONDENT\tDemography\tHow old are you?\tYears\n"
            "v21\tHOUSEHOLD INCOME\tEconomy\tWhat is your monthly household income?\tEuro\n")
VOCAB_DE = ("id\tlabel\ttopic\tquestion\tanswer\n"
            "v16\tZUFRIEDENHEIT BUNDESREGIERUNG\tPolitik\tWie zufrieden sind Sie mit der "
            "Bundesregierung?\tSehr zufrieden;Unzufrieden\n"
            "v30\tALTER\tDemographie\tWie alt sind Sie?\tJahre\n")


@pytest.fixture
def sv_files(tmp_path):
    ref = tmp_path / "ref.tsv"
    ref.write_text("sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n" + "".join(
        f"{s}\t{int(u != 'u2')}\t{'v16' if u != 'u2' else ''}\tZA1\t{1 if lang == 'en' else 2}"
        f"\t{u}\t{lang}\n" for u, s, lang in SENTENCES))
    (tmp_path / "en.tsv").write_text(VOCAB_EN)
    (tmp_path / "de.tsv").write_text(VOCAB_DE)
    return tmp_path


def test_detection_neighbour_term_pulls_towards_the_nearer_class(tmp_path):
    from shareval.systems.embed import embed
    pos = ["How satisfied are you with the federal government?",
           "Respondents rated their trust in parliament on a scale from 1 to 10."]
    neg = ["We thank the anonymous reviewers.", "Section 3 describes the method."]
    vectors = embed(pos + neg)
    margin = svident.neighbor_margin(vectors, vectors.astype(np.float16),
                                     np.array([1, 1, 0, 0]), k=1)
    assert (margin[:2] > 0).all() and (margin[2:] < 0).all()
    # a model with zero weights decides by the neighbours alone, and survives save/load
    width = svident.detection_features(pos[:1], vectors[:1]).shape[1]
    model = svident.DetectionModel(np.zeros(width), 0.0, 0.5, {}, vectors.astype(np.float16),
                                   np.array([1, 1, 0, 0]), k=1, weight=20.0)
    model.save(tmp_path / "m.npz")
    loaded = svident.DetectionModel.load(tmp_path / "m.npz")
    assert loaded.k == 1 and loaded.weight == 20.0 and loaded.labels.tolist() == [1, 1, 0, 0]
    p = loaded.probabilities(pos + neg)
    assert (p[:2] > 0.5).all() and (p[2:] < 0.5).all()
    # without neighbours the same weights give exactly 0.5
    bare = svident.DetectionModel(np.zeros(width), 0.0, 0.5, {})
    bare.save(tmp_path / "b.npz")
    assert np.allclose(svident.DetectionModel.load(tmp_path / "b.npz").probabilities(pos), 0.5)


def test_disambiguation_methods_rank_the_right_variable(sv_files):
    vocab = (svident.read_vocabulary(sv_files / "en.tsv")
             + svident.read_vocabulary(sv_files / "de.tsv"))
    sents = [s for _, s, _ in SENTENCES]
    for method in ("bm25", "dense", "fusion"):
        ranked = svident.disambiguate(sents, vocab, k=2, method=method)
        assert ranked[0][0][0] == "v16", method
        assert ranked[2][0][0] == "v16", method
        assert all(len(r) == 2 for r in ranked)
    # German sentences are matched only against the German vocabulary
    assert {v for v, _ in svident.disambiguate(sents[2:], vocab, k=5)[0]} <= {"v16", "v30"}
    assert svident.language(sents[2]) == "de" and svident.language(sents[0]) == "en"


def test_run_svident_passes_validators(sv_files, cli):
    out = sv_files / "out"
    code, stdout, err = cli("run", "svident", sv_files / "ref.tsv", out, "--vocabulary",
                            sv_files / "en.tsv", "--vocabulary", sv_files / "de.tsv", "-q")
    assert code == 0, err
    det = json.loads((out / "detection.json").read_text())
    assert set(det) == {"u1", "u2", "u3"} and set(det.values()) <= {0, 1}
    for task, name in (("svident-detection", "detection.json"),
                       ("svident-disambiguation", "disambiguation.json")):
        code, _, err = cli("validate", task, "-s", out / name, "-r", sv_files / "ref.tsv")
        assert code == 0, err
    code, stdout, err = cli("score", "svident-disambiguation", "-s", out / "disambiguation.json",
                            "-r", sv_files / "ref.tsv", "--format", "json")
    assert json.loads(stdout)["metrics"]["map@10"] == 1.0


def test_bad_inputs_name_the_file(tmp_path, cli):
    bad = tmp_path / "s.tsv"
    bad.write_text("id\ttext\n1\thello\n")
    code, _, err = cli("run", "svident", bad, tmp_path / "o")
    assert code == 2 and f"{bad}:1: header" in err
    code, _, err = cli("run", "rcc", tmp_path / "missing", tmp_path / "o", "--catalog", bad)
    assert code == 2 and "no such file" in err
    vocab = tmp_path / "v.tsv"
    vocab.write_text("id\tlabel\n\tno id\n")
    with pytest.raises(ValueError, match=r"v.tsv:2: id: missing"):
        svident.read_vocabulary(vocab)


# ---------------------------------------------------------------------------
# MATERIAL

from shareval.examples import DOC_TEXTS  # noqa: E402  (the README's MATERIAL documents)


@pytest.fixture
def material_inputs(tmp_path):
    pack = make_pack(tmp_path / "pack")
    docs = [line.split("\t")[0] for line in
            (pack / "documents.tsv").read_text().splitlines()[1:]]
    inp = tmp_path / "in"
    (inp / "documents").mkdir(parents=True)
    for d, text in zip(docs, DOC_TEXTS):
        (inp / "documents" / f"{d}.txt").write_text(text, encoding="utf-8")
    (inp / "queries.tsv").write_text((pack / "queries.tsv").read_text())
    (inp / "documents.tsv").write_text((pack / "documents.tsv").read_text())
    (inp / "domains.json").write_text(json.dumps({"GOV": "GOV", "MIL": "Military"}))
    return pack, inp, docs


def test_run_material_passes_every_validator(material_inputs, tmp_path, cli):
    pack, inp, docs = material_inputs
    out = tmp_path / "out"
    code, stdout, err = cli("run", "material", inp, out, "--team", "TEAM1", "--languages", "1A=en")
    assert code == 0, err
    for task, sub in (("material-clir", "clir"), ("material-e2e", "e2e"),
                      ("material-domainid", "domainid"), ("material-langid", "langid")):
        code, _, err = cli("validate", task, "-s", out / sub, "-r", pack)
        assert code == 0, (task, err)
    ebola = (out / "clir" / "query1.tsv").read_text().splitlines()
    conf = {line.split("\t")[0]: float(line.split("\t")[2]) for line in ebola}
    # the English and the German ebola documents outrank the others
    assert min(conf[docs[0]], conf[docs[1]]) > max(conf[d] for d in docs[2:])
    for meta in (out / "e2e").glob("*/*.json"):
        obj = json.loads(meta.read_text())
        assert sum(len(x.split()) for x in obj["content_list"]) <= 100
        from shareval.formats.images import image_info
        kind, width, height = image_info((meta.parent / obj["image_filename"]).read_bytes())
        assert (kind, width) == ("png", 1024) and height <= 768


def test_threshold_tuning_maximizes_aqwv():
    from shareval.metrics.detection import aqwv
    rng = np.random.default_rng(1)
    n, beta = 40, 20.0
    conf = {f"q{i}": rng.random(n) for i in range(5)}
    rel = {q: (c + rng.normal(scale=0.3, size=n)) > 0.9 for q, c in conf.items()}
    t, best = material.tune_threshold(conf, rel, beta)
    ids = list(conf)
    q = np.repeat(np.arange(5), n)
    r = np.concatenate([rel[i] for i in ids])
    c = np.concatenate([conf[i] for i in ids])
    n_rel = np.array([rel[i].sum() for i in ids])
    total = np.full(5, n)
    brute = max(aqwv(q, r, c >= x, n_rel, total, beta) for x in np.r_[c, np.inf])
    assert best == pytest.approx(brute)
    assert aqwv(q, r, c >= t, n_rel, total, beta) == pytest.approx(best)


def test_train_material_tunes_thresholds_that_run_uses(material_inputs, tmp_path, cli):
    pack, inp, docs = material_inputs
    model = tmp_path / "thresholds.json"
    code, _, err = cli("train-system", "material", "--input", inp, "--pack", pack,
                       "--out", model)
    assert code == 0, err
    tuned = json.loads(model.read_text())
    # the run with these thresholds scores the AQWV the tuning promised
    code, out, err = cli("run", "material", inp, tmp_path / "out", "--model", model,
                         "--languages", "1A=en")
    assert code == 0, err
    assert json.loads(out)["thresholds"]["source"] == str(model)
    code, out, err = cli("score", "material-clir", "-s", tmp_path / "out" / "clir", "-r", pack,
                         "--format", "json")
    assert code == 0, err
    assert json.loads(out)["metrics"]["aqwv"] == pytest.approx(tuned["meta"]["aqwv"], abs=1e-4)
    # ... and no other threshold on those confidences does better
    confs = [float(line.split("\t")[2]) for f in (tmp_path / "out" / "clir").glob("*.tsv")
             for line in f.read_text().splitlines()]
    for t in sorted(set(confs)):
        code, out, err = cli("run", "material", inp, tmp_path / "o2", "--threshold", str(t),
                             "--languages", "1A=en", "-q")
        code, out, err = cli("score", "material-clir", "-s", tmp_path / "o2" / "clir", "-r",
                             pack, "--format", "json")
        assert json.loads(out)["metrics"]["aqwv"] <= tuned["meta"]["aqwv"] + 1e-4
    assert 0 <= tuned["domainid"] <= 1 and tuned["meta"]["domains"] == 2
    # a document of the pack without text is named
    (inp / "documents" / f"{docs[2]}.txt").unlink()
    code, _, err = cli("train-system", "material", "--input", inp, "--pack", pack,
                       "--out", model)
    assert code == 2 and docs[2] in err
    code, _, err = cli("train-system", "material", "--pack", pack)
    assert code == 2 and "--input" in err


def test_domain_threshold_tuning_maximizes_f1():
    rng = np.random.default_rng(3)
    for trial in range(20):
        scores = {d: rng.integers(0, 6, 15) / 5 for d in ("A", "B")}     # ties on purpose
        rel = {d: rng.random(15) < 0.3 for d in scores}
        t, best = material.tune_domain_threshold(scores, rel)
        s = np.concatenate(list(scores.values()))
        r = np.concatenate(list(rel.values()))
        if not r.any():
            assert (t, best) == (0.5, 0.0)
            continue
        brute = max(2 * np.sum(r & (s >= x)) / (np.sum(s >= x) + r.sum()) for x in s)
        assert best == pytest.approx(brute)
        assert 2 * np.sum(r & (s >= t)) / (np.sum(s >= t) + r.sum()) == pytest.approx(best)


def test_query_words_drop_operators():
    assert material.query_words('EXAMPLE_OF(music)+"folk song"') == "music folk song"


# ---------------------------------------------------------------------------
# HTTP services

def _serve(system, opts):
    server = make_server(get(system), opts, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


def _post(url, body, raw=None):
    data = raw if raw is not None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _declare_length(base, route, length):
    """POST with a Content-Length header of `length` and no body; (status, JSON)."""
    import http.client
    from urllib.parse import urlsplit
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    try:
        conn.putrequest("POST", route)
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(length))
        conn.endheaders()
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


def test_services_answer_and_refuse_bad_requests(tmp_path, sv_files, material_inputs):
    (tmp_path / "catalog.json").write_text(json.dumps(CATALOG))
    server, base = _serve("rcc", {"catalog": str(tmp_path / "catalog.json")})
    try:
        with urllib.request.urlopen(base + "/") as r:
            api = json.loads(r.read())
        assert "POST /cite" in api["routes"]
        status, body = _post(base + "/cite", {"text": PAPER, "publication_id": 9,
                                              "threshold": 0.01})
        assert status == 200 and "103" in {c["data_set_id"] for c in body["citations"]}
        assert _post(base + "/cite", {"txt": 1})[0] == 400
        status, body = _post(base + "/cite", {"text": 5, "threshold": "x",
                                              "mention_threshold": [1]})
        assert status == 400 and "text" in body["error"] and "threshold" in body["error"]
        assert "mention_threshold: expected float, found list" in body["error"]
        assert _post(base + "/cite", None, raw=b"{not json")[0] == 400
        assert _post(base + "/nowhere", {})[0] == 404
        assert _post(base + "/fields", {"text": "x"})[0] == 400     # no taxonomy loaded
        # the server refuses on the declared length before reading the body, so the
        # request announces MAX_BODY + 1 bytes and sends none: no race with a closing socket
        status, body = _declare_length(base, "/cite", MAX_BODY + 1)
        assert status == 413 and str(MAX_BODY) in body["error"]
        assert _declare_length(base, "/cite", -1)[0] == 413
    finally:
        server.shutdown()
    server, base = _serve("svident", {"vocabulary": [str(sv_files / "en.tsv"),
                                                     str(sv_files / "de.tsv")]})
    try:
        status, body = _post(base + "/detect", {"sentences": [s for _, s, _ in SENTENCES]})
        assert status == 200 and len(body["predictions"]) == 3
        status, body = _post(base + "/disambiguate", {"sentences": [SENTENCES[0][1]], "k": 2})
        assert status == 200 and body["rankings"][0][0]["id"] == "v16"
        status, body = _post(base + "/disambiguate", {"sentences": ["x"], "method": "magic"})
        assert status == 400 and "method" in body["error"]
    finally:
        server.shutdown()
    _, inp, docs = material_inputs
    server, base = _serve("material", {"collection": str(inp)})
    try:
        status, body = _post(base + "/search", {"query": "ebola:Physical-And-Mental-Health",
                                                "k": 2})
        assert status == 200 and {r["doc_id"] for r in body["results"]} == set(docs[:2])
        status, body = _post(base + "/langid", {"texts": ["Das ist ein deutscher Satz."]})
        assert body["languages"][0]["lang"] == "de"
        status, body = _post(base + "/domainid", {"texts": [DOC_TEXTS[2]]})
        scores = body["domains"][0]
        assert max(scores, key=scores.get) == "GOV"
        assert _post(base + "/search", {"query": "no domain"})[0] == 400
    finally:
        server.shutdown()
