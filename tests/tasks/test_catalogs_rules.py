"""The catalog check's rules (docs/platform.md, catalogs; tasks/catalogs.py) with whole
problem lines: singular and plural, the 20 ids shown, sorted; what an invalid
submission names (nothing: its own problems are reported by validation)."""
from __future__ import annotations

import json

import pytest

from shareval.tasks.catalogs import (CATALOG_KINDS, MAX_LISTED, ids_named, read_catalog,
                                     unknown_ids_problem)


def citations(tmp_path, ids):
    f = tmp_path / "run.json"
    f.write_text(json.dumps([{"publication_id": 1, "data_set_id": i, "score": 1,
                              "mention_list": []} for i in ids]))
    return f


def test_the_kinds_and_the_cap():
    assert CATALOG_KINDS == {"rcc-citations": "dataset", "svident-disambiguation": "variable"}
    assert MAX_LISTED == 20


def test_one_unknown_dataset_is_singular_and_names_the_submission(tmp_path):
    cat = tmp_path / "cat.txt"
    cat.write_text("a\nb\n")
    sub = citations(tmp_path, ["a", "zz"])
    assert unknown_ids_problem("rcc-citations", sub, cat, "'datasets v1'") == \
        f"{sub}: dataset_id: 1 dataset id not in the phase's catalog 'datasets v1': zz"
    two = citations(tmp_path, ["zz", "a", "yy"])
    assert unknown_ids_problem("rcc-citations", two, cat, "c") == \
        f"{two}: dataset_id: 2 dataset ids not in the phase's catalog c: yy, zz"


@pytest.mark.parametrize("n,tail", [(20, ""), (21, " and 1 more")])
def test_twenty_ids_are_shown_sorted(tmp_path, n, tail):
    cat = tmp_path / "cat.txt"
    cat.write_text("known\n")
    ids = [f"d{i:02d}" for i in reversed(range(n))] + ["known"]
    p = unknown_ids_problem("rcc-citations", citations(tmp_path, ids), cat, "c")
    shown = ", ".join(f"d{i:02d}" for i in range(20))
    assert p.endswith(f": dataset_id: {n} dataset ids not in the phase's catalog c: "
                      f"{shown}{tail}")


def test_an_invalid_submission_names_no_ids(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert ids_named("rcc-citations", bad) == set()
    assert ids_named("svident-disambiguation", bad) == set()
    cat = tmp_path / "cat.txt"
    cat.write_text("a\n")
    assert unknown_ids_problem("rcc-citations", bad, cat, "c") is None
    with pytest.raises(ValueError, match="task trec names no catalog ids"):
        ids_named("trec", bad)


def test_catalog_json_prefers_id_and_skips_empty_entries(tmp_path):
    js = tmp_path / "c.json"
    js.write_text("  \n" + json.dumps([{"id": "x", "data_set_id": "y"}, {"title": "none"},
                                       None, "  ", " w ", 5]))
    assert read_catalog(js) == ["x", "w", "5"]
    lines = tmp_path / "c.txt"
    lines.write_text("  # indented comment\nv1\n\n  v2  \n")
    assert read_catalog(lines) == ["v1", "v2"]
