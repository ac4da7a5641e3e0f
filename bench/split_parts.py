"""Cost of scoring both parts of a public/private split (docs/dev/platform-measurements.md).

    PYTHONPATH=src python bench/split_parts.py [--queries 500] [--depth 1000] [--out DIR]

Generates (seeded) a TREC qrels of QUERIES x 100 judgments and a run of
QUERIES x DEPTH lines, then times ``trec`` on the whole run and
``shareval.tasks.splits.score_parts`` (one read, both parts restricted in
memory), twice each, and prints the MAP of the whole run and of each part.
"""
from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from shareval.tasks import get
from shareval.tasks.splits import score_parts


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--queries", type=int, default=500)
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--out", default="out/bench-split")
    args = p.parse_args()
    d = Path(args.out)
    d.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    with open(d / "qrels", "w") as f:
        for q in range(args.queries):
            for doc in rng.sample(range(5000), 100):
                f.write(f"q{q} 0 d{doc} {rng.choice((0, 1, 2))}\n")
    with open(d / "run", "w") as f:
        for q in range(args.queries):
            for r, doc in enumerate(rng.sample(range(5000), args.depth), 1):
                f.write(f"q{q} Q0 d{doc} {r} {rng.random():.6f} t\n")
    t, split = get("trec"), {"fraction": 0.5, "seed": 13}
    for _ in range(2):
        a = time.perf_counter()
        whole = t.score(str(d / "qrels"), str(d / "run"))
        b = time.perf_counter()
        pub, priv = score_parts(t, str(d / "qrels"), str(d / "run"), split, {})
        c = time.perf_counter()
        print(f"whole {b - a:.2f}s  both parts {c - b:.2f}s  MAP whole "
              f"{whole.metrics['map']:.4f} public {pub['metrics']['map']:.4f} private "
              f"{priv['metrics']['map']:.4f}  queries {pub['counts']['queries_in_qrels']}"
              f"+{priv['counts']['queries_in_qrels']}")


if __name__ == "__main__":
    main()
