"""Research fields and methods in the organizers' report (Rich Context, spec 000).

No gold exists for these values. The competition's judges "generated distributions
of all values found across all publications within each type of value, counted the
occurrences of each, compared the distributions across teams, and ranked the teams
based on how their distributions compared"; they also ranked the teams' output on
sampled publications and agreed on an overall ranking. :func:`fields_methods` gives,
per ``rcc-fields-methods`` dataset of a phase, what that comparison needs, from the
stored scores only (the server scores these runs with every value listed:
``submissions/scoring.py`` BOARD_OPTIONS; no submission file is read):

Runs compared
    per team its primary run when it is scored; else, as on the board
    (``leaderboards/unranked.py``), its latest scored run, with a note. Disqualified
    runs never count; a latest run the team took off the board does not either.

distributions
    per team, each value's share of the team's records (records with that value /
    all the team's records), its ``TOP`` most frequent values, most frequent first.
    Values are compared as the scorer normalised them (NFKC, case-folded, spaces
    collapsed). ``support``: per value, the share of the voting teams that give it.

overlap
    per ordered pair of teams (both orders present, equal): ``value_jaccard``, the
    Jaccard index of their distinct value sets; ``weighted_overlap``, the overlap of
    their distributions, sum over values of min(share in a, share in b) (1 = the same
    distribution, 0 = no value in common; it is 1 minus the total variation distance).

Rules (``ranking``: every compared team with its score and competition rank, 1, 1,
3, best first, equal scores by team name):

``majority`` (agreement with the majority of the other teams)
    The voters are the participating teams (baselines do not vote, as in the
    annotation app's sampling), or every team when fewer than two participate. For a
    team T with the other voters O (T itself never votes for its own values), a value
    is a *majority value* when strictly more than half of O give it, i.e.
    #{U in O : U gives v} > |O| / 2. T's score is the share of T's records whose value
    is a majority value. With two teams a value counts when the other team gives it too.
``overlap``
    the mean ``weighted_overlap`` of T's distribution with each other voter's.
``judges``
    the judges' phase-1 rankings (platform/annotation: a :class:`Ranking` per judge and
    sampled publication of the phase's annotation studies): the overall Borda points
    of all those rankings pooled (one point per team ranked below, every judge x
    publication ranking counting once, as ``annotation.results.consensus``). The
    judges ranked a team's whole output, so the same points rank every dataset of
    the phase; a team nobody ranked has no score and no rank. No study or no ranking:
    an empty ranking, and a note says why.

Notes, never silent blanks: a team compared through a run other than its primary, a
dataset without scored runs, a team with runs but none scored, fewer than two teams
(nothing is compared or ranked), teams of another kind (fields among methods: left
out of overlap and ranking), a stored value list cut by a ``top`` option (overlap and
ranks then see only the listed values).
"""
from __future__ import annotations

from collections import Counter

from shareval.assessment.rcc_phase2 import borda
from shareval.platform.annotation.models import Publication, Ranking, Study
from shareval.platform.submissions.models import Submission

TASK = "rcc-fields-methods"
TOP = 50                     # most frequent values kept per team in ``distributions``
KINDS = {"research_field": "fields", "method": "methods"}
RULES = {
    "majority": "share of the team's records whose value more than half of the other "
                "participating teams also give",
    "overlap": "mean overlap of the team's value distribution with each other "
               "participating team's (sum over values of the smaller share)",
    "judges": "Borda points of the judges' phase-1 rankings (all rankings of the "
              "phase's annotation studies pooled)",
}


