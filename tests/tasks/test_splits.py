"""Public/private split for every task family (tasks/splits.py): each part's score equals
``shareval score`` on the reference and run cut to the part's lines, on generated data
and on the shared data; the assignment of units to parts is seeded and complete.

The files are cut here, line by line with the formats' own layouts, independently of
the in-memory restriction under test."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from shareval.cli import main
from shareval.tasks import get
from shareval.tasks.splits import SPLITTERS, private_test, restrict, score_parts, units
from tests.conftest import SHARED_DATA
from tests.tasks.test_material import make_pack, output
from tests.tasks.test_material_e2e import pack as e2e_pack  # noqa: F401  (fixture)
from tests.tasks.test_material_e2e import submission_files

SPLITS = ({"fraction": 0.5, "seed": 13}, {"fraction": 0.3, "seed": 2024})


def cli_score(tmp: Path, task: str, ref: Path, sub: Path, *extra) -> dict:
    out = tmp / f"{task}.json"
    code = main(["score", task, "-r", str(ref), "-s", str(sub), "--format", "json",
                 "-o", str(out), "-q", *extra])
    assert code == 0
    return json.loads(out.read_text())


def comparable(result: dict) -> dict:
    result = json.loads(json.dumps(result))
    result["conventions"].pop("split", None)
    return {k: result[k] for k in ("metrics", "breakdowns", "counts", "conventions", "warnings")}


def check_parts(tmp: Path, task: str, ref: Path, sub: Path, cut, split: dict,
                options: dict | None = None, extra=()) -> tuple[dict, dict]:
    """Both parts scored in memory equal the CLI on the cut files; returns them."""
    t = get(task)
    parts = score_parts(t, str(ref), str(sub), split, dict(options or {}))
    test = private_test(split)
    for private, result in zip((False, True), parts):
        keep = (lambda u, p=private: test(str(u)) == p)
        folder = tmp / f"{task}-{'private' if private else 'public'}-{split.get('seed')}"
        folder.mkdir(parents=True)
        r, s = cut(ref, sub, keep, folder)
        expected = cli_score(folder, task, r, s, *extra)
        assert comparable(result) == comparable(expected), (task, private)
        assert result["conventions"]["split"].startswith(
            f"{'private' if private else 'public'} part of the evaluation set: ")
    return parts


# -- trec: queries ----------------------------------------------------------------

def _cut_lines(src: Path, dst: Path, keep, column: int = 0) -> Path:
    lines = [ln for ln in src.read_text().splitlines(keepends=True)
             if ln.strip() and not ln.lstrip().startswith("#") and keep(ln.split()[column])]
    dst.write_text("".join(lines))
    return dst


def cut_trec(ref: Path, sub: Path, keep, folder: Path):
    return (_cut_lines(ref, folder / ref.name, keep), _cut_lines(sub, folder / sub.name, keep))


def trec_files(tmp: Path, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(40):
        qid = f"q{q:03d}"
        if q % 13 != 5:                               # a few run-only queries
            for d in rng.sample(range(60), 12):
                rel = rng.choice((0, 0, 1, 2)) if q % 11 else 0     # some without relevant
                qrels.append(f"{qid} 0 d{d} {rel}\n")
        if q % 7 != 3:                                # a few judged queries missing from the run
            for rank, d in enumerate(rng.sample(range(60), 20), 1):
                run.append(f"{qid} Q0 d{d} {rank} {rng.choice((1.0, 0.5, rng.random()))} tag\n")
    (tmp / "qrels").write_text("".join(qrels))
    (tmp / "run").write_text("".join(run))
    return tmp / "qrels", tmp / "run"


@pytest.mark.parametrize("split", SPLITS)
def test_trec_parts_equal_the_cli_on_cut_files(tmp_path, split):
    ref, sub = trec_files(tmp_path, 1)
    public, private = check_parts(tmp_path, "trec", ref, sub, cut_trec, split)
    assert public["metrics"] != private["metrics"]
    n = public["counts"]["queries_in_qrels"] + private["counts"]["queries_in_qrels"]
    assert n == len(units(get("trec"), str(ref)))
    check_parts(tmp_path / "x", "trec", ref, sub, cut_trec, split,
                {"exclude_empty": True, "measures": "map,ndcg@10,p@5"},
                ("--exclude-empty", "--measures", "map,ndcg@10,p@5"))


def test_trec_large_files_read_by_pyarrow_split_the_same(tmp_path, monkeypatch):
    """Files above the small-file size are read by pyarrow, with arrow dictionaries."""
    from shareval.formats import trec
    monkeypatch.setattr(trec, "SMALL_FILE_BYTES", 1 << 18)        # this file takes pyarrow
    rng = random.Random(3)
    qrels = "".join(f"q{q} 0 d{d} {rng.choice((0, 1))}\n" for q in range(300)
                    for d in rng.sample(range(400), 20))
    run = "".join(f"q{q} Q0 d{d} {r} {rng.random():.6f} tag\n" for q in range(300)
                  for r, d in enumerate(rng.sample(range(400), 100), 1))
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    assert (tmp_path / "run").stat().st_size > 1 << 18
    check_parts(tmp_path, "trec", tmp_path / "qrels", tmp_path / "run", cut_trec, SPLITS[0])


# -- sv-ident: documents ------------------------------------------------------------

def _cut_tsv(src: Path, dst: Path, keep, key: str) -> tuple[Path, set]:
    """Rows of a tab-separated file with a header whose ``key`` column is kept; the
    uuids of the kept rows."""
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\r\n").split("\t")
    k, u = header.index(key), header.index("uuid")
    out, uuids = [lines[0]], set()
    for ln in lines[1:]:
        cells = ln.rstrip("\r\n").split("\t")
        if keep(cells[k]):
            out.append(ln)
            uuids.add(cells[u])
    dst.write_text("".join(out), encoding="utf-8")
    return dst, uuids


def cut_svident(ref: Path, sub: Path, keep, folder: Path):
    r, uuids = _cut_tsv(ref, folder / ref.name, keep, "doc_id")    # keeps en.tsv / de.tsv
    if sub.suffix == ".json":
        data = json.loads(sub.read_text())
        (folder / sub.name).write_text(json.dumps({u: v for u, v in data.items() if u in uuids}))
    else:
        lines = sub.read_text().splitlines(keepends=True)
        (folder / sub.name).write_text("".join(ln for ln in lines if ln.split("\t")[0] in uuids))
    return r, folder / sub.name


def svident_files(tmp: Path, seed: int) -> tuple[Path, Path, Path]:
    rng = random.Random(seed)
    rows = ["sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"]
    det, dis = [], {}
    for d in range(24):
        langs = ("en", "de") if d % 9 == 4 else (rng.choice(("en", "de")),)   # some in both
        for k in range(rng.randint(3, 9)):
            uuid = f"u{d}-{k}"
            var = rng.random() < 0.4
            ids = ";".join(f"v{rng.randint(1, 15)}" for _ in range(rng.randint(1, 2)))
            ids = ids if var else ""
            lang = langs[k % len(langs)]
            rows.append(f"text {d} {k}\t{int(var)}\t{ids}\t\tdoc{d}\t{uuid}\t{lang}\n")
            det.append(f"{uuid}\t{int(rng.random() < 0.45)}\n")
            if var or rng.random() < 0.3:
                dis[uuid] = {f"v{v}": rng.random() for v in rng.sample(range(1, 16), 6)}
    (tmp / "ref.tsv").write_text("".join(rows))
    (tmp / "det.tsv").write_text("".join(det))
    (tmp / "dis.json").write_text(json.dumps(dis))
    return tmp / "ref.tsv", tmp / "det.tsv", tmp / "dis.json"


@pytest.mark.parametrize("split", SPLITS)
def test_svident_parts_equal_the_cli_on_cut_files(tmp_path, split):
    ref, det, dis = svident_files(tmp_path, 5)
    for task, sub in (("svident-detection", det), ("svident-disambiguation", dis)):
        public, private = check_parts(tmp_path / task, task, ref, sub, cut_svident, split)
        docs = public["counts"]["documents"] + private["counts"]["documents"]
        if task == "svident-detection":
            assert docs == 24
            assert public["counts"]["units"] + private["counts"]["units"] > docs  # 2-language docs
        assert set(public["breakdowns"]["per_language"]) == {"en", "de"}


def _random_svident_run(ref_path: Path, out: Path, task: str, seed: int) -> Path:
    rng = random.Random(seed)
    ref = get(task).reference(str(ref_path))
    if task == "svident-detection":
        out.write_text("".join(f"{u}\t{int(rng.random() < 0.3)}\n" for u in ref.sentences))
    else:
        pool = sorted({v for s in ref.sentences.values() for v in s.variables}) or ["x"]
        out.write_text(json.dumps({u: {v: rng.random() for v in rng.sample(pool, min(8, len(pool)))}
                                   for u in ref.sentences}))
    return out


def _shared(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (set SHAREVAL_SHARED_DATA)")
    return path


@pytest.mark.parametrize("name", ["trial/train/en.tsv", "trial/train/de.tsv"])
def test_svident_trial_parts_equal_the_cli(tmp_path, name):
    ref = _shared(SHARED_DATA / "sv-ident" / name)
    for task, suffix in (("svident-detection", ".tsv"), ("svident-disambiguation", ".json")):
        sub = _random_svident_run(ref, tmp_path / f"{task}{suffix}", task, 7)
        public, private = check_parts(tmp_path / task, task, ref, sub, cut_svident, SPLITS[0])
        assert public["counts"]["documents"] > 0 and private["counts"]["documents"] > 0


def test_svident_train_parts_equal_the_cli(tmp_path):
    ref = _shared(SHARED_DATA / "sv-ident" / "train" / "train.tsv")
    sub = _random_svident_run(ref, tmp_path / "det.tsv", "svident-detection", 8)
    public, private = check_parts(tmp_path, "svident-detection", ref, sub, cut_svident,
                                  SPLITS[1])
    n = len(units(get("svident-detection"), str(ref)))
    assert public["counts"]["documents"] + private["counts"]["documents"] == n


# -- rcc: publications --------------------------------------------------------------

def cut_rcc(ref: Path, sub: Path, keep, folder: Path):
    def cut_list(src: Path, dst: Path):
        data = json.loads(src.read_text(encoding="utf-8"))
        dst.write_text(json.dumps([x for x in data if keep(str(x["publication_id"]))]),
                       encoding="utf-8")
        return dst
    if ref.is_dir():
        r = folder / "reference"
        r.mkdir()
        for name in ("data_set_citations.json", "publications.json"):
            if (ref / name).exists():
                cut_list(ref / name, r / name)
    else:
        r = cut_list(ref, folder / ref.name)
    return r, cut_list(sub, folder / sub.name)


def rcc_files(tmp: Path, seed: int) -> tuple[Path, Path, Path, Path]:
    rng = random.Random(seed)
    gold, cites, mentions, pubs = [], [], [], []
    for p in range(50):
        pubs.append({"publication_id": p})
        for ds in rng.sample(range(30), rng.choice((0, 0, 1, 2, 3))):
            ms = [f"survey {ds} wave {rng.randint(1, 3)}", f"panel study {ds}"]
            gold.append({"publication_id": p, "data_set_id": ds, "mention_list": ms})
            if rng.random() < 0.7:
                cites.append({"publication_id": p, "data_set_id": ds, "score": rng.random(),
                              "mention_list": []})
                mentions.append({"publication_id": p, "mention": ms[0], "score": rng.random()})
        if rng.random() < 0.3:
            cites.append({"publication_id": p, "data_set_id": 99, "score": rng.random(),
                          "mention_list": []})
            mentions.append({"publication_id": p, "mention": "census data", "score": 0.2})
    ref = tmp / "reference"
    ref.mkdir()
    (ref / "data_set_citations.json").write_text(json.dumps(gold))
    (ref / "publications.json").write_text(json.dumps(pubs))
    (tmp / "cites.json").write_text(json.dumps(cites))
    (tmp / "mentions.json").write_text(json.dumps(mentions))
    return ref, ref / "data_set_citations.json", tmp / "cites.json", tmp / "mentions.json"


@pytest.mark.parametrize("split", SPLITS)
def test_rcc_parts_equal_the_cli_on_cut_files(tmp_path, split):
    folder, file, cites, mentions = rcc_files(tmp_path, 9)
    public, private = check_parts(tmp_path / "a", "rcc-citations", folder, cites, cut_rcc, split)
    assert public["counts"]["publications"] + private["counts"]["publications"] == 50
    whole = score_of("rcc-citations", folder, cites)
    assert public["metrics"]["tp"] + private["metrics"]["tp"] == whole["tp"]
    check_parts(tmp_path / "b", "rcc-citations", file, cites, cut_rcc, split,
                {"min_score": 0.3}, ("--min-score", "0.3"))
    check_parts(tmp_path / "c", "rcc-mentions", folder, mentions, cut_rcc, split)


def score_of(task, ref, sub) -> dict:
    return get(task).score(str(ref), str(sub)).metrics


def test_rcc_train_parts_equal_the_cli(tmp_path):
    ref = _shared(SHARED_DATA / "rcc" / "train")
    gold = json.loads((ref / "data_set_citations.json").read_text())
    rng = random.Random(11)
    cites = [{"publication_id": g["publication_id"], "data_set_id": g["data_set_id"],
              "score": rng.random(), "mention_list": []} for g in gold if rng.random() < 0.6]
    cites += [{"publication_id": g["publication_id"], "data_set_id": 1, "score": 0.1,
               "mention_list": []} for g in gold[::7]]
    mentions = [{"publication_id": g["publication_id"], "mention": m, "score": 1.0}
                for g in gold for m in g["mention_list"][:1] if rng.random() < 0.5]
    (tmp_path / "cites.json").write_text(json.dumps(cites))
    (tmp_path / "mentions.json").write_text(json.dumps(mentions))
    public, private = check_parts(tmp_path / "a", "rcc-citations", ref, tmp_path / "cites.json",
                                  cut_rcc, SPLITS[0])
    n = len(json.loads((ref / "publications.json").read_text()))
    assert public["counts"]["publications"] + private["counts"]["publications"] == n
    check_parts(tmp_path / "b", "rcc-mentions", ref, tmp_path / "mentions.json", cut_rcc,
                SPLITS[0])


# -- material: queries (CLIR, E2E) and documents (DomainID, LangID) ---------------------

def _copy_pack(pack: Path, folder: Path) -> Path:
    out = folder / "pack"
    shutil.copytree(pack, out)
    return out


def cut_material_queries(pack: Path, sub: Path, keep, folder: Path):
    out = _copy_pack(pack, folder)
    lines = (pack / "queries.tsv").read_text().splitlines(keepends=True)
    (out / "queries.tsv").write_text(lines[0] + "".join(ln for ln in lines[1:]
                                                        if keep(ln.split("\t")[0])))
    s = folder / "sub"
    s.mkdir()
    for p in sub.iterdir():
        if keep(p.stem) and p.is_file():
            shutil.copy(p, s / p.name)
        elif keep(p.name) and p.is_dir():               # E2E: one folder per query
            shutil.copytree(p, s / p.name)
    return out, s


def cut_material_documents(pack: Path, sub: Path, keep, folder: Path):
    out = _copy_pack(pack, folder)

    def cut(src: Path, dst: Path, header: bool):
        lines = src.read_text().splitlines(keepends=True)
        dst.write_text("".join(lines[:1] if header else [])
                       + "".join(ln for ln in lines[1 if header else 0:]
                                 if keep(ln.split("\t")[0])))
    cut(pack / "documents.tsv", out / "documents.tsv", True)
    for kind in ("clir", "domainid", "langid"):
        for p in (pack / kind).glob("*.tsv"):
            cut(p, out / kind / p.name, False)
    s = folder / "sub"
    s.mkdir()
    for p in sub.iterdir():
        cut(p, s / p.name, False)
    return out, s


def material_queries_pack(tmp: Path, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    docs = [f"MATERIAL_EVAL1-1A_{i:08d}" for i in range(1, 31)]
    pack, sub = tmp / "pack", tmp / "sub"
    (pack / "clir").mkdir(parents=True)
    sub.mkdir()
    (pack / "pack.yaml").write_text("language: 1A\neval_period: EVAL1\ndocid_pattern: true\n")
    (pack / "documents.tsv").write_text("doc_id\tgenre\n" + "".join(f"{d}\ttext\n" for d in docs))
    domains = ("music:Lifestyle", "ebola:Physical-And-Mental-Health")
    (pack / "queries.tsv").write_text("query_id\tquery\ttype\n" + "".join(
        f"query{k}\t{domains[k % 2]}\t{('lexical', 'conceptual')[k % 3 == 0]}\n"
        for k in range(16)))
    for k in range(16):
        rel = [rng.random() < (0.15 if k % 5 else 0.0) for _ in docs]     # some with none
        dec = [rng.random() < 0.2 for _ in docs]
        (pack / "clir" / f"query{k}.tsv").write_text(
            "".join(f"{d}\t{'Y' if r else 'N'}\n" for d, r in zip(docs, rel)))
        (sub / f"query{k}.tsv").write_text(output(dec, [f"{rng.random():.3f}" for _ in docs], docs))
    return pack, sub


@pytest.mark.parametrize("split", SPLITS)
def test_material_clir_parts_equal_the_cli_on_cut_files(tmp_path, split):
    pack, sub = material_queries_pack(tmp_path, 4)
    public, private = check_parts(tmp_path, "material-clir", pack, sub, cut_material_queries,
                                  split)
    assert public["counts"]["queries"] + private["counts"]["queries"] == 16
    assert public["counts"]["documents"] == private["counts"]["documents"] == 30


def test_material_e2e_parts_equal_the_cli_on_cut_files(tmp_path, e2e_pack):  # noqa: F811
    from tests.tasks.test_material import folder
    sub = folder(tmp_path, submission_files())
    split = {"units": ["query3"]}
    public, private = check_parts(tmp_path, "material-e2e", e2e_pack, sub,
                                  cut_material_queries, split)
    assert (public["counts"]["queries"], private["counts"]["queries"]) == (2, 1)
    assert set(private["breakdowns"]["per_query"]) == {"query3"}


def test_material_identification_parts_equal_the_cli_on_cut_files(tmp_path):
    from tests.tasks.test_material import DOCS, folder
    pack = make_pack(tmp_path / "pack")
    split = {"units": [DOCS[1], DOCS[2]]}
    subs = {"material-domainid": {"GOV.tsv": output([1, 1, 0, 0, 1], ["0.9"] * 5, DOCS[:5]),
                                  "MIL.tsv": output([0, 1, 1, 0, 0], ["0.9"] * 5, DOCS[:5])},
            "material-langid": {"1A.tsv": output([1, 0, 1, 1, 0, 1], ["0.5"] * 6)}}
    for task, files in subs.items():
        sub = folder(tmp_path, files, name=task)
        public, private = check_parts(tmp_path / "parts" / task, task, pack, sub,
                                      cut_material_documents, split)
        assert private["counts"]["documents_scored"] == 2
        total = get(task).score(str(pack), str(sub)).counts
        for x in ("x1", "x2", "x3", "x4"):
            assert public["counts"][x] + private["counts"][x] == total[x]
    # DomainID never scores the conversational (CS) document: it is a unit of no part
    assert DOCS[5] not in units(get("material-domainid"), str(pack))
    assert DOCS[5] in units(get("material-langid"), str(pack))


# -- the assignment ---------------------------------------------------------------------

def test_assignment_is_fixed_by_the_seed_and_the_order_does_not_matter():
    ids = [f"q{i}" for i in range(200)]
    a = [u for u in ids if private_test({"fraction": 0.5, "seed": 13})(u)]
    assert a == [u for u in ids if private_test({"fraction": 0.5, "seed": 13})(u)]
    assert set(a) == {u for u in reversed(ids) if private_test({"fraction": 0.5, "seed": 13})(u)}
    assert a != [u for u in ids if private_test({"fraction": 0.5, "seed": 14})(u)]
    assert 70 < len(a) < 130
    assert 40 < sum(private_test({"fraction": 0.3, "seed": 1})(u) for u in ids) < 80
    listed = private_test({"units": ["q1", 7]})
    assert listed("q1") and listed("7") and not listed("q2")


@pytest.mark.parametrize("task", sorted(SPLITTERS))
def test_every_family_has_a_splitter_and_a_unit(task):
    assert get(task).name == task
    assert SPLITTERS[task].unit in ("item", "query", "document", "publication")


def test_restrict_takes_paths_or_loaded_objects(tmp_path):
    ref, sub = trec_files(tmp_path, 2)
    t = get("trec")
    r1, s1 = restrict(t, str(ref), str(sub), SPLITS[0], True)
    r2, s2 = restrict(t, t.reference(str(ref)), t.submission(str(sub)), SPLITS[0], True)
    assert r1.qids() == r2.qids() and s1.docs() == s2.docs()
    test = private_test(SPLITS[0])
    assert r1.qids() and all(test(q) for q in r1.qids() + s1.qids())


def test_split_units_command_prints_each_part(tmp_path, cli):
    ref, _ = trec_files(tmp_path, 1)
    code, out, err = cli("split-units", "trec", "-r", ref, "--fraction", "0.5", "--seed", "13")
    test = private_test({"fraction": 0.5, "seed": 13})
    every = units(get("trec"), str(ref))
    assert code == 0 and out.split() == [u for u in every if test(u)]
    n = len(out.split())
    assert f"trec: {len(every)} query units, {len(every) - n} public, {n} private" in err
    (tmp_path / "private.txt").write_text(out)
    code, public, _ = cli("split-units", "trec", "-r", ref, "--private", tmp_path / "private.txt",
                          "--part", "public")
    assert public.split() == [u for u in every if not test(u)]
    code, _, err = cli("split-units", "trec", "-r", ref, "--fraction", "0.5")
    assert code == 2 and "--seed" in err


def test_a_run_with_no_line_in_a_part_scores_that_part_zero(tmp_path):
    """The CLI refuses an empty run file; a valid run that happens to hold no query of
    one part is not refused: that part scores as a run missing every query."""
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1.0 t\n")
    public, private = score_parts(get("trec"), str(tmp_path / "qrels"), str(tmp_path / "run"),
                                  {"units": ["q2", "q3"]}, {})
    assert public["metrics"]["map"] == 1.0 and private["metrics"]["map"] == 0.0
    assert private["counts"]["queries_missing_from_run"] == 2
    assert private["warnings"] == ["2 judged queries are missing from the run (scored 0): q2, q3"]
