"""The Rich Context Competition's phase-2 human evaluation (spec 000), as pure functions.

Conventions (spec 000, "Phase 2 Evaluation" and "Scoring the Results"):

* **Sampling.** Per topic area a fixed number of publications, filled from a
  seeded random walk through the topic's publications to a rough ratio of
  5:4:1 between publications with *titled* data sets, data described but
  *untitled*, and *no* data (:data:`MIX`). A stratum that runs short is
  filled from the others, in the order of the walk, and the shortfall is
  reported, never hidden. Alternatively the publications where the teams agree
  (:func:`agreement_levels`), as RCC chose its sample for data mentions.
* **Related-to confusion matrix.** The baseline is the list of reviewed data
  references (1 each). Per reference a team scores a true positive when one
  or more of its outputs for the publication were coded "related to" it, else
  a false negative. Per publication one false-positive item, 0 in the
  baseline, is 1 for a team that output anything related to no reference.
  There are no true negatives. Precision, recall and F1 from the summed
  counts (micro); F1 = 2TP / (2TP + FP + FN).
* **Phase-1 consensus ranking.** Each judge ranks the teams per publication
  (best first). :func:`borda` gives a team, per ranking, one point per team
  ranked below it (ties: half a point each); the consensus orders teams by
  their total (ties by name). :func:`kemeny` minimises the summed Kendall
  distance to the rankings by brute force (small n only).
* **Agreement.** Kendall's coefficient of concordance W with the correction
  for ties (Kendall & Babington Smith 1939; Siegel & Castellan 1988, 10.3):
  W = 12 S / (m^2 (n^3 - n) - m T), S the sum of squared deviations of the
  rank sums from their mean, T = sum over raters and tie groups of t^3 - t.
  W = 1: identical rankings; W = 0: no agreement.
"""
from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

TITLED, UNTITLED, NONE = "titled", "untitled", "none"
STRATA = (TITLED, UNTITLED, NONE)
MIX = {TITLED: 5, UNTITLED: 4, NONE: 1}
TOPICS = ("Education", "Health care", "Agriculture", "Finance", "Criminal justice", "Welfare")
OTHER = "Other"
# Title keywords for a first topic guess where no topic list is given (the demo):
# RCC's topics came from the publisher's subject search, which the data lacks.
_TOPIC_WORDS = {
    "Education": r"school|educat|student|teacher|college|universit|literacy|academic",
    "Health care": r"health|medic|hospital|patient|disease|clinic|care\b|mortality|drug|"
                   r"dementia|obes|cancer|diabet|alcohol|smok|nurs|menopaus|injur",
    "Agriculture": r"agricult|farm|crop|food|rural|livestock|pesticide|land use",
    "Finance": r"financ|bank|tax|credit|monetary|market|firm|invest(?:ment|or)|price|debt|fdi|"
               r"interest rate|capital|stock",
    "Criminal justice": r"crim|prison|police|violen|offend|justice|arrest|delinquen|court",
    "Welfare": r"welfare|poverty|benefit|pension|retire|income|unemploy|social security|"
               r"medicaid|medicare|insur|famil|child",
}


def topic_of(title: str) -> str:
    """The first topic area with a keyword starting a word of ``title``, else ``Other``."""
    low = title.lower()
    for topic, words in _TOPIC_WORDS.items():
        if re.search(rf"\b(?:{words})", low):
            return topic
    return OTHER


def stratum_proxy(cited_in_catalog: bool, teams_with_output: int) -> str:
    """A stand-in for the sampler's reading when no strata list is given: a
    publication citing a catalog data set is ``titled``; one the catalog has
    nothing for but some team found data in is ``untitled``; else ``none``."""
    if cited_in_catalog:
        return TITLED
    return UNTITLED if teams_with_output else NONE


@dataclass(frozen=True)
class Candidate:
    publication: str
    topic: str
    stratum: str


@dataclass
class Sample:
    chosen: list[Candidate]
    wanted: dict[str, dict[str, int]]          # topic -> stratum -> target
    got: dict[str, dict[str, int]]             # topic -> stratum -> drawn
    shortfall: list[str] = field(default_factory=list)


