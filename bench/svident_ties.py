"""What SV-Ident Task 2's tie rule changes on real data: ``ties=official`` against ``ties=id``.

    PYTHONPATH=src python bench/svident_ties.py [--data ../shared/data]
        [--val ../oracle-svident/data/val.tsv] [--oracle ../oracle-svident]

Two runs with tied scores, written as a simple system writes them (every candidate
variable with its score, in the candidates' own order, not sorted):

* trial data (``trial/train/{en,de}.tsv``): every variable of the language's trial
  vocabulary, in the vocabulary's order, scored by the number of distinct words
  (3 letters or more) its label, topic and question share with the sentence: an
  integer, so most scores tie, in lists of 182 (en) and 224 (de) variables;
* validation data (the organizers' ``data/train/val.tsv``, not in ../shared/data; give
  it with ``--val``): the variables annotated in ``train.tsv`` for the sentence's
  research data, in order of first annotation, scored by how many training sentences
  mention them (2 to 80 candidates).

Each run is also written with scores equal only in single precision: ``1 + score +
1e-9 * u``, ``u`` uniform in [0, 1) (a system's random tie-breaker): as doubles they
are distinct, as 32-bit floats every score level is one value; and unscored, every
candidate 1.0 (a system that returns a set).

Prints MAP@10 and R-precision under both rules and their differences; with
``--oracle`` (``bench/oracle/svident_task2.sh`` builds it) also the official script's
MAP@10 and R-precision on the runs it accepts.
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from shareval.tasks import get

ROOT = Path(__file__).resolve().parents[1]
WORD = re.compile(r"\w{3,}")
TRIAL_ITEM = re.compile(r"^(.+?)\s*-\s*(yes|no)$", re.IGNORECASE)


def rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def trial_relevant(cell: str) -> list[str]:
    out = []
    for item in cell.split(","):
        m = TRIAL_ITEM.match(item.strip())
        if m and m.group(2).lower() == "yes" and m.group(1) not in out:
            out.append(m.group(1))
    return out


def lexical_run(reference: Path, vocabulary: Path) -> dict:
    """{uuid: {variable: overlap}} for the trial sentences with a relevant variable.
    Vocabulary ids are the trial ids with a leading 'v' (``v293`` for ``293``)."""
    vocab = [(r["id"][1:], words(" ".join((r["label"], r["topic"], r["question"]))))
             for r in rows(vocabulary)]
    return {r["uuid"]: {vid: len(words(r["text"]) & ws) for vid, ws in vocab}
            for r in rows(reference) if trial_relevant(r["variable"])}


def shared_ids(cell: str) -> list[str]:
    return [v.strip() for v in cell.split(";") if v.strip() and v.strip() != "unk"]


def popularity_run(reference: Path, train: Path) -> dict:
    """{uuid: {variable: training mentions}} for the sentences with a relevant variable;
    candidates: the training annotations of the sentence's research data."""
    count, of_data = Counter(), {}
    for r in rows(train):
        for v in shared_ids(r["variable"]):
            count[v] += 1
            for rd in r["research_data"].split(";"):
                of_data.setdefault(rd, {})[v] = None
    run = {}
    for r in rows(reference):
        if shared_ids(r["variable"]):
            cands = {v: None for rd in r["research_data"].split(";") for v in of_data.get(rd, {})}
            # the official script needs every evaluated sentence ranked
            run[r["uuid"]] = {v: count[v] for v in cands} or {"none": 0}
    return run


def single_precision(run: dict, seed: int = 0) -> dict:
    """The same ranking levels, distinct as doubles, equal as 32-bit floats."""
    rng = random.Random(seed)
    return {u: {v: 1.0 + s + 1e-9 * rng.random() for v, s in vs.items()} for u, vs in run.items()}


def unscored(run: dict) -> dict:
    return {u: {v: 1.0 for v in vs} for u, vs in run.items()}


def variants(tied: dict) -> list[tuple[str, dict]]:
    return [("tied", tied), ("single precision", single_precision(tied)),
            ("unscored", unscored(tied))]


def score_both(reference: Path, run: dict, folder: Path) -> dict:
    sub = folder / "run.json"
    sub.write_text(json.dumps(run))
    task = get("svident-disambiguation")
    return {ties: task.score(reference, sub, ties=ties) for ties in ("official", "id")}


def official_scores(oracle: Path, reference: Path, run: dict, lang: str | None) -> dict:
    """The organizers' script on the run (``svident_task2_driver.py``)."""
    ref = rows(reference)
    if lang is None:
        qrels = {r["uuid"]: {v: 1 for v in shared_ids(r["variable"])} for r in ref
                 if shared_ids(r["variable"])}
        langs = {r["uuid"]: r["lang"] for r in ref}
    else:
        qrels = {r["uuid"]: {v: 1 for v in trial_relevant(r["variable"])} for r in ref
                 if trial_relevant(r["variable"])}
        langs = {r["uuid"]: lang for r in ref}
    case = {"qrels": qrels, "run": json.dumps(run), "langs": langs,
            "docs": {r["uuid"]: r["doc_id"] for r in ref}, "metrics": ["map@10", "r-precision"]}
    with tempfile.TemporaryDirectory() as tmp:
        cases, out = Path(tmp) / "cases.json", Path(tmp) / "out.json"
        cases.write_text(json.dumps([case]))
        subprocess.run([str(oracle / "venv" / "bin" / "python"),
                        str(ROOT / "bench" / "oracle" / "svident_task2_driver.py"),
                        str(oracle / "evaluate_task2.py"), str(cases), str(out)],
                       check=True, env={"PATH": "/usr/bin:/bin"})
        result = json.loads(out.read_text())[0]
    if "error" in result:
        raise RuntimeError(result["error"])
    return result["macro_scores"]


def datasets(data: Path, val: Path | None):
    """(name, reference, run builder, language for the official script's langs file)."""
    trial = data / "sv-ident" / "trial"
    for lang in ("en", "de"):
        ref, vocab = trial / "train" / f"{lang}.tsv", trial / "vocabulary" / f"{lang}.tsv"
        if ref.is_file():
            yield f"trial {lang}", ref, lambda ref=ref, vocab=vocab: lexical_run(ref, vocab), lang
    if val is not None and val.is_file():
        yield ("validation", val,
               lambda: popularity_run(val, data / "sv-ident" / "train" / "train.tsv"), None)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--val", type=Path, default=ROOT.parent / "oracle-svident" / "data" / "val.tsv")
    ap.add_argument("--oracle", type=Path, default=None)
    args = ap.parse_args(argv)
    print("| data | run | MAP@10 official | MAP@10 id | diff | R-prec official | R-prec id | diff |"
          + (" official script MAP@10 / R-prec |" if args.oracle else ""))
    print("|---|---|---|---|---|---|---|---|" + ("---|" if args.oracle else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for name, ref, build, lang in datasets(args.data, args.val):
            tied = build()
            for kind, run in variants(tied):
                r = score_both(ref, run, Path(tmp))
                m = {t: (r[t].metrics["map@10"], r[t].metrics["r_precision"]) for t in r}
                line = (f"| {name} | {kind} | {m['official'][0]:.4f} | {m['id'][0]:.4f} | "
                        f"{m['official'][0] - m['id'][0]:+.4f} | {m['official'][1]:.4f} | "
                        f"{m['id'][1]:.4f} | {m['official'][1] - m['id'][1]:+.4f} |")
                if args.oracle:
                    o = official_scores(args.oracle, ref, run, lang)
                    line += f" {o['map@10']:.4f} / {o['r-precision']:.4f} |"
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
