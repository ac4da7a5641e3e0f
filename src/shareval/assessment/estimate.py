"""Precision, recall and F1 of each submission from sampled judgments.

Two estimators of precision, both unbiased under their design:

* ``design`` (default): the Hajek ratio sum(y / pi) / sum(1 / pi) over the
  judged items the submission contains, pi being each item's inclusion
  probability (``assess sample``: uniform or joint design).
* ``importance``: Chaganty et al. (2017): the draws from each submission j
  (n_j of them, from p_j uniform on X_j) are pooled through a mixture
  q_i = sum_j w_ij p_j per target i; P_i = sum_j w_ij mean_j(p_i / q_i * y).
  ``weights`` picks w_ij (metrics.estimation.importance_weights):
  ``heuristic`` (default, the paper's), ``size`` (n_j / n) or ``uniform``.
  Needs the drawn_by column, output sizes and, for ``heuristic``, overlaps.

Entity-level precision is P_e = P^r P^s P^o (spec 002): the product of the
precisions of the ``relation``, ``subject`` and ``object`` questions.
Recall is the share of the true items of the exhaustively annotated
documents (``drawn_for = recall``: pool items judged, plus items annotators
added) that the submission output (spec 002, R_m). With ``importance``,
recall is also given as pool recall times the submission's importance-
weighted share of the correct pool (Chaganty et al.): |X_i| P_i over the
pool's correct total, estimated with weights ~ n_j (what the heuristic gives
for a target uniform on the pool; ``uniform`` keeps equal weights).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import t as student_t

from ..metrics.estimation import (WEIGHTINGS, effective_size, importance_weights,
                                  mixture_importance, percentile_interval, weighted_proportion,
                                  wilson_interval)
from .judgments import Judgments

ENTITY_QUESTIONS = ("relation", "subject", "object")


@dataclass
class Unit:
    item: str
    doc: str
    submissions: tuple[str, ...]
    inclusion: float
    drawn_for: str
    drawn_by: tuple[str, ...]
    answers: dict[str, dict[str, float]] = field(default_factory=dict)  # question -> judge -> v

    _correct: float | None = None

    def correct(self) -> float:
        """Mean over judges; a judge says correct when every question they answered is yes."""
        if self._correct is None:
            if "correct" in self.answers:
                votes = self.answers["correct"]
            else:
                votes = {}
                for answers in self.answers.values():
                    for j, v in answers.items():
                        votes[j] = votes.get(j, 1.0) * v
            self._correct = sum(votes.values()) / len(votes)
        return self._correct

    def question(self, q: str) -> float | None:
        v = self.answers.get(q)
        return sum(v.values()) / len(v) if v else None


def units_of(j: Judgments) -> list[Unit]:
    units: dict[tuple, Unit] = {}
    for r in j.records:
        key = (r.drawn_for, r.item, r.submissions, r.inclusion, r.drawn_by)
        u = units.get(key)
        if u is None:
            u = units[key] = Unit(r.item, r.doc, r.submissions, r.inclusion, r.drawn_for,
                                  r.drawn_by)
        u.answers.setdefault(r.question, {})[r.judge or f"line {r.line}"] = r.answer
    return list(units.values())


def _ci(prefix: str, est, lo, hi, boot, conf, out: dict) -> None:
    out[prefix] = est
    out[f"{prefix}_low"], out[f"{prefix}_high"] = lo, hi
    if boot is not None:
        out[f"{prefix}_boot_low"], out[f"{prefix}_boot_high"] = percentile_interval(boot, conf)


def _hajek(y, w):
    return np.sum(y * w, axis=-1) / np.sum(w, axis=-1)


def estimate_all(j: Judgments, method: str = "design", confidence: float = 0.95,
                 bootstrap: int = 1000, seed: int = 0, weights: str = "heuristic"
                 ) -> tuple[dict[str, dict], list[str]]:
    """Per submission: metrics with intervals. Returns (table, warnings).

    ``weights`` chooses the importance estimator's mixture weights (unused by
    ``design``)."""
    if method not in ("design", "importance"):
        raise ValueError("method must be 'design' or 'importance'")
    if weights not in WEIGHTINGS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTINGS)}")
    rng = np.random.default_rng(seed)
    units = units_of(j)
    prec = [u for u in units if u.drawn_for == "precision"]
    rec = [u for u in units if u.drawn_for == "recall"]
    names = sorted({s for u in units for s in u.submissions} | set(j.sizes))
    warnings: list[str] = []
    table: dict[str, dict] = {}
    # recall data, shared by all submissions: true items of the annotated documents
    rdocs = sorted({u.doc for u in rec})
    rdoc_idx = {d: i for i, d in enumerate(rdocs)}
    rt = np.array([u.correct() for u in rec])
    rd = np.array([rdoc_idx[u.doc] for u in rec], dtype=int)
    boot_docs = rng.integers(0, len(rdocs), (bootstrap, len(rdocs))) if rdocs and bootstrap else None
    # a document drawn k times counts k times: per-replicate document multiplicities
    mult = None
    if boot_docs is not None:
        mult = np.zeros((bootstrap, len(rdocs)))
        np.add.at(mult, (np.arange(bootstrap)[:, None], boot_docs), 1)
    if rec:
        in_pool = np.array([bool(u.submissions) for u in rec], dtype=float)
        pool_recall = float(np.sum(rt * in_pool) / np.sum(rt)) if rt.sum() else float("nan")
    imp = _importance_setup(prec, j, weights) if method == "importance" else None

    for s in names:
        row: dict = {}
        mine = [u for u in prec if s in u.submissions]
        y = np.array([u.correct() for u in mine])
        pi = np.array([u.inclusion for u in mine])
        row["judged_items"] = len(mine)
        boot_p = None
        if method == "design":
            est, nlo, nhi = weighted_proportion(y, pi, confidence)
            if mine and bootstrap:
                idx = rng.integers(0, len(mine), (bootstrap, len(mine)))
                boot_p = _hajek(y[idx], 1 / pi[idx])
            # Wilson on Kish's effective n: never zero-width when all answers agree
            lo, hi = _wilson_frac(est, effective_size(1 / pi), confidence) if mine \
                else (float("nan"),) * 2
            _ci("precision", est, lo, hi, boot_p, confidence, row)
            row["precision_normal_low"], row["precision_normal_high"] = nlo, nhi
        else:
            est, lo, hi, boot_p = _importance_precision(imp, s, rng, bootstrap, confidence,
                                                        warnings)
            _ci("precision", est, lo, hi, boot_p, confidence, row)
        # entity-level precision
        qs = [np.array([np.nan if (a := u.question(q)) is None else a for u in mine])
              for q in ENTITY_QUESTIONS]
        if mine and all(np.any(~np.isnan(v)) for v in qs):
            w = 1 / pi
            parts, boots = [], []
            # one item resample for all three questions: they are answered on the same items
            idx = rng.integers(0, len(mine), (bootstrap, len(mine))) if bootstrap else None
            for v in qs:
                ok = ~np.isnan(v)
                parts.append(float(np.sum(v[ok] * w[ok]) / np.sum(w[ok])))
                if idx is not None:
                    vv, ww = v[idx], np.where(np.isnan(v[idx]), 0.0, w[idx])
                    with np.errstate(invalid="ignore", divide="ignore"):
                        boots.append(np.sum(np.nan_to_num(vv) * ww, axis=1) / ww.sum(axis=1))
            pe = float(np.prod(parts))
            for q, p in zip(ENTITY_QUESTIONS, parts):
                row[f"precision_{q}"] = p
            bpe = np.prod(boots, axis=0) if boots else None
            lo, hi = percentile_interval(bpe, confidence) if bpe is not None else (np.nan,) * 2
            row["entity_precision"], row["entity_precision_low"] = pe, lo
            row["entity_precision_high"] = hi
        # recall from the exhaustively annotated documents
        boot_r = None
        if rec and rt.sum() > 0:
            m = np.array([s in u.submissions for u in rec], dtype=float)
            num, den = float(np.sum(rt * m)), float(np.sum(rt))
            r = num / den
            num_doc = np.bincount(rd, rt * m, len(rdocs))
            den_doc = np.bincount(rd, rt, len(rdocs))
            lo, hi = document_ratio_interval(num_doc, den_doc, confidence)
            row["recall_item_low"], row["recall_item_high"] = _wilson_frac(r, den, confidence)
            if mult is not None:
                with np.errstate(invalid="ignore", divide="ignore"):
                    boot_r = (mult @ num_doc) / (mult @ den_doc)
            _ci("recall", r, lo, hi, boot_r, confidence, row)
            if method == "importance":
                _importance_recall(imp, s, pool_recall, row, confidence)
        p, r = row.get("precision", np.nan), row.get("recall", np.nan)
        row["f1"] = 2 * p * r / (p + r) if (p + r) > 0 else (0.0 if p == p and r == r else np.nan)
        if boot_p is not None and boot_r is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                bf = 2 * boot_p * boot_r / (boot_p + boot_r)
            row["f1_low"], row["f1_high"] = percentile_interval(bf, confidence)
        table[s] = row
    if not rec:
        warnings.append("no recall rows (drawn_for = recall): recall and F1 are not estimated")
    return table, warnings


def document_ratio_interval(num, den, confidence: float = 0.95) -> tuple[float, float]:
    """Interval of a ratio sum(num) / sum(den) over sampled documents (recall: true items
    output / true items, per annotated document): the documents, not the items, are
    the sampling unit, and items of one document succeed or fail together.

    Korn and Graubard's (1998) interval for a proportion from a cluster sample: the
    ratio's linearized (delta-method) variance over documents gives an effective
    number of items n* = R(1-R) / var (not capped at the item count: capping widened
    the interval where items are independent, 0.973 coverage), and Wilson's interval
    on n* uses Student's t with D'-1 degrees of freedom for z. Without spread between
    documents (every document the same ratio) n* is the item count. One document
    (or none with a true item): NaN, nothing is known of the spread.

    >>> [round(x, 3) for x in document_ratio_interval([3, 1, 4, 2], [4, 4, 5, 4])]
    [0.238, 0.867]
    """
    num, den = np.asarray(num, float), np.asarray(den, float)
    keep = den > 0
    num, den = num[keep], den[keep]
    d = num.size
    if d < 2:
        return float("nan"), float("nan")
    items = float(den.sum())
    r = float(num.sum()) / items
    resid = num - r * den
    var = float(np.sum(resid ** 2)) / (d - 1) / d / float(np.mean(den)) ** 2
    n_eff = items if var <= 0 else r * (1 - r) / var
    if n_eff <= 0:                   # r is 0 or 1 with spread: as many items as documents
        n_eff = float(d)
    t = float(student_t.ppf(1 - (1 - confidence) / 2, d - 1))
    den_w = 1 + t * t / n_eff
    centre = (r + t * t / (2 * n_eff)) / den_w
    half = t * np.sqrt(r * (1 - r) / n_eff + t * t / (4 * n_eff * n_eff)) / den_w
    return max(0.0, float(centre - half)), min(1.0, float(centre + half))


def _wilson_frac(p: float, n: float, confidence: float) -> tuple[float, float]:
    """Wilson on a (possibly weighted or fractional) proportion with n effective items."""
    if n <= 0 or p != p:
        return float("nan"), float("nan")
    return wilson_interval(p * n, n, confidence)


@dataclass
class _Importance:
    y: np.ndarray              # value of each draw
    stratum: np.ndarray        # index (into names) of the submission whose draw it was
    member: np.ndarray         # draws x names: is the drawn item in that output
    names: list[str]
    sizes: np.ndarray          # |X_j| per name
    counts: np.ndarray         # draws n_j per name
    w: np.ndarray              # names x names: w_ij
    pool_w: np.ndarray         # per name: the weights estimating the correct pool


def _shared(names: list[str], sizes: np.ndarray, j: Judgments, weights: str) -> np.ndarray:
    """|X_a & X_b| from the overlaps line (the diagonal is |X_a|)."""
    m = len(names)
    shared = np.diag(sizes.astype(float))
    if weights != "heuristic" or m < 2:
        return shared
    if j.overlaps is None:
        raise ValueError("heuristic weights need how many items each pair of outputs shares: "
                         "a '# overlaps: A+B=COUNT,...' line (assess sample writes it); or "
                         "choose --weights size")
    for a in range(m):
        for b in range(a + 1, m):
            shared[a, b] = shared[b, a] = j.overlaps.get(tuple(sorted((names[a], names[b]))), 0)
    return shared


def _importance_setup(prec: list[Unit], j: Judgments, weights: str):
    draws = [(u, d) for u in prec for d in u.drawn_by]
    if prec and not draws:
        raise ValueError("the importance estimator needs the drawn_by column (assess sample "
                         "writes it)")
    sizes = j.sizes
    missing = [d for _, d in draws if d not in sizes] + \
        [s for u in prec for s in u.submissions if s not in sizes]
    if missing:
        raise ValueError(f"output sizes missing for {sorted(set(missing))}: add a "
                         f"'# sizes: NAME=COUNT,...' line (assess sample writes it)")
    names = sorted(sizes)
    idx = {s: i for i, s in enumerate(names)}
    size = np.array([sizes[s] for s in names], dtype=float)
    if np.any(size <= 0):
        raise ValueError("every output size on the sizes line must be positive")
    member = np.array([[s in u.submissions for s in names] for u, _ in draws],
                      dtype=float).reshape(len(draws), len(names))
    shared = _shared(names, size, j, weights if draws else "size")
    # items judged in both outputs are a lower bound on what they share
    units = {u.item: u for u, _ in draws}
    both = np.zeros_like(shared)
    for u in units.values():
        k = [idx[s] for s in u.submissions]
        both[np.ix_(k, k)] += 1
    over = np.argwhere(both > shared)
    for a, b in over:
        if a == b:
            raise ValueError(f"the sizes line says {names[a]} has {int(size[a])} items, but "
                             f"{int(both[a, a])} judged items are in it")
    if weights == "heuristic" and over.size:
        a, b = over[0]
        raise ValueError(f"the overlaps line says {names[a]} and {names[b]} share "
                         f"{int(shared[a, b])} items, but {int(both[a, b])} judged items are in "
                         f"both")
    stratum = np.array([idx[d] for _, d in draws], dtype=int)
    counts = np.bincount(stratum, minlength=len(names)).astype(float)
    w = importance_weights(shared, size, counts, weights)
    pool = (counts > 0).astype(float) if weights == "uniform" else counts
    pool_w = pool / pool.sum() if pool.sum() else pool
    y = np.array([u.correct() for u, _ in draws])
    return _Importance(y, stratum, member, names, size, counts, w, pool_w)


def _strata_bootstrap(stratum: np.ndarray, rng, b: int) -> np.ndarray:
    """Replicate index sets resampling each stratum on its own, shape (b, n)."""
    cols = []
    for j in np.unique(stratum):
        where = np.flatnonzero(stratum == j)
        cols.append(where[rng.integers(0, where.size, (b, where.size))])
    return np.concatenate(cols, axis=1)


def _per_draw(imp: _Importance, w_row: np.ndarray, target: np.ndarray):
    """(g, c): g = p_i / q_i * y on draws of weighted strata (0 elsewhere) and
    c = w_ij / n_j, so that the estimate is sum(c * g)."""
    q = imp.member @ (w_row / imp.sizes)
    on = w_row[imp.stratum] > 0
    g = np.zeros_like(imp.y)
    g[on] = target[on] / q[on] * imp.y[on]
    c = w_row[imp.stratum] / imp.counts[imp.stratum]
    return g, c


def _importance_precision(imp: _Importance, s, rng, bootstrap, confidence, warnings):
    if imp is None or imp.y.size == 0 or s not in imp.names:
        return float("nan"), float("nan"), float("nan"), None
    i = imp.names.index(s)
    if imp.counts[i] == 0:
        warnings.append(f"{s}: no draws of its own; items only it output are never seen, so "
                        f"its importance estimate is biased (draw from it: assess sample)")
    if not imp.member[:, i].any():          # no judged item of its own: unknown, not 0
        return float("nan"), float("nan"), float("nan"), None
    w_row = imp.w[i]
    if np.any(np.isnan(w_row)):
        return float("nan"), float("nan"), float("nan"), None
    target = imp.member[:, i] / imp.sizes[i]
    q = imp.member @ (w_row / imp.sizes)
    est, lo, hi, _ = mixture_importance(imp.y, target, np.where(q > 0, q, 1.0), imp.stratum,
                                        confidence, dict(enumerate(w_row)))
    boot = None
    if bootstrap:
        g, c = _per_draw(imp, w_row, target)
        idx = _strata_bootstrap(imp.stratum, rng, bootstrap)
        boot = np.sum((c * g)[idx], axis=1)
    return est, lo, hi, boot


def _importance_recall(imp: _Importance, s, pool_recall: float, row: dict, confidence) -> None:
    """Pool recall x (correct items of s) / (correct items of the pool): the
    numerator is |X_s| P_s, the denominator sum_j w_j mean_j(y / q) with the
    pool weights (q = sum_j w_j p_j covers every drawn output)."""
    if imp is None or imp.y.size == 0 or s not in imp.names:
        return
    i = imp.names.index(s)
    prec = row.get("precision", float("nan"))
    g, c = _per_draw(imp, imp.pool_w, np.ones_like(imp.y))
    pool = float(np.sum(c * g))
    mine = imp.sizes[i] * prec
    row["pool_recall"] = pool_recall
    row["recall_importance"] = pool_recall * mine / pool if pool > 0 else float("nan")
