"""Rich Context reference system: which catalog datasets a publication cites.

Pipeline (one publication at a time, so it runs as a plain function):

1. Candidates: every word n-gram (1-6 tokens, normalized) of the publication
   that also occurs in a catalog entry's strings; acronyms the text defines
   ("Panel Study of Income Dynamics (PSID)") count as occurrences of their
   expansion.
2. Features of each (publication, dataset) pair describe the match, never the
   dataset's identity: longest match, how specific the matched strings are in
   the catalog, coverage of the entry's title, how often they occur, whether the
   entry's years appear in the text and near the match (survey series differ only
   by year), the longest run of the entry's title in the text, the pair's rank in
   the publication, and the embedding similarity between the matched sentences and
   the entry. A new catalog therefore needs no retraining.
3. Gradient-boosted trees trained on ``rcc/train`` score each pair in two stages (the
   first a bag of four models, whose log-odds are averaged); pairs above the threshold
   (tuned on training folds) are output with their score and the matched strings as
   ``mention_list``.
4. Mentions: the forms of those strings and of the dataset-like names found by
   pattern (``rcc_patterns``), chosen by a learned selector (``rcc_mentions``).
"""
from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numba as nb
import numpy as np

from . import rcc_mentions
from .rcc_mentions import SELECT_FEATURES
from .rcc_patterns import MENTION_FEATURES, mention_features
from .text import MAX_N, STOPWORDS, YEAR, normalize, tokens

MAX_DF = 150          # n-grams shared by more entries are too generic to propose candidates
MODEL_PATH = Path(__file__).with_name("models") / "rcc_citations.json"

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
)
NO_YEARS = -50.0        # the recency features when the entry or the text has no years
NEAR = 25               # words either side of a match in which years count as "near"
MAX_OCC = 50            # occurrences of a match looked at

_WORD = re.compile(r"[^\W_]+")
_MAIN_TITLE = re.compile(r"[,:(\[]")
_ACRONYM = re.compile(r"\(([A-Z][A-Za-z&]*[A-Z][A-Za-z0-9&-]*)\)")


# ---------------------------------------------------------------------------
# Catalog

@dataclass
class Catalog:
    """Dataset entries: id -> strings (title first, then known mentions)."""
    ids: list[str]
    strings: list[list[str]]
    index: dict[str, list[int]] = field(default_factory=dict)   # n-gram -> entry numbers
    prefixes: set = field(default_factory=set)
    title_tokens: list[list[str]] = field(default_factory=list)
    entry_tokens: list[frozenset] = field(default_factory=list)
    years: list[frozenset] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    title_years: list[tuple] = field(default_factory=list)   # (first, last) year of the title
    main_titles: list[list[str]] = field(default_factory=list)
    _vectors: np.ndarray | None = None

    @classmethod
    def from_value(cls, value) -> "Catalog":
        """Accept ``{id: "title and mentions"}``, ``{id: {title, mentions}}`` or a list of
        ``{data_set_id, title, mentions}`` records (``name`` / ``mention_list`` also read)."""
        ids, strings = [], []
        items = value.items() if isinstance(value, dict) else (
            (r.get("data_set_id"), r) for r in value)
        for key, entry in items:
            if isinstance(entry, str):
                texts = [entry]
            elif isinstance(entry, dict):
                title = entry.get("title") or entry.get("name") or ""
                more = entry.get("mentions") or entry.get("mention_list") or []
                if isinstance(more, str):
                    more = [more]
                texts = [title, *more]
            else:
                raise ValueError(f"catalog entry {key!r}: expected a string or an object")
            texts = [normalize(t) for t in texts if isinstance(t, str) and t.strip()]
            if key is None or not texts:
                continue
            ids.append(str(key))
            strings.append(texts)
        if not ids:
            raise ValueError("the catalog has no entries")
        cat = cls(ids, strings)
        cat._build()
        return cat

    @classmethod
    def load(cls, path: str | Path) -> "Catalog":
        return cls.from_value(json.loads(Path(path).read_text(encoding="utf-8")))

    def _build(self) -> None:
        index: dict[str, set] = defaultdict(set)
        for e, texts in enumerate(self.strings):
            all_tokens: set[str] = set()
            for text in texts:
                toks = tokens(text)
                all_tokens.update(toks)
                for n in range(1, MAX_N + 1):
                    for i in range(len(toks) - n + 1):
                        gram = toks[i:i + n]
                        if _useful(gram):
                            index[" ".join(gram)].add(e)
            title = tokens(texts[0])[:12]
            self.title_tokens.append(title)
            self.entry_tokens.append(frozenset(t for t in all_tokens if t not in STOPWORDS))
            self.years.append(frozenset(YEAR.findall(" ".join(texts))))
            # entries with many known mentions are the often-cited ones
            self.sizes.append(sum(len(tokens(t)) for t in texts))
            self.title_years.append(title_span(tokens(texts[0])[:20]))
            self.main_titles.append(tokens(_MAIN_TITLE.split(texts[0], 1)[0])[:15])
        self.index = {g: sorted(es) for g, es in index.items()}
        # every word prefix of an indexed n-gram: a scan stops extending once it leaves them
        self.prefixes = set()
        for g in self.index:
            words = g.split(" ")
            for n in range(1, len(words) + 1):
                self.prefixes.add(" ".join(words[:n]))

    def phrase(self, e: int) -> str:
        """The entry's strings as one space-padded run of tokens, for substring tests."""
        return f" {' '.join(tokens(' '.join(self.strings[e])))} "

    def vectors(self, embed) -> np.ndarray:
        """Embeddings of each entry's strings (computed once per catalog)."""
        if self._vectors is None:
            self._vectors = embed([" ".join(t)[:300] for t in self.strings])
        return self._vectors


