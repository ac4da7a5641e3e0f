"""SV-Ident disambiguation rules where a broken rule changes the score: a sentence
without a prediction counts 0 in its unit's mean (never dropped), units are averaged
per language first."""
import json

import pytest

from shareval.tasks import get
from tests.conftest import write
from tests.tasks.test_svident import reference


def test_sentence_without_prediction_scores_zero_in_its_unit(tmp_path):
    rows = [["s", "1", "a", "R", "d1", "u1", "en"],
            ["s", "1", "b", "R", "d1", "u2", "en"],
            ["s", "1", "c", "R", "d1", "u3", "en"],
            ["s", "1", "a", "R", "g1", "u4", "de"]]
    ref = reference(tmp_path, rows)
    # u1 perfect, u2 at rank 2, u3 without any prediction, u4 perfect
    sub = write(tmp_path / "sub.json", json.dumps({"u1": ["a"], "u2": ["x", "b"], "u4": ["a"]}))
    r = get("svident-disambiguation").score(ref, sub)
    d1 = (1 + 0.5 + 0) / 3                      # dropping u3 would give 0.75
    assert r.breakdowns["per_document"]["d1"]["map@10"] == pytest.approx(d1)
    assert r.metrics["map@10"] == pytest.approx((d1 + 1.0) / 2)
    assert r.metrics["map@1"] == pytest.approx((1 / 3 + 1.0) / 2)
    assert r.counts["sentences_without_prediction"] == 1
    assert r.counts["sentences_evaluated"] == 4
    assert any("1 evaluated sentences have no prediction (scored 0)" in w and "u3" in w
               for w in r.warnings)
