"""Simulated judges and annotators of KBP relation items, answering from the reference.

* :class:`Judge` answers a relation item's question chain (``subject``,
  ``object``, ``relation``: the questions of the server's relation chains) from
  the annotations (assessment.kbp_sim.Oracle: subject right when its span is a
  mention of an entity heading a label with the relation, object likewise for
  the tail, relation right when the item is true, as metrics.relations counts
  them), each answer flipped with probability ``error``, following the chain's
  skip rules (default: yes goes on, no ends the item as incorrect).
* :class:`Annotator` annotates a document exhaustively: the set of item keys it
  marks true (assessment.exhaustive.recall_judgments turns them into recall
  judgments). The true items of a document are every (mention of h, relation,
  mention of t) of every label: the unit of mention-level recall.
"""
from __future__ import annotations

import numpy as np

from ..formats.kbp_runs import parse_item_key
from .judgments import Judgment
from .kbp_sim import Oracle, false_item

QUESTIONS = ("subject", "object", "relation")
CHAIN = [{"id": q} for q in QUESTIONS]


def _doc(key: str) -> str:
    parts = parse_item_key(key)
    if parts is None:
        raise ValueError(f"not a relation item key: {key!r}")
    return parts[0]


def walk(chain: list[dict], answer) -> tuple[dict[str, str], bool]:
    """Answers given along a chain and its verdict. ``answer(question id)`` gives
    "yes" or "no"; a question's ``yes``/``no`` may name the next step ("next",
    "correct", "incorrect" or a later question id); by default yes goes on (after
    the last question: correct) and no ends the item as incorrect."""
    ids = [q["id"] for q in chain]
    given, i = {}, 0
    while i < len(chain):
        q = chain[i]
        a = given[q["id"]] = answer(q["id"])
        target = q.get(a) or ("next" if a == "yes" else "incorrect")
        if target in ("correct", "incorrect"):
            return given, target == "correct"
        i = i + 1 if target == "next" else ids.index(target)
    return given, True


class Judge:
    """Answers relation items' chains from the annotations; each answer is flipped
    with probability ``error``."""

    def __init__(self, oracle: Oracle, error: float = 0.0, seed=0,
                 chain: list[dict] | None = None, name: str = "sim-judge"):
        if not 0 <= error <= 1:
            raise ValueError("error must be in [0, 1]")
        self.oracle, self.error, self.name = oracle, error, name
        self.chain = chain or CHAIN
        self.rng = np.random.default_rng(seed)

    def answer(self, key: str) -> tuple[dict[str, str], bool]:
        truths = self.oracle.questions(key)

        def one(q: str) -> str:
            flip = self.error > 0 and self.rng.random() < self.error
            return "yes" if truths[q] != flip else "no"
        return walk(self.chain, one)

    def __call__(self, key: str) -> float:
        """The verdict as 1.0 / 0.0 (what OnDemand's ``judge`` returns)."""
        return float(self.answer(key)[1])

    def expected(self, key: str) -> float:
        """The probability that this judge's verdict is correct (what its
        judgments estimate: the truth only when ``error`` is 0)."""
        truths = self.oracle.questions(key)
        p_yes = {q: 1 - self.error if v else self.error for q, v in truths.items()}

        def go(i: int) -> float:
            if i >= len(self.chain):
                return 1.0
            q = self.chain[i]
            total = 0.0
            for a, p in (("yes", p_yes[q["id"]]), ("no", 1 - p_yes[q["id"]])):
                target = q.get(a) or ("next" if a == "yes" else "incorrect")
                if p == 0:
                    continue
                if target in ("correct", "incorrect"):
                    total += p * (target == "correct")
                else:
                    nxt = i + 1 if target == "next" else [c["id"] for c in self.chain].index(
                        target)
                    total += p * go(nxt)
            return total
        return go(0)

    def judgments(self, rows) -> list[Judgment]:
        """Records for ``estimate_all`` from ``assessment.sample`` rows (precision):
        the verdict as question ``correct`` and each answered question, as the
        server's results export them. An item on several rows (the uniform design
        draws it for each output holding it) is judged once."""
        out, seen = [], {}
        for n, row in enumerate(rows):
            if row.item not in seen:
                seen[row.item] = self.answer(row.item)
            given, verdict = seen[row.item]
            for q, v in [("correct", verdict)] + [(q, a == "yes") for q, a in given.items()]:
                out.append(Judgment(row.item, tuple(row.submissions), self.name, q, float(v),
                                    row.inclusion_probability, row.doc, row.drawn_for,
                                    tuple(row.drawn_by), n))
        return out


class Annotator:
    """An exhaustive annotation of a document: each suggestion (the pooled outputs)
    judged right except with probability ``error``; each true item not suggested
    found with probability 1 - ``miss``; about ``invent`` false items per document
    added (Poisson)."""

    def __init__(self, oracle: Oracle, miss: float = 0.0, error: float = 0.0,
                 invent: float = 0.0, seed=0, name: str = "sim-annotator"):
        if not (0 <= miss <= 1 and 0 <= error <= 1 and invent >= 0):
            raise ValueError("miss and error must be in [0, 1], invent >= 0")
        self.oracle, self.miss, self.error, self.invent = oracle, miss, error, invent
        self.rng, self.name = np.random.default_rng(seed), name

    def annotate(self, doc: str, suggestions=()) -> set[str]:
        true = self.oracle.true_items(doc)
        marked = set()
        suggested = sorted(set(suggestions))
        for key in suggested:
            if _doc(key) != doc:
                raise ValueError(f"suggestion {key!r} is not of document {doc!r}")
            if (key in true) != (self.error > 0 and self.rng.random() < self.error):
                marked.add(key)
        for key in sorted(true - set(suggested)):
            if not (self.miss > 0 and self.rng.random() < self.miss):
                marked.add(key)
        for _ in range(self.rng.poisson(self.invent) if self.invent else 0):
            key = false_item(self.oracle, doc, self.rng, marked | set(suggested))
            if key is not None:
                marked.add(key)
        return marked


def suggestions_by_doc(outputs: dict[str, set[str]], docs) -> dict[str, set[str]]:
    """The pooled outputs of each of ``docs``: an annotator's suggestions."""
    want = set(docs)
    out: dict[str, set[str]] = {d: set() for d in want}
    for keys in outputs.values():
        for k in keys:
            d = _doc(k)
            if d in want:
                out[d].add(k)
    return out


__all__ = ["walk", "Judge", "Annotator", "suggestions_by_doc", "QUESTIONS", "CHAIN"]
