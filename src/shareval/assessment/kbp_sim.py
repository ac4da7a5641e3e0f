"""Simulated teams on a KBP reference (Re-DocRED) with known errors and known truth.

The unit is the relation mention, as at ``kbp-relations``' mention level
(metrics.relations): an item (key ``formats.kbp_runs.item_key``) is
(document, subject span, relation id, object span), and it is **true** when a
label (h, t, r) of the document has its relation, the subject span among h's
mentions and the object span among t's. A document's true items are every
(mention of h, r, mention of t) of every label, the denominator of mention-level
recall: so an exhaustive annotator must mark all of them (a label whose two
entities have two mentions each is four items), and recall estimated from
annotated documents estimates the recall ``shareval score kbp-relations`` prints.

* :func:`make_runs`: team runs made from the labels with known errors. Each label
  gives its ``pairs`` nearest mention pairs (fewest sentences apart); every pair is
  kept, dropped, given a wrong relation (one seen with the same entity types when
  there is one) or a wrong span (a token more or less, else another entity's
  mention), in exactly the profile's shares; then spurious pairs are added. Labels
  have an ease shared by all teams, so teams overlap as real systems do.
* :func:`truth`: a run's mention-level P/R/F1 by the task's own metric.
* :class:`Oracle`: what the annotations say of any item (the judges and
  annotators of assessment.kbp_judges answer from it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from ..formats.kbp import Document, KbpReference, Span
from ..formats.kbp_runs import Prediction, item_key, parse_item_key
from ..metrics.relations import gold_mention_triples, relation_counts
from .outputs import Output

ORIGINS = ("kept", "wrong_relation", "wrong_span", "spurious")
TSV_COLUMNS = ("doc_id", "subject", "subject_start", "subject_end", "relation", "object",
               "object_start", "object_end")


@dataclass(frozen=True)
class TeamProfile:
    """Shares of the team's mention pairs kept, relabelled and moved (the rest are
    dropped), spurious pairs per document, and ``pairs`` mention pairs per label
    (0: all of them)."""
    name: str
    keep: float = 0.6
    wrong_relation: float = 0.1
    wrong_span: float = 0.05
    spurious_per_doc: float = 0.5
    pairs: int = 1

    def __post_init__(self):
        shares = (self.keep, self.wrong_relation, self.wrong_span)
        if min(shares) < 0 or sum(shares) > 1 + 1e-9 or self.spurious_per_doc < 0 \
                or self.pairs < 0:
            raise ValueError(f"{self.name}: keep, wrong_relation and wrong_span must be >= 0 "
                             f"with a sum <= 1; spurious_per_doc and pairs >= 0")


@dataclass
class TeamRun:
    profile: TeamProfile
    predictions: list[Prediction]
    origin: dict[str, str]              # item key -> one of ORIGINS
    planned: dict[str, int]             # pairs per outcome (ORIGINS and "dropped")
    dropped: int = 0

    @property
    def name(self) -> str:
        return self.profile.name

    def keys(self) -> set[str]:
        return set(self.origin)

    def output(self) -> Output:
        return Output(self.name, {item_key(*p.key): p.doc for p in self.predictions})

    def counts(self) -> dict[str, int]:
        out = {o: 0 for o in ORIGINS}
        for o in self.origin.values():
            out[o] += 1
        out["dropped"] = self.dropped
        return out


# the reference, indexed -----------------------------------------------------------------

@dataclass
class _Doc:
    doc: Document
    true: set[tuple[Span, str, Span]]             # gold mention triples (s, r, o)
    heads: dict[str, set[Span]]                   # relation -> spans of its labels' heads
    tails: dict[str, set[Span]]
    where: dict[int, tuple[int, int]] = field(default_factory=dict)  # char start -> (sent, tok)
    ends: dict[int, tuple[int, int]] = field(default_factory=dict)   # char end -> (sent, tok+1)


class Oracle:
    """What the annotations say about any relation mention of a reference."""

    def __init__(self, ref: KbpReference):
        self.ref = ref
        self.docs: dict[str, _Doc] = {}
        sig: dict[tuple[str, str], dict[str, int]] = {}
        for title, d in ref.documents.items():
            heads: dict[str, set[Span]] = {}
            tails: dict[str, set[Span]] = {}
            for h, t, r in d.labels:
                heads.setdefault(r, set()).update(d.entities[h])
                tails.setdefault(r, set()).update(d.entities[t])
                k = (_type(d, h), _type(d, t))
                sig.setdefault(k, {})[r] = sig.setdefault(k, {}).get(r, 0) + 1
            x = _Doc(d, gold_mention_triples(d.entities, d.labels), heads, tails)
            for s, sent in enumerate(d.sentences):
                for k, tok in enumerate(sent):
                    start = d.token_starts[s][k]
                    x.where[start], x.ends[start + len(tok)] = (s, k), (s, k + 1)
            self.docs[title] = x
        # relations seen with each (head type, tail type): the plausible wrong relations
        self.signature = {k: sorted(v.items()) for k, v in sig.items()}

    def questions(self, key: str) -> dict[str, bool]:
        """The true answers of the chain for an item (as metrics.relations' subject,
        object and relation precision count them)."""
        doc, s, r, o = _parse(key)
        x = self.docs[doc]
        return {"subject": s in x.heads.get(r, ()), "object": o in x.tails.get(r, ()),
                "relation": (s, r, o) in x.true}

    def is_true(self, key: str) -> bool:
        doc, s, r, o = _parse(key)
        return (s, r, o) in self.docs[doc].true

    def true_items(self, doc: str) -> set[str]:
        return {item_key(doc, s, r, o) for s, r, o in self.docs[doc].true}


def _type(d: Document, e: int) -> str:
    return d.types[e] if e < len(d.types) else ""


def _parse(key: str):
    parts = parse_item_key(key)
    if parts is None:
        raise ValueError(f"not a relation item key: {key!r}")
    return parts


# team runs ------------------------------------------------------------------------------

def _allocate(n: int, shares: list[float]) -> list[int]:
    """Whole counts summing to n in the given shares (largest remainders)."""
    raw = [n * s for s in shares]
    out = [int(np.floor(v)) for v in raw]
    for i in sorted(range(len(raw)), key=lambda i: out[i] - raw[i])[:n - sum(out)]:
        out[i] += 1
    return out


def _sentence(x: _Doc, span: Span) -> int:
    return x.where[span[0]][0]


def _slots(oracle: Oracle, pairs: int) -> list[tuple[str, int, int, str, Span, Span, int]]:
    """(doc, h, t, r, subject span, object span, label number) per mention pair taken:
    each label's ``pairs`` nearest pairs (0: all)."""
    out, n = [], 0
    for title in sorted(oracle.docs):
        x = oracle.docs[title]
        for h, t, r in sorted(x.doc.labels):
            cand = sorted((abs(_sentence(x, s) - _sentence(x, o)), s, o)
                          for s in x.doc.entities[h] for o in x.doc.entities[t])
            for _, s, o in cand[:pairs or None]:
                out.append((title, h, t, r, s, o, n))
            n += 1
    return out


