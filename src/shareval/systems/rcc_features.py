"""RCC candidates and features of (publication, catalog entry) pairs.

Features describe the match, never the dataset's identity, so a new catalog needs
no retraining (see ``rcc``'s docstring for the pipeline).
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from .rcc_catalog import Catalog
from .rcc_zones import reference_zone
from .text import MAX_N, STOPWORDS, YEAR, tokens

MAX_DF = 150          # n-grams shared by more entries are too generic to propose candidates
FEATURES = (
    "max_n", "max_chars", "n_grams", "log_occ", "log_min_df", "spec_sum", "exclusive",
    "title_cov", "title_prefix", "entry_cov", "has_years", "year_hit", "year_frac",
    "year_conflict", "rank", "score_ratio", "acronym_occ", "n_candidates", "first_pos",
    "entry_len", "sibling_rank", "log_siblings", "best_df",
    "title_year_fit", "distinct_hit", "max_n_ratio",
    # years written near its matches (a survey wave is named where it is used)
    "near_year_fit", "near_year_frac", "near_year_end", "near_range_cover", "near_range_overlap",
    "log_near_years",
    # the longest run of the entry's main title (before its first comma, colon or bracket)
    "title_run", "title_run_frac", "title_whole", "log_best_occ",
    # the entry's year span against the latest years the text names (about when it was
    # written): a paper cannot use a wave released after it
    "start_vs_latest", "end_vs_latest", "start_vs_p95",
    # the share of its matches inside the reference list (rcc_zones), whose entries name
    # data the paper only cites, and its matches outside it
    "ref_share", "log_body_occ",
)
NO_YEARS = -50.0        # the recency features when the entry or the text has no years
NEAR = 25               # words either side of a match in which years count as "near"
MAX_OCC = 50            # occurrences of a match looked at

WORD = re.compile(r"[^\W_]+")
_ACRONYM = re.compile(r"\(([A-Z][A-Za-z&]*[A-Z][A-Za-z0-9&-]*)\)")


@dataclass
class Candidate:
    entry: int
    grams: dict[str, int] = field(default_factory=dict)    # matched n-gram -> occurrences
    first: int = 10 ** 9                                    # first token position
    acronym_occ: int = 0
    best: str = ""                                          # longest matched n-gram
    specific: set = field(default_factory=set)              # the matches that propose it


def _acronyms(text: str) -> dict[str, str]:
    """Acronyms the text defines, mapped to their expansion (lower-cased tokens)."""
    found = {}
    for m in _ACRONYM.finditer(text):
        acro = m.group(1)
        letters = [c.lower() for c in acro if c.isupper()]
        words = tokens(text[max(0, m.start() - 200):m.start()])
        # walk back over the words whose initials spell the acronym (stopwords may sit between)
        k, i = len(letters) - 1, len(words) - 1
        start = None
        while i >= 0 and k >= 0 and len(words) - i <= 2 * len(letters) + 2:
            if words[i][0] == letters[k]:
                k -= 1
                start = i
            elif words[i] not in STOPWORDS:
                break
            i -= 1
        if k < 0 and start is not None:
            found[acro.lower()] = " ".join(words[start:])
    return found


def candidates(text: str, catalog: Catalog) -> tuple[list[Candidate], list[str], dict]:
    """Entries proposed by a specific match: an n-gram of 2+ tokens or an acronym-like
    word (2+ capitals); generic single words only add evidence to proposed entries."""
    cased = WORD.findall(text)
    toks = [t.lower() for t in cased]
    found: dict[int, Candidate] = {}
    evidence: list[tuple[str, int]] = []
    index = catalog.index
    prefixes = catalog.prefixes
    for i in range(len(toks)):
        for n in range(1, MAX_N + 1):
            if i + n > len(toks):
                break
            key = " ".join(toks[i:i + n]) if n > 1 else toks[i]
            if key not in prefixes:
                break
            entries = index.get(key)
            if entries is None:
                continue
            if len(entries) > MAX_DF:
                continue
            # most words are lower case: skip counting their capitals
            if n == 1 and (cased[i].islower() or sum(ch.isupper() for ch in cased[i]) < 2):
                evidence.append((key, i))
                continue
            for e in entries:
                c = found.get(e)
                if c is None:
                    c = found[e] = Candidate(e)
                c.grams[key] = c.grams.get(key, 0) + 1
                c.specific.add(key)
                if i < c.first:
                    c.first = i
    for key, i in evidence:
        for e in index[key]:
            c = found.get(e)
            if c is not None:
                c.grams[key] = c.grams.get(key, 0) + 1
    acronyms = _acronyms(text)
    if acronyms:
        counts = defaultdict(int)
        for t in toks:
            if t in acronyms:
                counts[t] += 1
        for acro, expansion in acronyms.items():
            # only an expansion indexed as written counts ("... survey" is not: stopword
            # end); trimming it measured lower CV F1 (docs/dev/systems-experiments-round1.md)
            for e in index.get(expansion, ()):
                if e in found:
                    found[e].acronym_occ += counts[acro]
    return list(found.values()), toks, acronyms


def features(text: str, catalog: Catalog) -> tuple[list[Candidate], np.ndarray]:
    """The candidates of one publication and their feature matrix (columns = FEATURES)."""
    cands, toks, _ = candidates(text, catalog)
    if not cands:
        return [], np.zeros((0, len(FEATURES)))
    token_set = set(toks)
    pub_years = set(YEAR.findall(text))
    near = _Positions(toks)
    zone = reference_zone(text)
    zone = (len(WORD.findall(text, 0, zone[0])), len(WORD.findall(text, 0, zone[1]))) \
        if zone else (len(toks), len(toks))
    rows = []
    for c in cands:
        grams = c.grams
        c.best = _best(grams)
        dfs = {g: len(catalog.index[g]) for g in grams}
        lens = {g: g.count(" ") + 1 for g in grams}
        max_n = max(lens.values())
        title = catalog.title_tokens[c.entry]
        prefix = 0
        for n in range(min(len(title), MAX_N), 0, -1):
            if " ".join(title[:n]) in grams:
                prefix = n
                break
        entry_tokens = catalog.entry_tokens[c.entry]
        years = catalog.years[c.entry]
        hit = len(years & pub_years)
        rows.append([
            max_n,
            max(len(g) for g in grams),
            sum(1 for g in grams if lens[g] >= 2),
            math.log1p(sum(grams.values())),
            math.log(min(dfs.values())),
            sum(lens[g] / dfs[g] for g in grams),
            float(any(d == 1 and (lens[g] >= 2 or len(g) >= 4) for g, d in dfs.items())),
            len(set(title) & token_set) / max(1, len(set(title))),
            prefix / max(1, min(len(title), MAX_N)),
            len(entry_tokens & token_set) / max(1, len(entry_tokens)),
            float(bool(years)),
            float(hit > 0),
            hit / len(years) if years else 0.0,
            float(bool(years) and hit == 0 and bool(pub_years)),
            0.0, 0.0,   # rank features, filled below
            math.log1p(c.acronym_occ),
            math.log(len(cands)),
            c.first / max(1, len(toks)),
            math.log1p(catalog.sizes[c.entry]),
            0.0, 0.0,   # sibling features, filled below
            math.log(dfs[c.best]),
            _year_fit(catalog.title_years[c.entry], pub_years),
            0.0, 0.0,   # distinct_hit and max_n_ratio, filled below
            *near.features(c, catalog),
            *near.zone_features(c, zone),
        ])
    X = np.asarray(rows, dtype=float)
    key = X[:, FEATURES.index("spec_sum")] * (1 + X[:, FEATURES.index("year_hit")])
    order = np.argsort(-key, kind="stable")
    rank = np.empty(len(key))
    rank[order] = np.arange(1, len(key) + 1)
    X[:, FEATURES.index("rank")] = np.log(rank)
    X[:, FEATURES.index("score_ratio")] = key / key.max() if key.max() > 0 else 0.0
    # siblings: the proposed entries sharing this candidate's best match (e.g. one survey's
    # yearly waves); the one whose years and strings fit best should win
    by_entry = {c.entry: i for i, c in enumerate(cands)}
    fit = key + X[:, FEATURES.index("year_frac")]
    groups: dict[str, tuple] = {}
    for i, c in enumerate(cands):
        group = groups.get(c.best)
        if group is None:
            sib = [by_entry[e] for e in catalog.index[c.best] if e in by_entry]
            # how many siblings' titles hold each word
            counts: dict[str, int] = defaultdict(int)
            for j in sib:
                for t in set(catalog.title_tokens[cands[j].entry]):
                    counts[t] += 1
            group = groups[c.best] = (sib, counts)
        sib, counts = group
        X[i, FEATURES.index("sibling_rank")] = int((fit[sib] > fit[i]).sum())
        X[i, FEATURES.index("log_siblings")] = math.log(len(sib))
        # title words that set this entry apart from its siblings (wave, year, roman
        # numeral): its words that not every other sibling's title holds
        own = set(catalog.title_tokens[c.entry])
        distinct = {t for t in own if counts[t] < len(sib)} if len(sib) > 1 else set()
        X[i, FEATURES.index("distinct_hit")] = (
            len(distinct & token_set) / len(distinct) if distinct else -1.0)
    col = FEATURES.index("max_n")
    X[:, FEATURES.index("max_n_ratio")] = X[:, col] / X[:, col].max()
    return cands, X


class _Positions:
    """Where words and years occur in one publication's tokens."""

    def __init__(self, toks: list[str]):
        self.toks = toks
        self._runs: dict[tuple, int] = {}
        self._near: dict[tuple, tuple] = {}      # (matches, fallback) -> years near them
        self._occ: dict[str, tuple] = {}
        self.at: dict[str, list[int]] = defaultdict(list)
        years = []
        for i, t in enumerate(toks):
            self.at[t].append(i)
            if len(t) == 4 and t.isdigit() and 1850 <= int(t) <= 2030:
                years.append((i, int(t)))
        self.year_pos = np.array([i for i, _ in years], dtype=int)
        self.year_val = np.array([y for _, y in years], dtype=int)
        # (the latest year and the 95th percentile, which a stray projection such as
        # "by 2030" barely moves)
        self.latest = ((int(self.year_val.max()), float(np.percentile(self.year_val, 95)))
                       if len(years) else None)
        # "1999-2006", "1999 to 2006": (position, first, last)
        by_pos = dict(years)
        self.ranges = []
        for i, y in years:
            if by_pos.get(i + 1, 0) > y:
                self.ranges.append((i, y, by_pos[i + 1]))
            elif by_pos.get(i + 2, 0) > y and toks[i + 1] in ("to", "through", "and", "until"):
                self.ranges.append((i, y, by_pos[i + 2]))

    def occurrences(self, gram: str) -> tuple[int, ...]:
        """Where the gram occurs (at most MAX_OCC places; cached per gram)."""
        found = self._occ.get(gram)
        if found is None:
            words = gram.split()
            n, toks = len(words), self.toks
            found = self._occ[gram] = tuple(
                [i for i in self.at.get(words[0], ()) if toks[i:i + n] == words][:MAX_OCC])
        return found

    def longest_run(self, title: list[str]) -> int:
        """Longest run of consecutive title words found consecutively in the text, counted
        from a title word that is not a stopword (cached: the waves of a survey share their
        main title)."""
        key = tuple(title)
        best = self._runs.get(key)
        if best is None:
            best, toks, n = 0, self.toks, len(self.toks)
            for s, w in enumerate(title):
                if w in STOPWORDS or len(title) - s <= best:
                    continue
                for i in self.at.get(w, ()):
                    k = 1
                    while s + k < len(title) and i + k < n and toks[i + k] == title[s + k]:
                        k += 1
                    if k > best:
                        best = k
            self._runs[key] = best
        return best

    def near(self, grams: tuple, fallback: int) -> tuple[set, list]:
        """Years and year ranges within NEAR words of the grams' occurrences (cached by
        grams: the siblings of a survey series share their matches)."""
        key = (grams, fallback)
        hit = self._near.get(key)
        if hit is None:
            occ = set()
            for g in grams:
                occ.update(self.occurrences(g))
            at = np.asarray(sorted(occ)[:MAX_OCC] or [fallback])
            years: set = set()
            ranges = []
            if len(self.year_pos):
                lo_i = np.searchsorted(self.year_pos, at - NEAR)
                hi_i = np.searchsorted(self.year_pos, at + NEAR, side="right")
                for a, b in zip(lo_i, hi_i):
                    years.update(self.year_val[a:b].tolist())
                ranges = [(a, b) for i, a, b in self.ranges if np.abs(at - i).min() <= NEAR]
            hit = self._near[key] = (years, ranges)
        return hit

    def zone_features(self, c: Candidate, zone: tuple[int, int]) -> list[float]:
        """Columns ref_share and log_body_occ: the share of the candidate's specific
        matches (at most MAX_OCC places each) inside the token span ``zone``, and the
        number outside it."""
        occ: set = set()
        for g in c.specific:
            occ.update(self.occurrences(g))
        a, b = zone
        inside = sum(1 for i in occ if a <= i < b)
        return [inside / len(occ) if occ else 0.0, math.log1p(len(occ) - inside)]

    def features(self, c: Candidate, catalog: Catalog) -> list[float]:
        near, ranges = self.near(tuple(sorted(c.specific)), c.first)
        n_occ = len(self.occurrences(c.best))
        span = catalog.title_years[c.entry]
        if span is None:
            year = [-1.0] * 5
            recency = [NO_YEARS] * 3
        else:
            lo, hi = span
            inside = sum(lo <= y <= hi for y in near)
            year = [float(inside > 0) if near else -0.5,
                    inside / len(near) if near else -0.5,
                    float(lo in near or hi in near),
                    float(any(a <= lo and hi <= b for a, b in ranges)),
                    float(any(a <= hi and lo <= b for a, b in ranges))]
            recency = ([lo - self.latest[0], hi - self.latest[0], lo - self.latest[1]]
                       if self.latest else [NO_YEARS] * 3)
        title = catalog.main_titles[c.entry]
        run = self.longest_run(title)
        return [*year, math.log1p(len(near)), run, run / max(1, len(title)),
                float(bool(title) and run == len(title)), math.log1p(n_occ), *recency]


