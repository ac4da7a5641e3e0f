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
from ..metrics.agreement import cohen_kappa, krippendorff_alpha
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

TASK1_PER_TYPE = ("per_mention_type: per type (explicit, implicit, mixed; 'unlabelled' for a "
                  "positive sentence without one), the task's metrics, averaged as the "
                  "result, on the positive sentences of that type plus all negative "
                  "sentences; 'sentences' = the positives of that type")
ANNOTATOR_COMMON = (
    "per_annotator_type: 'NAME TYPE' = the sentences NAME marked with that mention type "
    "(unlabelled: marked without one), scored against NAME's labels; 'agreed TYPE' = the "
    "agreed sentences every annotator marked with that same type (typed differently: in no "
    "cell), scored against the reference's labels; cells with no sentence have no metric "
    "values (null)")
TASK1_ANNOTATOR_CONVENTIONS = {
    "per_annotator": "NAME = the task's metrics (averaged as the result) over every sentence "
                     "against is_variable@NAME; 'agreed' = the sentences where every "
                     "annotator gave the same is_variable@NAME, against the reference's "
                     "is_variable; 'sentences' = the positives (NAME's, or those the "
                     "annotators agreed are 1), 'sentences_scored' = all scored",
    "per_annotator_type": ANNOTATOR_COMMON + "; as per_mention_type, each cell adds the "
                          "negatives: NAME's 0s, or the agreed 0s",
}
TASK2_ANNOTATOR_CONVENTIONS = {
    "per_annotator": "NAME = the metrics against variable@NAME ('unk' removed) on the "
                     "sentences where NAME lists a variable, averaged and empty units treated "
                     "as the result; 'agreed' = the result's evaluated sentences where every "
                     "annotator gave the same is_variable@NAME and the same set of "
                     "variable@NAME, against the reference's variables; 'sentences' = those "
                     "scored",
    "per_annotator_type": ANNOTATOR_COMMON,
}


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

    def _per_unit(self, ref: SvReference, sub: Predictions, uuids=None, labels=None):
        """Per-unit values on ``uuids`` (default: every sentence) against ``labels``
        ({uuid: 0|1}; default: the reference's)."""
        out, zero, langs = {}, 0, {}
        labels = labels or {u: s.is_variable for u, s in ref.sentences.items()}
        for name, uuids in units_of(ref, ref.sentences if uuids is None else uuids).items():
            y_true = [labels[u] for u in uuids]
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
        breakdowns = {"per_language": per_lang, "per_document": per_doc}
        breakdowns.update(self._breakdowns(ref, sub))
        result = self.new_result(overall, breakdowns=breakdowns,
                                 counts={"sentences": len(ref.sentences),
                                         "documents": len({r["doc_id"]
                                                           for r in per_doc.values()}),
                                         "units": len(per_doc), "languages": len(per_lang)},
                                 warnings=warnings)
        if ref.has_mention_type:
            result.conventions["per_mention_type"] = TASK1_PER_TYPE
        if ref.annotators:
            result.conventions.update(TASK1_ANNOTATOR_CONVENTIONS)
        return result

    def _cell(self, ref, sub, positives: list[str], negatives: list[str], labels=None):
        """The task's metrics (same averaging) on ``positives + negatives`` (kept in
        reference order) against ``labels``; "sentences" = len(positives)."""
        keep = set(positives) | set(negatives)
        uuids = [u for u in ref.sentences if u in keep]
        if not uuids:
            return {**{m: float("nan") for m in self.metrics}, "sentences": 0,
                    "sentences_scored": 0}
        per_unit, langs, _ = self._per_unit(ref, sub, uuids, labels)
        overall, _ = hierarchical_average(per_unit, langs, self.metrics)
        return {**overall, "sentences": len(positives), "sentences_scored": len(uuids)}

    def _breakdowns(self, ref: SvReference, sub: Predictions) -> dict:
        out = {}
        sents = ref.sentences
        if ref.has_mention_type:
            negatives = [u for u, s in sents.items() if not s.is_variable]
            by_type = _group({u: s.mention_type for u, s in sents.items() if s.is_variable})
            out["per_mention_type"] = {
                t: {k: v for k, v in self._cell(ref, sub, us, negatives).items()
                    if k != "sentences_scored"}
                for t, us in by_type.items()}
        if not ref.annotators:
            return out
        per_annotator, per_type = {}, {}
        for name in ref.annotators:
            labels = {u: s.annotations[name].is_variable for u, s in sents.items()}
            positives = [u for u in sents if labels[u]]
            negatives = [u for u in sents if not labels[u]]
            per_annotator[name] = self._cell(ref, sub, positives, negatives, labels)
            if ref.annotator_types:
                types = _group({u: sents[u].annotations[name].mention_type for u in positives})
                for t, us in types.items():
                    per_type[f"{name} {t}"] = self._cell(ref, sub, us, negatives, labels)
        agreed = agreed_sentences(ref, variables=False)
        marked = [u for u in agreed if _annotator_label(sents[u])]
        unmarked = [u for u in agreed if not _annotator_label(sents[u])]
        per_annotator["agreed"] = self._cell(ref, sub, marked, unmarked)
        if ref.annotator_types:
            for t, us in _agreed_types(ref, marked).items():
                per_type[f"agreed {t}"] = self._cell(ref, sub, us, unmarked)
        out["per_annotator"] = per_annotator
        if ref.annotator_types:
            out["per_annotator_type"] = per_type
        return out

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

    def _per_sentence(self, ref: SvReference, sub: Predictions, ties: str, annotator=None):
        """Per-sentence values; each sentence's variables stay in the submission's order,
        which the official tie rule reads. ``annotator``: against that annotator's
        variables instead of the reference's."""
        qrels = {u: {v: 1 for v in vs} for u, vs in
                 ((u, s.variables if annotator is None else s.annotations[annotator].variables)
                  for u, s in ref.sentences.items()) if vs}
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
        if ref.annotators:
            breakdowns.update(self._annotator_breakdowns(ref, sub, ties, empty_units, values,
                                                         uuids))
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
        if ref.annotators:
            result.conventions.update(TASK2_ANNOTATOR_CONVENTIONS)
        return result

    def _cell(self, ref, qrels, values, uuids: list[str]) -> dict:
        if not uuids:
            return {**{m: float("nan") for m in self.metrics}, "sentences": 0}
        o, *_ = self._aggregate(ref, qrels, values, uuids)
        return {**o, "sentences": len(uuids)}

    def _annotator_breakdowns(self, ref, sub, ties, empty_units, values, evaluated) -> dict:
        """per_annotator and per_annotator_type; ``values`` and ``evaluated`` are the
        reference's per-sentence values and evaluated sentences (for "agreed")."""
        sents = ref.sentences
        per_annotator, per_type = {}, {}
        for name in ref.annotators:
            qrels, own, missing = self._per_sentence(ref, sub, ties, annotator=name)
            uuids, _ = self._evaluated(ref, qrels, missing, empty_units)
            per_annotator[name] = self._cell(ref, qrels, own, uuids)
            if ref.annotator_types:
                types = _group({u: sents[u].annotations[name].mention_type for u in uuids})
                for t, us in types.items():
                    per_type[f"{name} {t}"] = self._cell(ref, qrels, own, us)
        agreed = set(agreed_sentences(ref, variables=True))
        uuids = [u for u in evaluated if u in agreed]
        per_annotator["agreed"] = self._cell(ref, None, values, uuids)
        if ref.annotator_types:
            for t, us in _agreed_types(ref, uuids).items():
                per_type[f"agreed {t}"] = self._cell(ref, None, values, us)
        out = {"per_annotator": per_annotator}
        if ref.annotator_types:
            out["per_annotator_type"] = per_type
        return out

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


