"""The demo's code submissions (docs/code-submissions.md): an RCC dataset that
takes code, the RCC reference system packaged as an example bundle, and a
task scored by an organizer's program.

- ``rcc-code`` (development phase): the hidden input is the text of
  ``HIDDEN`` held-out publications (the same split as ``rcc-dev``), the public
  sample for the test run ``SAMPLE`` other held-out ones; a system writes
  ``data_set_citations.json``.
- the example bundle (``rcc_system_bundle``): shareval's own source (the RCC
  reference system), its model, the shared catalog, pinned requirements, and a
  manifest that runs ``shareval run rcc`` and keeps the citations file;
- ``rcc-pairs`` (task ``program``): an organizer's scorer counting exact
  (publication, dataset) pairs, precision, recall and F1, on ``rcc-dev``'s
  reference; the prior baseline is scored by it when the demo starts.
"""
from __future__ import annotations

import json
import shutil
from importlib import metadata
from pathlib import Path

import yaml

from shareval.systems.training import rcc_held_out

HIDDEN, SAMPLE = 30, 5
REQUIREMENTS = ("numpy", "numba", "rich", "PyYAML")
MANIFEST = {"command": ["/bin/sh", "-c",
                        "python -m shareval.cli run rcc {input} /tmp/out --catalog catalog.json "
                        "--no-embeddings --no-cache -q && "
                        "cp /tmp/out/data_set_citations.json {output}/"],
            "limits": {"wall_seconds": 900, "cpu_seconds": 900, "memory_mb": 6144}}

PAIRS_SCORER = '''"""Exact (publication, dataset) pairs: precision, recall, F1 (an organizer's scorer)."""
import json, sys, pathlib
ref, sub, out = sys.argv[1:4]
ref = pathlib.Path(ref)
ref = ref / "data_set_citations.json" if ref.is_dir() else ref
gold = {(str(c["publication_id"]), str(c["data_set_id"])) for c in json.loads(ref.read_text())}
try:
    rows = json.loads(pathlib.Path(sub).read_text())
    pred = {(str(c["publication_id"]), str(c["data_set_id"])) for c in rows}
except (ValueError, KeyError, TypeError) as e:
    print(f"not a list of citations with publication_id and data_set_id ({e})", file=sys.stderr)
    sys.exit(2)
per = {}
for key in sorted(gold | pred, key=lambda k: (len(k[0]), k)):    # 5 < 10 < 105
    row = per.setdefault(key[0], {"pair_f1": 0.0, "pair_precision": 0.0, "pair_recall": 0.0,
                                  "gold_pairs": 0, "predicted_pairs": 0, "hits": 0})
    row["gold_pairs"] += key in gold
    row["predicted_pairs"] += key in pred
    row["hits"] += key in gold and key in pred
for row in per.values():
    h, g, q = row["hits"], row["gold_pairs"], row["predicted_pairs"]
    row["pair_precision"] = h / q if q else 0.0
    row["pair_recall"] = h / g if g else 0.0
    pr = row["pair_precision"] + row["pair_recall"]
    row["pair_f1"] = 2 * row["pair_precision"] * row["pair_recall"] / pr if pr else 0.0
hit = len(gold & pred)
p = hit / len(pred) if pred else 0.0
r = hit / len(gold) if gold else 0.0
f = 2 * p * r / (p + r) if p + r else 0.0
pathlib.Path(out, "result.json").write_text(json.dumps({
    "metrics": {"pair_f1": f, "pair_precision": p, "pair_recall": r},
    "counts": {"gold_pairs": len(gold), "predicted_pairs": len(pred), "hits": hit},
    "breakdowns": {"per_publication": per},
    "conventions": {"unit": "distinct (publication, dataset) pairs; scores ignored"}}))
'''


def _copy_texts(data: Path, ids: list[str], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for i in ids:
        shutil.copyfile(data / "rcc/train/texts" / f"{i}.json", dest / f"{i}.json")


def _reference(cits: list, pubs: list, ids: list[str], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    keep = set(ids)
    (dest / "data_set_citations.json").write_text(json.dumps(
        [c for c in cits if str(c["publication_id"]) in keep], indent=1))
    (dest / "publications.json").write_text(json.dumps(
        [{"publication_id": p["publication_id"], "title": p.get("title", "")}
         for p in pubs if str(p["publication_id"]) in keep], indent=1))


def add_to_bundle(bundle: dict, data: Path, out: Path) -> None:
    """Add the code dataset and the organizer-scored task to the demo ``bundle``."""
    cits = json.loads((data / "rcc/train/data_set_citations.json").read_text())
    pubs = json.loads((data / "rcc/train/publications.json").read_text())
    texts = data / "rcc/train/texts"
    held = sorted((str(p["publication_id"]) for p in pubs
                   if rcc_held_out(p["publication_id"])
                   and (texts / f"{p['publication_id']}.json").is_file()), key=int)
    hidden, sample = held[:HIDDEN], held[HIDDEN:HIDDEN + SAMPLE]
    _copy_texts(data, hidden, out / "rcc-code-hidden")
    _copy_texts(data, sample, out / "rcc-code-sample")
    _reference(cits, pubs, hidden, out / "rcc-code-reference")
    _reference(cits, pubs, sample, out / "rcc-code-sample-reference")
    scorer = out / "pairs-scorer"
    scorer.mkdir(exist_ok=True)
    (scorer / "shareval-system.yaml").write_text(
        "command: python score.py {reference} {submission} {output}\n")
    (scorer / "score.py").write_text(PAIRS_SCORER)
    bundle["tasks"].append({"slug": "rcc-pairs", "task": "program",
                            "title": "RCC pairs (organizers' scoring program)",
                            "primary_metric": "pair_f1", "options": {"scorer": scorer.name}})
    dev = bundle["phases"][0]["datasets"]
    rcc_dev = next(d for d in dev if d["slug"] == "rcc-dev")
    dev.append({"slug": "rcc-code", "task": "rcc-citations", "title": "RCC dev (code)",
                "reference": "rcc-code-reference", "submission": "code",
                "code": {"input": "rcc-code-hidden", "sample_input": "rcc-code-sample",
                         "sample_reference": "rcc-code-sample-reference",
                         "limits": dict(MANIFEST["limits"])},
                "quotas": [{"limit": 20, "window": "week"}]})
    dev.append({"slug": "rcc-pairs-dev", "task": "rcc-pairs", "title": "RCC dev (pairs)",
                "reference": rcc_dev["reference"], "quotas": [{"limit": 200, "window": "week"}]})
    base = next(b for b in bundle["baselines"] if b["dataset"] == "rcc-dev")
    bundle["baselines"].append({**base, "dataset": "rcc-pairs-dev"})


def rcc_system_bundle(dest: Path, catalog: Path) -> Path:
    """The RCC reference system as a code-submission bundle folder at ``dest``."""
    import shareval
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copytree(Path(shareval.__file__).parent, dest / "shareval",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copyfile(catalog, dest / "catalog.json")
    (dest / "requirements.txt").write_text("".join(
        f"{name}=={metadata.version(name)}\n" for name in REQUIREMENTS))
    (dest / "shareval-system.yaml").write_text(yaml.safe_dump(MANIFEST, sort_keys=False))
    return dest
