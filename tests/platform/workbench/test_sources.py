"""Corpus loading: texts, catalogs, families, the linker's span suggestions."""
from __future__ import annotations

import json

import pytest

from shareval.platform.workbench import sources


@pytest.mark.parametrize("title,family", [
    ("National Health and Nutrition Examination Survey (NHANES), 2003-2004 (NHANES) …",
     "national health and nutrition"),
    ("ANES 1952 Time Series Study", "anes time series study"),
    ("Euro-Barometer 38.1: Consumer Protection, November 1992", "euro-barometer consumer protection november"),
    ("German General Social Survey", ""),              # no year: no family
])
def test_family_key(title, family):
    assert sources.family_key(title) == family


def test_find_all_matches_on_word_edges_across_white_space():
    text = "NHANES data; the NHANES\nsurvey, not NHANESIII."
    assert sources.find_all(text, "nhanes survey") == [(17, 30)]
    assert sources.find_all(text, "NHANES") == [(0, 6), (17, 23)]
    assert sources.find_all(text, "  ") == []


def test_read_catalog_layouts_and_errors(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"1": "ANES 1952 Time Series Study ANES study ICPSR SRC data "
                                  "surveys conducted"}))
    (key, title, text), = sources.read_catalog(p)
    assert key == "1" and title == "ANES 1952 Time Series Study ANES study ICPSR SRC data …"
    p.write_text(json.dumps([{"data_set_id": 5, "title": "T", "mention_list": ["m1"]}]))
    assert sources.read_catalog(p) == [("5", "T", "T m1")]
    p.write_text(json.dumps([{"title": "no id"}]))
    with pytest.raises(sources.SourceError, match="record 0: data_set_id missing"):
        sources.read_catalog(p)
    p.write_text("{")
    with pytest.raises(sources.SourceError, match="c.json"):
        sources.read_catalog(p)


def test_families_csv_errors_name_the_line(tmp_path):
    p = tmp_path / "f.csv"
    p.write_text("key,family\n1,anes\n2\n")
    with pytest.raises(sources.SourceError, match="f.csv:3: expected key,family"):
        sources.read_families(p)


def test_publication_text_from_json_txt_and_missing(tmp_path):
    (tmp_path / "1.json").write_text(json.dumps({"abstract": " A ", "reduced_content": "B"}))
    (tmp_path / "2.txt").write_text("plain")
    assert sources.publication_text(tmp_path, "1") == "A\n\nB"
    assert sources.publication_text(tmp_path, "2") == "plain"
    with pytest.raises(sources.SourceError, match="no 3.json, 3.txt or 3.pdf"):
        sources.publication_text(tmp_path, "3")
    (tmp_path / "4.pdf").write_bytes(b"not a pdf")
    with pytest.raises(sources.SourceError, match="4.pdf: not a readable PDF"):
        sources.publication_text(tmp_path, "4")


@pytest.mark.realdata
def test_linker_suggestions_are_spans_of_the_text(shared_data):
    from shareval.systems.rcc_catalog import Catalog
    catalog = Catalog.load(shared_data / "rcc" / "catalog" / "dataset_text_dict.json")
    text = sources.publication_text(shared_data / "rcc" / "train" / "texts", "1497")
    out = sources.rcc_suggestions(text, catalog)
    assert out and {s["target"] for s in out} >= {"483"}
    for s in out:
        assert 0 <= s["begin"] < s["end"] <= len(text) and 0 < s["score"] <= 1
    assert any("NHANES" in text[s["begin"]:s["end"]] for s in out)


def test_texts_are_stored_as_the_browser_holds_them(tmp_path):
    (tmp_path / "1.txt").write_text("a\r\nb\rc\x00d", newline="")
    assert sources.publication_text(tmp_path, "1") == "a\nb\ncd"
    p = tmp_path / "s.tsv"
    p.write_text("sentence\tuuid\nx\x00y\tu1\n")
    assert sources.read_sentences(p)[0]["text"] == "xy"
