"""SV-Ident detection uploads checked against the reference's uuids alone (issue 41,
``lean_svident``): the same verdict, problems and warnings as the task's validation
for good and bad files, a valid file accepted without reading the reference whole."""
from __future__ import annotations

import json

import pytest

from shareval import tasks
from shareval.formats import table
from shareval.formats.errors import InvalidInput
from shareval.platform.submissions import lean, lean_svident

from ...memory import python_peak

DET = tasks.get("svident-detection")
HEADER = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
UUIDS = [f"{i:08x}-0000-4000-8000-{i * 7919:012x}" for i in range(300)]


def reference(path, uuids=UUIDS, header=HEADER, end="\n", bom=""):
    path.write_text(bom + header.replace("\n", end) + "".join(
        f"Sentence {i} with \"quotes\".\t{i % 2}\t{'v1' if i % 2 else ''}\t\tdoc{i // 10}\t{u}\ten{end}"
        for i, u in enumerate(uuids)), encoding="utf-8", newline="")
    return path


def detection(path, lines):
    path.write_text("".join(lines), encoding="utf-8")
    return path


GOOD = [f"{u}\t{i % 2}\n" for i, u in enumerate(UUIDS)]
SUBMISSIONS = {
    "good": GOOD,
    "good reversed, with header, blank lines, spaces": ["uuid\tis_variable\n", "\n"] +
        [f" {line.strip()} \n" for line in reversed(GOOD)],
    "unknown uuid": GOOD[:-1] + ["ffffffff-0000-4000-8000-000000000000\t1\n"],
    "missing uuid": GOOD[:-1],
    "duplicate uuid": GOOD + [GOOD[5]],
    "duplicate instead of one": GOOD[:-1] + [GOOD[0]],
    "bad value": GOOD[:7] + [GOOD[7].replace("\t1", "\t2")] + GOOD[8:],
    "three columns": GOOD[:3] + [GOOD[3].strip() + "\tx\n"] + GOOD[4:],
    "first line wrong": ["a\tb\tc\n"] + GOOD,
    "empty uuid": GOOD + ["\t1\n"],
    "empty file": [],
    "json": [json.dumps({u: i % 2 for i, u in enumerate(UUIDS)})],
    "json unknown": [json.dumps({"x": 1})],
}
REFERENCES = {
    "plain": {}, "crlf": {"end": "\r\n"}, "bom": {"bom": "\ufeff"},
    "other column order": {"header": "uuid\tdoc_id\tis_variable\tvariable\tresearch_data"
                                     "\tsentence\tlang\n"},
}


def verdict(fn):
    try:
        return "ok", fn()
    except InvalidInput as e:
        return "refused", e.lines()


@pytest.mark.parametrize("ref_kind", sorted(REFERENCES))
@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_same_verdict_as_the_task(tmp_path, monkeypatch, name, ref_kind):
    ref = tmp_path / "ref.tsv"
    kw = dict(REFERENCES[ref_kind])
    if "header" in kw:          # the same cells in the header's order
        ref.write_text(kw["header"] + "".join(
            f"{u}\tdoc{i // 10}\t{i % 2}\t\t\tSentence {i}.\ten\n" for i, u in enumerate(UUIDS)))
    else:
        reference(ref, **kw)
    sub = detection(tmp_path / "sub.tsv", SUBMISSIONS[name])
    before = verdict(lambda: DET.validate(str(sub), str(ref)))
    for block in (7, 1 << 22):
        monkeypatch.setattr(table, "BLOCK_BYTES", block)
        assert verdict(lambda: lean.validate(DET, str(sub), str(ref), "sub.tsv")) == before
    assert before[0] == ("ok" if name.startswith("good") or name == "json" else "refused")


@pytest.mark.parametrize("name", ["good", "good reversed, with header, blank lines, spaces"])
def test_valid_files_take_the_uuid_path(tmp_path, name):
    ref = reference(tmp_path / "ref.tsv")
    sub = detection(tmp_path / "sub.tsv", SUBMISSIONS[name])
    assert lean_svident.warnings(DET, str(sub), str(ref)) == []


@pytest.mark.parametrize("name", ["unknown uuid", "missing uuid", "duplicate uuid",
                                  "bad value", "empty uuid", "json"])
def test_others_go_to_the_task(tmp_path, name):
    ref = reference(tmp_path / "ref.tsv")
    sub = detection(tmp_path / "sub.tsv", SUBMISSIONS[name])
    assert lean_svident.warnings(DET, str(sub), str(ref)) is None


def test_unusual_references_go_to_the_task(tmp_path):
    sub = detection(tmp_path / "sub.tsv", GOOD)
    ragged = reference(tmp_path / "ragged.tsv")
    ragged.write_text(ragged.read_text() + "only\ttwo\n")
    dup = reference(tmp_path / "dup.tsv", UUIDS + UUIDS[:1])
    for ref in (ragged, dup, tmp_path / "missing.tsv", tmp_path):
        assert lean_svident.warnings(DET, str(sub), str(ref)) is None


def test_memory_holds_a_hash_per_uuid(tmp_path, monkeypatch):
    """Neither file is held, nor a row or a Sentence per line: with 64 KB blocks and
    256 uuids hashed at once, under 1x the submission's size for both files (the
    reference alone is 2x; was ~25x: the reference whole)."""
    monkeypatch.setattr(table, "BLOCK_BYTES", 1 << 16)
    monkeypatch.setattr(lean_svident, "BATCH", 256)
    uuids = [f"{i:08x}-0000-4000-8000-{i * 7919:012x}" for i in range(60000)]
    ref = reference(tmp_path / "ref.tsv", uuids)
    sub = detection(tmp_path / "sub.tsv", [f"{u}\t{i % 2}\n" for i, u in enumerate(uuids)])
    peak, warnings = python_peak(lambda: lean.validate(DET, str(sub), str(ref), "sub.tsv"))
    assert warnings == []
    assert peak < 1.0 * sub.stat().st_size, peak / sub.stat().st_size
