"""The label-free per-document calibration of bench/svident_finetune.py
(bench/svident_calib.py): per document, its top q share of sentences is positive."""
import importlib.util
from pathlib import Path

import numpy as np

_SPEC = importlib.util.spec_from_file_location(
    "svident_calib", Path(__file__).parents[2] / "bench" / "svident_calib.py")
svident_calib = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(svident_calib)
top_share = svident_calib.top_share


def test_each_document_gets_its_own_top_share():
    scores = np.array([0.1, 5.0, -3.0, 2.0, -9.0, -8.0, -7.0, -6.0, -5.0, -4.0])
    docs = np.array(["a"] * 4 + ["b"] * 6)
    pred = top_share(scores, docs, 0.5)
    # a: 2 of 4 (scores 5.0 and 2.0); b: 3 of 6 (the three highest, all negative)
    assert pred.tolist() == [0, 1, 0, 1, 0, 0, 0, 1, 1, 1]


def test_a_shift_or_scale_within_a_document_changes_nothing():
    rng = np.random.default_rng(1)
    scores, docs = rng.normal(size=60), np.repeat(["x", "y", "z"], 20)
    moved = scores.copy()
    moved[docs == "y"] = 3 * moved[docs == "y"] - 40       # a miscalibrated document
    assert (top_share(scores, docs, 0.3) == top_share(moved, docs, 0.3)).all()
    assert top_share(moved, docs, 0.3).sum() == 3 * 6
    # whereas a fixed threshold marks none of that document
    assert (moved[docs == "y"] >= 0).sum() == 0


def test_rounding_ties_and_the_extremes():
    docs = np.array(["d"] * 5)
    assert top_share(np.arange(5.0), docs, 0.0).sum() == 0
    assert top_share(np.arange(5.0), docs, 1.0).sum() == 5
    assert top_share(np.arange(5.0), docs, 0.35).tolist() == [0, 0, 0, 1, 1]   # round(1.75)
    assert top_share(np.zeros(5), docs, 0.4).tolist() == [1, 1, 0, 0, 0]      # input order


def test_auc_by_language_is_per_language_and_masked():
    y = np.array([0, 1, 0, 1, 1, 0, 0, 1])
    s = np.array([0.1, 0.9, 0.2, 0.8, 0.1, 0.9, 0.5, 0.5])
    lang = np.array(["en"] * 4 + ["de"] * 4)
    auc = svident_calib.auc_by_language(y, s, lang, np.ones(8, bool))
    assert auc == {"en": 1.0, "de": 0.125}
    only_ones = svident_calib.auc_by_language(y, s, lang, y == 1)
    assert only_ones == {"en": None, "de": None}
