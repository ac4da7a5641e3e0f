"""The tables and figures of one dataset's part of an overview paper, from stored
results: every run's result dict (metrics, breakdowns) and its per-unit statistics
(``UnitStats``) — no submission file is read.

The platform (``platform/reports``) gathers the runs; this module is pure.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..stats import MIN_UNITS
from ..tasks.base import UnitStats
from .significance import DIFFER, SAME, UNDECIDED, Matrix, all_pairs, interval, interval_defined
from .tables import COUNT, INTERVAL, NUMBER, PVALUE, TEXT, Column, Table, number

# breakdowns longer than this are written as CSV only (a per-unit list is no paper table)
PAPER_KEYS = 60
# breakdowns that are no per-key results table
SKIP_BREAKDOWNS = {"pr_curve", "value_counts", "compare"}
CONFIDENCE = 0.95
MATRIX_PAPER = 20      # systems; a larger p matrix is CSV only
PAPER_PAIRS = 200      # pairs listed in the paper's tables; more are CSV only
FIGURE_SERIES = 20     # systems drawn in one figure; the best ones by the primary metric


@dataclass
class Run:
    label: str                   # the row's name: the team, or "team: run" for every run
    team: str
    run: str
    primary: bool
    result: dict
    unit_stats: UnitStats | None = None
    note: str = ""               # e.g. "split dataset: private part"


@dataclass
class Figure:
    slug: str
    kind: str                    # "pr" | "bars" | "det" | "values"
    title: str
    data: dict


@dataclass
class Section:
    slug: str
    title: str
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    matrix: Matrix | None = None


LABEL_WORDS = {"f1": "F1", "f0": "F0", "aqwv": "AQWV", "mqwv": "MQWV", "adwv": "ADWV",
               "qv": "QWV", "auc": "AUC", "roc": "ROC", "map": "MAP", "ndcg": "nDCG",
               "p": "P", "r": "R", "fa": "FA", "tp": "TP", "fp": "FP", "fn": "FN",
               "mrr": "MRR", "clir": "CLIR", "e2e": "E2E", "lang": "language", "n": "number of"}


def breakdown(run: Run, name: str) -> dict:
    """One breakdown of a run's stored result ({} when it has none)."""
    return (run.result.get("breakdowns") or {}).get(name) or {}


def _label_metric(name: str) -> str:
    """A result's key as a table heads it: f1_macro -> F1 macro, p_miss -> P miss."""
    words = [LABEL_WORDS.get(w.split("@")[0], w.split("@")[0])
             + ("@" + w.split("@", 1)[1] if "@" in w else "") for w in str(name).split("_")]
    text = " ".join(w for w in words if w)
    return text[:1].upper() + text[1:]


def scalar_names(runs: list[Run], primary: str) -> list[str]:
    """The primary metric, then every other numeric metric in first-seen order."""
    names = [primary] if primary else []
    for r in runs:
        for k, v in (r.result.get("metrics") or {}).items():
            if k not in names and isinstance(v, (int, float)) and not isinstance(v, bool):
                names.append(k)
    return names


def _undefined_notes(runs: list[Run], names: list[str]) -> list[str]:
    out = []
    for k in names:
        bad = [r.label for r in runs
               if k in (r.result.get("metrics") or {}) and number(r.result["metrics"][k]) is None]
        gone = [r.label for r in runs if k not in (r.result.get("metrics") or {})]
        if bad:
            out.append(f"{_label_metric(k)} is undefined (NaN or none) for "
                       f"{', '.join(bad)}: shown as --")
        if gone and len(gone) < len(runs):
            out.append(f"{_label_metric(k)} is not in the result of {', '.join(gone)}: "
                       f"shown as --")
    return out


def _ranks(values: list, lower_is_better: bool) -> list:
    """Competition ranks (1, 1, 3) as the values are written (4 decimals)."""
    shown = [None if number(v) is None else round(v, 4) for v in values]
    ordered = sorted((v for v in shown if v is not None), reverse=not lower_is_better)
    return [None if v is None else ordered.index(v) + 1 for v in shown]


