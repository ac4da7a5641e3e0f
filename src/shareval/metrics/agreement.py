"""Inter-annotator agreement on nominal labels.

Input is a reliability matrix: one row per annotator, one column per item,
integer label codes with ``-1`` for a missing judgment.
"""
from __future__ import annotations

import numpy as np

MISSING = -1


def _codes(matrix) -> tuple[np.ndarray, int]:
    m = np.asarray(matrix, dtype=np.int64)
    if m.ndim != 2:
        raise ValueError("expected a 2-d matrix: annotators x items")
    n_labels = int(m.max()) + 1 if m.size and m.max() >= 0 else 0
    return m, n_labels


def cohen_kappa(a, b) -> float:
    """Cohen's kappa between two annotators over the items both labelled.

    NaN when chance agreement is 1 (both used one and the same label) or no
    item was labelled by both: kappa is undefined there (as in scikit-learn).

    Observed agreement 3/4, chance agreement 1/2: (3/4 - 1/2) / (1 - 1/2)

    >>> cohen_kappa([0, 0, 1, 1], [0, 1, 1, 1])
    0.5
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    keep = (a != MISSING) & (b != MISSING)
    a, b = a[keep], b[keep]
    if a.size == 0:
        return float("nan")
    L = int(max(a.max(), b.max())) + 1
    cm = np.bincount(a * L + b, minlength=L * L).reshape(L, L).astype(float)
    n = cm.sum()
    po = np.trace(cm) / n
    pe = float(cm.sum(axis=1) @ cm.sum(axis=0)) / (n * n)
    if pe == 1.0:
        return float("nan")
    return float((po - pe) / (1.0 - pe))


def fleiss_kappa(matrix) -> float:
    """Fleiss' kappa; every item must have the same number (>= 2) of judgments."""
    m, L = _codes(matrix)
    counts = _category_counts(m, L)               # items x labels
    per_item = counts.sum(axis=1)
    if per_item.size == 0:
        return float("nan")
    n = per_item[0]
    if n < 2 or np.any(per_item != n):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of judgments per item")
    N = counts.shape[0]
    p_j = counts.sum(axis=0) / (N * n)
    P_i = (np.sum(counts * counts, axis=1) - n) / (n * (n - 1))
    P_bar = P_i.mean()
    P_e = float(np.sum(p_j * p_j))
    if P_e == 1.0:
        return float("nan")
    return float((P_bar - P_e) / (1.0 - P_e))


def krippendorff_alpha_nominal(matrix) -> float:
    """Krippendorff's alpha for nominal data with missing values.

    Items with fewer than two judgments are not pairable and are dropped
    (Krippendorff 2011). NaN when no item is pairable or when only one label
    value occurs (expected disagreement 0).
    """
    m, L = _codes(matrix)
    counts = _category_counts(m, L)
    m_u = counts.sum(axis=1)
    counts = counts[m_u >= 2]
    m_u = m_u[m_u >= 2]
    if counts.size == 0:
        return float("nan")
    # coincidence matrix o_ck = sum_u n_uc * n_uk / (m_u - 1) (minus the diagonal self-pairs)
    w = 1.0 / (m_u - 1.0)
    o = (counts * w[:, None]).T @ counts
    o[np.diag_indices_from(o)] -= (counts * w[:, None]).sum(axis=0)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    d_o = n - np.trace(o)
    d_e = (n * n - np.sum(n_c * n_c)) / (n - 1.0)
    if d_e == 0:
        return float("nan")
    return float(1.0 - d_o / d_e)


def _category_counts(m: np.ndarray, n_labels: int) -> np.ndarray:
    """items x labels counts of judgments (missing ignored)."""
    items = np.broadcast_to(np.arange(m.shape[1]), m.shape)
    keep = m != MISSING
    flat = items[keep] * n_labels + m[keep]
    return np.bincount(flat, minlength=m.shape[1] * n_labels).reshape(m.shape[1], n_labels
                                                                       ).astype(float)


def pairwise_cohen(matrix) -> dict[tuple[int, int], float]:
    """Cohen's kappa for every pair of annotators (row indices)."""
    m, _ = _codes(matrix)
    out = {}
    for i in range(m.shape[0]):
        for j in range(i + 1, m.shape[0]):
            out[(i, j)] = cohen_kappa(m[i], m[j])
    return out


def observed_agreement(matrix) -> float:
    """Share of agreeing pairs among all pairable judgment pairs."""
    m, L = _codes(matrix)
    counts = _category_counts(m, L)
    m_u = counts.sum(axis=1)
    pairs = m_u * (m_u - 1)
    agree = np.sum(counts * (counts - 1), axis=1)
    total = pairs.sum()
    return float(agree.sum() / total) if total else float("nan")
