"""MATERIAL tasks on a hand-built pack: scores, strict validation, hostile archives."""
import io
import json
import tarfile

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from shareval.formats.archive import Limits, parse_archive_name, read_tgz
from shareval.formats.errors import InvalidInput, Problems
from shareval.formats.material import parse_query
from shareval.plots import save_figure
from shareval.tasks import get

DOCS = [f"MATERIAL_EVAL1-1A_{i:08d}" for i in range(1, 7)]      # the last one is CS
REL = {"query1": {0, 1}, "query2": set(), "query3": {4}}
DOMAINS = {"GOV": {0, 2}, "MIL": {1}}


def make_pack(root):
    root.mkdir()
    (root / "pack.yaml").write_text("language: 1A\neval_period: EVAL1\ndocid_pattern: true\n")
    (root / "documents.tsv").write_text(
        "doc_id\tgenre\n" + "".join(f"{d}\t{'CS' if i == 5 else 'text'}\n" for i, d in enumerate(DOCS)))
    (root / "queries.tsv").write_text(
        "query_id\tquery\ttype\nquery1\tebola:Physical-And-Mental-Health\tlexical\n"
        'query2\t"panel of judges":Government-And-Politics\tconceptual\n'
        "query3\tmusic:Lifestyle\tlexical\n")
    for sub, refs in (("clir", REL), ("domainid", DOMAINS), ("langid", {"1A": set(range(6))})):
        (root / sub).mkdir()
        for name, rel in refs.items():
            (root / sub / f"{name}.tsv").write_text(
                "".join(f"{d}\t{'Y' if i in rel else 'N'}\n" for i, d in enumerate(DOCS)))
    return root


def output(decisions, confs, docs=DOCS):
    return "".join(f"{d}\t{'Y' if y else 'N'}\t{c}\n" for d, y, c in zip(docs, decisions, confs))


# query1 finds doc 0 and a false alarm on doc 2; query2 (no relevant) retrieves nothing;
# query3 misses doc 4
SYSTEM = {
    "query1": output([1, 0, 1, 0, 0, 0], ["0.9", "0.4", "0.8", "0.1", "0.0", "0.2"]),
    "query2": output([0] * 6, ["0.1", "0.2", "0.3", "0.0", "0.05", "0.0"]),
    "query3": output([0] * 6, ["0.3", "0.2", "0.1", "0.0", "0.45", "0.0"]),
}


@pytest.fixture
def pack(tmp_path):
    return make_pack(tmp_path / "pack")


def folder(tmp_path, files, name="sub"):
    d = tmp_path / name
    d.mkdir()
    for fname, text in files.items():
        p = d / fname
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text) if isinstance(text, str) else p.write_bytes(text)
    return d


def tgz(tmp_path, members, name="sub.tgz"):
    path = tmp_path / name
    with tarfile.open(path, "w:gz") as tar:
        for m, data in members:
            if isinstance(m, str):
                m = tarfile.TarInfo(m)
                m.size = len(data)
            tar.addfile(m, io.BytesIO(data) if data is not None else None)
    return path


