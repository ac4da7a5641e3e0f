"""MATERIAL end to end: CLIR decisions, summaries (JSON and image, checked per the
plan's 7.2.4 and 8.2.2), and the judges' decisions on the summaries (plan section 4)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ...formats.errors import Problems
from ...formats.images import image_info
from ...formats.material import Pack, read_output_file
from ...formats.summary import check_metadata, parse_metadata_name, read_judgments
from ...metrics import detection as det
from ...progress import progress
from .. import register
from ..base import Option, load_checked
from .base import Submission, _MaterialTask
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
                                       "e2e/judgments.tsv): query_id, doc_id, judge, relevant"),
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
        "unjudged": "a Y document without judgments counts as judged not relevant (warned)",
        "adwv": "document-weighted AQWV (plan footnotes 5 and 25; secondary) of the E2E "
                "credits: P_miss and P_FA pooled over all (query, document) pairs; adwv uses "
                "the binary rule, adwv_raw the share of 'relevant' votes",
        "clir_aqwv_at_e2e_beta": "the primary CLIR AQWV of the same decisions with the E2E "
                                 "beta: what E2E AQWV would be if every summary convinced the "
                                 "judges",
    }

    def _parse(self, root: Path, files, pack: Pack, problems: Problems) -> Submission:
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

    def _score(self, pack, sub, beta, judgments, judge_threshold):
        beta = self.beta(pack, beta)
        rel = self.relevance(pack, sub.ids)
        clir = self._clir(pack, sub, rel, beta)
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
        result.figure = clir.figure
        return result
