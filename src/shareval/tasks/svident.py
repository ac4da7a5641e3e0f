"""SV-Ident 2022: variable detection (Task 1) and disambiguation (Task 2).

Both tasks average every metric over documents within a language, then over
languages (overview paper, Eq. 3).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..formats.errors import Problems
from ..formats.svident import Predictions, SvReference, read_detection, read_disambiguation, \
    read_reference
from ..metrics.classification import classification_report
from ..metrics.ranking import evaluate
from . import register
from .base import Task, UnitStats, hierarchical_weights, load_checked, preview, weighted_mean
from .trec import RANKING_CONVENTIONS

AVERAGING = ("each metric is computed per document, averaged over the documents of a "
             "language, then over languages (SV-Ident overview, Eq. 3)")


def hierarchical_average(doc_values: dict[str, dict[str, float]], doc_lang: dict[str, str],
                         metrics: list[str]):
    """(overall, per_language) averages of per-document metric values."""
    by_lang: dict[str, list[str]] = defaultdict(list)
    for d in doc_values:
        by_lang[doc_lang[d]].append(d)
    per_language = {}
    for lang in sorted(by_lang):
        docs = by_lang[lang]
        row = {m: float(np.mean([doc_values[d][m] for d in docs])) for m in metrics}
        row["documents"] = len(docs)
        per_language[lang] = row
    overall = {m: float(np.mean([per_language[l][m] for l in per_language])) if per_language
               else 0.0 for m in metrics}
    return overall, per_language


class _SvTask(Task):
    def load_reference(self, path):
        return load_checked(read_reference, path)

    def _load_predictions(self, reader, path, reference, require_all: bool):
        check = None if reference is None else \
            (lambda preds, problems: _check_uuids(reference, preds, problems, require_all))
        return load_checked(reader, path, check=check)


@register
class SvIdentDetection(_SvTask):
    name = "svident-detection"
    description = "SV-Ident Task 1: does a sentence mention a survey variable (F1-macro)."
    primary_metric = "f1_macro"
    metrics = ["f1_macro", "precision_macro", "recall_macro"]
    conventions = {
        "averaging": AVERAGING,
        "macro": "per document, unweighted mean over the classes present in that document's "
                 "reference or predictions (scikit-learn average='macro')",
        "zero_division": "0 (scikit-learn's default), with a warning",
        "coverage": "every reference sentence predicted exactly once; unknown uuids are errors",
    }

    def load_submission(self, path, reference=None):
        return self._load_predictions(read_detection, path, reference, require_all=True)

    def _per_document(self, ref: SvReference, sub: Predictions):
        docs: dict[str, list[str]] = defaultdict(list)
        for s in ref.sentences.values():
            docs[s.doc_id].append(s.uuid)
        out, zero, langs = {}, 0, {}
        for doc, uuids in docs.items():
            y_true = [ref.sentences[u].is_variable for u in uuids]
            y_pred = [sub.values[u] for u in uuids]
            r = classification_report(y_true, y_pred)
            m = r.averages["macro"]
            zero += bool(r.zero_division)
            langs[doc] = ref.sentences[uuids[0]].lang
            out[doc] = {"f1_macro": m["f1"], "precision_macro": m["precision"],
                        "recall_macro": m["recall"], "sentences": len(uuids),
                        "positives": int(sum(y_true))}
        return out, langs, zero

    def _score(self, ref, sub):
        per_doc, langs, zero = self._per_document(ref, sub)
        overall, per_lang = hierarchical_average(per_doc, langs, self.metrics)
        for d, row in per_doc.items():
            row["lang"] = langs[d]
        warnings = []
        if zero:
            warnings.append(f"{zero} documents have a class with no predictions or no reference "
                            f"items; its precision/recall counted as 0")
        mixed = _docs_with_several_languages(ref)
        if mixed:
            warnings.append(f"documents with sentences in several languages (first language "
                            f"used): {preview(mixed)}")
        return self.new_result(overall, breakdowns={"per_language": per_lang,
                                                    "per_document": per_doc},
                               counts={"sentences": len(ref.sentences), "documents": len(per_doc),
                                       "languages": len(per_lang)},
                               warnings=warnings)

    def unit_stats(self, reference, submission):
        ref = self.reference(reference)
        sub = self.submission(submission, ref)
        per_doc, langs, _ = self._per_document(ref, sub)
        docs = list(per_doc)
        groups = [langs[d] for d in docs]
        return UnitStats("f1_macro", docs, np.array([[per_doc[d]["f1_macro"]] for d in docs]),
                         weighted_mean, hierarchical_weights(groups), np.asarray(groups))


@register
class SvIdentDisambiguation(_SvTask):
    name = "svident-disambiguation"
    description = "SV-Ident Task 2: rank the survey variables a sentence mentions (MAP@10)."
    primary_metric = "map@10"
    metrics = ["map@1", "map@5", "map@10", "map@20", "r_precision", "p@10"]
    conventions = {
        **RANKING_CONVENTIONS,
        "averaging": AVERAGING,
        "queries": "only sentences whose reference lists disambiguated variables ('unk' "
                   "removed), as SV-Ident's official Task 2 scoring (unlike trec's trec_eval "
                   "-c default, sentences without one are not averaged in); predictions for "
                   "other sentences are ignored",
        "missing_predictions": "an evaluated sentence without predictions scores 0 (warned)",
        "unknown_uuids": "error",
    }

    def load_submission(self, path, reference=None):
        return self._load_predictions(read_disambiguation, path, reference, require_all=False)

    def _per_sentence(self, ref: SvReference, sub: Predictions):
        qrels = {u: {v: 1 for v in s.variables} for u, s in ref.sentences.items() if s.variables}
        run = {u: sub.values.get(u, {}) for u in qrels}
        values = evaluate(qrels, {u: r for u, r in run.items() if r}, self.metrics)
        missing = [u for u, r in run.items() if not r]
        return qrels, values, missing

    def _aggregate(self, ref, qrels, values, uuids):
        docs: dict[str, list[str]] = defaultdict(list)
        for u in uuids:
            docs[ref.sentences[u].doc_id].append(u)
        per_doc = {d: {m: float(np.mean([values[m][u] for u in us])) for m in self.metrics}
                   for d, us in docs.items()}
        langs = {d: ref.sentences[us[0]].lang for d, us in docs.items()}
        overall, per_lang = hierarchical_average(per_doc, langs, self.metrics)
        for d, row in per_doc.items():
            row["sentences"] = len(docs[d])
            row["lang"] = langs[d]
        return overall, per_lang, per_doc, langs

    def _score(self, ref, sub):
        qrels, values, missing = self._per_sentence(ref, sub)
        uuids = list(qrels)
        overall, per_lang, per_doc, _ = self._aggregate(ref, qrels, values, uuids)
        breakdowns = {"per_language": per_lang, "per_document": per_doc}
        if ref.has_mention_type:
            by_type: dict[str, list[str]] = defaultdict(list)
            for u in uuids:
                by_type[ref.sentences[u].mention_type or "unlabelled"].append(u)
            per_type = {}
            for t in sorted(by_type):
                o, *_ = self._aggregate(ref, qrels, values, by_type[t])
                per_type[t] = {**o, "sentences": len(by_type[t])}
            breakdowns["per_mention_type"] = per_type
        warnings = []
        if missing:
            warnings.append(f"{len(missing)} evaluated sentences have no prediction (scored 0): "
                            f"{preview(missing)}")
        ignored = [u for u in sub.values if u in ref.sentences and u not in qrels]
        if not uuids:
            warnings.append("no reference sentence has a disambiguated variable: every metric is 0")
        return self.new_result(overall, breakdowns=breakdowns,
                               counts={"sentences_evaluated": len(uuids),
                                       "sentences_in_reference": len(ref.sentences),
                                       "sentences_without_prediction": len(missing),
                                       "predictions_ignored": len(ignored),
                                       "documents": len(per_doc), "languages": len(per_lang)},
                               warnings=warnings)

    def unit_stats(self, reference, submission, metric="map@10"):
        ref = self.reference(reference)
        sub = self.submission(submission, ref)
        qrels, values, _ = self._per_sentence(ref, sub)
        _, _, per_doc, langs = self._aggregate(ref, qrels, values, list(qrels))
        docs = list(per_doc)
        groups = [langs[d] for d in docs]
        return UnitStats(metric, docs, np.array([[per_doc[d][metric]] for d in docs]),
                         weighted_mean, hierarchical_weights(groups), np.asarray(groups))


def _check_uuids(ref: SvReference, preds: Predictions, problems: Problems,
                 require_all: bool) -> None:
    for uuid, line in preds.lines.items():
        if uuid not in ref.sentences:
            problems.add(preds.path, line, "uuid", f"unknown uuid {uuid!r} (not in the reference)")
    if require_all:
        for uuid in ref.sentences:
            if uuid not in preds.values:
                problems.add(preds.path, None, "uuid", f"no prediction for sentence {uuid!r}")


def _docs_with_several_languages(ref: SvReference) -> list[str]:
    langs: dict[str, set] = defaultdict(set)
    for s in ref.sentences.values():
        langs[s.doc_id].add(s.lang)
    return sorted(d for d, ls in langs.items() if len(ls) > 1)
