"""Campaign results: exports (estimate CSV, TREC qrels) and per-team estimates.

An adjudicated item counts with the adjudicator's decision only; otherwise
every judge's answer counts (estimates average judges; qrels take the
majority and leave ties out, listed as unresolved).
"""
from __future__ import annotations

import csv
import io
from collections import Counter

import numpy as np

from shareval.assessment.estimate import estimate_all
from shareval.assessment.judgments import Judgment, Judgments, quote_name
from shareval.formats.spreadsheet import escape_formula
from shareval.formats.summary import JUDGMENT_HEADER
from shareval.metrics.estimation import percentile_interval

from shareval.platform.judging import designs
from shareval.platform.judging.models import Campaign
from shareval.platform.judging.ondemand import late_results
from shareval.platform.judging.service import final_answers

ESTIMATE_COLUMNS = ["item", "doc", "submissions", "judge", "question", "answer",
                    "inclusion_probability", "drawn_for", "drawn_by"]


def counted(entry) -> dict[str, dict]:
    adj = entry["adjudication"]
    if adj is not None:
        return {f"adjudication:{adj.decided_by.username}": adj.decision}
    return entry["answers"]


def _yes(v: bool) -> str:
    return "yes" if v else "no"


def judgment_records(campaign) -> list[Judgment]:
    """The campaign's answers as `assess estimate` judgments (question chains and
    summary relevance): a chain gives its verdict as ``correct`` plus each question;
    exhaustive documents give recall rows (judging/recall.py)."""
    if campaign.design == designs.EXHAUSTIVE:
        from shareval.platform.judging import recall
        return recall.judgment_records(campaign)
    recs = []
    for e in final_answers(campaign).values():
        item = e["item"]
        if item.gold is not None or item.drawn_for == "ondemand":
            continue         # late submissions' draws: judging/ondemand.py estimates them
        for judge, ans in counted(e).items():
            if campaign.design == designs.CHAIN:
                pairs = [("correct", ans["correct"])] + [
                    (q, v == "yes") for q, v in ans["answers"].items() if q != "correct"]
            elif campaign.design == designs.RELEVANCE:
                pairs = [("correct", ans["relevant"])]
            else:
                pairs = []
            recs += [Judgment(item.key, tuple(item.submissions), judge, q, float(v),
                              item.inclusion, item.doc, item.drawn_for, tuple(item.drawn_by),
                              item.pk) for q, v in pairs]
    return recs


def estimate_csv(campaign) -> str:
    buf = io.StringIO()
    sizes = campaign.config.get("sizes")
    if sizes:
        buf.write("# sizes: " + ",".join(escape_formula(f"{quote_name(k)}={v}")
                                         for k, v in sizes.items())
                  + "\n")
        overlaps = campaign.config.get("overlaps", {})
        buf.write("# overlaps: " + ",".join(escape_formula(f"{k}={v}") for k, v in overlaps.items())
                  + "\n")
    w = _SafeWriter(csv.writer(buf, lineterminator="\n"))
    if campaign.design in (designs.CHAIN, designs.RELEVANCE, designs.EXHAUSTIVE):
        w.writerow(ESTIMATE_COLUMNS)
        w.writerows([r.item, r.doc, ",".join(map(quote_name, r.submissions)), r.judge, r.question,
                     _yes(r.answer == 1.0), f"{r.inclusion:.10g}", r.drawn_for,
                     ",".join(map(quote_name, r.drawn_by))] for r in judgment_records(campaign))
    elif campaign.design == designs.SIDE_BY_SIDE:
        w.writerow(["item", "doc", "team", "judge", "score"])
        for e in final_answers(campaign).values():
            for judge, ans in counted(e).items():
                for team, score in ans["scores"].items():
                    w.writerow([e["item"].key, e["item"].doc, team, judge, score])
    else:
        w.writerow(["item", "doc", "reference", "team", "judge", "related_outputs"])
        for e in final_answers(campaign).values():
            for judge, ans in counted(e).items():
                for ref in ans["references"]:
                    for s in e["item"].payload.get("systems", []):
                        idx = ans["related"].get(ref, {}).get(s["team"], [])
                        w.writerow([e["item"].key, e["item"].doc, ref, s["team"], judge,
                                    ";".join(s["output"][i] for i in idx)])
    return buf.getvalue()


