"""MATERIAL open and closed queries (plan 6.4: open queries never count in the official
AQWV), breakdowns by genre and mode, and canonical archive names against pack.yaml's
dataset_name and queryset (plan 8.2.1.2). Values by hand or by the Eq. 1-3 oracle of
test_material_rules.py over the documents of a group."""
import numpy as np
import pytest

from shareval.formats.errors import InvalidInput
from shareval.tasks import get
from tests.tasks.test_material import DOCS, REL, SYSTEM, folder, make_pack, output, tgz
from tests.tasks.test_material_rules import DECISIONS, oracle, same

HEADER = "query_id\tquery\tstatus\n"
QUERY_TEXT = {"query1": "ebola:Physical-And-Mental-Health",
              "query2": '"panel of judges":Government-And-Politics', "query3": "music:Lifestyle"}


def with_status(root, status):
    (root / "queries.tsv").write_text(HEADER + "".join(
        f"{q}\t{QUERY_TEXT[q]}\t{s}\n" for q, s in status.items()))
    return root


def clir_run(tmp_path, queries=tuple(SYSTEM), name="sub"):
    return folder(tmp_path, {f"{q}.tsv": SYSTEM[q] for q in queries}, name)


def test_open_queries_are_reported_apart_and_never_in_the_official_metrics(tmp_path):
    pack = with_status(make_pack(tmp_path / "pack"),
                       {"query1": "open", "query2": "closed", "query3": ""})   # empty = closed
    r = get("material-clir").score(pack, clir_run(tmp_path))
    # closed: query2 (nothing relevant, nothing retrieved: QV 1) and query3 (misses doc 4:
    # P_miss 1, P_FA 0, QV 0)
    assert r.metrics["aqwv"] == pytest.approx(1 - (1.0 + 20 * 0.0))
    assert r.metrics["aqwv_all"] == pytest.approx((1 + 0) / 2)
    assert r.metrics["aqwv_with_relevant"] == pytest.approx(0.0)
    # query3's doc 4 (0.45) tops every other closed pair: a threshold at 0.45 finds it
    assert r.metrics["mqwv"] == pytest.approx(1.0) and r.counts["mqwv_threshold"] == 0.45
    # open: query1 finds 1 of 2, 1 false alarm of 4
    assert r.metrics["open_aqwv"] == pytest.approx(1 - (0.5 + 20 * 0.25))
    assert (r.counts["open_queries"], r.counts["closed_queries"], r.counts["queries"]) == \
        (1, 2, 2)
    assert list(r.breakdowns["per_query"]) == ["query1", "query2", "query3"]
    assert r.breakdowns["per_query"]["query1"]["qv"] == pytest.approx(-4.5)
    assert r.breakdowns["per_status"] == {
        "closed": {"aqwv": pytest.approx(0.0), "aqwv_all": pytest.approx(0.5),
                   "aqwv_with_relevant": pytest.approx(0.0), "queries": 2},
        "open": {"aqwv": pytest.approx(-4.5), "aqwv_all": pytest.approx(-4.5),
                 "aqwv_with_relevant": pytest.approx(-4.5), "queries": 1}}
    assert "status" not in r.breakdowns.get("per_type", {})
    # the official part equals scoring a pack without the open query
    alone = make_pack(tmp_path / "alone")
    with_status(alone, {"query2": "", "query3": ""})
    a = get("material-clir").score(alone, clir_run(tmp_path, ("query2", "query3"), "s2"))
    official = {k: v for k, v in r.metrics.items() if not k.startswith("open_")}
    assert all(same(official[k], v) for k, v in a.metrics.items()) and \
        official.keys() == a.metrics.keys()
    assert r.figure["det"]["p_miss"].tolist() == a.figure["det"]["p_miss"].tolist()


def test_without_open_queries_nothing_is_split(tmp_path):
    pack = make_pack(tmp_path / "pack")
    r = get("material-clir").score(pack, clir_run(tmp_path))
    assert "per_status" not in r.breakdowns and "open_aqwv" not in r.metrics
    assert (r.counts["open_queries"], r.counts["closed_queries"]) == (0, 3)
    primary, _, _, _ = oracle(("query1", "query2", "query3"), REL, DECISIONS, 20.0)
    assert r.metrics["aqwv"] == pytest.approx(primary)


def test_every_query_open_leaves_the_official_metrics_undefined(tmp_path):
    pack = with_status(make_pack(tmp_path / "pack"),
                       {"query1": "open", "query2": "open", "query3": "open"})
    r = get("material-clir").score(pack, clir_run(tmp_path))
    assert np.isnan(r.metrics["aqwv"]) and np.isnan(r.metrics["mqwv"])
    primary, _, _, _ = oracle(("query1", "query2", "query3"), REL, DECISIONS, 20.0)
    assert r.metrics["open_aqwv"] == pytest.approx(primary)
    assert r.warnings == ["every query is open: the official metrics (closed queries only) "
                          "are undefined; open_aqwv is reported"]
    assert list(r.breakdowns["per_status"]) == ["open"] and r.figure == {}


