"""KBP relation extraction (spec 002): relation mentions scored against an
exhaustively annotated reference (Re-DocRED style), at mention and entity level.

The definitions are in shareval.metrics.relations and docs/kbp.md; this module
reads the files, applies them and shapes the result.
"""
from __future__ import annotations

import numpy as np

from ..formats.kbp import KbpReference, read_reference
from ..formats.kbp_runs import KbpRun, read_run
from ..metrics.relations import relation_counts
from . import register
from .base import Task, UnitStats, load_checked, micro_f1

UNIT_METRICS = ("mention_f1", "entity_f1")     # in RelationCounts.per_document's order
CONVENTIONS = {
    "reference_layout": "a folder with documents.json (Re-DocRED's JSON: title, sents, "
                        "vertexSet, labels; or the folder's only other JSON file) and "
                        "relations.json (id -> label), or the documents file itself with "
                        "relations.json beside it",
    "document_text": "a document's tokens joined by single spaces, its sentences joined by a "
                     "single space; character offsets count in it, end exclusive",
    "doc_id": "the document's title (titles are unique in a reference)",
    "relation": "a relation id of relations.json (P19) or its label (place of birth, any "
                "letter case)",
    "provenance": "subject_start/subject_end (characters) or subject_sent, "
                  "subject_token_start, subject_token_end (tokens of one sentence), likewise "
                  "for the object; the mention string must be the text at that span",
    "mention_level": "a prediction is correct when a gold label (h, t, r) has its relation, "
                     "the subject span among h's mentions and the object span among t's "
                     "(exact spans); recall over every (mention of h, r, mention of t) of "
                     "every gold label",
    "entity_level": "subject and object spans linked to the gold entity they are a mention "
                    "of (a span that is no gold mention: an entity named by its text, never "
                    "correct; a span of several entities: the one making a gold label, else "
                    "the lowest-numbered); precision over distinct predicted (document, head, "
                    "relation, tail) triples, recall over the gold labels",
    "factorised_entity_precision": "relation_precision * subject_precision * "
                                   "object_precision over predictions (spec 002's P_r P_s "
                                   "P_o): subject correct when its span is a mention of an "
                                   "entity that heads a gold label with the predicted "
                                   "relation in that document, object likewise for the tail, "
                                   "relation correct when correct at mention level",
    "f1": "2*tp / (predicted + gold); 0 when there are neither",
    "zero_division": "0 (no predictions: precision 0; no gold: recall 0), with a warning",
    "duplicates": "a line repeating the document, subject span, relation and object span of "
                  "an earlier one is an error",
    "confidence": "validated, not used: every metric is a set measure, so ties do not arise",
    "evidence": "validated (sentence ids of the document), not used in scoring",
}


@register
class KbpRelations(Task):
    name = "kbp-relations"
    description = ("KBP relation extraction: (document, subject, relation, object) mentions "
                   "scored at mention and entity level (entity F1).")
    primary_metric = "entity_f1"
    conventions = CONVENTIONS

    def load_reference(self, path) -> KbpReference:
        return load_checked(read_reference, path)

    def load_submission(self, path, reference=None) -> KbpRun:
        run = load_checked(read_run, path, reference)
        if reference is None:
            run.warnings.append("no reference given: documents, relations, offsets and "
                                "mention strings were not checked")
        return run

    def _counts(self, ref: KbpReference, run: KbpRun):
        gold = {title: (d.entities, d.labels) for title, d in ref.documents.items()}
        preds = [(p.doc, p.subject, p.relation, p.object, p.subject_text, p.object_text)
                 for p in run.predictions]
        return relation_counts(gold, preds)

    def _score(self, ref, run):
        c = self._counts(ref, run)
        if not _has_relations(ref):
            return self._assessed_only(ref, run, c)
        metrics = {}
        for level, counts in (("mention", c.mention), ("entity", c.entity)):
            p, r, f = counts.scores()
            metrics.update({f"{level}_precision": p, f"{level}_recall": r, f"{level}_f1": f})
        n = c.mention.predicted
        parts = {"relation_precision": c.mention.tp, "subject_precision": c.subject_correct,
                 "object_precision": c.object_correct}
        metrics.update({k: v / n if n else 0.0 for k, v in parts.items()})
        metrics["entity_precision_factorised"] = float(np.prod(
            [metrics[k] for k in parts]))
        per_relation = {}
        for rid, (m, e) in c.per_relation.items():
            row = {"label": ref.relations.get(rid, "")}
            for level, counts in (("mention", m), ("entity", e)):
                p, r, f = counts.scores()
                row.update({f"{level}_precision": p, f"{level}_recall": r, f"{level}_f1": f})
            row.update(entity_tp=e.tp, entity_predicted=e.predicted, entity_gold=e.gold)
            per_relation[rid] = row
        counts = {"documents": len(ref.documents),
                  "documents_predicted": len({p.doc for p in run.predictions}),
                  "predictions": n, "mention_tp": c.mention.tp,
                  "gold_mention_triples": c.mention.gold,
                  "predicted_entity_triples": c.entity.predicted, "entity_tp": c.entity.tp,
                  "gold_entity_triples": c.entity.gold,
                  "unlinked_mentions": c.unlinked_mentions}
        return self.new_result(metrics, breakdowns={"per_relation": per_relation},
                               counts=counts, warnings=ref.warnings + _warnings(c))

    def _assessed_only(self, ref, run, c):
        """A reference of documents only: every automatic metric is None, not 0."""
        counts = {"documents": len(ref.documents),
                  "documents_predicted": len({p.doc for p in run.predictions}),
                  "predictions": c.mention.predicted}
        return self.new_result({k: None for k in METRIC_NAMES}, counts=counts,
                               warnings=ref.warnings + [ASSESSED_ONLY])

    def unit_stats(self, reference, submission, metric="entity_f1"):
        """Per document (tp, fp, fn) at the level ``metric`` names; micro F1 aggregates."""
        if metric not in UNIT_METRICS:
            raise NotImplementedError(f"{self.name} compares runs on "
                                      f"{' or '.join(UNIT_METRICS)}, not {metric}")
        ref = self.reference(reference)
        if not _has_relations(ref):
            raise NotImplementedError(ASSESSED_ONLY)
        run = self.submission(submission, ref)
        c = self._counts(ref, run)
        docs = sorted(c.per_document)
        level = UNIT_METRICS.index(metric)
        stats = np.array([[d.tp, d.predicted - d.tp, d.gold - d.tp]
                          for d in (c.per_document[x][level] for x in docs)], dtype=float)
        return UnitStats(metric, docs, stats.reshape(len(docs), 3), micro_f1,
                         np.ones(len(docs)))


METRIC_NAMES = ("mention_precision", "mention_recall", "mention_f1", "entity_precision",
                "entity_recall", "entity_f1", "relation_precision", "subject_precision",
                "object_precision", "entity_precision_factorised")
ASSESSED_ONLY = ("the reference holds documents only, no relation labels: the automatic "
                 "precision, recall and F1 are not computed (None, not 0); in an "
                 "assessed-only competition the judges' estimates are the scores "
                 "(docs/kbp-assessment.md)")


def _has_relations(ref: KbpReference) -> bool:
    return any(d.labels for d in ref.documents.values())


def _warnings(c) -> list[str]:
    # no gold at all is the assessed-only case above, never 0
    return [] if c.mention.predicted else ["no predictions: every precision is 0"]

