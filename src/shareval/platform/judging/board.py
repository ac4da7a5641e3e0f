"""The automatic assessment on the leaderboard and on a run's page (registered in
``JudgingConfig.ready``): per run, the judged precision, recall and F1 with their
intervals, a note while an estimate waits for judgments, and the run's cost."""
from __future__ import annotations

from shareval.platform.judging.estimates import MEASURES, by_run, assessment_campaign

WORDS = {"precision": "precision", "recall": "recall", "f1": "F1"}
COUNTS = {"precision": "draws", "recall": "recall_documents", "f1": None}


def columns(ds):
    """Judged precision, recall and F1 with intervals, keyed by run id."""
    camp = assessment_campaign(ds)
    if camp is None or not camp.on_leaderboard:
        return
    rows = by_run(ds)
    for m in MEASURES:
        values = {}
        for run, r in rows.items():
            if r[m] is not None:
                n = r.get(COUNTS[m]) if COUNTS[m] else None
                values[run] = {"estimate": r[m], "low": r[f"{m}_low"], "high": r[f"{m}_high"],
                               "n": n}
        yield ({"campaign": camp.title, "measure": WORDS[m], "by": "run"},
               values)


def notes(ds) -> dict[str, str]:
    """Run id -> its assessment's note (waiting for judgments, no recall documents yet)."""
    camp = assessment_campaign(ds)
    if camp is None or not camp.on_leaderboard:
        return {}
    return {run: r["note"] for run, r in by_run(ds).items() if r["note"]}


SHOWN = ("status", "note", "campaign", "items", "judged", "outcome", "draws",
         "recall_documents", "confidence") + tuple(
    f"{m}{s}" for m in MEASURES for s in ("", "_low", "_high"))


def run_assessment(sub) -> dict | None:
    """What the run's page shows of its assessment (submissions/present.py decides who
    sees it: the run's team when its scores are shown, the organizers)."""
    if assessment_campaign(sub.dataset) is None:
        return None
    row = by_run(sub.dataset).get(str(sub.pk))
    if row is None:
        return None
    out = {k: row.get(k) for k in SHOWN}
    out["estimates"] = [{"measure": WORDS[m], "estimate": row[m], "low": row[f"{m}_low"],
                         "high": row[f"{m}_high"]} for m in MEASURES]
    out["cost"] = row.get("cost")
    return out
