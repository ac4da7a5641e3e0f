"""A phase's combined boards (read by ``loader.read_bundle``, stored on the phase as
``Phase.combined_boards`` by ``load_bundle``; built by ``leaderboards/combined.py``)::

    boards:                           # optional
      - slug: all-languages
        title: All languages
        datasets: [eval-de, eval-en]  # two or more datasets of this phase
        columns:                      # the first column ranks the board
          - {metric: f1_macro, combine: mean_rank, label: Mean rank (F1)}
          - {metric: f1_macro, combine: mean}     # label: "mean f1_macro"
          - {metric: mae, combine: mean, lower_is_better: true}

``combine``: ``mean`` (the mean of the team's values) or ``mean_rank`` (the mean of
its ranks on the datasets). ``lower_is_better`` defaults to the datasets' tasks'
setting (they must agree when it is not given). Reloading a bundle replaces the
phase's boards.
"""
from __future__ import annotations

LINE = "__line__"
KEYS = {"slug", "title", "datasets", "columns"}
COLUMN_KEYS = {"metric", "combine", "label", "lower_is_better"}
COMBINE = {"mean": "mean", "mean_rank": "mean rank by"}


def column_key(metric: str, combine: str) -> str:
    """A column's key in the rows' ``values``: ``mean:f1`` or ``mean_rank:f1``."""
    return f"{combine}:{metric}"


def read_boards(r, ph: dict, w: str, datasets: list[dict], tasks: dict[str, dict]) -> list[dict]:
    """The phase's ``boards:`` checked: a slug each (unique in the phase), two or more
    distinct datasets of the phase, columns with a metric and a known ``combine``, no
    unknown keys. ``datasets``: the phase's datasets as read ({slug, task}); ``tasks``:
    the bundle's tasks by slug (their ``lower_is_better``)."""
    node = ph.get("boards")
    if node is None:
        return []
    if not isinstance(node, list):
        r.err(ph, f"{w}.boards", "a list of boards ({slug, title, datasets, columns})")
        return []
    task_of = {d["slug"]: d["task"] for d in datasets if d.get("slug")}
    out, slugs = [], set()
    for i, b in enumerate(node):
        bw = f"{w}.boards[{i}]"
        if not isinstance(b, dict):
            r.err(ph, bw, "expected a mapping {slug, title, datasets, columns}")
            continue
        for k in sorted(set(b) - KEYS - {LINE}, key=str):
            r.err(b, f"{bw}.{k}", f"unknown key; a board takes {', '.join(sorted(KEYS))}")
        slug = r.slug(b, bw)
        if slug is not None and slug in slugs:
            r.err(b, f"{bw}.slug", f"two boards of this phase are called {slug!r}")
        slugs.add(slug)
        members = _datasets(r, b, bw, list(task_of))
        lower = {bool((tasks.get(task_of[d]) or {}).get("lower_is_better")) for d in members}
        columns = _columns(r, b, bw, lower)
        out.append({"slug": slug, "title": str(b.get("title") or slug or ""),
                    "datasets": members, "columns": columns})
    return out


def _datasets(r, b: dict, bw: str, known: list[str]) -> list[str]:
    items = b.get("datasets")
    if not isinstance(items, list) or not all(isinstance(x, str) for x in items) \
            or len(items) < 2:
        r.err(b, f"{bw}.datasets", "required: a list of two or more dataset slugs of this "
                                   f"phase ({', '.join(known) or 'none'})")
        return [x for x in items if isinstance(x, str) and x in known] \
            if isinstance(items, list) else []
    for x in items:
        if x not in known:
            r.err(b, f"{bw}.datasets", f"{x!r} is not a dataset of this phase "
                                       f"({', '.join(known) or 'none'})")
    if len(set(items)) < len(items):
        r.err(b, f"{bw}.datasets", "a dataset is named twice")
    return list(dict.fromkeys(x for x in items if x in known))


def _columns(r, b: dict, bw: str, lower: set[bool]) -> list[dict]:
    items = b.get("columns")
    if not isinstance(items, list) or not items:
        r.err(b, f"{bw}.columns", "required: a list of {metric, combine: mean|mean_rank, "
                                  "label}")
        return []
    out, keys = [], set()
    for k, c in enumerate(items):
        cw = f"{bw}.columns[{k}]"
        if not isinstance(c, dict):
            r.err(b, cw, "expected {metric: NAME, combine: mean|mean_rank, label: TEXT}")
            continue
        for x in sorted(set(c) - COLUMN_KEYS - {LINE}, key=str):
            r.err(c, f"{cw}.{x}", f"unknown key; a column takes "
                                  f"{', '.join(sorted(COLUMN_KEYS))}")
        metric, combine = c.get("metric"), c.get("combine")
        if not isinstance(metric, str) or not metric.strip():
            r.err(c, f"{cw}.metric", "required: the name of a metric of the datasets' scores")
            metric = None
        if combine not in COMBINE:
            r.err(c, f"{cw}.combine", f"unknown combine {combine!r}; mean or mean_rank"
                  if combine is not None else "required: mean or mean_rank")
            combine = None
        lib = c.get("lower_is_better")
        if lib is not None and not isinstance(lib, bool):
            r.err(c, f"{cw}.lower_is_better", "true or false")
            lib = None
        if lib is None and len(lower) > 1:
            r.err(c, f"{cw}.lower_is_better", "required here: the board's datasets' tasks "
                                              "disagree on lower_is_better")
        if metric is None or combine is None:
            continue
        key = column_key(metric, combine)
        if key in keys:
            r.err(c, cw, f"{combine} of {metric} is already a column of this board")
            continue
        keys.add(key)
        label = c.get("label")
        out.append({"key": key, "metric": metric, "combine": combine,
                    "label": str(label) if label not in (None, "") else
                    f"{COMBINE[combine]} {metric}",
                    "lower_is_better": lib if lib is not None else (lower == {True})})
    return out