def test_a_status_other_than_open_or_closed_is_refused_with_its_line(tmp_path):
    pack = with_status(make_pack(tmp_path / "pack"),
                       {"query1": "open", "query2": "maybe", "query3": "closed"})
    with pytest.raises(InvalidInput) as e:
        get("material-clir").load_reference(pack)
    assert [str(p) for p in e.value.problems] == [
        f"{pack / 'queries.tsv'}:3: status: expected open or closed (empty = closed), "
        f"found 'maybe'"]


# ---------------------------------------------------------------------------
# Genre and mode

# genres of DOCS 0-5; doc 3's blog is declared speech by the mode column, doc 5's genre
# names no mode
GENRES = [("NW", ""), ("NB", ""), ("TX", ""), ("BC", "speech"), ("NB", ""), ("ZZ", "")]


def genre_pack(tmp_path):
    root = make_pack(tmp_path / "pack")
    (root / "documents.tsv").write_text("doc_id\tgenre\tmode\n" + "".join(
        f"{d}\t{g}\t{m}\n" for d, (g, m) in zip(DOCS, GENRES)))
    return root


def restricted(docs):
    """REL and DECISIONS on the documents ``docs``, renumbered 0..len-1."""
    pos = {d: k for k, d in enumerate(sorted(docs))}
    return ({q: {pos[d] for d in r if d in pos} for q, r in REL.items()},
            {q: {pos[d] for d in y if d in pos} for q, y in DECISIONS.items()})


def test_clir_per_mode_and_per_genre_over_their_documents_only(tmp_path):
    r = get("material-clir").score(genre_pack(tmp_path), clir_run(tmp_path))
    modes = r.breakdowns["per_mode"]
    # text = docs 0 (NW) and 2 (TX): query1 finds doc 0, doc 2 is its one non-relevant
    # document (P_FA 1, QV -19); query2 and query3 have nothing relevant there (QV 1)
    assert modes["text"] == {"aqwv": pytest.approx(1 - 20 * (1 / 3)),
                             "aqwv_all": pytest.approx((-19 + 1 + 1) / 3),
                             "aqwv_with_relevant": pytest.approx(-19.0), "documents": 2,
                             "queries_with_relevant": 1}
    # speech = docs 1 (NB), 3 (BC, by the mode column), 4 (NB): query1 misses doc 1 and
    # query3 doc 4 (QV 0 each), no false alarm
    assert modes["speech"] == {"aqwv": pytest.approx(0.0), "aqwv_all": pytest.approx(1 / 3),
                               "aqwv_with_relevant": pytest.approx(0.0), "documents": 3,
                               "queries_with_relevant": 2}
    assert list(modes) == ["speech", "text"]                  # doc 5 (ZZ) has no mode
    genres = {"BC": {3}, "NB": {1, 4}, "NW": {0}, "TX": {2}, "ZZ": {5}}
    assert list(r.breakdowns["per_genre"]) == sorted(genres)
    for g, docs in genres.items():
        rel, dec = restricted(docs)
        primary, all_, wr, _ = oracle(tuple(REL), rel, dec, 20.0, n_docs=len(docs))
        row = r.breakdowns["per_genre"][g]
        assert same(row["aqwv"], primary) and same(row["aqwv_all"], all_), g
        assert same(row["aqwv_with_relevant"], wr) and row["documents"] == len(docs), g


def test_e2e_per_mode_by_hand(tmp_path):
    from tests.tasks.test_material_e2e import submission_files
    from tests.tasks.test_material_e2e_rules import E2E_BETA, _e2e_pack
    pack = _e2e_pack(tmp_path)
    (pack / "documents.tsv").write_text("doc_id\tgenre\tmode\n" + "".join(
        f"{d}\t{g}\t{m}\n" for d, (g, m) in zip(DOCS, GENRES)))
    r = get("material-e2e").score(pack, folder(tmp_path, submission_files()))
    b = E2E_BETA
    # Y: query1 docs 0 (relevant, 3/3 judges) and 2 (1/3), query3 doc 4 (relevant, 1/2)
    # text (docs 0, 2): query1 keeps doc 0 and loses the false alarm (binary); raw keeps
    # 1/3 of it among query1's one non-relevant text document
    assert r.breakdowns["per_mode"]["text"] == {
        "aqwv": pytest.approx(1.0), "aqwv_raw": pytest.approx(1 - b * (1 / 3) / 3),
        "documents": 2}
    # speech (docs 1, 3, 4): query1 misses doc 1; query3's doc 4 is a tie (binary: missed,
    # raw: half found)
    assert r.breakdowns["per_mode"]["speech"] == {
        "aqwv": pytest.approx(0.0), "aqwv_raw": pytest.approx(1 - (1 + 0.5) / 2),
        "documents": 3}
    assert r.breakdowns["per_genre"]["NW"]["aqwv"] == pytest.approx(1.0)