def quotas(n: int, mix: Mapping[str, int] = MIX) -> dict[str, int]:
    """``n`` split in proportion to ``mix`` by largest remainders (ties in mix order).

    >>> quotas(20)
    {'titled': 10, 'untitled': 8, 'none': 2}
    >>> quotas(21)
    {'titled': 11, 'untitled': 8, 'none': 2}
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    total = sum(mix.values())
    if total <= 0 or any(v < 0 for v in mix.values()):
        raise ValueError("mix must have non-negative weights, not all zero")
    exact = {k: n * v / total for k, v in mix.items()}
    out = {k: int(e) for k, e in exact.items()}
    order = sorted(mix, key=lambda k: (-(exact[k] - out[k]), list(mix).index(k)))
    for k in order[:n - sum(out.values())]:
        out[k] += 1
    return out


def stratified_sample(candidates: Iterable[Candidate], per_topic: int | Mapping[str, int],
                      mix: Mapping[str, int] = MIX, seed: int = 0,
                      topics: Sequence[str] | None = None) -> Sample:
    """Per topic, ``per_topic`` publications (an int, or per topic a number) in
    the ratio ``mix``; see the module doc. Deterministic for a seed."""
    cands = list(candidates)
    bad = sorted({c.stratum for c in cands} - set(mix))
    if bad:
        raise ValueError(f"unknown strata {bad}; expected {sorted(mix)}")
    if len({c.publication for c in cands}) != len(cands):
        raise ValueError("a publication is listed twice")
    by_topic: dict[str, list[Candidate]] = {}
    for c in sorted(cands, key=lambda c: c.publication):
        by_topic.setdefault(c.topic, []).append(c)
    topics = list(topics) if topics is not None else sorted(by_topic)
    chosen, wanted, got, short = [], {}, {}, []
    for topic in topics:
        n = per_topic.get(topic, 0) if isinstance(per_topic, Mapping) else per_topic
        pool = list(by_topic.get(topic, []))
        random.Random(f"{seed}:{topic}").shuffle(pool)
        want = quotas(n, mix)
        have = Counter()
        picked = []
        for c in pool:                              # the walk: add what the mix still needs
            if have[c.stratum] < want[c.stratum]:
                picked.append(c)
                have[c.stratum] += 1
        missing = {s: want[s] - have[s] for s in want if have[s] < want[s]}
        if missing:
            short.append(f"{topic}: " + ", ".join(f"{k} {s} short" for s, k in missing.items()))
            rest = [c for c in pool if c not in picked]
            fill = rest[:sum(missing.values())]         # in walk order, from other strata
            picked += fill
            have.update(c.stratum for c in fill)
            if len(picked) < n:
                short.append(f"{topic}: only {len(picked)} of {n} publications")
        chosen += picked
        wanted[topic] = want
        got[topic] = {s: have[s] for s in mix}
    return Sample(chosen, wanted, got, short)


def agreement_levels(outputs: Mapping[str, set[str]], publications: Iterable[str]
                     ) -> dict[str, float]:
    """Per publication the share of teams that found data in it (output anything)."""
    teams = list(outputs)
    if not teams:
        return {p: 0.0 for p in publications}
    return {p: sum(p in outputs[t] for t in teams) / len(teams) for p in publications}


def where_teams_agree(outputs: Mapping[str, set[str]], publications: Iterable[str],
                      n: int, seed: int = 0, data: bool | None = None) -> list[str]:
    """Up to ``n`` publications on which every team agrees whether there is data
    (``data``: True only where all found data, False only where none did, None both)."""
    levels = agreement_levels(outputs, publications)
    ok = sorted(p for p, v in levels.items()
                if (v == 1.0 and data is not False) or (v == 0.0 and data is not True))
    random.Random(seed).shuffle(ok)
    return sorted(ok[:n])


# phase-1 consensus ----------------------------------------------------------------

def _check_rankings(rankings: Sequence[Sequence[str]]) -> list[str]:
    teams = sorted({t for r in rankings for t in r})
    for r in rankings:
        if len(set(r)) != len(r):
            raise ValueError(f"a ranking names a team twice: {list(r)}")
    return teams


def borda(rankings: Sequence[Sequence[str]]) -> tuple[list[str], dict[str, float]]:
    """Consensus order (best first) and Borda points: per ranking, a team gets one
    point per team ranked below it. Teams a ranking leaves out get nothing from it.

    >>> borda([["A", "B", "C"], ["B", "A", "C"], ["A", "C", "B"]])
    (['A', 'B', 'C'], {'A': 5.0, 'B': 3.0, 'C': 1.0})
    """
    teams = _check_rankings(rankings)
    pts = {t: 0.0 for t in teams}
    for r in rankings:
        for i, t in enumerate(r):
            pts[t] += len(r) - 1 - i
    order = sorted(teams, key=lambda t: (-pts[t], t))
    return order, pts


def kendall_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Pairs of teams (present in both) ordered differently by ``a`` and ``b``."""
    pa = {t: i for i, t in enumerate(a)}
    pb = {t: i for i, t in enumerate(b)}
    common = [t for t in a if t in pb]
    return sum((pa[x] - pa[y]) * (pb[x] - pb[y]) < 0
               for x, y in itertools.combinations(common, 2))


