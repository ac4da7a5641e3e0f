"""``shareval demo``: score perturbed copies of real gold and print the tables.

Sources, in order: ``--data``, ``../shared/data`` (relative to the working
directory), else a small synthetic sample made here (no real data is bundled
in the package). Every submission is built by a seeded perturbation whose
exact counts are known, and the demo checks the scorer reproduces them.
"""
from __future__ import annotations

import csv
import json
import random
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from . import tasks
from .formats.trec import write_qrels, write_run
from .report import print_result
from .plots import save_figure
from .progress import steps
from .stats import agreement_result, compare_result

SEED = 20190101
# scorings (RCC citations 3, mentions 1, SV-Ident 2, TREC 1, classification 1), the
# comparison and the agreement; the SV-Ident trial data adds 2 disambiguation scorings
DEMO_STEPS = 10


# ---------------------------------------------------------------------------
# Gold sources

def find_data(data: str | None) -> Path | None:
    for cand in ([data] if data else []) + ["../shared/data", "shared/data"]:
        p = Path(cand)
        if (p / "rcc" / "train" / "data_set_citations.json").is_file() and \
                (p / "sv-ident" / "train" / "train.tsv").is_file():
            return p
    if data:
        raise SystemExit(f"--data {data}: expected rcc/train/data_set_citations.json and "
                         f"sv-ident/train/train.tsv below it")
    return None


def synthetic_sample(out: Path) -> Path:
    """A small made-up corpus in the real layouts (no real text)."""
    rng = random.Random(SEED)
    root = out / "synthetic-data"
    (root / "rcc" / "train").mkdir(parents=True, exist_ok=True)
    (root / "sv-ident" / "train").mkdir(parents=True, exist_ok=True)
    surveys = ["Panel Study of Income Dynamics", "General Social Survey", "Health and Retirement "
               "Study", "National Longitudinal Survey of Youth", "Current Population Survey",
               "American Community Survey", "European Social Survey", "Socio-Economic Panel"]
    citations, pubs, cid = [], [], 1
    for pub in range(1, 121):
        pubs.append({"publication_id": pub, "title": f"Synthetic publication {pub}"})
        if pub % 2:
            continue
        for ds in rng.sample(range(1, 41), rng.randint(1, 3)):
            name = surveys[ds % len(surveys)]
            mentions = [f"{name} {1990 + ds}", "".join(w[0] for w in name.split()).upper()]
            citations.append({"citation_id": cid, "publication_id": pub, "data_set_id": ds,
                              "mention_list": mentions, "score": 1.0})
            cid += 1
    (root / "rcc" / "train" / "data_set_citations.json").write_text(json.dumps(citations, indent=1))
    (root / "rcc" / "train" / "publications.json").write_text(json.dumps(pubs, indent=1))
    rows = []
    for doc in range(8):
        lang = "en" if doc < 4 else "de"
        for s in range(30):
            var = rng.random() < 0.4
            vars_ = ";".join(f"ds{doc}_v{rng.randint(1, 40)}" for _ in range(rng.randint(1, 3)))
            rows.append([f"Synthetic sentence {s} of document {doc}.", "1" if var else "0",
                         vars_ if var else "", f"ZA{doc}", f"doc{doc}",
                         f"{doc:04d}{s:04d}-0000-4000-8000-000000000000", lang])
    with open(root / "sv-ident" / "train" / "train.tsv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["sentence", "is_variable", "variable", "research_data", "doc_id", "uuid",
                    "lang"])
        w.writerows(rows)
    return root


# ---------------------------------------------------------------------------
# Perturbations with known outcomes

def perturb_citations(gold: list[dict], rng: random.Random, drop: float, add: float,
                      pubs: list, datasets: list) -> tuple[list[dict], dict]:
    pairs = {(str(c["publication_id"]), str(c["data_set_id"])) for c in gold}
    kept = [c for c in gold if rng.random() >= drop]
    kept_pairs = {(str(c["publication_id"]), str(c["data_set_id"])) for c in kept}
    sub = [{"publication_id": c["publication_id"], "data_set_id": c["data_set_id"],
            "score": round(rng.uniform(0.45, 1.0), 3), "mention_list": c["mention_list"][:1]}
           for c in kept]
    n_fp = int(round(add * len(gold)))
    fps = set()
    while len(fps) < n_fp:
        key = (str(rng.choice(pubs)), str(rng.choice(datasets)))
        if key not in pairs and key not in fps:
            fps.add(key)
    for p, d in sorted(fps):
        sub.append({"publication_id": int(p) if p.isdigit() else p,
                    "data_set_id": int(d) if d.isdigit() else d,
                    "score": round(rng.uniform(0.0, 0.7), 3), "mention_list": []})
    rng.shuffle(sub)
    return sub, {"tp": len(kept_pairs), "fp": len(fps), "fn": len(pairs) - len(kept_pairs)}


