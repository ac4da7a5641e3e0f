"""The MATERIAL rules of docs/material.md, each on a case where breaking the rule changes
a number or a field: the three AQWV variants and their breakdown rows recomputed by a
small oracle written from the plan's Eq. 1-3, beta from the pack's language, DomainID
and LangID counts by hand, E2E per-query cells and counts, and the reader's
file:line problems compared whole."""
import json

import numpy as np
import pytest

from shareval.formats.errors import InvalidInput
from shareval.tasks import get
from shareval.tasks.material.base import iter_submission_files, pack_limits
from shareval.formats.archive import Limits
from shareval.formats.errors import Problems
from shareval.formats.material import read_pack
from tests.tasks.test_material import DOCS, REL, SYSTEM, folder, make_pack, output, tgz

QUERIES = ("query1", "query2", "query3")
# the SYSTEM's Y decisions (test_material.py): query1 says Y on docs 0 and 2
DECISIONS = {"query1": {0, 2}, "query2": set(), "query3": set()}


def oracle(queries, rel, dec, beta, n_docs=len(DOCS)):
    """(primary, all, with_relevant) AQWV and per-query (P_miss, P_FA, QV), from Eq. 1-3."""
    rows = {}
    for q in queries:
        r, y = rel[q], dec[q]
        p_miss = len(r - y) / len(r) if r else 0.0
        p_fa = len(y - r) / (n_docs - len(r))
        rows[q] = (p_miss, p_fa, 1 - (p_miss + beta * p_fa))
    with_rel = [q for q in queries if rel[q]]
    all_ = float(np.mean([rows[q][2] for q in queries]))
    wr = float(np.mean([rows[q][2] for q in with_rel])) if with_rel else float("nan")
    primary = (1 - (np.mean([rows[q][0] for q in with_rel]) +
                    beta * np.mean([rows[q][1] for q in queries]))) if with_rel else float("nan")
    return float(primary), all_, wr, rows


def same(a, b):
    return (np.isnan(a) and np.isnan(b)) if isinstance(a, float) and np.isnan(a) else \
        a == pytest.approx(b)


@pytest.fixture
def pack(tmp_path):
    root = make_pack(tmp_path / "pack")
    # an extra query attribute; an empty value puts the query in no group of it
    (root / "queries.tsv").write_text(
        "query_id\tquery\ttype\tsource\nquery1\tebola:Physical-And-Mental-Health\tlexical\tnews\n"
        'query2\t"panel of judges":Government-And-Politics\tconceptual\t\n'
        "query3\tmusic:Lifestyle\tlexical\tnews\n")
    return root


def system(tmp_path, name="sub"):
    return folder(tmp_path, {f"{q}.tsv": t for q, t in SYSTEM.items()}, name)


# ---------------------------------------------------------------------------
# CLIR

def test_per_query_rows_are_eq_1_with_p_fa_over_the_non_relevant_documents(pack, tmp_path):
    r = get("material-clir").score(pack, system(tmp_path))
    _, _, _, rows = oracle(QUERIES, REL, DECISIONS, 20.0)
    for q in QUERIES:
        p_miss, p_fa, qv = rows[q]
        assert r.breakdowns["per_query"][q] == {
            "qv": pytest.approx(qv), "p_miss": pytest.approx(p_miss),
            "p_fa": pytest.approx(p_fa), "n_relevant": len(REL[q]),
            "n_retrieved": len(DECISIONS[q]), "hits": len(REL[q] & DECISIONS[q]),
            "false_alarms": len(DECISIONS[q] - REL[q])}
    # query1: 1 of its 2 relevant missed, 1 false alarm of its 6 - 2 = 4 non-relevant
    assert rows["query1"][:2] == (0.5, 0.25)
    assert r.counts == {"queries": 3, "queries_with_relevant": 2, "queries_without_relevant": 1,
                        "documents": 6, "beta": 20.0, "mqwv_threshold": 0.9}
    assert r.conventions["beta"] == 20.0 and r.warnings == []


