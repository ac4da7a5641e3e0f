"""Ranking measures over whole runs at once, with trec_eval's conventions.

Everything is computed on integer-encoded arrays (one row per retrieved
document), so a run of ten million lines is a handful of numpy passes:

* ranking: score descending, ties broken by document id descending
  (trec_eval's ``strcmp`` order); the rank column of a run is ignored.
  Scores are compared in single precision by default, as trec_eval 9.x and
  pytrec_eval store them (``float sim``); ``score_precision="double"``
  compares them as doubles, as trec_eval 10.0 does (usnistgov/trec_eval#34).
  ``ties="reversed_argsort"`` ranks each query as ranx 0.2.8 does instead (SV-Ident's
  official scorer): the reverse of numba's ``np.argsort`` of the scores in the order
  the run lists them (see ``argsort_order``), so ties follow the run's order;
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
from typing import Callable

import numpy as np

from .classification import safe_div

MEASURE_PATTERN = re.compile(r"^(map|p|recall|ndcg|mrr|r_precision)(?:@(\d+))?$")
MEASURES_WITH_CUTOFF = {"p", "recall"}
SCORE_PRECISIONS = ("float", "double")
# how equal scores are ordered: by document id descending (trec_eval), or by the
# reversed argsort of the scores in run order (ranx 0.2.8, SV-Ident's official scorer)
TIE_RULES = ("doc_id", "reversed_argsort")
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

    Queries are codes 0..n_queries-1, documents 0..n_docs-1. ``doc_tiebreak(codes,
    runs)`` maps the document codes of tied rows to non-negative integer keys in the
    ascending order of their ids (larger = ranked first among equal scores;
    ``by_position`` turns a rank array into one). ``runs`` numbers each row's run of
    equal (query, score): keys need only order the ids within a run. It is called only
    with tied rows, so a run with few ties never sorts its whole dictionary.
    """
    n_queries: int
    n_docs: int
    run_q: np.ndarray
    run_doc: np.ndarray
    run_score: np.ndarray
    qrels_q: np.ndarray
    qrels_doc: np.ndarray
    qrels_rel: np.ndarray
    doc_tiebreak: Callable[[np.ndarray, np.ndarray], np.ndarray]


def distinct_codes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct codes, index of each code among them): ``np.unique`` with
    ``return_inverse`` for non-negative integer codes, by a mark array instead of a sort."""
    if codes.size == 0:
        return codes[:0].astype(np.int64), np.zeros(0, dtype=np.int64)
    present = np.zeros(int(codes.max()) + 1, dtype=bool)
    present[codes] = True
    unique = np.flatnonzero(present)
    position = np.cumsum(present, dtype=np.int64) - 1
    return unique, position[codes]


def by_position(rank: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A ``doc_tiebreak`` from each code's position in ascending id order."""
    return lambda codes, runs: rank[codes]


def rank_order(q, score, doc, tiebreak: Callable[[np.ndarray, np.ndarray], np.ndarray]
               ) -> np.ndarray | None:
    """Permutation putting run rows in ranked order, or None when already ranked.

    Ranked means: each query's rows contiguous (queries in any order), scores
    non-increasing within a query, equal scores by ``tiebreak(doc, runs)``
    descending. Runs are usually written that way, so the common case costs a
    few linear passes; tied rows are reordered locally, and the tie-break
    keys are only computed when some query has tied scores, for the tied
    rows' documents only.
    """
    return _rank_order(q, score, doc, tiebreak)[0]


