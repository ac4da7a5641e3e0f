"""What every task provides: loading, validation, scoring and per-unit statistics."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..formats.errors import InvalidInput, Problem, Problems
from .options import Option, OptionError, check_options


@dataclass
class Result:
    """A scorer's output; ``to_dict`` is the documented JSON shape."""
    task: str
    scorer_version: str
    conventions: dict[str, Any]
    metrics: dict[str, float]
    breakdowns: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # the numbers a figure is drawn from (shareval.plots), when the task has one: not
    # part of the JSON, since a curve may hold a point per distinct score
    figure: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        return {
            "task": self.task,
            "scorer_version": self.scorer_version,
            "conventions": self.conventions,
            "metrics": {k: _clean(v) for k, v in self.metrics.items()},
            "breakdowns": {name: {str(key): {m: _clean(v) for m, v in row.items()}
                                  for key, row in table.items()}
                           for name, table in self.breakdowns.items()},
            "counts": {k: _clean(v) for k, v in self.counts.items()},
            "warnings": list(self.warnings),
        }


def _clean(v):
    """numpy scalars -> Python; JSON has no NaN, so NaN becomes None."""
    if type(v) is float:                     # the common case, first: 10^6 values per result
        return None if v != v else v
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


@dataclass
class UnitStats:
    """Per-unit sufficient statistics of a primary metric, for paired tests.

    ``stats`` has one row per unit (query, document, publication); the metric
    of any (re)sample is ``aggregate(stats[rows], weights[rows])``.
    ``strata`` labels units that must be resampled within their group
    (e.g. the language in SV-Ident's average over languages, then documents).
    """
    metric: str
    units: list[str]
    stats: np.ndarray
    aggregate: Callable[[np.ndarray, np.ndarray], np.ndarray]
    weights: np.ndarray
    strata: np.ndarray | None = None

    def to_dict(self) -> dict:
        """A JSON form (the server stores it with the score, so that a comparison with
        a later run reads no file again); the aggregate by its name in AGGREGATES."""
        name = next(k for k, f in AGGREGATES.items() if f is self.aggregate)
        return {"metric": self.metric, "units": list(self.units),
                "stats": np.asarray(self.stats).tolist(),
                "shape": list(np.shape(self.stats)), "aggregate": name,
                "weights": np.asarray(self.weights).tolist(),
                "strata": None if self.strata is None else np.asarray(self.strata).tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> "UnitStats":
        stats = np.asarray(d["stats"], dtype=float).reshape(d["shape"])
        return cls(d["metric"], list(d["units"]), stats,
                   AGGREGATES[d["aggregate"]], np.asarray(d["weights"], dtype=float),
                   None if d["strata"] is None else np.asarray(d["strata"]))


class Task:
    """Base class: subclasses set the attributes and implement the loaders."""
    name: str = ""
    description: str = ""
    version: str = "1"
    primary_metric: str = ""
    reference_required: bool = True
    options: tuple[Option, ...] = ()
    conventions: dict[str, Any] = {}
    figure: str = ""             # what shareval.plots draws from a result, if anything

    # -- to implement -------------------------------------------------------
    def load_reference(self, path):
        raise NotImplementedError

    def load_submission(self, path, reference=None):
        raise NotImplementedError

    def _score(self, reference, submission, **options) -> Result:
        raise NotImplementedError

    def unit_stats(self, reference, submission, **options) -> UnitStats:
        raise NotImplementedError(f"{self.name} does not support paired comparison")

    # -- shared behaviour ---------------------------------------------------
    @property
    def scorer_version(self) -> str:
        from .. import __version__
        return f"{self.name}/{self.version} (shareval {__version__})"

    def reference(self, ref):
        if ref is None:
            if self.reference_required:
                raise InvalidInput([Problem("<arguments>", None, "reference",
                                            f"task {self.name} needs --reference")])
            return None
        return self.load_reference(ref) if isinstance(ref, (str, Path)) else ref

    def submission(self, sub, reference=None, name: str | None = None):
        """``sub`` loaded (a path) or as it is. ``name``: the file's name as its author
        gave it, when it is stored under another (the server's uploads); only tasks
        whose file names carry meaning read it (MATERIAL's archive names)."""
        return self.load_submission(sub, reference) if isinstance(sub, (str, Path)) else sub

    def validate(self, submission, reference=None, name: str | None = None) -> list[str]:
        """Load (and so check) a submission; returns warnings, raises InvalidInput.
        The command line and the server's uploads both validate here; the server
        passes the uploaded file's ``name`` (it stores the file under another)."""
        ref = self.reference(reference) if reference is not None else None
        sub = self.submission(submission, ref, name)
        return list(getattr(sub, "warnings", []))

    def option_problems(self, options: dict) -> list[tuple[str, str]]:
        """(option, why) for every value of ``options`` this task refuses, unknown names
        included: the one check of the command line, the bundle loader and ``score``.
        A task whose options constrain each other adds its rules here."""
        return check_options(self.name, self.options, options)

    def checked_options(self, options: dict) -> dict:
        """``options`` (numbers given as text converted) with the defaults of the others;
        InvalidInput naming each refused value (TypeError for a name that is no option:
        a caller's mistake)."""
        opts = {o.name: o.convert(options.get(o.name, o.default)) for o in self.options}
        unknown = set(options) - set(opts)
        if unknown:
            raise TypeError(f"{self.name}: unknown options {sorted(unknown)}")
        bad = [Problem("<arguments>", None, name, why)
               for name, why in self.option_problems(opts)]
        if bad:
            raise OptionError(bad)
        return opts

    def load(self, reference, submission):
        """The reference and the submission, read (paths) or as they are: read once,
        they can be scored and give their per-unit statistics (``unit_stats``)."""
        ref = self.reference(reference)
        return ref, self.submission(submission, ref)

    def score(self, reference, submission, **options) -> Result:
        # options first: before reading files that may take long to read
        opts = self.checked_options(options)
        ref, sub = self.load(reference, submission)
        result = self._score(ref, sub, **opts)
        result.warnings = list(getattr(sub, "warnings", [])) + result.warnings
        return result

    def new_result(self, metrics, **kw) -> Result:
        return Result(self.name, self.scorer_version, dict(self.conventions), metrics, **kw)


def preview(items, n: int = 5) -> str:
    """The first n items for a warning, and how many more there are."""
    items = [str(x) for x in items]
    more = f" (+{len(items) - n} more)" if len(items) > n else ""
    return ", ".join(items[:n]) + more


def load_checked(reader, path, *args, check=None):
    """``reader(path, problems, *args)``, then ``check(obj, problems)``; raise all problems.

    The check (ids and coverage against the reference) is skipped after a fatal
    problem: a file read only in part would show every unread id as missing.
    """
    problems = Problems()
    obj = reader(path, problems, *args)
    if obj is not None and check is not None and not problems.has_fatal:
        check(obj, problems)
    problems.raise_if_any()
    return obj


def weighted_mean(stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Aggregate for metrics that are (weighted) means of a per-unit value.

    ``stats``: (..., n_units, 1); ``weights``: (..., n_units). Weights are
    renormalised so that any resample keeps the same strata weighting.
    """
    w = weights / weights.sum(axis=-1, keepdims=True)
    return np.sum(stats[..., 0] * w, axis=-1)


def micro_f1(stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Aggregate for micro F1 from per-unit (tp, fp, fn) counts."""
    tp, fp, fn = (stats[..., i].sum(axis=-1) for i in range(3))
    den = 2 * tp + fp + fn
    return np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), 0.0)


