"""The split's rules (docs/records.md, "Public/private split"), each checked so that a
broken rule gives a different answer: the hash assignment recomputed from its written
form, the unit of every family and its file order, the part's unit count in the
result, classification parts against the command line on cut files, and the
restriction being pure (a part shares no list with the loaded input) and composable
(a part of a part is the intersection), for every family."""
from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from shareval.tasks import get
from shareval.tasks.splits import SPLITTERS, private_test, restrict, score_parts, supported, units
from tests.tasks.test_material import DOCS, folder, make_pack, output
from tests.tasks.test_splits import (SPLITS, check_parts, material_queries_pack, rcc_files,
                                     svident_files, trec_files)

WORDS = {"item": "items", "query": "queries", "document": "documents",
         "publication": "publications"}


def written_rule(seed, fraction, unit: str) -> bool:
    """docs/records.md: private when sha256("SEED:UNIT"), its first 8 bytes read as a
    number in [0, 1), is below the fraction (written here from the hex digest)."""
    digest = hashlib.sha256(f"{seed}:{unit}".encode("utf-8")).hexdigest()
    return int(digest[:16], 16) / 16 ** 16 < fraction


def test_the_assignment_is_the_written_hash_rule():
    ids = [f"q{i}" for i in range(400)] + ["21372", "doc 7", "Ä-1"]
    for seed, fraction in ((13, 0.5), (2024, 0.3), ("s", 0.9), (0, 0.05)):
        test = private_test({"fraction": fraction, "seed": seed})
        assert [u for u in ids if test(u)] == [u for u in ids if written_rule(seed, fraction, u)]
    # the byte order matters: read little-endian, these ids would be assigned otherwise
    little = [u for u in ids if int.from_bytes(hashlib.sha256(f"13:{u}".encode()).digest()[:8],
                                               "little") / 2 ** 64 < 0.5]
    assert little != [u for u in ids if private_test({"fraction": 0.5, "seed": 13})(u)]
    # fraction given as a string in a bundle's YAML is read as a number; 0 and 1 are exact
    assert [private_test({"fraction": "0.5", "seed": 13})(u) for u in ids] == \
        [written_rule(13, 0.5, u) for u in ids]
    assert not any(private_test({"fraction": 0, "seed": 1})(u) for u in ids)
    assert all(private_test({"fraction": 1, "seed": 1})(u) for u in ids)


def test_supported_families_are_the_splitters_only():
    for name in SPLITTERS:
        assert supported(name)
    for name in ("program", "rcc-fields-methods", "trec-x", ""):
        assert not supported(name)


# -- the units of every family, in file order -----------------------------------------------

def classification_files(tmp: Path, seed: int, n: int = 30) -> tuple[Path, Path]:
    rng = random.Random(seed)
    items = [f"it{rng.randint(0, 10 ** 6)}-{k}" for k in range(n)]
    true = [rng.choice("abcd") for _ in items]
    pred = [t if rng.random() < 0.6 else rng.choice("abcde") for t in true]
    (tmp / "ref.tsv").write_text("item\tlabel\n" + "".join(f"{i}\t{t}\n"
                                                           for i, t in zip(items, true)))
    order = list(range(n))
    rng.shuffle(order)                        # the run lists the items in another order
    (tmp / "sub.tsv").write_text("item\tlabel\n" + "".join(f"{items[k]}\t{pred[k]}\n"
                                                           for k in order))
    return tmp / "ref.tsv", tmp / "sub.tsv"


