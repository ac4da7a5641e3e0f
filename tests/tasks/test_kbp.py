"""kbp-relations: worked examples scored by hand on the two-document reference of
kbp_tiny.py, the JSON form and token-span provenance, and the command line."""
from __future__ import annotations

import json

import pytest

from shareval import tasks
from shareval.formats.kbp import layout_text
from tests.tasks.kbp_tiny import HEADER, PERFECT, write_reference

TASK = tasks.get("kbp-relations")

# Five predictions, each judged by hand (entities: Anna Berg=0, Oslo=1, Paris=2 in
# "Anna Berg"; Oslo=0, Norway=1 in "Oslo"):
RUN = [
    "Anna Berg\tAnna Berg\t0\t9\tP19\tOslo\t22\t26\t0.9",     # right
    "Anna Berg\tBerg\t29\t33\tP19\tOslo\t22\t26\t0.8",        # right, same entity triple
    "Anna Berg\tBerg\t29\t33\tP551\tOslo\t22\t26\t0.7",       # wrong: Oslo is no residence
    "Oslo\tNorway\t23\t29\tcapital\tOslo\t0\t4\t0.6",         # right (relation by label)
    "Oslo\tcapital\t12\t19\tP17\tNorway\t23\t29\t0.5",        # wrong: subject is no entity
]


def _run(tmp_path, lines, header=HEADER, name="run.tsv"):
    path = tmp_path / name
    path.write_text(header + "".join(x + "\n" for x in lines), encoding="utf-8")
    return path


def test_document_text_is_tokens_and_sentences_joined_by_single_spaces():
    text, starts = layout_text([["Anna", "Berg", "."], ["Berg", "lives"]])
    assert text == "Anna Berg . Berg lives"
    assert starts == [[0, 5, 10], [12, 17]]


def test_worked_example(tmp_path):
    r = TASK.score(write_reference(tmp_path / "ref"), _run(tmp_path, RUN))
    m = r.metrics
    # mention level: 3 of 5 right; gold mention pairs: 2 + 2 in "Anna Berg", 1 + 1 in "Oslo"
    assert (m["mention_precision"], m["mention_recall"]) == (3 / 5, 3 / 6)
    assert m["mention_f1"] == pytest.approx(2 * 3 / (5 + 6))
    # entity level: lines 1 and 2 are one triple; 4 distinct, 2 right, 4 gold labels
    assert (m["entity_precision"], m["entity_recall"], m["entity_f1"]) == (0.5, 0.5, 0.5)
    # subject wrong on line 5 only; object wrong on line 3 only (Oslo is no residence)
    assert (m["relation_precision"], m["subject_precision"], m["object_precision"]) == \
        (3 / 5, 4 / 5, 4 / 5)
    assert m["entity_precision_factorised"] == pytest.approx(0.6 * 0.8 * 0.8)
    assert r.counts["unlinked_mentions"] == 1
    assert (r.counts["predicted_entity_triples"], r.counts["gold_entity_triples"]) == (4, 4)
    per = r.breakdowns["per_relation"]
    assert set(per) == {"P17", "P19", "P36", "P551"}      # P27: neither predicted nor gold
    assert per["P19"]["mention_f1"] == 1.0 and per["P19"]["entity_tp"] == 1
    assert (per["P551"]["mention_recall"], per["P551"]["entity_predicted"]) == (0.0, 1)
    assert per["P36"]["label"] == "capital" and per["P36"]["entity_f1"] == 1.0
    assert (per["P17"]["entity_gold"], per["P17"]["entity_tp"]) == (1, 0)


def test_the_gold_as_a_run_scores_one_everywhere(tmp_path):
    r = TASK.score(write_reference(tmp_path / "ref"), _run(tmp_path, PERFECT))
    assert all(v == 1.0 for v in r.metrics.values()), r.metrics


def test_one_mention_pair_per_label_is_full_entity_recall_and_partial_mention_recall(tmp_path):
    lines = [PERFECT[0], PERFECT[2], PERFECT[4], PERFECT[5]]
    m = TASK.score(write_reference(tmp_path / "ref"), _run(tmp_path, lines)).metrics
    assert (m["entity_recall"], m["mention_recall"], m["mention_precision"]) == (1.0, 4 / 6, 1.0)


