"""Ranking benchmark: whole-process shareval vs pytrec_eval-terrier and trec_eval 10.0, from
TREC files to numbers, on input shapes real runs have.

    python bench/ranking.py [--sizes 50,20000] [--shapes msmarco,clueweb,...] [--docs 100]
                            [--repeat 5] [--src src] [--baseline-src OTHER_SRC]
                            [--trec-eval-src DIR|GITDIR]

Shapes (``--shapes``, default all; each is one row per size):

* ``base``: the earlier benchmark's ids (``D`` + a number below 10^6 or 10n) and scores,
  multiples of 2^-24 written in full;
* ``msmarco``: numeric ids of varying width (MS MARCO passages, 0..8841822), scores with
  six decimals;
* ``msmarco-pipe``: the same files, the result printed as JSON to a pipe (``--output``
  in every other row);
* ``clueweb``: 25-byte ClueWeb12 ids (``clueweb12-0000tw-05-12114``), scores as long
  decimals (Python's ``repr`` of a double, up to 17 digits);
* ``uuid``: UUIDs, scores in scientific notation (``-1.234568e-03``);
* ``mixed-ties``: ids of 1 to 9 digits after ``doc`` in the same query, scores of one
  decimal, so most queries hold ties (trec_eval's rule: score descending, then document
  id descending; the run lists tied documents in random order).

Every shape's qrels has 13 judged documents per query, graded 0/1/2 (relevance-0 rows
included); 8 of them are in the run and 5 the run never retrieved; 1% of the queries are
judged with no relevant document and 1% are missing from the run (``trec_eval -c``).

After one read of both files (warms the OS cache), each tool runs ``--repeat`` times in
a fresh process, alternating tools; the median wall time counts (the machine is shared).
Peak RSS comes from ``/usr/bin/time``. The tools:

* shareval: ``python -m shareval.cli score trec --format json -o FILE`` (or to a pipe);
* pytrec_eval: a script that parses both files into its dict input, evaluates, averages
  over every judged query and writes the per-query values as JSON (to the pipe when
  shareval's does);
* trec_eval 10.0, built from source here (``--trec-eval-src``: a source folder or a git
  dir; default the mirror in /work/.mirror when present): ``trec_eval -q -c -m ...`` with
  the same measures, per-query output (as shareval writes per-query values).

shareval's and pytrec_eval's numbers are compared on every query and every mean (1e-9).
trec_eval 10.0 ranks on doubles (pytrec_eval and shareval's default on floats), so only
its time is shown.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MEASURES = {"map@10": "map_cut_10", "r_precision": "Rprec", "p@10": "P_10",
            "ndcg@10": "ndcg_cut_10", "map": "map"}
TREC_EVAL_MEASURES = ["map", "map_cut.10", "P.10", "Rprec", "ndcg_cut.10"]
SHAPES = ("base", "msmarco", "msmarco-pipe", "clueweb", "uuid", "mixed-ties")
ROOT = Path(__file__).resolve().parent.parent
TREC_EVAL_MIRROR = Path("/work/.mirror/usnistgov+trec_eval/repo")

PYTREC_SCRIPT = r"""
import json, sys
import pytrec_eval
qrels_path, run_path, out_path, names = sys.argv[1:5]
names = json.loads(names)
qrels = {}
with open(qrels_path) as f:
    for line in f:
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
run = {}
with open(run_path) as f:
    for line in f:
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "map_cut", "P", "Rprec", "ndcg_cut"})
per_query = ev.evaluate(run)
zero = {k: 0.0 for k in names.values()}
table = {q: {ours: per_query.get(q, zero)[theirs] for ours, theirs in names.items()}
         for q in qrels}
means = {ours: sum(v[ours] for v in table.values()) / len(table) for ours in names}
text = json.dumps({"metrics": means, "per_query": table})
if out_path == "-":
    sys.stdout.write(text + "\n")
else:
    with open(out_path, "w") as f:
        f.write(text)