def kemeny(rankings: Sequence[Sequence[str]], max_teams: int = 8) -> tuple[list[str], int]:
    """The order with the least summed Kendall distance to the rankings (the
    first in name order among equals), by trying every order: ``max_teams`` at most."""
    teams = _check_rankings(rankings)
    if len(teams) > max_teams:
        raise ValueError(f"{len(teams)} teams: Kemeny by brute force takes at most {max_teams}")
    best, cost = None, None
    for perm in itertools.permutations(teams):
        c = sum(kendall_distance(perm, r) for r in rankings)
        if cost is None or c < cost:
            best, cost = list(perm), c
    return best or [], cost or 0


def _avg_ranks(values: Sequence[float]) -> tuple[np.ndarray, float]:
    """1-based average ranks of ``values`` (ascending) and the tie term sum(t^3 - t)."""
    v = np.asarray(values, dtype=float)
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(len(v))
    tie = 0.0
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        t = j - i + 1
        tie += t ** 3 - t
        i = j + 1
    return ranks, tie


def kendall_w(ranks: Sequence[Sequence[float]]) -> float:
    """Kendall's W of an m x n table (m raters, n objects; lower = better, ties
    allowed as equal values, re-ranked to average ranks). NaN when undefined
    (fewer than 2 raters or objects, or every rater ties everything).

    >>> kendall_w([[1, 2, 3], [1, 2, 3]])
    1.0
    >>> kendall_w([[1, 2, 3], [3, 2, 1]])
    0.0
    """
    table = np.asarray(ranks, dtype=float)
    if table.ndim != 2:
        raise ValueError("ranks must be an m x n table")
    m, n = table.shape
    if m < 2 or n < 2:
        return float("nan")
    re_ranked, ties = zip(*(_avg_ranks(row) for row in table))
    r = np.asarray(re_ranked).sum(axis=0)
    s = float(((r - r.mean()) ** 2).sum())
    denom = m ** 2 * (n ** 3 - n) - m * sum(ties)
    return s * 12 / denom if denom else float("nan")


def ranks_table(rankings: Sequence[Sequence[str]], teams: Sequence[str]) -> list[list[float]]:
    """Rankings (best first, all of ``teams`` each) as rank rows for :func:`kendall_w`."""
    rows = []
    for r in rankings:
        if sorted(r) != sorted(teams):
            raise ValueError(f"ranking {list(r)} does not rank exactly {sorted(teams)}")
        pos = {t: i + 1 for i, t in enumerate(r)}
        rows.append([pos[t] for t in teams])
    return rows


# related-to scoring ------------------------------------------------------------

@dataclass(frozen=True)
class Coded:
    """One publication: its reviewed references and, per team, what it output and
    which outputs were coded related to which reference."""
    publication: str
    references: Sequence[str]
    outputs: Mapping[str, Sequence[str]]                   # team -> output ids
    related: Mapping[str, Mapping[str, Sequence[str]]]     # team -> reference -> outputs


def confusion(pub: Coded, team: str) -> tuple[int, int, int]:
    """(TP, FN, FP item) of one team on one publication (module doc)."""
    rel = pub.related.get(team, {})
    refs = set(pub.references)
    found = {r for r in refs if rel.get(r)}
    used = {o for r, outs in rel.items() if r in refs for o in outs}
    fp = int(any(o not in used for o in pub.outputs.get(team, [])))
    return len(found), len(refs) - len(found), fp


def related_scores(pubs: Sequence[Coded], teams: Sequence[str]) -> dict[str, dict]:
    """Per team: tp, fn, fp, precision, recall, f1 (NaN where undefined) and the
    per-publication matrices, so outliers can be looked at (spec 000)."""
    out = {}
    for t in teams:
        per = {p.publication: confusion(p, t) for p in pubs}
        tp, fn, fp = (sum(c[i] for c in per.values()) for i in range(3))
        nan = float("nan")
        out[t] = {"tp": tp, "fn": fn, "fp": fp,
                  "precision": tp / (tp + fp) if tp + fp else nan,
                  "recall": tp / (tp + fn) if tp + fn else nan,
                  "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else nan,
                  "per_publication": per}
    return out