def test_clir_scores_equal_hand_computation(pack, tmp_path):
    sub = folder(tmp_path, {f"{q}.tsv": t for q, t in SYSTEM.items()})
    r = get("material-clir").score(pack, sub)
    assert save_figure(r, tmp_path / "det.png").read_bytes()[:4] == b"\x89PNG"
    beta = 20.0
    p_miss = {"query1": 0.5, "query2": 0.0, "query3": 1.0}
    p_fa = {"query1": 1 / 4, "query2": 0.0, "query3": 0.0}
    qv = {q: 1 - (p_miss[q] + beta * p_fa[q]) for q in p_miss}
    assert r.metrics["aqwv_all"] == pytest.approx(np.mean(list(qv.values())))
    assert r.metrics["aqwv_with_relevant"] == pytest.approx((qv["query1"] + qv["query3"]) / 2)
    assert r.metrics["aqwv"] == pytest.approx(1 - ((0.5 + 1.0) / 2 + beta * (0.25 / 3)))
    # document-weighted (footnotes 5, 25): 2 of the 3 relevant pairs missed, 1 false
    # alarm among the 4 + 6 + 5 = 15 non-relevant pairs: 1 - (2/3 + 20/15) = -1
    assert r.metrics["adwv"] == pytest.approx(-1.0)
    assert "footnotes 5 and 25" in r.conventions["adwv"]
    assert r.counts["queries_without_relevant"] == 1 and r.counts["beta"] == 20.0
    assert r.breakdowns["per_query"]["query2"]["qv"] == 1.0
    assert set(r.breakdowns["per_type"]) == {"lexical", "conceptual"}
    assert r.breakdowns["per_domain"]["Lifestyle"]["aqwv"] == pytest.approx(0.0)
    assert r.breakdowns["per_word_count"]["3"]["queries"] == 1
    # MQWV: one global threshold over the pairs sorted by confidence; with Eq. 3 weights a hit
    # gains 1/(2 N_rel) and a false alarm costs beta/(3 N_nonrel): 0.9 (q1 hit, +1/4) is the
    # best prefix, since 0.8 (q1 false alarm, -20/12) follows. The oracle picks per query:
    # q1 stops after 0.9 (+1/4), q3's first pair 0.45 is its hit (+1/2), q2 takes nothing.
    assert r.metrics["mqwv"] == pytest.approx(1 / 4) and r.counts["mqwv_threshold"] == 0.9
    assert r.metrics["oracle_qwv"] == pytest.approx(1 / 4 + 1 / 2)
    # ROC AUC over the 3 relevant and 15 non-relevant pairs: 0.9 outranks all 15, 0.45 and
    # 0.4 all but 0.8
    assert r.metrics["roc_auc"] == pytest.approx((15 + 14 + 14) / 45)
    assert r.metrics["p_miss"] == pytest.approx(0.75) and r.metrics["p_fa"] == pytest.approx(0.25 / 3)
    assert (tmp_path / "det.png").read_bytes()[:4] == b"\x89PNG"


def test_tgz_equals_folder_and_beta_override(pack, tmp_path):
    sub = folder(tmp_path, {f"{q}.tsv": t for q, t in SYSTEM.items()})
    arc = tgz(tmp_path, [(f"./{q}.tsv", t.encode()) for q, t in SYSTEM.items()])
    a = get("material-clir").score(pack, sub).metrics
    b = get("material-clir").score(pack, arc).metrics
    assert a == b
    c = get("material-clir").score(pack, arc, beta=40.0)
    assert c.counts["beta"] == 40.0
    assert c.metrics["aqwv"] == pytest.approx(1 - ((0.5 + 1.0) / 2 + 40.0 * (0.25 / 3)))


def test_every_format_problem_is_listed(pack, tmp_path):
    bad = ("MATERIAL_EVAL1-1A_00000001\tY\t0.9\r\n"        # CR
           "MATERIAL_EVAL1-1A_00000002\tX\t0.5\n"          # decision
           "MATERIAL_EVAL1-1A_00000003\tN\t1\n"            # no decimal point
           "MATERIAL_EVAL1-1A_00000004\tN\t0.543211\n"     # six decimals
           "MATERIAL_EVAL1-1A_00000005\tN\t5.0e-2\n"       # exponent
           "MATERIAL_EVAL1-1A_00000003\tN\t0.5\n"          # duplicate
           "MATERIAL_EVAL1-1A_0000009\tN\t1.5\n"           # bad DocID, cf > 1
           "MATERIAL_EVAL1-1A_00000006\tN\n")              # 2 fields
    sub = folder(tmp_path, {"query1.tsv": bad, "query2.tsv": SYSTEM["query2"], "extra.tsv": "x",
                            "nested/query3.tsv": SYSTEM["query3"]})
    with pytest.raises(InvalidInput) as e:
        get("material-clir").validate(sub, reference=pack)
    msgs = [str(p) for p in e.value.problems]
    f = sub / "query1.tsv"
    # every problem, in reading order: the folder's members by name, then the missing file
    assert msgs == [
        f"{sub / 'extra.tsv'}: member: unexpected file: not <query>.tsv for a query of the pack",
        f"{sub / 'nested' / 'query3.tsv'}: member: files must be at the archive root "
        f"(plan 8.2.1.3)",
        f"{f}:1: line: ends with CR: lines must end with LF only",
        f"{f}:2: HardDecision: expected Y or N, found 'X'",
        f"{f}:3: ConfidenceFactor: '1': one digit, a point and 1 to 5 digits, no exponent (plan 7.4)",
        f"{f}:4: ConfidenceFactor: '0.543211': one digit, a point and 1 to 5 digits, no exponent (plan 7.4)",
        f"{f}:5: ConfidenceFactor: '5.0e-2': one digit, a point and 1 to 5 digits, no exponent (plan 7.4)",
        f"{f}:6: DocID: 'MATERIAL_EVAL1-1A_00000003': duplicate (first at line 3)",
        f"{f}:7: DocID: 'MATERIAL_EVAL1-1A_0000009': does not match ^MATERIAL_EVAL1-1A_[0-9]{{8}}$",
        f"{f}:7: ConfidenceFactor: '1.5' is above 1.0",
        f"{f}:8: line: expected 3 tab-separated fields (DocID<TAB>Y|N<TAB>confidence), found 2",
        f"{f}: DocID: 1 collection document is missing (one line per document is required): "
        f"'MATERIAL_EVAL1-1A_00000006'",
        f"{sub}: file: 1 file is missing: 'query3.tsv'"]


