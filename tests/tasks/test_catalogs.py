"""The catalog ids a submission names, and catalog files (issue 24)."""
from __future__ import annotations

import json

import pytest

from shareval.tasks.catalogs import ids_named, read_catalog, unknown_ids_problem


def test_rcc_citations_name_their_data_set_ids(tmp_path):
    f = tmp_path / "run.json"
    f.write_text(json.dumps([{"publication_id": 1, "data_set_id": "a", "score": 1,
                              "mention_list": []},
                             {"publication_id": 2, "data_set_id": 7, "score": 0.5,
                              "mention_list": ["x"]}]))
    assert ids_named("rcc-citations", f) == {"a", "7"}


def test_svident_disambiguation_names_its_ranked_variables(tmp_path):
    f = tmp_path / "run.json"
    f.write_text(json.dumps({"u1": {"v-1": 0.9, "v-2": 0.1}, "u2": {"v-3": 1.0}}))
    assert ids_named("svident-disambiguation", f) == {"v-1", "v-2", "v-3"}


def test_other_tasks_name_no_catalog_ids(tmp_path):
    with pytest.raises(ValueError):
        ids_named("classification", tmp_path / "x")


def test_catalog_files_lines_or_json(tmp_path):
    lines = tmp_path / "c.txt"
    lines.write_text("# header\n a \n\nb\n")
    assert read_catalog(lines) == ["a", "b"]
    js = tmp_path / "c.json"
    js.write_text(json.dumps([{"data_set_id": 3, "title": "x"}, {"id": "y"}, "z", {"id": ""}]))
    assert read_catalog(js) == ["3", "y", "z"]
    keyed = tmp_path / "dict.json"                    # RCC's dataset_text_dict.json
    keyed.write_text(json.dumps({"1": "ANES 1952", "20": "GSS", " ": "blank"}))
    assert read_catalog(keyed) == ["1", "20"]


def test_the_problem_lists_unknown_ids_sorted_and_capped(tmp_path):
    cat = tmp_path / "c.txt"
    cat.write_text("v-1\n")
    f = tmp_path / "run.json"
    f.write_text(json.dumps({f"u{i}": {f"w-{i:02d}": 1.0, "v-1": 0.5} for i in range(25)}))
    p = unknown_ids_problem("svident-disambiguation", f, cat, "vars v3")
    assert "25 variable ids not in the phase's catalog vars v3: w-00, w-01" in p
    assert p.endswith("w-19 and 5 more")
    cat.write_text("\n".join(["v-1"] + [f"w-{i:02d}" for i in range(25)]))
    assert unknown_ids_problem("svident-disambiguation", f, cat, "vars v4") is None