def perturb_mentions(gold: list[dict], rng: random.Random) -> list[dict]:
    by_pub = defaultdict(set)
    for c in gold:
        for m in c["mention_list"]:
            by_pub[c["publication_id"]].add(m)
    out = []
    for pub, mentions in by_pub.items():
        for m in sorted(mentions):
            r = rng.random()
            if r < 0.15:
                continue                                   # missed
            if r < 0.35 and len(m.split()) >= 3:
                m = " ".join(m.split()[:-1])               # truncated: a partial match
            out.append({"publication_id": pub, "mention": m, "score": round(rng.random(), 3)})
        if rng.random() < 0.2:
            out.append({"publication_id": pub, "mention": "the data", "score": 0.1})
    return out


def read_tsv(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


# ---------------------------------------------------------------------------

def run_demo(data: str | None, out: str, console: Console) -> int:
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    root = find_data(data)
    if root is None:
        console.print("[yellow]../shared/data not found: using a small synthetic sample[/yellow]")
        root = synthetic_sample(out_dir)
    else:
        console.print(f"gold data: {root.resolve()}")
    with steps(DEMO_STEPS + 2 * (root / "sv-ident" / "trial" / "train" / "en.tsv").is_file(),
               "demo") as advance:
        return _run_demo(root, out_dir, console, advance)


def _run_demo(root: Path, out_dir: Path, console: Console, advance) -> int:
    """The demo's steps (``advance`` moves the progress bar after each scoring)."""
    rng = random.Random(SEED)
    summary: list[tuple[str, str, str, float, str]] = []
    checks_failed = 0

    def show(task_name, ref, sub, label, expect=None, plot=None, **opts):
        nonlocal checks_failed
        task = tasks.get(task_name)
        advance(0, what=f"demo: {task_name}")
        result = task.score(ref, sub, **opts)
        if plot:
            save_figure(result, plot)
        advance()
        console.rule(f"{task_name}: {label}")
        print_result(result, console, max_rows=8, show_conventions=False)
        status = ""
        if expect:
            got = {k: result.to_dict()["metrics"].get(k, result.counts.get(k)) for k in expect}
            ok = got == expect
            checks_failed += not ok
            status = "counts as constructed" if ok else f"MISMATCH: built {expect}, scored {got}"
        summary.append((task_name, label, task.primary_metric,
                        result.metrics.get(task.primary_metric, float("nan")), status))
        return result

    # --- RCC citations --------------------------------------------------------
    rcc = root / "rcc" / "train"
    gold = json.loads((rcc / "data_set_citations.json").read_text(encoding="utf-8"))
    pubs_file = rcc / "publications.json"
    pubs = [p["publication_id"] for p in json.loads(pubs_file.read_text(encoding="utf-8"))] \
        if pubs_file.exists() else sorted({c["publication_id"] for c in gold})
    datasets = sorted({c["data_set_id"] for c in gold})
    show("rcc-citations", rcc, rcc / "data_set_citations.json", "gold against itself",
         {"tp": len({(c["publication_id"], c["data_set_id"]) for c in gold}), "fp": 0, "fn": 0})
    for label, drop, add in (("team-a (drops 10%, adds 5%)", 0.10, 0.05),
                             ("team-b (drops 30%, adds 20%)", 0.30, 0.20)):
        sub, expect = perturb_citations(gold, rng, drop, add, pubs, datasets)
        path = out_dir / f"citations-{label.split()[0]}.json"
        path.write_text(json.dumps(sub, indent=1), encoding="utf-8")
        show("rcc-citations", rcc, path, label, expect, plot=str(path.with_suffix(".png")))
    console.print(f"precision-recall curves: {out_dir}/citations-team-*.png")

    # --- RCC mentions -----------------------------------------------------------
    mpath = out_dir / "mentions-team-a.json"
    mpath.write_text(json.dumps(perturb_mentions(gold, rng), indent=1), encoding="utf-8")
    show("rcc-mentions", rcc / "data_set_citations.json", mpath, "team-a (missed, truncated, noise)")

    # --- SV-Ident detection -----------------------------------------------------
    sv_ref = root / "sv-ident" / "train" / "train.tsv"
    rows = read_tsv(sv_ref)
    sub_paths = []
    for label, flip in (("team-a (flips 10%)", 0.10), ("team-b (flips 25%)", 0.25)):
        pred = {r["uuid"]: (1 - int(r["is_variable"])) if rng.random() < flip
                else int(r["is_variable"]) for r in rows}
        path = out_dir / f"detection-{label.split()[0]}.json"
        path.write_text(json.dumps(pred), encoding="utf-8")
        sub_paths.append(path)
        show("svident-detection", sv_ref, path, label)
    advance(0, what="demo: compare team-a vs team-b")
    cmp_result = compare_result("svident-detection", sv_ref, *sub_paths, samples=2000)
    advance()
    console.rule("compare svident-detection team-a vs team-b")
    print_result(cmp_result, console, show_conventions=False)

    # --- SV-Ident disambiguation: trial data with its vocabulary -----------------
    trial = root / "sv-ident" / "trial"
    if (trial / "train" / "en.tsv").is_file():
        for lang in ("en", "de"):
            ref = trial / "train" / f"{lang}.tsv"
            vocab = [r["id"].removeprefix("v") for r in read_tsv(trial / "vocabulary" / f"{lang}.tsv")]
            run = {}
            for r in read_tsv(ref):
                gold_vars = [v[:-4] for v in r["variable"].split(",") if v.endswith("-Yes")]
                if not gold_vars:
                    continue
                cands = rng.sample(vocab, min(20, len(vocab)))
                ranked = {v: rng.random() for v in cands}
                for v in gold_vars:
                    ranked[v] = rng.random() + (0.5 if rng.random() < 0.6 else 0.0)
                run[r["uuid"]] = ranked
            path = out_dir / f"disambiguation-{lang}.json"
            path.write_text(json.dumps(run), encoding="utf-8")
            show("svident-disambiguation", ref, path, f"trial {lang} (noisy ranking)")

    # --- Generic TREC: publications as queries, datasets as documents -------------
    qrels, run = defaultdict(dict), defaultdict(dict)
    for c in gold:
        qrels[str(c["publication_id"])][str(c["data_set_id"])] = 1
    for q, rel in qrels.items():
        for d in rel:
            if rng.random() < 0.8:
                run[q][d] = rng.uniform(0.3, 1.0)
        for d in rng.sample(datasets, 10):
            run[q].setdefault(str(d), rng.uniform(0.0, 0.8))
    write_qrels(out_dir / "citations.qrels", qrels)
    write_run(out_dir / "citations.run", run, tag="demo")
    show("trec", out_dir / "citations.qrels", out_dir / "citations.run",
         "publications -> datasets ranking")

    # --- Classification and agreement on SV-Ident labels --------------------------
    with open(out_dir / "labels-gold.tsv", "w", encoding="utf-8") as g, \
            open(out_dir / "labels-team-a.tsv", "w", encoding="utf-8") as s, \
            open(out_dir / "annotations.tsv", "w", encoding="utf-8") as a:
        g.write("item\tlabel\n")
        s.write("item\tlabel\n")
        a.write("item\tannotator\tlabel\n")
        for r in rows:
            y = "variable" if r["is_variable"] == "1" else "none"
            other = "none" if y == "variable" else "variable"
            g.write(f"{r['uuid']}\t{y}\n")
            s.write(f"{r['uuid']}\t{other if rng.random() < 0.2 else y}\n")
            for ann, noise in (("A1", 0.15), ("A2", 0.25), ("A3", 0.2)):
                if rng.random() < 0.9:
                    a.write(f"{r['uuid']}\t{ann}\t{other if rng.random() < noise else y}\n")
    show("classification", out_dir / "labels-gold.tsv", out_dir / "labels-team-a.tsv",
         "SV-Ident labels, 20% flipped")
    console.rule("agreement: three simulated annotators, 10% missing")
    advance(0, what="demo: agreement")
    agree = agreement_result(out_dir / "annotations.tsv")
    advance()
    print_result(agree, console, show_conventions=False)

    # --- Summary --------------------------------------------------------------------
    t = Table(title="demo summary", title_justify="left", header_style="bold")
    for c in ("task", "submission", "primary metric", "value", "check"):
        t.add_column(c)
    for task_name, label, metric, value, status in summary:
        t.add_row(task_name, label, metric, f"{value:.4f}", status)
    console.rule()
    console.print(t)
    console.print(f"files written to {out_dir.resolve()}; rerun any line, e.g.\n"
                  f"  shareval score rcc-citations --reference {rcc} "
                  f"--submission {out_dir}/citations-team-a.json")
    if checks_failed:
        console.print(f"[red]{checks_failed} constructed-count checks failed[/red]")
        return 1
    return 0