def test_a_mode_other_than_text_or_speech_is_refused_with_its_line(tmp_path):
    root = make_pack(tmp_path / "pack")
    (root / "documents.tsv").write_text(
        "doc_id\tgenre\tmode\n" + "".join(f"{d}\tNW\t{'video' if i == 1 else ''}\n"
                                          for i, d in enumerate(DOCS)))
    with pytest.raises(InvalidInput) as e:
        get("material-clir").load_reference(root)
    assert [str(p) for p in e.value.problems] == [
        f"{root / 'documents.tsv'}:3: mode: expected text or speech, found 'video'"]


# ---------------------------------------------------------------------------
# Canonical names against pack.yaml

STAMP = "_EVAL1-1A-{dataset}_20181113_225652.tgz"


def test_canonical_names_must_agree_with_dataset_name_and_queryset(tmp_path):
    pack = make_pack(tmp_path / "pack")
    (pack / "pack.yaml").write_text("language: 1A\neval_period: EVAL1\ndocid_pattern: true\n"
                                    "dataset_name: EVAL1EVAL2\nqueryset: QUERY2QUERY3\n")
    members = [(f"{q}.tsv", t.encode()) for q, t in SYSTEM.items()]
    good = tgz(tmp_path, members, "NIST_CLIR-primary-unconstrained-QUERY2QUERY3-s1" +
               STAMP.format(dataset="EVAL1EVAL2"))
    assert get("material-clir").validate(good, reference=pack)[0].startswith("archive name:")
    bad = tgz(tmp_path, members, "NIST_CLIR-primary-unconstrained-QUERY1-s1" +
              STAMP.format(dataset="DEV"))
    with pytest.raises(InvalidInput) as e:
        get("material-clir").validate(bad, reference=pack)
    assert [str(p) for p in e.value.problems] == [
        f"{bad}: archive name: says dataset DEV, the pack is EVAL1EVAL2",
        f"{bad}: archive name: says query set QUERY1, the pack is QUERY2QUERY3"]
    # a DomainID name lists domains where the query set goes: only the dataset is checked
    non_cs = DOCS[:5]
    dom = tgz(tmp_path, [("GOV.tsv", output([1] * 5, ["0.5"] * 5, non_cs).encode()),
                         ("MIL.tsv", output([0] * 5, ["0.5"] * 5, non_cs).encode())],
              "NIST_DomainID-primary-unconstrained-GOV-MIL-s1" + STAMP.format(dataset="DEV"))
    with pytest.raises(InvalidInput) as e:
        get("material-domainid").validate(dom, reference=pack)
    assert [str(p) for p in e.value.problems] == [
        f"{dom}: archive name: says dataset DEV, the pack is EVAL1EVAL2"]


def test_a_canonical_name_of_another_evaluation_period_is_refused(tmp_path):
    pack = make_pack(tmp_path / "pack")
    (pack / "pack.yaml").write_text("language: 1A\neval_period: EVAL1\ndocid_pattern: true\n")
    members = [(f"{q}.tsv", t.encode()) for q, t in SYSTEM.items()]
    other = tgz(tmp_path, members, "NIST_CLIR-primary-unconstrained-QUERY2-s1"
                "_BASE-1A-DEV_20181113_225652.tgz")
    with pytest.raises(InvalidInput) as e:
        get("material-clir").validate(other, reference=pack)
    assert [str(p) for p in e.value.problems] == [
        f"{other}: archive name: says evaluation period BASE, the pack is EVAL1"]


def test_clir_one_genre_for_every_document_is_the_whole_collection(tmp_path):
    """A group of every document (scored on the full arrays, no copy) equals the totals."""
    root = make_pack(tmp_path / "pack")
    (root / "documents.tsv").write_text("doc_id\tgenre\n" + "".join(f"{d}\tNW\n" for d in DOCS))
    r = get("material-clir").score(root, clir_run(tmp_path))
    row = r.breakdowns["per_genre"]["NW"]
    assert list(r.breakdowns["per_genre"]) == ["NW"] and row["documents"] == len(DOCS)
    for key in ("aqwv", "aqwv_all", "aqwv_with_relevant"):
        assert same(row[key], r.metrics[key]), key
    assert row["queries_with_relevant"] == r.counts["queries_with_relevant"]
