"""Recall judgments from exhaustively annotated documents (spec 002, R_m).

Each sampled document is annotated by one or more annotators who mark every
relation mention the document states (accepting or rejecting the pooled
system outputs shown as suggestions, adding what no system found). Each
(item, annotator) pair becomes one ``drawn_for = recall`` judgment: 1 when
the annotator marked the item, else 0, over the items any annotator marked
plus the document's suggestions. ``estimate_all`` then gives each output's
recall as the true items it holds over the true items (an item's truth being
the mean over its annotators, so a disagreement counts by halves).
"""
from __future__ import annotations

from ..formats.kbp_runs import parse_item_key
from .judgments import Judgment


def item_doc(key: str) -> str:
    """The document of an item key (``formats.kbp_runs.item_key``'s form)."""
    parts = parse_item_key(key)
    return parts[0] if parts else key.split("|")[0]


def recall_judgments(annotations: dict[str, dict[str, set[str]]],
                     outputs: dict[str, set[str]],
                     suggestions: dict[str, set[str]] | None = None) -> list[Judgment]:
    """``annotations``: document -> annotator -> item keys the annotator marked
    true; ``outputs``: output name -> its item keys; ``suggestions``: document ->
    the pooled keys shown (None: every output's keys on that document). Documents
    nobody annotated give nothing."""
    if suggestions is None:
        suggestions = {}
        for keys in outputs.values():
            for k in keys:
                suggestions.setdefault(item_doc(k), set()).add(k)
    holders: dict[str, list[str]] = {}
    for name in sorted(outputs):
        for k in outputs[name]:
            holders.setdefault(k, []).append(name)
    records: list[Judgment] = []
    for doc in sorted(annotations):
        by = annotations[doc]
        items = set(suggestions.get(doc, ())).union(*by.values()) if by else set()
        for key in sorted(items):
            subs = tuple(holders.get(key, ()))
            for annotator in sorted(by):
                records.append(Judgment(
                    item=key, submissions=subs, judge=annotator, question="correct",
                    answer=1.0 if key in by[annotator] else 0.0, inclusion=1.0, doc=doc,
                    drawn_for="recall", drawn_by=(), line=len(records) + 1))
    return records
