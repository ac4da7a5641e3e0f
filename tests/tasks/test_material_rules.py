"""The MATERIAL rules of docs/material.md, each on a case where breaking the rule changes
a number or a field: the three AQWV variants and their breakdown rows recomputed by a
small oracle written from the plan's Eq. 1-3, beta from the pack's language, DomainID
and LangID counts by hand, and the reader's file:line problems compared whole (E2E:
test_material_e2e_rules.py)."""
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
        p_fa = len(y - r) / (n_docs - len(r)) if n_docs > len(r) else 0.0  # no non-relevant document
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
                        "documents": 6, "beta": 20.0, "mqwv_threshold": 0.9,
                        "open_queries": 0, "closed_queries": 3}
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
    # documents.tsv gives genres (text, CS) and so modes (text, speech): test_material_groups.py
    assert set(r.breakdowns) == {"per_query", "per_genre", "per_mode", *groups}
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
