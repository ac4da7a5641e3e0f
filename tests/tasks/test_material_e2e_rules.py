"""MATERIAL end to end (docs/material.md, "End to end"; plan section 4) and archive
names, rule by rule: a Y document judged not relevant moves X1 -> X2 and X3 -> X4; per-query
cells, metrics and counts by hand; unjudged summaries; metadata names with their line;
summary, image and member problems compared whole."""
import json

import numpy as np
import pytest

from shareval.formats.errors import InvalidInput
from shareval.plots import save_figure
from shareval.tasks import get
from tests.tasks.test_material import DOCS, folder, make_pack, output, tgz


# ---------------------------------------------------------------------------
# End to end (plan section 4): a Y document judged not relevant moves X1 -> X2, X3 -> X4

E2E_BETA = 59.9                               # plan Table 1, 1A E2E


def _e2e_pack(tmp_path, votes=(("query1", 0, [1, 1, 1]), ("query1", 2, [1, 0, 0]),
                               ("query3", 4, [1, 0]))):
    root = make_pack(tmp_path / "pack")
    (root / "e2e").mkdir()
    rows = ["query_id\tdoc_id\tjudge\trelevant"]
    for qid, j, vs in votes:
        rows += [f"{qid}\t{DOCS[j]}\tj{n}\t{'Y' if v else 'N'}" for n, v in enumerate(vs)]
    (root / "e2e" / "judgments.tsv").write_text("\n".join(rows) + "\n")
    return root


def test_e2e_per_query_cells_metrics_and_counts_by_hand(tmp_path):
    from tests.tasks.test_material_e2e import submission_files
    pack = _e2e_pack(tmp_path)
    r = get("material-e2e").score(pack, folder(tmp_path, submission_files()))
    b = E2E_BETA
    # Y: query1 docs 0 (relevant, 3/3 judges yes) and 2 (not relevant, 1/3 yes); query3
    # doc 4 (relevant, 1/2 yes: a tie, not a strict majority)
    assert r.breakdowns["per_query"] == {
        "query1": {"qv": pytest.approx(0.5), "qv_raw": pytest.approx(1 - (0.5 + b * (1 / 3) / 4)),
                   "x1": 1.0, "x2": 1.0, "x3": 0.0, "x4": 4.0, "x1_raw": 1.0,
                   "x3_raw": pytest.approx(1 / 3), "summaries": 2},
        "query2": {"qv": 1.0, "qv_raw": 1.0, "x1": 0.0, "x2": 0.0, "x3": 0.0, "x4": 6.0,
                   "x1_raw": 0.0, "x3_raw": 0.0, "summaries": 0},
        "query3": {"qv": 0.0, "qv_raw": pytest.approx(0.5), "x1": 0.0, "x2": 1.0, "x3": 0.0,
                   "x4": 5.0, "x1_raw": 0.5, "x3_raw": 0.0, "summaries": 1}}
    qv_raw = [1 - (0.5 + b / 12), 1.0, 0.5]
    assert r.metrics == {
        "aqwv": pytest.approx(1 - (0.5 + 1.0) / 2), "aqwv_all": pytest.approx(0.5),
        "aqwv_with_relevant": pytest.approx(0.25),
        "aqwv_raw": pytest.approx(1 - ((0.5 + 0.5) / 2 + b * (1 / 12) / 3)),
        "aqwv_raw_all": pytest.approx(sum(qv_raw) / 3),
        "aqwv_raw_with_relevant": pytest.approx((qv_raw[0] + qv_raw[2]) / 2),
        # pooled over the 3 relevant and 15 non-relevant pairs
        "adwv": pytest.approx(1 - 2 / 3), "adwv_raw": pytest.approx(1 - (1.5 / 3 + b / 3 / 15)),
        # the same Y decisions before judging: query1 misses 1 of 2 with 1 false alarm of 4,
        # query3 finds its document
        "clir_aqwv_at_e2e_beta": pytest.approx(1 - ((0.5 + 0) / 2 + b * (1 / 4) / 3)),
        # CLIR computed from the E2E run (plan 8.1) at the CLIR beta, 20 for 1A: P_miss
        # 1/2 and 0, P_FA 1/4, 0, 0; pooled: 1 of 3 relevant pairs missed, 1 of 15 false
        "clir_aqwv": pytest.approx(1 - (0.5 / 2 + 20 * (1 / 4) / 3)),
        "clir_aqwv_all": pytest.approx(((1 - (0.5 + 20 / 4)) + 1 + 1) / 3),
        "clir_aqwv_with_relevant": pytest.approx(((1 - (0.5 + 20 / 4)) + 1) / 2),
        "clir_adwv": pytest.approx(1 - (1 / 3 + 20 / 15)),
        # Y lines have confidence 0.9, N lines 0.1: the best threshold retrieves nothing
        # (0 beats the Y decisions' -11/12 and retrieving all, 1 - 20); AUC: the two
        # relevant 0.9 pairs outrank 14 of the 15 others and tie one, the relevant 0.1
        # pair ties 14
        "clir_mqwv": pytest.approx(0.0), "clir_roc_auc": pytest.approx((14.5 * 2 + 7) / 45)}
    assert r.counts["summaries"] == 3 and r.conventions["system"] == "TEAMX.Sys1"
    assert r.counts["judged_pairs"] == 3
    assert r.counts["judges_per_pair"] == pytest.approx((3 + 3 + 2) / 3)
    assert r.counts["judge_threshold"] == 0.5 and r.counts["beta"] == b
    assert r.counts["queries"] == 3 and r.conventions["beta"] == b
    assert r.breakdowns["per_domain"]["Physical-And-Mental-Health"] == {
        "aqwv": pytest.approx(0.5), "aqwv_raw": pytest.approx(qv_raw[0]), "queries": 1}
    assert r.breakdowns["per_domain"]["Lifestyle"] == {"aqwv": 0.0, "aqwv_raw": 0.5,
                                                       "queries": 1}
    # query2 has no relevant document: the primary variant of its domain is undefined
    gov = r.breakdowns["per_domain"]["Government-And-Politics"]
    assert np.isnan(gov["aqwv"]) and np.isnan(gov["aqwv_raw"]) and gov["queries"] == 1
    assert r.warnings == []