class _SafeWriter:
    """Team names and item keys come from participants: text cells that a
    spreadsheet would run as formulas are escaped (``assess estimate`` undoes it)."""

    def __init__(self, writer):
        self.w = writer

    def writerow(self, row):
        self.w.writerow([escape_formula(v) for v in row])

    def writerows(self, rows):
        for row in rows:
            self.writerow(row)


def e2e_rows(campaign) -> list[tuple[str, str, str, str, str]]:
    """(query_id, doc_id, system, judge, Y/N): one row per counted answer (judges by
    user name; an adjudicated item has the one row ``adjudication:<user name>``);
    gold items left out. The system is the item's ``<TeamID>.<SysLabel>``, empty for
    items loaded without one."""
    rows = []
    for e in final_answers(campaign).values():
        item = e["item"]
        if item.gold is not None:
            continue
        p, parts = item.payload, item.key.split("|")
        q = p.get("query_id") or parts[0]
        d = p.get("document_id") or (item.doc if len(parts) == 4 else parts[-1])
        system = p.get("system") or (parts[1] if len(parts) == 4 else "")
        rows += [(q, d, system, judge, "Y" if ans["relevant"] else "N")
                 for judge, ans in counted(e).items()]
    return sorted(rows)


def e2e_judgments(campaign) -> str:
    """Summary relevance as the judgments file `shareval score material-e2e
    --judgments` reads: one row per judge, so both the majority rule and the raw
    votes apply, keyed by system (each team is scored from its own rows). Items
    loaded without a system give the older form without the system column."""
    rows = e2e_rows(campaign)
    if rows and not any(r[2] for r in rows):
        return "".join("\t".join(r[:2] + r[3:]) + "\n"
                       for r in [("query_id", "doc_id", "", "judge", "relevant")] + rows)
    return "".join("\t".join(r) + "\n" for r in [JUDGMENT_HEADER] + rows)


def qrels(campaign) -> tuple[str, list[str]]:
    """TREC qrels of the final labels: (text, unresolved item keys)."""
    if campaign.design == designs.EXHAUSTIVE:
        from shareval.platform.judging import recall
        lines, unresolved = recall.qrels(campaign)
        return "".join(line + "\n" for line in lines), unresolved
    lines, unresolved = [], []
    for e in final_answers(campaign).values():
        item, votes = e["item"], counted(e)
        if not votes or item.gold is not None:
            continue
        labs = [designs.labels(campaign.design, item, a) for a in votes.values()]
        if campaign.design == designs.RELATED:
            refs = Counter(r for a in votes.values() for r in a["references"])
            for r, c in sorted(refs.items()):
                if c * 2 > len(votes):
                    lines.append(f"{item.doc} 0 {r.replace(' ', '_')} 1")
            continue
        for unit in labs[0]:
            c = Counter(lab[unit] for lab in labs).most_common()
            if len(c) > 1 and c[0][1] == c[1][1]:
                unresolved.append(f"{item.key} {unit}".strip())
                continue
            value = {"correct": 1, "incorrect": 0, "relevant": 1, "not relevant": 0}.get(
                c[0][0], c[0][0])
            if campaign.design == designs.SIDE_BY_SIDE:
                lines.append(f"{item.doc} 0 {unit} {value}")
            elif campaign.design == designs.RELEVANCE:
                q = item.payload.get("query_id", item.doc)
                lines.append(f"{q} 0 {item.payload.get('document_id', item.key)} {value}")
            else:
                lines.append(f"{item.doc} 0 {item.key.replace(' ', '_')} {value}")
    return "".join(line + "\n" for line in lines), unresolved


