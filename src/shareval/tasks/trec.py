"""Generic ranking evaluation: TREC qrels + TREC run, averaged as ``trec_eval -c``.

Every judged query counts in the averages: one missing from the run scores 0,
and so does one judged with no relevant document (trec_eval 9.x/10.0 and
pytrec_eval evaluate it, ``num_q`` counts it). ``exclude_empty`` leaves the
latter out, as shareval did before 0.2 and as SV-Ident's Task 2 does.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..formats import trec as trec_format
from ..formats.errors import InvalidInput, Problem
from ..formats.trec import encode, read_qrels, read_run
from ..metrics.ranking import (DEFAULT_MEASURES, SCORE_PRECISIONS, evaluate_encoded,
                               parse_measure)
from . import register
from .base import Option, Task, UnitStats, load_checked, preview, weighted_mean

RANKING_CONVENTIONS = {
    "ranking": "score descending; ties broken by document id descending (trec_eval); "
               "the rank column is ignored",
    "score_precision": "float: scores compared in single precision (trec_eval 9.x, "
                       "pytrec_eval); double: as trec_eval 10.0",
    "relevant": "judgment >= rel_level (default 1)",
    "ap_denominator": "number of relevant documents of the query (trec_eval map/map_cut, ranx), "
                      "not min(k, R)",
    "p_at_k": "divides by k even when fewer than k documents were retrieved",
    "ndcg_gain": "judgment as linear gain (Jarvelin & Kekalainen, trec_eval ndcg_cut); "
                 "negative judgments count 0; discount log2(rank+1)",
    "zero_division": "0",
}


def parse_measures(text: str | list | tuple) -> list[str]:
    items = text if isinstance(text, (list, tuple)) else str(text).split(",")
    items = [m.strip().lower() for m in items if m.strip()]
    problems = []
    for m in items:
        try:
            parse_measure(m)
        except ValueError as e:
            problems.append(Problem("<arguments>", None, "measures", str(e)))
    if problems:
        raise InvalidInput(problems)
    if not items:
        raise InvalidInput([Problem("<arguments>", None, "measures", "no measure given")])
    return list(dict.fromkeys(items))


def _size(path) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def _large(path) -> bool:
    return _size(path) >= trec_format.SMALL_FILE_BYTES


def _scored_only(run, qrels):
    """``run`` (just read, so ours) without the ids no score against ``qrels`` reads
    (``trec_rows.drop_unscored_ids``): for runs whose long ids are kept per row, most
    of their memory."""
    if qrels is not None and getattr(run, "docs_per_row", False):
        from ..formats import trec_rows
        from ..formats.trec_arrow import as_arrow
        trec_rows.drop_unscored_ids(run, as_arrow(qrels.d_dict))
    return run


@register
class TrecTask(Task):
    name = "trec"
    description = "Generic ranked retrieval: TREC qrels and TREC run (trec_eval conventions)."
    primary_metric = "map"
    options = (
        Option("measures", str, ",".join(DEFAULT_MEASURES),
               "comma-separated measures: map, map@k, p@k, recall@k, r_precision, "
               "ndcg, ndcg@k, mrr", multiple=True),
        Option("exclude_empty", None, False,
               "leave queries judged with no relevant document out of the averages "
               "(default: they count 0, as trec_eval -c)", flag=True),
        Option("include_empty", None, False,
               "kept for compatibility: counting such queries as 0 is now the default",
               flag=True),
        Option("score_precision", str, "float",
               "float ranks scores as trec_eval 9.x and pytrec_eval do (single precision); "
               "double as trec_eval 10.0", choices=SCORE_PRECISIONS,
               refusal="must be float or double, not {value}"),
        Option("rel_level", int, 1, "smallest judgment that counts as relevant"),
    )
    conventions = {
        **RANKING_CONVENTIONS,
        "queries_missing_from_run": "score 0 and are included in the averages (trec_eval -c)",
        "queries_without_relevant": "score 0 and are included in the averages (trec_eval -c, "
                                    "pytrec_eval); exclude_empty leaves them out",
        "run_queries_not_in_qrels": "ignored, with a warning",
        "comment_lines": "lines starting with '#' are skipped in qrels and runs (trec_eval 10.0)",
        "extra_run_columns": "columns after run_tag are ignored, with a warning (trec_eval)",
    }

    def load(self, reference, submission):
        """As ``Task.load``; a large run is read while the qrels is read in a second
        thread (the pyarrow reader releases the GIL). From
        ``trec_format.DROP_WHILE_READING_BYTES`` the run's reader drops the ids no score
        reads as it goes, once the qrels is read. The qrels' problems come first."""
        if not (isinstance(reference, (str, Path)) and isinstance(submission, (str, Path))
                and _large(submission)):
            return super().load(reference, submission)
        from concurrent.futures import ThreadPoolExecutor      # not needed for small runs
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(self.reference, reference)
            try:
                sub = self._load_run(submission, pending)
            except BaseException:
                pending.result()           # the qrels' problems, if any, come first
                raise
            ref = pending.result()
        return ref, _scored_only(sub, ref)

    def load_reference(self, path):
        return load_checked(read_qrels, path)

    def load_submission(self, path, reference=None):
        return _scored_only(self._load_run(path, reference), reference)

    def _load_run(self, path, qrels=None):
        """The run, read against ``qrels`` (a table, a Future of one, or None)."""
        t = load_checked(read_run, path, qrels)
        t.warnings = list(t.notes)
        if len(t.tags) > 1:
            t.warnings.append(f"{path}: run has {len(t.tags)} different run tags: "
                              f"{', '.join(t.tags[:5])}")
        return t

    def _evaluate(self, ref, sub, measures, exclude_empty, score_precision, rel_level):
        measures = parse_measures(measures)
        enc, qids = encode(ref, sub)
        values = evaluate_encoded(enc, measures, rel_level, score_precision)
        nq = enc.n_queries
        in_qrels = np.bincount(enc.qrels_q, minlength=nq) > 0
        in_run = np.bincount(enc.run_q, minlength=nq) > 0
        has_rel = values["num_rel"] > 0
        evaluated = in_qrels & (has_rel | (not exclude_empty))
        return measures, qids, values, in_qrels, in_run, has_rel, evaluated

    def option_problems(self, options):
        out = super().option_problems(options)
        if options.get("exclude_empty") and options.get("include_empty"):
            out.insert(0, ("exclude_empty", "contradicts include_empty; give one of them"))
        if "measures" in options and not any(name == "measures" for name, _ in out):
            try:
                parse_measures(options["measures"])
            except InvalidInput as e:
                out += [("measures", p.message) for p in e.problems]
        return out

    def _score(self, ref, sub, measures, exclude_empty, include_empty, score_precision,
               rel_level):
        measures, qids, values, in_qrels, in_run, has_rel, evaluated = self._evaluate(
            ref, sub, measures, exclude_empty, score_precision, rel_level)
        n_eval = int(evaluated.sum())
        metrics = {m: float(values[m][evaluated].mean()) if n_eval else 0.0 for m in measures}
        warnings = []
        empty = in_qrels & ~has_rel
        missing = in_qrels & ~in_run & evaluated
        extra = in_run & ~in_qrels
        qarr = np.asarray(qids, dtype=object)
        if not (in_qrels & has_rel).any():
            warnings.append("no query has a relevant document: every measure is 0")
        if empty.any():
            how = "excluded from the averages" if exclude_empty else "included with 0"
            warnings.append(f"{int(empty.sum())} queries have no relevant document ({how}): "
                            f"{preview(qarr[empty])}")
        if missing.any():
            warnings.append(f"{int(missing.sum())} judged queries are missing from the run "
                            f"(scored 0): {preview(qarr[missing])}")
        if extra.any():
            warnings.append(f"{int(extra.sum())} run queries have no judgments (ignored): "
                            f"{preview(qarr[extra])}")
        idx = np.flatnonzero(evaluated)
        cols = {m: values[m][idx].tolist() for m in measures}
        cols.update({m: values[m][idx].astype(np.int64).tolist() for m in ("num_rel", "num_ret")})
        per_query = {qids[i]: {m: cols[m][j] for m in cols} for j, i in enumerate(idx.tolist())}
        counts = {
            "queries_evaluated": n_eval,
            "queries_in_qrels": int(in_qrels.sum()),
            "queries_in_run": int(in_run.sum()),
            "queries_without_relevant": int(empty.sum()),
            "queries_missing_from_run": int(missing.sum()),
            "run_queries_not_in_qrels": int(extra.sum()),
            "qrels_lines": len(ref),
            "run_lines": len(sub),
        }
        result = self.new_result(metrics, breakdowns={"per_query": per_query},
                                 counts=counts, warnings=warnings)
        result.conventions["rel_level"] = rel_level
        result.conventions["exclude_empty"] = bool(exclude_empty)
        result.conventions["score_precision"] = score_precision
        return result

    def unit_stats(self, reference, submission, measures=None, exclude_empty=False,
                   include_empty=False, score_precision="float", rel_level=1, metric=None):
        self.checked_options(dict(exclude_empty=exclude_empty, include_empty=include_empty,
                                  score_precision=score_precision, rel_level=rel_level))
        ref = self.reference(reference)
        sub = self.submission(submission, ref)
        metric = metric or self.primary_metric
        _, qids, values, _, _, _, evaluated = self._evaluate(
            ref, sub, [metric], exclude_empty, score_precision, rel_level)
        idx = np.flatnonzero(evaluated)
        return UnitStats(metric, [qids[i] for i in idx], values[metric][idx][:, None],
                         weighted_mean, np.ones(idx.size))