def test_e2e_unjudged_summaries_are_an_error_never_a_silent_zero(tmp_path):
    from tests.tasks.test_material_e2e import submission_files
    pack = _e2e_pack(tmp_path)
    own = tmp_path / "votes.tsv"                 # --judgments: query3's summary unjudged
    own.write_text(f"query_id\tdoc_id\tjudge\trelevant\nquery1\t{DOCS[0]}\tj0\tY\n"
                   f"query1\t{DOCS[2]}\tj0\tY\n")
    with pytest.raises(InvalidInput) as e:
        get("material-e2e").score(pack, folder(tmp_path, submission_files()),
                                  judgments=str(own))
    assert [str(p) for p in e.value.problems] == [
        f"{own}: system TEAMX.Sys1: 1 retrieved document has no judgment, e.g. "
        f"query3/{DOCS[4]}"]
    # more than three: the count and the first three pairs, in query then document order
    only = tmp_path / "only.tsv"
    only.write_text(f"query_id\tdoc_id\tjudge\trelevant\nquery2\t{DOCS[0]}\tj0\tY\n")
    y = {"query1": [0, 1, 2], "query3": [3, 4]}
    files = submission_files()
    for q, docs in y.items():
        files[f"{q}/{q}.tsv"] = "".join(
            f"{d}\tY\t0.9\tTEAMX.Sys1.{q}.{d}.json\n" if j in docs else f"{d}\tN\t0.1\t\n"
            for j, d in enumerate(DOCS))
    from tests.tasks.test_material_e2e import image, summary
    for q, docs in y.items():
        for j in docs:
            base, obj = summary(q, DOCS[j])
            files[f"{q}/{base}.json"] = json.dumps(obj)
            files[f"{q}/{base}.png"] = image()
    with pytest.raises(InvalidInput) as e:
        get("material-e2e").score(pack, folder(tmp_path, files, "five"), judgments=str(only))
    assert [str(p) for p in e.value.problems] == [
        f"{only}: system TEAMX.Sys1: 5 retrieved documents have no judgment, e.g. "
        f"query1/{DOCS[0]}, query1/{DOCS[1]}, query1/{DOCS[2]}"]


