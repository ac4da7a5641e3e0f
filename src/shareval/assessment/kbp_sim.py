"""Simulated teams, judges and annotators on a KBP reference (Re-DocRED), truth known.

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
* :class:`Judge`: answers a relation item's question chain (``subject``,
  ``object``, ``relation``) from the annotations, each answer flipped with
  probability ``error``, following the chain's skip rules (default: no ends the
  item as incorrect).
* :class:`Annotator`: an exhaustive annotation of one document: the set of item
  keys it marks true.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from ..formats.kbp import Document, KbpReference, Span
from ..formats.kbp_runs import Prediction, item_key, parse_item_key
from ..metrics.relations import gold_mention_triples, relation_counts
from .judgments import Judgment
from .outputs import Output

QUESTIONS = ("subject", "object", "relation")
CHAIN = [{"id": q} for q in QUESTIONS]
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
            key = _spurious(oracle, docs[d], rng, made)
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


def _spurious(oracle, doc, rng, made, tries: int = 20) -> str | None:
    """A false pair of two entities' mentions with a relation seen for their types."""
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


# judges and annotators ------------------------------------------------------------------

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
        server's results export them."""
        out = []
        for n, row in enumerate(rows):
            given, verdict = self.answer(row.item)
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
            if _parse(key)[0] != doc:
                raise ValueError(f"suggestion {key!r} is not of document {doc!r}")
            if (key in true) != (self.error > 0 and self.rng.random() < self.error):
                marked.add(key)
        for key in sorted(true - set(suggested)):
            if not (self.miss > 0 and self.rng.random() < self.miss):
                marked.add(key)
        for _ in range(self.rng.poisson(self.invent) if self.invent else 0):
            key = _spurious(self.oracle, doc, self.rng, marked | set(suggested))
            if key is not None:
                marked.add(key)
        return marked


def suggestions_by_doc(outputs: dict[str, set[str]], docs) -> dict[str, set[str]]:
    """The pooled outputs of each of ``docs``: an annotator's suggestions."""
    want = set(docs)
    out: dict[str, set[str]] = {d: set() for d in want}
    for keys in outputs.values():
        for k in keys:
            d = _parse(k)[0]
            if d in want:
                out[d].add(k)
    return out


__all__ = ["TeamProfile", "TeamRun", "Oracle", "make_runs", "write_tsv", "Truth", "truth",
           "walk", "Judge", "Annotator", "suggestions_by_doc", "QUESTIONS", "CHAIN",
           "ORIGINS"]