def test_units_are_each_familys_unit_in_file_order(tmp_path):
    ref, _ = classification_files(tmp_path, 1)
    rows = [ln.split("\t")[0] for ln in ref.read_text().splitlines()[1:]]
    assert units(get("classification"), str(ref)) == rows

    qrels, _ = trec_files(tmp_path, 3)
    first = list(dict.fromkeys(ln.split()[0] for ln in qrels.read_text().splitlines()))
    assert units(get("trec"), str(qrels)) == first
    assert len(first) < 40                    # run-only queries are no units of the qrels

    sv, _, _ = svident_files(tmp_path, 2)
    lines = sv.read_text().splitlines()
    col = lines[0].split("\t").index("doc_id")
    docs = list(dict.fromkeys(ln.split("\t")[col] for ln in lines[1:]))
    for task in ("svident-detection", "svident-disambiguation"):
        assert units(get(task), str(sv)) == docs

    (tmp_path / "rcc").mkdir()
    folder_ref, file_ref, _, _ = rcc_files(tmp_path / "rcc", 4)
    pubs = [str(p) for p in range(50)]       # publications.json, citing or not
    assert units(get("rcc-citations"), str(folder_ref)) == pubs
    cited = list(dict.fromkeys(str(c["publication_id"])
                               for c in json.loads(file_ref.read_text())))
    assert units(get("rcc-citations"), str(file_ref)) == cited    # without publications.json
    assert len(cited) < 50

    (tmp_path / "m").mkdir()
    pack, _ = material_queries_pack(tmp_path / "m", 1)
    assert units(get("material-clir"), str(pack)) == [f"query{k}" for k in range(16)]
    ipack = make_pack(tmp_path / "ipack")
    assert units(get("material-langid"), str(ipack)) == DOCS
    assert units(get("material-domainid"), str(ipack)) == DOCS[:5]   # DOCS[5] is CS


def test_units_of_a_file_read_by_pyarrow_are_plain_strings_in_file_order(tmp_path, monkeypatch):
    from shareval.formats import trec
    monkeypatch.setattr(trec, "SMALL_FILE_BYTES", 1 << 18)        # this file takes pyarrow
    rng = random.Random(5)
    qids = [f"t{rng.randint(0, 10 ** 6)}" for _ in range(300)]
    qids = list(dict.fromkeys(qids))
    (tmp_path / "qrels").write_text("".join(f"{q} 0 d{d} {rng.choice((0, 1))}\n" for q in qids
                                            for d in rng.sample(range(400), 60)))
    assert (tmp_path / "qrels").stat().st_size > 1 << 18    # above the small-file size
    got = units(get("trec"), str(tmp_path / "qrels"))
    assert got == qids and all(type(u) is str for u in got)


# -- the result says which part and how many units -------------------------------------------

def part_counts(task: str, ref, split: dict) -> tuple[int, int]:
    test = private_test(split)
    every = units(get(task), str(ref))
    n = sum(test(u) for u in every)
    return len(every) - n, n


def assert_named(task: str, ref, sub, split: dict, expect: tuple[int, int] | None = None):
    public, private = score_parts(get(task), str(ref), str(sub), split, {})
    n_pub, n_priv = expect or part_counts(task, ref, split)
    assert n_pub > 0 and n_priv > 0
    word = WORDS[SPLITTERS[task].unit]
    assert public["conventions"]["split"] == \
        f"public part of the evaluation set: {n_pub} {word}"
    assert private["conventions"]["split"] == \
        f"private part of the evaluation set: {n_priv} {word}"
    return public, private


def test_each_part_names_its_side_and_its_number_of_units(tmp_path):
    split = SPLITS[0]
    ref, sub = classification_files(tmp_path, 2)
    assert_named("classification", ref, sub, split)
    qrels, run = trec_files(tmp_path, 1)
    assert_named("trec", qrels, run, split)
    sv, det, dis = svident_files(tmp_path, 5)
    assert_named("svident-detection", sv, det, split)
    assert_named("svident-disambiguation", sv, dis, split)
    (tmp_path / "rcc").mkdir()
    rfolder, _, cites, mentions = rcc_files(tmp_path / "rcc", 9)
    assert_named("rcc-citations", rfolder, cites, split)
    assert_named("rcc-mentions", rfolder, mentions, split)
    (tmp_path / "m").mkdir()
    pack, msub = material_queries_pack(tmp_path / "m", 4)
    assert_named("material-clir", pack, msub, split)
    ipack = make_pack(tmp_path / "ipack")
    files = {"GOV.tsv": output([1, 1, 0, 0, 1], ["0.9"] * 5, DOCS[:5]),
             "MIL.tsv": output([0, 1, 1, 0, 0], ["0.9"] * 5, DOCS[:5])}
    dsub = folder(tmp_path, files, name="domainid")
    # the conversational DOCS[5] is in no part of DomainID: 3 + 2 of its 5 documents
    assert_named("material-domainid", ipack, dsub, {"units": [DOCS[1], DOCS[5], DOCS[2]]}, (3, 2))
    lsub = folder(tmp_path, {"1A.tsv": output([1, 0, 1, 1, 0, 1], ["0.5"] * 6)}, name="langid")
    assert_named("material-langid", ipack, lsub, {"units": [DOCS[1], DOCS[5], DOCS[2]]}, (3, 3))


