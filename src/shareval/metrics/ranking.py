"""Ranking measures over whole runs at once, with trec_eval's conventions.

Everything is computed on integer-encoded arrays (one row per retrieved
document), so a run of ten million lines is a handful of numpy passes:

* ranking: score descending, ties broken by document id descending
  (trec_eval's ``strcmp`` order; the rank column of a run is ignored);
* a document is relevant when its judgment is >= ``rel_level`` (default 1);
* AP and AP@k divide by the number of relevant documents R of the query
  (not by min(k, R)), as trec_eval's ``map``/``map_cut`` and ranx do;
* P@k divides by k even when fewer than k documents were retrieved;
* nDCG uses the judgment as linear gain (Järvelin & Kekäläinen; trec_eval
  ``ndcg_cut``, ranx ``ndcg``), negative judgments count as 0, discount
  log2(rank + 1); the ideal ranking is built from all judgments of the query;
* a ratio with a zero denominator (no relevant documents) is 0.

Which queries enter an average is decided by the caller (see
``shareval.tasks.trec``); these functions return one value per query code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .classification import safe_div

MEASURE_PATTERN = re.compile(r"^(map|p|recall|ndcg|mrr|r_precision)(?:@(\d+))?$")
MEASURES_WITH_CUTOFF = {"p", "recall"}
DEFAULT_MEASURES = ("map", "map@10", "p@5", "p@10", "recall@10", "recall@100",
                    "r_precision", "ndcg@10", "mrr")


def parse_measure(name: str) -> tuple[str, int | None]:
    """'map@10' -> ('map', 10); 'map' -> ('map', None). Raises ValueError."""
    m = MEASURE_PATTERN.match(name.strip().lower())
    if not m:
        raise ValueError(f"unknown measure {name!r}; known: map, map@k, p@k, recall@k, "
                         f"r_precision, ndcg, ndcg@k, mrr")
    kind, k = m.group(1), m.group(2)
    if kind in MEASURES_WITH_CUTOFF and k is None:
        raise ValueError(f"measure {name!r} needs a cutoff, e.g. {kind}@10")
    if kind in ("mrr", "r_precision") and k is not None:
        raise ValueError(f"measure {name!r} takes no cutoff")
    k_int = None if k is None else int(k)
    if k_int is not None and k_int < 1:
        raise ValueError(f"measure {name!r}: cutoff must be >= 1")
    return kind, k_int


@dataclass
class Encoded:
    """A run and its judgments as integer codes.

    Queries are codes 0..n_queries-1, documents 0..n_docs-1; ``doc_tiebreak``
    gives each document code its position in ascending id order, so that
    larger means "ranked first" among equal scores.
    """
    n_queries: int
    n_docs: int
    run_q: np.ndarray
    run_doc: np.ndarray
    run_score: np.ndarray
    qrels_q: np.ndarray
    qrels_doc: np.ndarray
    qrels_rel: np.ndarray
    doc_tiebreak: np.ndarray


def _is_ranked(q, score, tie) -> bool:
    """True when rows are already in (query asc, score desc, tiebreak desc) order."""
    if q.size < 2:
        return True
    dq = np.diff(q)
    if np.any(dq < 0):
        return False
    same_q = dq == 0
    ds = np.diff(score)
    if np.any(same_q & (ds > 0)):
        return False
    dt = np.diff(tie)
    return not np.any(same_q & (ds == 0) & (dt >= 0))


def rank_order(q, score, tie) -> np.ndarray | None:
    """Permutation putting rows in ranked order, or None when already ranked."""
    if _is_ranked(q, score, tie):
        return None
    return np.lexsort((-tie, -score, q))


def _group_positions(keys_sorted: np.ndarray) -> np.ndarray:
    """0-based position of each row within its run of equal (sorted) keys."""
    n = keys_sorted.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.empty(n, dtype=bool)
    change[0] = True
    np.not_equal(keys_sorted[1:], keys_sorted[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    counts = np.diff(np.append(starts, n))
    return np.arange(n, dtype=np.int64) - np.repeat(starts, counts)


def _relevance_of_run_rows(e: Encoded) -> np.ndarray:
    """Judgment of each run row (0 where unjudged), by a sorted-key join."""
    n_docs = np.int64(max(e.n_docs, 1))
    qkey = e.qrels_q.astype(np.int64) * n_docs + e.qrels_doc
    order = np.argsort(qkey, kind="stable")
    skey = qkey[order]
    srel = e.qrels_rel[order]
    rkey = e.run_q.astype(np.int64) * n_docs + e.run_doc
    if skey.size == 0:
        return np.zeros(rkey.size, dtype=float)
    pos = np.searchsorted(skey, rkey)
    np.minimum(pos, skey.size - 1, out=pos)
    found = skey[pos] == rkey
    return np.where(found, srel[pos], 0).astype(float)


def evaluate_encoded(e: Encoded, measures, rel_level: int = 1) -> dict[str, np.ndarray]:
    """One array of per-query values (indexed by query code) per measure.

    Also returns ``num_rel`` and ``num_ret`` under those names.
    """
    parsed = [(m, *parse_measure(m)) for m in measures]
    nq = e.n_queries
    gain = _relevance_of_run_rows(e)
    order = rank_order(e.run_q, e.run_score, e.doc_tiebreak[e.run_doc])
    q = e.run_q if order is None else e.run_q[order]
    if order is not None:
        gain = gain[order]
    pos = _group_positions(q)
    relevant = gain >= rel_level

    num_rel = np.bincount(e.qrels_q, weights=(e.qrels_rel >= rel_level), minlength=nq)
    num_ret = np.bincount(q, minlength=nq).astype(float)
    out: dict[str, np.ndarray] = {"num_rel": num_rel, "num_ret": num_ret}

    cum = np.cumsum(relevant, dtype=np.int64)
    # hits up to and including each row, counted within its query
    before = (cum - relevant)[pos == 0]           # hits before each query's first row
    qs_present = q[pos == 0]
    offset = np.zeros(nq, dtype=np.int64)
    offset[qs_present] = before
    hits = cum - offset[q]
    prec_here = hits / (pos + 1.0)
    rank1 = pos + 1.0
    discount = 1.0 / np.log2(pos + 2.0)
    ideal = None

    def count(mask) -> np.ndarray:
        return np.bincount(q, weights=mask, minlength=nq)

    for name, kind, k in parsed:
        cut = np.ones(q.size, dtype=bool) if k is None else pos < k
        if kind == "map":
            out[name] = safe_div(count(prec_here * (relevant & cut)), num_rel)
        elif kind == "p":
            out[name] = count(relevant & cut) / k
        elif kind == "recall":
            out[name] = safe_div(count(relevant & cut), num_rel)
        elif kind == "r_precision":
            within_r = pos < num_rel[q]
            out[name] = safe_div(count(relevant & within_r), num_rel)
        elif kind == "mrr":
            rr = np.zeros(nq)
            idx = np.flatnonzero(relevant)
            if idx.size:
                uq, first = np.unique(q[idx], return_index=True)
                rr[uq] = 1.0 / rank1[idx[first]]
            out[name] = rr
        elif kind == "ndcg":
            if ideal is None:
                ideal = _ideal_gains(e)
            iq, ipos, igain = ideal
            icut = np.ones(iq.size, dtype=bool) if k is None else ipos < k
            idcg = np.bincount(iq, weights=igain * icut / np.log2(ipos + 2.0), minlength=nq)
            dcg = count(np.maximum(gain, 0.0) * discount * cut)
            out[name] = safe_div(dcg, idcg)
    return out


def _ideal_gains(e: Encoded):
    """Judgments of each query sorted by gain descending, with positions."""
    g = np.maximum(e.qrels_rel.astype(float), 0.0)
    order = np.lexsort((-g, e.qrels_q))
    iq = e.qrels_q[order]
    return iq, _group_positions(iq), g[order]


# ---------------------------------------------------------------------------
# A convenience layer over Python mappings, for small inputs and tests.

def encode_mappings(qrels: dict, run: dict) -> tuple[Encoded, list]:
    """Encode ``{qid: {docid: rel}}`` and ``{qid: {docid: score}}``.

    Returns the encoding and the list of query ids (index = query code),
    covering queries of both mappings.
    """
    qids = sorted(set(qrels) | set(run))
    qcode = {qid: i for i, qid in enumerate(qids)}
    docs = sorted({d for m in qrels.values() for d in m} | {d for m in run.values() for d in m})
    dcode = {d: i for i, d in enumerate(docs)}

    def flat(mapping, dtype):
        qs, ds, vs = [], [], []
        for qid, m in mapping.items():
            for d, v in m.items():
                qs.append(qcode[qid])
                ds.append(dcode[d])
                vs.append(v)
        return (np.asarray(qs, dtype=np.int64), np.asarray(ds, dtype=np.int64),
                np.asarray(vs, dtype=dtype))

    rq, rd, rs = flat(run, float)
    qq, qd, qr = flat(qrels, np.int64)
    enc = Encoded(len(qids), len(docs), rq, rd, rs, qq, qd, qr,
                  np.arange(len(docs), dtype=np.int64))
    return enc, qids


def evaluate(qrels: dict, run: dict, measures=DEFAULT_MEASURES, rel_level: int = 1
             ) -> dict[str, dict]:
    """Per-query values ``{measure: {qid: value}}`` for every query of either mapping."""
    enc, qids = encode_mappings(qrels, run)
    values = evaluate_encoded(enc, measures, rel_level)
    return {m: dict(zip(qids, values[m].tolist())) for m in list(measures) + ["num_rel", "num_ret"]}