def test_e2e_metadata_names_are_checked_with_their_line(tmp_path):
    from tests.tasks.test_material_e2e import SYS, TEAM, submission_files
    pack = _e2e_pack(tmp_path)
    files = submission_files()
    d0, d2 = DOCS[0], DOCS[2]
    # line 1 (doc 0) names another document; line 3 (doc 2) another system
    files["query1/query1.tsv"] = files["query1/query1.tsv"] \
        .replace(f"{TEAM}.{SYS}.query1.{d0}.json", f"{TEAM}.{SYS}.query1.{d2}.json", 1) \
        .replace(f"{d2}\tY\t0.9\t{TEAM}.{SYS}.", f"{d2}\tY\t0.9\t{TEAM}.Sys2.")
    sub = folder(tmp_path, files)
    with pytest.raises(InvalidInput) as e:
        get("material-e2e").validate(sub, reference=pack)
    tsv = sub / "query1" / "query1.tsv"
    msgs = [str(p) for p in e.value.problems]
    assert f"{tsv}:1: Metadata File: '{TEAM}.{SYS}.query1.{d2}.json' is not " \
           f"<TeamID>.<SysLabel>.query1.{d0}.json" in msgs
    assert f"{tsv}:3: Metadata File: team and system {TEAM}.Sys2 differ from " \
           f"{TEAM}.{SYS}" not in msgs                       # doc 0 set no system
    # the first readable name sets the system: query3's line is compared with Sys2
    assert f"{sub / 'query3' / 'query3.tsv'}:5: Metadata File: team and system " \
           f"{TEAM}.{SYS} differ from {TEAM}.Sys2" in msgs


@pytest.mark.parametrize("change,expected", [
    # its image is then named by nothing
    ("missing", "{j}: file: missing: a Y line names it\n"
                "{i}: member: not named by any Y line of the query's .tsv"),
    ("utf8", "{j}: encoding: not valid UTF-8"),
    ("syntax", "{j}:1:2: json: Expecting property name enclosed in double quotes"),
    ("no-image", "{j}: image_filename: '{b}.png' is not in the submission"),
    ("not-image", "{i}: image: not a PNG or JPEG image (checked by content)"),
])
def test_e2e_summary_files_problems(tmp_path, change, expected):
    from tests.tasks.test_material_e2e import SYS, TEAM, submission_files
    pack = _e2e_pack(tmp_path)
    files = submission_files()
    base = f"{TEAM}.{SYS}.query3.{DOCS[4]}"
    j, i = f"query3/{base}.json", f"query3/{base}.png"
    if change == "missing":
        del files[j]
    elif change == "utf8":
        files[j] = b"{\"a\": \"\xff\"}"
    elif change == "syntax":
        files[j] = "{,}"
    elif change == "no-image":
        del files[i]
    else:
        files[i] = b"GIF89a not an image"
    sub = folder(tmp_path, files)
    with pytest.raises(InvalidInput) as e:
        get("material-e2e").validate(sub, reference=pack)
    assert [str(p) for p in e.value.problems] == \
        expected.format(j=sub / j, i=sub / i, b=base).split("\n")


# ---------------------------------------------------------------------------
# Archive names, folders and the two reference readers

def test_archive_names_must_name_the_task_e2e_and_domainid_included(tmp_path):
    from tests.tasks.test_material_e2e import submission_files
    pack = _e2e_pack(tmp_path)
    members = [(n, d if isinstance(d, bytes) else d.encode())
               for n, d in submission_files().items()]
    stamp = "_EVAL1-1A-DEV_20181113_225652.tgz"
    good = tgz(tmp_path, members, "NIST_E2E-primary-unconstrained-QUERY1-sys1" + stamp)
    assert get("material-e2e").validate(good, reference=pack) == [
        "archive name: team=NIST, task=E2E, type=primary, condition=unconstrained, set=QUERY1, "
        "sys=sys1, period=EVAL1, lang=1A, dataset=DEV, date=20181113, time=225652"]
    clir = tgz(tmp_path, members, "NIST_CLIR-primary-unconstrained-QUERY1-sys1" + stamp)
    with pytest.raises(InvalidInput) as e:
        get("material-e2e").validate(clir, reference=pack)
    assert [str(p) for p in e.value.problems] == [
        f"{clir}: archive name: says task CLIR, but this is material-e2e"]
    # DomainID names list their domains: the warning joins them as the name does
    non_cs = DOCS[:5]
    dom = tgz(tmp_path, [("GOV.tsv", output([1] * 5, ["0.5"] * 5, non_cs).encode()),
                         ("MIL.tsv", output([0] * 5, ["0.5"] * 5, non_cs).encode())],
              "NIST_DomainID-contrastive-unconstrained-GOV-MIL-sys2" + stamp)
    assert get("material-domainid").validate(dom, reference=pack) == [
        "archive name: team=NIST, task=DomainID, type=contrastive, condition=unconstrained, "
        "set=GOV-MIL, sys=sys2, period=EVAL1, lang=1A, dataset=DEV, date=20181113, "
        "time=225652"]