def _useful(gram: list[str]) -> bool:
    if gram[0] in STOPWORDS or gram[-1] in STOPWORDS:
        return False
    if len(gram) == 1:
        t = gram[0]
        return len(t) >= 3 and not t.isdigit()
    return not all(t.isdigit() for t in gram)


# ---------------------------------------------------------------------------
# Candidates and features

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
    cased = _WORD.findall(text)
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
            # end); trimming it measured lower CV F1 (docs/systems.md, "Tried")
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


_SPAN_JOINS = frozenset("""to through thru until and january february march april may june
july august september october november december fall spring summer winter""".split())


def title_span(toks: list[str]) -> tuple[int, int] | None:
    """First and last year of the first run of years in a title's tokens: "2003 2004",
    "1992 to 1994", "1998 2006 and 2012", "september 1992 may 1993". Only the first
    run counts, because a flat catalog string goes on with the known mentions right
    after the title: in "NHANES, 2003-2004 (NHANES) 1999-2006 ..." the span is 2003-2004,
    not the 1999-2006 that all the series' waves list."""
    run: list[int] = []
    gap = 0
    for t in toks:
        if YEAR.fullmatch(t):
            run.append(int(t))
            gap = 0
        elif run and t in _SPAN_JOINS and gap == 0:
            gap = 1
        elif run:
            break
    return (min(run), max(run)) if run else None


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


# ---------------------------------------------------------------------------
# Model: gradient-boosted trees stored as JSON (portable, no pickle)

@nb.njit(cache=True, nogil=True)
def _walk(X, feature, threshold, left, right, value, roots):
    """Sum over trees of each row's leaf value; ``left`` is -1 at a leaf. Compiled, as
    the numpy walk (one level per step over all unfinished (row, tree) pairs) took 40%
    of a publication's time with 800 trees; tree by tree keeps its nodes in cache. The
    comparisons are the same float64 ones, so every row reaches the same leaves; a
    missing value (NaN) goes right."""
    out = np.zeros(X.shape[0])
    for j in range(roots.shape[0]):
        root = roots[j]
        for i in range(X.shape[0]):
            node = root
            while left[node] >= 0:
                if X[i, feature[node]] <= threshold[node]:
                    node = left[node]
                else:
                    node = right[node]
            out[i] += value[node]
    return out


