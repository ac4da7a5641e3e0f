"""SV-Ident 2022: variable detection (Task 1) and disambiguation (Task 2).

The unit is a (document, language) pair, as in the official scripts
(vadis-project/sv-ident, scripts/evaluate_task1.py and evaluate_task2.py):
every metric is computed per unit, averaged over the units of a language,
then over languages (overview paper, Eq. 3). A document with sentences in two
languages is two units, one in each language's average.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..formats.errors import InvalidInput, Problem, Problems
from ..formats.svident import TRIAL, Predictions, SvReference, read_detection, \
    read_disambiguation, read_reference
from ..metrics.classification import classification_report
from ..metrics.ranking import evaluate
from . import register
from .base import Option, Task, UnitStats, hierarchical_weights, load_checked, preview, \
    weighted_mean
from .trec import RANKING_CONVENTIONS

AVERAGING = ("the unit is a (document, language) pair, as in the official scripts "
             "(evaluate_task1.py, evaluate_task2.py): each metric is computed per unit, "
             "averaged over the units of a language, then over languages (SV-Ident overview, "
             "Eq. 3); a document with sentences in two languages is two units, named "
             "'doc (lang)' in per_document")
# Task 2: how a sentence's variables are ranked (the ``ties`` option). The official rule
# is ranx 0.2.8's, which evaluate_task2.py calls on the submitted JSON as read.
RANKING_RULES = {
    "official": "as SV-Ident's official evaluate_task2.py, which ranks with ranx 0.2.8: "
                "scores compared as doubles (float64), in the order the submission lists "
                "the sentence's variables; the ranking is the reverse of numba's "
                "np.argsort of those scores, so tied variables of a sentence with at most "
                "15 come out in the submission's order read backwards, and in a longer "
                "list in the order numba's quicksort leaves them (not numpy's sort)",
    "id": "score descending, scores compared in single precision (equal as 32-bit floats "
          "is a tie, as trec_eval 9.x); tied variables by id descending (byte order), as "
          "trec_eval; the submission's order is ignored",
}
TIE_SETTINGS = {"official": ("double", "reversed_argsort"), "id": ("float", "doc_id")}
REFERENCE_LAYOUT = ("the shared task's TSV (';'-separated ids, 'unk' removed) or the trial TSV "
                    "(with or without context_id), told apart by the variable column: trial when "
                    "its cells are ','-separated ID-Yes/ID-No items (any letter case) or "
                    "No/NoSkip; only -Yes ids are relevant; a file mixing both is an error")
# The trial vocabulary's ids carry a 'v' that the trial data's labels lack (v293 is the
# label's 293, veastwest its eastwest); the trial's own baseline maps the labels to the
# vocabulary's ids as 'v' + id (vadis-project/sv-ident, notebooks/variable_disambiguation)
TRIAL_VOCABULARY_PREFIX = "v"
TRIAL_IDS = ("trial layout: a submitted id in the trial vocabulary's form, 'v' + a relevant "
             "label id (v293 for 293, veastwest for eastwest), is that label id, as the trial "
             "baseline maps them; ids in the labels' form count as they are; if a ranking "
             "holds both forms of one id, the higher score counts")


def units_of(ref: SvReference, uuids) -> dict[str, list[str]]:
    """Sentence uuids grouped by (document, language), keyed by the unit's name.

    The name is the doc_id, or 'doc_id (lang)' for a document whose sentences
    are in several languages.
    """
    mixed = {d for d, langs in _languages_of_documents(ref).items() if len(langs) > 1}
    units: dict[str, list[str]] = defaultdict(list)
    for u in uuids:
        s = ref.sentences[u]
        units[f"{s.doc_id} ({s.lang})" if s.doc_id in mixed else s.doc_id].append(u)
    return dict(units)


def hierarchical_average(unit_values: dict[str, dict[str, float]], unit_lang: dict[str, str],
                         metrics: list[str]):
    """(overall, per_language) averages of per-unit metric values."""
    by_lang: dict[str, list[str]] = defaultdict(list)
    for d in unit_values:
        by_lang[unit_lang[d]].append(d)
    per_language = {}
    for lang in sorted(by_lang):
        docs = by_lang[lang]
        row = {m: float(np.mean([unit_values[d][m] for d in docs])) for m in metrics}
        row["documents"] = len(docs)
        per_language[lang] = row
    overall = {m: float(np.mean([per_language[l][m] for l in per_language])) if per_language
               else 0.0 for m in metrics}
    return overall, per_language


def _mixed_warning(ref: SvReference) -> list[str]:
    mixed = [f"{d} ({', '.join(sorted(ls))})"
             for d, ls in sorted(_languages_of_documents(ref).items()) if len(ls) > 1]
    if not mixed:
        return []
    return ["documents with sentences in several languages, scored as one unit per language "
            f"(as the official scripts do): {preview(mixed)}"]


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
        "reference_layout": REFERENCE_LAYOUT,
        "macro": "per unit, unweighted mean over the classes present in that unit's "
                 "reference or predictions (scikit-learn average='macro')",
        "zero_division": "0 (scikit-learn's default), with a warning",
        "coverage": "every reference sentence predicted exactly once; unknown uuids are errors",
    }

    def load_submission(self, path, reference=None):
        return self._load_predictions(read_detection, path, reference, require_all=True)

    def _per_unit(self, ref: SvReference, sub: Predictions):
        out, zero, langs = {}, 0, {}
        for name, uuids in units_of(ref, ref.sentences).items():
            y_true = [ref.sentences[u].is_variable for u in uuids]
            y_pred = [sub.values[u] for u in uuids]
            r = classification_report(y_true, y_pred)
            m = r.averages["macro"]
            zero += bool(r.zero_division)
            first = ref.sentences[uuids[0]]
            langs[name] = first.lang
            out[name] = {"f1_macro": m["f1"], "precision_macro": m["precision"],
                         "recall_macro": m["recall"], "sentences": len(uuids),
                         "positives": int(sum(y_true)), "doc_id": first.doc_id}
        return out, langs, zero

    def _score(self, ref, sub):
        per_doc, langs, zero = self._per_unit(ref, sub)
        overall, per_lang = hierarchical_average(per_doc, langs, self.metrics)
        for d, row in per_doc.items():
            row["lang"] = langs[d]
        warnings = []
        if zero:
            warnings.append(f"{zero} units have a class with no predictions or no reference "
                            f"items; its precision/recall counted as 0")
        warnings += _mixed_warning(ref)
        return self.new_result(overall, breakdowns={"per_language": per_lang,
                                                    "per_document": per_doc},
                               counts={"sentences": len(ref.sentences),
                                       "documents": len({r["doc_id"] for r in per_doc.values()}),
                                       "units": len(per_doc), "languages": len(per_lang)},
                               warnings=warnings)

    def unit_stats(self, reference, submission):
        ref = self.reference(reference)
        sub = self.submission(submission, ref)
        per_doc, langs, _ = self._per_unit(ref, sub)
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
    options = (Option("ties", str, "official",
                      "how tied scores are ranked: official = as the organizers' script "
                      "(ranx 0.2.8: doubles, the submission's order reversed); id = "
                      "single precision, by variable id descending (trec_eval)",
                      choices=tuple(RANKING_RULES)),
               Option("empty_units", str, "skip",
                      "a (document, language) unit none of whose evaluated sentences has a "
                      "prediction: skip = left out of the averages, as the organizers' "
                      "script does; zero = its sentences score 0",
                      choices=("skip", "zero")))
    conventions = {
        **{k: v for k, v in RANKING_CONVENTIONS.items() if k not in ("ranking",
                                                                      "score_precision")},
        "ranking": RANKING_RULES["official"],
        "ties": "official",
        **{f"ties_{name}": rule for name, rule in RANKING_RULES.items()},
        "score_precision": "double",
        "averaging": AVERAGING,
        "reference_layout": REFERENCE_LAYOUT,
        "queries": "only sentences whose reference lists a relevant variable ('unk' removed; "
                   "trial: -Yes ids only), as SV-Ident's official Task 2 scoring (unlike trec's "
                   "trec_eval -c default, sentences without one are not averaged in); "
                   "predictions for other sentences are ignored; a reference with none is "
                   "warned, never silently 0",
        "per_unit": "the mean over the unit's evaluated sentences (ranx.evaluate on them, as "
                    "evaluate_task2.py does)",
        "missing_predictions": "an evaluated sentence without predictions scores 0 (warned)",
        "empty_units": "skip",
        "empty_units_skip": "a (document, language) unit with no prediction for any of its "
                            "evaluated sentences is left out of the averages, as "
                            "evaluate_task2.py leaves out a unit the run does not cover "
                            "(warned)",
        "empty_units_zero": "such a unit's sentences score 0 like any sentence without "
                            "predictions",
        "unknown_uuids": "error",
        "trial_vocabulary_ids": TRIAL_IDS,
    }

    def load_submission(self, path, reference=None):
        return self._load_predictions(read_disambiguation, path, reference, require_all=False)

    def _per_sentence(self, ref: SvReference, sub: Predictions, ties: str):
        """Per-sentence values; each sentence's variables stay in the submission's order,
        which the official tie rule reads."""
        qrels = {u: {v: 1 for v in s.variables} for u, s in ref.sentences.items() if s.variables}
        rankings = reference_id_rankings(ref, sub)
        run = {u: rankings.get(u, {}) for u in qrels}
        precision, rule = TIE_SETTINGS[ties]
        values = evaluate(qrels, {u: r for u, r in run.items() if r}, self.metrics,
                          score_precision=precision, ties=rule)
        missing = [u for u, r in run.items() if not r]
        return qrels, values, missing

    def _aggregate(self, ref, qrels, values, uuids):
        units = units_of(ref, uuids)
        per_doc = {d: {m: float(np.mean([values[m][u] for u in us])) for m in self.metrics}
                   for d, us in units.items()}
        langs = {d: ref.sentences[us[0]].lang for d, us in units.items()}
        overall, per_lang = hierarchical_average(per_doc, langs, self.metrics)
        for d, row in per_doc.items():
            row["sentences"] = len(units[d])
            row["doc_id"] = ref.sentences[units[d][0]].doc_id
            row["lang"] = langs[d]
        return overall, per_lang, per_doc, langs

    def _evaluated(self, ref, qrels, missing, empty_units: str) -> tuple[list[str], list[str]]:
        """The sentences averaged, and the units left out (``empty_units='skip'``:
        those with no prediction for any evaluated sentence)."""
        uuids = list(qrels)
        if empty_units != "skip":
            return uuids, []
        gone = set(missing)
        empty = [name for name, us in units_of(ref, uuids).items() if gone.issuperset(us)]
        left_out = {u for name, us in units_of(ref, uuids).items() if name in empty for u in us}
        return [u for u in uuids if u not in left_out], empty

    def _score(self, ref, sub, ties, empty_units):
        qrels, values, missing = self._per_sentence(ref, sub, ties)
        uuids, empty = self._evaluated(ref, qrels, missing, empty_units)
        missing = [u for u in missing if u in set(uuids)]
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
        if empty:
            warnings.append(f"{len(empty)} units have no prediction at all and are left out "
                            f"of the averages (as the official script does; empty_units=zero "
                            f"scores them 0): {preview(empty)}")
        if missing:
            warnings.append(f"{len(missing)} evaluated sentences have no prediction (scored 0): "
                            f"{preview(missing)}")
        ignored = [u for u in sub.values if u in ref.sentences and u not in qrels]
        warnings += _relevance_warnings(ref, qrels, sub)
        warnings += _mixed_warning(ref)
        result = self.new_result(overall, breakdowns=breakdowns,
                                 counts={"sentences_evaluated": len(uuids),
                                         "sentences_in_reference": len(ref.sentences),
                                         "sentences_without_prediction": len(missing),
                                         "units_left_out": len(empty),
                                         "predictions_ignored": len(ignored),
                                         "documents": len({r["doc_id"]
                                                           for r in per_doc.values()}),
                                         "units": len(per_doc), "languages": len(per_lang)},
                                 warnings=warnings)
        result.conventions.update(ties=ties, ranking=RANKING_RULES[ties],
                                  score_precision=TIE_SETTINGS[ties][0],
                                  empty_units=empty_units)
        return result

    def unit_stats(self, reference, submission, metric="map@10", ties="official",
                   empty_units="skip"):
        self.checked_options(dict(ties=ties, empty_units=empty_units))
        ref = self.reference(reference)
        sub = self.submission(submission, ref)
        qrels, values, missing = self._per_sentence(ref, sub, ties)
        uuids, _ = self._evaluated(ref, qrels, missing, empty_units)
        _, _, per_doc, langs = self._aggregate(ref, qrels, values, uuids)
        docs = list(per_doc)
        groups = [langs[d] for d in docs]
        return UnitStats(metric, docs, np.array([[per_doc[d][metric]] for d in docs]),
                         weighted_mean, hierarchical_weights(groups), np.asarray(groups))


def _check_uuids(ref: SvReference, preds: Predictions, problems: Problems,
                 require_all: bool) -> None:
    """Unknown and missing uuids, each summarized in one problem. A uuid whose
    value was invalid is in the file: it is neither unknown nor missing."""
    unknown = [u for u in preds.values if u not in ref.sentences]
    problems.summarize(preds.path, "uuid", unknown, "{n} uuid is not in the reference",
                       "{n} uuids are not in the reference",
                       lines=[preds.lines[u] for u in unknown])
    if require_all:
        problems.summarize(preds.path, "uuid", [u for u in ref.sentences if u not in preds.lines],
                           "{n} sentence has no prediction", "{n} sentences have no prediction")


def reference_id_rankings(ref: SvReference, sub: Predictions) -> dict[str, dict[str, float]]:
    """The submitted rankings with variable ids in the reference's form: in the trial layout,
    the trial vocabulary's ``v293`` is the label's ``293`` (:data:`TRIAL_IDS`)."""
    if ref.layout != TRIAL:
        return sub.values
    relevant = {v for s in ref.sentences.values() for v in s.variables}
    return {u: _label_ids(ranking, relevant) for u, ranking in sub.values.items()}


def _label_ids(ranking: dict[str, float], relevant: set[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for vid, score in ranking.items():
        bare = vid.removeprefix(TRIAL_VOCABULARY_PREFIX)
        label = bare if vid != bare and vid not in relevant and bare in relevant else vid
        out[label] = max(score, out.get(label, score))
    return out


def _relevance_warnings(ref: SvReference, qrels: dict, sub: Predictions) -> list[str]:
    """Why every metric may be 0 for reasons the submission cannot fix, or ids that never match."""
    if not qrels:
        how = ("this trial-layout file marks no variable -Yes, and -No ids are not relevant"
               if ref.layout == TRIAL else "every variable cell is empty or 'unk'")
        return [f"no evaluated sentence: no reference sentence has a relevant variable, as "
                f"{how}; every metric is 0 and means nothing"]
    relevant = {v for rel in qrels.values() for v in rel}
    rankings = reference_id_rankings(ref, sub)
    predicted = {v for u in qrels for v in (rankings.get(u) or {})}
    if predicted and not predicted & relevant:
        return [f"no predicted variable id occurs among the reference's relevant ids (e.g. "
                f"reference {preview(sorted(relevant), 3)}; predicted "
                f"{preview(sorted(predicted), 3)}): check the id format"]
    return []


def _languages_of_documents(ref: SvReference) -> dict[str, set[str]]:
    langs: dict[str, set[str]] = defaultdict(set)
    for s in ref.sentences.values():
        langs[s.doc_id].add(s.lang)
    return langs
