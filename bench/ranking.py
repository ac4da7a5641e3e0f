"""Ranking benchmark: shareval vs pytrec_eval-terrier vs ranx, from TREC files to numbers.

    python bench/ranking.py [--queries 100000] [--docs 100] [--relevant 10] [--seed 0]

Generates (seeded) a run of queries x docs lines and qrels with ~relevant
relevant documents per query, then times in one process, after one read of
both files to warm the OS cache:

* shareval: ``tasks.get("trec").score(qrels_file, run_file, measures=...)``
  (parse, validate, rank, all measures, per-query breakdown);
* pytrec_eval: parse both files into its dict input, build the evaluator,
  evaluate, average;
* ranx (warm: numba JIT compiled beforehand on a small sample):
  ``Qrels.from_file`` + ``Run.from_file`` + ``evaluate``; its evaluate-only
  time is printed too.

Scores are random multiples of 2^-24, distinct within a query, so they tie
neither in double nor in single precision: trec_eval ranks in single
precision, ranx in double precision with an unspecified tie order, and only
tie-free scores let all three rank identically (ties are checked against
trec_eval in the tests). Prints times, ratios, shareval's peak memory, and the
largest differences per query (vs pytrec_eval) and of the means (vs ranx).
"""
from __future__ import annotations

import argparse
import gc
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

MEASURES = {"map@10": ("map_cut.10", "map@10"), "r_precision": ("Rprec", "r-precision"),
            "p@10": ("P.10", "precision@10"), "ndcg@10": ("ndcg_cut.10", "ndcg@10")}
TREC_KEYS = {"map_cut.10": "map_cut_10", "Rprec": "Rprec", "P.10": "P_10",
             "ndcg_cut.10": "ndcg_cut_10"}