def test_every_breakdown_row_gives_the_three_variants_of_its_queries(pack, tmp_path):
    r = get("material-clir").score(pack, system(tmp_path))
    groups = {
        "per_domain": {"Physical-And-Mental-Health": ["query1"],
                       "Government-And-Politics": ["query2"], "Lifestyle": ["query3"]},
        # words of the query string, quotes removed: "panel of judges" has 3
        "per_word_count": {"1": ["query1", "query3"], "3": ["query2"]},
        "per_type": {"conceptual": ["query2"], "lexical": ["query1", "query3"]},
        "per_source": {"news": ["query1", "query3"]},          # query2's value is empty
    }
    assert set(r.breakdowns) == {"per_query", *groups}
    for name, table in groups.items():
        assert list(r.breakdowns[name]) == sorted(table), name
        for key, qs in table.items():
            primary, all_, wr, _ = oracle(qs, REL, DECISIONS, 20.0)
            row = r.breakdowns[name][key]
            assert set(row) == {"aqwv", "aqwv_all", "aqwv_with_relevant", "queries",
                                "queries_with_relevant"}
            assert same(row["aqwv"], primary) and same(row["aqwv_all"], all_)
            assert same(row["aqwv_with_relevant"], wr), (name, key)
            assert row["queries"] == len(qs)
            assert row["queries_with_relevant"] == sum(bool(REL[q]) for q in qs)


def test_the_overall_variants_and_averages_equal_the_oracle(pack, tmp_path):
    r = get("material-clir").score(pack, system(tmp_path), beta=33.0)
    primary, all_, wr, rows = oracle(QUERIES, REL, DECISIONS, 33.0)
    assert r.metrics["aqwv"] == pytest.approx(primary)
    assert r.metrics["aqwv_all"] == pytest.approx(all_)
    assert r.metrics["aqwv_with_relevant"] == pytest.approx(wr)
    # p_miss over the queries with relevant documents, p_fa over all of them
    assert r.metrics["p_miss"] == pytest.approx((rows["query1"][0] + rows["query3"][0]) / 2)
    assert r.metrics["p_fa"] == pytest.approx(np.mean([rows[q][1] for q in QUERIES]))
    assert r.counts["beta"] == 33.0 == r.conventions["beta"]


@pytest.mark.parametrize("settings,beta", [
    ("language: 1A\n", 20.0), ("language: 1B\n", 20.0), ("language: 1S\n", 40.0),
    ("language: 1S\nbeta: 12.5\n", 12.5), ("language: 1A\nbeta: {clir: 7}\n", 7.0),
])
def test_beta_comes_from_the_plans_table_1_for_the_packs_language(pack, tmp_path, settings, beta):
    (pack / "pack.yaml").write_text(settings + "docid_pattern: false\n")
    r = get("material-clir").score(pack, system(tmp_path))
    assert r.counts["beta"] == beta
    assert r.metrics["aqwv"] == pytest.approx(oracle(QUERIES, REL, DECISIONS, beta)[0])


def test_an_unknown_language_without_beta_is_a_problem_of_pack_yaml(tmp_path):
    root = tmp_path / "pack"
    make_pack(root)
    docs = [f"DOC{i}" for i in range(6)]
    (root / "pack.yaml").write_text("docid_pattern: false\n")
    (root / "documents.tsv").write_text("doc_id\tgenre\n" + "".join(f"{d}\ttext\n" for d in docs))
    for q, rel in REL.items():
        (root / "clir" / f"{q}.tsv").write_text(
            "".join(f"{d}\t{'Y' if i in rel else 'N'}\n" for i, d in enumerate(docs)))
    sub = folder(tmp_path, {f"{q}.tsv": output([0] * 6, ["0.5"] * 6, docs) for q in QUERIES})
    with pytest.raises(InvalidInput) as e:
        get("material-clir").score(root, sub)
    assert [str(p) for p in e.value.problems] == [
        f"{root / 'pack.yaml'}: beta: language unknown: set language (1A, 1B, 1S) or beta in "
        f"pack.yaml, or pass --beta"]
    # --beta is enough (given as text, as the CLI may pass it)
    assert get("material-clir").score(root, sub, beta="20").counts["beta"] == 20.0


