"""Words for machine keys and numbers as the pages show them.

One table for result pages, leaderboards, comparisons, the submit page and the
judging and annotation pages; the API and the CSV export keep the machine keys
(scripts read them). A key not in the table is spelled out from its parts
(``precision_macro`` -> "Precision (macro)", ``recall@100`` -> "Recall@100").

The table's order is also the order of metric columns (after the primary
metric): :func:`ordered` sorts keys by it, keys it does not know after it by
name. A scorer's own key order does not survive PostgreSQL's JSON columns, so
without a declared order the columns came out differently on SQLite.
"""
from __future__ import annotations

import math
import re

from shareval.formats.digits import is_digits

# metric keys in the order pages show them, with their words
METRICS = {
    # judged estimates (judging/auto.py) first: an assessed board ranks by one of them
    "judged_f1": "F1 (judged)", "judged_precision": "Precision (judged)",
    "judged_recall": "Recall (judged)",
    "f1": "F1", "precision": "Precision", "recall": "Recall",
    "mention_f1": "F1 (mention)", "mention_precision": "Precision (mention)",
    "mention_recall": "Recall (mention)", "entity_f1": "F1 (entity)",
    "entity_precision": "Precision (entity)", "entity_recall": "Recall (entity)",
    "entity_precision_factorised": "Precision (entity, factorised)",
    "f1_macro": "F1 (macro)", "precision_macro": "Precision (macro)",
    "recall_macro": "Recall (macro)", "accuracy": "Accuracy",
    "f1_micro": "F1 (micro)", "precision_micro": "Precision (micro)",
    "recall_micro": "Recall (micro)", "f1_weighted": "F1 (weighted)",
    "precision_weighted": "Precision (weighted)", "recall_weighted": "Recall (weighted)",
    "partial_f1": "F1 (partial match)", "partial_precision": "Precision (partial match)",
    "partial_recall": "Recall (partial match)", "partial_f0_5": "F0.5 (partial match)",
    "exact_f1": "F1 (exact match)", "exact_precision": "Precision (exact match)",
    "exact_recall": "Recall (exact match)",
    "map": "MAP", "map@": "MAP@k", "mrr": "MRR", "p@": "P@k", "recall@": "Recall@k",
    "r_precision": "R-precision", "ndcg": "nDCG", "ndcg@": "nDCG@k",
    "aqwv": "AQWV", "aqwv_all": "AQWV (all queries)",
    "aqwv_with_relevant": "AQWV (queries with relevant documents)",
    "aqwv_raw": "AQWV (raw judgments)", "aqwv_raw_all": "AQWV (raw judgments, all queries)",
    "aqwv_raw_with_relevant": "AQWV (raw judgments, queries with relevant documents)",
    "adwv": "ADWV", "adwv_raw": "ADWV (raw judgments)", "mqwv": "MQWV",
    "oracle_qwv": "Oracle QWV", "clir_aqwv_at_e2e_beta": "CLIR AQWV at the end-to-end beta",
    # MATERIAL: open queries apart, and the CLIR part of an end-to-end run (plan 6.4, 8.1)
    "open_aqwv": "AQWV (open queries)", "open_aqwv_raw": "AQWV (raw judgments, open queries)",
    "clir_aqwv": "CLIR AQWV", "clir_aqwv_all": "CLIR AQWV (all queries)",
    "clir_aqwv_with_relevant": "CLIR AQWV (queries with relevant documents)",
    "clir_mqwv": "CLIR MQWV", "clir_roc_auc": "CLIR ROC AUC", "clir_adwv": "CLIR ADWV",
    "roc_auc": "ROC AUC", "p_miss": "P(miss)", "p_fa": "P(false alarm)",
    "detected": "Detected", "missed": "Missed", "false_alarms": "False alarms",
    "correct_rejections": "Correct rejections",
    "distinct_values": "Distinct values", "values_per_publication": "Values per publication",
    "value_set_jaccard": "Jaccard of the value sets",
    "mean_publication_jaccard": "Mean Jaccard per publication",
    "tp": "True positives", "fp": "False positives", "fn": "False negatives",
    "partial_tp": "True positives (partial match)", "exact_tp": "True positives (exact match)",
}
# the significance comparison with an earlier run (its confidence is 0.95 on the server)
COMPARISON = {
    "difference": "Difference (A − B)", "ci_low": "95% CI low", "ci_high": "95% CI high",
    "p_bootstrap": "p (bootstrap)", "p_randomization": "p (randomization)",
}
OTHER = {
    "doc_id": "Document", "lang": "Language", "documents": "Documents",
    "sentences": "Sentences", "positives": "Positive sentences", "pairs": "Pairs",
    "above_mean_fp": "Above mean FP", "above_mean_fn": "Above mean FN",
    "per_document": "Per document", "per_language": "Per language",
    "per_publication": "Per publication", "per_query": "Per query",
    "pr_curve": "Precision-recall by score threshold", "value_counts": "Values",
    "num_rel": "Relevant documents", "num_ret": "Retrieved documents",
    "num_rel_ret": "Relevant retrieved", "qv": "QV", "records": "Records",
    "publications": "Publications", "units": "Units",
}
LABELS = {**METRICS, **COMPARISON, **OTHER}
WORDS = {"f1": "F1", "tp": "TP", "fp": "FP", "fn": "FN", "map": "MAP", "ndcg": "nDCG",
         "aqwv": "AQWV", "qwv": "QWV", "clir": "CLIR", "id": "ID", "e2e": "end-to-end",
         "p": "P", "mrr": "MRR", "x1": "X1", "x2": "X2", "x3": "X3", "x4": "X4",
         "ci": "CI", "auc": "AUC", "roc": "ROC", "qv": "QV"}