# -- classification: items --------------------------------------------------------------------

def cut_classification(ref: Path, sub: Path, keep, folder_: Path):
    def cut(src: Path) -> Path:
        lines = src.read_text().splitlines(keepends=True)
        dst = folder_ / src.name
        dst.write_text(lines[0] + "".join(ln for ln in lines[1:] if keep(ln.split("\t")[0])))
        return dst
    return cut(ref), cut(sub)


@pytest.mark.parametrize("split", SPLITS)
def test_classification_parts_equal_the_cli_on_cut_files(tmp_path, split):
    ref, sub = classification_files(tmp_path, 7, n=60)
    public, private = check_parts(tmp_path, "classification", ref, sub, cut_classification, split)
    assert public["counts"]["items"] + private["counts"]["items"] == 60
    assert public["metrics"]["accuracy"] != private["metrics"]["accuracy"]


# -- restriction: pure and composable -----------------------------------------------------------

LISTS = ("warnings", "tags", "notes")


def family_inputs(tmp: Path) -> dict[str, tuple[object, object]]:
    """(reference, submission) paths of every family; the TREC run has two run tags, so
    its load warnings are not empty."""
    out = {}
    (tmp / "c").mkdir()
    out["classification"] = classification_files(tmp / "c", 3)
    (tmp / "t").mkdir()
    qrels, run = trec_files(tmp / "t", 2)
    lines = run.read_text().splitlines(keepends=True)
    run.write_text("".join(lines[:-5]) + "".join(ln.replace(" tag", " other") for ln in lines[-5:]))
    out["trec"] = (qrels, run)
    (tmp / "s").mkdir()
    sv, det, dis = svident_files(tmp / "s", 4)
    out["svident-detection"], out["svident-disambiguation"] = (sv, det), (sv, dis)
    (tmp / "r").mkdir()
    rfolder, _, cites, mentions = rcc_files(tmp / "r", 9)
    out["rcc-citations"], out["rcc-mentions"] = (rfolder, cites), (rfolder, mentions)
    (tmp / "m").mkdir()
    out["material-clir"] = material_queries_pack(tmp / "m", 4)
    ipack = make_pack(tmp / "ipack")
    out["material-domainid"] = (ipack, folder(tmp, {
        "GOV.tsv": output([1, 1, 0, 0, 1], ["0.9"] * 5, DOCS[:5]),
        "MIL.tsv": output([0, 1, 1, 0, 0], ["0.9"] * 5, DOCS[:5])}, name="domainid"))
    out["material-langid"] = (ipack, folder(tmp, {"1A.tsv": output([1, 0, 1, 1, 0, 1],
                                                                   ["0.5"] * 6)}, name="langid"))
    return out


def test_restriction_leaves_the_input_alone_and_shares_no_list_with_it(tmp_path):
    """Both parts are cut from one load (score_parts): a part must not hand the input's
    lists on, or what one part's scoring adds would show in the other part."""
    inputs = family_inputs(tmp_path)
    assert set(inputs) == set(SPLITTERS) - {"material-e2e"}    # E2E: test_splits.py
    for task, (ref_path, sub_path) in inputs.items():
        t = get(task)
        ref = t.reference(str(ref_path))
        sub = t.submission(str(sub_path), ref)
        if task == "trec":
            assert sub.warnings and sub.warnings[-1].endswith("2 different run tags: tag, other")
        for private in (False, True):
            r, s = restrict(t, ref, sub, {"units": units(t, ref)[::3]}, private)
            for part, whole in ((r, ref), (s, sub)):
                for name in LISTS:
                    if hasattr(whole, name):
                        assert getattr(part, name) == getattr(whole, name), (task, name)
                        assert getattr(part, name) is not getattr(whole, name), (task, name)
        # the loaded input is unchanged after scoring both parts from it
        before = {name: list(getattr(x, name)) for x in (ref, sub) for name in LISTS
                  if hasattr(x, name)}
        score_parts(t, ref, sub, SPLITS[0], {})
        assert before == {name: list(getattr(x, name)) for x in (ref, sub) for name in LISTS
                          if hasattr(x, name)}