def _rank_order(q, score, doc, tiebreak) -> tuple[np.ndarray | None, bool]:
    """``rank_order``, and whether its permutation moves rows between queries (else it
    only reorders tied rows within their run: ``q[order]`` is ``q``)."""
    if q.size < 2:
        return None, False
    same_q = q[1:] == q[:-1]
    n_groups = q.size - int(same_q.sum())
    contiguous = n_groups == int(np.count_nonzero(np.bincount(q)))
    order = None
    if not (contiguous and not np.any(same_q & (score[1:] > score[:-1]))):
        order = np.lexsort((-score, q))
        q, score, doc = q[order], score[order], doc[order]
        same_q = q[1:] == q[:-1]
    regrouped = order is not None
    ties = same_q & (score[1:] == score[:-1])
    if not ties.any():
        return order, regrouped
    # rows inside runs of equal (query, score): sort each run by tie-break descending
    in_run = np.zeros(q.size, dtype=bool)
    in_run[1:] |= ties
    in_run[:-1] |= ties
    rows = np.flatnonzero(in_run)
    run_id = np.cumsum(np.concatenate(([True], ~ties)))[rows]
    tie = tiebreak(doc[rows], run_id)
    # one int64 key (run, then tie-break descending), unique since a query's documents
    # are: a plain sort, about twice as fast as lexsort on two keys
    span = np.int64(int(tie.max()) + 1)
    key = run_id.astype(np.int64) * span + (span - 1 - tie)
    local = rows[np.argsort(key)]
    if order is None:       # int32 when it fits: 40 MB less at 10M rows
        order = np.arange(q.size, dtype=np.int32 if q.size < 2**31 else np.int64)
    order[rows] = order[local]
    return order, regrouped


