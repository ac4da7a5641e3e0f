"""MATERIAL DomainID and LangID: per-ID detection counts X1-X4 and their fractions
(evaluation plan section 5, Table 2)."""
from __future__ import annotations

import numpy as np

from ...formats.material import Pack
from .. import register
from .base import _MaterialTask, _reference_ids


class _IdentificationTask(_MaterialTask):
    primary_metric = "detected"
    options = ()
    conventions = {
        **_MaterialTask.conventions,
        "counts": "per ID: X1 correct detections, X2 misses, X3 false alarms, X4 correct "
                  "rejections over the scored documents (plan section 5, Table 2)",
        "fractions": "each count divided by the ground-truth number X1 + X2 (the plan reports "
                     "percentages of it; shareval reports fractions); 0 when X1 + X2 = 0",
        "metrics": "the same fractions over all IDs' counts pooled",
    }

    def ids(self, pack: Pack) -> list[str]:
        return _reference_ids(pack, self.kind)

    def _score(self, pack, sub):
        rel = self.relevance(pack, sub.ids)
        scored = self.expected_docs(pack)
        if pack.scored is not None:              # one part of a split (tasks/splits.py)
            scored = scored & pack.scored
        rows, totals = {}, np.zeros(4)
        for k, i in enumerate(sub.ids):
            r, d = rel[k][scored], sub.decision[k][scored]
            x = np.array([np.sum(r & d), np.sum(r & ~d), np.sum(~r & d), np.sum(~r & ~d)], float)
            totals += x
            rows[i] = {**{f"x{j + 1}": int(x[j]) for j in range(4)}, **_fractions(x)}
        metrics = _fractions(totals)
        metrics = {"detected": metrics["x1_fraction"], "missed": metrics["x2_fraction"],
                   "false_alarms": metrics["x3_fraction"],
                   "correct_rejections": metrics["x4_fraction"]}
        warnings = []
        if not sub.ids:
            warnings.append(f"the pack has no {self.kind}/ reference files")
        return self.new_result(metrics, breakdowns={f"per_{self.id_name}": rows},
                               counts={self.id_name + "s": len(sub.ids),
                                       "documents_scored": int(scored.sum()),
                                       **{f"x{j + 1}": int(totals[j]) for j in range(4)}},
                               warnings=warnings)


def _fractions(x: np.ndarray) -> dict[str, float]:
    truth = x[0] + x[1]
    return {f"x{j + 1}_fraction": float(x[j] / truth) if truth else 0.0 for j in range(4)}


@register
class MaterialDomainId(_IdentificationTask):
    name = "material-domainid"
    kind = "domainid"
    id_name = "domain"
    description = "MATERIAL DomainID: per-domain detection counts X1-X4 (CS documents excluded)."

    def expected_docs(self, pack: Pack) -> np.ndarray:
        return ~pack.conversational


@register
class MaterialLangId(_IdentificationTask):
    name = "material-langid"
    kind = "langid"
    id_name = "language"
    description = "MATERIAL LangID: per-language detection counts X1-X4."
