"""Classification metrics over label arrays, with scikit-learn's semantics.

Conventions (also reported by the scorers):

* the label set is the sorted union of labels in ``y_true`` and ``y_pred``
  unless ``labels`` is given;
* a ratio whose denominator is 0 is 0, and the metric name is returned in
  ``zero_division`` so callers can warn;
* F1 is ``2·tp / (2·tp + fp + fn)`` (equal to 2PR/(P+R) where defined).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def safe_div(num, den):
    """Elementwise num/den with 0 where den == 0."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def prf_from_counts(tp, fp, fn):
    """Precision, recall, F1 from (arrays of) true/false positive/negative counts:
    tp / (tp + fp), tp / (tp + fn), 2 tp / (2 tp + fp + fn); 0 where undefined.

    >>> [round(float(x), 4) for x in prf_from_counts(3, 1, 2)]
    [0.75, 0.6, 0.6667]
    """
    tp, fp, fn = (np.asarray(x, dtype=float) for x in (tp, fp, fn))
    return safe_div(tp, tp + fp), safe_div(tp, tp + fn), safe_div(2 * tp, 2 * tp + fp + fn)


def encode_labels(y_true, y_pred, labels=None):
    """Map labels to codes 0..L-1; returns (labels, true_codes, pred_codes)."""
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred differ in length: {y_true.shape} vs {y_pred.shape}")
    if labels is None:
        labels = np.unique(np.concatenate([y_true, y_pred]))
    labels = np.asarray(labels)
    index = {v: i for i, v in enumerate(labels.tolist())}
    t = np.fromiter((index.get(v, -1) for v in y_true.tolist()), dtype=np.int64, count=y_true.size)
    p = np.fromiter((index.get(v, -1) for v in y_pred.tolist()), dtype=np.int64, count=y_pred.size)
    return labels, t, p


def confusion_matrix(true_codes, pred_codes, n_labels: int) -> np.ndarray:
    """C[i, j] = number of items with true code i predicted as j (codes < 0 dropped)."""
    t = np.asarray(true_codes)
    p = np.asarray(pred_codes)
    keep = (t >= 0) & (p >= 0)
    return np.bincount(t[keep] * n_labels + p[keep], minlength=n_labels * n_labels
                       ).reshape(n_labels, n_labels)


@dataclass
class ClassificationReport:
    labels: np.ndarray
    confusion: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    support: np.ndarray
    accuracy: float
    averages: dict[str, dict[str, float]]
    zero_division: list[str] = field(default_factory=list)


def classification_report(y_true, y_pred, labels=None) -> ClassificationReport:
    """Per-class and averaged precision/recall/F1, accuracy and the confusion matrix."""
    labels, t, p = encode_labels(y_true, y_pred, labels)
    L = len(labels)
    cm = confusion_matrix(t, p, L)
    tp = np.diag(cm).astype(float)
    pred_pos = cm.sum(axis=0).astype(float)
    support = cm.sum(axis=1).astype(float)
    fp = pred_pos - tp
    fn = support - tp
    precision, recall, f1 = prf_from_counts(tp, fp, fn)
    zero = []
    if np.any(pred_pos == 0):
        zero.append("precision")
    if np.any(support == 0):
        zero.append("recall")
    n = t.size
    micro_p, micro_r, micro_f = (float(x) for x in prf_from_counts(tp.sum(), fp.sum(), fn.sum()))
    total_support = support.sum()
    weights = safe_div(support, total_support)
    averages = {
        "micro": {"precision": micro_p, "recall": micro_r, "f1": micro_f},
        "macro": {"precision": _mean(precision), "recall": _mean(recall), "f1": _mean(f1)},
        "weighted": {"precision": float(np.dot(weights, precision)),
                     "recall": float(np.dot(weights, recall)),
                     "f1": float(np.dot(weights, f1))},
    }
    accuracy = float(safe_div(np.sum(t == p), n)) if n else 0.0
    return ClassificationReport(labels, cm, precision, recall, f1, support.astype(int),
                                accuracy, averages, zero)


def _mean(x: np.ndarray) -> float:
    return float(x.mean()) if x.size else 0.0


def macro_prf(y_true, y_pred, labels=None) -> tuple[float, float, float]:
    """Macro-averaged (precision, recall, F1), as sklearn's ``average='macro'``."""
    r = classification_report(y_true, y_pred, labels)
    m = r.averages["macro"]
    return m["precision"], m["recall"], m["f1"]


def best_f1_threshold(scores, positive, n_positive: int | None = None,
                      plateau: float = 0.0) -> tuple[float, float]:
    """The threshold ``t`` maximizing F1 of the decisions ``scores >= t``, and that F1.

    Tied scores are decided together, so the F1 returned is the F1 of applying ``t``.
    ``n_positive`` counts all positives, including ones without a score (default: those
    in ``positive``). With ``plateau`` > 0 the threshold is the median of those whose F1
    is within ``plateau`` of the best, which moves less between runs than the argmax.
    Needs at least one score; F1 is 0 when there are no positives."""
    s = np.asarray(scores, dtype=float)
    r = np.asarray(positive, dtype=bool)
    n_pos = int(r.sum()) if n_positive is None else int(n_positive)
    order = np.argsort(-s, kind="stable")
    s, tp = s[order], np.cumsum(r[order])
    ends = np.r_[np.flatnonzero(np.diff(s)), len(s) - 1]      # the last of each tie group
    f1 = 2 * tp[ends] / (ends + 1 + n_pos)
    i = int(np.argmax(f1))
    if plateau > 0:
        near = np.flatnonzero(f1 >= f1[i] - plateau)
        i = int(near[len(near) // 2])
    return float(s[ends[i]]), float(f1[i])
