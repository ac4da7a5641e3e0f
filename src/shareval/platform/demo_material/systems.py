"""The demo teams' retrieval systems: real, simple, and different.

Each reads the pack's translations and the query string (plan 7.1 syntax),
scores every document and says Y above its threshold. Confidences are
absolute (not scaled per query), so a query whose words match only weakly
retrieves nothing, as a query without relevant documents should.

* ``bm25``: BM25 (k1 1.2, b 0.75) with the query words expanded by a small
  lexicon for conceptual queries (``word+``, ``EXAMPLE_OF(...)``).
* ``overlap``: the share of the query's words the document has, weighted by
  how often they occur; no expansion.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from shareval.platform.demo_material.corpus import Topic

WORD = re.compile(r"[a-z']+")
STOP = {"the", "and", "of", "in", "a", "to", "on", "about", "said", "that", "were", "was"}


@dataclass(frozen=True)
class System:
    label: str             # SysLabel of the canonical archive name
    method: str            # "bm25" or "overlap"
    threshold: float
    expand: bool = False
    k1: float = 1.2
    b: float = 0.75

    def describe(self) -> str:
        what = {"bm25": "BM25 over the English translations", "overlap": "query-word overlap"}
        expanded = ", conceptual queries expanded by a lexicon" if self.expand else ""
        return f"{what[self.method]}{expanded}; Y when the confidence is at least " \
               f"{self.threshold:g}"


def tokens(text: str) -> list[str]:
    return [w for w in WORD.findall(text.lower()) if w not in STOP]


def query_words(topic: Topic, expand: bool) -> list[str]:
    """The words of the query string, without the syntax; with ``expand``, a
    conceptual query also gets the first two words its lexicon relates to it."""
    words = tokens(re.sub(r"EXAMPLE_OF|\[[^\]]*\]|[\"<>()+,]", " ", topic.query_string))
    if expand and topic.type == "conceptual":
        words += tokens(" ".join(topic.related[:2]))
    return list(dict.fromkeys(words))


class Index:
    """Term counts of a collection, for both methods."""

    def __init__(self, texts: dict[str, str]):
        self.doc_ids = list(texts)
        self.counts = [Counter(tokens(texts[d])) for d in self.doc_ids]
        self.lengths = [sum(c.values()) for c in self.counts]
        self.avg = sum(self.lengths) / max(1, len(self.lengths))
        df = Counter(w for c in self.counts for w in c)
        n = len(self.doc_ids)
        self.idf = {w: math.log(1 + (n - k + 0.5) / (k + 0.5)) for w, k in df.items()}

    def scores(self, system: System, words: list[str]) -> list[float]:
        out = []
        for c, length in zip(self.counts, self.lengths):
            if system.method == "bm25":
                norm = system.k1 * (1 - system.b + system.b * length / self.avg)
                s = sum(self.idf.get(w, 0.0) * c[w] * (system.k1 + 1) / (c[w] + norm)
                        for w in words if c[w])
                out.append(1 - math.exp(-s / 6))          # absolute: 0 .. 1
            else:
                have = [w for w in words if c[w]]
                tf = sum(c[w] for w in have)
                out.append(len(have) / len(words) * min(1.0, 0.4 + 0.2 * tf) if words else 0.0)
        return out


def confidence(x: float) -> str:
    """Plan 7.4: one digit, a point and 1 to 5 digits, between 0.0 and 1.0."""
    return f"{min(1.0, max(0.0, x)):.4f}"


def run(system: System, index: Index, queries: list[Topic]) -> dict[str, list[tuple]]:
    """query id -> (doc_id, Y/N, confidence text) per document, in collection order."""
    out = {}
    for q in queries:
        s = index.scores(system, query_words(q, system.expand))
        out[q.query_id] = [(d, "Y" if x >= system.threshold else "N", confidence(x))
                           for d, x in zip(index.doc_ids, s)]
    return out