def test_the_reference_file_with_relations_beside_it_or_its_folder(tmp_path):
    folder = write_reference(tmp_path / "ref")
    (folder / "documents.json").rename(folder / "re-docred-dev.json")
    r = TASK.score(folder / "re-docred-dev.json", _run(tmp_path, RUN))
    assert r.metrics["entity_f1"] == 0.5
    assert TASK.score(folder, _run(tmp_path, RUN)).metrics["entity_f1"] == 0.5


def test_json_form_and_token_spans_score_as_the_tsv(tmp_path):
    """The same five predictions as JSON records, mentions given as sentence and tokens."""
    spans = {  # (sent, token_start, token_end) of each mention of RUN
        (0, 9): (0, 0, 2), (29, 33): (1, 0, 1), (22, 26): (0, 5, 6), (23, 29): (0, 5, 6),
        (0, 4): (0, 0, 1), (12, 19): (0, 3, 4)}
    records = []
    for line in RUN:
        doc, s, ss, se, rel, o, os_, oe, conf = line.split("\t")
        rec = {"doc_id": doc, "subject": s, "relation": rel, "object": o,
               "confidence": float(conf), "evidence": [0]}
        for role, span in (("subject", (int(ss), int(se))), ("object", (int(os_), int(oe)))):
            sent, start, end = spans[span]
            rec.update({f"{role}_sent": sent, f"{role}_token_start": start,
                        f"{role}_token_end": end})
        records.append(rec)
    path = tmp_path / "run.json"
    path.write_text("[\n" + ",\n".join(json.dumps(x) for x in records) + "\n]\n")
    ref = write_reference(tmp_path / "ref")
    as_json = TASK.score(ref, path).to_dict()
    as_tsv = TASK.score(ref, _run(tmp_path, RUN)).to_dict()
    assert as_json["metrics"] == as_tsv["metrics"]
    assert as_json["breakdowns"] == as_tsv["breakdowns"]


def test_per_document_statistics_give_the_entity_f1(tmp_path):
    ref = write_reference(tmp_path / "ref")
    stats = TASK.unit_stats(ref, _run(tmp_path, RUN))
    assert stats.units == ["Anna Berg", "Oslo"]
    # "Anna Berg": 1 right, 1 wrong, 1 missed; "Oslo": 1 right, 1 wrong, 1 missed
    assert stats.stats.tolist() == [[1, 1, 1], [1, 1, 1]]
    assert float(stats.aggregate(stats.stats, stats.weights)) == 0.5


def test_no_predictions_scores_zero_with_a_warning(tmp_path):
    r = TASK.score(write_reference(tmp_path / "ref"), _run(tmp_path, []))
    assert r.metrics["entity_f1"] == 0.0 and r.counts["gold_entity_triples"] == 4
    assert any("no predictions" in w for w in r.warnings)


def test_a_relation_without_gold_has_recall_0_in_per_relation(tmp_path):
    """P27 (country of citizenship) has no gold label in the tiny reference."""
    line = "Anna Berg\tAnna Berg\t0\t9\tP27\tOslo\t22\t26\t1"
    r = TASK.score(write_reference(tmp_path / "ref"), _run(tmp_path, [line]))
    row = r.breakdowns["per_relation"]["P27"]
    assert row["entity_gold"] == 0 and row["mention_recall"] == row["entity_recall"] == 0.0
    assert row["mention_precision"] == 0.0 and r.warnings == []


