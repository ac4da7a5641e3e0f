"""MATERIAL scale benchmark: validate + score a CLIR submission of evaluation size.

    python bench/material.py [--queries 1300] [--docs 15000] [--seed 0] [--repeat 3]
                             [--keep DIR]

Generates (seeded) a reference pack and a submission of one <QueryID>.tsv per
query with one line per document (1,300 x 15,000 = 19.5 million lines), then
times, as a user runs them, ``shareval validate material-clir`` and
``shareval score material-clir`` (each a fresh process), against a bare Python
line count of the same files (``sum(1 for _ in open(f, 'rb'))``). The three are
run ``--repeat`` times, alternating, and each row shows the median seconds, the
ratio to the median line count and the command's largest peak RSS (issue 41).
Targets: ``score`` at most 2x the line count (it reads the submission's and the
reference's lines), ``validate`` at most 1.5x, peak RSS at most 4 GiB.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
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
    """Wall seconds and peak RSS (GB) of this child process alone (wait4's rusage)."""
    with tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t
        proc.stdout.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                     f"{err.read().decode(errors='replace')[-2000:]}")
    return elapsed, usage.ru_maxrss / 1e6, out.decode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=1300)
    ap.add_argument("--docs", type=int, default=15000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="alternating runs (median)")
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
        exe = [sys.executable, "-m", "shareval.cli"]
        validate = exe + ["validate", "material-clir", "-s", str(sub), "-r", str(pack), "--quiet"]
        score = exe + ["score", "material-clir", "-s", str(sub), "-r", str(pack), "--quiet",
                       "--format", "json"]
        times: dict[str, list[float]] = {"count": [], "validate": [], "score": []}
        peaks = {"validate": 0.0, "score": 0.0}
        for _ in range(args.repeat):                      # alternating: load hits all alike
            t = time.perf_counter()
            n_lines = sum(sum(1 for _ in open(f, "rb")) for f in files)
            times["count"].append(time.perf_counter() - t)
            for key, cmd in (("validate", validate), ("score", score)):
                elapsed, peak, out = run(cmd)
                times[key].append(elapsed)
                peaks[key] = max(peaks[key], peak)
        size = sum(f.stat().st_size for f in files) / 1e6
        print(f"{len(files):,} files, {n_lines:,} lines, {size:.0f} MB; "
              f"median of {args.repeat} alternating runs")
        import json
        metrics = json.loads(out)["metrics"]
        print(f"aqwv {metrics['aqwv']:.4f}  mqwv {metrics['mqwv']:.4f}  "
              f"oracle {metrics['oracle_qwv']:.4f}  auc {metrics['roc_auc']:.4f}")
        med = {k: statistics.median(v) for k, v in times.items()}
        targets = {"validate": 1.5, "score": 2.0}
        gib = 4 * 1.073741824
        print()
        print(f"{'step':<34}{'seconds':>9}{'x line count':>14}{'target':>8}"
              f"{'peak RSS GB':>13}  verdict")
        print(f"{'bare Python line count':<34}{med['count']:>9.2f}{1.0:>14.2f}")
        for key in ("validate", "score"):
            ratio = med[key] / med["count"]
            ok = ratio <= targets[key] and peaks[key] <= gib
            print(f"{'shareval ' + key + ' material-clir':<34}{med[key]:>9.2f}{ratio:>14.2f}"
                  f"{'<= ' + format(targets[key], 'g') + 'x':>8}{peaks[key]:>13.2f}  "
                  f"{'met' if ok else 'NOT met'}")
        total = med["validate"] + med["score"]
        print(f"{'validate + score':<34}{total:>9.2f}{total / med['count']:>14.2f}{'':>8}"
              f"{max(peaks.values()):>13.2f}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