def generate(folder: Path, n_q: int, n_d: int, n_rel: int, seed: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    pool = max(1_000_000, n_q * 10)
    qids = np.char.add("q", np.arange(n_q).astype(str))
    # qrels: n_rel relevant (grades 1-3) and n_rel judged non-relevant per query
    rel_docs = rng.integers(0, pool, size=(n_q, 2 * n_rel))
    grades = np.concatenate([rng.integers(1, 4, size=(n_q, n_rel)),
                             np.zeros((n_q, n_rel), dtype=np.int64)], axis=1)
    # run: half of the relevant and half of the judged non-relevant documents, the rest random
    run_docs = rng.integers(0, pool, size=(n_q, n_d))
    half = min(n_rel // 2, n_d // 2)
    run_docs[:, :half] = rel_docs[:, :half]
    run_docs[:, half:2 * half] = rel_docs[:, n_rel:n_rel + half]
    rel_docs, grades = _dedupe(rel_docs, grades)
    run_docs, _ = _dedupe(run_docs, np.zeros_like(run_docs))
    width = 1 << max(1, (n_d - 1).bit_length())          # >= n_d distinct low parts
    ticks = rng.integers(0, (1 << 24) // width, size=run_docs.shape) * width + np.arange(n_d)
    scores = ticks / float(1 << 24)                       # exact in float32 and float64
    order = np.argsort(-scores, axis=1)
    run_docs = np.take_along_axis(run_docs, order, axis=1)
    scores = np.take_along_axis(scores, order, axis=1)

    def doc_names(a):
        return pa.array(np.char.add("D", a.ravel().astype(str)))

    qrels_t = pa.table({"q": np.repeat(qids, rel_docs.shape[1]), "it": np.zeros(rel_docs.size, int),
                        "d": doc_names(rel_docs), "r": grades.ravel()})
    run_t = pa.table({"q": np.repeat(qids, n_d), "q0": np.full(run_docs.size, "Q0"),
                      "d": doc_names(run_docs), "rank": np.tile(np.arange(1, n_d + 1), n_q),
                      "s": scores.ravel(), "tag": np.full(run_docs.size, "bench")})
    opts = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    qrels_path, run_path = folder / "bench.qrels", folder / "bench.run"
    pacsv.write_csv(qrels_t, qrels_path, opts)
    pacsv.write_csv(run_t, run_path, opts)
    return qrels_path, run_path


def _dedupe(docs, values):
    """Make document ids unique within each row (offset repeats into a fresh range)."""
    docs = docs.copy()
    for _ in range(5):
        s = np.sort(docs, axis=1)
        if not np.any(s[:, 1:] == s[:, :-1]):
            break
        for i in np.flatnonzero(np.any(s[:, 1:] == s[:, :-1], axis=1)):
            _, first = np.unique(docs[i], return_index=True)
            dup = np.setdiff1d(np.arange(docs.shape[1]), first)
            docs[i, dup] = 10**9 + i * docs.shape[1] + dup
    return docs, values


def time_shareval(qrels_path, run_path):
    from shareval.tasks import get
    t = time.perf_counter()
    res = get("trec").score(qrels_path, run_path, measures=",".join(MEASURES))
    return time.perf_counter() - t, res


def time_pytrec_eval(qrels_path, run_path):
    import pytrec_eval
    t = time.perf_counter()
    qrels: dict = {}
    with open(qrels_path) as f:
        for line in f:
            q, _, d, r = line.split()
            qrels.setdefault(q, {})[d] = int(r)
    run: dict = {}
    with open(run_path) as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    ev = pytrec_eval.RelevanceEvaluator(qrels, {m[0] for m in MEASURES.values()})
    per_query = ev.evaluate(run)
    means = {ours: float(np.mean([v[TREC_KEYS[m[0]]] for v in per_query.values()]))
             for ours, m in MEASURES.items()}
    return time.perf_counter() - t, per_query, means


def warm_ranx(folder: Path):
    """Compile ranx's numba code on a small sample in its own folder."""
    from ranx import Qrels, Run, evaluate
    folder.mkdir()
    q, r = generate(folder, 50, 20, 5, 1)
    evaluate(Qrels.from_file(str(q), kind="trec"), Run.from_file(str(r), kind="trec"),
             [m[1] for m in MEASURES.values()])


def time_ranx(qrels_path, run_path):
    from ranx import Qrels, Run, evaluate
    t = time.perf_counter()
    qrels = Qrels.from_file(str(qrels_path), kind="trec")
    run = Run.from_file(str(run_path), kind="trec")
    t_eval = time.perf_counter()
    means = evaluate(qrels, run, [m[1] for m in MEASURES.values()], make_comparable=True)
    end = time.perf_counter()
    return end - t, end - t_eval, means


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--relevant", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="shareval-bench-") as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        qrels_path, run_path = generate(folder, args.queries, args.docs, args.relevant, args.seed)
        n_run = sum(1 for _ in open(run_path, "rb"))
        n_qrels = sum(1 for _ in open(qrels_path, "rb"))
        print(f"generated {args.queries:,} queries: run {n_run:,} lines "
              f"({run_path.stat().st_size / 1e6:.0f} MB), qrels {n_qrels:,} lines "
              f"in {time.perf_counter() - t:.1f}s")
        warm_ranx(folder / "warmup")

        s_time, res = time_shareval(qrels_path, run_path)
        peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
        gc.collect()
        p_time, p_per_query, p_means = time_pytrec_eval(qrels_path, run_path)
        gc.collect()
        r_time, r_eval, r_means = time_ranx(qrels_path, run_path)

        assert res.counts["run_lines"] == n_run and res.counts["qrels_lines"] == n_qrels
        assert len(p_per_query) == args.queries
        ours_pq = res.breakdowns["per_query"]
        diffs = {}
        for ours, (trec_name, ranx_name) in MEASURES.items():
            key = TREC_KEYS[trec_name]
            d_trec = max(abs(ours_pq[q][ours] - v[key]) for q, v in p_per_query.items())
            diffs[ours] = (abs(res.metrics[ours] - p_means[ours]), d_trec,
                           abs(res.metrics[ours] - r_means[ranx_name]))
        print()
        print(f"{'measure':<12}{'shareval':>12}{'pytrec_eval':>14}{'ranx':>12}"
              f"{'max |diff| per query vs trec':>32}")
        for ours, (trec_name, ranx_name) in MEASURES.items():
            print(f"{ours:<12}{res.metrics[ours]:>12.6f}{p_means[ours]:>14.6f}"
                  f"{r_means[ranx_name]:>12.6f}{diffs[ours][1]:>32.2e}")
        print()
        print(f"{'tool':<44}{'seconds':>10}{'shareval / tool':>18}")
        print(f"{'shareval (files -> numbers, per-query table)':<44}{s_time:>10.2f}{1.0:>18.2f}")
        print(f"{'pytrec_eval-terrier (dict parse + evaluate)':<44}{p_time:>10.2f}"
              f"{s_time / p_time:>18.2f}")
        print(f"{'ranx warm (from_file + evaluate)':<44}{r_time:>10.2f}{s_time / r_time:>18.2f}")
        print(f"{'ranx warm, evaluate only':<44}{r_eval:>10.2f}{s_time / r_eval:>18.2f}")
        print(f"shareval peak RSS (process, before the other tools ran): {peak_gb:.2f} GB")
        print()
        same_trec = all(d[0] < 1e-9 and d[1] < 1e-9 for d in diffs.values())
        same_ranx = all(d[2] < 1e-9 for d in diffs.values())
        print(f"identical to pytrec_eval, every query (1e-9): {'yes' if same_trec else 'NO'}")
        print(f"identical to ranx, means (1e-9): {'yes' if same_ranx else 'NO'}")
        print(f"target shareval <= 0.5 x pytrec_eval: {'met' if s_time <= 0.5 * p_time else 'NOT met'}"
              f" ({s_time / p_time:.2f})")
        print(f"target shareval <= ranx warm: {'met' if s_time <= r_time else 'NOT met'}"
              f" ({s_time / r_time:.2f})")


if __name__ == "__main__":
    main()
