"""A study's results: the related-to confusion matrix and F1 per team (with a
bootstrap interval over publications), the phase-1 consensus ranking with
Kendall's W, and the audit trail as CSV. Conventions: assessment/rcc_phase2.py.

Scores count the publications the reviewer finished; the designer's final
pass may still change them until the study is closed (the leaderboard says
"provisional" until then).
"""
from __future__ import annotations

import csv
import io
import json
import math

import numpy as np

from shareval.assessment import rcc_phase2 as r2
from shareval.formats.spreadsheet import escape_formula
from shareval.metrics.estimation import percentile_interval

from shareval.platform.annotation.models import Decision, Publication, Reference, Study
from shareval.platform.annotation.service import current_coding


def coded_publications(study: Study) -> list[r2.Coded]:
    out = []
    pubs = (study.publications.filter(purpose=Publication.REFERENCES).exclude(reviewed=None)
            .prefetch_related("references", "codings"))
    for p in pubs:
        refs = [str(r.pk) for r in p.references.all() if r.status != Reference.REMOVED]
        coding = current_coding(p)
        out.append(r2.Coded(p.publication_id, refs,
                            {t: [o["id"] for o in outs] for t, outs in p.outputs.items()},
                            coding.related if coding else {}))
    return out


def team_scores(study: Study, confidence: float = 0.95, seed: int = 0) -> dict[str, dict]:
    """Per team the confusion counts, precision, recall, F1 and a percentile
    bootstrap interval of F1 (publications resampled, 1000 times)."""
    pubs = coded_publications(study)
    res = r2.related_scores(pubs, study.teams)
    if not pubs:
        return {}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(pubs), (1000, len(pubs)))
    for t, row in res.items():
        m = np.array([row["per_publication"][p.publication] for p in pubs], dtype=float)
        tp, fn, fp = m[idx].sum(axis=1).T
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = 2 * tp / (2 * tp + fp + fn)
        row["low"], row["high"] = percentile_interval(boot, confidence)
        row["n"] = len(pubs)
    return res


def leaderboard_column(study: Study) -> dict[str, dict]:
    """Team -> {estimate, low, high, n} as competitions/api.human_columns shows."""
    return {t: {"estimate": r["f1"], "low": r["low"], "high": r["high"], "n": r["n"]}
            for t, r in team_scores(study).items() if not math.isnan(r["f1"])}


def consensus(study: Study) -> dict:
    """Phase-1 rankings: per publication Borda order and Kendall's W over its
    judges; overall Borda (every judge x publication ranking counts once),
    Kemeny for up to 7 teams, and W over all rankings."""
    per_pub, everything = [], []
    for p in (study.publications.filter(purpose=Publication.QUALITATIVE)
              .prefetch_related("rankings__judge")):
        rankings = [r.order for r in p.rankings.all()]
        if not rankings:
            continue
        everything += rankings
        order, pts = r2.borda(rankings)
        teams = sorted(p.outputs)
        w = r2.kendall_w(r2.ranks_table(rankings, teams)) if len(rankings) > 1 else float("nan")
        per_pub.append({"publication": p, "judges": [r.judge.username for r in p.rankings.all()],
                        "order": order, "points": pts, "w": w, "rankings": list(p.rankings.all())})
    if not everything:
        return {"publications": [], "order": [], "points": {}, "w": float("nan")}
    order, pts = r2.borda(everything)
    teams = sorted({t for r in everything for t in r})
    full = [r for r in everything if sorted(r) == teams]
    out = {"publications": per_pub, "order": order, "points": pts,
           "w": r2.kendall_w(r2.ranks_table(full, teams)) if len(full) > 1 else float("nan"),
           "mean_w": _mean([x["w"] for x in per_pub]), "rankings": len(everything)}
    out["undefined"] = any(math.isnan(x) for x in [out["w"], out["mean_w"]]
                           + [x["w"] for x in per_pub])
    if len(teams) <= 7:
        out["kemeny"], out["kemeny_distance"] = r2.kemeny(everything)
    return out


def _mean(values) -> float:
    v = [x for x in values if not math.isnan(x)]
    return float(np.mean(v)) if v else float("nan")


AUDIT_COLUMNS = ["time", "actor", "stage", "action", "publication", "reference", "note",
                 "before", "after"]


def audit_csv(study: Study) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(AUDIT_COLUMNS)
    for d in (Decision.objects.filter(study=study)
              .select_related("actor", "publication").order_by("created", "pk")):
        w.writerow([escape_formula(v) for v in (
            d.created.isoformat(), d.actor.username, d.stage, d.action,
            d.publication.publication_id if d.publication else "",
            d.reference_id or "", d.note,
            json.dumps(d.before, sort_keys=True) if d.before is not None else "",
            json.dumps(d.after, sort_keys=True) if d.after is not None else "")])
    return buf.getvalue()


def board_columns(ds):
    """The leaderboard columns of the dataset's studies shown on its board
    (``leaderboards.payloads.add_human_columns``): related-to F1 per team."""
    for study in Study.objects.filter(dataset=ds, on_leaderboard=True).order_by("pk"):
        res = leaderboard_column(study)     # RCC phase 2: related-to F1 per team
        if not res:
            continue
        yield ({"campaign": study.title + ("" if study.closed else ", provisional"),
                "measure": "related-to F1"}, res)