def test_e2e_archive_members_missing_files_and_every_querys_problems(tmp_path):
    from tests.tasks.test_material_e2e import SYS, TEAM, image, submission_files
    pack = _e2e_pack(tmp_path)
    files = submission_files()
    # query3's summary image as a JPEG named .jpg (the schema's other extension): valid
    base3 = f"{TEAM}.{SYS}.query3.{DOCS[4]}"
    meta = json.loads(files.pop(f"query3/{base3}.json"))
    meta["image_filename"] = f"{base3}.jpg"
    files[f"query3/{base3}.json"] = json.dumps(meta)
    del files[f"query3/{base3}.png"]
    files[f"query3/{base3}.jpg"] = image(fmt="JPEG")
    members = [(n, d if isinstance(d, bytes) else d.encode()) for n, d in files.items()]
    ok = tgz(tmp_path, members, "ok.tgz")
    assert get("material-e2e").validate(ok, reference=pack) == []
    # in an archive, problems name the member; a broken .tsv does not stop the next query's
    files["query1/notes.txt"] = "x"
    files["query1/query1.tsv"] = files["query1/query1.tsv"].replace("\tN\t0.1\t", "\tN\t0.1", 1)
    files["query3/query3.tsv"] = files["query3/query3.tsv"].replace(f"{DOCS[0]}\tN", f"{DOCS[0]}\tX")
    members = [(n, d if isinstance(d, bytes) else d.encode()) for n, d in files.items()]
    bad = tgz(tmp_path, members, "bad.tgz")
    with pytest.raises(InvalidInput) as e:
        get("material-e2e").validate(bad, reference=pack)
    msgs = [str(p) for p in e.value.problems]
    assert msgs[:4] == [
        f"{bad}!query1/notes.txt: member: unexpected file",
        f"{bad}!query1/query1.tsv:2: line: expected 4 tab-separated fields (DocID<TAB>Y|N<TAB>"
        f"confidence<TAB>metadata), found 3",
        f"{bad}!query1/query1.tsv: DocID: 1 collection document is missing (one line per "
        f"document is required): '{DOCS[1]}'",
        f"{bad}!query3/query3.tsv:1: HardDecision: expected Y or N, found 'X'"]
    # missing .tsv files: one summarized problem, singular or plural
    for gone, text in ((["query2"], "1 file is missing: 'query2/query2.tsv'"),
                       (["query2", "query3"], "2 files are missing: 'query2/query2.tsv', "
                                              "'query3/query3.tsv'")):
        kept = {n: d for n, d in submission_files().items() if n.split("/")[0] not in gone}
        sub = folder(tmp_path, kept, "miss" + str(len(gone)))
        with pytest.raises(InvalidInput) as e:
            get("material-e2e").validate(sub, reference=pack)
        assert [str(p) for p in e.value.problems] == [f"{sub}: file: {text}"]


def test_e2e_beta_override_and_plot(tmp_path):
    from tests.tasks.test_material_e2e import submission_files
    pack = _e2e_pack(tmp_path)
    png = tmp_path / "det.png"
    r = get("material-e2e").score(pack, folder(tmp_path, submission_files()), beta=30.0)
    save_figure(r, png)
    assert r.counts["beta"] == 30.0 == r.conventions["beta"]
    # query1 keeps doc 0 (3 of 3), loses doc 2 (1 of 3); query3's doc 4 is a tie: a miss
    assert r.metrics["aqwv"] == pytest.approx(1 - (0.5 + 1.0) / 2)
    assert r.metrics["clir_aqwv_at_e2e_beta"] == pytest.approx(1 - (0.5 / 2 + 30.0 * 0.25 / 3))
    # the CLIR part stays at the CLIR beta (20 for 1A), whatever the E2E beta
    assert r.counts["clir_beta"] == 20.0
    assert r.metrics["clir_aqwv"] == pytest.approx(1 - (0.5 / 2 + 20.0 * 0.25 / 3))
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("height,problems", [(768, 0), (769, 1)])
def test_summary_images_may_be_768_px_high_not_more(tmp_path, height, problems):
    from tests.tasks.test_material_e2e import SYS, TEAM, image, submission_files
    pack = _e2e_pack(tmp_path)
    files = submission_files()
    png = f"query3/{TEAM}.{SYS}.query3.{DOCS[4]}.png"
    files[png] = image(1024, height)
    sub = folder(tmp_path, files)
    if not problems:
        assert get("material-e2e").validate(sub, reference=pack) == []
        return
    with pytest.raises(InvalidInput) as e:
        get("material-e2e").validate(sub, reference=pack)
    assert [str(p) for p in e.value.problems] == [
        f"{sub / png}: image: 769 px high: at most 768 (plan 7.2.4.5)"]