def results_table(slug: str, title: str, runs: list[Run], primary: str, lower_is_better: bool,
                  matrix: Matrix | None, intervals: dict, extra_notes=()) -> Table:
    names = scalar_names(runs, primary)
    best = "min" if lower_is_better else "max"
    letters = group_letters(matrix) if decided(matrix) else {}
    cols = [Column("rank", "Rank", COUNT), Column("team", "Team", TEXT),
            Column("run", "Run", TEXT)]
    cols.append(Column(primary, _label_metric(primary), NUMBER, best))
    cols.append(Column("ci", f"{int(CONFIDENCE * 100)}% CI", INTERVAL))
    if letters:
        cols.append(Column("group", "Group", TEXT))
    cols += [Column(k, _label_metric(k), COUNT) if _is_count(k) else
             Column(k, _label_metric(k), NUMBER,
                    "min" if _lower(k, lower_is_better, primary) else "max")
             for k in names[1:]]
    rows = []
    for r in runs:
        m = r.result.get("metrics") or {}
        row = {"team": r.team, "run": r.run, "ci": intervals.get(r.label),
               "group": letters.get(r.label, ""), **{k: number(m.get(k)) for k in names}}
        rows.append(row)
    order = sorted(range(len(rows)), key=lambda i: (
        number(rows[i][primary]) is None,
        (1 if lower_is_better else -1) * (number(rows[i][primary]) or 0), runs[i].label.lower()))
    rows = [rows[i] for i in order]
    for row, rank in zip(rows, _ranks([row[primary] for row in rows], lower_is_better)):
        row["rank"] = rank
    notes = list(extra_notes) + _undefined_notes(runs, names)
    no_ci = [r.label for r in runs if r.label not in intervals]
    if no_ci:
        notes.append(f"no interval for {', '.join(no_ci)}: "
                     + ("; ".join(sorted({_why_no_stats(r) for r in runs
                                          if r.label in no_ci}))))
    if intervals:
        notes.append(f"CI: {int(CONFIDENCE * 100)}% bootstrap percentile interval of "
                     f"{_label_metric(primary)} over the task's units"
                     + (" (resampled within strata: SV-Ident's languages, MATERIAL's "
                        "queries with and without relevant documents)" if any(
                         r.unit_stats is not None and r.unit_stats.strata is not None
                         for r in runs) else ""))
    notes.append("bold: the best value of each column")
    if matrix is not None and not letters:
        notes.append("no Group column: no pair of systems could be tested (see the list of "
                     "pairs)")
    if letters:
        notes.append("Group: systems sharing a letter do not differ significantly "
                     "(paired randomization test, Holm-corrected over all pairs, p < 0.05)")
    return Table(slug, title, cols, rows, notes)


def _why_no_stats(r: Run) -> str:
    us = r.unit_stats
    if us is None:
        return r.note or "no per-unit statistics stored with the score"
    if len(us.units) < MIN_UNITS:
        return f"only {len(us.units)} units (fewer than {MIN_UNITS}: a bootstrap interval " \
               f"would mean nothing)"
    return ("a stratum (a language; for MATERIAL, the queries with or without relevant "
            "documents) has one unit only, which never varies")


def _is_count(k: str) -> bool:
    return k in ("tp", "fp", "fn") or k.endswith(("_tp", "_fp", "_fn")) \
        or k.startswith(("n_", "num_"))


def _lower(k: str, lower_is_better: bool, primary: str) -> bool:
    """Error rates are better low; the task's direction holds for its primary only."""
    return bool(re.search(r"(^|_)(p_miss|p_fa|miss|false_alarm|error|loss|cost)($|_)", k))


def decided(matrix: Matrix | None) -> bool:
    """Whether any pair could be tested: with none, groups and a p matrix say nothing."""
    return matrix is not None and any(t.verdict in (DIFFER, SAME) for t in matrix.tests.values())


def group_letters(matrix: Matrix) -> dict[str, str]:
    out: dict[str, str] = {}
    for i, g in enumerate(matrix.groups):
        letter = _letter(i)
        for s in g:
            out[s] = out.get(s, "") + letter
    return out