def team_results(campaign, confidence: float = 0.95, seed: int = 0) -> dict[str, dict]:
    """Per team: the design's measure, its interval, and what it rests on."""
    if campaign.design == designs.EXHAUSTIVE:                  # judging/recall.py
        from shareval.platform.judging.recall import campaign_results
        return campaign_results(campaign, confidence)
    answers = [e for e in final_answers(campaign).values() if e["item"].gold is None]
    if campaign.design in (designs.CHAIN, designs.RELEVANCE):
        table, _ = estimate_all(Judgments(judgment_records(campaign), {}), "design",
                                confidence, bootstrap=0)
        out = {}
        for team, row in table.items():
            if row.get("judged_items"):
                out[team] = {"measure": "precision", "estimate": row["precision"],
                             "low": row["precision_low"], "high": row["precision_high"],
                             "n": row["judged_items"]}
                if "entity_precision" in row:
                    out[team]["entity_precision"] = row["entity_precision"]
        out.update(late_results(campaign))
        return out
    if campaign.design == designs.SIDE_BY_SIDE:
        per_team: dict[str, list[float]] = {}
        for e in answers:
            for team in {t for a in counted(e).values() for t in a["scores"]}:
                per_team.setdefault(team, []).append(
                    float(np.mean([a["scores"][team] for a in counted(e).values()])))
        rng = np.random.default_rng(seed)
        out = {}
        for team, v in per_team.items():
            v = np.array(v)
            boot = v[rng.integers(0, v.size, (1000, v.size))].sum(axis=1)
            lo, hi = percentile_interval(boot, confidence)
            out[team] = {"measure": "sum of scores", "estimate": float(v.sum()), "low": lo,
                         "high": hi, "n": int(v.size)}
        return out
    # related-to: the spec's confusion matrix (000, "Scoring the Results"): per
    # reference found or not; one false-positive item per publication, set when
    # the team output anything not related to a reference of it
    teams = sorted({s["team"] for e in answers for s in e["item"].payload.get("systems", [])})
    per = {t: np.zeros((len(answers), 3)) for t in teams}        # tp, fn, fp per publication
    for k, e in enumerate(answers):
        votes = counted(e)
        outputs = {s["team"]: len(s.get("output", []))
                   for s in e["item"].payload.get("systems", [])}
        for ans in votes.values():
            w = 1 / len(votes)                       # several coders share one vote
            for t in teams:
                found = {ref for ref, m in ans["related"].items() if m.get(t)}
                related = {i for m in ans["related"].values() for i in m.get(t, [])}
                per[t][k] += w * np.array([len(found), len(ans["references"]) - len(found),
                                           float(len(related) < outputs.get(t, 0))])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(answers), (1000, len(answers))) if answers else None
    out = {}
    for t, m in per.items():
        f1, p, r = _prf(m.sum(axis=0))
        lo = hi = float("nan")
        if idx is not None:
            tp, fn, fp = (m[idx].sum(axis=1)).T
            with np.errstate(invalid="ignore", divide="ignore"):
                boot = 2 * tp / (2 * tp + fp + fn)
            lo, hi = percentile_interval(boot, confidence)
        out[t] = {"measure": "related-to F1", "estimate": f1, "precision": p, "recall": r,
                  "low": lo, "high": hi, "n": len(answers)}
    return out


def _prf(c) -> tuple[float, float, float]:
    tp, fn, fp = c
    p = tp / (tp + fp) if tp + fp else float("nan")
    r = tp / (tp + fn) if tp + fn else float("nan")
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else float("nan")
    return f1, p, r


def board_columns(ds):
    """The leaderboard columns of the dataset's campaigns shown on its board
    (``leaderboards.payloads.add_human_columns``): estimates with intervals."""
    camps = list(Campaign.objects.filter(dataset=ds, on_leaderboard=True).order_by("pk"))
    auto = any(c.design == designs.CHAIN and c.config.get("auto") is True for c in camps)
    for camp in camps:
        # an automatic campaign has one output per run: judging/board.py shows its
        # precision, and recall and F1 from the recall campaigns, per run
        if camp.config.get("auto") is True or (auto and camp.design == designs.EXHAUSTIVE):
            continue
        res = team_results(camp)
        if not res:
            continue
        measure = next(iter(res.values()))["measure"]
        yield ({"campaign": camp.title, "measure": measure},
               {team: {k: e[k] for k in ("estimate", "low", "high", "n")}
                for team, e in res.items()})