def test_no_query_with_relevant_documents_scores_the_all_variant(tmp_path):
    root = make_pack(tmp_path / "pack")
    for q in QUERIES:
        (root / "clir" / f"{q}.tsv").write_text("".join(f"{d}\tN\n" for d in DOCS))
    # query1 says Y on doc 0 (cf 0.9), query3 nothing; no pair is relevant
    r = get("material-clir").score(root, system(tmp_path))
    none = {q: set() for q in QUERIES}
    primary, all_, wr, rows = oracle(QUERIES, none, DECISIONS, 20.0)
    assert np.isnan(r.metrics["aqwv"]) and np.isnan(r.metrics["aqwv_with_relevant"])
    assert np.isnan(r.metrics["p_miss"]) and np.isnan(r.metrics["adwv"])
    assert r.metrics["aqwv_all"] == pytest.approx(all_)
    assert r.metrics["p_fa"] == pytest.approx(np.mean([rows[q][1] for q in QUERIES]))
    assert r.warnings == ["no query has a relevant document: the primary AQWV and MQWV are "
                          "undefined (NaN); aqwv_all is reported"]
    # MQWV and the oracle with Eq. 2 over all queries: retrieving nothing is 1 for each
    assert r.metrics["mqwv"] == pytest.approx(1.0)
    assert r.metrics["oracle_qwv"] == pytest.approx(1.0)
    assert r.counts["queries_with_relevant"] == 0 and r.counts["queries_without_relevant"] == 3


# ---------------------------------------------------------------------------
# Reading a submission

def test_a_submission_needs_the_reference_pack(tmp_path, pack):
    with pytest.raises(InvalidInput) as e:
        get("material-clir").load_submission(system(tmp_path))
    assert [str(p) for p in e.value.problems] == [
        "<arguments>: reference: material-clir needs --reference PACK: the collection's "
        "document list is part of the reference pack"]


def test_member_problems_name_the_archive_member(pack, tmp_path):
    members = [(f"{q}.tsv", t.encode()) for q, t in SYSTEM.items() if q != "query2"]
    arc = tgz(tmp_path, members + [("extra.tsv", b"x"), ("deep/query2.tsv", b"x")])
    with pytest.raises(InvalidInput) as e:
        get("material-clir").validate(arc, reference=pack)
    assert [str(p) for p in e.value.problems] == [
        f"{arc}!extra.tsv: member: unexpected file: not <query>.tsv for a query of the pack",
        f"{arc}!deep/query2.tsv: member: files must be at the archive root (plan 8.2.1.3)",
        f"{arc}: file: 1 file is missing: 'query2.tsv'"]
    sub = folder(tmp_path, {"1A.tsv": output([1] * 6, ["1.0"] * 6)})
    with pytest.raises(InvalidInput) as e:
        get("material-langid").validate(sub / "nowhere", reference=pack)
    assert [str(p) for p in e.value.problems] == [f"{sub / 'nowhere'}: file: does not exist"]


def test_several_missing_files_are_one_problem_and_a_full_list_stops_the_count(pack, tmp_path):
    with pytest.raises(InvalidInput) as e:
        get("material-clir").validate(folder(tmp_path, {"query2.tsv": SYSTEM["query2"]}),
                                      reference=pack)
    assert [str(p) for p in e.value.problems] == [
        f"{tmp_path / 'sub'}: file: 2 files are missing: 'query1.tsv', 'query3.tsv'"]
    # 100 problems (unexpected files, read first in name order): reading stops, and the
    # unread files are not called missing
    extra = {f"a{i:03d}.tsv": "x" for i in range(100)}
    sub = folder(tmp_path, {**extra, "query1.tsv": SYSTEM["query1"]}, "full")
    with pytest.raises(InvalidInput) as e:
        get("material-clir").validate(sub, reference=pack)
    assert e.value.total == 100
    assert [str(p) for p in e.value.problems] == [
        f"{sub / n}: member: unexpected file: not <query>.tsv for a query of the pack"
        for n in extra]
    # 99 unexpected files: all are read, and the missing ones are the 101st problem
    del extra["a099.tsv"]
    sub = folder(tmp_path, {**extra, "query1.tsv": SYSTEM["query1"]}, "almost")
    with pytest.raises(InvalidInput) as e:
        get("material-clir").validate(sub, reference=pack)
    assert e.value.total == 100
    assert str(e.value.problems[-1]) == f"{sub}: file: 2 files are missing: 'query2.tsv', " \
                                        f"'query3.tsv'"


