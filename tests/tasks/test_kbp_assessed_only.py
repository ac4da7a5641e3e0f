"""kbp-relations on a reference of documents only (no relation labels): an
assessed-only competition, where judges' estimates are the scores. The automatic
metrics must not pretend: None with a clear warning, never zeros."""
from __future__ import annotations

import json

import pytest

from shareval import tasks
from tests.tasks.kbp_tiny import DOCUMENTS, HEADER, PERFECT, write_reference

TASK = tasks.get("kbp-relations")


def _docs_only(tmp_path):
    docs = [dict(d, labels=[]) for d in DOCUMENTS]
    return write_reference(tmp_path / "ref", documents=docs)


def _run(tmp_path):
    path = tmp_path / "run.tsv"
    path.write_text(HEADER + "".join(x + "\n" for x in PERFECT), encoding="utf-8")
    return path


def test_a_reference_without_relations_gives_no_automatic_metrics(tmp_path):
    r = TASK.score(_docs_only(tmp_path), _run(tmp_path))
    d = r.to_dict()
    assert set(d["metrics"]) >= {"entity_f1", "mention_precision", "entity_recall"}
    assert all(v is None for v in d["metrics"].values()), d["metrics"]
    assert any("documents only" in w and "not computed" in w for w in d["warnings"])
    assert d["counts"]["predictions"] == len(PERFECT)
    json.dumps(d)                                         # stored as JSON by the server


def test_no_significance_units_without_relations(tmp_path):
    with pytest.raises(NotImplementedError, match="documents only"):
        TASK.unit_stats(_docs_only(tmp_path), _run(tmp_path))


def test_one_label_anywhere_keeps_the_automatic_metrics(tmp_path):
    docs = [dict(DOCUMENTS[0]), dict(DOCUMENTS[1], labels=[])]
    m = TASK.score(write_reference(tmp_path / "ref", documents=docs), _run(tmp_path)).metrics
    assert m["mention_precision"] == 4 / 6 and m["entity_f1"] is not None