def reversed_argsort_order(q: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """Permutation ranking each query as ranx 0.2.8 does, or None when already ranked.

    Each query's rows are taken in the order the run lists them (grouped by a stable
    sort when a query's rows are apart) and ordered by ``np.argsort(scores)[::-1]``
    as numba compiles it, on the scores as float64 (``argsort_order``). Without a tie
    that is score descending, so numba is only imported when some query has a tie.
    """
    if q.size < 2:
        return None
    order = None
    if np.count_nonzero(q[1:] != q[:-1]) + 1 != np.count_nonzero(np.bincount(q)):
        order = np.argsort(q, kind="stable")
        q, score = q[order], score[order]
    same_q = q[1:] == q[:-1]
    if not np.any(same_q & (score[1:] >= score[:-1])):
        return order                                  # strictly decreasing: ranked
    by_score = np.lexsort((-score, q))
    s = score[by_score]
    if not np.any((q[by_score][1:] == q[by_score][:-1]) & (s[1:] == s[:-1])):
        local = by_score                              # no tie: the order is unique
    else:
        from .argsort_order import reversed_argsort_groups
        local = reversed_argsort_groups(np.ascontiguousarray(score, dtype=np.float64),
                                        _run_starts(q))
    return local if order is None else order[local]


def _run_starts(keys: np.ndarray) -> np.ndarray:
    """Index of the first row of each run of equal keys (``keys`` non-empty)."""
    change = np.empty(keys.size, dtype=bool)
    change[0] = True
    np.not_equal(keys[1:], keys[:-1], out=change[1:])
    return np.flatnonzero(change)


def _group_positions(keys_sorted: np.ndarray) -> np.ndarray:
    """0-based position of each row within its run of equal (sorted) keys."""
    n = keys_sorted.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = _run_starts(keys_sorted)
    counts = np.diff(np.append(starts, n))
    # int32 halves the memory of the two n-sized temporaries
    dtype = np.int32 if n < 2**31 else np.int64
    out = np.arange(n, dtype=dtype)
    out -= np.repeat(starts.astype(dtype), counts)
    return out


JOIN_BLOCK = 1 << 20        # run rows joined at a time: bounds the temporaries' memory


def _judgment_type(rel: np.ndarray, missing: int):
    """int32 when every judgment and ``missing`` fit (half of a 10M-row int64 column)."""
    info = np.iinfo(np.int32)
    lo = min(int(rel.min()), missing) if rel.size else missing
    hi = max(int(rel.max()), missing) if rel.size else missing
    return np.int32 if info.min <= lo and hi <= info.max else np.int64


def judgments_of(e: Encoded, rows: np.ndarray | None, missing: int = 0) -> np.ndarray:
    """Judgment of the given run rows (all rows when None); ``missing`` where unjudged.

    A binary search of each (query, document) key among the sorted qrels keys,
    by blocks of rows so that a ten-million-line run needs no key-sized temporaries.
    """
    n_rows = e.run_q.size if rows is None else rows.size
    out = np.full(n_rows, missing, dtype=_judgment_type(e.qrels_rel, missing))
    if e.qrels_q.size == 0:
        return out
    n_docs = np.int64(max(e.n_docs, 1))
    qkey = e.qrels_q.astype(np.int64) * n_docs + e.qrels_doc
    # qrels grouped by query (the usual layout) are sorted runs that timsort merges fast
    order = np.argsort(qkey, kind="stable")
    skey, srel = qkey[order], e.qrels_rel[order]
    del qkey, order
    last = skey.size - 1
    # most retrieved documents are judged for no query: a mark per document leaves
    # only the others to the binary search (a qrels is small next to its runs)
    judged = np.zeros(int(e.n_docs), dtype=bool)
    judged[e.qrels_doc] = True
    for start in range(0, n_rows, JOIN_BLOCK):
        block = slice(start, start + JOIN_BLOCK)
        sel = block if rows is None else rows[block]
        docs = e.run_doc[sel]
        hit = np.flatnonzero(judged[docs])
        key = e.run_q[sel][hit].astype(np.int64)
        key *= n_docs
        key += docs[hit]
        pos = np.searchsorted(skey, key)
        np.minimum(pos, last, out=pos)
        out[start + hit] = np.where(skey[pos] == key, srel[pos], missing)
    return out


def _depth_needed(parsed, num_rel: np.ndarray) -> int | None:
    """Deepest rank any measure looks at, or None when some measure needs all ranks."""
    depth = 0
    for _, kind, k in parsed:
        if kind == "r_precision":
            depth = max(depth, int(num_rel.max()) if num_rel.size else 0)
        elif k is None:
            return None
        else:
            depth = max(depth, k)
    return depth


def evaluate_encoded(e: Encoded, measures, rel_level: int = 1,
                     score_precision: str = "float", ties: str = "doc_id"
                     ) -> dict[str, np.ndarray]:
    """One array of per-query values (indexed by query code) per measure.

    ``ties`` (``TIE_RULES``) orders equal scores: ``doc_id`` by document id
    descending (trec_eval), ``reversed_argsort`` as ranx 0.2.8 (``rank_order``,
    ``reversed_argsort_order``).

    Also returns ``num_rel`` and ``num_ret`` under those names. When every
    measure has a cutoff, rows ranked below the deepest cutoff are dropped
    before judgments are looked up (they cannot change any value); after the
    lookup only rows with a positive gain or counted relevant are kept.
    """
    parsed = [(m, *parse_measure(m)) for m in measures]
    if score_precision not in SCORE_PRECISIONS:
        raise ValueError(f"score_precision must be one of {SCORE_PRECISIONS}, "
                         f"not {score_precision!r}")
    if ties not in TIE_RULES:
        raise ValueError(f"ties must be one of {TIE_RULES}, not {ties!r}")
    nq = e.n_queries
    num_rel = np.bincount(e.qrels_q, weights=(e.qrels_rel >= rel_level), minlength=nq)
    with np.errstate(over="ignore"):        # beyond float32: inf, as trec_eval's float
        score = e.run_score.astype(np.float32) if score_precision == "float" else e.run_score
    if ties == "doc_id":
        order, regrouped = _rank_order(e.run_q, score, e.run_doc, e.doc_tiebreak)
    else:
        order = reversed_argsort_order(e.run_q, score)
        regrouped = order is not None
    del score
    # tied rows reordered within their query leave the query column as it is
    q = e.run_q[order] if regrouped else e.run_q
    pos = _group_positions(q)
    num_ret = np.bincount(q, minlength=nq).astype(float)
    out: dict[str, np.ndarray] = {"num_rel": num_rel, "num_ret": num_ret}

    depth = _depth_needed(parsed, num_rel)
    if depth is not None:
        rows = np.flatnonzero(pos < depth)
        q, pos = q[rows], pos[rows]
        if order is not None:
            rows = order[rows]
    else:
        rows = order
    del order
    # an unjudged document is never relevant, even with rel_level <= 0 (as in
    # trec_eval, where unjudged documents sit below every judgment), and has gain 0
    gain = judgments_of(e, rows, missing=min(0, rel_level - 1))
    del rows
    # rows with gain <= 0 that are not relevant add nothing to any measure
    keep = np.flatnonzero((gain > 0) | (gain >= rel_level))
    q, pos, gain = q[keep], pos[keep], gain[keep].astype(float)
    relevant = gain >= rel_level

    # hits up to and including each row, counted within its query (rows stay
    # grouped by query in ranked order)
    cum = np.cumsum(relevant, dtype=np.int64)
    hits = cum - _group_base(q, cum - relevant)
    rank1 = pos + 1.0
    ideal = None

    def count(weights) -> np.ndarray:
        return np.bincount(q, weights=weights, minlength=nq)

    for name, kind, k in parsed:
        cut = relevant if k is None else relevant & (pos < k)
        if kind == "map":
            out[name] = safe_div(count(np.where(cut, hits / rank1, 0.0)), num_rel)
        elif kind == "p":
            out[name] = count(cut) / k
        elif kind == "recall":
            out[name] = safe_div(count(cut), num_rel)
        elif kind == "r_precision":
            out[name] = safe_div(count(relevant & (pos < num_rel[q])), num_rel)
        elif kind == "mrr":
            rr = np.zeros(nq)
            idx = np.flatnonzero(relevant)
            if idx.size:
                uq, first_idx = np.unique(q[idx], return_index=True)
                rr[uq] = 1.0 / rank1[idx[first_idx]]
            out[name] = rr
        elif kind == "ndcg":
            if ideal is None:
                ideal = _ideal_gains(e)
            iq, ipos, igain = ideal
            icut = np.ones(iq.size, dtype=bool) if k is None else ipos < k
            idcg = np.bincount(iq, weights=igain * icut / np.log2(ipos + 2.0), minlength=nq)
            in_cut = slice(None) if k is None else pos < k
            dcg = count(np.where(in_cut, np.maximum(gain, 0.0) / np.log2(pos + 2.0), 0.0))
            out[name] = safe_div(dcg, idcg)
    return out


def _group_base(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each row's value at the first row of its run of equal keys."""
    n = keys.size
    if n == 0:
        return np.zeros(0, dtype=values.dtype)
    starts = _run_starts(keys)
    return np.repeat(values[starts], np.diff(np.append(starts, n)))


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
                  by_position(np.arange(len(docs), dtype=np.int64)))
    return enc, qids


def evaluate(qrels: dict, run: dict, measures=DEFAULT_MEASURES, rel_level: int = 1,
             score_precision: str = "float", ties: str = "doc_id") -> dict[str, dict]:
    """Per-query values ``{measure: {qid: value}}`` for every query of either mapping.

    Each query's documents are in the run mapping's order, which
    ``ties="reversed_argsort"`` reads. Relevant documents at ranks 1 and 3 of 3:
    AP = (1/1 + 2/3) / 2, P@2 = 1/2.

    >>> v = evaluate({"q1": {"d1": 1, "d2": 0, "d3": 1}},
    ...              {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}}, ["map", "p@2"])
    >>> round(v["map"]["q1"], 4), v["p@2"]["q1"]
    (0.8333, 0.5)
    """
    enc, qids = encode_mappings(qrels, run)
    values = evaluate_encoded(enc, measures, rel_level, score_precision, ties)
    return {m: dict(zip(qids, values[m].tolist())) for m in list(measures) + ["num_rel", "num_ret"]}