def test_archive_name_fields_become_a_warning(pack, tmp_path):
    members = [(f"{q}.tsv", t.encode()) for q, t in SYSTEM.items()]
    arc = tgz(tmp_path, members, "NIST_CLIR-primary-unconstrained-QUERY1-QUERY2-sys1_EVAL1-1A-"
                                 "DEV_20181113_225652.tgz")
    w = get("material-clir").validate(arc, reference=pack)
    assert w == ["archive name: team=NIST, task=CLIR, type=primary, condition=unconstrained, "
                 "set=QUERY1-QUERY2, sys=sys1, period=EVAL1, lang=1A, dataset=DEV, "
                 "date=20181113, time=225652"]
    # a web upload's name (<SysLabel>.tgz) says nothing to check
    plain = tgz(tmp_path, members, "MySystem1.tgz")
    assert get("material-clir").validate(plain, reference=pack) == []


def test_pack_limits_take_only_the_archive_limits_as_integers(pack):
    (pack / "pack.yaml").write_text("language: 1A\nlimits: {max_files: '7', max_bytes: 900, "
                                    "colour: red}\n")
    p = Problems()
    limits = pack_limits(read_pack(pack, p))
    assert limits == Limits(max_files=7, max_bytes=900)
    (pack / "pack.yaml").write_text("language: 1A\n")
    assert pack_limits(read_pack(pack, p)) == Limits()
    assert list(iter_submission_files(pack / "nope", p)) == []
    assert [str(x) for x in p.items] == [f"{pack / 'nope'}: file: does not exist"]


def test_a_missing_or_malformed_reference_file_is_a_problem(pack, tmp_path):
    (pack / "clir" / "query3.tsv").unlink()
    with pytest.raises(InvalidInput) as e:
        get("material-clir").score(pack, system(tmp_path))
    assert [str(p) for p in e.value.problems] == [
        f"{pack / 'clir' / 'query3.tsv'}: file: the pack has no reference for query3"]
    (pack / "clir" / "query3.tsv").write_text(f"{DOCS[0]}\tY\n{DOCS[1]}\tmaybe\n")
    with pytest.raises(InvalidInput) as e:
        get("material-clir").score(pack, system(tmp_path, "sub2"))
    assert [(p.file, p.line) for p in e.value.problems] == [(str(pack / "clir" / "query3.tsv"), 2)]


def test_an_unlisted_reference_document_is_not_relevant(pack, tmp_path):
    # query3's reference lists only its relevant document: the others count N
    (pack / "clir" / "query3.tsv").write_text(f"{DOCS[4]}\tY\n")
    r = get("material-clir").score(pack, system(tmp_path))
    assert r.breakdowns["per_query"]["query3"]["n_relevant"] == 1
    assert r.metrics["aqwv"] == pytest.approx(oracle(QUERIES, REL, DECISIONS, 20.0)[0])


# ---------------------------------------------------------------------------
# DomainID and LangID

