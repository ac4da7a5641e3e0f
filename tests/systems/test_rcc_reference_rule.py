"""RCC does not report a dataset whose name is found only in the text's reference list
(``rcc.reference_only``, applied in ``RccModel.score``): a PDF-to-text form keeps every
reference entry, and entries name data the paper only cites. Nor one named only in a
line that is more than a tenth digits (a table row), which ``rcc.prepare_text`` drops."""
import dataclasses

import numpy as np
import pytest

from shareval.systems import rcc

from .test_rcc_zones import BODY, CATALOG, ENTRIES

HRS = "2"       # the Health and Retirement Study in CATALOG
PSID = "1"      # the Panel Study of Income Dynamics, which BODY uses
HRS_ENTRIES = [
    "Juster, F. T., Suzman, R. (1995). An overview of the Health and Retirement Study. "
    "Journal of Human Resources, 30, 7-56.",
    "Health and Retirement Study (2004). Health and Retirement Study public use dataset. "
    "Ann Arbor, MI: University of Michigan.",
    "Sonnega, A., Faul, J. (2014). Cohort profile: the Health and Retirement Study (HRS). "
    "International Journal of Epidemiology, 43(2), 576-585.",
]
USES_HRS = ("We use the Health and Retirement Study (HRS), waves 1998 to 2004, to measure how "
            "retirement changes health. The HRS sample covers adults over 50.\n") * 3
REFERENCES = "References\n" + "\n".join(ENTRIES + HRS_ENTRIES) + "\n"
TINY = 1e-9     # a threshold every pair that stage 2 judged passes


@pytest.fixture(scope="module")
def catalog():
    return rcc.Catalog.from_value(CATALOG)


@pytest.fixture(scope="module")
def model():
    # every pair goes to stage 2 (a five-entry catalog scores far below the shipped
    # cosine_min), so that each pair has a score above 0 unless the rule sets it to 0
    return dataclasses.replace(rcc.RccModel.load(), cosine_min=0.0)


def _without_rule(m, text, catalog):
    """Scores as RccModel.score computes them, the reference-list rule left out."""
    cands, X = rcc.features(text, catalog)
    p1 = m.stage1.predict(np.ascontiguousarray(X if m.columns is None else X[:, m.columns]))
    near = np.flatnonzero(p1 >= m.cosine_min)
    p = np.zeros(len(cands))
    p[near] = m.stage2.predict(rcc.stage2_features(p1[near], [0] * len(near),
                                                   np.zeros(len(near))))
    return {catalog.ids[c.entry]: float(q) for c, q in zip(cands, p)}, X, cands


def _scores(m, text, catalog):
    cands, p = m.score(text, catalog)
    return {catalog.ids[c.entry]: float(q) for c, q in zip(cands, p)}


def _cited(m, text, catalog):
    cites, _ = rcc.find_citations(text, catalog, 9, threshold=TINY, use_embeddings=False,
                                  rcc_model=m)
    return {c["data_set_id"]: c["score"] for c in cites}


def test_a_dataset_named_only_in_the_reference_list_is_not_reported(catalog, model):
    text = rcc.prepare_text(BODY + REFERENCES)
    before, X, cands = _without_rule(model, text, catalog)
    share = {catalog.ids[c.entry]: X[i, rcc.FEATURES.index("ref_share")]
             for i, c in enumerate(cands)}
    assert share[HRS] == 1.0 and before[HRS] > TINY     # it would be reported without the rule
    assert list(rcc.reference_only(X)) == [catalog.ids[c.entry] in (HRS, "3") for c in cands]
    after = _scores(model, text, catalog)
    assert after[HRS] == 0.0
    cited = _cited(model, text, catalog)
    assert HRS not in cited and PSID in cited
    # the other pairs keep their scores: the rule removes, it does not re-rank
    assert after[PSID] == before[PSID] > 0


def test_a_dataset_named_in_the_body_and_the_reference_list_is_kept(catalog, model):
    text = rcc.prepare_text(USES_HRS + BODY + REFERENCES)
    before, X, cands = _without_rule(model, text, catalog)
    i = [catalog.ids[c.entry] for c in cands].index(HRS)
    assert 0.0 < X[i, rcc.FEATURES.index("ref_share")] < 1.0
    after = _scores(model, text, catalog)
    assert after[HRS] == before[HRS] > TINY and after[PSID] == before[PSID]
    assert before["3"] > TINY and after["3"] == 0.0     # an entry's survey, cited only there
    assert _cited(model, text, catalog)[HRS] == round(before[HRS], 4)


def test_a_text_without_a_reference_list_is_scored_as_without_the_rule(catalog, model):
    # the Health and Retirement Study named as in an entry, but in the body
    text = rcc.prepare_text(BODY + "\n".join(HRS_ENTRIES[:2]) + "\n" + USES_HRS)
    for m in (model, rcc.RccModel.load()):
        before, X, _ = _without_rule(m, text, catalog)
        assert not rcc.reference_only(X).any()
        assert _scores(m, text, catalog) == before
    assert _without_rule(model, text, catalog)[0][HRS] > TINY


def test_a_dataset_named_only_in_a_table_row_is_not_reported(catalog, model):
    # rcc.prepare_text drops lines with more than a tenth digits, as the training texts
    table = "Health and Retirement Study 1998 2000 2002 2004 2006 12.5 13.1 14.2 15.0\n"
    assert sum(map(str.isdigit, table)) > 0.1 * len(table.rstrip("\n"))
    # the same words in prose are reported, and would be in the table row without the drop
    prose = "The Health and Retirement Study gave us the wealth of older households.\n"
    assert HRS in _cited(model, BODY + prose, catalog)
    assert _scores(model, rcc.normalize(BODY + table), catalog)[HRS] > TINY
    cited = _cited(model, BODY + table, catalog)
    assert HRS not in cited and PSID in cited