def _letter(i: int) -> str:
    return "abcdefghijklmnopqrstuvwxyz"[i % 26] + ("" if i < 26 else str(i // 26))


def significance_tables(slug: str, title: str, matrix: Matrix, samples: int) -> list[Table]:
    names = matrix.systems
    cols = [Column("system", "", TEXT)] + [Column(f"c{j}", _short(s), PVALUE)
                                           for j, s in enumerate(names)]
    rows = []
    for a in names:
        row = {"system": a}
        for j, b in enumerate(names):
            t = matrix.tests.get((a, b))
            row[f"c{j}"] = None if a == b or t is None or t.verdict == "cannot decide" \
                else t.p_holm
        rows.append(row)
    undecided = [t for (a, b), t in matrix.tests.items() if a < b and t.verdict == UNDECIDED]
    n_pairs = len(names) * (len(names) - 1) // 2
    notes = [f"Holm-adjusted p of the paired randomization test ({samples:,} samples) over "
             f"the {n_pairs - len(undecided)} decidable pairs; -- on the diagonal"
             + (" and where a pair cannot be decided" if undecided else "")]
    notes += matrix.notes
    mat = Table(f"{slug}-significance", f"{title}: significance of the differences", cols, rows,
                notes)
    mat.paper = len(names) <= MATRIX_PAPER
    if not mat.paper:
        mat.notes.append(f"{len(names)} systems: the matrix is written as CSV only (the "
                         f"groups and the list of pairs say the same)")
    pcols = [Column("a", "A", TEXT), Column("b", "B", TEXT), Column("units", "Units", COUNT),
             Column("difference", "A - B", NUMBER), Column("ci", "95% CI", INTERVAL),
             Column("p_randomization", "p (randomization)", PVALUE),
             Column("p_bootstrap", "p (bootstrap)", PVALUE),
             Column("p_holm", "p (Holm)", PVALUE),
             Column("verdict", "Verdict", TEXT, width="0.25\\linewidth")]
    prow = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            t = matrix.tests[(a, b)]
            undecided_pair = t.verdict not in (DIFFER, SAME)
            prow.append({"a": a, "b": b, "units": t.units, "difference": t.difference,
                         # no interval or p where no test means anything (few units)
                         "ci": None if undecided_pair else (t.ci_low, t.ci_high),
                         **{k: None if undecided_pair else getattr(t, k)
                            for k in ("p_randomization", "p_bootstrap", "p_holm")},
                         "verdict": t.verdict})
    reasons = sorted({t.note for (a, b), t in matrix.tests.items()
                      if a < b and t.verdict not in (DIFFER, SAME) and t.note})
    pairs = Table(f"{slug}-pairs", f"{title}: every pair of systems", pcols, prow,
                  ["A - B: difference of the primary metric; CI: paired bootstrap percentile "
                   "interval; differ when p (Holm) < 0.05"]
                  + [f"cannot decide: {r}" for r in reasons])
    pairs.paper = len(prow) <= PAPER_PAIRS
    if not pairs.paper:
        pairs.notes.append(f"{len(prow):,} pairs: written as CSV only")
    gcols = [Column("group", "Group", TEXT),
             Column("systems", "Systems (best first)", TEXT, width="0.8\\linewidth")]
    grows = [{"group": _letter(i), "systems": ", ".join(g)} for i, g in enumerate(matrix.groups)]
    groups = Table(f"{slug}-groups", f"{title}: groups of systems that do not differ "
                   f"significantly", gcols, grows,
                   ["each group is a run of consecutive systems (by score) no two of which "
                    "differ significantly; a system may be in several groups"])
    return [mat, pairs, groups] if decided(matrix) else [pairs]


def _short(name: str, width: int = 14) -> str:
    return name if len(name) <= width else name[:width - 1] + "…"


def breakdown_tables(slug: str, title: str, runs: list[Run], primary: str,
                     lower_is_better: bool, properties: dict | None = None) -> list[Table]:
    """One long table per breakdown the results carry: rows (key, system), the key's own
    properties (counts that are the same for every run, the organizer's document
    properties) and each run's values of the task's metrics; best bold per key."""
    names: list[str] = []
    for r in runs:
        for b in (r.result.get("breakdowns") or {}):
            if b not in names and b not in SKIP_BREAKDOWNS:
                names.append(b)
    out = []
    for b in names:
        t = _breakdown(slug, title, b, runs, primary, lower_is_better, properties or {})
        if t is not None:
            out.append(t)
    for b in names:
        out += property_tables(slug, title, b, runs, primary, lower_is_better, properties or {})
    return out


def _micro(rows: list[dict], prefix: str) -> dict | None:
    """Precision, recall and F1 from summed counts (``{prefix}tp``, fp, fn), as a
    micro-averaged scorer (RCC) computes them over all its units."""
    keys = [f"{prefix}tp", f"{prefix}fp", f"{prefix}fn"]
    if not rows or not all(all(isinstance(r.get(k), (int, float)) for k in keys) for r in rows):
        return None
    tp, fp, fn = (sum(r[k] for r in rows) for k in keys)
    p = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * rec / (p + rec) if p + rec else 0.0
    return {f"{prefix}precision": p, f"{prefix}recall": rec, f"{prefix}f1": f,
            f"{prefix}tp": tp, f"{prefix}fp": fp, f"{prefix}fn": fn}


def property_tables(slug, title, name, runs, primary, lower_is_better, properties) -> list:
    """A breakdown's keys grouped by each text property the organizer gave (an RCC
    publication's topic): per (value, system), the metrics recomputed over the group's
    keys: micro precision, recall and F1 from summed tp/fp/fn where the rows carry
    counts (as RCC scores), else the mean over the keys (as SV-Ident averages documents)."""
    if not properties:
        return []
    cells = {r.label: breakdown(r, name) for r in runs}
    keys = sorted({k for c in cells.values() for k in c})
    own = {k: _key_properties(properties, k, runs, name) for k in keys}
    texts = sorted({p for v in own.values() for p, x in v.items()
                    if isinstance(x, str) and x})
    out = []
    for prop in texts:
        values = sorted({v[prop] for v in own.values() if isinstance(v.get(prop), str)})
        if not values:
            continue
        prefixes = [m[:-2] for m in scalar_names(runs, primary) if m.endswith("f1")]
        rows, metrics = [], []
        for value in values:
            members = [k for k in keys if own[k].get(prop) == value]
            for r in runs:
                got = [cells[r.label][k] for k in members if k in cells[r.label]]
                row = {"value": value, "units": len(got), "system": r.label}
                micro = {}
                for pre in prefixes:
                    micro.update(_micro(got, pre) or {})
                if micro:
                    row.update({f"v:{m}": x for m, x in micro.items()})
                else:
                    for m in scalar_names(runs, primary):
                        xs = [number(g.get(m)) for g in got]
                        xs = [x for x in xs if x is not None]
                        row[f"v:{m}"] = sum(xs) / len(xs) if xs else None
                metrics += [k[2:] for k in row if k.startswith("v:") and k[2:] not in metrics]
                rows.append(row)
        ungrouped = [k for k in keys if not isinstance(own[k].get(prop), str)]
        best = "min" if lower_is_better else "max"
        cols = [Column("value", prop.replace("_", " "), TEXT), Column("units", "Units", COUNT),
                Column("system", "System", TEXT)]
        cols += [Column(f"v:{m}", _label_metric(m), COUNT) if _is_count(m) else
                 Column(f"v:{m}", _label_metric(m), NUMBER,
                        best if m == primary else ("min" if _lower(m, lower_is_better, primary)
                                                   else "max")) for m in metrics]
        notes = ["micro-averaged over the group's units from their tp, fp and fn"
                 if any(k.startswith("v:") and k.endswith("tp") for k in rows[0]) else
                 "the mean over the group's units", "bold: the best value per group"]
        if ungrouped:
            notes.append(f"{len(ungrouped)} of {len(keys)} units have no {prop} and are in no "
                         f"group")
        out.append(Table(f"{slug}-{name.replace('_', '-')}-by-{_slug(prop)}",
                         f"{title}: results per {prop.replace('_', ' ')} "
                         f"({_key_label(name)} grouped)", cols, rows, notes, group_by="value"))
    return out


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-") or "property"


def _breakdown(slug, title, name, runs, primary, lower_is_better, properties):
    keys: list[str] = []
    for r in runs:
        for k, v in breakdown(r, name).items():
            if isinstance(v, dict) and k not in keys:
                keys.append(k)
    if not keys:
        return None
    metrics = set()
    for r in runs:
        metrics.update((r.result.get("metrics") or {}).keys())
    fields: list[str] = []
    for r in runs:
        for k in keys:
            for f in breakdown(r, name).get(k) or {}:
                if f not in fields:
                    fields.append(f)
    props, values, undefined = [], [], []
    for f in fields:
        by_key = {k: [_freeze(cell[f]) for r in runs
                      if f in (cell := breakdown(r, name)
                               .get(k) or {})] for k in keys}
        seen = [x for vs in by_key.values() for x in vs]
        if any(isinstance(x, bool) for x in seen):
            continue                               # flags (above_mean_fp) are no results
        if all(x is None for x in seen):
            undefined.append(f)
            continue
        if f not in metrics and _is_property(by_key, len(runs)):
            props.append(f)
        elif seen and all(x is None or isinstance(x, (int, float)) for x in seen):
            values.append(f)
    props = [p for p in props if not all(
        str((breakdown(r, name).get(k) or {}).get(p, k)) == k
        for r in runs for k in keys)]           # a doc_id that repeats the key says nothing
    if "sentences" in props and "positives" in props:
        props.insert(props.index("positives") + 1, "negatives")
    extra = sorted({p for k in keys for p in _key_properties(properties, k, runs, name)})
    best = "min" if lower_is_better else "max"
    cols = [Column("key", _key_label(name), TEXT)]
    def field_values(f):
        return [cell[f] for r in runs for k in keys
                if f in (cell := breakdown(r, name)
                         .get(k) or {})]

    def integral(f):
        vs = field_values(f)
        return bool(vs) and all(isinstance(x, int) and not isinstance(x, bool)
                                or isinstance(x, float) and x.is_integer() for x in vs)

    counts = {v for v in values if _is_count(v) or (v not in metrics and integral(v))}
    cols += [Column(f"p:{p}", _label_metric(p), COUNT if p == "negatives" or integral(p)
                    else TEXT) for p in props]
    cols += [Column(f"o:{p}", _label_metric(p), TEXT) for p in extra]
    cols.append(Column("system", "System", TEXT))
    cols += [Column(f"v:{v}", _label_metric(v), COUNT) if v in counts else
             Column(f"v:{v}", _label_metric(v), NUMBER,
                    best if v == primary else
                    ("min" if _lower(v, lower_is_better, primary) else "max"))
             for v in values]
    rows, notes = [], []
    missing = []
    for k in keys:
        first = next((breakdown(r, name).get(k)
                      for r in runs if k in breakdown(r, name)),
                     {})
        own = _key_properties(properties, k, runs, name)
        for r in runs:
            cell = breakdown(r, name).get(k)
            row = {"key": k, "system": r.label}
            for p in props:
                row[f"p:{p}"] = (first.get("sentences", 0) - first.get("positives", 0)
                                 if p == "negatives" else first.get(p))
            for p in extra:
                row[f"o:{p}"] = own.get(p)
            if cell is None:
                missing.append(f"{r.label} ({k})")
            for v in values:
                row[f"v:{v}"] = number((cell or {}).get(v))
            rows.append(row)
    if missing:
        notes.append(f"no value for {_preview(missing)}: the run's result has no such key")
    nan = [f"{row['system']} ({row['key']})" for row in rows
           if any(row.get(f"v:{v}") is None for v in values)]
    if nan and not missing:
        notes.append(f"a metric undefined for {_preview(nan)} is shown as --")
    if properties and name in ("per_document", "per_publication"):
        matched = {k for k in keys if _key_properties(properties, k, runs, name)}
        ids = {str(c.get("doc_id", k)) for r in runs for k, c in
               (breakdown(r, name).items())
               if isinstance(c, dict)} | set(keys)
        unknown = sorted(d for d in properties if d not in ids)
        if not matched:
            notes.append("the document properties given match none of these keys")
        if unknown:
            notes.append(f"document properties given for ids that are not here: "
                         f"{_preview(unknown)}")
    if undefined:
        notes.append(f"undefined for every run, left out: {', '.join(map(_label_metric, undefined))}")
    if any(c.best for c in cols):
        notes.append("bold: the best value per key")
    t = Table(f"{slug}-{name.replace('_', '-')}",
              f"{title}: results {_key_label(name, title=True)}", cols, rows, notes,
              group_by="key")
    t.paper = len(keys) <= PAPER_KEYS
    if not t.paper:
        t.notes.append(f"{len(keys)} keys: written as CSV only")
    return t


def _is_property(by_key: dict, n_runs: int) -> bool:
    """A field that is the same for every run at each key is the key's own (a count of
    sentences, a language); with one run, only text and whole numbers are."""
    if any(len(set(vs)) > 1 for vs in by_key.values()):
        return False
    if n_runs > 1:
        return True
    return all(not isinstance(x, float) or x.is_integer() for vs in by_key.values() for x in vs)


def _key_properties(properties: dict, key: str, runs, name) -> dict:
    """The organizer's properties of a key: by the key itself, or by its doc_id."""
    if not properties:
        return {}
    if key in properties:
        return properties[key]
    for r in runs:
        cell = breakdown(r, name).get(key) or {}
        d = cell.get("doc_id")
        if d is not None and str(d) in properties:
            return properties[str(d)]
    return {}


def _freeze(v):
    return tuple(v) if isinstance(v, list) else v


def _key_label(name: str, title: bool = False) -> str:
    words = name.removeprefix("per_").replace("_", " ")
    return f"per {words}" if title else words[:1].upper() + words[1:]


def _preview(items: list[str], n: int = 5) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


def intervals_of(runs: list[Run], samples: int, seed: int = 0) -> dict[str, tuple]:
    return {r.label: interval(r.unit_stats, samples, CONFIDENCE, seed)
            for r in runs if r.unit_stats is not None and interval_defined(r.unit_stats)}


def correlation_table(slug: str, title: str, runs: list[Run], primary: str,
                      properties: dict, samples: int) -> Table | None:
    """Spearman's rho of each run's per-document primary metric with each numeric
    document property the organizer supplied (SV-Ident Table 8's discussion)."""
    from ..metrics.correlation import spearman_test
    if not properties:
        return None
    props = sorted({p for v in properties.values() for p, x in v.items() if _numeric(x)})
    cols = [Column("system", "System", TEXT), Column("property", "Property", TEXT),
            Column("n", "Documents", COUNT), Column("rho", "Spearman rho", NUMBER),
            Column("p", "p (permutation)", PVALUE)]
    rows, notes = [], []
    for r in runs:
        per_doc = breakdown(r, "per_document")
        for p in props:
            xs, ys = [], []
            for key, cell in per_doc.items():
                doc = str(cell.get("doc_id", key)) if isinstance(cell, dict) else key
                own = properties.get(key) or properties.get(doc) or {}
                x, y = own.get(p), number((cell or {}).get(primary))
                if _numeric(x) and y is not None:
                    xs.append(float(x))
                    ys.append(y)
            rho, pv = spearman_test(xs, ys, samples=samples) if len(xs) >= 3 else (None, None)
            rows.append({"system": r.label, "property": p, "n": len(xs), "rho": rho, "p": pv})
    if not rows:
        return None
    short = [f"{row['system']} / {row['property']}" for row in rows if number(row["rho"]) is None]
    if short:
        notes.append(f"cannot decide for {_preview(short)}: fewer than 3 documents with "
                     f"both values, or one of them constant")
    notes.append(f"Spearman's rank correlation of the per-document {_label_metric(primary)} "
                 f"with the property; two-sided p from a permutation test ({samples:,} "
                 f"samples; exact for 8 documents or fewer)")
    t = Table(f"{slug}-correlation", f"{title}: correlation with document properties",
              cols, rows, notes)
    t.paper = len(rows) <= PAPER_KEYS
    if not t.paper:
        t.notes.append(f"{len(rows)} rows: written as CSV only")
    return t


def _numeric(x) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, float)):
        return math.isfinite(x)
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def pr_pair(names: list[str], primary: str) -> tuple[str, str] | None:
    """The precision and recall metrics that go with the primary F-measure."""
    for p in (primary.replace("f1", "precision").replace("f0_5", "precision"),
              *[n for n in names if "precision" in n]):
        rec = p.replace("precision", "recall")
        if p in names and rec in names and p != rec:
            return p, rec
    return None


