"""MATERIAL: CLIR, DomainID and LangID as detection tasks (evaluation plan, NIST).

The reference is a pack folder (docs/material.md); a submission is a folder
or ``.tgz`` of ``<ID>.tsv`` files at its root.
"""
from __future__ import annotations

from collections import defaultdict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..formats.archive import Limits, iter_folder, iter_tgz, parse_archive_name
from ..formats.errors import InvalidInput, Problem, Problems
from ..formats.material import (Pack, read_judgment_lines, read_output_file, read_output_lines,
                                read_pack)
from ..formats.scan import scan_file
from ..metrics import detection as det
from . import register
from ..progress import progress
from ..formats.summary import parse_metadata_name
from .base import Option, Task, load_checked


@dataclass
class Submission:
    path: str
    ids: list[str]                    # query, domain or language ids, in pack order
    decision: np.ndarray              # ids x documents, bool
    ticks: np.ndarray                 # ids x documents, int32 confidence in units of 1e-5
    metadata: dict[str, list[str]] | None = None
    files: dict[str, bytes] | None = None
    warnings: list[str] = field(default_factory=list)


def pack_limits(pack: Pack) -> Limits:
    """Archive limits from pack.yaml ``limits`` (max_bytes, max_files, max_member_bytes)."""
    given = pack.settings.get("limits") or {}
    return Limits(**{k: int(v) for k, v in given.items() if k in Limits.__dataclass_fields__})


def iter_submission_files(path, problems: Problems, limits: Limits = Limits()):
    """(name, bytes) of each file of a submission folder or .tgz, one at a time."""
    p = Path(path)
    if p.is_dir():
        return iter_folder(p, problems, limits)
    if p.is_file():
        return iter_tgz(p, problems, limits)
    problems.fatal(p, None, "file", "does not exist")
    return iter(())


def _reference_ids(pack: Pack, sub: str) -> list[str]:
    folder = pack.root / sub
    return sorted(p.stem for p in folder.glob("*.tsv")) if folder.is_dir() else []