def make_runs(ref: KbpReference | Oracle, profiles: list[TeamProfile], seed: int = 0,
              independence: float = 0.3) -> list[TeamRun]:
    """One run per profile. Labels get an ease shared by the teams; a team's pairs are
    ranked by ease plus its own noise (sd ``independence``): the easiest are kept, the
    next relabelled, then moved, the hardest dropped."""
    oracle = ref if isinstance(ref, Oracle) else Oracle(ref)
    n_labels = sum(len(x.doc.labels) for x in oracle.docs.values())
    ease = np.random.default_rng(seed).random(n_labels)
    runs = []
    for i, prof in enumerate(profiles):
        rng = np.random.default_rng([seed, i + 1])
        slots = _slots(oracle, prof.pairs)
        score = ease[[s[6] for s in slots]] + independence * rng.standard_normal(len(slots))
        order = np.argsort(-score, kind="stable")
        shares = [prof.keep, prof.wrong_relation, prof.wrong_span]
        counts = _allocate(len(slots), shares + [max(0.0, 1 - sum(shares))])
        outcome = np.repeat(np.arange(4), counts)
        run = TeamRun(prof, [], {}, dict(zip(("kept", "wrong_relation", "wrong_span",
                                              "dropped"), counts)))
        made: dict[str, str] = {}
        fate = np.empty(len(slots), dtype=int)
        fate[order] = outcome
        for slot, f in zip(slots, fate):
            if f == 3:
                run.dropped += 1
                continue
            doc, h, t, r, s, o, _ = slot
            key = [_kept, _wrong_relation, _wrong_span][f](oracle, doc, (h, t, r, s, o), rng,
                                                           made)
            if key is None:          # no wrong variant left (tiny documents): count it dropped
                run.dropped += 1
                continue
            made[key] = ORIGINS[f]
        docs = sorted(oracle.docs)
        total = int(round(prof.spurious_per_doc * len(docs)))
        run.planned["spurious"] = total
        for d in rng.choice(len(docs), size=total) if docs else []:
            key = false_item(oracle, docs[d], rng, made)
            if key is not None:
                made[key] = "spurious"
        run.origin = made
        run.predictions = [_prediction(oracle, k) for k in sorted(made)]
        runs.append(run)
    return runs


def _prediction(oracle: Oracle, key: str) -> Prediction:
    doc, s, r, o = _parse(key)
    text = oracle.docs[doc].doc.text
    return Prediction(None, doc, s, r, o, text[s[0]:s[1]], text[o[0]:o[1]])


