"""Breakdown tables of a result page, paged and sorted on the server.

The RCC result has one row per publication (800+); the page shows ``PAGE_SIZE``
rows of each table, and ``?bd=<table>&sort=<column>&order=asc|desc&page=<n>``
pages and sorts one of them (the others show their first page in scorer order).
"""
from __future__ import annotations

import json
import math
from urllib.parse import urlencode

from shareval.platform.labels import UNDEFINED, label, value

PAGE_SIZE = 50
UNIT = {"per_publication": "Publication", "per_document": "Document", "per_language": "Language",
        "per_query": "Query", "per_class": "Class", "pr_curve": "Score threshold (>=)",
        "confusion_matrix": "Reference \\ predicted"}
DATA_COLUMNS = {"confusion_matrix"}        # its columns are class names: shown as they are


def _cell(row: dict, key: str) -> dict:
    """A row's ``key`` as a cell: a value the scorer stored as null (NaN) is undefined,
    a field the row lacks is blank."""
    v = row.get(key)
    if isinstance(v, (dict, list)):
        return {"text": json.dumps(v)[:300], "num": False}
    if v is None and key in row:
        return {"text": UNDEFINED, "num": True}
    return {"text": value(key, v), "num": type(v) in (int, float)}


def _sort_key(v):
    # numbers before text, missing values last, in either order of the numbers
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, float(v), "")
    if v is None or v == "":
        return (2, 0.0, "")
    return (1, 0.0, str(v).lower())


def breakdown_tables(breakdowns: dict, params) -> list[dict]:
    """Each breakdown ({unit: {field: value}}) as one page of a table; see the module doc."""
    chosen = params.get("bd")
    tables = []
    for name, units in breakdowns.items():
        if not isinstance(units, dict) or not units:
            continue
        rows = [(str(u), r if isinstance(r, dict) else {"value": r}) for u, r in units.items()]
        cols: list[str] = []
        for _, r in rows:
            cols.extend(k for k in r if k not in cols)
        # a field that repeats the unit in every row (SV-Ident's doc_id) is the unit
        # column again: shown once
        cols = [c for c in cols if not all(str(r.get(c)) == u for u, r in rows)]
        sort, order, page = "", "asc", 1
        if name == chosen:
            sort = params.get("sort", "")
            order = "desc" if params.get("order") == "desc" else "asc"
            try:
                page = max(1, int(params.get("page", 1)))
            except ValueError:
                page = 1
        if sort == "unit":
            rows.sort(key=lambda ur: _sort_key(ur[0]), reverse=order == "desc")
        elif sort in cols:
            present = [ur for ur in rows if ur[1].get(sort) not in (None, "")]
            missing = [ur for ur in rows if ur[1].get(sort) in (None, "")]
            present.sort(key=lambda ur: _sort_key(ur[1].get(sort)), reverse=order == "desc")
            rows = present + missing
        else:
            sort = ""
        pages = max(1, math.ceil(len(rows) / PAGE_SIZE))
        page = min(page, pages)
        shown = rows[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]

        def link(**kw):
            q = {"bd": name, "sort": sort, "order": order, "page": page}
            q.update(kw)
            return "?" + urlencode({k: v for k, v in q.items() if v not in ("", None)}) + \
                f"#bd-{name}"

        headers = [{"key": c, "label": UNIT.get(name, "Unit") if c == "unit" else
                    c if name in DATA_COLUMNS else label(c),
                    "sorted": order if c == sort else "",
                    "url": link(sort=c, page=1,
                                order="desc" if c == sort and order == "asc" else "asc")}
                   for c in ["unit"] + cols]
        tables.append({
            "name": name, "label": label(name), "headers": headers,
            "rows": [[{"text": u, "num": False}] + [_cell(r, c) for c in cols]
                     for u, r in shown],
            "total": len(rows), "page": page, "pages": pages,
            "first": (page - 1) * PAGE_SIZE + 1 if rows else 0,
            "last": (page - 1) * PAGE_SIZE + len(shown),
            "prev": link(page=page - 1) if page > 1 else "",
            "next": link(page=page + 1) if page < pages else ""})
    return tables