class _MaterialTask(Task):
    kind = ""                    # "clir", "domainid", "langid"
    beta_task = "clir"           # which column of the plan's Table 1 gives beta
    id_name = ""                 # "query", "domain", "language"
    columns = 3
    conventions = {
        "reference": "a pack folder: documents.tsv (the collection), queries.tsv, and one "
                     "<ID>.tsv of DocID<TAB>Y|N per query, domain or language (unlisted = N)",
        "submission": "a folder or .tgz with one <ID>.tsv per ID at its root; every line "
                      "DocID<TAB>Y|N<TAB>confidence, one per collection document, LF only",
        "confidence": "one digit, a point, 1 to 5 digits, no exponent, 0.0 <= cf <= 1.0 (plan 7.4)",
    }

    def load_reference(self, path):
        return load_checked(read_pack, path)

    def ids(self, pack: Pack) -> list[str]:
        raise NotImplementedError

    def expected_docs(self, pack: Pack) -> np.ndarray:
        return np.ones(len(pack.doc_ids), dtype=bool)

    def load_submission(self, path, reference=None):
        if reference is None:
            raise InvalidInput([Problem("<arguments>", None, "reference",
                                        f"{self.name} needs --reference PACK: the collection's "
                                        f"document list is part of the reference pack")])
        problems = Problems()
        fields = self._check_archive_name(Path(path), reference, problems)
        sub = self._parse(Path(path), iter_submission_files(path, problems,
                                                            pack_limits(reference)),
                          reference, problems)
        problems.raise_if_any()
        if fields:
            sub.warnings.append("archive name: " + ", ".join(
                f"{k}={'-'.join(v) if isinstance(v, list) else v}" for k, v in fields.items()))
        return sub

    TASK_IN_NAME = {"clir": "CLIR", "domainid": "DomainID", "langid": "LangID"}

    def _check_archive_name(self, path: Path, pack: Pack, problems: Problems) -> dict:
        """Fields of a plan-8.2.1.2 archive name; they must agree with the task and pack."""
        if not path.is_file():
            return {}
        fields = parse_archive_name(path.name)
        if isinstance(fields, str) or "task" not in fields:
            return {}                       # a web upload (<SysLabel>.tgz) or a free name
        task = "E2E" if self.name == "material-e2e" else self.TASK_IN_NAME[self.kind]
        if fields["task"] != task:
            problems.add(path, None, "archive name", f"says task {fields['task']}, but this "
                                                     f"is {self.name}")
        if pack.language and fields["lang"] != pack.language:
            problems.add(path, None, "archive name", f"says language {fields['lang']}, the "
                                                     f"pack is {pack.language}")
        return fields

    def _parse(self, root: Path, files, pack: Pack, problems: Problems) -> Submission:
        """Check each file's name against the pack and parse it as it arrives."""
        ids = self.ids(pack)
        row = {f"{i}.tsv": k for k, i in enumerate(ids)}
        expected = self.expected_docs(pack)
        n = len(pack.doc_ids)
        decision = np.zeros((len(ids), n), dtype=bool)
        ticks = np.zeros((len(ids), n), dtype=np.int32)
        found = np.zeros(len(ids), dtype=bool)
        member = (lambda name: f"{root}!{name}") if root.is_file() else (lambda name: root / name)

        def fast(name, data):
            # runs on a worker thread: the numba scanner releases the GIL
            return name, data, scan_file(data, pack.table(), expected, self.columns)

        pending: deque = deque()

        def settle():
            name, data, scanned = pending.popleft().result()
            k = row[name]
            if scanned is None:                      # line validator, in order, on this thread
                f = read_output_lines(str(member(name)), data, pack, problems, self.columns,
                                      expected)
                if f is None:
                    return
                scanned = f
            decision[k] = scanned.decision
            ticks[k] = scanned.ticks

        pack.table()
        stopped_early = False
        with ThreadPoolExecutor(2) as pool:
            for name, data in progress(files, total=len(ids), what=f"reading {root.name}"):
                if problems.full:
                    stopped_early = True         # unread files are not missing ones
                    break
                if "/" in name:
                    problems.add(member(name), None, "member",
                                 "files must be at the archive root (plan 8.2.1.3)")
                elif name not in row:
                    problems.add(member(name), None, "member",
                                 f"unexpected file: not <{self.id_name}>.tsv for a "
                                 f"{self.id_name} of the pack")
                else:
                    found[row[name]] = True
                    pending.append(pool.submit(fast, name, data))
                    if len(pending) > 4:             # bounded: a few files in memory at once
                        settle()
            while pending:
                settle()
        if not stopped_early:
            problems.summarize(root, "file", [f"{ids[k]}.tsv" for k in np.flatnonzero(~found)],
                               "{n} file is missing", "{n} files are missing")
        return Submission(str(root), ids, decision, ticks)

    def relevance(self, pack: Pack, ids: list[str]) -> np.ndarray:
        """Reference Y/N per (ID, document); files are scanned on two threads."""
        problems = Problems()
        every_doc = np.ones(len(pack.doc_ids), dtype=bool)
        paths = [pack.root / self.kind / f"{i}.tsv" for i in ids]
        pack.table()

        def fast(path: Path):
            try:
                data = path.read_bytes()
            except OSError:
                return None
            return scan_file(data, pack.table(), every_doc, 2, require_all=False)

        rel = np.zeros((len(ids), len(pack.doc_ids)), dtype=bool)
        with ThreadPoolExecutor(2) as pool:
            for k, (path, scanned) in enumerate(zip(paths, pool.map(fast, paths))):
                if scanned is not None:
                    rel[k] = scanned.decision
                elif not path.exists():
                    problems.add(path, None, "file", f"the pack has no reference for {ids[k]}")
                else:                                 # the line reader reports the problems
                    r = read_judgment_lines(path, pack, problems)
                    if r is not None:
                        rel[k] = r
        problems.raise_if_any()
        return rel

    def beta(self, pack: Pack, override):
        if override is not None:
            return float(override)
        b = pack.beta(self.beta_task)
        if b is None:
            raise InvalidInput([Problem(str(pack.root / "pack.yaml"), None, "beta",
                                        "language unknown: set language (1A, 1B, 1S) or beta "
                                        "in pack.yaml, or pass --beta")])
        return b