def _free(oracle: Oracle, doc: str, s: Span, r: str, o: Span, made) -> str | None:
    """The item's key when it is a new, false relation mention, else None."""
    key = item_key(doc, s, r, o)
    return None if key in made or (s, r, o) in oracle.docs[doc].true else key


def _kept(oracle, doc, slot, rng, made):
    h, t, r, s, o = slot
    key = item_key(doc, s, r, o)
    return None if key in made else key


def _wrong_relation(oracle, doc, slot, rng, made):
    h, t, r, s, o = slot
    d = oracle.docs[doc].doc
    seen = oracle.signature.get((_type(d, h), _type(d, t)), [])
    plausible = [rel for rel, _ in seen if rel != r]
    weights = np.array([n for rel, n in seen if rel != r], dtype=float)
    first = list(rng.choice(plausible, size=len(plausible), replace=False,
                            p=weights / weights.sum())) if plausible else []
    rest = [rel for rel in rng.permutation(sorted(oracle.ref.relations)) if rel not in first]
    for rel in first + rest:
        key = _free(oracle, doc, s, str(rel), o, made)
        if key is not None:
            return key
    return None


def _wrong_span(oracle, doc, slot, rng, made):
    h, t, r, s, o = slot
    x = oracle.docs[doc]
    roles = ["subject", "object"] if rng.random() < 0.5 else ["object", "subject"]
    for role in roles:
        span = s if role == "subject" else o
        for new in _near_spans(x, span) + _other_mentions(x, span, rng):
            key = _free(oracle, doc, new if role == "subject" else s, r,
                        o if role == "subject" else new, made)
            if key is not None:
                return key
    return None


def _near_spans(x: _Doc, span: Span) -> list[Span]:
    """The span a token longer or shorter at either end, within its sentence
    (never onto a token that is only white space)."""
    d = x.doc
    (sent, a), (_, b) = x.where[span[0]], x.ends[span[1]]
    toks = d.sentences[sent]
    out = []
    for na, nb in ((a - 1, b), (a, b + 1), (a + 1, b), (a, b - 1)):
        if 0 <= na < nb <= len(toks) and toks[na].strip() and toks[nb - 1].strip():
            out.append(d.token_span(sent, na, nb))
    return [sp for sp in out if sp != span]


def _other_mentions(x: _Doc, span: Span, rng) -> list[Span]:
    spans = sorted({m for e in x.doc.entities for m in e} - {span})
    return [spans[i] for i in rng.permutation(len(spans))]


def false_item(oracle: Oracle, doc: str, rng, made, tries: int = 20) -> str | None:
    """A false item of ``doc`` not in ``made``: two entities' mentions with a relation
    seen for their types (None after ``tries`` attempts)."""
    x = oracle.docs[doc]
    d = x.doc
    if len(d.entities) < 2:
        return None
    for _ in range(tries):
        h, t = (int(v) for v in rng.choice(len(d.entities), size=2, replace=False))
        seen = oracle.signature.get((_type(d, h), _type(d, t)))
        rels = [rel for rel, _ in seen] if seen else sorted(oracle.ref.relations)
        r = str(rels[rng.integers(len(rels))])
        s = sorted(d.entities[h])[rng.integers(len(d.entities[h]))]
        o = sorted(d.entities[t])[rng.integers(len(d.entities[t]))]
        key = _free(oracle, doc, s, r, o, made)
        if key is not None:
            return key
    return None


def write_tsv(predictions: list[Prediction], out: str | Path | TextIO) -> None:
    """A run in the task's TSV form (docs/kbp.md: character offsets, relation ids)."""
    lines = ["\t".join(TSV_COLUMNS)] + [
        "\t".join([p.doc, p.subject_text, str(p.subject[0]), str(p.subject[1]), p.relation,
                   p.object_text, str(p.object[0]), str(p.object[1])]) for p in predictions]
    text = "\n".join(lines) + "\n"
    if isinstance(out, (str, Path)):
        Path(out).write_text(text, encoding="utf-8")
    else:
        out.write(text)


# truth ----------------------------------------------------------------------------------

@dataclass
class Truth:
    precision: float
    recall: float
    f1: float
    tp: int
    predicted: int
    gold: int


def truth(ref: KbpReference, predictions: list[Prediction]) -> Truth:
    """Mention-level precision, recall and F1, computed as kbp-relations scores."""
    gold = {t: (d.entities, d.labels) for t, d in ref.documents.items()}
    c = relation_counts(gold, [(p.doc, p.subject, p.relation, p.object, p.subject_text,
                                p.object_text) for p in predictions]).mention
    return Truth(*c.scores(), c.tp, c.predicted, c.gold)


__all__ = ["TeamProfile", "TeamRun", "Oracle", "make_runs", "false_item", "write_tsv", "Truth",
           "truth", "ORIGINS"]
