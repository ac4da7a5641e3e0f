"""Item labels (classification) and annotation tables (agreement).

Labels: a TSV/CSV with header ``item<TAB>label`` or a JSON object
``{"item": "label"}``. Annotations: a TSV/CSV with header
``item, annotator, label`` (one judgment per row; a missing judgment is a
missing row or an empty label).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import Problems
from .jsonfile import iter_records, keyed_record, sniff_container
from .table import read_table


@dataclass
class Labels:
    path: str
    labels: dict[str, str]
    lines: dict[str, int]             # every item in the file, valid label or not
    warnings: list[str] = field(default_factory=list)


def read_labels(path: str | Path, problems: Problems) -> Labels | None:
    path = Path(path)
    labels: dict[str, str] = {}
    lines: dict[str, int] = {}
    if path.suffix.lower() == ".json" or sniff_container(path) == "object":
        records = iter_records(path, problems, "object", "item")
        if records is None:
            return None
        for line, key, value in records:
            lines.setdefault(key, line)
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                problems.in_record(path, line, keyed_record("item", key), "label",
                                   "must be a string or an integer")
                continue
            labels[key] = str(value)
    else:
        table = read_table(path, problems, ("item", "label"),
                           aliases={"item": ("id", "uuid", "doc_id"), "label": ("class", "y")})
        if table is None:
            return None
        for line, row in table[1]:
            item, label = row["item"].strip(), row["label"].strip()
            if not item:
                problems.add(path, line, "item", "empty item id")
                continue
            if item in lines:
                problems.add(path, line, "item", f"duplicate item {item!r} (first at line {lines[item]})")
                continue
            lines[item] = line
            if not label:
                problems.add(path, line, "label", "empty label")
                continue
            labels[item] = label
    if not labels and not problems:
        problems.add(path, None, "file", "no labelled items")
    return Labels(str(path), labels, lines)


@dataclass
class Annotations:
    path: str
    items: list[str]
    annotators: list[str]
    # (item, annotator) -> label
    judgments: dict[tuple[str, str], str]


def read_annotations(path: str | Path, problems: Problems) -> Annotations | None:
    table = read_table(path, problems, ("item", "annotator", "label"),
                       aliases={"item": ("unit", "id"), "annotator": ("coder", "judge", "rater"),
                                "label": ("value", "answer")})
    if table is None:
        return None
    judgments: dict[tuple[str, str], str] = {}
    first: dict[tuple[str, str], int] = {}
    items: dict[str, None] = {}
    annotators: dict[str, None] = {}
    for line, row in table[1]:
        item, ann, label = row["item"].strip(), row["annotator"].strip(), row["label"].strip()
        if not item:
            problems.add(path, line, "item", "empty item id")
            continue
        if not ann:
            problems.add(path, line, "annotator", "empty annotator id")
            continue
        key = (item, ann)
        if key in first:
            problems.add(path, line, "label",
                         f"annotator {ann!r} labels item {item!r} twice (first at line {first[key]})")
            continue
        first[key] = line
        items.setdefault(item)
        annotators.setdefault(ann)
        if label:
            judgments[key] = label
    if not judgments and not problems:
        problems.add(path, None, "file", "no judgments")
    return Annotations(str(path), list(items), list(annotators), judgments)