def test_domainid_rows_pooled_metrics_and_counts_by_hand(pack, tmp_path):
    non_cs = DOCS[:5]
    # GOV (reference docs 0, 2): says Y on 0, 1 -> X1 1, X2 1, X3 1, X4 2
    # MIL (reference doc 1): says Y on nothing -> X1 0, X2 1, X3 0, X4 4
    gov = output([1, 1, 0, 0, 0], ["0.9"] * 5, non_cs)
    mil = output([0] * 5, ["0.1"] * 5, non_cs)
    r = get("material-domainid").score(pack, folder(tmp_path, {"GOV.tsv": gov, "MIL.tsv": mil}))
    assert r.breakdowns == {"per_domain": {
        "GOV": {"x1": 1, "x2": 1, "x3": 1, "x4": 2, "x1_fraction": 0.5, "x2_fraction": 0.5,
                "x3_fraction": 0.5, "x4_fraction": 1.0},
        "MIL": {"x1": 0, "x2": 1, "x3": 0, "x4": 4, "x1_fraction": 0.0, "x2_fraction": 1.0,
                "x3_fraction": 0.0, "x4_fraction": 4.0}}}
    # pooled: X1 1, X2 2, X3 1, X4 6; fractions of X1 + X2 = 3
    assert r.metrics == pytest.approx({"detected": 1 / 3, "missed": 2 / 3,
                                       "false_alarms": 1 / 3, "correct_rejections": 2.0})
    assert r.counts == {"domains": 2, "documents_scored": 5, "x1": 1, "x2": 2, "x3": 1, "x4": 6}
    assert r.warnings == [] and r.task == "material-domainid"


def test_langid_scores_every_document_and_a_fraction_without_truth_is_0(pack, tmp_path):
    (pack / "langid" / "1B.tsv").write_text("".join(f"{d}\tN\n" for d in DOCS))
    one_a = output([1, 1, 1, 1, 0, 1], ["1.0"] * 6)          # misses doc 4 of 6
    one_b = output([0, 0, 1, 0, 0, 0], ["0.5"] * 6)          # nothing to find, 1 false alarm
    r = get("material-langid").score(pack, folder(tmp_path, {"1A.tsv": one_a, "1B.tsv": one_b}))
    assert r.breakdowns["per_language"] == {
        "1A": {"x1": 5, "x2": 1, "x3": 0, "x4": 0, "x1_fraction": 5 / 6,
               "x2_fraction": 1 / 6, "x3_fraction": 0.0, "x4_fraction": 0.0},
        "1B": {"x1": 0, "x2": 0, "x3": 1, "x4": 5, "x1_fraction": 0.0, "x2_fraction": 0.0,
               "x3_fraction": 0.0, "x4_fraction": 0.0}}
    assert r.metrics == pytest.approx({"detected": 5 / 6, "missed": 1 / 6,
                                       "false_alarms": 1 / 6, "correct_rejections": 5 / 6})
    # the CS document counts for LangID
    assert r.counts == {"languages": 2, "documents_scored": 6, "x1": 5, "x2": 1, "x3": 1,
                        "x4": 5}


def test_identification_without_reference_files_warns(pack, tmp_path):
    for p in (pack / "langid").iterdir():
        p.unlink()
    r = get("material-langid").score(pack, folder(tmp_path, {}))
    assert r.warnings == ["the pack has no langid/ reference files"]
    assert r.metrics == {"detected": 0.0, "missed": 0.0, "false_alarms": 0.0,
                         "correct_rejections": 0.0}
    assert r.counts["languages"] == 0 and r.breakdowns == {"per_language": {}}


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
        "clir_aqwv_at_e2e_beta": pytest.approx(1 - ((0.5 + 0) / 2 + b * (1 / 4) / 3))}
    assert r.counts["summaries"] == 3 and r.counts["unjudged_summaries"] == 0
    assert r.counts["judged_pairs"] == 3
    assert r.counts["judges_per_pair"] == pytest.approx((3 + 3 + 2) / 3)
    assert r.counts["judge_threshold"] == 0.5 and r.counts["beta"] == b
    assert r.counts["queries"] == 3 and r.conventions["beta"] == b
    assert r.breakdowns["per_domain"]["Physical-And-Mental-Health"] == {
        "aqwv": pytest.approx(0.5), "aqwv_raw": pytest.approx(qv_raw[0]), "queries": 1}
    assert r.breakdowns["per_domain"]["Lifestyle"] == {"aqwv": 0.0, "aqwv_raw": 0.5,
                                                       "queries": 1}
    assert r.warnings == []