QUALIFIERS = {"macro": "macro", "micro": "micro", "weighted": "weighted",
              "partial": "partial match", "exact": "exact match", "raw": "raw judgments"}
STATES = {"submitted": "Submitted", "validated": "Validated", "queued": "Waiting for scoring",
          "running": "Scoring", "scored": "Scored", "failed": "Scoring failed",
          "rejected": "Rejected (invalid file)", "cancelled": "Cancelled",
          "primary": "Primary run", "contrastive": "Contrastive run",
          "best": "Best run", "latest": "Latest run"}
# keys whose values count things: shown as whole numbers when they are whole
COUNT = re.compile(r"(?:.*_)?(?:tp|fp|fn|tn|x[1-4])(?:_raw)?|(?:num|n)_\w+|n|hits|support|"
                   r"records(?:_other)?|publications(?:_other)?|documents|sentences|"
                   r"positives|units|queries(?:_\w+)?|items|classes|pairs|judgments|"
                   r"summaries|distinct_values|shared_values|false_alarms|correct_rejections")
UNDEFINED = "—"            # NaN: a value the definition leaves open (0/0), not a missing one
_ORDER = {k: i for i, k in enumerate(METRICS)}


def label(key) -> str:
    key = str(key)
    if key in LABELS:
        return LABELS[key]
    head, at, k = key.partition("@")
    if at and is_digits(k):                       # map@1, p@10, recall@100, ndcg@10
        return label(head).split(" (")[0] + "@" + k
    words = re.sub(r"\bf(\d)_(\d)\b", r"f\1.\2", key)        # f0_5 -> F0.5
    parts = [p for p in re.split(r"[_\s]+", words) if p]
    if not parts:
        return key
    qualified = len(parts) > 1
    tail = [QUALIFIERS[p] for p in parts if qualified and p in QUALIFIERS]
    head_words = [WORDS.get(p, p.upper() if re.fullmatch(r"f\d\.\d", p) else p)
                  for p in parts if not (qualified and p in QUALIFIERS)]
    text = " ".join(head_words)
    text = text[:1].upper() + text[1:]
    return text + (f" ({', '.join(tail)})" if tail else "")


def ordered(keys, first: str = "") -> list[str]:
    """``keys`` in the table's order (``first`` first), unknown ones after it by name;
    ``name@k`` keys by their family, then k."""
    def rank(key: str):
        head, at, k = key.partition("@")
        if key in _ORDER:
            return (0, _ORDER[key], 0, key)
        if at and is_digits(k) and head + "@" in _ORDER:
            return (0, _ORDER[head + "@"], int(k), key)
        return (1, 0, 0, key)
    keys = list(dict.fromkeys(keys))
    rest = sorted((k for k in keys if k != first), key=rank)
    return ([first] if first in keys else []) + rest


def state_label(state) -> str:
    return STATES.get(str(state), str(state).capitalize())


def undefined(v) -> bool:
    """NaN, as a float or as the string a result stores for it."""
    return (isinstance(v, float) and math.isnan(v)) or v == "NaN"


def number(v, digits: int = 4) -> str:
    """Integers without decimals; other numbers to ``digits``; NaN as a dash."""
    if v is None or v == "":
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if undefined(v):
        return UNDEFINED
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def value(key, v, digits: int = 4) -> str:
    """A metric or count as shown: counts (``tp``, ``x1``, ``records`` …) that are
    whole numbers without decimals, even when a scorer stored them as floats."""
    if isinstance(v, float) and v.is_integer() and COUNT.fullmatch(str(key)):
        return str(int(v))
    return number(v, digits)


def value_with_interval(key: str, metrics: dict, digits: int = 4) -> str:
    """A metric's text; an estimate with its interval (``key_low``, ``key_high``:
    judged metrics) as 'value [low, high]'."""
    text = value(key, metrics.get(key), digits)
    low, high = metrics.get(f"{key}_low"), metrics.get(f"{key}_high")
    if metrics.get(key) is None or not all(isinstance(v, (int, float)) for v in (low, high)):
        return text
    return f"{text} [{value(key, low, min(digits, 3))}, {value(key, high, min(digits, 3))}]"


def interval_bound(key: str, metrics: dict) -> bool:
    """``key`` is the bound of another metric's interval (shown in that metric's cell)."""
    return key.endswith(("_low", "_high")) and key.rsplit("_", 1)[0] in metrics


def scorer_label(version) -> str:
    """A stored scorer version (``task/1 (shareval 0.1.0)``) as a reader's phrase:
    the organizers' program for ``program`` tasks, else shareval's scorer and its
    version, without the registry's task key."""
    m = re.fullmatch(r"([\w.-]+)/(\S+)(?: \((.*)\))?", str(version or "").strip())
    if not m:
        return str(version or "")
    task, v, by = m.groups()
    if task == "program":
        return "the organizers' scoring program" + (f" (run by {by})" if by else "")
    return f"{by or 'shareval'}, scorer version {v}"


def scalar_metrics(result: dict) -> dict[str, float]:
    """The numeric metrics of a stored result, in the declared order (:func:`ordered`:
    PostgreSQL's JSON columns do not keep the scorer's order, SQLite's do)."""
    m = result.get("metrics") or {}
    return {k: m[k] for k in ordered(m)
            if isinstance(m[k], (int, float)) and not isinstance(m[k], bool)}