def aqwv(stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Aggregate for MATERIAL's primary AQWV (plan Eq. 3) from per-query
    (P_miss * r, r, beta * P_FA), r = 1 for a query with relevant documents, else 0:

        1 - mean of P_miss over the queries with r = 1 - mean of beta * P_FA over all,

    both means weighted (renormalised as in ``weighted_mean``). NaN for a sample
    without a query with relevant documents: the metric is undefined there.
    """
    w = weights / weights.sum(axis=-1, keepdims=True)
    miss, rel, fa = (np.sum(stats[..., i] * w, axis=-1) for i in range(3))
    with np.errstate(divide="ignore", invalid="ignore"):
        p_miss = np.where(rel > 0, miss / np.where(rel > 0, rel, 1.0), np.nan)
    return 1.0 - p_miss - fa


def hierarchical_weights(groups: list[str]) -> np.ndarray:
    """Weights giving each group equal total weight, units equal within a group."""
    groups_arr = np.asarray(groups, dtype=object)
    uniq = sorted(set(groups))
    w = np.zeros(len(groups), dtype=float)
    for g in uniq:
        mask = groups_arr == g
        w[mask] = 1.0 / (len(uniq) * mask.sum())
    return w


# the aggregates of UnitStats, by the name its JSON form gives
AGGREGATES = {"weighted_mean": weighted_mean, "micro_f1": micro_f1, "aqwv": aqwv}