@register
class MaterialClir(_MaterialTask):
    name = "material-clir"
    kind = "clir"
    id_name = "query"
    description = "MATERIAL CLIR: AQWV (three variants), MQWV, oracle QWV, AUC, DET curve."
    primary_metric = "aqwv"
    options = (Option("beta", float, None, "override beta (default: plan Table 1 for the "
                                           "pack's language: 20 for 1A/1B, 40 for 1S)"),
               Option("plot", str, None, "write the DET curve to this PNG file"))
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
    }

    def ids(self, pack: Pack) -> list[str]:
        return list(pack.queries)

    def _score(self, pack, sub, beta, plot):
        return self._clir(pack, sub, self.relevance(pack, sub.ids), self.beta(pack, beta), plot)

    def _clir(self, pack, sub, rel: np.ndarray, beta: float, plot):
        nq, nd = rel.shape
        n_rel = rel.sum(axis=1)
        n_total = np.full(nq, nd)
        hits = np.count_nonzero(rel & sub.decision, axis=1)
        fas = np.count_nonzero(~rel & sub.decision, axis=1)
        p_miss, p_fa, qv = det.query_values(n_rel, n_total, hits, fas, beta)
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
        counts = {"queries": nq, "queries_with_relevant": int(has_rel.sum()),
                  "queries_without_relevant": int((~has_rel).sum()), "documents": nd,
                  "beta": beta, "mqwv_threshold": threshold}
        if plot:
            from ..plots import plot_det
            actual = (metrics["p_miss"], metrics["p_fa"])
            plot_det(s.p_miss[1:], s.p_fa[1:], actual, plot,
                     title=f"{self.name}: DET (beta {beta:g}, {variant} weighting)")
        result = self.new_result(metrics, breakdowns=breakdowns, counts=counts, warnings=warnings)
        result.conventions["beta"] = beta
        return result

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
                if value:
                    groups[f"per_{attr}"][value].append(k)
        return {name: {key: np.asarray(v) for key, v in sorted(g.items())}
                for name, g in groups.items()}


class _IdentificationTask(_MaterialTask):
    primary_metric = "detected"
    options = ()
    conventions = {
        **_MaterialTask.conventions,
        "counts": "per ID: X1 correct detections, X2 misses, X3 false alarms, X4 correct "
                  "rejections over the scored documents (plan section 5, Table 2)",
        "fractions": "each count divided by the ground-truth number X1 + X2 (the plan reports "
                     "percentages of it; shareval reports fractions); 0 when X1 + X2 = 0",
        "metrics": "the same fractions over all IDs' counts pooled",
    }

    def ids(self, pack: Pack) -> list[str]:
        return _reference_ids(pack, self.kind)

    def _score(self, pack, sub):
        rel = self.relevance(pack, sub.ids)
        scored = self.expected_docs(pack)
        if pack.scored is not None:              # one part of a split (tasks/splits.py)
            scored = scored & pack.scored
        rows, totals = {}, np.zeros(4)
        for k, i in enumerate(sub.ids):
            r, d = rel[k][scored], sub.decision[k][scored]
            x = np.array([np.sum(r & d), np.sum(r & ~d), np.sum(~r & d), np.sum(~r & ~d)], float)
            totals += x
            rows[i] = {**{f"x{j + 1}": int(x[j]) for j in range(4)}, **_fractions(x)}
        metrics = _fractions(totals)
        metrics = {"detected": metrics["x1_fraction"], "missed": metrics["x2_fraction"],
                   "false_alarms": metrics["x3_fraction"],
                   "correct_rejections": metrics["x4_fraction"]}
        warnings = []
        if not sub.ids:
            warnings.append(f"the pack has no {self.kind}/ reference files")
        return self.new_result(metrics, breakdowns={f"per_{self.id_name}": rows},
                               counts={self.id_name + "s": len(sub.ids),
                                       "documents_scored": int(scored.sum()),
                                       **{f"x{j + 1}": int(totals[j]) for j in range(4)}},
                               warnings=warnings)


def _fractions(x: np.ndarray) -> dict[str, float]:
    truth = x[0] + x[1]
    return {f"x{j + 1}_fraction": float(x[j] / truth) if truth else 0.0 for j in range(4)}


