"""RCC reads a publication in the form its training texts had: lines of which more than
a tenth of the characters are digits are dropped (``text.drop_digit_lines``, applied by
``rcc.prepare_text`` in ``find_citations`` and in training)."""
import dataclasses

import pytest

from shareval.systems import rcc
from shareval.systems.text import drop_digit_lines

from .test_rcc_zones import BODY, CATALOG

TINY = 1e-9
HRS = "2"
PSID = "1"


def test_a_line_with_more_than_a_tenth_digits_is_dropped_and_one_with_a_tenth_kept():
    kept = "a" * 18 + "12"          # 2 of 20 characters: exactly a tenth
    dropped = "a" * 17 + "123"      # 3 of 20
    assert drop_digit_lines(f"{kept}\n{dropped}\nno digits") == f"{kept}\nno digits"
    assert drop_digit_lines(dropped, share=0.15) == dropped
    assert drop_digit_lines("") == ""
    # empty lines stay (paragraphs), and '¼', which PDF fonts give for '=', is no digit
    assert drop_digit_lines("x\n\ny \u00bc z") == "x\n\ny \u00bc z"
    assert drop_digit_lines("x\n\ny \u00bc 3.1") == "x\n"


def test_prepare_text_drops_digit_lines_before_joining_hyphenated_words():
    raw = "we use the Panel Study of In-\ncome Dynamics\nTable 2 1998 2004 12.5 13.7 99\n"
    assert rcc.prepare_text(raw) == "we use the Panel Study of Income Dynamics\n"
    assert rcc.prepare_text(raw) != rcc.normalize(raw)


@pytest.fixture(scope="module")
def catalog():
    return rcc.Catalog.from_value(CATALOG)


@pytest.fixture(scope="module")
def model():
    # every pair goes to stage 2, so a dataset found in the text scores above TINY
    return dataclasses.replace(rcc.RccModel.load(), cosine_min=0.0)


def _cited(m, text, catalog):
    cites, _ = rcc.find_citations(text, catalog, 9, threshold=TINY, use_embeddings=False,
                                  rcc_model=m)
    return {c["data_set_id"] for c in cites}


def test_a_dataset_named_only_in_a_table_row_is_not_reported(catalog, model):
    table = "Health and Retirement Study 1998 2000 2002 2004 2006 12.5 13.1 14.2 15.0\n"
    assert sum(map(str.isdigit, table)) > 0.1 * len(table.rstrip("\n"))
    # the same words in prose are reported, and would be in the table row without the drop
    prose = "The Health and Retirement Study gave us the wealth of older households.\n"
    assert HRS in _cited(model, BODY + prose, catalog)
    scores = model.score(rcc.normalize(BODY + table), catalog)
    assert any(catalog.ids[c.entry] == HRS and p > TINY for c, p in zip(*scores))
    cited = _cited(model, BODY + table, catalog)
    assert HRS not in cited and PSID in cited
