"""SV-Ident disambiguation's dense retriever: label and question, centred vectors."""
import numpy as np
import pytest

from shareval.systems import embed, svident, svident_dense
from tests.systems.test_svident_chars import VARIABLES

TRAIN = ("sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
         "Wie zufrieden sind Sie mit der Bundesregierung?\t1\tZA1_Varv1\tZA1\t1\ta\tde\n"
         "Das Einkommen der Haushalte wurde erfragt.\t1\tunk;ZA1_Varv2\tZA1\t1\tb\tde\n"
         "Wir danken den Gutachtern.\t0\t\t\t1\tc\tde\n"
         "Die Variable ist unbekannt.\t1\tunk\tZA1\t1\td\tde\n")


def test_the_shipped_means_are_the_training_sentences_mean():
    info = svident_dense.meta()
    assert "no trial data" in info["trained_on"]
    for encoder, dim in (("usem3", 512), ("e5", embed.E5_DIM)):
        mean = svident_dense.query_mean(encoder)
        assert mean.shape == (dim,) and mean.dtype == np.float32
        # a mean of unit vectors: shorter than one, far from zero (the shared direction)
        assert 0.2 < np.linalg.norm(mean) < 1.0
    assert info["centred_languages"] == {k: list(v) for k, v in svident_dense.CENTRED.items()}
    assert info["sentences"] == {"usem3": 1581, "e5": 317}      # e5: every fifth
    # the documented choice: usem3 centred in German only, e5 in both languages
    assert svident_dense.CENTRED == {"usem3": ("de",), "e5": ("en", "de")}


def test_train_means_averages_the_linked_sentences_only(tmp_path):
    train = tmp_path / "train.tsv"
    train.write_text(TRAIN, encoding="utf-8")
    rows = [dict(zip(TRAIN.splitlines()[0].split("\t"), line.split("\t")))
            for line in TRAIN.splitlines()[1:]]
    linked = svident_dense.linked_sentences(rows)
    assert linked == ["Wie zufrieden sind Sie mit der Bundesregierung?",
                      "Das Einkommen der Haushalte wurde erfragt."]     # 'unk' alone: no
    out = tmp_path / "dense.npz"
    info = svident_dense.train_means(train, out, encoders=("usem3",), log=lambda *a: None)
    assert info["sentences"] == {"usem3": 2}
    mean = svident_dense.query_mean("usem3", out)
    assert np.allclose(mean, embed.embed(linked).mean(axis=0), atol=1e-6)
    with pytest.raises(ValueError, match="no mean for the e5 encoder"):
        svident_dense.query_mean("e5", out)


def test_centred_dense_scores_are_cosines_of_centred_label_and_question():
    index = svident.VariableIndex(VARIABLES, "de")
    assert index.centred and svident_dense.centred("usem3", "de")
    sents = ["Das Vertrauen in die Regierung ist gesunken.", "Wie groß ist Ihr Wohnort?"]
    passages = embed.embed([f"{v.label} {v.question}" for v in VARIABLES])
    passages = passages - passages.mean(axis=0)
    passages /= np.linalg.norm(passages, axis=1, keepdims=True)
    q = embed.embed(sents) - svident_dense.query_mean("usem3")
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    scores = index.scores(sents, "dense")
    assert np.allclose(scores, q @ passages.T, atol=1e-5)
    assert list(np.argmax(scores, axis=1)) == [1, 2]
    # English is not centred: the plain cosine of the whole variable text, as before
    en = svident.VariableIndex(VARIABLES, "en")
    assert not en.centred
    assert np.allclose(en.scores(sents, "dense"),
                       embed.embed(sents) @ embed.embed([v.text() for v in VARIABLES]).T)


def test_passage_text_falls_back_to_the_whole_text():
    v = svident.Variable("v9", answers="Ja; Nein", topic="Politik")
    assert svident_dense.passage_text(v) == v.text()
    assert svident_dense.passage_text(VARIABLES[0]) == (
        "Haushaltsnettoeinkommen Wie hoch ist das monatliche Nettoeinkommen Ihres Haushalts?")


def _centred(v, mean):
    v = v - mean
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_the_e5_modes_german_dense_retriever_joins_both_encoders():
    # the documented choice (round 5): German in the e5 mode, 0.625 e5 + 0.375 usem3
    assert svident_dense.JOINT == {"e5": {"de": {"e5": 0.625, "usem3": 0.375}}}
    assert svident_dense.encoders("e5", "de") == {"e5": 0.625, "usem3": 0.375}
    assert svident_dense.encoders("e5", "en") == {"e5": 1.0}
    assert svident_dense.encoders("usem3", "de") == {"usem3": 1.0}
    index = svident.VariableIndex(VARIABLES, "de", encoder="e5")
    sents = ["Das Vertrauen in die Regierung ist gesunken.", "Wie groß ist Ihr Wohnort?"]
    passages = [f"{v.label} {v.question}" for v in VARIABLES]
    # the cosines of each encoder's centred vectors, computed by hand
    cos = {}
    for name in ("e5", "usem3"):
        p = embed.e5(passages, "passage") if name == "e5" else embed.embed(passages)
        q = embed.e5(sents, "query") if name == "e5" else embed.embed(sents)
        cos[name] = _centred(q, svident_dense.query_mean(name)) @ _centred(p, p.mean(axis=0)).T
    scores = index.scores(sents, "dense")
    assert np.allclose(scores, 0.625 * cos["e5"] + 0.375 * cos["usem3"], atol=1e-5)
    assert index.vectors.shape == (3, embed.E5_DIM + 512)
    assert np.allclose(np.linalg.norm(index.vectors, axis=1), 1.0, atol=1e-5)
    assert list(np.argmax(scores, axis=1)) == [1, 2]
    # the fusion fuses that same dense retriever
    fused = index.scores(sents, "fusion")
    hand = sum(w * _mm(scores if n == "dense" else index.part_scores(n, sents))
               for n, w in index.fused.items())
    assert np.allclose(fused, hand)
    # English in the e5 mode: e5 alone, centred
    en = svident.VariableIndex(VARIABLES, "en", encoder="e5")
    assert en.vectors.shape == (3, embed.E5_DIM)
    assert np.allclose(en.scores(sents, "dense"), cos["e5"], atol=1e-5)


def _mm(s):
    lo, hi = s.min(axis=1, keepdims=True), s.max(axis=1, keepdims=True)
    return np.where(hi > lo, (s - lo) / np.where(hi > lo, hi - lo, 1), 0.0)