def test_e2e_unjudged_summaries_count_as_not_relevant(tmp_path):
    from tests.tasks.test_material_e2e import submission_files
    pack = _e2e_pack(tmp_path)
    own = tmp_path / "votes.tsv"                 # --judgments: query3's summary unjudged
    own.write_text(f"query_id\tdoc_id\tjudge\trelevant\nquery1\t{DOCS[0]}\tj0\tY\n"
                   f"query1\t{DOCS[2]}\tj0\tY\n")
    r = get("material-e2e").score(pack, folder(tmp_path, submission_files()),
                                  judgments=str(own), judge_threshold=0.0)
    assert r.counts["unjudged_summaries"] == 1 and r.counts["judged_pairs"] == 2
    assert r.counts["judges_per_pair"] == 1.0 and r.counts["judge_threshold"] == 0.0
    assert r.warnings == ["1 summaries have no judgments: counted as judged not relevant"]
    q1, q3 = r.breakdowns["per_query"]["query1"], r.breakdowns["per_query"]["query3"]
    assert (q1["x1"], q1["x3"], q1["x1_raw"], q1["x3_raw"]) == (1.0, 1.0, 1.0, 1.0)
    assert (q3["x1"], q3["x2"], q3["x1_raw"]) == (0.0, 1.0, 0.0)


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


def test_a_folder_submission_refuses_links_and_keeps_the_packs_limits(pack, tmp_path):
    sub = system(tmp_path)
    (sub / "query9.tsv").symlink_to(sub / "query1.tsv")
    with pytest.raises(InvalidInput) as e:
        get("material-clir").validate(sub, reference=pack)
    assert [str(p) for p in e.value.problems] == [
        f"{sub / 'query9.tsv'}: member: links are not allowed"]
    (sub / "query9.tsv").unlink()
    (pack / "pack.yaml").write_text("language: 1A\nlimits: {max_files: 2}\n")
    with pytest.raises(InvalidInput) as e:
        get("material-clir").validate(sub, reference=pack)
    assert [str(p) for p in e.value.problems] == [
        f"{sub}: submission: exceeds the size or file-count limit"]


def test_a_reference_the_fast_scanner_passes_on_reads_the_same_by_lines(pack, tmp_path):
    """CRLF line ends, a blank line, a repeated line and no final newline are left to the
    line reader; the relevance it reads is the same."""
    fast = get("material-clir").score(pack, system(tmp_path, "a"))
    lines = [f"{d}\t{'Y' if i in REL['query1'] else 'N'}" for i, d in enumerate(DOCS)]
    (pack / "clir" / "query1.tsv").write_text("\r\n".join(lines) + "\r\n\r\n")
    (pack / "clir" / "query3.tsv").write_text(f"{DOCS[4]}\tY\n{DOCS[4]}\tY")
    slow = get("material-clir").score(pack, system(tmp_path, "b"))
    assert slow.breakdowns["per_query"] == fast.breakdowns["per_query"]
    assert slow.metrics == fast.metrics


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


def test_e2e_beta_override_plot_and_several_unjudged(tmp_path):
    from tests.tasks.test_material_e2e import submission_files
    pack = _e2e_pack(tmp_path, votes=(("query1", 0, [1]),))
    png = tmp_path / "det.png"
    r = get("material-e2e").score(pack, folder(tmp_path, submission_files()), beta=30.0,
                                  plot=str(png))
    assert r.counts["beta"] == 30.0 == r.conventions["beta"]
    # query1 keeps doc 0 (judged), doc 2 and query3's doc 4 are unjudged: not relevant
    assert r.counts["unjudged_summaries"] == 2
    assert r.warnings == ["2 summaries have no judgments: counted as judged not relevant"]
    assert r.metrics["aqwv"] == pytest.approx(1 - (0.5 + 1.0) / 2)
    assert r.metrics["clir_aqwv_at_e2e_beta"] == pytest.approx(1 - (0.5 / 2 + 30.0 * 0.25 / 3))
    assert png.read_bytes()[:4] == b"\x89PNG"
