"""Score one submission with its task's scorer (called by the worker only)."""
from __future__ import annotations

import hashlib
import inspect
import math
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from shareval.formats.errors import InvalidInput
from shareval.plots import plot_unit_bars, plot_unit_histogram, save_figure, thin_curve

from shareval.platform.labels import label
from shareval.platform.submissions.models import Submission
from shareval.platform.submissions.splits import score_parts


@dataclass
class Outcome:
    result: dict
    primary: float | None
    comparison: dict | None = None
    plots: list[str] = field(default_factory=list)
    private_result: dict | None = None         # the private part of a split dataset
    private_primary: float | None = None
    unit_stats: dict | None = None             # Task.unit_stats of the primary metric


def _reference(sub: Submission):
    ref = sub.dataset.reference_file
    return str(ref) if ref is not None else None


# What boards need from a scorer beyond its command-line defaults (the bundle's
# options win): the board of a task without a primary metric compares the teams'
# value sets, so every value is listed (leaderboards/unranked.py).
BOARD_OPTIONS = {"rcc-fields-methods": {"top": None}}


def published_options(published: dict) -> dict:
    """The scoring options of ``published`` (the shape of ``Submission.score_options``);
    the files they name are stored relative to PRIVATE_DIR."""
    given = dict(published.get("options") or {})
    for name in PRIVATE_FILE_OPTIONS:
        if given.get(name):
            given[name] = str(Path(settings.PRIVATE_DIR) / given[name])
    return given


PRIVATE_FILE_OPTIONS = ("judgments",)


def score_submission(sub: Submission, published: dict | None = None) -> Outcome:
    """Scored with the options published for the run (``Submission.score_options``),
    or with ``published`` instead (a judging campaign publishing its judgments); its
    ``note`` says where the number comes from, in the result's conventions
    ("official"; the run page shows it under the scores: information, not a warning). Raises InvalidInput as the scorer does."""
    published = (sub.score_options or {}) if published is None else published
    outcome = _score(sub, published_options(published))
    note = published.get("note")
    if note:
        for result in (outcome.result, outcome.private_result):
            if result is not None:
                result.setdefault("conventions", {})["official"] = note
    return outcome


def _score(sub: Submission, extra: dict) -> Outcome:
    ct = sub.dataset.task
    task = ct.registry_task
    options = {**BOARD_OPTIONS.get(task.name, {}), **ct.options, **extra}
    plots = []
    metric = ct.metric
    if sub.dataset.split:
        return _score_split(sub, task, options, metric)
    task.checked_options(options)              # before the files are read
    ref, run = task.load(_reference(sub), str(sub.path))    # read once: scored, then units
    scored = task.score(ref, run, **options)
    stats = _unit_stats(task, ref, run, options, metric)
    if task.figure:                  # the task's own figure, drawn from its result
        name = hashlib.sha1(task.scorer_version.encode()).hexdigest()[:10] + ".png"
        save_figure(scored, Path(settings.RESULTS_DIR) / str(sub.pk) / name)
        plots.append(name)
    result = scored.to_dict()
    curve = det_points(getattr(scored, "figure", None))
    if curve is not None:         # the official tables draw every primary's DET on one plot
        result["curve"] = curve
    if not plots:
        plots += unit_bars(sub, result, metric)
    plots = [p for p in plots if (Path(settings.RESULTS_DIR) / str(sub.pk) / p).exists()]
    primary = result["metrics"].get(metric)
    if not isinstance(primary, (int, float)) or not math.isfinite(primary):
        primary = None                          # not rankable; the result keeps the value
    return Outcome(json_safe(result), primary,
                   json_safe(compare_with_best(sub, primary, stats)), plots, unit_stats=stats)


def det_points(figure, max_points: int = 400) -> dict | None:
    """A result's DET curve thinned evenly to ``max_points`` (as the plot thins it),
    kept with the score so that several runs' curves are drawn without rescoring."""
    det = figure.get("det") if isinstance(figure, dict) else None
    if not det:
        return None
    p_miss, p_fa = thin_curve(det["p_miss"], det["p_fa"], max_points)
    return {"p_miss": [round(float(v), 6) for v in p_miss],
            "p_fa": [round(float(v), 6) for v in p_fa],
            "actual": [float(v) for v in det.get("actual", (float("nan"),) * 2)]}


def unit_stats_options(task, options: dict, metric: str) -> dict:
    """The dataset's scoring options ``task.unit_stats`` takes, and the board's primary
    metric when it takes one: the statistics are then those of the number the board
    shows (a beta, a tie rule, MAP@5 rather than the task's default)."""
    params = inspect.signature(task.unit_stats).parameters
    kw = {k: v for k, v in options.items() if k in params and k != "metric"}
    if "metric" in params and metric:
        kw["metric"] = metric
    return kw


def _unit_stats(task, ref, run, options: dict | None = None, metric: str = "") -> dict | None:
    """The per-unit statistics of the files just scored, with the dataset's options and
    of its primary metric where the task can; else of the task's default metric (the
    report then gives no interval, saying why), or None for a task without them."""
    kw = unit_stats_options(task, options or {}, metric)
    if "metric" in kw:
        try:
            return json_safe(task.unit_stats(ref, run, **kw).to_dict())
        except (NotImplementedError, InvalidInput, ValueError, KeyError):
            kw.pop("metric")             # a metric the task has no units for
    try:
        return json_safe(task.unit_stats(ref, run, **kw).to_dict())
    except (NotImplementedError, InvalidInput):
        return None


