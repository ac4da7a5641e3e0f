"""Detection metrics of the MATERIAL evaluation plan: AQWV and its variants,
MQWV, per-query oracle QWV, DET points and ROC AUC.

Inputs are flat arrays over (query, document) pairs: query code, reference
relevance, system hard decision and confidence. The number of documents per
query (``n_total``) comes from the collection, so a pair never listed is a
non-relevant, not-retrieved document.

All query-weighted values share one form. For a set of retrieved pairs,

    QWV = 1 - M + sum over retrieved pairs of g,
    g = w_miss(q) if the pair is relevant, else -beta * w_fa(q),

where M is P_miss when nothing is retrieved, and the weights depend on the
variant (plan section 2.1 and 8.3.1):

* ``all``: Eq. 2 over all queries; a query without relevant documents has
  P_miss = 0 (and P_FA = 0 when it retrieves nothing). M = R/Q,
  w_miss = 1/(Q·N_rel), w_fa = 1/(Q·N_nonrel).
* ``with_relevant``: Eq. 2 over the R queries that have relevant documents.
  M = 1, w_miss = 1/(R·N_rel), w_fa = 1/(R·N_nonrel), other queries weight 0.
* ``primary`` (Eq. 3): P_miss averaged over queries with relevant documents,
  P_FA over all queries. M = 1, w_miss = 1/(R·N_rel), w_fa = 1/(Q·N_nonrel).

With that form, the best global threshold (MQWV) is the best prefix of all
pairs sorted by confidence, and the per-query oracle picks the best prefix of
each query independently.

``document_weighted_value`` is the plan's document-weighted AQWV (footnotes 5
and 25, "Actual Document Weighted Value"): every (query, document) pair
counts once instead of every query, so P_miss and P_FA are pooled over all
queries before Eq. 1 is applied.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

VARIANTS = ("all", "with_relevant", "primary")
GRID = 100_000      # plan 7.4: at most 5 decimals, so confidences are multiples of 1e-5


def grid_ticks(conf: np.ndarray) -> np.ndarray | None:
    """Confidences as integer multiples of 1e-5 when they all are; else None.

    On the grid, ``grid_statistics`` replaces sorts by counting passes.
    """
    if conf.size == 0:
        return None
    t = np.rint(conf * GRID)
    if t.min() < 0 or t.max() > GRID or not np.array_equal(t / GRID, conf):
        return None
    return t.astype(np.int64)


@dataclass
class Weights:
    M: float
    w_miss: np.ndarray          # per query
    w_fa: np.ndarray            # per query
    n_queries: int              # queries entering the averages


def variant_weights(n_rel: np.ndarray, n_total: np.ndarray, variant: str) -> Weights:
    """Weights of one AQWV variant from per-query relevant and total counts."""
    n_rel = np.asarray(n_rel, dtype=float)
    n_nonrel = np.asarray(n_total, dtype=float) - n_rel
    Q = n_rel.size
    has_rel = n_rel > 0
    R = int(has_rel.sum())
    inv_rel = np.divide(1.0, n_rel, out=np.zeros_like(n_rel), where=has_rel)
    inv_nonrel = np.divide(1.0, n_nonrel, out=np.zeros_like(n_nonrel), where=n_nonrel > 0)
    if variant == "all":
        return Weights(R / Q if Q else 0.0, inv_rel / max(Q, 1), inv_nonrel / max(Q, 1), Q)
    if variant == "with_relevant":
        return Weights(1.0 if R else 0.0, inv_rel / max(R, 1),
                       np.where(has_rel, inv_nonrel, 0.0) / max(R, 1), R)
    if variant == "primary":
        return Weights(1.0 if R else 0.0, inv_rel / max(R, 1), inv_nonrel / max(Q, 1), Q)
    raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")


def pair_gains(q, relevant, weights: Weights, beta: float) -> np.ndarray:
    """g of each (query, document) pair."""
    relevant = np.asarray(relevant, dtype=bool)
    return np.where(relevant, weights.w_miss[q], -beta * weights.w_fa[q])


def per_query_counts(q, relevant, decision, n_queries: int):
    """(hits, false alarms) per query from the hard decisions."""
    relevant = np.asarray(relevant, dtype=bool)
    decision = np.asarray(decision, dtype=bool)
    hits = np.bincount(q, weights=relevant & decision, minlength=n_queries)
    fas = np.bincount(q, weights=~relevant & decision, minlength=n_queries)
    return hits, fas


def query_values(n_rel, n_total, hits, fas, beta: float):
    """Per-query P_miss, P_FA and QV (Eq. 1); P_miss = 0 without relevant documents."""
    n_rel = np.asarray(n_rel, dtype=float)
    n_nonrel = np.asarray(n_total, dtype=float) - n_rel
    p_miss = np.divide(n_rel - hits, n_rel, out=np.zeros_like(n_rel), where=n_rel > 0)
    p_fa = np.divide(fas, n_nonrel, out=np.zeros_like(n_nonrel), where=n_nonrel > 0)
    return p_miss, p_fa, 1.0 - (p_miss + beta * p_fa)


def document_weighted_value(n_rel, n_total, hits, fas, beta: float) -> float:
    """Actual Document Weighted Value: 1 - (P_miss + beta P_FA) with

        P_miss = sum_q (N_rel - hits) / sum_q N_rel,
        P_FA = sum_q false alarms / sum_q (N_total - N_rel).

    ``hits`` and ``fas`` may be fractional (E2E credit). NaN when no query has a
    relevant document (P_miss is undefined, as for the primary AQWV); P_FA = 0
    when there is no non-relevant pair.

    >>> document_weighted_value([2, 0, 1], [6, 6, 6], [1, 0, 0], [1, 0, 0], 20.0)
    -1.0
    """
    n_rel = np.asarray(n_rel, dtype=float)
    n_nonrel = np.asarray(n_total, dtype=float) - n_rel
    hits = np.asarray(hits, dtype=float)
    fas = np.asarray(fas, dtype=float)
    if not (n_rel.shape == n_nonrel.shape == hits.shape == fas.shape):
        raise ValueError("n_rel, n_total, hits and fas must have the same length")
    rel, nonrel = n_rel.sum(), n_nonrel.sum()
    if rel <= 0:
        return float("nan")
    p_miss = (rel - hits.sum()) / rel
    p_fa = fas.sum() / nonrel if nonrel > 0 else 0.0
    return float(1.0 - (p_miss + beta * p_fa))


def aqwv(q, relevant, decision, n_rel, n_total, beta: float, variant: str = "primary") -> float:
    """AQWV of one variant at the system's hard decisions."""
    w = variant_weights(n_rel, n_total, variant)
    g = pair_gains(q, relevant, w, beta)
    return float(1.0 - w.M + g[np.asarray(decision, dtype=bool)].sum())


