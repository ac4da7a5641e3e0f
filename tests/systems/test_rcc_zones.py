"""The reference list of a publication's text (rcc_zones) and the RCC features that
say how many of a candidate's matches fall in it."""
import importlib.util
from pathlib import Path

from shareval.systems import rcc
from shareval.systems.rcc_zones import reference_zone

_SPEC = importlib.util.spec_from_file_location(
    "pdf_form", Path(__file__).parents[2] / "bench" / "pdf_form.py")
pdf_form = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(pdf_form)

BODY = ("We use the Panel Study of Income Dynamics to measure how earnings of families "
        "change over time. The sample covers households observed for many years.\n") * 12
ENTRIES = [
    "Smith, J., Brown, K. (2004). Health and Retirement Study design. Demography, 3(2), 1-9.",
    "Kessler RC, Chiu W. Prevalence of disorders in the national comorbidity survey.",
    "Lee, A. (1999). Trends in schooling. Journal of Human Resources, 34(1), 1-20.",
    "Adams, B., Clark, C. (2010). Wealth over the life course. Pediatrics, 12, 3-8.",
    "Wang, D. (2012). Earnings dynamics. American Economic Review, 102(3), 1-30.",
    "Hill, E., Young, F. (2001). Measurement error. Demography, 38(1), 11-19.",
    "Scott, G. (1995). Family change. Journal of Marriage and Family, 57(2), 4-9.",
    "Green, H., King, I. (2008). Income volatility. Review of Economics, 9(1), 2-5.",
]
CATALOG = {"1": "Panel Study of Income Dynamics", "2": "Health and Retirement Study",
           "3": "National Comorbidity Survey"}


def _text(heading: bool = True) -> str:
    return BODY + ("References\n" if heading else "") + "\n".join(ENTRIES) + "\n"


def test_the_reference_list_starts_at_its_heading_in_the_second_half():
    text = _text()
    start, end = reference_zone(text)
    assert text[start:].lstrip().startswith("References")
    assert end == len(text)
    # a "References" line in the first half (a table of contents) is not the list
    assert reference_zone("References\n" + BODY) is None


def test_without_a_heading_a_dense_run_of_entries_is_the_list():
    text = _text(heading=False)
    start, _ = reference_zone(text)
    assert text[start:].startswith("Smith, J.")
    assert reference_zone(BODY) is None


def test_an_appendix_after_the_list_ends_it():
    text = _text() + "Appendix A: Variables\nWe also used the Health and Retirement Study.\n"
    start, end = reference_zone(text)
    assert text[end:].startswith("Appendix A")
    assert start < end


def test_matches_only_in_the_reference_list_have_ref_share_one():
    catalog = rcc.Catalog.from_value(CATALOG)
    cands, X = rcc.features(rcc.normalize(_text()), catalog)
    share = {catalog.ids[c.entry]: X[i, rcc.FEATURES.index("ref_share")]
             for i, c in enumerate(cands)}
    body = {catalog.ids[c.entry]: X[i, rcc.FEATURES.index("log_body_occ")]
            for i, c in enumerate(cands)}
    assert share["1"] == 0.0 and body["1"] > 0        # named in the body only
    assert share["2"] == 1.0 and body["2"] == 0.0     # named in an entry only
    # the same text without a reference list: nothing is in a zone
    cands, X = rcc.features(rcc.normalize(BODY + "Health and Retirement Study.\n"), catalog)
    assert not X[:, rcc.FEATURES.index("ref_share")].any()


def test_the_simulated_reference_list_is_found_in_the_simulated_pdf_text():
    refs = [e for e in ENTRIES]
    paged = pdf_form.render("Title line of the paper\nAuthor One\n" + BODY, 80, refs)
    assert "\nReferences\n" in paged
    start, _ = reference_zone(rcc.normalize(paged))
    assert rcc.normalize(paged)[start:].lstrip().startswith("References")


def test_a_model_trained_without_the_reference_list_features_reads_its_own_columns(tmp_path):
    import json

    import numpy as np
    d = json.loads(rcc.MODEL_PATH.read_text())
    names = tuple(d["stage1"]["features"])
    catalog = rcc.Catalog.from_value(CATALOG)
    text = rcc.normalize(_text())
    cands, X = rcc.features(text, catalog)
    m = rcc.RccModel.load()
    if names == rcc.FEATURES:          # the shipped model already reads them all
        assert m.columns is None
        return
    assert m.columns == [rcc.FEATURES.index(n) for n in names]
    assert "ref_share" not in names
    # stage 1 sees exactly the columns it was trained on, in its order
    p1 = m.stage1.predict(np.ascontiguousarray(X[:, m.columns]))
    near = np.flatnonzero(p1 >= m.cosine_min)
    expected = np.zeros(len(cands))
    expected[near] = m.stage2.predict(rcc.stage2_features(p1[near], [0] * len(near),
                                                          np.zeros(len(near))))
    expected[rcc.reference_only(X)] = 0.0      # named only in the list: never reported
    _, p = m.score(text, catalog)
    assert len(near) and np.array_equal(p, expected)
    # a model whose features are not all computed any more is refused
    d["stage1"]["features"] = [*names[:-1], "no_such_feature"]
    (tmp_path / "m.json").write_text(json.dumps(d))
    try:
        rcc.RccModel.load(tmp_path / "m.json")
    except ValueError as e:
        assert "retrain" in str(e)
    else:
        raise AssertionError("loaded a model with an unknown feature")
