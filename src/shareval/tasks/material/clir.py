"""MATERIAL CLIR: AQWV (three variants), ADWV, MQWV, oracle QWV, AUC and the DET
curve of a CLIR submission (evaluation plan sections 3 and 8.3.1)."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ...formats.errors import InvalidInput, Problem
from ...formats.material import Pack
from ...metrics import detection as det
from .. import register
from ..base import Option, UnitStats, aqwv
from .base import _MaterialTask, restrict


# free-text query columns (the judges' per-query instructions): shown, never grouped by
TEXT_ATTRIBUTES = ("instructions", "description")


@register
class MaterialClir(_MaterialTask):
    name = "material-clir"
    kind = "clir"
    id_name = "query"
    description = "MATERIAL CLIR: AQWV (three variants), MQWV, oracle QWV, AUC, DET curve."
    primary_metric = "aqwv"
    options = (Option("beta", float, None, "override beta (default: plan Table 1 for the "
                                           "pack's language: 20 for 1A/1B, 40 for 1S)"),)
    figure = "the DET curve"
    conventions = {
        **_MaterialTask.conventions,
        "aqwv": "primary variant, plan Eq. 3: P_miss averaged over queries with relevant "
                "documents, P_FA over all queries, at the system's Y decisions",
        "aqwv_all": "Eq. 2 over all queries; a query without relevant documents has P_miss = 0 "
                    "(and QV = 1 when it retrieves nothing; plan 8.3.1)",
        "aqwv_with_relevant": "Eq. 2 over queries with relevant documents only",
        "adwv": "document-weighted AQWV (plan footnotes 5 and 25; secondary): Eq. 1 with "
                "P_miss = all misses / all relevant pairs and P_FA = all false alarms / all "
                "non-relevant pairs, pooled over queries, so each (query, document) pair "
                "counts once; NaN when no query has a relevant document",
        "mqwv": "best single global threshold on confidence (retrieve cf >= t), primary variant",
        "oracle_qwv": "best threshold per query, primary variant",
        "roc_auc": "pooled over all (query, document) pairs, ties count half",
        "det": "query-weighted P_miss and P_FA as in Eq. 3, one point per distinct confidence",
        "p_fa_denominator": "non-relevant documents of the query = collection size - N_relevant",
        "open_queries": "queries.tsv status open (plan 6.4): when any query is open, every "
                        "official metric is over the closed queries only; open_aqwv is the "
                        "AQWV of the open ones, per_status shows both, per_query every query",
        "per_genre": "per_genre and per_mode: the AQWV variants over the documents of one "
                     "genre or mode (text, speech) only; a document's mode is documents.tsv's "
                     "mode column, else its genre's (CS, NB, TB speech; NW, TX, BC text)",
    }
    # the metrics of each per_status row, and those reported apart for the open queries
    status_metrics = ("aqwv", "aqwv_all", "aqwv_with_relevant")
    open_metrics = ("aqwv",)

    def ids(self, pack: Pack) -> list[str]:
        return list(pack.queries)

    def _score(self, pack, sub, beta):
        beta = self.beta(pack, beta)
        rel = self.relevance(pack, sub.ids)
        return self.by_status(pack, sub.ids,
                              lambda rows: self._clir(pack, restrict(sub, rows), rel[rows], beta))

    def by_status(self, pack: Pack, ids: list[str], compute):
        """``compute(rows)`` (a result over those query rows) over the closed queries, the
        open ones reported apart (plan 6.4: open queries never count in the official
        AQWV). Without open queries, one result over every query."""
        is_open = np.array([pack.queries[i].status == "open" for i in ids], dtype=bool)
        if not is_open.any():
            result = compute(np.arange(len(ids)))
            result.counts.update(open_queries=0, closed_queries=len(ids))
            return result
        closed, opened = np.flatnonzero(~is_open), np.flatnonzero(is_open)
        part = compute(opened)
        if closed.size:
            result = compute(closed)
        else:                    # nothing official to report: the open part, apart
            result = compute(opened)
            result.metrics = {k: float("nan") for k in result.metrics}
            result.figure = {}
            result.warnings = ["every query is open: the official metrics (closed queries "
                               "only) are undefined; open_aqwv is reported"]
        result.metrics.update({f"open_{m}": part.metrics[m] for m in self.open_metrics})
        both = {**part.breakdowns["per_query"], **result.breakdowns["per_query"]}
        result.breakdowns["per_query"] = {i: both[i] for i in ids}
        rows = {"closed": result, "open": part} if closed.size else {"open": part}
        result.breakdowns["per_status"] = {
            key: {**{m: r.metrics[m] for m in self.status_metrics},
                  "queries": r.counts["queries"]} for key, r in rows.items()}
        result.counts.update(open_queries=int(opened.size), closed_queries=int(closed.size))
        return result

    def unit_stats(self, reference, submission, beta=None) -> UnitStats:
        """Per closed query (the official AQWV's units; open queries never count, plan
        6.4): (P_miss * r, r, beta * P_FA), r = 1 when the query has relevant documents,
        aggregated by ``tasks.base.aqwv`` into the primary AQWV (plan Eq. 3). Resampled
        within two strata, the queries with and without relevant documents (when both
        occur), so that every resample has as many queries with relevant documents as
        the set, and its AQWV is defined."""
        if type(self)._score is not MaterialClir._score:
            # a task scored otherwise (material-e2e: its AQWV is judged) has no such units
            return super().unit_stats(reference, submission)
        opts = self.checked_options({"beta": beta})
        pack, sub = self.load(reference, submission)
        beta = self.beta(pack, opts["beta"])
        closed = np.array([k for k, i in enumerate(sub.ids)
                           if pack.queries[i].status != "open"], dtype=int)
        queries = str(pack.root / "queries.tsv")
        if not closed.size:
            raise InvalidInput([Problem(queries, None, "status",
                                        "every query is open: the official AQWV (closed "
                                        "queries only) is undefined, so there are no units "
                                        "to compare")])
        sub = restrict(sub, closed)
        p_miss, p_fa, _, n_rel, _, _ = self._query_values(
            sub, self.relevance(pack, sub.ids), beta)
        has_rel = n_rel > 0
        if not has_rel.any():
            raise InvalidInput([Problem(queries, None, "queries",
                                        "no closed query has a relevant document: the "
                                        "primary AQWV is undefined (NaN), so there is "
                                        "nothing to compare")])
        stats = np.column_stack([p_miss * has_rel, has_rel.astype(float), beta * p_fa])
        strata = np.where(has_rel, "with relevant", "without relevant") \
            if not has_rel.all() else None
        return UnitStats("aqwv", list(sub.ids), stats, aqwv, np.ones(len(sub.ids)), strata)

    @staticmethod
    def _query_values(sub, rel: np.ndarray, beta: float):
        """Per query: P_miss, P_FA, QV (plan Eq. 1), N_relevant, hits, false alarms."""
        nq, nd = rel.shape
        n_rel = rel.sum(axis=1)
        hits = np.count_nonzero(rel & sub.decision, axis=1)
        fas = np.count_nonzero(~rel & sub.decision, axis=1)
        p_miss, p_fa, qv = det.query_values(n_rel, np.full(nq, nd), hits, fas, beta)
        return p_miss, p_fa, qv, n_rel, hits, fas

    def _clir(self, pack, sub, rel: np.ndarray, beta: float):
        nq, nd = rel.shape
        n_total = np.full(nq, nd)
        p_miss, p_fa, qv, n_rel, hits, fas = self._query_values(sub, rel, beta)
        has_rel = n_rel > 0
        v = det.variants_from_query_values(p_miss, p_fa, has_rel, beta)
        metrics = {"aqwv": v["primary"], "aqwv_all": v["all"],
                   "aqwv_with_relevant": v["with_relevant"],
                   "adwv": det.document_weighted_value(n_rel, n_total, hits, fas, beta)}
        warnings = []
        if not has_rel.any():
            warnings.append("no query has a relevant document: the primary AQWV and MQWV are "
                            "undefined (NaN); aqwv_all is reported")
            variant = "all"
        else:
            variant = "primary"
        g = det.grid_statistics(rel, sub.ticks, n_total, beta, variant)
        s = g.sweep
        metrics["mqwv"], threshold = s.best()
        metrics["oracle_qwv"] = g.oracle_qwv
        metrics["roc_auc"] = g.roc_auc
        metrics["p_miss"] = float(p_miss[has_rel].mean()) if has_rel.any() else float("nan")
        metrics["p_fa"] = float(p_fa.mean())
        per_query = {}
        for k, i in enumerate(sub.ids):
            per_query[i] = {"qv": float(qv[k]), "p_miss": float(p_miss[k]), "p_fa": float(p_fa[k]),
                            "n_relevant": int(n_rel[k]), "n_retrieved": int(sub.decision[k].sum()),
                            "hits": int(hits[k]), "false_alarms": int(fas[k])}
        breakdowns = {"per_query": per_query}
        for name, groups in self.query_groups(pack, sub.ids).items():
            table = {}
            for key, idx in groups.items():
                vv = det.variants_from_query_values(p_miss[idx], p_fa[idx], has_rel[idx], beta)
                table[key] = {"aqwv": vv["primary"], "aqwv_all": vv["all"],
                              "aqwv_with_relevant": vv["with_relevant"], "queries": len(idx),
                              "queries_with_relevant": int(has_rel[idx].sum())}
            breakdowns[name] = table
        for name, groups in self.document_groups(pack, nd).items():
            table = {}
            for key, m in groups.items():
                # every document (one genre): no 19.5-million-pair copies
                r, y = (rel, sub.decision) if m.all() else (rel[:, m], sub.decision[:, m])
                n_rel_g = r.sum(axis=1)
                pm, pf, _ = det.query_values(n_rel_g, np.full(nq, int(m.sum())),
                                             np.count_nonzero(r & y, axis=1),
                                             np.count_nonzero(~r & y, axis=1), beta)
                vv = det.variants_from_query_values(pm, pf, n_rel_g > 0, beta)
                table[key] = {"aqwv": vv["primary"], "aqwv_all": vv["all"],
                              "aqwv_with_relevant": vv["with_relevant"],
                              "documents": int(m.sum()),
                              "queries_with_relevant": int((n_rel_g > 0).sum())}
            breakdowns[name] = table
        counts = {"queries": nq, "queries_with_relevant": int(has_rel.sum()),
                  "queries_without_relevant": int((~has_rel).sum()), "documents": nd,
                  "beta": beta, "mqwv_threshold": threshold}
        result = self.new_result(metrics, breakdowns=breakdowns, counts=counts, warnings=warnings)
        result.conventions["beta"] = beta
        result.figure = {"det": {"p_miss": s.p_miss[1:], "p_fa": s.p_fa[1:],
                                 "actual": (metrics["p_miss"], metrics["p_fa"])},
                         "title": f"{self.name}: DET (beta {beta:g}, {variant} weighting)"}
        return result

    @staticmethod
    def document_groups(pack: Pack, nd: int) -> dict[str, dict[str, np.ndarray]]:
        """Document subsets (bool masks) for breakdowns: genre and mode."""
        out = {}
        for name, labels in (("per_genre", pack.genres), ("per_mode", pack.modes)):
            if len(labels) != nd:
                continue
            groups = labels.masks()
            if groups:
                out[name] = groups
        return out

    @staticmethod
    def query_groups(pack: Pack, ids: list[str]) -> dict[str, dict[str, np.ndarray]]:
        """Query subsets for breakdowns: domain, number of words, each query attribute."""
        groups: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for k, i in enumerate(ids):
            query = pack.queries[i]
            groups["per_domain"][query.domain].append(k)
            words = len(query.query_string.replace('"', " ").split())
            groups["per_word_count"][str(words)].append(k)
            for attr, value in query.attributes.items():
                if value and attr not in TEXT_ATTRIBUTES:
                    groups[f"per_{attr}"][value].append(k)
        return {name: {key: np.asarray(v) for key, v in sorted(g.items())}
                for name, g in groups.items()}
