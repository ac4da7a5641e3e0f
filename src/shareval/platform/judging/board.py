"""The automatic assessment on the leaderboard and on a run's page (registered in
``JudgingConfig.ready``): a note while a run's estimate waits for judgments, and on
its page the judged precision, recall and F1 with their intervals and the run's
cost. On the board the estimates are the run's ``judged_*`` metrics, each shown with
its interval (leaderboards/html.py)."""
from __future__ import annotations

from shareval.platform.judging.estimates import MEASURES, by_run, assessment_campaign

WORDS = {"precision": "precision", "recall": "recall", "f1": "F1"}


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