def figures(slug: str, title: str, runs: list[Run], primary: str, samples: int,
            seed: int = 0, lower_is_better: bool = False) -> tuple[list[Figure], list[str]]:
    out, notes = [], []
    names = scalar_names(runs, primary)
    if len(runs) > FIGURE_SERIES:
        key = lambda r: number((r.result.get("metrics") or {}).get(primary))  # noqa: E731
        best = sorted([r for r in runs if key(r) is not None], key=key,
                      reverse=not lower_is_better)[:FIGURE_SERIES]
        notes.append(f"the figures show the {len(best)} best of the {len(runs)} runs by "
                     f"{_label_metric(primary)}")
        runs = [r for r in runs if r in best]
    pair = pr_pair(names, primary)
    if pair:
        pts = [(r.label, number(r.result["metrics"].get(pair[0])),
                number(r.result["metrics"].get(pair[1]))) for r in runs]
        shown = [p for p in pts if p[1] is not None and p[2] is not None]
        if shown:
            out.append(Figure(f"{slug}-pr", "pr", f"{title}: precision and recall",
                              {"points": shown, "x": _label_metric(pair[1]),
                               "y": _label_metric(pair[0]),
                               # a macro F1 is no harmonic mean of macro P and R
                               "iso_f1": "macro" not in pair[0]}))
        if len(shown) < len(pts):
            notes.append("left out of the precision-recall plot (undefined): "
                         + ", ".join(p[0] for p in pts if p not in shown))
    langs: list[str] = []
    for r in runs:
        for k in breakdown(r, "per_language"):
            if k not in langs:
                langs.append(k)
    if langs:
        series = {}
        for r in runs:
            per = breakdown(r, "per_language")
            series[r.label] = [(number((per.get(k) or {}).get(primary)),
                                *_stratum_interval(r.unit_stats, k, samples, seed)) for k in langs]
        bare = [k for k in langs if any(v[0] is not None and v[1] is None
                                        for v in (series[r.label][langs.index(k)]
                                                  for r in runs))]
        if bare:
            notes.append(f"per-language bars without an interval in {', '.join(bare)}: fewer "
                         f"than {MIN_UNITS} units there, or no per-unit statistics")
        out.append(Figure(f"{slug}-languages", "bars", f"{title}: {_label_metric(primary)} "
                          f"per language", {"groups": langs, "series": series,
                                            "ylabel": _label_metric(primary)}))
    curves = [(r.label, r.result["curve"]) for r in runs if isinstance(r.result.get("curve"),
                                                                         dict)]
    if curves:
        out.append(Figure(f"{slug}-det", "det", f"{title}: DET curves", {"curves": curves}))
    return out, notes


