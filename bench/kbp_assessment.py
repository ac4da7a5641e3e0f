"""KBP assessment on Re-DocRED with simulated teams, judges and annotators (issue 38).

    PYTHONPATH=src python bench/kbp_assessment.py [--reps 200] [--n 200]
        [--docs 10,25,50] [--errors 0,0.05] [--miss M] [--markdown] [--data DIR]

Three teams' runs are made from Re-DocRED's annotations with known errors
(assessment.kbp_sim; their true mention-level P/R/F1 are what ``shareval score
kbp-relations`` prints). For each judge error rate e (each chain answer flipped
with probability e; annotators reject a true suggestion or accept a false one
with probability e and miss an unsuggested true item with probability --miss,
default e), each repetition:

1. precision: draws --n items per team (uniform and joint designs,
   assessment.sample), judges answer the relation chain; ``estimate_all``;
2. recall: draws max(--docs) documents of the 500; an annotator annotates each
   with the pooled outputs as suggestions; the first D' of them give recall
   (assessment.exhaustive.recall_judgments + ``estimate_all``) and F1;
3. on demand (assessment.ondemand.OnDemand, target half-width --half-width):
   each team alone, then A and B followed by the late team C.

Reported: the truth; one repetition's estimates with intervals; bias, interval
coverage and half-width over the repetitions, against the truth and, for e > 0,
against what the judges' answers estimate (``P under judges``: the chance that
a judge says correct, averaged over the output; ``R under annotators``
likewise); judgments to reach the half-width; judgments the late team saves by
reuse. Prints tables (``--markdown``: markdown tables); asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PROFILES = [  # name, keep, wrong relation, wrong span, spurious per document, pairs per label
    ("A", 0.75, 0.08, 0.04, 2.0, 0),
    ("B", 0.60, 0.12, 0.08, 4.0, 2),
    ("C", 0.45, 0.15, 0.10, 6.0, 1),
]


def floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def render(title: str, header: list[str], rows: list[list], markdown: bool) -> str:
    cells = [[c if isinstance(c, str) else f"{c:.3f}" if isinstance(c, float) else str(c)
              for c in r] for r in rows]
    if markdown:
        out = [f"\n**{title}**\n", "| " + " | ".join(header) + " |",
               "|" + "|".join("---" for _ in header) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in cells]
        return "\n".join(out)
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(header)]
    line = lambda r: "  ".join(c.rjust(w) if i else c.ljust(w)  # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([f"\n{title}", line(header), line(["-" * w for w in widths])]
                     + [line(r) for r in cells])


class Stat:
    """Estimates, interval hits and half-widths of one quantity over repetitions."""

    def __init__(self):
        self.err, self.hit, self.hit_target, self.half, self.extra = [], [], [], [], []

    def add(self, est, lo, hi, truth, target, extra=None):
        self.err.append(est - truth)
        self.hit.append(lo <= truth <= hi)
        self.hit_target.append(lo <= target <= hi)
        self.half.append((hi - lo) / 2)
        if extra is not None:
            self.extra.append(extra)

    def cov(self, target=False) -> str:
        h = np.array(self.hit_target if target else self.hit, dtype=float)
        return f"{h.mean():.3f}"

    def bias(self) -> str:
        e = np.array(self.err)
        return f"{e.mean():+.4f} ({e.std(ddof=1) / np.sqrt(e.size) if e.size > 1 else 0:.4f})"


def doc_interval(records, name: str, population: int, confidence: float = 0.95):
    """A candidate recall interval, NOT the library's: the ratio estimator's
    linearised variance over documents (the sampling unit) with the finite-population
    correction and Student's t on D' - 1 degrees of freedom. Diagnostic only."""
    from scipy.stats import t as student
    num, den = defaultdict(float), defaultdict(float)
    for r in records:
        den[r.doc] += r.answer
        num[r.doc] += r.answer * (name in r.submissions)
    docs = sorted(den)
    y, x = np.array([num[d] for d in docs]), np.array([den[d] for d in docs])
    k = len(docs)
    if k < 2 or x.sum() == 0:
        return float("nan"), float("nan")
    est = y.sum() / x.sum()
    u = (y - est * x) / x.mean()
    se = np.sqrt((1 - k / population) * u.var(ddof=1) / k)
    q = student.ppf(1 - (1 - confidence) / 2, k - 1)
    return max(0.0, est - q * se), min(1.0, est + q * se)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n", type=int, default=200, help="precision draws per team")
    ap.add_argument("--docs", default="10,25,50", help="D': annotated documents")
    ap.add_argument("--errors", default="0,0.05", help="judge error rates")
    ap.add_argument("--miss", type=float, default=None,
                    help="annotators' miss rate (default: the error rate)")
    ap.add_argument("--half-width", type=float, default=0.05)
    ap.add_argument("--pilot", type=int, default=50)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parts", default="precision,recall,ondemand",
                    help="what to measure (recall and precision together give F1)")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    parts = {p.strip() for p in a.parts.split(",") if p.strip()}
    if not parts or parts - {"precision", "recall", "ondemand"}:
        ap.error("--parts: a comma-separated list of precision, recall, ondemand")
    docs_path = Path(a.data) / "kbp" / "re-docred-dev.json"
    if not docs_path.exists():
        print(f"skipped: Re-DocRED not found at {docs_path} (give --data: the folder holding "
              f"kbp/re-docred-dev.json and kbp/relations.json)")
        return 0
    from shareval.assessment import kbp_judges as kj
    from shareval.assessment import kbp_sim as ks
    from shareval.assessment.estimate import estimate_all
    from shareval.assessment.exhaustive import recall_judgments
    from shareval.assessment.judgments import Judgments
    from shareval.assessment.ondemand import OnDemand
    from shareval.assessment.sample import draw_sample
    from shareval.formats.errors import Problems
    from shareval.formats.kbp import read_reference
    from shareval.metrics.estimation import z_value

    t0 = time.time()
    ref = read_reference(docs_path.parent, Problems())
    oracle = ks.Oracle(ref)
    runs = ks.make_runs(oracle, [ks.TeamProfile(*p) for p in PROFILES], seed=a.seed)
    names = [r.name for r in runs]
    outputs = [r.output() for r in runs]
    keys = {r.name: r.keys() for r in runs}
    truth = {r.name: ks.truth(ref, r.predictions) for r in runs}
    titles = sorted(ref.documents)
    d_list = sorted(int(x) for x in floats(a.docs))
    errors = floats(a.errors)
    pool = set().union(*keys.values())
    out = []
    md = a.markdown

    out.append(render(
        f"Teams made from Re-DocRED's dev set ({len(titles)} documents, "
        f"{truth['A'].gold} true relation mentions; seed {a.seed})",
        ["team", "keep", "wrong rel", "wrong span", "spurious/doc", "pairs/label", "items",
         "true P", "true R", "true F1"],
        [[r.name, r.profile.keep, r.profile.wrong_relation, r.profile.wrong_span,
          r.profile.spurious_per_doc, r.profile.pairs or "all", len(r.predictions),
          truth[r.name].precision, truth[r.name].recall, truth[r.name].f1] for r in runs], md))

    def targets(e: float, miss: float) -> dict[str, tuple[float, float, float]]:
        """What judges and annotators with these error rates estimate (P, R, F1)."""
        j = kj.Judge(oracle, e)
        t = {}
        true_pool = sum(oracle.is_true(k) for k in pool)
        den = (1 - e) * true_pool + e * (len(pool) - true_pool) + \
            (1 - miss) * (truth["A"].gold - true_pool)
        for n in names:
            p = float(np.mean([j.expected(k) for k in keys[n]]))
            tp = truth[n].tp
            r = ((1 - e) * tp + e * (len(keys[n]) - tp)) / den
            t[n] = (p, r, 2 * p * r / (p + r))
        return t

    def recall_records(docs: list[str], miss: float, e: float, seed) -> list:
        """One annotator per document (the same seed: the first D' documents of the
        largest D' are annotated alike), suggestions = the pooled outputs."""
        ann = kj.Annotator(oracle, miss=miss, error=e, seed=seed)
        sugg = kj.suggestions_by_doc(keys, docs)
        marks = {doc: {ann.name: ann.annotate(doc, sugg[doc])} for doc in docs}
        chosen = set(docs)
        mine = {n: {k for k in keys[n] if k.split("|")[0] in chosen} for n in names}
        return recall_judgments(marks, mine, sugg)

    designs = ["uniform", "joint"] if "precision" in parts else [None]
    doc_sizes = d_list if "recall" in parts else [None]
    example: dict = {}
    results = {}
    for e in errors:
        miss = e if a.miss is None else a.miss
        tgt = targets(e, miss)
        S = defaultdict(Stat)
        judged = {d: [] for d in designs}
        alone = {n: [] for n in names}
        late = {"new": [], "draws": [], "reused": [], "stat": Stat()}
        t1 = time.time()
        for rep in range(a.reps):
            # the same random numbers whatever --parts leaves out
            seed = (a.seed, int(e * 1e6), rep)
            rng = np.random.default_rng(seed)
            judge = kj.Judge(oracle, e, seed=[*seed, 1])
            prec = {None: []}
            for d, draw_seed in zip(["uniform", "joint"], rng.integers(2**31, size=2)):
                if d in designs:
                    rows = draw_sample(outputs, a.n, d, seed=int(draw_seed))
                    prec[d] = judge.judgments(rows)
                    judged[d].append(len({r.item for r in rows}))
            picked = [titles[i] for i in rng.choice(len(titles), max(d_list), replace=False)]
            od_seeds = rng.integers(2**31, size=len(names) + 1)
            for dd in doc_sizes:
                rec = []
                if dd is not None:
                    rec = recall_records(picked[:dd], miss, e, [*seed, 2])
                for d in designs:
                    table, _ = estimate_all(Judgments(prec[d] + rec), bootstrap=a.bootstrap,
                                            seed=rep)
                    for n in names:
                        row, tr, tg = table[n], truth[n], tgt[n]
                        if d is not None and dd in (None, d_list[0]):
                            S[d, n, "P"].add(row["precision"], row["precision_low"],
                                             row["precision_high"], tr.precision, tg[0])
                        if dd is not None and d in (None, "joint"):
                            S[dd, n, "R"].add(row["recall"], row["recall_low"],
                                              row["recall_high"], tr.recall, tg[1])
                            S[dd, n, "Rboot"].add(row["recall"], row["recall_boot_low"],
                                                  row["recall_boot_high"], tr.recall, tg[1])
                            lo, hi = doc_interval(rec, n, len(titles))
                            S[dd, n, "Rdoc"].add(row["recall"], lo, hi, tr.recall, tg[1])
                        if d is not None and dd is not None:
                            S[d, dd, n, "F1"].add(row["f1"], row["f1_low"], row["f1_high"],
                                                  tr.f1, tg[2])
                        if rep == 0 and d == "joint" and dd == d_list[-1]:
                            example[e, n] = row
            if "ondemand" in parts:
                # each team alone, then A and B, and the late C reusing their draws
                for n, od_seed in zip(names, od_seeds):
                    ev = OnDemand(seed=od_seed).evaluate(
                        n, keys[n], kj.Judge(oracle, e, seed=[*seed, 3]), a.half_width,
                        pilot=a.pilot)
                    alone[n].append((ev.new_judgments, ev.draws))
                od = OnDemand(seed=od_seeds[-1])
                shared_judge = kj.Judge(oracle, e, seed=[*seed, 4])
                for n in names[:-1]:
                    od.evaluate(n, keys[n], shared_judge, a.half_width, pilot=a.pilot)
                before = len(od.draws)
                ev = od.evaluate(names[-1], keys[names[-1]], shared_judge, a.half_width,
                                 pilot=a.pilot)
                late["new"].append(ev.new_judgments)
                late["draws"].append(ev.draws)
                late["reused"].append(before)
                late["stat"].add(ev.precision, ev.low, ev.high, truth[names[-1]].precision,
                                 tgt[names[-1]][0])
            if (rep + 1) % 25 == 0:
                print(f"  e={e}: {rep + 1}/{a.reps} repetitions [{time.time() - t1:.0f} s]",
                      file=sys.stderr)
        results[e] = (S, judged, alone, late, tgt, miss, time.time() - t1)

    # tables ---------------------------------------------------------------------------
    for e in errors if {"precision", "recall"} <= parts else []:
        rows = []
        for n in names:
            r = example[e, n]
            rows.append([n, f"{truth[n].precision:.3f}",
                         f"{r['precision']:.3f} [{r['precision_low']:.3f}, "
                         f"{r['precision_high']:.3f}]",
                         f"{truth[n].recall:.3f}",
                         f"{r['recall']:.3f} [{r['recall_boot_low']:.3f}, "
                         f"{r['recall_boot_high']:.3f}]",
                         f"{truth[n].f1:.3f}",
                         f"{r['f1']:.3f} [{r['f1_low']:.3f}, {r['f1_high']:.3f}]"])
        out.append(render(f"One repetition, judge error {e}: joint design, {a.n} draws per "
                          f"team, D' = {d_list[-1]} documents (95% intervals; recall: "
                          f"document bootstrap)",
                          ["team", "true P", "P est [interval]", "true R",
                           "R est [interval]", "true F1", "F1 est [interval]"], rows, md))
    se = np.sqrt(0.95 * 0.05 / a.reps)
    note = (f"{a.reps} repetitions; coverage of nominal 0.95 has Monte-Carlo s.e. {se:.3f}; "
            f"bias: mean estimate - truth (its s.e.)")
    if "precision" in parts:
        rows = []
        for e in errors:
            S, judged, _, _, tgt, _, _ = results[e]
            for d in designs:
                for n in names:
                    s = S[d, n, "P"]
                    rows.append([e, d, n, truth[n].precision, tgt[n][0], s.bias(), s.cov(),
                                 s.cov(True) if e else "", float(np.mean(s.half)),
                                 f"{np.mean(judged[d]):.1f}"])
        out.append(render(f"Precision, {a.n} draws per team ({note})",
                          ["e", "design", "team", "true P", "P under judges", "bias vs true",
                           "coverage", "cov. of P under judges", "half-width",
                           "items judged (3 teams)"], rows, md))
    if "recall" in parts:
        rows = []
        for e in errors:
            S, _, _, _, tgt, miss, _ = results[e]
            for dd in d_list:
                for n in names:
                    s, b, c = S[dd, n, "R"], S[dd, n, "Rboot"], S[dd, n, "Rdoc"]
                    rows.append([e, miss, dd, n, truth[n].recall, tgt[n][1], s.bias(),
                                 f"{s.cov()} ({np.mean(s.half):.3f})",
                                 f"{b.cov()} ({np.mean(b.half):.3f})",
                                 b.cov(True) if e else "",
                                 f"{c.cov()} ({np.mean(c.half):.3f})"])
        out.append(render(f"Recall from D' exhaustively annotated documents ({note}). "
                          f"Coverage (mean half-width) of estimate_all's intervals: "
                          f"recall_low/high (documents: Korn-Graubard, Wilson on the "
                          f"effective size, t on D'-1 df) and bootstrap (documents "
                          f"resampled); last column: a candidate interval not in the library "
                          f"(documents, linearised ratio, t on D'-1 df, finite-population "
                          f"correction)",
                          ["e", "miss", "D'", "team", "true R", "R under annotators",
                           "bias vs true", "documents", "bootstrap",
                           "bootstrap, of R under annotators", "candidate"], rows, md))
    if {"precision", "recall"} <= parts:
        rows = []
        for e in errors:
            S, _, _, _, tgt, _, _ = results[e]
            for d in designs:
                for dd in d_list:
                    for n in names:
                        s = S[d, dd, n, "F1"]
                        rows.append([e, d, dd, n, truth[n].f1, tgt[n][2], s.bias(), s.cov(),
                                     s.cov(True) if e else "", float(np.mean(s.half))])
        out.append(render(f"F1 = 2PR/(P+R) (interval: bootstrap of items for P and of "
                          f"documents for R; {note})",
                          ["e", "design", "D'", "team", "true F1", "F1 under judges",
                           "bias vs true", "coverage", "cov. of F1 under judges",
                           "half-width"], rows, md))
    if "ondemand" in parts:
        rows = []
        z = z_value(0.95)
        for e in errors:
            _, _, alone, late, tgt, _, _ = results[e]
            for n in names:
                new, draws = np.array(alone[n]).T
                p = tgt[n][0]
                rows.append([e, n, f"{new.mean():.1f}", f"{draws.mean():.1f}",
                             f"{z * z * p * (1 - p) / a.half_width ** 2:.0f}"])
        out.append(render(f"Judgments to reach ±{a.half_width} for precision, each team "
                          f"evaluated alone (OnDemand: a pilot of {a.pilot} judged draws "
                          f"predicts n, then n fresh draws; mean over {a.reps} repetitions)",
                          ["e", "team", "new judgments", "draws (pilot + n)",
                           "z²p(1-p)/h² (p under judges)"], rows, md))
        rows = []
        for e in errors:
            _, _, alone, late, tgt, _, _ = results[e]
            c = names[-1]
            alone_new = np.array(alone[c])[:, 0]
            new = np.array(late["new"])
            s = late["stat"]
            rows.append([e, c, f"{alone_new.mean():.1f}", f"{new.mean():.1f}",
                         f"{np.mean(late['draws']):.1f}", f"{np.mean(late['reused']):.1f}",
                         f"{alone_new.mean() - new.mean():.1f} "
                         f"({1 - new.mean() / alone_new.mean():.0%})",
                         s.bias(), s.cov(), s.cov(True) if e else "", float(np.mean(s.half))])
        out.append(render(f"Late team {names[-1]} after {', '.join(names[:-1])} (OnDemand, "
                          f"±{a.half_width}; {note})",
                          ["e", "team", "judgments alone", "new judgments late",
                           "own draws", "earlier draws reused", "saved", "bias vs true",
                           "coverage", "cov. of P under judges", "half-width"], rows, md))
    secs = {e: results[e][-1] for e in errors}
    out.append(f"\n{a.reps} repetitions per error rate; "
               + ", ".join(f"e={e}: {s:.0f} s" for e, s in secs.items())
               + f"; total {time.time() - t0:.0f} s")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
