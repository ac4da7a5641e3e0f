"""Rich Context reference system: which catalog datasets a publication cites.

Pipeline (one publication at a time, so it runs as a plain function); the catalog is
in ``rcc_catalog`` (cached between runs by ``rcc_cache``), candidates and features in
``rcc_features``, the tree walk in ``rcc_trees``, and the model and output here:

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
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import rcc_mentions
from .rcc_catalog import Catalog, title_span
from .rcc_features import (FEATURES, MAX_DF, NEAR, NO_YEARS, STAGE2, WORD, Candidate, _find,
                           candidates, cosines, features, stage2_features)
from .rcc_mentions import SELECT_FEATURES
from .rcc_patterns import MENTION_FEATURES, mention_features
from .rcc_trees import Trees
from .text import STOPWORDS, drop_digit_lines, normalize

__all__ = ["FEATURES", "MAX_DF", "MODEL_PATH", "NEAR", "NO_YEARS", "STAGE2", "Candidate",
           "Catalog", "RccModel", "Trees", "candidates", "cited_mentions", "cosines",
           "features", "find_citations", "model", "normalize", "prepare_text", "reference_only",
           "stage2_features", "title_span"]

MODEL_PATH = Path(__file__).with_name("models") / "rcc_citations.json"


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
    # the columns of FEATURES that stage 1 reads, when it was trained on fewer (a model
    # from before the reference-list features; None: all of them)
    columns: list[int] | None = None

    @classmethod
    def load(cls, path: str | Path = MODEL_PATH) -> "RccModel":
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        mentions, selector = d.get("mentions"), d.get("selector")
        names = tuple(d["stage1"]["features"])
        if not set(names) <= set(FEATURES) or tuple(d["stage2"]["features"]) != STAGE2 \
                or (mentions and tuple(mentions["features"]) != MENTION_FEATURES) \
                or (selector and tuple(selector["features"]) != SELECT_FEATURES):
            raise ValueError(f"{path}: trained with other features; retrain with "
                             "`shareval train-system rcc`")
        return cls(Trees.from_json(d["stage1"]), Trees.from_json(d["stage2"]), d["threshold"],
                   d["cosine_min"], d.get("meta", {}),
                   Trees.from_json(mentions) if mentions else None,
                   d.get("mention_threshold", 1.0),
                   Trees.from_json(selector) if selector else None,
                   d.get("selector_threshold", 0.5), d.get("prior", {}),
                   None if names == FEATURES else [FEATURES.index(n) for n in names])

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
        p1 = self.stage1.predict(X if self.columns is None else X[:, self.columns])
        # stage 2 judges the pairs stage 1 found plausible; the rest (nearly all, and far
        # below any useful threshold) score 0
        near = np.flatnonzero(p1 >= self.cosine_min)
        p = np.zeros(len(cands))
        refs_only = reference_only(X)
        if len(near):
            # pairs named only in the reference list score 0 below: no cosine for them,
            # but they stay in stage 2's ranking so the other pairs' scores are unchanged
            ask = ~refs_only[near]
            cos = np.zeros(len(near))
            if embed is not None and ask.any():
                cos[ask] = cosines(text, [cands[i] for i in near[ask]], catalog, embed)
            p[near] = self.stage2.predict(stage2_features(p1[near], [0] * len(near), cos))
        p[refs_only] = 0.0
        return cands, p


_REF_SHARE = FEATURES.index("ref_share")


def reference_only(X: np.ndarray) -> np.ndarray:
    """The rows (pairs) whose specific matches all lie in the text's reference list
    (``ref_share`` 1; ``rcc_zones``): an entry there names what the paper cites, not
    necessarily the data it uses, and in a PDF-to-text form, which keeps the whole list,
    such pairs were mostly wrong (docs/dev/systems-experiments-round5-rcc.md). A pair
    without specific matches has ``ref_share`` 0 and is kept."""
    return X[:, _REF_SHARE] >= 1.0 if len(X) else np.zeros(0, bool)


# ---------------------------------------------------------------------------
# The system as a function

_MODEL: RccModel | None = None


def model() -> RccModel:
    global _MODEL
    if _MODEL is None:
        _MODEL = RccModel.load()
    return _MODEL


def prepare_text(raw: str) -> str:
    """What the RCC system reads of a publication: the lines the training texts would
    keep (``drop_digit_lines``; raw PDF text keeps its reference entries and tables,
    the training JSON lost them), normalized (``text.normalize``)."""
    return normalize(drop_digit_lines(raw))


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
    text = prepare_text(text)
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


_EDGEWORDS = STOPWORDS - {"survey", "data", "study", "i", "ii", "iii"}
_JOIN = re.compile(r"[ \t\n\r\-'\u2019\u00ad]{1,3}")


def text_words(text: str) -> tuple[list, list[str]]:
    """The word matches of ``text`` and their lower-cased strings, as ``_mentions`` reads
    them (computed once per publication)."""
    words = list(WORD.finditer(text))
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
        while b - a > len(parts) and toks[b - 1] in _EDGEWORDS:
            b -= 1
        while b - a > len(parts) and toks[a] in _EDGEWORDS:
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