def fields_methods(phase, rule: str = "majority") -> list[dict]:
    """One dict per rcc-fields-methods dataset of ``phase`` (in dataset order):
    {"dataset", "kind", "teams", "distributions", "support", "overlap", "ranking",
    "rule", "rule_text", "notes"}; see the module doc."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}: choose one of {', '.join(RULES)}")
    judges = _judges(phase) if rule == "judges" else None
    return [_dataset(ds, rule, judges) for ds in
            phase.datasets.select_related("task").filter(task__task_name=TASK).order_by("id")]


# the runs -------------------------------------------------------------------------

def _runs(ds) -> tuple[dict[str, dict], list[str]]:
    """Team name -> {"baseline", "result"} of the run compared, and notes."""
    notes: list[str] = []
    subs = (Submission.objects.filter(dataset=ds, disqualified="")
            .exclude(state__in=[Submission.REJECTED, Submission.CANCELLED])
            .select_related("team").prefetch_related("scores").order_by("-created", "-pk"))
    by_team: dict[str, list] = {}
    for s in subs:
        by_team.setdefault(s.team.name, []).append(s)
    out = {}
    for team in sorted(by_team):
        runs = by_team[team]
        primary = next((s for s in runs if s.kind == Submission.PRIMARY), None)
        scored = [s for s in runs if s.state == Submission.SCORED
                  and s.current_score is not None]
        if primary is not None and primary in scored:
            chosen = primary
        else:
            chosen = next((s for s in scored if s.on_board), None)
            if chosen is None:
                why = (f"its primary run is {primary.state}, " if primary else "") + (
                    "its scored runs are off the board" if scored else "no run is scored")
                notes.append(f"{team}: nothing to compare ({why})")
                continue
            notes.append(f"{team}: " + ("no primary run" if primary is None else
                                        f"its primary run is {primary.state}, not scored")
                         + "; its latest scored run is compared (as on the board)")
        out[team] = {"baseline": chosen.team.is_baseline,
                     "result": chosen.current_score.result or {}}
    return out, notes


def _values(team: str, result: dict, notes: list[str]) -> tuple[Counter, int, str | None]:
    """(records per value, the team's records, kind) from a stored result."""
    stored = (result.get("breakdowns") or {}).get("value_counts") or {}
    counts = Counter({str(v): int(r.get("records", 0) if isinstance(r, dict) else r)
                      for v, r in stored.items()})
    listed = sum(counts.values())
    total = (result.get("counts") or {}).get("records")
    total = total if isinstance(total, int) and total >= listed else listed
    if total > listed:
        notes.append(f"{team}: the stored score lists {len(counts)} values covering {listed} "
                     f"of {total} records (a 'top' option cut the list): overlap and rank "
                     "see the listed values only; rescore without 'top' for all")
    kind = (result.get("counts") or {}).get("kind")
    return counts, total, KINDS.get(kind, kind)


# the dataset ----------------------------------------------------------------------

def _dataset(ds, rule: str, judges: tuple[dict, list[str]] | None) -> dict:
    runs, notes = _runs(ds)
    values, totals, kinds = {}, {}, {}
    for team, run in runs.items():
        values[team], totals[team], kinds[team] = _values(team, run["result"], notes)
    teams = sorted(runs)
    kind_count = Counter(k for k in kinds.values() if k)
    kind = None
    if kind_count:
        kind = sorted(kind_count, key=lambda k: (-kind_count[k], k))[0]
    compared = [t for t in teams if kinds[t] == kind]
    if len(kind_count) > 1:
        others = [f"{t} ({kinds[t]})" for t in teams if kinds[t] != kind]
        notes.append(f"the teams submitted different kinds of values: {', '.join(others)} "
                     f"left out of overlap and ranking, which compare the {kind}")
    out = {"dataset": ds.slug, "title": ds.title or ds.slug, "kind": kind or "",
           "teams": teams,
           "distributions": {t: _shares(values[t], totals[t], TOP) for t in teams},
           "support": {}, "overlap": {}, "ranking": [], "rule": rule,
           "rule_text": RULES[rule], "notes": notes}
    if not teams:
        notes.append("no team has a scored run on this dataset: nothing to compare")
        return out
    if len(compared) < 2:
        notes.append(f"only one team ({compared[0]}) has {kind or 'values'} on this dataset: "
                     "nothing to compare or rank")
        return out
    shares = {t: _shares(values[t], totals[t]) for t in compared}
    for a in compared:
        for b in compared:
            if a != b:
                out["overlap"][(a, b)] = {
                    "value_jaccard": _jaccard(values[a], values[b]),
                    "weighted_overlap": weighted_overlap(shares[a], shares[b])}
    voters = [t for t in compared if not runs[t]["baseline"]]
    if len(voters) < 2:
        voters = compared
        if any(runs[t]["baseline"] for t in compared):
            notes.append("fewer than two participating teams: baselines count as teams "
                         "for the majority")
    support = Counter(v for t in voters for v in values[t])
    shown = {v for t in teams for v in out["distributions"][t]}
    out["support"] = {v: support[v] / len(voters)
                      for v in sorted(shown, key=lambda v: (-support[v], v))}
    if rule == "judges":
        points, why = judges
        notes.extend(why)
        scores = {t: points.get(t) for t in compared}
        for t in compared:
            if points and t not in points:
                notes.append(f"{t}: in no judge's ranking: no judges' score")
        if not points:
            scores = {}
    elif rule == "majority":
        scores = {t: majority_score(values[t], totals[t], [values[u] for u in voters if u != t])
                  for t in compared}
    else:
        scores = {t: sum(out["overlap"][(t, u)]["weighted_overlap"]
                         for u in voters if u != t) / len([u for u in voters if u != t])
                  for t in compared}
    out["ranking"] = rank(scores, {t: runs[t]["baseline"] for t in compared})
    return out


def _shares(counts: Counter, total: int, top: int | None = None) -> dict[str, float]:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return {v: n / total for v, n in (items if top is None else items[:top])} if total else {}


def _jaccard(a, b) -> float:
    union = len(a.keys() | b.keys())
    return len(a.keys() & b.keys()) / union if union else 0.0


def weighted_overlap(p: dict[str, float], q: dict[str, float]) -> float:
    """Sum over values of min(p(v), q(v)): the histogram intersection of two
    distributions (1 minus their total variation distance when both sum to 1)."""
    return float(sum(min(s, q[v]) for v, s in p.items() if v in q))


def majority_score(values: Counter, total: int, others: list) -> float:
    """The share of ``total`` records whose value more than half of ``others`` (the
    other voters' value collections) give."""
    if not total or not others:
        return 0.0
    need = len(others) / 2
    return sum(n for v, n in values.items()
               if sum(v in o for o in others) > need) / total


def rank(scores: dict[str, float | None], baseline: dict[str, bool]) -> list[dict]:
    """Teams best first (equal scores by name), competition ranks (1, 1, 3); a team
    without a score comes last with no rank."""
    order = sorted(scores, key=lambda t: (scores[t] is None, -(scores[t] or 0), t))
    out, prev, r = [], object(), 0
    for i, t in enumerate(order, 1):
        s = scores[t]
        if s is not None and s != prev:
            r, prev = i, s
        out.append({"team": t, "score": s, "rank": r if s is not None else None,
                    "baseline": baseline.get(t, False)})
    return out


# the judges' rankings ---------------------------------------------------------------

def _judges(phase) -> tuple[dict[str, float], list[str]]:
    """(team -> Borda points of every phase-1 ranking of the phase's studies, notes)."""
    studies = list(Study.objects.filter(dataset__phase=phase).order_by("pk"))
    if not studies:
        return {}, ["no annotation study on this phase's datasets: the judges have not "
                    "ranked the teams (shareval server annotation), so nothing is ranked"]
    everything, used = [], []
    for study in studies:
        orders = list(Ranking.objects.filter(publication__study=study,
                                             publication__purpose=Publication.QUALITATIVE)
                      .order_by("pk").values_list("order", flat=True))
        if orders:
            everything += orders
            used.append(f"{study.title} ({len(orders)} rankings)")
    if not everything:
        names = ", ".join(s.title for s in studies)
        return {}, [f"no judge has ranked the teams yet in {names}: nothing is ranked"]
    _, points = borda(everything)
    return points, [f"Borda points of {len(everything)} phase-1 rankings from "
                    + "; ".join(used)]
