"""Relation extraction against an entity-level gold standard (pure Python sets, no I/O).

Gold, per document: entities (each a set of mention spans) and labels
(head entity, tail entity, relation). Predictions: (document, subject span,
relation, object span, subject text, object text), distinct.

* **Mention level**: a prediction is correct when some gold label (h, t, r) has
  the predicted relation, the subject span among h's mentions and the object span
  among t's. The gold mention triples are every (subject mention of h, r, object
  mention of t) of every label.
* **Entity level**: each span is linked to the gold entity it is a mention of (a span
  that is no gold mention stands for an entity named by its text, which is never in
  the gold); distinct (document, head, relation, tail) triples are compared with the
  gold labels. A span that is a mention of several entities is linked to the one
  that makes a gold label, else to the lowest-numbered.
* **Factorised** (the spec's P_e = P_r * P_s * P_o, over predictions): subject correct
  when its span is a mention of an entity that is the head of a gold label with the
  predicted relation; object correct likewise for the tail; relation correct when
  the prediction is correct at mention level.

>>> gold = {"d": ([{(0, 4)}, {(10, 15)}], {(0, 1, "P1")})}
>>> c = relation_counts(gold, [("d", (0, 4), "P1", (10, 15), "Anna", "Paris")])
>>> c.mention.tp, c.entity.tp, c.entity.gold
(1, 1, 1)
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import product

__all__ = ["Counts", "RelationCounts", "prf", "relation_counts", "gold_mention_triples",
           "link"]


@dataclass
class Counts:
    tp: int = 0
    predicted: int = 0
    gold: int = 0

    def add(self, other: "Counts") -> None:
        self.tp += other.tp
        self.predicted += other.predicted
        self.gold += other.gold

    def scores(self) -> tuple[float, float, float]:
        return prf(self.tp, self.predicted, self.gold)


@dataclass
class RelationCounts:
    mention: Counts
    entity: Counts
    # correct subject / object / relation among the (mention-level) predictions
    subject_correct: int
    object_correct: int
    per_relation: dict[str, tuple[Counts, Counts]] = field(default_factory=dict)
    # per document: (mention-level, entity-level) counts
    per_document: dict[str, tuple[Counts, Counts]] = field(default_factory=dict)
    unlinked_mentions: int = 0


def prf(tp: int, predicted: int, gold: int) -> tuple[float, float, float]:
    """Precision, recall, F1; 0 when undefined (no predictions, no gold)."""
    p = tp / predicted if predicted else 0.0
    r = tp / gold if gold else 0.0
    f = 2 * tp / (predicted + gold) if predicted + gold else 0.0
    return p, r, f


def gold_mention_triples(entities, labels) -> set[tuple]:
    """Every (subject span, relation, object span) the labels imply."""
    return {(s, r, o) for h, t, r in labels for s, o in product(entities[h], entities[t])}


def link(entities, span) -> list[int]:
    """The entities ``span`` is a mention of, lowest first."""
    return [i for i, spans in enumerate(entities) if span in spans]


def relation_counts(gold: dict, predictions) -> RelationCounts:
    """``gold``: {doc: (entities, labels)}; ``predictions``: distinct
    (doc, subject span, relation, object span, subject text, object text)."""
    by_doc = defaultdict(list)
    for p in predictions:
        by_doc[p[0]].append(p[1:])
    per_rel: dict[str, tuple[Counts, Counts]] = defaultdict(lambda: (Counts(), Counts()))
    total = RelationCounts(Counts(), Counts(), 0, 0)
    for doc in sorted(set(gold) | set(by_doc)):
        entities, labels = gold.get(doc, ([], set()))
        _document(entities, labels, by_doc.get(doc, []), per_rel, total, doc)
    total.per_relation = dict(sorted(per_rel.items()))
    return total


def _document(entities, labels, preds, per_rel, total: RelationCounts, doc) -> None:
    mentions = gold_mention_triples(entities, labels)
    heads, tails = defaultdict(set), defaultdict(set)
    for h, t, r in labels:
        heads[r].add(h)
        tails[r].add(t)
    linked = {}                      # span -> candidate entities, cached per document
    predicted_entities: set[tuple] = set()
    for s, r, o, s_text, o_text in preds:
        for span in (s, o):
            if span not in linked:
                linked[span] = link(entities, span)
        correct = (s, r, o) in mentions
        total.mention.tp += correct
        per_rel[r][0].tp += correct
        per_rel[r][0].predicted += 1
        total.subject_correct += bool(heads[r] & set(linked[s]))
        total.object_correct += bool(tails[r] & set(linked[o]))
        total.unlinked_mentions += (not linked[s]) + (not linked[o])
        predicted_entities.add(_entity_triple(linked[s], r, linked[o], s_text, o_text, labels))
    doc_mentions = Counts(sum((s, r, o) in mentions for s, r, o, _, _ in preds), len(preds),
                          len(mentions))
    total.mention.predicted += len(preds)
    total.mention.gold += len(mentions)
    for (_, r, _) in mentions:
        per_rel[r][0].gold += 1
    doc_counts = Counts(len(predicted_entities & labels), len(predicted_entities), len(labels))
    total.entity.add(doc_counts)
    total.per_document[doc] = doc_mentions, doc_counts
    for h, t, r in predicted_entities:
        per_rel[r][1].predicted += 1
        per_rel[r][1].tp += (h, t, r) in labels
    for _, _, r in labels:
        per_rel[r][1].gold += 1


def _entity_triple(heads, r, tails, s_text, o_text, labels) -> tuple:
    """(head, tail, relation) of the linked entities; an unlinked span is ("text", its text)."""
    hs = heads or [("text", s_text)]
    ts = tails or [("text", o_text)]
    pairs = list(product(hs, ts))
    chosen = next(((h, t) for h, t in pairs if (h, t, r) in labels), pairs[0])
    return chosen[0], chosen[1], r
