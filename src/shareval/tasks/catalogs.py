"""The catalog ids a submission names, per task: what a competition's catalog
(data sets) or vocabulary (variables) is checked against.

Only tasks whose submissions name catalog entries are listed; a catalog on a
phase of any other task is refused when the bundle is read.

>>> sorted(CATALOG_KINDS)
['rcc-citations', 'svident-disambiguation']
"""
from __future__ import annotations

from pathlib import Path

from ..formats.errors import Problems

# task name -> the kind of id its submissions name
CATALOG_KINDS = {"rcc-citations": "dataset", "svident-disambiguation": "variable"}
MAX_LISTED = 20


def ids_named(task: str, path: str | Path) -> set[str]:
    """The dataset or variable ids a (valid) submission of ``task`` names."""
    problems = Problems()
    if task == "rcc-citations":
        from ..formats.rcc import read_citations
        cit = read_citations(path, problems, True)
        return {c.data_set_id for c in cit.records} if cit else set()
    if task == "svident-disambiguation":
        from ..formats.svident import read_disambiguation
        pred = read_disambiguation(path, problems)
        if pred is None:
            return set()
        return {str(v) for ranked in pred.values.values() if isinstance(ranked, dict)
                for v in ranked}
    raise ValueError(f"task {task} names no catalog ids")


def read_catalog(path: str | Path) -> list[str]:
    """A catalog file: one id a line (blank lines and ``#`` comments ignored), a
    JSON list of ids or of objects with an ``id`` (or ``data_set_id``) field, or a
    JSON object whose keys are the ids (RCC's ``dataset_text_dict.json``: id → text)."""
    import json
    text = Path(path).read_text(encoding="utf-8")
    if text.lstrip().startswith("{"):
        doc = json.loads(text)
        return [str(k).strip() for k in doc if str(k).strip()]
    if text.lstrip().startswith("["):
        out = []
        for item in json.loads(text):
            if isinstance(item, dict):
                item = item.get("id", item.get("data_set_id"))
            if item is not None and str(item).strip():
                out.append(str(item).strip())
        return out
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def unknown_ids_problem(task: str, submission: str | Path, catalog: str | Path,
                        label: str) -> str | None:
    """One problem line naming the ids not in the catalog, or None when all are known."""
    known = set(read_catalog(catalog))
    unknown = sorted(ids_named(task, submission) - known)
    if not unknown:
        return None
    kind = CATALOG_KINDS[task]
    shown = ", ".join(unknown[:MAX_LISTED]) + (f" and {len(unknown) - MAX_LISTED} more"
                                               if len(unknown) > MAX_LISTED else "")
    return (f"{submission}: {kind}_id: {len(unknown)} {kind} id{'s' if len(unknown) > 1 else ''} "
            f"not in the phase's catalog {label}: {shown}")