def test_a_part_keeps_the_line_numbers_of_its_units_only(tmp_path):
    """The lines maps (item or uuid -> line in the uploaded file, for messages) of a part
    hold the part's entries, with their lines in the whole file."""
    split = SPLITS[1]
    test = private_test(split)
    ref, sub = classification_files(tmp_path, 8)
    t = get("classification")
    for private in (False, True):
        r, s = restrict(t, str(ref), str(sub), split, private)
        whole_r, whole_s = t.reference(str(ref)), t.submission(str(sub))
        assert r.lines == {i: n for i, n in whole_r.lines.items() if test(i) == private}
        assert s.lines == {i: n for i, n in whole_s.lines.items() if test(i) == private}
        assert s.labels == {i: v for i, v in whole_s.labels.items() if test(i) == private}
    sv, det, _ = svident_files(tmp_path, 6)
    t = get("svident-detection")
    whole_r = t.reference(str(sv))
    whole_s = t.submission(str(det), whole_r)
    for private in (False, True):
        r, s = restrict(t, whole_r, whole_s, split, private)
        kept = {u for u, x in whole_r.sentences.items() if test(x.doc_id) == private}
        assert set(r.sentences) == kept and kept
        assert s.lines == {u: n for u, n in whole_s.lines.items() if u in kept}
        assert s.values == {u: v for u, v in whole_s.values.items() if u in kept}


def test_a_part_of_a_part_is_the_intersection(tmp_path):
    first, second = SPLITS
    a, b = private_test(first), private_test(second)
    qrels, run = trec_files(tmp_path, 1)
    t = get("trec")
    r1, s1 = restrict(t, str(qrels), str(run), first, True)
    r2, s2 = restrict(t, r1, s1, second, True)
    both = [q for q in t.reference(str(qrels)).qids() if a(q) and b(q)]
    assert both and r2.qids() == both
    assert set(s2.qids()) == {q for q in t.submission(str(run)).qids() if a(q) and b(q)}
    # a part without any unit, restricted again, stays empty
    r3, s3 = restrict(t, r2, s2, {"units": []}, True)
    assert r3.qids() == [] and s3.qids() == []
    r4, s4 = restrict(t, r3, s3, first, False)
    assert r4.qids() == [] and s4.qids() == [] and len(r4) == len(s4) == 0

    pack = make_pack(tmp_path / "pack")
    sub = folder(tmp_path, {"1A.tsv": output([1, 0, 1, 1, 0, 1], ["0.5"] * 6)}, name="langid")
    t = get("material-langid")
    p1, s1 = restrict(t, str(pack), str(sub), {"units": DOCS[:4]}, True)
    p2, _ = restrict(t, p1, s1, {"units": DOCS[2:]}, True)
    assert p2.scored.tolist() == [False, False, True, True, False, False]
    assert units(t, p2) == DOCS[2:4]
    p3, _ = restrict(t, p1, s1, {"units": DOCS[2:]}, False)
    assert units(t, p3) == DOCS[:2]


def test_restrict_reads_paths_as_the_task_does(tmp_path):
    """restrict takes paths or loaded objects; a MATERIAL run can only be read with its
    pack (the collection's document list), which restrict passes on."""
    inputs = family_inputs(tmp_path)
    for task, (ref_path, sub_path) in inputs.items():
        t = get(task)
        ref = t.reference(str(ref_path))
        sub = t.submission(str(sub_path), ref)
        for private in (False, True):
            from_paths = restrict(t, str(ref_path), str(sub_path), SPLITS[0], private)
            loaded = restrict(t, ref, sub, SPLITS[0], private)
            assert t.score(*from_paths).to_dict() == t.score(*loaded).to_dict(), task