def test_cli_validate_and_score(cli, tmp_path):
    ref, run = write_reference(tmp_path / "ref"), _run(tmp_path, RUN)
    code, out, err = cli("validate", "kbp-relations", "-r", ref, run)
    assert code == 0 and "valid kbp-relations submission" in out, err
    code, out, err = cli("score", "kbp-relations", "-r", ref, run, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["metrics"]["entity_f1"] == 0.5
    bad = _run(tmp_path, [RUN[0].replace("P19", "P99")], name="bad.tsv")
    code, _, err = cli("validate", "kbp-relations", "-r", ref, bad)
    assert code == 2
    assert f"{bad}:2: relation: unknown relation 'P99'" in err and "Traceback" not in err


def test_entities_with_the_same_mentions_are_one(tmp_path):
    """Re-DocRED has two entities with one and the same mention; spans cannot tell them
    apart, so their labels are one entity's (and the reference warns)."""
    import copy

    from tests.tasks.kbp_tiny import DOCUMENTS
    docs = copy.deepcopy(DOCUMENTS)
    docs[1]["vertexSet"].append(copy.deepcopy(docs[1]["vertexSet"][1]))    # Norway again
    docs[1]["labels"].append({"h": 2, "t": 0, "r": "P36", "evidence": [0]})
    ref = write_reference(tmp_path / "ref", docs)
    r = TASK.score(ref, _run(tmp_path, PERFECT))
    assert r.counts["gold_entity_triples"] == 4 and r.metrics["entity_f1"] == 1.0
    assert r.warnings == ["entities with the very same mentions are one entity (their labels "
                          "merged), in 1 document(s): 'Oslo' (1)"]


def test_per_document_mention_statistics_give_the_mention_f1(tmp_path):
    ref = write_reference(tmp_path / "ref")
    stats = TASK.unit_stats(ref, _run(tmp_path, RUN), metric="mention_f1")
    # "Anna Berg": 2 right, 1 wrong, 2 of 4 gold pairs missed; "Oslo": 1, 1, 1
    assert stats.stats.tolist() == [[2, 1, 2], [1, 1, 1]]
    assert float(stats.aggregate(stats.stats, stats.weights)) == pytest.approx(6 / 11)
    with pytest.raises(NotImplementedError):
        TASK.unit_stats(ref, _run(tmp_path, RUN), metric="entity_precision")


def test_compare_two_runs_by_document(cli, tmp_path):
    ref = write_reference(tmp_path / "ref")
    a, b = _run(tmp_path, PERFECT, name="a.tsv"), _run(tmp_path, RUN, name="b.tsv")
    code, out, err = cli("compare", "kbp-relations", "-r", ref, a, b, "--format", "json",
                         "--samples", "200")
    assert code == 0, err
    assert json.loads(out)["metrics"]["difference"] == pytest.approx(1.0 - 0.5)


def test_item_key_round_trips_titles_with_bars():
    from shareval.formats.kbp_runs import item_key, parse_item_key
    key = item_key("A|B title", (0, 5), "P19", (10, 16))
    assert key == "A|B title|0-5|P19|10-16"
    assert parse_item_key(key) == ("A|B title", (0, 5), "P19", (10, 16))
    assert parse_item_key("doc|5-5|P19|1-2") is None       # empty span
    assert parse_item_key("doc|x|P19|1-2") is None
    assert parse_item_key("doc only") is None


def test_entity_types_are_their_mentions_commonest(tmp_path):
    import json
    from shareval.formats.errors import Problems
    from shareval.formats.kbp import read_reference
    doc = {"title": "T", "sents": [["Ann", "lives", "in", "Paris", "."]],
           "vertexSet": [[{"sent_id": 0, "pos": [0, 1], "type": "PER"}],
                         [{"sent_id": 0, "pos": [3, 4], "type": "LOC"},
                          {"sent_id": 0, "pos": [3, 4], "type": "ORG"},
                          {"sent_id": 0, "pos": [3, 4], "type": "LOC"}],
                         [{"sent_id": 0, "pos": [1, 2]}]],
           "labels": []}
    (tmp_path / "documents.json").write_text(json.dumps([doc]))
    (tmp_path / "relations.json").write_text(json.dumps({"P551": "residence"}))
    ref = read_reference(tmp_path, Problems())
    d = ref.documents["T"]
    assert d.types == ["PER", "LOC", ""]
    assert d.mention_type((13, 18)) == "LOC" and d.mention_type((0, 3)) == "PER"
    assert d.mention_type((0, 2)) == ""