def _stratum_interval(us: UnitStats | None, stratum: str, samples: int, seed: int):
    if us is None or us.strata is None:
        return (None, None)
    idx = [i for i, s in enumerate(us.strata) if str(s) == stratum]
    sub = UnitStats(us.metric, [us.units[i] for i in idx], us.stats[idx], us.aggregate,
                    us.weights[idx], None)
    if not interval_defined(sub):
        return (None, None)
    return interval(sub, samples, CONFIDENCE, seed)


def dataset_section(slug: str, title: str, runs: list[Run], primary: str,
                    lower_is_better: bool, properties: dict | None = None,
                    samples: int = 10_000, seed: int = 0, notes=()) -> Section:
    """Every table and figure of one dataset."""
    sec = Section(slug, title, notes=list(notes))
    if not runs:
        sec.notes.append("no scored run to report")
        return sec
    if not primary:
        sec.notes.append("the task has no primary metric: no ranking, intervals or "
                         "significance")
    stats = [(r.label, r.unit_stats) for r in runs if r.unit_stats is not None]
    matrix = None
    if primary and len(stats) >= 2:
        matrix = all_pairs(stats, samples=samples, seed=seed, lower_is_better=lower_is_better)
    elif primary and len(runs) >= 2:
        sec.notes.append("no significance tests: fewer than two runs have per-unit "
                         "statistics of the primary metric (the results table says why)")
    intervals = intervals_of(runs, samples, seed) if primary else {}
    if primary:
        sec.tables.append(results_table(f"{slug}-results", title, runs, primary,
                                        lower_is_better, matrix, intervals, notes))
    if matrix is not None:
        sec.tables += significance_tables(slug, title, matrix, samples)
        sec.matrix = matrix
    sec.tables += breakdown_tables(slug, title, runs, primary, lower_is_better, properties)
    corr = correlation_table(slug, title, runs, primary, properties or {}, samples) \
        if primary else None
    if corr is not None:
        sec.tables.append(corr)
    figs, fig_notes = figures(slug, title, runs, primary, samples, seed, lower_is_better) \
        if primary else ([], [])
    sec.figures += figs
    sec.notes += fig_notes
    return sec