def test_domainid_counts_and_cs_documents_rejected(pack, tmp_path):
    non_cs = DOCS[:5]
    gov = output([1, 1, 0, 0, 0], ["0.9", "0.6", "0.2", "0.1", "0.1"], non_cs)
    mil = output([0, 1, 0, 0, 0], ["0.1", "0.9", "0.2", "0.1", "0.1"], non_cs)
    r = get("material-domainid").score(pack, folder(tmp_path, {"GOV.tsv": gov, "MIL.tsv": mil}))
    assert r.breakdowns["per_domain"]["GOV"] == {
        "x1": 1, "x2": 1, "x3": 1, "x4": 2, "x1_fraction": 0.5, "x2_fraction": 0.5,
        "x3_fraction": 0.5, "x4_fraction": 1.0}
    assert r.metrics["detected"] == pytest.approx(2 / 3)
    with_cs = gov + f"{DOCS[5]}\tN\t0.0\n"
    with pytest.raises(InvalidInput) as e:
        get("material-domainid").score(pack, folder(tmp_path, {"GOV.tsv": with_cs, "MIL.tsv": mil},
                                                    "sub2"))
    assert [str(p) for p in e.value.problems] == [
        f"{tmp_path / 'sub2' / 'GOV.tsv'}:6: DocID: '{DOCS[5]}': conversational speech documents "
        f"are not scored and must not appear here (plan 7.2.2)"]


def test_langid(pack, tmp_path):
    r = get("material-langid").score(pack, folder(tmp_path, {"1A.tsv": output([1] * 6, ["1.0"] * 6)}))
    # every document is 1A, and every one is detected, the CS one too
    assert r.breakdowns["per_language"] == {"1A": {
        "x1": 6, "x2": 0, "x3": 0, "x4": 0, "x1_fraction": 1.0, "x2_fraction": 0.0,
        "x3_fraction": 0.0, "x4_fraction": 0.0}}
    assert r.metrics == {"detected": 1.0, "missed": 0.0, "false_alarms": 0.0,
                         "correct_rejections": 0.0}
    assert r.counts == {"languages": 1, "documents_scored": 6, "x1": 6, "x2": 0, "x3": 0, "x4": 0}


@pytest.mark.parametrize("member,message", [
    ("../evil.tsv", "absolute or parent-relative path is not allowed"),
    ("/etc/evil.tsv", "absolute or parent-relative path is not allowed"),
    ("inner.tgz", "nested archives are not allowed"),
])
def test_hostile_member_names(tmp_path, member, message):
    arc = tgz(tmp_path, [(member, b"x")])
    probs = Problems()
    read_tgz(arc, probs)
    assert [str(p) for p in probs.items] == [f"{arc}!{member}: member: {message}"]


def test_links_devices_and_bombs(tmp_path):
    link = tarfile.TarInfo("query1.tsv")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    hard = tarfile.TarInfo("query2.tsv")
    hard.type, hard.linkname = tarfile.LNKTYPE, "query1.tsv"
    dev = tarfile.TarInfo("dev")
    dev.type = tarfile.CHRTYPE
    arc = tgz(tmp_path, [(link, None), (hard, None), (dev, None)])
    probs = Problems()
    read_tgz(arc, probs)
    assert [str(p) for p in probs.items] == [
        f"{arc}!query1.tsv: member: links are not allowed",
        f"{arc}!query2.tsv: member: links are not allowed",
        f"{arc}!dev: member: only regular files are allowed (no devices, fifos or special files)"]
    bomb = tgz(tmp_path, [("query1.tsv", b"0" * 5_000_000)], "bomb.tgz")
    assert bomb.stat().st_size < 50_000                      # compresses ~1000:1
    probs = Problems()
    assert read_tgz(bomb, probs, Limits(max_bytes=10**6, max_member_bytes=10**6)) is None
    assert [str(p) for p in probs.items] == [
        f"{bomb}!query1.tsv: member: larger than 1000000 bytes (limit)"]
    many = tgz(tmp_path, [(f"f{i}.tsv", b"x") for i in range(5)], "many.tgz")
    probs = Problems()
    assert read_tgz(many, probs, Limits(max_files=3)) is None
    assert [str(p) for p in probs.items] == [f"{many}: archive: more than 3 files (limit)"]