def _threshold_groups(conf_sorted: np.ndarray) -> np.ndarray:
    """Index of the last pair of each run of equal confidence (sorted descending)."""
    return np.flatnonzero(np.append(conf_sorted[1:] != conf_sorted[:-1], True))


@dataclass
class Sweep:
    """QWV, P_miss and P_FA for 'retrieve pairs with confidence >= t', per distinct t.

    Index 0 is 'retrieve nothing' (threshold +inf).
    """
    thresholds: np.ndarray
    qwv: np.ndarray
    p_miss: np.ndarray
    p_fa: np.ndarray

    def best(self) -> tuple[float, float]:
        i = int(np.argmax(self.qwv))
        return float(self.qwv[i]), float(self.thresholds[i])


def sweep(q, relevant, conf, n_rel, n_total, beta: float, variant: str = "primary") -> Sweep:
    """Global threshold sweep (MQWV, DET curve) in one sort."""
    w = variant_weights(n_rel, n_total, variant)
    relevant = np.asarray(relevant, dtype=bool)
    conf = np.asarray(conf, dtype=float)
    q = np.asarray(q)
    order = np.argsort(-conf, kind="stable")
    c = conf[order]
    qs = q[order]
    rel = relevant[order]
    miss_gain = np.cumsum(np.where(rel, w.w_miss[qs], 0.0))
    fa_cost = np.cumsum(np.where(rel, 0.0, w.w_fa[qs]))
    last = _threshold_groups(c) if c.size else np.zeros(0, dtype=int)
    p_miss = np.concatenate(([w.M], w.M - miss_gain[last]))
    p_fa = np.concatenate(([0.0], fa_cost[last]))
    thresholds = np.concatenate(([np.inf], c[last]))
    return Sweep(thresholds, 1.0 - (p_miss + beta * p_fa), p_miss, p_fa)


def oracle_qwv(q, relevant, conf, n_rel, n_total, beta: float, variant: str = "primary") -> float:
    """QWV with the best threshold chosen for each query separately."""
    w = variant_weights(n_rel, n_total, variant)
    q = np.asarray(q)
    conf = np.asarray(conf, dtype=float)
    if q.size == 0:
        return float(1.0 - w.M)
    g = pair_gains(q, relevant, w, beta)
    order = np.lexsort((-conf, q))
    qs, cs, gs = q[order], conf[order], g[order]
    cum = np.cumsum(gs)
    # cumulative gain within each query: subtract what came before its first pair
    start = np.flatnonzero(np.concatenate(([True], qs[1:] != qs[:-1])))
    offset = np.zeros(int(q.max()) + 1)
    offset[qs[start]] = cum[start] - gs[start]
    within = cum - offset[qs]
    ends = np.flatnonzero(np.append((qs[1:] != qs[:-1]) | (cs[1:] != cs[:-1]), True))
    best = np.zeros(int(q.max()) + 1)
    np.maximum.at(best, qs[ends], within[ends])
    return float(1.0 - w.M + best.sum())


