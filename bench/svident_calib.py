"""Label-free per-document calibration for SV-Ident detection scores (no torch needed).

Used by ``bench/svident_finetune.py``; tested by ``tests/systems/test_svident_calib.py``.
The record: docs/dev/systems-experiments-round6-detection.md.
"""
from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score


def top_share(scores: np.ndarray, docs: np.ndarray, q: float) -> np.ndarray:
    """Per document, 1 for its ``round(q * n)`` highest-scoring sentences (n: the
    document's sentence count), 0 for the others; equal scores keep input order.

    No label is read: ``q`` comes from elsewhere (the training folds' positive share),
    so a test document's prediction depends only on the order of its own scores."""
    scores, docs = np.asarray(scores, float), np.asarray(docs)
    pred = np.zeros(len(scores), int)
    for doc in np.unique(docs):
        idx = np.flatnonzero(docs == doc)
        k = int(round(q * len(idx)))
        if k > 0:
            pred[idx[np.argsort(-scores[idx], kind="stable")[:k]]] = 1
    return pred


def auc_by_language(y, scores, lang, mask, langs=("en", "de")) -> dict:
    """Threshold-free ROC AUC of ``scores`` over the masked sentences, per language."""
    y, scores, lang = np.asarray(y), np.asarray(scores), np.asarray(lang)
    out = {}
    for la in langs:
        m = mask & (lang == la)
        out[la] = round(float(roc_auc_score(y[m], scores[m])), 4) \
            if len(set(y[m])) == 2 else None
    return out
