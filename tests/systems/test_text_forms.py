"""Publications as PDF-to-text output (bench/pdf_form.py makes it from a JSON text):
words hyphenated across lines are joined again, so the words RCC reads are those of
the processed text plus the pages' running headers and numbers, and the citations
found are the same."""
import importlib.util
import random
from pathlib import Path

import pytest

from shareval.systems import rcc
from shareval.systems.text import normalize, read_document, tokens
from tests.systems.test_systems import CATALOG, PAPER

_SPEC = importlib.util.spec_from_file_location(
    "pdf_form", Path(__file__).parents[2] / "bench" / "pdf_form.py")
pdf_form = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(pdf_form)

_WORDS = ("longitudinal questionnaires administered representative households income "
          "respondents wealth employment retirement education children parents health "
          "insurance interviews sample weights attrition cohort region").split()
_RNG = random.Random(0)
BODY = " ".join(
    " ".join(_RNG.choice(_WORDS) for _ in range(_RNG.randint(8, 20))).capitalize() + "."
    + (" We use the Panel Study of Income Dynamics (PSID)." if k % 7 == 0 else "")
    for k in range(220))


def _words(text: str) -> list[str]:
    return tokens(normalize(text))


def test_the_simulated_pages_have_headers_page_numbers_and_hyphens():
    paged = pdf_form.render("Title line of the paper\nAuthor One, Author Two\n" + BODY, 40)
    pages = paged.split("\f")
    assert len(pages) >= 3
    assert all(p.rstrip("\n").endswith(str(k + 1)) for k, p in enumerate(pages))
    heads = [p.split("\n")[0] for p in pages[1:]]
    assert heads[0] == heads[2] != heads[1] == heads[3]     # two running headers, alternating
    assert any(line.endswith("-") and line[-2].isalpha() for line in paged.splitlines())


@pytest.mark.parametrize("width", [40, 80])
def test_reading_pdf_form_text_gives_the_words_of_the_processed_text(tmp_path, width):
    text = "Title line of the paper\nAuthor One, Author Two\n" + BODY
    path = tmp_path / "7.txt"
    path.write_text(pdf_form.render(text, width))
    pages = read_document(path).split("\f")
    heads = {p.split("\n")[0] for p in pages[1:]}
    body = "\n".join("\n".join(ln for ln in p.split("\n")
                               if ln not in heads and not ln.strip().isdigit()) for p in pages)
    assert _words(body) == _words(text)          # every hyphenated word joined again
    assert any(ln.endswith("-") for ln in body.split("\n"))


def test_rcc_finds_the_same_citations_in_both_forms(tmp_path):
    catalog = rcc.Catalog.from_value(CATALOG)
    text = "Title line of the paper\nAuthor One\n" + (PAPER + " ") * 20
    path = tmp_path / "5.txt"
    path.write_text(pdf_form.render(text, 60))
    ids = [{c["data_set_id"] for c in rcc.find_citations(t, catalog, 5, 0.05, use_embeddings=False)[0]}
           for t in (text, read_document(path))]
    assert ids[0] == ids[1] and "103" in ids[0]
