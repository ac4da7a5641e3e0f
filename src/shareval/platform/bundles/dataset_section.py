"""The bundle's keys for runs, boards and records (read by ``bundle.read_bundle``).

Per dataset::

    concurrent: 2                   # runs a team may have queued or running at once
    board:
      runs: all                     # best (default: one row per team) or all
      max_runs: 3                   # with runs: all, at most this many rows per team
      team_visibility: true         # teams may take their own runs off the board
      columns:                      # shown metric columns, in order (default: all)
        - {metric: f1_macro, precision: 3}
        - {metric: accuracy, precision: 2}
    split:                          # public/private split of the reference
      private: private-units.txt    # unit ids, one a line; or
      # fraction: 0.5
      # seed: 13

    quotas:                         # also a run group's (bundles/groups_section.py)
      - {limit: 5, window: week}    # week, rolling (with days: N) or phase

Top level: ``factsheet:`` (see ``submissions.factsheets``).
"""
from __future__ import annotations

import hashlib
import json

from shareval import tasks as registry
from shareval.platform.submissions import factsheets, splits

RUNS = ("best", "all")


def read_factsheet(r, doc) -> dict:
    schema = factsheets.read_schema(doc.get("factsheet"), r.err)
    slugs = {str(p.get("slug")) for p in doc.get("phases") or [] if isinstance(p, dict)}
    for i, f in enumerate(schema.get("fields", [])):     # a refusal names real phases
        unknown = [p for p in ((f.get("refuse") or {}).get("phases") or []) if p not in slugs]
        if unknown:
            r.err(doc.get("factsheet"), f"bundle.factsheet.fields[{i}].refuse.phases",
                  f"no phase {', '.join(unknown)} in this bundle")
    return schema


def read_board(r, d: dict, dw: str) -> dict:
    node = d.get("board") or {}
    if not isinstance(node, dict):
        r.err(d, f"{dw}.board", "expected a mapping")
        return {}
    out = {}
    runs = str(node.get("runs", "best"))
    if runs not in RUNS:
        r.err(node, f"{dw}.board.runs", "best (one row per team) or all")
    out["runs"] = runs
    mx = node.get("max_runs")
    if mx is not None and (not isinstance(mx, int) or isinstance(mx, bool) or mx < 1):
        r.err(node, f"{dw}.board.max_runs", "a positive integer")
        mx = None
    if mx is not None:
        out["max_runs"] = mx
    tv = node.get("team_visibility", False)
    if not isinstance(tv, bool):
        r.err(node, f"{dw}.board.team_visibility", "true or false")
    out["team_visibility"] = tv is True
    cols = []
    for k, c in enumerate(node.get("columns") or []):
        cw = f"{dw}.board.columns[{k}]"
        c = {"metric": c} if isinstance(c, str) else c
        if not isinstance(c, dict) or not c.get("metric"):
            r.err(node, cw, "a metric name or {metric: NAME, precision: N}")
            continue
        p = c.get("precision")
        if p is not None and (not isinstance(p, int) or isinstance(p, bool) or not 0 <= p <= 10):
            r.err(c, f"{cw}.precision", "an integer from 0 to 10")
            p = None
        cols.append({"metric": str(c["metric"]), "precision": p})
    if cols:
        out["columns"] = cols
    return out


def read_split(r, d: dict, dw: str, tname: str | None, ref) -> dict:
    node = d.get("split")
    if node is None:
        return {}
    if not isinstance(node, dict):
        r.err(d, f"{dw}.split", "expected a mapping")
        return {}
    if tname and not splits.supported(tname):
        r.err(node, f"{dw}.split", f"task {tname} does not support a public/private split "
                                   f"(supported: {', '.join(splits.SPLITTERS)})")
        return {}
    if "private" in node:
        path = r.file(node, "private", f"{dw}.split")
        if path is None:
            return {}
        ids = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
        split = {"units": sorted(set(ids))}
    else:
        f, seed = node.get("fraction"), node.get("seed")
        if not isinstance(f, (int, float)) or isinstance(f, bool) or not 0 < f < 1:
            r.err(node, f"{dw}.split.fraction", "a number between 0 and 1 (or give private: "
                                                "FILE with the private unit ids)")
            return {}
        if not isinstance(seed, int) or isinstance(seed, bool):
            r.err(node, f"{dw}.split.seed", "an integer (fixes which units are private)")
            return {}
        split = {"fraction": float(f), "seed": seed}
    if ref is not None and tname:
        try:
            units = splits.units(registry.get(tname), str(ref))
        except Exception:                     # noqa: BLE001 -- reported by the reference check
            return split
        test = splits.private_test(split)
        private = [u for u in units if test(u)]
        if "units" in split:
            unknown = sorted(set(split["units"]) - set(units))
            if unknown:
                r.err(node, f"{dw}.split.private", f"{len(unknown)} ids are not units of the "
                                                   f"reference: {', '.join(unknown[:5])}")
        if not private or len(private) == len(units):
            r.err(node, f"{dw}.split", f"both parts need units: {len(private)} of "
                                       f"{len(units)} are private")
    return split


def read_quotas(r, node: dict, where: str) -> list[dict]:
    """``quotas: [{limit: 5, window: week|rolling|phase, days: 7}]`` of a dataset or group."""
    from shareval.platform.competitions.models import Quota
    quotas = []
    items = node.get("quotas") or []
    if not isinstance(items, list):
        r.err(node, f"{where}.quotas", "a list of {limit, window, days}")
        return []
    for k, q in enumerate(items):
        qw = f"{where}.quotas[{k}]"
        if not isinstance(q, dict):
            r.err(node, qw, "expected {limit: N, window: week|rolling|phase}")
            continue
        lim, win, days = q.get("limit"), str(q.get("window", "week")), q.get("days", 7)
        if not isinstance(lim, int) or isinstance(lim, bool) or lim < 0:
            r.err(q, f"{qw}.limit", "a non-negative integer is required")
        if win not in (Quota.WEEK, Quota.ROLLING, Quota.PHASE):
            r.err(q, f"{qw}.window", "week, rolling or phase")
        if not isinstance(days, int) or isinstance(days, bool) or days < 1:
            r.err(q, f"{qw}.days", "a positive integer (the rolling window's length)")
            days = 7
        quotas.append({"limit": lim, "window": win, "days": days})
    return quotas


def read_concurrent(r, d: dict, dw: str):
    c = d.get("concurrent")
    if c is None:
        return None
    if not isinstance(c, int) or isinstance(c, bool) or c < 1:
        r.err(d, f"{dw}.concurrent", "a positive integer (runs queued or running at once)")
        return None
    return c


def digest_with_split(digest: str, split: dict) -> str:
    """The reference digest, changed by the split, so changing it re-scores the runs."""
    if not split:
        return digest
    return hashlib.sha256((digest + json.dumps(split, sort_keys=True)).encode()).hexdigest()
