"""The kbp-demo files: a Re-DocRED subset as the month's documents and bundle.yaml.

``DOCUMENTS`` documents are drawn (seeded) from Re-DocRED's dev set and written
with the relation inventory under ``out/reference`` (the dataset's reference:
its annotations give every run's true precision and recall, shown beside the
estimates) and as documents only (no relations) under ``out/public``, what teams
receive. The month is open around the build (spec 002: every month a new
collection of documents is released).
"""
from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import yaml

SLUG = "kbp-demo"
TITLE = "KBP demo: relation extraction assessed on demand"
DATASET, PHASE = "redocred-month", "month-1"
DOCUMENTS = 60
SEED = 38
DESCRIPTION = (
    "Built by `make demo` from Re-DocRED (docs/kbp-assessment.md, 'Try it on the demo'): "
    f"{DOCUMENTS} Wikipedia documents released for the month. Every run a team sends is "
    "scored against the documents' annotations and, as spec 002's on-demand evaluation, a "
    "sample of its relation mentions goes to the judges, whose answers estimate its "
    "precision; documents annotated exhaustively estimate recall; the board ranks by the "
    "estimated F1 with its interval.")


def _iso(t: dt.datetime) -> str:
    return t.replace(microsecond=0).isoformat()


def month(now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    start = (now - dt.timedelta(days=10)).replace(minute=0, second=0, microsecond=0)
    return start, start + dt.timedelta(days=30)


def write_files(kbp: Path, out: Path, include=()) -> list[dict]:
    """The month's documents (with annotations: the reference; without: public);
    ``include``: titles taken besides the drawn ones (the page benchmark's longest)."""
    docs = json.loads((kbp / "re-docred-dev.json").read_text(encoding="utf-8"))
    pick = set(random.Random(SEED).sample(range(len(docs)), min(DOCUMENTS, len(docs))))
    pick = sorted(pick | {i for i, d in enumerate(docs) if d.get("title") in set(include)})
    chosen = [docs[i] for i in pick]
    relations = (kbp / "relations.json").read_text(encoding="utf-8")
    for sub, rows in (("reference", chosen),
                      ("public", [{**d, "labels": []} for d in chosen])):
        (out / sub).mkdir(parents=True, exist_ok=True)
        (out / sub / "documents.json").write_text(json.dumps(rows), encoding="utf-8")
        (out / sub / "relations.json").write_text(relations, encoding="utf-8")
    return chosen


def write_bundle(out: Path, now: dt.datetime, metric: str) -> Path:
    start, end = month(now)
    bundle = {
        "slug": SLUG, "title": TITLE, "description": DESCRIPTION,
        "tasks": [{"slug": "kbp", "task": "kbp-relations", "title": "Relation extraction",
                   "primary_metric": metric}],
        "phases": [{"slug": PHASE, "title": "Month 1", "start": _iso(start), "end": _iso(end),
                    "leaderboard": "public", "datasets": [{
                        "slug": DATASET, "task": "kbp", "title": "Re-DocRED, month 1",
                        "reference": "reference",
                        "public": ["public/documents.json", "public/relations.json"],
                        "quotas": [{"limit": 10, "window": "phase"}]}]}],
    }
    (out / "bundle.yaml").write_text(yaml.safe_dump(bundle, sort_keys=False))
    return out
