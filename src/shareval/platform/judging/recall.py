"""Recall from a dataset's ``exhaustive`` campaigns (spec 002's R_m).

A document is finished when it has its campaign's k annotations or an
adjudication (which then counts alone); gold documents never count. The
finished documents' annotations and suggestions become recall judgments
(``assessment.exhaustive.recall_judgments``) and ``estimate_all`` gives each
output's recall: the true relation mentions it holds over all true ones, a
mention's truth being the mean over its annotators. The interval is
estimate_all's ``recall_low``/``recall_high``: documents are the sampled unit
(``assessment.estimate.document_ratio_interval``: Korn and Graubard's interval
on the effective number of mentions, Student's t over documents), so it needs
two finished documents; the document bootstrap is given too
(``recall_boot_low``/``recall_boot_high``).
"""
from __future__ import annotations

from shareval.assessment.estimate import estimate_all, units_of
from shareval.assessment.exhaustive import item_doc, recall_judgments
from shareval.assessment.judgments import Judgments

from shareval.platform.judging import designs, exhaustive_build
from shareval.platform.judging.build import team_runs
from shareval.platform.judging.models import Campaign
from shareval.platform.judging.service import final_answers

BOOTSTRAP = 1000


def finished(campaign) -> dict[str, tuple[dict[str, set[str]], set[str]]]:
    """doc -> (annotator -> marked keys, suggested keys) of the finished documents."""
    out = {}
    for e in final_answers(campaign).values():
        item, adj = e["item"], e["adjudication"]
        if item.gold is not None:
            continue
        if adj is not None:
            votes = {f"adjudication:{adj.decided_by.username}": adj.decision}
        elif len(e["answers"]) >= campaign.judges_per_item:
            votes = e["answers"]
        else:
            continue
        out[item.doc] = ({who: set(a["relations"]) for who, a in votes.items()},
                         {s["key"] for s in item.payload.get("suggestions", [])})
    return out


def _campaigns(dataset):
    return Campaign.objects.filter(dataset=dataset, design=designs.EXHAUSTIVE).order_by("pk")


def _table(campaigns, outputs: dict[str, set[str]], confidence: float) -> dict[str, dict]:
    annotations: dict[str, dict[str, set[str]]] = {}
    suggestions: dict[str, set[str]] = {}
    for camp in campaigns:
        for doc, (votes, sugg) in finished(camp).items():
            # one document finished in two campaigns: both campaigns' annotators count
            annotations.setdefault(doc, {}).update({f"{camp.pk}:{w}": k for w, k in votes.items()})
            suggestions.setdefault(doc, set()).update(sugg)
    if not annotations:
        return {}
    mine = {n: {k for k in keys if item_doc(k) in annotations} for n, keys in outputs.items()}
    j = Judgments(recall_judgments(annotations, mine, suggestions),
                  {n: max(len(k), 1) for n, k in mine.items()})
    table, _ = estimate_all(j, "design", confidence, bootstrap=BOOTSTRAP, seed=0)
    units = units_of(j)
    true = sum(u.correct() for u in units)
    out = {}
    for name in outputs:
        row = table.get(name, {})
        nan = float("nan")
        out[name] = {"recall": row.get("recall", nan), "recall_low": row.get("recall_low", nan),
                     "recall_high": row.get("recall_high", nan),
                     "recall_boot_low": row.get("recall_boot_low", nan),
                     "recall_boot_high": row.get("recall_boot_high", nan),
                     "recall_item_low": row.get("recall_item_low", nan),
                     "recall_item_high": row.get("recall_item_high", nan),
                     "found": sum(u.correct() for u in units if name in u.submissions),
                     "true": true, "documents": len(annotations)}
    return out


def recall_table(dataset, outputs: dict[str, set[str]], confidence: float = 0.95
                 ) -> dict[str, dict]:
    """name -> recall, recall_low, recall_high, found, true, documents over the
    finished documents of the dataset's exhaustive campaigns; {} when none is."""
    return _table(_campaigns(dataset), outputs, confidence)


def pending_documents(dataset) -> int:
    """Documents drawn for recall (gold left out) not finished in any campaign yet."""
    drawn, done = set(), set()
    for camp in _campaigns(dataset):
        drawn |= set(camp.items.filter(gold__isnull=True).values_list("doc", flat=True))
        done |= set(finished(camp))
    return len(drawn - done)


def team_outputs(dataset) -> dict[str, set[str]]:
    """Each team's leaderboard run (build.team_runs) as its relation mentions' keys."""
    out = {}
    for team, s in team_runs(dataset).items():
        out[team] = {k for keys in exhaustive_build.run_mentions(dataset, s.path).values()
                     for k in keys}
    return out


def campaign_results(campaign, confidence: float = 0.95) -> dict[str, dict]:
    """results.team_results rows: each team's recall over this campaign's documents."""
    try:
        outputs = team_outputs(campaign.dataset)
    except (ValueError, OSError):       # no readable reference or run: nothing to show
        return {}
    table = _table([campaign], outputs, confidence)
    return {team: {"measure": "recall", "estimate": r["recall"], "low": r["recall_low"],
                   "high": r["recall_high"], "n": r["documents"], "found": r["found"],
                   "true": r["true"]} for team, r in table.items()}


def judgment_records(campaign) -> list:
    """The campaign's finished documents as ``assess estimate`` recall rows, the
    teams' leaderboard runs as the outputs (results.estimate_csv writes them)."""
    done = finished(campaign)
    outputs = {n: {k for k in keys if item_doc(k) in done}
               for n, keys in team_outputs(campaign.dataset).items()}
    return recall_judgments({d: v for d, (v, _) in done.items()}, outputs,
                            {d: s for d, (_, s) in done.items()})


def qrels(campaign) -> tuple[list[str], list[str]]:
    """TREC qrels lines (``doc 0 item-key 1|0``, spaces as ``_``) of the finished
    documents' relation mentions by majority of annotators (a mention an annotator
    did not mark is a no); ties are unresolved."""
    lines, unresolved = [], []
    for doc, (votes, sugg) in sorted(finished(campaign).items()):
        for key in sorted(sugg.union(*votes.values())):
            yes = sum(key in v for v in votes.values())
            if 2 * yes == len(votes):
                unresolved.append(key)
                continue
            lines.append(f"{doc.replace(' ', '_')} 0 {key.replace(' ', '_')} "
                         f"{int(2 * yes > len(votes))}")
    return lines, unresolved


def campaign_summary(campaign) -> dict:
    """For the campaign's page: finished and pending documents."""
    done = finished(campaign)
    drawn = campaign.items.filter(gold__isnull=True).count()
    return {"finished": len(done), "pending": drawn - len(done)}