def _group(keys: dict[str, str | None]) -> dict[str, list[str]]:
    """uuids by key (None = "unlabelled"), keys sorted, uuids in the given order."""
    out: dict[str, list[str]] = defaultdict(list)
    for u, k in keys.items():
        out[k or "unlabelled"].append(u)
    return {k: out[k] for k in sorted(out)}


def agreed_sentences(ref: SvReference, variables: bool) -> list[str]:
    """uuids (reference order) where every annotator gave the same is_variable and,
    with ``variables``, the same set of variables ('unk' removed)."""
    out = []
    for u, s in ref.sentences.items():
        anns = [s.annotations[n] for n in ref.annotators]
        if len({a.is_variable for a in anns}) != 1:
            continue
        if variables and len({frozenset(a.variables) for a in anns}) != 1:
            continue
        out.append(u)
    return out


def _annotator_label(s) -> int:
    """The annotators' common is_variable of an agreed sentence."""
    return next(iter(s.annotations.values())).is_variable


def _agreed_types(ref: SvReference, uuids: list[str]) -> dict[str, list[str]]:
    """Those of ``uuids`` every annotator gave the same mention type, by that type
    (none given by all: "unlabelled"); sentences typed differently are in no group."""
    same = {}
    for u in uuids:
        types = {ref.sentences[u].annotations[n].mention_type for n in ref.annotators}
        if len(types) == 1:
            same[u] = types.pop()
    return _group(same)


def annotator_agreement(ref: SvReference | str) -> dict:
    """Agreement between the reference's annotators, per language and over "all".

    ``cohen_kappa``: Cohen's kappa of is_variable@NAME over every sentence (the mean
    over pairs when more than two annotators; undefined pairs left out, NaN if all are);
    ``alpha_masi`` / ``alpha_jaccard``: Krippendorff's alpha over the variable sets
    ('unk' removed, an empty set when none) of the sentences any annotator marked
    is_variable 1; ``sentences``: all sentences; ``sentences_marked``: those in alpha;
    ``variables_labelled``: (annotator, sentence, variable) labels;
    ``variables_unique``: distinct ids. {} without per-annotator columns.
    """
    if not isinstance(ref, SvReference):
        ref = load_checked(read_reference, ref)
    if not ref.annotators:
        return {}
    names = ref.annotators
    groups: dict[str, list] = defaultdict(list)
    for s in ref.sentences.values():
        groups[s.lang].append(s)
    out = {lang: _agreement(groups[lang], names) for lang in sorted(groups)}
    out["all"] = _agreement(list(ref.sentences.values()), names)
    return out


def _agreement(sentences: list, names: list[str]) -> dict:
    flags = [[s.annotations[n].is_variable for s in sentences] for n in names]
    kappas = [cohen_kappa(flags[i], flags[j]) for i in range(len(names))
              for j in range(i + 1, len(names))]
    kappas = [k for k in kappas if not np.isnan(k)]
    marked = [s for s in sentences if any(s.annotations[n].is_variable for n in names)]
    units = [[frozenset(s.annotations[n].variables) for n in names] for s in marked]
    labels = [v for s in sentences for n in names for v in s.annotations[n].variables]
    return {"cohen_kappa": float(np.mean(kappas)) if kappas else float("nan"),
            "alpha_masi": krippendorff_alpha(units, "masi"),
            "alpha_jaccard": krippendorff_alpha(units, "jaccard"),
            "sentences": len(sentences), "sentences_marked": len(marked),
            "annotators": list(names), "variables_labelled": len(labels),
            "variables_unique": len(set(labels))}


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
