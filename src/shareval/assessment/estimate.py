"""Precision, recall and F1 of each submission from sampled judgments.

Two estimators of precision, both unbiased under their design:

* ``design`` (default): the Hajek ratio sum(y / pi) / sum(1 / pi) over the
  judged items the submission contains, pi being each item's inclusion
  probability (``assess sample``: uniform or joint design).
* ``importance``: Chaganty et al. (2017): every draw from every
  submission's output is a draw from the mixture q = sum_j n_j/n U(X_j);
  P_i = mean(p_i / q * y) with p_i = 1/|X_i| on X_i. Needs the drawn_by
  column and output sizes.

Entity-level precision is P_e = P^r P^s P^o (spec 002): the product of the
precisions of the ``relation``, ``subject`` and ``object`` questions.
Recall is the share of the true items of the exhaustively annotated
documents (``drawn_for = recall``: pool items judged, plus items annotators
added) that the submission output (spec 002, R_m). With ``importance``,
recall is also given as pool recall times the submission's importance-
weighted share of the correct pool (Chaganty et al.).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..metrics.estimation import (effective_size, mixture_importance, percentile_interval,
                                  weighted_proportion, wilson_interval)
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
                 bootstrap: int = 1000, seed: int = 0) -> tuple[dict[str, dict], list[str]]:
    """Per submission: metrics with intervals. Returns (table, warnings)."""
    if method not in ("design", "importance"):
        raise ValueError("method must be 'design' or 'importance'")
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
    imp = _importance_setup(prec, j.sizes, warnings) if method == "importance" else None

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
            lo, hi = _wilson_frac(r, den, confidence)
            if mult is not None:
                num_d = np.bincount(rd, rt * m, len(rdocs))
                den_d = np.bincount(rd, rt, len(rdocs))
                with np.errstate(invalid="ignore", divide="ignore"):
                    boot_r = (mult @ num_d) / (mult @ den_d)
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


def _wilson_frac(p: float, n: float, confidence: float) -> tuple[float, float]:
    """Wilson on a (possibly weighted or fractional) proportion with n effective items."""
    if n <= 0 or p != p:
        return float("nan"), float("nan")
    return wilson_interval(p * n, n, confidence)


@dataclass
class _Importance:
    y: np.ndarray              # value of each draw
    stratum: np.ndarray        # index of the submission whose draw it was
    q: np.ndarray              # mixture probability of the drawn item
    member: dict[str, np.ndarray]
    sizes: dict[str, int]
    counts: dict[str, int]


def _importance_setup(prec: list[Unit], sizes: dict[str, int], warnings: list[str]):
    draws = [(u, j) for u in prec for j in u.drawn_by]
    if prec and not draws:
        raise ValueError("the importance estimator needs the drawn_by column (assess sample "
                         "writes it)")
    strata = sorted({j for _, j in draws})
    missing = [j for j in strata if j not in sizes] + \
        [s for u in prec for s in u.submissions if s not in sizes]
    if missing:
        raise ValueError(f"output sizes missing for {sorted(set(missing))}: add a "
                         f"'# sizes: NAME=COUNT,...' line (assess sample writes it)")
    n = len(draws)
    counts = {j: sum(1 for _, k in draws if k == j) for j in strata}
    q = np.array([sum(counts[k] / n / sizes[k] for k in u.submissions if k in counts)
                  for u, _ in draws])
    y = np.array([u.correct() for u, _ in draws])
    sidx = {j: i for i, j in enumerate(strata)}
    stratum = np.array([sidx[j] for _, j in draws])
    member = {s: np.array([s in u.submissions for u, _ in draws], dtype=float)
              for s in sizes}
    return _Importance(y, stratum, q, member, sizes, counts)


def _strata_bootstrap(stratum: np.ndarray, rng, b: int) -> np.ndarray:
    """Replicate index sets resampling each stratum on its own, shape (b, n)."""
    cols = []
    for j in np.unique(stratum):
        where = np.flatnonzero(stratum == j)
        cols.append(where[rng.integers(0, where.size, (b, where.size))])
    return np.concatenate(cols, axis=1)


def _importance_precision(imp: _Importance, s, rng, bootstrap, confidence, warnings):
    if imp is None or imp.y.size == 0 or s not in imp.member:
        return float("nan"), float("nan"), float("nan"), None
    if imp.counts.get(s, 0) == 0:
        warnings.append(f"{s}: no draws of its own; items only it output are never seen, so "
                        f"its importance estimate is biased (draw from it: assess sample)")
    target = imp.member[s] / imp.sizes[s]
    est, lo, hi, _ = mixture_importance(imp.y, target, imp.q, imp.stratum, confidence)
    boot = None
    if bootstrap:
        idx = _strata_bootstrap(imp.stratum, rng, bootstrap)
        boot = np.mean((target / imp.q * imp.y)[idx], axis=1)
    return est, lo, hi, boot


def _importance_recall(imp: _Importance, s, pool_recall: float, row: dict, confidence) -> None:
    """Pool recall x (correct items of s) / (correct items of the pool), both sums
    estimated as mean(f / q) over the mixture draws."""
    if imp is None or imp.y.size == 0 or s not in imp.member:
        return
    pool = np.mean(imp.y / imp.q)
    mine = np.mean(imp.member[s] * imp.y / imp.q)
    row["pool_recall"] = pool_recall
    row["recall_importance"] = pool_recall * mine / pool if pool > 0 else float("nan")
