"""MATERIAL end to end: CLIR decisions, summaries (JSON and image, checked per the
plan's 7.2.4 and 8.2.2), and the judges' decisions on the summaries (plan section 4)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ...formats.errors import InvalidInput, Problem, Problems
from ...formats.images import image_info
from ...formats.material import Pack, read_output_file
from ...formats.summary import SYSTEM, check_metadata, parse_metadata_name, read_judgments
from ...metrics import detection as det
from ...progress import progress
from .. import register
from ..base import Option, load_checked
from .base import Submission, _MaterialTask, restrict
from .clir import MaterialClir


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
                                       "e2e/judgments.tsv): query_id, doc_id, system, judge, "
                                       "relevant"),
        Option("system", str, None, "<TeamID>.<SysLabel> whose judgments score this run "
                                    "(default: the one its summary metadata names)"),
        Option("judge_threshold", float, 0.5, "binary rule: a summary counts as relevant when "
                                              "the share of judges saying so is above this "
                                              "(0.5 = strict majority)",
               low=0.0, high=1.0),
    )
    figure = "the CLIR DET curve"
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
        "judgments": "rows query_id, doc_id, system, judge, relevant; only the scored "
                     "system's rows count (--system, else the run's own <TeamID>.<SysLabel>); "
                     "a file without the system column applies to every system; a Y "
                     "document without a judgment is an error, never a silent zero",
        "adwv": "document-weighted AQWV (plan footnotes 5 and 25; secondary) of the E2E "
                "credits: P_miss and P_FA pooled over all (query, document) pairs; adwv uses "
                "the binary rule, adwv_raw the share of 'relevant' votes",
        "clir_aqwv_at_e2e_beta": "the primary CLIR AQWV of the same decisions with the E2E "
                                 "beta: what E2E AQWV would be if every summary convinced the "
                                 "judges",
        "clir": "CLIR computed from the E2E run (plan 8.1): clir_aqwv, clir_aqwv_all, "
                "clir_aqwv_with_relevant, clir_mqwv, clir_roc_auc, clir_adwv are material-clir's "
                "scores of the same decisions at the CLIR beta (plan Table 1, or beta.clir)",
        "open_queries": MaterialClir.conventions["open_queries"].replace(
            "open_aqwv is", "open_aqwv and open_aqwv_raw are"),
        "per_genre": MaterialClir.conventions["per_genre"],
    }
    status_metrics = ("aqwv", "aqwv_raw")
    open_metrics = ("aqwv", "aqwv_raw")

    def option_problems(self, options: dict) -> list[tuple[str, str]]:
        out = super().option_problems(options)
        system = options.get("system")
        if system and not SYSTEM.match(str(system)):
            out.append(("system", f"{system!r} is not <TeamID>.<SysLabel>"))
        return out

    def _parse(self, root: Path, files, pack: Pack, problems: Problems,
               check_only: bool = False, stored=None) -> Submission:
        """Decoded even to validate (``check_only`` and ``stored`` are not used): the
        summaries' checks need each line's decision and metadata."""
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
        return Submission(str(root), ids, decision, ticks,
                          system=".".join(system) if system else None)

    @staticmethod
    def _check_summary(qid, doc, meta, system, jsons, images, teams, member, problems):
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

    def _score(self, pack, sub, beta, judgments, judge_threshold, system):
        beta = self.beta(pack, beta)
        rel = self.relevance(pack, sub.ids)
        path = Path(judgments) if judgments else pack.root / "e2e" / "judgments.tsv"
        system = system or system_of(sub)
        if not judgments and not path.exists():
            return self._awaiting(pack, sub, rel, beta, judge_threshold, system)
        votes = load_checked(read_judgments, path, system)
        share = np.zeros(rel.shape)               # share of judges saying "relevant"
        unjudged = []
        for k, j in zip(*np.nonzero(sub.decision)):
            v = votes.get((sub.ids[k], pack.doc_ids[j]))
            if v:
                share[k, j] = sum(v) / len(v)
            else:
                unjudged.append(f"{sub.ids[k]}/{pack.doc_ids[j]}")
        if unjudged:                              # never a silent zero
            n = len(unjudged)
            what = "retrieved document has" if n == 1 else "retrieved documents have"
            raise InvalidInput([Problem(str(path), None, f"system {system}" if system else
                                        "system", f"{n} {what} no judgment, e.g. "
                                                  f"{', '.join(unjudged[:3])}")])
        clir_beta = pack.beta("clir")
        result = self.by_status(pack, sub.ids, lambda rows: self._e2e(
            pack, restrict(sub, rows), rel[rows], share[rows], beta, clir_beta,
            judge_threshold))
        n_votes = [len(v) for v in votes.values()]
        result.counts.update(judged_pairs=len(votes),
                             judges_per_pair=float(np.mean(n_votes)) if n_votes else 0.0)
        result.conventions["system"] = system
        return result

    def _awaiting(self, pack, sub, rel, beta, judge_threshold, system):
        """Before any judging (a run of the evaluation week): the CLIR part is scored,
        the E2E values are undefined (never zeros, never 'every summary convinced')."""
        clir_beta = pack.beta("clir")
        share = np.zeros(rel.shape)
        result = self.by_status(pack, sub.ids, lambda rows: self._e2e(
            pack, restrict(sub, rows), rel[rows], share[rows], beta, clir_beta,
            judge_threshold))
        nan = float("nan")
        for k in list(result.metrics):
            if not k.startswith("clir_"):
                result.metrics[k] = nan
        for name, table in result.breakdowns.items():
            for row in table.values():
                for k in list(row):
                    if k.startswith(("aqwv", "qv", "x1", "x2", "x3", "x4")):
                        row[k] = nan
        result.warnings.append(AWAITING)
        result.counts.update(judged_pairs=0, judges_per_pair=0.0)
        result.conventions["system"] = system
        return result

    def _e2e(self, pack, sub, rel, share, beta, clir_beta, judge_threshold):
        """E2E AQWV (binary rule and raw) of the given queries, and their CLIR part."""
        clir = self._clir(pack, sub, rel, beta if clir_beta is None else clir_beta)
        n_rel = rel.sum(axis=1)
        nq, nd = rel.shape
        n_total = np.full(nq, nd)
        y = sub.decision
        judged = share > judge_threshold
        results, credits = {}, {}
        for mode, credit in (("binary", judged.astype(float)), ("raw", share)):
            hit_credit = np.where(rel & y, credit, 0.0)
            fa_credit = np.where(~rel & y, credit, 0.0)
            credits[mode] = (hit_credit, fa_credit)
            hits, fas = hit_credit.sum(axis=1), fa_credit.sum(axis=1)
            p_miss, p_fa, qv = det.query_values(n_rel, n_total, hits, fas, beta)
            results[mode] = (det.variants_from_query_values(p_miss, p_fa, n_rel > 0, beta),
                             hits, fas, qv, p_miss, p_fa,
                             det.document_weighted_value(n_rel, n_total, hits, fas, beta))
        vb, vr = results["binary"][0], results["raw"][0]
        # every summary convincing the judges: the CLIR AQWV of the decisions at the E2E beta
        pm, pf, _ = det.query_values(n_rel, n_total, np.count_nonzero(rel & y, axis=1),
                                     np.count_nonzero(~rel & y, axis=1), beta)
        metrics = {"aqwv": vb["primary"], "aqwv_all": vb["all"],
                   "aqwv_with_relevant": vb["with_relevant"],
                   "aqwv_raw": vr["primary"], "aqwv_raw_all": vr["all"],
                   "aqwv_raw_with_relevant": vr["with_relevant"],
                   "adwv": results["binary"][6], "adwv_raw": results["raw"][6],
                   "clir_aqwv_at_e2e_beta": det.variants_from_query_values(
                       pm, pf, n_rel > 0, beta)["primary"]}
        warnings = list(clir.warnings)
        for m in ("aqwv", "aqwv_all", "aqwv_with_relevant", "mqwv", "roc_auc", "adwv"):
            metrics[f"clir_{m}"] = clir.metrics[m] if clir_beta is not None else float("nan")
        if clir_beta is None:
            warnings.append("the pack's language is unknown: no CLIR beta, so the clir_* "
                            "metrics are undefined (set language or beta.clir in pack.yaml)")
        per_query = {}
        for k, qid in enumerate(sub.ids):
            hb, fb, qvb = (results["binary"][i][k] for i in (1, 2, 3))
            hr, fr, qvr = (results["raw"][i][k] for i in (1, 2, 3))
            per_query[qid] = {"qv": float(qvb), "qv_raw": float(qvr),
                              "x1": float(hb), "x2": float(n_rel[k] - hb), "x3": float(fb),
                              "x4": float(nd - n_rel[k] - fb),
                              "x1_raw": float(hr), "x3_raw": float(fr),
                              "summaries": int(y[k].sum())}
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
        for name, groups in self.document_groups(pack, nd).items():
            table = {}
            for key, m in groups.items():
                row = {}
                n_rel_g = rel[:, m].sum(axis=1)
                for mode, suffix in (("binary", ""), ("raw", "_raw")):
                    hit_credit, fa_credit = credits[mode]
                    pm, pf, _ = det.query_values(n_rel_g, np.full(nq, int(m.sum())),
                                                 hit_credit[:, m].sum(axis=1),
                                                 fa_credit[:, m].sum(axis=1), beta)
                    row[f"aqwv{suffix}"] = det.variants_from_query_values(
                        pm, pf, n_rel_g > 0, beta)["primary"]
                table[key] = {**row, "documents": int(m.sum())}
            breakdowns[name] = table
        counts = {k: v for k, v in clir.counts.items() if k != "mqwv_threshold"}
        result = self.new_result(
            metrics, breakdowns=breakdowns,
            counts={**counts, "beta": beta, "clir_beta": clir_beta,
                    "summaries": int(y.sum()), "judge_threshold": judge_threshold},
            warnings=warnings)
        result.conventions["beta"] = beta
        result.figure = clir.figure
        return result


AWAITING = ("no judgments yet (no --judgments and no e2e/judgments.tsv in the pack): the E2E "
            "values wait for the judges; the CLIR part (clir_*) is scored")


def system_of(submission) -> str | None:
    """``<TeamID>.<SysLabel>`` of an E2E submission: from its summary metadata names,
    else from its canonical archive name; None when neither names one."""
    return getattr(submission, "system", None)