"""

JUDGED, JUDGED_IN_RUN = 13, 8


# --- input shapes -----------------------------------------------------------------------

def _doc_ids(shape: str, x: np.ndarray) -> list[str]:
    """Distinct non-negative integers -> distinct document ids of the shape."""
    x = x.tolist()
    if shape == "base":
        return [f"D{v}" for v in x]
    if shape.startswith("msmarco"):
        return [str(v) for v in x]
    if shape == "clueweb":               # clueweb12-0000tw-05-12114: 25 bytes
        return [f"clueweb12-{v // 3_000_000 % 10000:04d}{'tw' if v & 1 else 'wb'}-"
                f"{v // 100_000 % 30:02d}-{v % 100_000:05d}" for v in x]
    if shape == "uuid":
        out = []
        for v in x:
            hi = (v * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % (1 << 64)
            lo = (v * 0xBF58476D1CE4E5B9 + 0x94D049BB133111EB) % (1 << 64)
            s = f"{hi ^ (hi >> 29):016x}{lo ^ (lo >> 31):016x}"
            out.append(f"{s[:8]}-{s[8:12]}-4{s[13:16]}-a{s[17:20]}-{s[20:]}")
        return out
    if shape == "mixed-ties":            # doc + 1..9 digits, widths mixed in each query
        return [f"doc{v}" for v in x]
    raise ValueError(shape)


def _scores(shape: str, rng, n_q: int, n_d: int) -> tuple[np.ndarray, list[str]]:
    """(values, text as written) for n_q x n_d scores, descending within each query."""
    if shape == "base":
        width = 1 << max(1, (n_d - 1).bit_length())
        ticks = rng.integers(0, (1 << 24) // width, size=(n_q, n_d)) * width + np.arange(n_d)
        v = -np.sort(-(ticks / float(1 << 24)), axis=1)
        return v, [repr(s) for s in v.ravel().tolist()]
    if shape.startswith("msmarco"):
        v = -np.sort(-rng.uniform(0, 40, size=(n_q, n_d)), axis=1)
        return v, [f"{s:.6f}" for s in v.ravel().tolist()]
    if shape == "clueweb":
        v = -np.sort(-rng.normal(-6, 2, size=(n_q, n_d)), axis=1)
        return v, [repr(s) for s in v.ravel().tolist()]
    if shape == "uuid":
        v = -np.sort(-(rng.lognormal(-5, 3, size=(n_q, n_d)) * rng.choice([-1, 1], (n_q, 1))),
                     axis=1)
        return v, [f"{s:.6e}" for s in v.ravel().tolist()]
    if shape == "mixed-ties":
        v = -np.sort(-rng.integers(0, 60, size=(n_q, n_d)) / 10.0, axis=1)
        return v, [f"{s:.1f}" for s in v.ravel().tolist()]
    raise ValueError(shape)


def _pool_draw(shape: str, rng, size) -> np.ndarray:
    if shape.startswith("msmarco"):
        return rng.integers(0, 8_841_823, size=size)
    if shape == "mixed-ties":            # log-uniform: 1 to 9 digits
        return (10 ** rng.uniform(0, 9, size=size)).astype(np.int64)
    return rng.integers(0, 1_000_000_000, size=size)


def _distinct_rows(shape: str, rng, n_q: int, k: int) -> np.ndarray:
    """n_q x k integers, distinct within each row."""
    docs = _pool_draw(shape, rng, (n_q, k))
    for _ in range(20):
        s = np.sort(docs, axis=1)
        bad = np.flatnonzero(np.any(s[:, 1:] == s[:, :-1], axis=1))
        if bad.size == 0:
            return docs
        for i in bad:
            _, first = np.unique(docs[i], return_index=True)
            dup = np.setdiff1d(np.arange(k), first)
            docs[i, dup] = _pool_draw(shape, rng, dup.size)
    raise RuntimeError("could not draw distinct documents")


def generate(folder: Path, shape: str, n_q: int, n_d: int, seed: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    qids = [str(301 + i) if shape != "uuid" else f"q{i:06d}" for i in range(n_q)]
    docs = _distinct_rows(shape, rng, n_q, n_d + JUDGED - JUDGED_IN_RUN)
    run_docs, unretrieved = docs[:, :n_d], docs[:, n_d:]
    # judged: 8 of the retrieved (at random ranks) and 5 never retrieved
    picked = np.argsort(rng.random((n_q, n_d)), axis=1)[:, :JUDGED_IN_RUN]
    judged = np.concatenate([np.take_along_axis(run_docs, picked, axis=1), unretrieved], axis=1)
    grades = rng.choice([0, 0, 1, 1, 2], size=judged.shape)
    grades[: max(1, n_q // 100)] = 0                       # judged, nothing relevant
    values, texts = _scores(shape, rng, n_q, n_d)
    if shape == "mixed-ties":       # tied documents listed in random order, not by id
        pass                        # (the run's documents are drawn at random already)
    judged_names = _doc_ids(shape, judged.ravel())
    run_names = _doc_ids(shape, run_docs.ravel())
    qrels_path, run_path = folder / f"{shape}.qrels", folder / f"{shape}.run"
    with open(qrels_path, "w") as f:
        order = rng.permutation(judged.shape[1])            # qrels lines not in run order
        f.writelines(f"{qids[i]} 0 {judged_names[i * JUDGED + j]} {grades[i, j]}\n"
                     for i in range(n_q) for j in order)
    with open(run_path, "w") as f:
        for i in range(n_q):
            if i % 100 == 50:                               # 1% of the judged queries
                continue
            q, base = qids[i], i * n_d
            f.writelines(f"{q} Q0 {run_names[base + j]} {j + 1} {texts[base + j]} bench\n"
                         for j in range(n_d))
    return qrels_path, run_path


# --- tools ------------------------------------------------------------------------------

def build_trec_eval(src: str | None, folder: Path) -> tuple[Path | None, str]:
    """(binary, note): trec_eval built from a source folder or a git dir (its HEAD)."""
    if src is None:
        if not TREC_EVAL_MIRROR.exists():
            return None, "not built: no --trec-eval-src"
        src = str(TREC_EVAL_MIRROR)
    build = folder / "trec_eval_src"
    try:
        if (Path(src) / "HEAD").exists() and (Path(src) / "objects").exists():
            build.mkdir()
            archive = subprocess.run(["git", "--git-dir", src, "archive", "HEAD"],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(build)], input=archive, check=True)
        else:
            shutil.copytree(src, build)
        subprocess.run(["make", "-C", str(build)], check=True, capture_output=True)
    except (subprocess.CalledProcessError, OSError) as e:
        return None, f"not built: {e}"
    binary = build / "trec_eval"
    version = subprocess.run([str(binary), "-v"], capture_output=True, text=True)
    return binary, (version.stdout + version.stderr).strip()


def run_process(cmd: list[str], env: dict, rss_file: Path, pipe: bool) -> tuple[float, float, bytes]:
    """(wall seconds, peak RSS in GB, stdout when piped) of one fresh process.

    Started through /usr/bin/time, which reports the peak RSS of its child:
    a child forked from this (large) process would inherit its peak.
    """
    t = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(rss_file)] + cmd, env=env,
                          stdout=subprocess.PIPE if pipe else subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:4]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return seconds, int(rss_file.read_text().split()[-1]) / 1e6, proc.stdout or b""


def compare(ours: dict, theirs: dict) -> float:
    """Largest |difference| over every mean and every per-query value."""
    worst = max(abs(ours["metrics"][m] - theirs["metrics"][m]) for m in MEASURES)
    ours_pq = ours["breakdowns"]["per_query"]
    if set(ours_pq) != set(theirs["per_query"]):
        return float("inf")
    for q, values in theirs["per_query"].items():
        worst = max(worst, max(abs(ours_pq[q][m] - values[m]) for m in MEASURES))
    return worst


def bench_one(folder: Path, shape: str, n_q: int, args, env: dict, trec_eval,
              baseline_env: dict | None = None) -> dict:
    qrels_path, run_path = generate(folder, shape, n_q, args.docs, args.seed)
    n_run = sum(1 for _ in open(run_path, "rb"))          # also warms the OS cache
    sum(1 for _ in open(qrels_path, "rb"))
    pipe = shape.endswith("-pipe")
    ours_out, theirs_out = folder / "shareval.json", folder / "pytrec_eval.json"
    shareval_cmd = [sys.executable, "-m", "shareval.cli", "score", "trec", "-r", str(qrels_path),
                    "-s", str(run_path), "--measures", ",".join(MEASURES), "--format", "json",
                    "--quiet"] + ([] if pipe else ["-o", str(ours_out)])
    pytrec_cmd = [sys.executable, "-c", PYTREC_SCRIPT, str(qrels_path), str(run_path),
                  "-" if pipe else str(theirs_out), json.dumps(MEASURES)]
    tools = {"shareval": shareval_cmd, "pytrec_eval": pytrec_cmd}
    envs = {"shareval": env, "pytrec_eval": env}
    if baseline_env is not None:         # another shareval (e.g. before a change)
        tools["baseline"], envs["baseline"] = list(shareval_cmd), baseline_env
        if not pipe:
            tools["baseline"][tools["baseline"].index("-o") + 1] = str(folder / "baseline.json")
    if trec_eval is not None:
        tools["trec_eval"] = [str(trec_eval), "-q", "-c"] + [
            a for m in TREC_EVAL_MEASURES for a in ("-m", m)] + [str(qrels_path), str(run_path)]
    repeat = args.repeat if n_run < 1_000_000 else max(1, min(args.repeat, 3))
    times = {t: [] for t in tools}
    peak = {t: 0.0 for t in tools}
    outputs = {}
    for _ in range(repeat):                                # alternating tools
        for name, cmd in tools.items():
            # trec_eval's output goes to a pipe when shareval's does (it is read here)
            s, rss, out = run_process(cmd, envs.get(name, env), folder / "rss",
                                      pipe or name == "trec_eval")
            times[name].append(s)
            peak[name] = max(peak[name], rss)
            outputs[name] = out
    if pipe:
        ours, theirs = json.loads(outputs["shareval"]), json.loads(outputs["pytrec_eval"])
    else:
        ours, theirs = json.loads(ours_out.read_text()), json.loads(theirs_out.read_text())
    med = {t: statistics.median(v) for t, v in times.items()}
    return {"shape": shape, "queries": n_q, "run_lines": n_run, "seconds": med, "peak": peak,
            "max_diff": compare(ours, theirs)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="50,20000",
                    help="comma-separated numbers of queries (default 50,20000)")
    ap.add_argument("--shapes", default=",".join(SHAPES),
                    help=f"comma-separated shapes (default all: {','.join(SHAPES)})")
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5,
                    help="alternating runs per tool; the median counts (5; at most 3 from a "
                         "million run lines)")
    ap.add_argument("--src", default=str(ROOT / "src"),
                    help="shareval source folder to put first on PYTHONPATH (default: ./src)")
    ap.add_argument("--baseline-src", default=None,
                    help="another shareval source folder, timed in the same runs (a column)")
    ap.add_argument("--trec-eval-src", default=None,
                    help="trec_eval source folder or git dir (default: the mirror's, if any)")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.abspath(args.src))
    baseline_env = (dict(os.environ, PYTHONPATH=os.path.abspath(args.baseline_src))
                    if args.baseline_src else None)
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    for s in shapes:
        if s not in SHAPES:
            ap.error(f"unknown shape {s!r}; known: {', '.join(SHAPES)}")
    # an installed package has its bytecode compiled (pip does it); a source folder run
    # with PYTHONDONTWRITEBYTECODE (set on some machines) compiles every module per run
    for src in filter(None, (args.src, args.baseline_src)):
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True,
                       stdout=subprocess.DEVNULL)
    rows = []
    with tempfile.TemporaryDirectory(prefix="shareval-bench-te-") as te_dir:
        trec_eval, te_note = build_trec_eval(args.trec_eval_src, Path(te_dir))
        for n_q in (int(s) for s in args.sizes.split(",")):
            for shape in shapes:
                with tempfile.TemporaryDirectory(prefix="shareval-bench-") as tmp:
                    row = bench_one(Path(tmp), shape, n_q, args, env, trec_eval, baseline_env)
                rows.append(row)
                print(f"{shape} {n_q:,}: " + ", ".join(
                    f"{t} {s:.2f}s" for t, s in row["seconds"].items()), file=sys.stderr)
    print(f"measures: {', '.join(MEASURES)}; docs per query: {args.docs}; src: {args.src}; "
          f"median of {args.repeat} alternating runs; trec_eval: {te_note}"
          + (f"; baseline: {args.baseline_src}" if args.baseline_src else ""))
    print()
    base_head = ("| baseline s | baseline / pytrec_eval | baseline peak GB "
                 if args.baseline_src else "")
    print("| shape | queries | run lines | shareval s | pytrec_eval s | / pytrec_eval "
          "| trec_eval -q s | / trec_eval | shareval peak GB " + base_head
          + "| identical (1e-9) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" * 3 if args.baseline_src
                                                           else "") + "---|")
    for r in rows:
        sec = r["seconds"]
        same = "yes" if r["max_diff"] <= 1e-9 else f"NO ({r['max_diff']:.2e})"
        te = (f"{sec['trec_eval']:.2f} | {sec['shareval'] / sec['trec_eval']:.2f}"
              if "trec_eval" in sec else "- | -")
        print(f"| {r['shape']} | {r['queries']:,} | {r['run_lines']:,} | {sec['shareval']:.3f} "
              f"| {sec['pytrec_eval']:.3f} | {sec['shareval'] / sec['pytrec_eval']:.2f} | {te} "
              f"| {r['peak']['shareval']:.2f} | " + (
                  f"{sec['baseline']:.3f} | {sec['baseline'] / sec['pytrec_eval']:.2f} "
                  f"| {r['peak']['baseline']:.2f} | " if "baseline" in sec else "")
              + f"{same} |")
    print()
    for r in rows:
        sec = r["seconds"]
        small = r["queries"] <= 1000
        goals = []
        if small:
            goals.append(("<= 0.1 s", sec["shareval"] <= 0.1))
        if r["queries"] >= 20000:
            goals.append(("<= 0.5 x pytrec_eval", sec["shareval"] <= 0.5 * sec["pytrec_eval"]))
        if "trec_eval" in sec:
            goals.append(("<= 0.5 x trec_eval", sec["shareval"] <= 0.5 * sec["trec_eval"]))
        mem_limit = max(1.0, r["run_lines"] / 1e7)        # 1 GB per 10M lines, at least 1 GB
        goals.append((f"peak <= {mem_limit:.2f} GB", r["peak"]["shareval"] <= mem_limit))
        goals.append(("identical", r["max_diff"] <= 1e-9))
        print(f"{r['shape']} {r['queries']:,}: " + "; ".join(
            f"{g}: {'met' if ok else 'NOT met'}" for g, ok in goals))


if __name__ == "__main__":
    main()
