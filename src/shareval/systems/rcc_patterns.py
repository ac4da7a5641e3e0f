"""Dataset mentions found by their form in the text, whether or not the catalog knows them.

A mention is a run of capitalized words (joined by at most two of "of", "and", "for", ...)
that contains a dataset head word ("Survey", "Study", "Database", "Panel", ...), or a
capitalized name or acronym followed by one ("BRFSS survey", "NHANES data"), extended
by an acronym in brackets and a year or year range ("Panel Study of Income Dynamics
(PSID)", "Current Population Survey, 1995"). A small model (``rcc.RccModel.mentions``,
trained by ``training.train_rcc``) scores each one; the catalog-derived mentions of the
cited datasets come first, and a pattern mention is added only when it is not already
one of them (token Jaccard < 0.5, the scorer's partial-match rule).

Limits: English names only; lower-case names ("the general social survey") and names
without a head word ("Add Health", "Understanding Society") are not found by pattern;
runs of more than MAX_WORDS words are skipped.
"""
from __future__ import annotations

import math
import re

import numpy as np

from ..metrics.mentions import jaccard_empty_zero, normalize_exact, tokens as mention_tokens
from .text import MAX_N, tokens

HEADS = frozenset("""survey surveys study studies census panel database databases dataset
datasets data register registry project program programme system sample cohort file files
index supplement statistics barometer poll inventory followback series set records
trial""".split())
_WORD = r"[A-Z][\w'\u2019\-]*"
_CONNECTORS = ("of", "and", "for", "on", "in", "the", "to", "&", "from", "among", "with", "at")
_CONNECTOR = "(?:" + "|".join(_CONNECTORS) + ")"
_GAP = r"(?:[ \t]+|[ \t]*\n[ \t]*)"      # a name may run over one line break, not two
_NAME = re.compile(rf"(?<![\w-]){_WORD}(?:{_GAP}(?:{_CONNECTOR}{_GAP}){{0,2}}{_WORD})*")
_ACRONYM = re.compile(r"[ \t]*\(([A-Z][A-Za-z0-9&/\- ]{1,20})\)")
_YEARS = re.compile(r",?[ \t]*\(?(?:19|20)\d\d(?:[ \t]*(?:-|\u2013|to)[ \t]*(?:19|20)?\d\d)?\)?")
_HEAD_AFTER = re.compile(r"[ \t]+(survey|surveys|data|database|dataset|study|files?|sample|"
                         r"panel|cohort)\b")
# capitalized only because they start a sentence or a heading ("METHODS Data", "Data from
# the ...")
_LEADING = frozenset("""the this these that in we our for a an from using with table figure fig
see as by on of and to at among its their his her all both each while when although data
methods method sample results abstract introduction discussion measures background conclusion
conclusions materials participants procedure procedures appendix note notes source
sources""".split())
MAX_WORDS = 20      # a longer capitalized run is a heading or a list, not a name
_CUE = re.compile(r"\b(data|from|using|used|use|drawn|obtained|collected|sample|analy[sz]ed?)\b",
                  re.I)
_HEAD_END = frozenset({"data", "database", "dataset", "survey", "study"})

MENTION_FEATURES = ("log_occ", "acronym", "years", "n_tokens", "catalog_run",
                    "catalog_run_frac", "top_citation", "jaccard_found", "position", "cue",
                    "ends_with_head", "upper_share", "log_distinct")


def pattern_mentions(text: str) -> list[tuple[str, int]]:
    """``(mention, start offset)`` for every dataset-like name in ``text``, in text order."""
    out = []
    for m in _NAME.finditer(text):
        words = m.group(0).split()
        start = m.start()
        while words and words[0].lower().strip("'\u2019") in _LEADING:
            start = text.index(words[0], start) + len(words[0])
            words = words[1:]
            while start < m.end() and text[start] in " \t\n":
                start += 1
        while words and words[-1].lower() in _CONNECTORS:
            words = words[:-1]
        if not words or len(words) > MAX_WORDS:
            continue
        end = start + text[start:m.end()].rfind(words[-1]) + len(words[-1])
        names = [w for w in words if w.lower() not in _CONNECTORS]
        has_head = any(w.lower() in HEADS for w in names)
        acronym = _ACRONYM.match(text, end)
        if acronym:
            end = acronym.end()
        years = _YEARS.match(text, end)
        if years and years.group(0).strip(",( \t"):
            end = years.end()
        after = _HEAD_AFTER.match(text, end)
        if not has_head and after:
            has_head, end = True, after.end()
        if not has_head:
            continue
        # a single name needs a head word after it and capitals in it ("NHANES data")
        if len(names) < 2 and not (after and sum(ch.isupper() for ch in names[0]) >= 2):
            continue
        out.append((text[start:end], start))
    return out


def _catalog_run(toks: list[str], index: dict) -> int:
    """Longest run of the mention's words that is an n-gram of the catalog."""
    best = 0
    for i in range(len(toks)):
        for n in range(min(MAX_N, len(toks) - i), best, -1):
            gram = " ".join(toks[i:i + n])
            if gram in index and (n > 1 or len(gram) > 3):
                best = n
                break
    return best


def mention_features(text: str, index: dict, found: list[str],
                     top_citation: float) -> tuple[list[str], np.ndarray]:
    """Pattern mentions of ``text`` not already among ``found`` (the catalog-derived
    mentions), one row of MENTION_FEATURES each. ``index`` is the catalog's n-gram index,
    ``top_citation`` the best score among the publication's output citations (0 if none)."""
    known = [mention_tokens(f) for f in found]
    rows: dict[str, list] = {}
    length = max(1, len(text))
    for mention, start in pattern_mentions(text):
        key = normalize_exact(mention)
        if key in rows:
            rows[key][1] += 1
            continue
        jt = mention_tokens(mention)
        overlap = max((jaccard_empty_zero(jt, k) for k in known), default=0.0)
        if overlap >= 0.5:
            rows[key] = [None, 1, mention]
            continue
        toks = tokens(mention)
        run = _catalog_run(toks, index)
        letters = mention.replace(" ", "")
        f = [math.log1p(text.count(mention)), float("(" in mention),
             float(bool(re.search(r"(19|20)\d\d", mention))), len(toks), run,
             run / max(1, len(toks)), top_citation, overlap, start / length,
             float(bool(_CUE.search(text[max(0, start - 40):start]))),
             float(bool(toks) and toks[-1] in _HEAD_END),
             float(sum(ch.isupper() for ch in letters) >= 0.5 * len(letters))]
        rows[key] = [f, 1, mention]
    kept = [(v[2], v[0] + [math.log1p(v[1])]) for v in rows.values() if v[0] is not None]
    if not kept:
        return [], np.zeros((0, len(MENTION_FEATURES)))
    return [k for k, _ in kept], np.array([f for _, f in kept], dtype=float)