@dataclass
class Trees:
    features: list[str]
    baseline: float
    trees: list[dict]          # arrays: feature, threshold, left, right, value, leaf
    _packed: tuple = field(default=None, repr=False)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Probability of the positive class for each row."""
        if self._packed is None:
            self._pack()
        raw = _walk(np.ascontiguousarray(X, dtype=np.float64), *self._packed)
        return 1.0 / (1.0 + np.exp(-(self.baseline + raw)))

    def _pack(self) -> None:
        """All trees in one node table; child indices shifted by each tree's offset."""
        offsets = np.cumsum([0] + [len(t["leaf"]) for t in self.trees[:-1]])
        cat = {k: np.concatenate([t[k] for t in self.trees]) for k in self.trees[0]}
        shift = np.concatenate([np.full(len(t["leaf"]), o) for t, o in zip(self.trees, offsets)])
        left = np.where(cat["leaf"], -1, cat["left"] + shift).astype(np.int32)
        right = np.where(cat["leaf"], -1, cat["right"] + shift).astype(np.int32)
        self._packed = (cat["feature"].astype(np.int32), cat["threshold"].astype(np.float64),
                        left, right, cat["value"].astype(np.float64), offsets.astype(np.int32))

    @classmethod
    def average(cls, members: list["Trees"]) -> "Trees":
        """One model whose log-odds are the mean of the members' (a bag): their trees
        side by side, each leaf value divided by the number of members."""
        k = len(members)
        trees = [{**t, "value": t["value"] / k} for m in members for t in m.trees]
        return cls(members[0].features, sum(m.baseline for m in members) / k, trees)

    @classmethod
    def from_sklearn(cls, model, names) -> "Trees":
        """From a fitted binary HistGradientBoostingClassifier without missing values."""
        trees = []
        for (predictor,) in model._predictors:
            n = predictor.nodes
            trees.append({"feature": n["feature_idx"].astype(int),
                          "threshold": n["num_threshold"].astype(float),
                          "left": n["left"].astype(int), "right": n["right"].astype(int),
                          "value": n["value"].astype(float), "leaf": n["is_leaf"].astype(bool)})
        return cls(list(names), float(np.ravel(model._baseline_prediction)[0]), trees)

    def to_json(self) -> dict:
        return {"features": self.features, "baseline": self.baseline,
                "trees": [{k: (v.astype(int).tolist() if v.dtype.kind in "bi" else
                               [float(f"{x:.6g}") for x in v]) for k, v in t.items()}
                          for t in self.trees]}

    @classmethod
    def from_json(cls, d: dict) -> "Trees":
        trees = []
        for t in d["trees"]:
            tree = {k: np.asarray(v) for k, v in t.items()}
            tree["leaf"] = tree["leaf"].astype(bool)
            trees.append(tree)
        return cls(d["features"], d["baseline"], trees)


@dataclass
class RccModel:
    stage1: Trees
    stage2: Trees
    threshold: float           # on the stage-2 probability, tuned for F1
    cosine_min: float          # stage-1 probability from which stage 2 judges a pair
    meta: dict = field(default_factory=dict)
    # scores pattern mentions (rcc_patterns); a model without it outputs only the
    # catalog-derived mentions of its citations. mention_threshold is read only by
    # models without a selector (trained before it existed)
    mentions: Trees | None = None
    mention_threshold: float = 1.0
    # chooses the output mentions among the forms of all found names (rcc_mentions); a
    # model without it outputs the catalog-derived mentions and the pattern mentions at
    # or above mention_threshold
    selector: Trees | None = None
    selector_threshold: float = 0.5
    prior: dict = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path = MODEL_PATH) -> "RccModel":
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        mentions, selector = d.get("mentions"), d.get("selector")
        if tuple(d["stage1"]["features"]) != FEATURES or tuple(d["stage2"]["features"]) != STAGE2 \
                or (mentions and tuple(mentions["features"]) != MENTION_FEATURES) \
                or (selector and tuple(selector["features"]) != SELECT_FEATURES):
            raise ValueError(f"{path}: trained with other features; retrain with "
                             "`shareval train-system rcc`")
        return cls(Trees.from_json(d["stage1"]), Trees.from_json(d["stage2"]), d["threshold"],
                   d["cosine_min"], d.get("meta", {}),
                   Trees.from_json(mentions) if mentions else None,
                   d.get("mention_threshold", 1.0),
                   Trees.from_json(selector) if selector else None,
                   d.get("selector_threshold", 0.5), d.get("prior", {}))

    def save(self, path: str | Path = MODEL_PATH) -> None:
        d = {"threshold": self.threshold, "cosine_min": self.cosine_min, "meta": self.meta,
             "stage1": self.stage1.to_json(), "stage2": self.stage2.to_json()}
        if self.mentions is not None:
            d["mentions"] = self.mentions.to_json()
            d["mention_threshold"] = self.mention_threshold
        if self.selector is not None:
            d["selector"] = self.selector.to_json()
            d["selector_threshold"] = self.selector_threshold
            d["prior"] = self.prior
        Path(path).write_text(json.dumps(d, separators=(",", ":")) + "\n", encoding="utf-8")

    def score(self, text: str, catalog: Catalog, embed=None) -> tuple[list[Candidate], np.ndarray]:
        """Candidates of one (normalized) text and their citation probabilities."""
        cands, X = features(text, catalog)
        if not cands:
            return [], np.zeros(0)
        p1 = self.stage1.predict(X)
        # stage 2 judges the pairs stage 1 found plausible; the rest (nearly all, and far
        # below any useful threshold) score 0
        near = np.flatnonzero(p1 >= self.cosine_min)
        p = np.zeros(len(cands))
        if len(near):
            cos = np.zeros(len(near))
            if embed is not None:
                cos = cosines(text, [cands[i] for i in near], catalog, embed)
            p[near] = self.stage2.predict(stage2_features(p1[near], [0] * len(near), cos))
        return cands, p