def test_not_an_archive(tmp_path, pack):
    junk = tmp_path / "junk.tgz"
    junk.write_bytes(b"not gzip")
    with pytest.raises(InvalidInput) as e:
        get("material-clir").score(pack, junk)
    assert [str(p) for p in e.value.problems] == [
        f"{junk}: archive: not a readable .tgz archive (not a gzip file)"]


def test_archive_names():
    d = parse_archive_name("NIST_DomainID-contrastive-unconstrained-GOV-MIL-BUS-LAW-mybestsystem"
                           "_BASE-1S-EVAL1EVAL2_20181113_225652.tgz")
    assert d["team"] == "NIST" and d["task"] == "DomainID" and d["type"] == "contrastive"
    assert d["set"] == ["GOV", "MIL", "BUS", "LAW"] and d["sys"] == "mybestsystem"
    assert (d["period"], d["lang"], d["dataset"]) == ("BASE", "1S", "EVAL1EVAL2")
    assert d["syslabel"] == "mybestsystem"
    assert parse_archive_name("MySystem1.tgz") == {"sys": "MySystem1", "syslabel": "MySystem1"}
    assert "neither" in parse_archive_name("my system.zip")


def test_query_syntax():
    assert parse_query("music:Lifestyle") == ("music", "Lifestyle")
    assert parse_query("ebola:Physical-And-Mental-Health") == ("ebola", "Physical-And-Mental-Health")
    assert parse_query('"panel of judges",bribing+:Government-And-Politics')[1] == \
        "Government-And-Politics"
    assert parse_query("caf\u00e9!:Lifestyle") == \
        "query string has characters outside the plan's set (7.1): '!\u00e9'"
    assert parse_query("music:lifestyle") == ("domain 'lifestyle' must be capitalised words "
                                              "joined by hyphens, e.g. Physical-And-Mental-Health")
    assert parse_query("music") == "expected QueryString:Domain"