def roc_auc(labels, scores) -> float:
    """Area under the ROC curve (Mann-Whitney U, ties count half); NaN with one class."""
    labels = np.asarray(labels, dtype=bool)
    scores = np.asarray(scores, dtype=float)
    n_pos = int(labels.sum())
    n_neg = labels.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(scores, kind="stable")
    s = scores[order]
    ranks = np.empty(s.size)
    # average ranks (1-based) over ties
    bounds = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1], [True])))
    for_each = np.repeat((bounds[:-1] + bounds[1:] + 1) / 2.0, np.diff(bounds))
    ranks[order] = for_each
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def variants_from_query_values(p_miss, p_fa, has_relevant, beta: float) -> dict[str, float]:
    """The three AQWV variants from per-query P_miss and P_FA (plan 2.1, 8.3.1).

    A variant with no query to average over is NaN.
    """
    p_miss = np.asarray(p_miss, dtype=float)
    p_fa = np.asarray(p_fa, dtype=float)
    rel = np.asarray(has_relevant, dtype=bool)
    qv = 1.0 - (p_miss + beta * p_fa)
    nan = float("nan")
    return {
        "all": float(qv.mean()) if qv.size else nan,
        "with_relevant": float(qv[rel].mean()) if rel.any() else nan,
        "primary": float(1.0 - (p_miss[rel].mean() + beta * p_fa.mean())) if rel.any() else nan,
    }


@dataclass
class GridStatistics:
    sweep: Sweep
    oracle_qwv: float
    roc_auc: float


def grid_statistics(relevant: np.ndarray, ticks: np.ndarray, n_total: np.ndarray, beta: float,
                    variant: str = "primary", chunk: int = 16) -> GridStatistics:
    """Sweep, per-query oracle and pooled AUC from a queries x documents layout.

    ``relevant`` (bool) and ``ticks`` (confidence in units of 1e-5) have one row
    per query and one column per scored document. The sweep and the AUC are
    weighted counts per tick over all pairs; the oracle needs each query's best
    prefix, taken from each query's gains summed per tick it uses (``_block_sums``,
    a few queries at a time). Equal to ``sweep``, ``oracle_qwv`` and ``roc_auc``
    on the flattened pairs.
    """
    relevant = np.asarray(relevant, dtype=bool)
    ticks = np.asarray(ticks)
    n_q = relevant.shape[0]
    w = variant_weights(relevant.sum(axis=1), n_total, variant)
    width = GRID + 1
    # relevant pairs are few: miss weights and positives come from them alone
    rq, rd = np.nonzero(relevant)
    t_rel = ticks[rq, rd]
    miss = np.bincount(t_rel, weights=w.w_miss[rq], minlength=width)
    pos = np.bincount(t_rel, minlength=width).astype(float)
    def block(a: int):
        """Column sums of gains and the queries' best prefixes, for queries a..a+chunk."""
        b = min(n_q, a + chunk)
        return _block_sums(relevant[a:b], ticks[a:b], w.w_miss[a:b], -beta * w.w_fa[a:b])

    # numpy releases the GIL in these kernels: two threads use both cores; results
    # are combined in block order, so the sums do not depend on scheduling
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(2) as pool:
        blocks = list(pool.map(block, range(0, n_q, chunk)))
    total_gain = np.zeros(width)                 # sum of gains per tick, all queries
    best = 0.0
    pairs = np.zeros(width, dtype=np.int64)      # pairs per tick, all queries
    for column_sums, block_best, block_pairs in blocks:
        total_gain += column_sums
        best += block_best
        pairs += block_pairs
    neg = pairs - pos
    if beta:
        fa = (miss - total_gain) / beta          # gain = w_miss on relevant, -beta w_fa otherwise
    else:
        fa = np.bincount(ticks.ravel(), weights=np.broadcast_to(w.w_fa[:, None], ticks.shape)
                         .ravel() * ~relevant.ravel(), minlength=width)
    levels = np.flatnonzero(pos + neg)[::-1]
    p_miss = np.concatenate(([w.M], w.M - np.cumsum(miss[::-1])[::-1][levels]))
    p_fa = np.concatenate(([0.0], np.cumsum(fa[::-1])[::-1][levels]))
    sweep_ = Sweep(np.concatenate(([np.inf], levels / GRID)), 1.0 - (p_miss + beta * p_fa),
                   p_miss, p_fa)
    n_pos, n_neg = pos.sum(), neg.sum()
    auc = float(np.sum(pos * (np.cumsum(neg) - neg + 0.5 * neg)) / (n_pos * n_neg)) \
        if n_pos and n_neg else float("nan")
    return GridStatistics(sweep_, float(1.0 - w.M + best), auc)


def _block_sums(relevant: np.ndarray, ticks: np.ndarray, w_miss: np.ndarray,
                w_fa_cost: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """For a few queries (rows): gains summed per tick over the rows, the sum of
    the rows' best prefixes (highest tick first, at least 0) and pairs per tick, each
    float summed in the order of a dense (row, tick) table (``detection_blocks``)."""
    rows, n_d = ticks.shape
    width = GRID + 1
    if rows == 0 or n_d == 0:
        return np.zeros(width), 0.0, np.zeros(width, dtype=np.int64)
    from .detection_blocks import block_sums
    column, best, count = block_sums(
        np.ascontiguousarray(relevant, dtype=bool), np.ascontiguousarray(ticks),
        np.ascontiguousarray(w_miss, dtype=np.float64),
        np.ascontiguousarray(w_fa_cost, dtype=np.float64), width)
    return column, float(best.sum()), count