@register
class MaterialDomainId(_IdentificationTask):
    name = "material-domainid"
    kind = "domainid"
    id_name = "domain"
    description = "MATERIAL DomainID: per-domain detection counts X1-X4 (CS documents excluded)."

    def expected_docs(self, pack: Pack) -> np.ndarray:
        return ~pack.conversational


@register
class MaterialLangId(_IdentificationTask):
    name = "material-langid"
    kind = "langid"
    id_name = "language"
    description = "MATERIAL LangID: per-language detection counts X1-X4."


# ---------------------------------------------------------------------------
# End to end: CLIR decisions, summaries, and judges' decisions on the summaries

def _line_of(data: bytes, doc: str) -> int | None:
    """Line number of the line starting with ``doc<TAB>`` (for messages only)."""
    key = doc.encode() + b"\t"
    pos = 0 if data.startswith(key) else data.find(b"\n" + key)
    if pos < 0:
        return None
    return data.count(b"\n", 0, pos + (0 if pos == 0 else 1)) + 1


@register
class MaterialE2E(MaterialClir):
    name = "material-e2e"
    kind = "clir"                # relevance comes from the CLIR references
    beta_task = "e2e"
    columns = 4
    description = ("MATERIAL end to end: CLIR decisions plus summaries judged by people; "
                   "E2E AQWV by a judge-decision rule and from raw judgments.")
    options = (
        Option("beta", float, None, "override beta (default: plan Table 1, E2E column: 59.9 "
                                    "for 1A/1B, 40 for 1S)"),
        Option("judgments", str, None, "judges' decisions (default: the pack's "
                                       "e2e/judgments.tsv): query_id, doc_id, judge, relevant"),
        Option("judge_threshold", float, 0.5, "binary rule: a summary counts as relevant when "
                                              "the share of judges saying so is above this "
                                              "(0.5 = strict majority)"),
        Option("plot", str, None, "write the CLIR DET curve to this PNG file"),
    )
    conventions = {
        **_MaterialTask.conventions,
        "submission": "a folder or .tgz with one folder per query (plan 8.2.2): <QueryID>.tsv "
                      "with a 4th column naming <TeamID>.<SysLabel>.<QueryID>.<DocID>.json on "
                      "Y lines (empty on N lines), that JSON, and the image it names",
        "summary": "JSON per the plan's schema (7.2.4.3); at most 100 words in content_list; "
                   "image PNG or JPEG by content, exactly 1024 px wide, at most 768 px high",
        "e2e": "plan section 4: for a Y document, judged not relevant turns X1 into X2 and X3 "
               "into X4; aqwv uses the binary rule, aqwv_raw the share of 'relevant' votes "
               "(fractional X1/X2, X3/X4); both averaged over queries as the CLIR variants",
        "unjudged": "a Y document without judgments counts as judged not relevant (warned)",
        "adwv": "document-weighted AQWV (plan footnotes 5 and 25; secondary) of the E2E "
                "credits: P_miss and P_FA pooled over all (query, document) pairs; adwv uses "
                "the binary rule, adwv_raw the share of 'relevant' votes",
        "clir_aqwv_at_e2e_beta": "the primary CLIR AQWV of the same decisions with the E2E "
                                 "beta: what E2E AQWV would be if every summary convinced the "
                                 "judges",
    }

    def _parse(self, root: Path, files, pack: Pack, problems: Problems) -> Submission:
        from ..formats.images import image_info
        ids = list(pack.queries)
        known = set(ids)
        member = (lambda name: f"{root}!{name}") if root.is_file() else (lambda name: root / name)
        tsvs: dict[str, bytes] = {}
        jsons: dict[tuple[str, str], bytes] = {}
        images: dict[tuple[str, str], tuple | None] = {}
        for name, data in progress(files, what=f"reading {root.name}"):
            parts = name.split("/")
            if len(parts) != 2 or parts[0] not in known:
                problems.add(member(name), None, "member", "E2E submissions hold one folder per "
                                                           "query of the pack: <QueryID>/<file> "
                                                           "(plan 8.2.2)")
                continue
            qid, fname = parts
            if fname == f"{qid}.tsv":
                tsvs[qid] = data
            elif fname.endswith(".json"):
                jsons[(qid, fname)] = data
            elif fname.lower().endswith((".jpg", ".jpeg", ".png")):
                images[(qid, fname)] = image_info(data)
            else:
                problems.add(member(name), None, "member", "unexpected file")
        n = len(pack.doc_ids)
        decision = np.zeros((len(ids), n), dtype=bool)
        ticks = np.zeros((len(ids), n), dtype=np.int32)
        expected = self.expected_docs(pack)
        teams = pack.settings.get("teams")
        system: tuple[str, str] | None = None
        problems.summarize(root, "file", [f"{q}/{q}.tsv" for q in ids if q not in tsvs],
                           "{n} file is missing", "{n} files are missing")
        for k, qid in enumerate(ids):
            if qid not in tsvs:
                continue
            tsv = f"{qid}/{qid}.tsv"
            f = read_output_file(root / tsv, tsvs[qid], pack, problems, 4, expected,
                                 display=str(member(tsv)))
            if f is None:
                continue
            decision[k], ticks[k] = f.decision, f.ticks
            for j in np.flatnonzero(f.listed):
                doc, meta = pack.doc_ids[j], f.metadata[j]
                where = (member(tsv), _line_of(tsvs[qid], doc))
                if not f.decision[j]:
                    if meta:
                        problems.add(*where, "Metadata File", "must be empty on an N line")
                    continue
                parsed = parse_metadata_name(meta, qid, doc)
                if parsed is None:
                    problems.add(*where, "Metadata File", f"{meta!r} is not <TeamID>.<SysLabel>."
                                                          f"{qid}.{doc}.json")
                    continue
                if system is None:
                    system = parsed
                elif parsed != system:
                    problems.add(*where, "Metadata File", f"team and system {'.'.join(parsed)} "
                                                          f"differ from {'.'.join(system)}")
                    continue
                self._check_summary(qid, doc, meta, parsed, jsons, images, teams, member,
                                    problems)
        for (qid, fname) in list(jsons) + list(images):
            problems.add(member(f"{qid}/{fname}"), None, "member",
                         "not named by any Y line of the query's .tsv")
        return Submission(str(root), ids, decision, ticks)

    @staticmethod
    def _check_summary(qid, doc, meta, system, jsons, images, teams, member, problems):
        from ..formats.summary import check_metadata
        import json
        data = jsons.pop((qid, meta), None)
        where = member(f"{qid}/{meta}")
        if data is None:
            problems.add(where, None, "file", "missing: a Y line names it")
            return
        basename = meta[: -len(".json")]
        try:
            obj = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            if isinstance(e, UnicodeDecodeError):
                problems.fatal(where, None, "encoding", "not valid UTF-8")
            else:
                problems.fatal(where, e.lineno, "json", e.msg, column=e.colno)
            for key in [k for k in images if k[0] == qid and k[1].rsplit(".", 1)[0] == basename]:
                images.pop(key)       # its image is not "unnamed": the summary is unreadable
            return
        expected = {"query_id": qid, "document_id": doc, "team_id": system[0],
                    "sys_label": system[1], "basename": basename}
        for field_name, message in check_metadata(obj, expected, teams):
            problems.add(where, None, field_name, message)
        image_name = obj.get("image_filename") if isinstance(obj, dict) else None
        if not isinstance(image_name, str) or image_name.rsplit(".", 1)[0] != basename:
            return
        key = (qid, image_name)
        if key not in images:
            problems.add(where, None, "image_filename", f"{image_name!r} is not in the "
                                                        f"submission")
            return
        info = images.pop(key)
        img = member(f"{qid}/{image_name}")
        if info is None:
            problems.add(img, None, "image", "not a PNG or JPEG image (checked by content)")
            return
        kind, width, height = info
        if (kind == "png") != image_name.lower().endswith(".png"):
            problems.add(img, None, "image", f"the content is {kind.upper()} but the name says "
                                             f"otherwise")
        if width != 1024:
            problems.add(img, None, "image", f"{width} px wide: must be exactly 1024 (plan "
                                             f"7.2.4.5)")
        if height > 768:
            problems.add(img, None, "image", f"{height} px high: at most 768 (plan 7.2.4.5)")

    def _score(self, pack, sub, beta, judgments, judge_threshold, plot):
        from ..formats.summary import read_judgments
        beta = self.beta(pack, beta)
        rel = self.relevance(pack, sub.ids)
        clir = self._clir(pack, sub, rel, beta, plot)
        path = Path(judgments) if judgments else pack.root / "e2e" / "judgments.tsv"
        votes = load_checked(read_judgments, path)
        n_rel = rel.sum(axis=1)
        n_total = np.full(len(sub.ids), rel.shape[1])
        share = np.zeros(rel.shape)               # share of judges saying "relevant"
        unjudged = 0
        for k, j in zip(*np.nonzero(sub.decision)):
            v = votes.get((sub.ids[k], pack.doc_ids[j]))
            if v:
                share[k, j] = sum(v) / len(v)
            else:
                unjudged += 1
        y = sub.decision
        judged = share > judge_threshold
        results = {}
        for mode, credit in (("binary", judged.astype(float)), ("raw", share)):
            hits = np.sum(np.where(rel & y, credit, 0.0), axis=1)
            fas = np.sum(np.where(~rel & y, credit, 0.0), axis=1)
            p_miss, p_fa, qv = det.query_values(n_rel, n_total, hits, fas, beta)
            results[mode] = (det.variants_from_query_values(p_miss, p_fa, n_rel > 0, beta),
                             hits, fas, qv, p_miss, p_fa,
                             det.document_weighted_value(n_rel, n_total, hits, fas, beta))
        vb, vr = results["binary"][0], results["raw"][0]
        metrics = {"aqwv": vb["primary"], "aqwv_all": vb["all"],
                   "aqwv_with_relevant": vb["with_relevant"],
                   "aqwv_raw": vr["primary"], "aqwv_raw_all": vr["all"],
                   "aqwv_raw_with_relevant": vr["with_relevant"],
                   "adwv": results["binary"][6], "adwv_raw": results["raw"][6],
                   "clir_aqwv_at_e2e_beta": clir.metrics["aqwv"]}
        per_query = {}
        for k, qid in enumerate(sub.ids):
            n_y_rel = int(np.sum(rel[k] & y[k]))
            n_y_non = int(np.sum(~rel[k] & y[k]))
            hb, fb, qvb = (results["binary"][i][k] for i in (1, 2, 3))
            hr, fr, qvr = (results["raw"][i][k] for i in (1, 2, 3))
            per_query[qid] = {"qv": float(qvb), "qv_raw": float(qvr),
                              "x1": float(hb), "x2": float(n_rel[k] - hb), "x3": float(fb),
                              "x4": float(rel.shape[1] - n_rel[k] - fb),
                              "x1_raw": float(hr), "x3_raw": float(fr),
                              "summaries": n_y_rel + n_y_non}
        warnings = list(clir.warnings)
        if unjudged:
            warnings.append(f"{unjudged} summaries have no judgments: counted as judged not "
                            f"relevant")
        n_votes = [len(v) for v in votes.values()]
        breakdowns = {"per_query": per_query}
        has_rel = n_rel > 0
        for name, groups in self.query_groups(pack, sub.ids).items():
            table = {}
            for key, idx in groups.items():
                row = {}
                for mode, suffix in (("binary", ""), ("raw", "_raw")):
                    pm, pf = results[mode][4][idx], results[mode][5][idx]
                    row[f"aqwv{suffix}"] = det.variants_from_query_values(
                        pm, pf, has_rel[idx], beta)["primary"]
                table[key] = {**row, "queries": len(idx)}
            breakdowns[name] = table
        result = self.new_result(
            metrics, breakdowns=breakdowns,
            counts={**clir.counts, "summaries": int(y.sum()), "unjudged_summaries": unjudged,
                    "judged_pairs": len(votes),
                    "judges_per_pair": float(np.mean(n_votes)) if n_votes else 0.0,
                    "judge_threshold": judge_threshold},
            warnings=warnings)
        result.conventions["beta"] = beta
        return result
