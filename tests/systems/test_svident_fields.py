"""Field-weighted BM25 (``lexical.FieldBm25``), the lexical part of SV-Ident's fusions."""
import numpy as np
import pytest

from shareval.systems import svident
from shareval.systems.lexical import Bm25, CharBm25, FieldBm25, gram_tokens, word_tokens

VARIABLES = [
    svident.Variable("v1", "Trust in government", question="How much do you trust the "
                     "parliament?", answers="a lot; not at all", topic="politics"),
    svident.Variable("v2", "Trust in parliament", question="How much do you trust the "
                     "government?", answers="a lot; not at all", topic="politics"),
    svident.Variable("v3", "Household income", question="What is your household's net income?",
                     answers="euros", topic="economy"),
]
FIELDS = [{f: getattr(v, f) for f in ("label", "question", "answers", "topic")}
          for v in VARIABLES]
EQUAL = {"label": 1, "question": 1, "answers": 1, "topic": 1}
QUERIES = ["Respondents' trust in the government fell.", "household income", "zzz", "",
           "income income income"]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_equal_weights_are_bm25_over_the_joined_fields(lang):
    texts = [v.text() for v in VARIABLES]
    words = FieldBm25(FIELDS, EQUAL, word_tokens(lang)).scores(QUERIES)
    assert np.allclose(words, Bm25(texts, lang).scores(QUERIES), atol=1e-5)
    grams = FieldBm25(FIELDS, EQUAL, gram_tokens(4)).scores(QUERIES)
    assert np.allclose(grams, CharBm25(texts).scores(QUERIES), atol=1e-4)
    assert words.shape == (len(QUERIES), len(VARIABLES))
    assert not words[2:4].any()         # nothing shared, nothing scored


def test_the_label_weight_ranks_a_label_match_above_a_question_match():
    query = ["trust in the government"]
    equal = FieldBm25(FIELDS, EQUAL, word_tokens("en")).scores(query)[0]
    # v1 has "government" in its label, v2 in its question: the same words, a tie
    assert equal[0] == pytest.approx(equal[1])
    label = FieldBm25(FIELDS, svident.FIELD_WEIGHTS, word_tokens("en")).scores(query)[0]
    assert label[0] > label[1] > label[2] == 0


def test_a_weighted_term_counts_as_its_weight_times_its_frequency():
    # one field, weight 2, is BM25 over the text written twice
    docs = [{"label": "alpha beta"}, {"label": "beta gamma delta"}, {"label": "epsilon"}]
    twice = [{"label": d["label"] + " " + d["label"]} for d in docs]
    q = ["beta", "alpha delta", "epsilon"]
    tok = word_tokens("en")
    assert np.allclose(FieldBm25(docs, {"label": 2}, tok).scores(q),
                       FieldBm25(twice, {"label": 1}, tok).scores(q))
    # a zero weight leaves the field out
    assert not FieldBm25(FIELDS, {"label": 1, "question": 0}, tok).scores(["parliament?"])[0, 0]