# ---------------------------------------------------------------------------
# The system as a function

_MODEL: RccModel | None = None


def model() -> RccModel:
    global _MODEL
    if _MODEL is None:
        _MODEL = RccModel.load()
    return _MODEL


def find_citations(text: str, catalog: Catalog, publication_id="0", threshold: float | None = None,
                   use_embeddings: bool = True, rcc_model: RccModel | None = None,
                   mention_threshold: float | None = None) -> tuple[list[dict], list[dict]]:
    """Citations and mentions of one publication's text.

    Returns ``(citations, mentions)`` as the competition's records
    (``data_set_citations.json`` and ``data_set_mentions.json``); ``threshold``
    overrides the model's tuned decision threshold, ``mention_threshold`` the one for
    mentions (0 outputs every candidate form with its score; see ``rcc_mentions``).
    """
    m = rcc_model or model()
    text = normalize(text)
    embed = None
    if use_embeddings:
        from .embed import embed
    cands, p = m.score(text, catalog, embed)
    cut = m.threshold if threshold is None else threshold
    citations, cited = [], {}
    for i, mentions in cited_mentions(text, catalog, cands, p, cut):
        c, score = cands[i], round(float(p[i]), 4)
        citations.append({"publication_id": publication_id, "data_set_id": catalog.ids[c.entry],
                          "score": score, "mention_list": mentions})
        for mention in mentions:
            cited[mention] = max(cited.get(mention, 0.0), score)
    # with a selector, every pattern mention is a candidate for it to judge
    pattern = pattern_mention_scores(m, text, catalog, list(cited),
                                     citations[0]["score"] if citations else 0.0,
                                     mention_threshold if m.selector is None else 0.0)
    if m.selector is None:
        mention_scores = {**cited, **pattern}
    else:
        mention_scores = select_mentions(m, text, cited, pattern, mention_threshold)
    mentions = [{"publication_id": publication_id, "mention": k, "score": v}
                for k, v in mention_scores.items()]
    return citations, mentions


def cited_mentions(text: str, catalog: Catalog, cands: list[Candidate], p: np.ndarray,
                   cut: float) -> list[tuple[int, list[str]]]:
    """The pairs scoring at least ``cut``, best first, each with its mentions as written
    in the text (``_mentions``); what ``find_citations`` outputs, and what training
    reproduces out of fold."""
    words = text_words(text) if len(p) else ([], [])
    out = []
    for i in np.argsort(-p, kind="stable"):
        if p[i] < cut:
            break
        out.append((int(i), _mentions(cands[i], text, catalog, words)))
    return out


