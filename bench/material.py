"""MATERIAL scale benchmark: validate + score a CLIR submission of evaluation size.

    python bench/material.py [--queries 1300] [--docs 15000] [--seed 0] [--keep DIR]

Generates (seeded) a reference pack and a submission of one <QueryID>.tsv per
query with one line per document (1,300 x 15,000 = 19.5 million lines), then
times, as a user runs them, ``shareval validate material-clir`` and
``shareval score material-clir`` (each a fresh process), against a bare Python
line count of the same files (``sum(1 for _ in open(f, 'rb'))``). Prints the
ratio and each command's peak RSS. Targets: at most 5x the line count, peak
RSS at most 4 GiB.
"""
from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DOMAINS = ["Government-And-Politics", "Lifestyle", "Business-And-Commerce", "Law-And-Order",
           "Physical-And-Mental-Health", "Military"]
TYPES = ["lexical", "conceptual", "hybrid"]


def generate(root: Path, n_q: int, n_d: int, seed: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    pack, sub = root / "pack", root / "MySystem1"
    (pack / "clir").mkdir(parents=True)
    sub.mkdir()
    docs = [f"MATERIAL_EVAL1-1A_{i:08d}" for i in rng.choice(10**8, n_d, replace=False)]
    (pack / "pack.yaml").write_text("language: 1A\neval_period: EVAL1\ndocid_pattern: true\n")
    (pack / "documents.tsv").write_text("doc_id\tgenre\n" + "".join(f"{d}\ttext\n" for d in docs))
    words = ["ebola", "music", "bribery", "court", "panel", "election", "tax", "army", "school"]
    lines = ["query_id\tquery\ttype"]
    for q in range(n_q):
        text = " ".join(rng.choice(words, rng.integers(1, 4)))
        lines.append(f"query{q:05d}\t{text}:{DOMAINS[q % len(DOMAINS)]}\t{TYPES[q % 3]}")
    (pack / "queries.tsv").write_text("\n".join(lines) + "\n")
    doc_arr = np.array(docs)
    for q in range(n_q):
        n_rel = int(rng.integers(0, 20)) if q % 10 else 0           # 10% with no relevant
        rel = rng.choice(n_d, n_rel, replace=False)
        flags = np.full(n_d, "N")
        flags[rel] = "Y"                        # references list every document (plan 7.3.1)
        (pack / "clir" / f"query{q:05d}.tsv").write_text(
            "\n".join("\t".join(t) for t in zip(doc_arr, flags)) + "\n")
        conf = rng.random(n_d) * 0.6
        conf[rel] += rng.random(n_rel) * 0.4
        decision = np.where(conf >= 0.5, "Y", "N")
        conf_text = np.char.mod("%.5f", conf)
        body = "\n".join("\t".join(t) for t in zip(doc_arr, decision, conf_text)) + "\n"
        (sub / f"query{q:05d}.tsv").write_text(body)
    return pack, sub


def run(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds and peak RSS (GB) of a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1e6
    return elapsed, peak, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=1300)
    ap.add_argument("--docs", type=int, default=15000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", help="generate into this folder and keep it")
    args = ap.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="shareval-material-"))
    try:
        if not (root / "pack").exists():
            t = time.perf_counter()
            generate(root, args.queries, args.docs, args.seed)
            print(f"generated in {time.perf_counter() - t:.0f}s")
        pack, sub = root / "pack", root / "MySystem1"
        files = sorted(sub.glob("*.tsv"))
        for f in files:                                   # warm the OS cache for everyone
            f.read_bytes()
        t = time.perf_counter()
        n_lines = sum(sum(1 for _ in open(f, "rb")) for f in files)
        t_count = time.perf_counter() - t
        size = sum(f.stat().st_size for f in files) / 1e6
        print(f"{len(files):,} files, {n_lines:,} lines, {size:.0f} MB")
        exe = [sys.executable, "-m", "shareval.cli"]
        t_val, rss_val, _ = run(exe + ["validate", "material-clir", "-s", str(sub), "-r", str(pack),
                                       "--quiet"])
        t_score, rss_score, out = run(exe + ["score", "material-clir", "-s", str(sub), "-r",
                                             str(pack), "--quiet", "--format", "json"])
        import json
        metrics = json.loads(out)["metrics"]
        print(f"aqwv {metrics['aqwv']:.4f}  mqwv {metrics['mqwv']:.4f}  "
              f"oracle {metrics['oracle_qwv']:.4f}  auc {metrics['roc_auc']:.4f}")
        print()
        print(f"{'step':<40}{'seconds':>10}{'x line count':>14}{'peak RSS GB':>13}")
        print(f"{'bare Python line count':<40}{t_count:>10.2f}{1.0:>14.2f}{'':>13}")
        print(f"{'shareval validate material-clir':<40}{t_val:>10.2f}{t_val / t_count:>14.2f}"
              f"{rss_val:>13.2f}")
        print(f"{'shareval score material-clir':<40}{t_score:>10.2f}{t_score / t_count:>14.2f}"
              f"{rss_score:>13.2f}")
        total = t_val + t_score
        print(f"{'validate + score':<40}{total:>10.2f}{total / t_count:>14.2f}"
              f"{max(rss_val, rss_score):>13.2f}")
        print()
        print(f"target <= 5x line count: {'met' if total <= 5 * t_count else 'NOT met'} "
              f"({total / t_count:.2f}x); peak RSS <= 4 GiB: "
              f"{'met' if max(rss_val, rss_score) <= 4 * 1.073741824 else 'NOT met'}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
