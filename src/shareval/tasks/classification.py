"""Generic classification: one label per item, reference vs submission."""
from __future__ import annotations

import numpy as np

from ..formats.errors import Problems
from ..formats.labels import Labels, read_labels
from ..metrics.classification import classification_report
from . import register
from .base import Task, UnitStats, load_checked, weighted_mean


def check_coverage(ref_items, sub: Labels, problems: Problems, what: str = "item") -> None:
    """Every reference item predicted exactly once; no unknown items. Each fault is
    one summarized problem; an item with an invalid label is neither unknown nor missing."""
    ref_set = set(ref_items)
    unknown = [i for i in sub.labels if i not in ref_set]
    problems.summarize(sub.path, what, unknown, f"{{n}} {what} is not in the reference",
                       f"{{n}} {what}s are not in the reference",
                       lines=[sub.lines[i] for i in unknown])
    problems.summarize(sub.path, what, [i for i in ref_items if i not in sub.lines],
                       f"{{n}} {what} has no prediction", f"{{n}} {what}s have no prediction")


@register
class ClassificationTask(Task):
    name = "classification"
    description = "Generic single-label classification: accuracy, per-class and averaged P/R/F1."
    primary_metric = "f1_macro"
    conventions = {
        "labels": "sorted union of reference and submitted labels",
        "micro": "pooled over classes (equals accuracy for single-label data)",
        "macro": "unweighted mean over classes",
        "weighted": "mean over classes weighted by reference support",
        "f1": "2*tp / (2*tp + fp + fn)",
        "zero_division": "0, with a warning naming the metric",
        "coverage": "every reference item predicted exactly once; unknown items are errors",
    }

    def load_reference(self, path):
        return load_checked(read_labels, path)

    def load_submission(self, path, reference=None):
        check = None if reference is None else \
            (lambda labels, problems: check_coverage(list(reference.labels), labels, problems))
        return load_checked(read_labels, path, check=check)

    def _pairs(self, ref: Labels, sub: Labels):
        items = list(ref.labels)
        return items, [ref.labels[i] for i in items], [sub.labels[i] for i in items]

    def _score(self, ref, sub):
        items, y_true, y_pred = self._pairs(ref, sub)
        r = classification_report(y_true, y_pred)
        metrics = {"accuracy": r.accuracy}
        for avg in ("micro", "macro", "weighted"):
            for m, v in r.averages[avg].items():
                metrics[f"{m}_{avg}"] = v
        labels = [str(x) for x in r.labels.tolist()]
        per_class = {lab: {"precision": float(r.precision[i]), "recall": float(r.recall[i]),
                           "f1": float(r.f1[i]), "support": int(r.support[i])}
                     for i, lab in enumerate(labels)}
        confusion = {t: {p: int(r.confusion[i, j]) for j, p in enumerate(labels)}
                     for i, t in enumerate(labels)}
        warnings = []
        for m in r.zero_division:
            warnings.append(f"{m} is undefined for some class (no "
                            f"{'predictions' if m == 'precision' else 'reference items'}); "
                            f"counted as 0")
        unseen = sorted(set(y_pred) - set(y_true))
        if unseen:
            warnings.append(f"submitted labels absent from the reference: {', '.join(unseen[:10])}")
        return self.new_result(metrics, breakdowns={"per_class": per_class,
                                                    "confusion_matrix": confusion},
                               counts={"items": len(items), "classes": len(labels)},
                               warnings=warnings)

    def unit_stats(self, reference, submission, metric="accuracy"):
        ref = self.reference(reference)
        sub = self.submission(submission, ref)
        items, y_true, y_pred = self._pairs(ref, sub)
        correct = (np.asarray(y_true) == np.asarray(y_pred)).astype(float)
        return UnitStats("accuracy", items, correct[:, None], weighted_mean, np.ones(len(items)))
