"""Which mention strings the RCC system outputs.

Annotators list each way a paper writes a dataset's name as its own mention:
"National Health and Nutrition Examination Survey" and "NHANES", not
"National Health and Nutrition Examination Survey (NHANES)"; the scorer matches
mentions one to one. So each name found (catalog-derived or by pattern) is first
rewritten into the forms annotators list (``variants``): cut at a sentence end,
an unclosed bracket closed, leading words that are not part of a name dropped
("data from the", years), and "Name (ACRONYM)" also given as "Name" and
"ACRONYM". Names of organizations ("National Center for Health Statistics") are
not datasets and are dropped, with their acronyms.

A small learned selector (``SELECT_FEATURES``, trained by ``training.train_rcc``)
then scores every form. Besides the form's shape and the scores of the citation
or pattern it came from, it reads a prior learned from the training
publications: how often the same string was a gold mention when the system
proposed it (strings seen at least ``PRIOR_MIN`` times). Strings it has never
seen, as with a new catalog, get a neutral prior.
"""
from __future__ import annotations

import math
import re

import numpy as np

from ..metrics.mentions import normalize_exact

SELECT_FEATURES = ("citation_score", "pattern_score", "n_tokens", "n_chars", "has_digit",
                   "starts_digit", "has_head", "part", "log_occ", "prior", "log_seen")
PRIOR_MIN = 2          # a string seen once says little, and would bloat the model file

_ORG = frozenset("""center centers centre institute institutes bureau department agency
administration office foundation university council ministry prevention commission""".split())
# "Statistics" is left out: "National Center for Health Statistics" is an organization,
# while "Balance Sheet Statistics" names a dataset without any organization word
_HEAD = frozenset("""survey surveys study studies census panel database data dataset file
files sample cohort project register registry""".split())
_SENTENCE_END = re.compile(r"(?<=[a-z)])\. (?=[A-Z])")
_LEADING = re.compile(r"^(?:(?:data|from|the|conducted|by|of|in|and|\d[\d\-\u00ad\u2013/]*)\s+)+",
                      re.I)
_NAME_ACRONYM = re.compile(r"^(.*?)\s*\(([^()]{2,20})\)$")
_TRAILING_YEARS = re.compile(r",?\s*\(?(?:19|20)\d\d(?:\s*(?:-|\u2013|\u00ad|to|/)\s*(?:19|20)?\d\d)?\)?$")
_WORDS = re.compile(r"\w+")


def variants(mention: str) -> list[tuple[str, bool]]:
    """``(form, part)`` for the forms annotators would list for ``mention``; ``part``
    marks the name or acronym split off a "Name (ACRONYM)"."""
    m = _SENTENCE_END.split(" ".join(mention.split()))[0]
    if m.count("(") > m.count(")"):
        m += ")"
    m = _LEADING.sub("", m) or m
    out = [(m, False)]
    # "Name (ACRONYM), 1988-1994" is also "Name (ACRONYM)", split as below
    undated = _TRAILING_YEARS.sub("", m)
    if undated and undated != m:
        out.append((undated, True))
        m = undated
    split = _NAME_ACRONYM.match(m)
    if split:
        name, acronym = split.groups()
        if len(name.split()) >= 2:
            out.append((name, True))
        out.append((acronym, True))
    return out


def is_organization(form: str) -> bool:
    words = set(_WORDS.findall(form.lower()))
    return bool(words & _ORG) and not words & _HEAD


def candidates(cited: dict[str, float], pattern: dict[str, float]) -> dict[str, dict]:
    """The forms of the catalog-derived mentions (``cited``: mention -> citation score)
    and the pattern mentions (mention -> pattern score), keyed by their normalized form;
    organizations and the acronyms split off them are dropped."""
    out: dict[str, dict] = {}
    dropped: set[str] = set()
    for source, found in (("citation", cited), ("pattern", pattern)):
        for mention, score in found.items():
            forms = variants(mention)
            if is_organization(forms[0][0]):
                dropped.update(normalize_exact(f) for f, _ in forms)
                continue
            for form, part in forms:
                key = normalize_exact(form)
                if not key or is_organization(form):
                    dropped.add(key)
                    continue
                c = out.setdefault(key, {"mention": form, "citation": 0.0, "pattern": 0.0,
                                         "part": part})
                c[source] = max(c[source], score)
                c["part"] = c["part"] and part
    return {k: v for k, v in out.items() if k not in dropped}


def features(cands: dict[str, dict], text: str, prior: dict) -> np.ndarray:
    """One row of SELECT_FEATURES per candidate, in ``cands`` order. ``prior`` maps a
    normalized form to ``[gold, seen]`` counts from the training publications."""
    lower = text.lower()
    rows = []
    for key, c in cands.items():
        words = key.split()
        gold, seen = prior.get(key, (0, 0))
        rows.append([c["citation"], c["pattern"], len(words), len(key),
                     float(any(ch.isdigit() for ch in key)), float(key[:1].isdigit()),
                     float(bool(set(words) & _HEAD)), float(c["part"]),
                     math.log1p(lower.count(c["mention"].lower())),
                     math.log((gold + 0.5) / (seen - gold + 0.5)), math.log1p(seen)])
    return np.array(rows, dtype=float).reshape(len(rows), len(SELECT_FEATURES))


def prior_counts(keys, labels, min_seen: int = PRIOR_MIN) -> dict[str, list[int]]:
    """``{form: [gold, seen]}`` over training candidates, for forms seen ``min_seen``
    times or more."""
    counts: dict[str, list[int]] = {}
    for key, label in zip(keys, labels):
        c = counts.setdefault(key, [0, 0])
        c[0] += int(label)
        c[1] += 1
    return {k: v for k, v in counts.items() if v[1] >= min_seen}