def _rankable(value) -> float | None:
    return value if isinstance(value, (int, float)) and math.isfinite(value) else None


def _score_split(sub: Submission, task, options: dict, metric: str) -> Outcome:
    """Both parts of a split dataset. No significance test against earlier runs: it
    would read the private units, whose scores stay hidden until release."""
    public, private = score_parts(task, _reference(sub), str(sub.path), sub.dataset.split,
                                  options)
    plots = [p for p in unit_bars(sub, public, metric)
             if (Path(settings.RESULTS_DIR) / str(sub.pk) / p).exists()]
    return Outcome(json_safe(public), _rankable(public["metrics"].get(metric)), None, plots,
                   json_safe(private), _rankable(private["metrics"].get(metric)))


NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}
NON_FINITE_NAMES = (*NON_FINITE.values(), "NaN")          # what pages may find stored


def json_safe(value):
    """``value`` with every non-finite float as the string "Infinity", "-Infinity" or
    "NaN": JSON has no such numbers, and PostgreSQL's json column refuses them (a
    MATERIAL run with no detection has mqwv_threshold = Infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else NON_FINITE.get(value, "NaN")
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


BAR_BREAKDOWNS = ("per_document", "per_query", "per_publication", "per_language")
MAX_BARS = 30                # more units than this: a histogram instead of bars


def unit_bars(sub: Submission, result: dict, metric: str) -> list[str]:
    """For scorers that draw no plot themselves: the primary metric per unit as bars
    (SV-Ident: per document), from the first breakdown that carries it."""
    for name in BAR_BREAKDOWNS:
        units = (result.get("breakdowns") or {}).get(name)
        if not isinstance(units, dict):
            continue
        values = {str(u): r[metric] for u, r in units.items()
                  if isinstance(r, dict) and type(r.get(metric)) in (int, float)}
        if len(values) < 2:
            continue
        version = hashlib.sha1(sub.dataset.task.registry_task.scorer_version.encode())
        out = Path(settings.RESULTS_DIR) / str(sub.pk) / f"{name}-{version.hexdigest()[:10]}.png"
        title = f"{label(metric)} {label(name).lower()}"
        if len(values) > MAX_BARS:
            unit = label(name).split()[-1] + "s"           # "Per publication" -> publications
            plot_unit_histogram(values, out, title=f"{title}: {len(values)} {unit}",
                                xlabel=label(metric), unit=unit)
        else:
            plot_unit_bars(values, out, title=title, xlabel=label(metric))
        return [out.name]
    return []


def compare_with_best(sub: Submission, primary, stats: dict | None = None) -> dict | None:
    """Paired significance against the team's best earlier scored run on this dataset,
    from both runs' stored per-unit statistics (``stats``: this run's) when the earlier
    score has them for the same scorer and reference; else from both files."""
    if primary is None:
        return None
    ct = sub.dataset.task
    prev = (Submission.objects.filter(team=sub.team, dataset=sub.dataset, created__lt=sub.created,
                                      scores__current=True, scores__primary__isnull=False)
            .exclude(pk=sub.pk).order_by(("" if ct.lower_is_better else "-") + "scores__primary")
            .first())
    if prev is None:
        return None
    from shareval.stats import compare_result, compare_unit_stats
    from shareval.tasks import UnitStats
    stored = prev.scores.filter(
        current=True, scorer_version=ct.registry_task.scorer_version,
        reference_digest=sub.dataset.reference_digest).values_list("unit_stats", flat=True).first()
    try:
        if stats is not None and stored is not None \
                and stored.get("metric") == stats.get("metric"):
            r = compare_unit_stats(ct.task_name, UnitStats.from_dict(stats),
                                   UnitStats.from_dict(stored), str(sub.path), str(prev.path),
                                   samples=2000, seed=0)
        else:                    # scored before per-unit statistics were stored
            r = compare_result(ct.task_name, _reference(sub), str(sub.path), str(prev.path),
                               samples=2000, seed=0)
    except (NotImplementedError, InvalidInput) as e:
        return {"previous": str(prev.pk), "unavailable": str(e)[:500]}
    d = r.to_dict()
    return {"previous": str(prev.pk), "metric": d["conventions"].get("metric"),
            "metrics": d["metrics"], "conventions": d["conventions"],
            "units": d["counts"]["units"]}


def rename_paths(text: str, path, original: str, reference) -> str:
    """Participants see their file's own name, never server paths."""
    text = text.replace(str(path), original)
    if reference is not None:
        text = text.replace(str(reference), "<reference>")
    for d in (settings.UPLOAD_DIR, settings.PRIVATE_DIR, settings.RESULTS_DIR, settings.HOME):
        text = text.replace(str(d), "<server>")
    return text


def participant_message(sub: Submission, exc: Exception) -> str:
    if isinstance(exc, InvalidInput):
        return "the scorer rejected the file:\n" + rename_paths(
            exc.render(), sub.path, sub.original_name, sub.dataset.reference_file)
    return ("internal scoring error; the organizers can see the log "
            f"(submission {sub.pk})")


def storing_message(sub: Submission) -> str:
    return ("internal error while storing the score; the organizers can see the log "
            f"(submission {sub.pk})")