def test_cli_json(pack, tmp_path, cli):
    arc = tgz(tmp_path, [(f"{q}.tsv", t.encode()) for q, t in SYSTEM.items()])
    code, out, err = cli("score", "material-clir", "-r", pack, "-s", arc, "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    # as in test_clir_scores_equal_hand_computation: beta 20 (1A); P_miss 1/2, 0, 1 and
    # P_FA 1/4, 0, 0 for query1..3; document-weighted 1 - (2/3 + 20 * 1/15)
    beta = 20.0
    qv = [1 - (0.5 + beta / 4), 1.0, 0.0]
    assert d["metrics"]["aqwv"] == pytest.approx(1 - ((0.5 + 1.0) / 2 + beta * (0.25 / 3)))
    assert d["metrics"]["aqwv_all"] == pytest.approx(sum(qv) / 3)
    assert d["metrics"]["aqwv_with_relevant"] == pytest.approx((qv[0] + qv[2]) / 2)
    assert d["metrics"]["adwv"] == pytest.approx(-1.0)
    assert [d["breakdowns"]["per_query"][q]["qv"] for q in ("query1", "query2", "query3")] == \
        pytest.approx(qv)
    assert d["counts"]["beta"] == beta and d["counts"]["queries_without_relevant"] == 1
    code, out, err = cli("validate", "material-clir", "-s", arc)
    assert code == 2 and out == ""
    assert "<arguments>: reference: material-clir needs --reference PACK: the collection's " \
           "document list is part of the reference pack" in err.splitlines()


def test_archive_name_must_match_task_and_language(pack, tmp_path):
    members = [(f"{q}.tsv", t.encode()) for q, t in SYSTEM.items()]
    good = tgz(tmp_path, members, "NIST_CLIR-primary-unconstrained-QUERY1-sys1_EVAL1-1A-DEV_"
                                  "20181113_225652.tgz")
    r = get("material-clir").score(pack, good)
    assert r.warnings == ["archive name: team=NIST, task=CLIR, type=primary, "
                          "condition=unconstrained, set=QUERY1, sys=sys1, period=EVAL1, "
                          "lang=1A, dataset=DEV, date=20181113, time=225652"]
    assert r.metrics["aqwv"] == pytest.approx(1 - ((0.5 + 1.0) / 2 + 20.0 * (0.25 / 3)))
    bad = tgz(tmp_path, members, "NIST_DomainID-primary-unconstrained-GOV-sys1_EVAL1-1S-DEV_"
                                 "20181113_225652.tgz")
    with pytest.raises(InvalidInput) as e:
        get("material-clir").score(pack, bad)
    assert [str(p) for p in e.value.problems] == [
        f"{bad}: archive name: says task DomainID, but this is material-clir",
        f"{bad}: archive name: says language 1S, the pack is 1A"]


def test_limits_come_from_the_pack(pack, tmp_path):
    (pack / "pack.yaml").write_text("language: 1A\nlimits:\n  max_files: 2\n")
    arc = tgz(tmp_path, [(f"{q}.tsv", t.encode()) for q, t in SYSTEM.items()])
    with pytest.raises(InvalidInput) as e:
        get("material-clir").score(pack, arc)
    assert [str(p) for p in e.value.problems] == [f"{arc}: archive: more than 2 files (limit)"]


@st.composite
def random_packs(draw):
    """Relevance and Y/N decisions for a few queries over a small collection."""
    n_docs = draw(st.integers(1, 6))
    n_q = draw(st.integers(1, 4))
    rel = [[draw(st.booleans()) for _ in range(n_docs)] for _ in range(n_q)]
    dec = [[draw(st.booleans()) for _ in range(n_docs)] for _ in range(n_q)]
    return rel, dec


def write_random_pack(root: Path, rel, dec) -> tuple[Path, Path]:
    docs = [f"MATERIAL_EVAL1-1A_{i:08d}" for i in range(1, len(rel[0]) + 1)]
    pack = root / "pack"
    (pack / "clir").mkdir(parents=True)
    (pack / "pack.yaml").write_text("language: 1A\neval_period: EVAL1\ndocid_pattern: true\n")
    (pack / "documents.tsv").write_text("doc_id\tgenre\n" + "".join(f"{d}\ttext\n" for d in docs))
    (pack / "queries.tsv").write_text("query_id\tquery\ttype\n" + "".join(
        f"query{k}\tmusic:Lifestyle\tlexical\n" for k in range(len(rel))))
    sub = root / "sub"
    sub.mkdir()
    for k, (r, y) in enumerate(zip(rel, dec)):
        (pack / "clir" / f"query{k}.tsv").write_text(
            "".join(f"{d}\t{'Y' if v else 'N'}\n" for d, v in zip(docs, r)))
        (sub / f"query{k}.tsv").write_text(output(y, ["0.5"] * len(docs), docs))
    return pack, sub


def brute_adwv(rel, dec, beta):
    """Each (query, document) pair counts once (plan footnote 5)."""
    pairs = [(r, y) for rq, yq in zip(rel, dec) for r, y in zip(rq, yq)]
    n_rel = sum(r for r, _ in pairs)
    n_non = len(pairs) - n_rel
    if not n_rel:
        return None
    miss = sum(1 for r, y in pairs if r and not y)
    fa = sum(1 for r, y in pairs if y and not r)
    return 1 - (miss / n_rel + beta * (fa / n_non if n_non else 0.0))


@settings(max_examples=60, deadline=None)
@given(random_packs())
def test_adwv_equals_brute_force_on_generated_packs(pack_data):
    rel, dec = pack_data
    with tempfile.TemporaryDirectory() as d:
        pack, sub = write_random_pack(Path(d), rel, dec)
        r = get("material-clir").score(pack, sub)
    want = brute_adwv(rel, dec, 20.0)
    if want is None:
        assert r.metrics["adwv"] is None or np.isnan(r.metrics["adwv"])
    else:
        assert r.metrics["adwv"] == pytest.approx(want, abs=1e-9)


def test_free_text_query_columns_are_no_breakdown(tmp_path):
    root = make_pack(tmp_path / "pack")
    lines = (root / "queries.tsv").read_text().splitlines()
    lines = [lines[0] + "\tinstructions"] + [
        f"{line}\tJudge whether the summary is about {k}" for k, line in enumerate(lines[1:])]
    (root / "queries.tsv").write_text("\n".join(lines) + "\n")
    sub = folder(tmp_path, {f"{q}.tsv": t for q, t in SYSTEM.items()})
    r = get("material-clir").score(root, sub)
    assert "per_type" in r.breakdowns and "per_instructions" not in r.breakdowns
