"""Research fields and methods: keyphrases matched to a user-supplied taxonomy.

A deliberately simple approach (Rich Context tasks 2 and 3):

1. Keyphrases: runs of up to four content words between stopwords and
   punctuation (the RAKE idea), scored by frequency x length.
2. Each taxonomy label (and its synonyms) is matched to the text: a label whose
   words all occur inside one keyphrase scores by that keyphrase's weight; the
   best labels are output with scores in [0, 1].
3. Keyphrases cut after a method word ("regression", "model", "analysis", ...)
   that match no method label are listed as *candidate new methods*.

Limits: no training, no embeddings, English only; a field mentioned only in
words the taxonomy does not list is missed; generic labels ("Statistics") match
often. The taxonomy file is JSON ``{"fields": [labels], "methods": [labels]}``
where a label may be ``"Economics"`` or ``{"label": ..., "synonyms": [...]}``.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from .text import normalize

_STOP = frozenset("""a about above after again against all also am an and any are as at be
because been before being below between both but by can could did do does doing down during
each few for from further had has have having he her here hers him his how i if in into is it
its itself just more most my no nor not now of off on once only or other our out over own same
she should so some such than that the their them then there these they this those through to
too under until up very was we were what when where which while who whom why will with would
you your et al table figure fig data results result study paper using used use based new two
one three however thus may also within among""".split())
METHOD_HEADS = ("regression", "model", "models", "analysis", "estimation", "estimator", "test",
                "method", "methods", "approach", "sampling", "design", "algorithm", "matching",
                "survey", "experiment", "simulation")
_SPLIT = re.compile(r"[^A-Za-z\- ]+|\s-\s")


def keyphrases(text: str, max_words: int = 4) -> Counter:
    """Candidate keyphrases (lower-cased) with frequency x length weights."""
    counts: Counter = Counter()
    for chunk in _SPLIT.split(normalize(text).lower()):
        phrase: list[str] = []
        for w in chunk.split() + [""]:
            if w and w not in _STOP and len(w) > 2:
                phrase.append(w)
                continue
            if 1 <= len(phrase) <= max_words:
                counts[" ".join(phrase)] += len(phrase)
            phrase = []
    return counts


def read_taxonomy(path: str | Path) -> dict[str, list[tuple[str, list[str]]]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected {{\"fields\": [...], \"methods\": [...]}}")
    out = {}
    for kind in ("fields", "methods"):
        entries = []
        for i, item in enumerate(data.get(kind, [])):
            if isinstance(item, str):
                entries.append((item, [item]))
            elif isinstance(item, dict) and isinstance(item.get("label"), str):
                entries.append((item["label"], [item["label"], *item.get("synonyms", [])]))
            else:
                raise ValueError(f"{path}: {kind}[{i}]: expected a label or "
                                 "{\"label\", \"synonyms\"}")
        out[kind] = entries
    return out


def match(phrases: Counter, entries, top: int = 3) -> list[tuple[str, float]]:
    """Taxonomy labels found among the keyphrases, best first, scores in [0, 1]."""
    if not phrases:
        return []
    best = max(phrases.values())
    scores = {}
    for label, names in entries:
        s = 0.0
        for name in names:
            words = [w for w in re.findall(r"[a-z]+", name.lower()) if w not in _STOP]
            if not words:
                continue
            s += sum(wt for p, wt in phrases.items() if all(w in p.split() for w in words))
        if s:
            scores[label] = min(1.0, s / best)
    return sorted(scores.items(), key=lambda kv: -kv[1])[:top]


def fields_and_methods(text: str, taxonomy, publication_id="0", top: int = 3) -> dict:
    """``research_fields``, ``methods`` and ``candidate_methods`` records of one text."""
    phrases = keyphrases(text)
    fields = match(phrases, taxonomy.get("fields", []), top)
    methods = match(phrases, taxonomy.get("methods", []), top)
    known = {w for label, names in taxonomy.get("methods", []) for n in names
             for w in [n.lower()]}
    new: Counter = Counter()
    for p, wt in phrases.items():
        words = p.split()
        for j in range(1, len(words)):          # cut the phrase after a method word
            head = " ".join(words[:j + 1])
            if words[j] in METHOD_HEADS and head not in known:
                new[head] += wt
    new = new.most_common(top)
    return {
        "research_fields": [{"publication_id": publication_id, "research_field": f,
                             "score": round(s, 4)} for f, s in fields],
        "methods": [{"publication_id": publication_id, "method": m, "score": round(s, 4)}
                    for m, s in methods],
        "candidate_methods": [{"publication_id": publication_id, "method": p,
                               "weight": wt} for p, wt in new],
    }