def cosines(text: str, cands: list[Candidate], catalog: Catalog, embed) -> np.ndarray:
    """Embedding similarity of each candidate entry to the text around its longest match."""
    if not cands:
        return np.zeros(0)
    toks = tokens(text)
    # siblings (the waves of a series) share their best match, so usually their context
    contexts: dict[str, int] = {}
    row = []
    for c in cands:
        words = (c.best or _best(c.grams)).split()
        pos = _find(toks, words, c.first)
        row.append(contexts.setdefault(" ".join(toks[max(0, pos - 15):pos + len(words) + 15]),
                                       len(contexts)))
    q = embed(list(contexts))[row]
    vecs = catalog.vectors(embed)[[c.entry for c in cands]]
    return np.einsum("ij,ij->i", q, vecs)


def _year_fit(span, pub_years) -> float:
    """1 when a year of the publication lies in the title's year span, 0 when none does,
    -1 when the title has no year."""
    if span is None:
        return -1.0
    lo, hi = span
    return float(any(lo <= int(y) <= hi for y in pub_years))


def _best(grams: dict) -> str:
    return max(grams, key=lambda g: (g.count(" "), len(g)))


def _find(toks, words, start):
    """First position from ``start`` where ``words`` occur (``start`` if nowhere)."""
    n, i = len(words), max(0, start)
    try:
        while True:
            i = toks.index(words[0], i)      # C-speed scan for the first word
            if toks[i:i + n] == words:
                return i
            i += 1
    except ValueError:
        return max(0, start)


# ---------------------------------------------------------------------------
# Second stage: the pairs stage 1 found plausible, judged again with the embedding
# similarity and their standing among the publication's pairs. It is deliberately small:
# a second stage that saw all stage-1 features again overfitted (held-out F1 55.4, against
# 58.0 for its stage 1 alone).

STAGE2 = ("p1", "cosine", "pub_ratio", "pub_rank")


def stage2_features(p1: np.ndarray, pub_keys: list, cos: np.ndarray) -> np.ndarray:
    """Columns STAGE2: stage-1 probability, cosine, ratio to the publication's best
    stage-1 probability and log rank among the publication's pairs."""
    ratio, rank = np.zeros(len(p1)), np.zeros(len(p1))
    groups: dict = defaultdict(list)
    for i, k in enumerate(pub_keys):
        groups[k].append(i)
    for idx in groups.values():
        idx = np.asarray(idx)
        order = idx[np.argsort(-p1[idx], kind="stable")]
        ratio[order] = p1[order] / max(p1[order[0]], 1e-9)
        rank[order] = np.log1p(np.arange(len(order)))
    return np.column_stack([p1, cos, ratio, rank])