def pattern_mention_scores(m: RccModel, text: str, catalog: Catalog, found: list[str],
                           top_citation: float, threshold: float | None = None,
                           ) -> dict[str, float]:
    """Dataset-like names of ``text`` (rcc_patterns) that are not among ``found``, scored
    by the model's mention trees; those at or above ``threshold`` (default: the model's)."""
    if m.mentions is None:
        return {}
    cut = m.mention_threshold if threshold is None else threshold
    names, X = mention_features(text, catalog.index, found, top_citation)
    if not names:
        return {}
    q = m.mentions.predict(X)
    return {" ".join(n.split()): round(float(s), 4)
            for n, s in zip(names, q) if s >= cut}


def select_mentions(m: RccModel, text: str, cited: dict[str, float], pattern: dict[str, float],
                    threshold: float | None = None) -> dict[str, float]:
    """The forms of the found names (``rcc_mentions.candidates``) that the model's selector
    scores at or above ``threshold`` (default: the model's), with their scores."""
    cands = rcc_mentions.candidates(cited, pattern)
    if not cands:
        return {}
    q = m.selector.predict(rcc_mentions.features(cands, text, m.prior))
    cut = m.selector_threshold if threshold is None else threshold
    return {c["mention"]: round(float(s), 4) for c, s in zip(cands.values(), q) if s >= cut}


_EDGE_WORDS = STOPWORDS - {"survey", "data", "study", "i", "ii", "iii"}
_JOIN = re.compile(r"[ \t\n\r\-'\u2019\u00ad]{1,3}")


def text_words(text: str) -> tuple[list, list[str]]:
    """The word matches of ``text`` and their lower-cased strings, as ``_mentions`` reads
    them (computed once per publication)."""
    words = list(_WORD.finditer(text))
    return words, [w.group(0).lower() for w in words]


def _mentions(c: Candidate, text: str, catalog: Catalog,
              words: tuple | None = None) -> list[str]:
    """The matched strings as they appear in the text (longest, non-overlapping first).

    Each match is widened to the longest run of text words around it
    that the entry's strings also contain, joined by spaces or hyphens only, not starting
    or ending with a function word: n-grams may not end with a stopword such as
    "survey", so "Health and Nutrition Examination Survey" was matched without its last
    word. ``words`` is ``text_words(text)`` (computed when not given)."""
    kept: list[str] = []
    for g in sorted(c.grams, key=lambda g: (-g.count(" "), -len(g))):
        if any(g in k for k in kept) or (" " not in g and kept):
            continue
        kept.append(g)
        if len(kept) == 5:
            break
    words, toks = words or text_words(text)
    entry = catalog.phrase(c.entry)
    # acronyms ("NHANES") are mentions of their own; other single words are not
    for g in sorted((g for g in c.grams if " " not in g and g not in kept), key=len)[:2]:
        i = _find(toks, [g], c.first)
        if toks[i] == g and sum(ch.isupper() for ch in words[i].group(0)) >= 2:
            kept.append(g)

    def joined(k):          # words k and k + 1 are written as one name
        return _JOIN.fullmatch(text, words[k].end(), words[k + 1].start()) is not None

    spans: list[tuple[int, int]] = []
    for g in kept:
        parts = g.split()
        i = _find(toks, parts, c.first)
        if toks[i:i + len(parts)] != parts:
            continue
        a, b = i, i + len(parts)
        while b < len(toks) and b - a < 12 and joined(b - 1) and \
                f" {' '.join(toks[a:b + 1])} " in entry:
            b += 1
        while a > 0 and b - a < 12 and joined(a - 1) and f" {' '.join(toks[a - 1:b])} " in entry:
            a -= 1
        while b - a > len(parts) and toks[b - 1] in _EDGE_WORDS:
            b -= 1
        while b - a > len(parts) and toks[a] in _EDGE_WORDS:
            a += 1
        if not any(x <= a and b <= y for x, y in spans):
            spans = [(x, y) for x, y in spans if not (a <= x and y <= b)] + [(a, b)]
    out = []
    for a, b in spans:
        start, end = words[a].start(), words[b - 1].end()
        if text.count("(", start, end) > text.count(")", start, end) and text[end:end + 1] == ")":
            end += 1
        out.append(" ".join(text[start:end].split()))
    return out
