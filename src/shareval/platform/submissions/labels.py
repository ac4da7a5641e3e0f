"""Human labels for metric keys and run states, and number formatting for pages.

One table for result pages, leaderboards and the submit page; the API and the
CSV export keep the machine keys (scripts read them). A key not in the table is
labelled from its parts (``precision_macro`` -> "Precision (macro)").
"""
from __future__ import annotations

import re

LABELS = {
    "f1": "F1", "f1_macro": "F1 (macro)", "f1_micro": "F1 (micro)",
    "precision": "Precision", "recall": "Recall", "accuracy": "Accuracy",
    "precision_macro": "Precision (macro)", "recall_macro": "Recall (macro)",
    "tp": "True positives", "fp": "False positives", "fn": "False negatives",
    "map": "MAP", "map@10": "MAP@10", "mrr": "MRR", "ndcg": "nDCG",
    "aqwv": "AQWV", "mqwv": "MQWV", "adwv": "ADWV", "qv": "QV",
    "partial_f1": "F1 (partial match)", "exact_f1": "F1 (exact match)",
    "partial_tp": "True positives (partial match)", "exact_tp": "True positives (exact match)",
    "doc_id": "Document", "lang": "Language", "documents": "Documents",
    "sentences": "Sentences", "positives": "Positive sentences", "pairs": "Pairs",
    "above_mean_fp": "Above mean FP", "above_mean_fn": "Above mean FN",
    "per_document": "Per document", "per_language": "Per language",
    "per_publication": "Per publication", "per_query": "Per query",
    "pr_curve": "Precision-recall by score threshold",
    "roc_auc": "ROC AUC", "p_miss": "P(miss)", "p_fa": "P(false alarm)",
}
WORDS = {"f1": "F1", "tp": "TP", "fp": "FP", "fn": "FN", "map": "MAP", "ndcg": "nDCG",
         "aqwv": "AQWV", "qwv": "QWV", "clir": "CLIR", "id": "ID", "e2e": "end-to-end"}
SUFFIXES = {"macro", "micro", "weighted", "partial", "exact"}
STATES = {"submitted": "Submitted", "validated": "Validated", "queued": "Waiting for scoring",
          "running": "Scoring", "scored": "Scored", "failed": "Scoring failed",
          "rejected": "Rejected (invalid file)", "cancelled": "Cancelled",
          "primary": "Primary run", "contrastive": "Contrastive run",
          "best": "Best run", "latest": "Latest run"}


def label(key) -> str:
    key = str(key)
    if key in LABELS:
        return LABELS[key]
    parts = [p for p in re.split(r"[_\s]+", key) if p]
    if not parts:
        return key
    tail = [p for p in parts[1:] if p in SUFFIXES]
    head = [WORDS.get(p, p) for p in parts if p not in tail]
    text = " ".join(head)
    text = text[:1].upper() + text[1:]
    return text + (f" ({', '.join(tail)})" if tail else "")


def state_label(state) -> str:
    return STATES.get(str(state), str(state).capitalize())


def number(v, digits: int = 4) -> str:
    """Integers (and integral counts stored as floats) without decimals; others to ``digits``."""
    if v is None or v == "":
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "n/a"
        return f"{v:.{digits}f}"
    return str(v)


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
