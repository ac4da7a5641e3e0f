"""Validation reports root causes, for every task (issue 19).

A missing or unreadable file, a syntax error or the wrong layout is one
problem, alone; a bad value is one problem for its id and never also a missing
prediction; many missing or unknown ids are one summarized problem.
Each test compares the whole problem list, so the old walls of consequences
("no prediction" per unread sentence) fail them.
"""
import json

import pytest

from shareval.formats.errors import InvalidInput
from shareval.tasks import get
from tests.conftest import write
from tests.tasks.test_material import DOCS, SYSTEM, folder, make_pack

SV_HEADER = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
UUIDS = [f"u{i}" for i in range(8)]


def problems(task, sub, ref=None):
    with pytest.raises(InvalidInput) as e:
        get(task).validate(sub, ref)
    assert e.value.total == len(e.value.problems)
    return [str(p) for p in e.value.problems]


@pytest.fixture
def sv_ref(tmp_path):
    rows = "".join(f"s\t{i % 2}\t{'v1' if i % 2 else ''}\tR\td{i // 4}\t{u}\ten\n"
                   for i, u in enumerate(UUIDS))
    return write(tmp_path / "ref.tsv", SV_HEADER + rows)


@pytest.fixture
def labels_ref(tmp_path):
    return write(tmp_path / "labels.tsv",
                 "item\tlabel\n" + "".join(f"i{k}\t{'ab'[k % 2]}\n" for k in range(8)))


# ------------------------------------------------------------------ missing file

@pytest.mark.parametrize("task", ["svident-detection", "svident-disambiguation",
                                  "classification", "trec", "rcc-citations", "rcc-mentions",
                                  "rcc-fields-methods"])
def test_missing_file_is_one_problem_even_with_a_reference(task, tmp_path, sv_ref, labels_ref):
    ref = {"svident-detection": sv_ref, "svident-disambiguation": sv_ref,
           "classification": labels_ref}.get(task)
    gone = tmp_path / "gone.json"
    assert problems(task, gone, ref) == [f"{gone}: file: does not exist"]


@pytest.mark.parametrize("task", ["material-clir", "material-domainid", "material-langid",
                                  "material-e2e"])
def test_missing_material_submission_is_one_problem(task, tmp_path):
    pack = make_pack(tmp_path / "pack")
    gone = tmp_path / "gone"
    assert problems(task, gone, pack) == [f"{gone}: file: does not exist"]


def test_missing_reference_is_one_problem(tmp_path):
    sub = write(tmp_path / "sub.json", json.dumps({u: 0 for u in UUIDS}))
    gone = tmp_path / "gone.tsv"
    assert problems("svident-detection", sub, gone) == [f"{gone}: file: does not exist"]


# ----------------------------------------------------------------- syntax errors

BROKEN = '{"u0": 1,\n "u1": 0\n "u2": 1}'           # a comma missing at the end of line 2


@pytest.mark.parametrize("task", ["svident-detection", "svident-disambiguation",
                                  "classification"])
def test_json_object_syntax_error_is_one_problem_with_line_and_column(task, tmp_path, sv_ref,
                                                                      labels_ref):
    ref = labels_ref if task == "classification" else sv_ref
    sub = write(tmp_path / "sub.json", BROKEN)
    assert problems(task, sub, ref) == [f"{sub}:3:2: json: expected ',' or '}}'"]


def test_syntax_error_after_bad_values_is_reported_alone(tmp_path, sv_ref):
    sub = write(tmp_path / "sub.json", '{"u0": 2,\n "u1": "x",\n "u2" 1}')
    assert problems("svident-detection", sub, sv_ref) == [
        f"{sub}:3:7: json: expected ':' after member name"]


@pytest.mark.parametrize("task", ["rcc-citations", "rcc-mentions", "rcc-fields-methods"])
def test_json_array_syntax_error_is_one_problem_with_line_and_column(task, tmp_path):
    sub = write(tmp_path / "sub.json", '[\n  {"publication_id": 1,, "x": 2}\n]')
    assert problems(task, sub) == [f"{sub}:2:24: json: Expecting property name enclosed in "
                                   f"double quotes"]


def test_invalid_utf8_is_one_problem_with_line_and_column(tmp_path, sv_ref):
    sub = tmp_path / "sub.tsv"
    sub.write_bytes(b"u0\t1\nu1\t\xff0\n")
    assert problems("svident-detection", sub, sv_ref) == [
        f"{sub}:2:4: encoding: not valid UTF-8 (byte 8)"]


def test_trec_run_not_utf8_is_one_problem(tmp_path):
    run = tmp_path / "run"
    run.write_bytes(b"q1 Q0 d1 1 1.0 t\nq1 Q0 d\xff 2 0.5 t\nq1 Q0 d3 x 0.5 t\n")
    assert problems("trec", run) == [f"{run}:2:8: encoding: not valid UTF-8 (byte 24)"]


# ------------------------------------------------------------------ wrong layout

def test_json_array_where_an_object_is_expected(tmp_path, sv_ref, labels_ref):
    sub = write(tmp_path / "sub.json", json.dumps([{"uuid": u, "is_variable": 0} for u in UUIDS]))
    assert problems("svident-detection", sub, sv_ref) == [
        f"{sub}:1: json: expected a JSON object {{uuid: 0|1}}, found an array"]
    assert problems("svident-disambiguation", sub, sv_ref) == [
        f"{sub}:1: json: expected a JSON object {{uuid: {{variable_id: score}}}} or a TREC run, "
        f"found an array"]
    assert problems("classification", sub, labels_ref) == [
        f"{sub}:1:1: json: expected a JSON object starting with '{{', found an array"]


def test_reference_given_as_detection_submission(tmp_path, sv_ref):
    assert problems("svident-detection", sv_ref, sv_ref) == [
        f"{sv_ref}:1: line: expected uuid<TAB>is_variable, found 7 column(s)"]


def test_table_with_the_wrong_header(tmp_path, labels_ref):
    sub = write(tmp_path / "sub.tsv", "id\tguess\n" + "".join(f"i{k}\ta\n" for k in range(8)))
    assert problems("classification", sub, labels_ref) == [
        f"{sub}:1: header: missing column(s) label; found: id, guess"]


def test_qrels_given_as_a_run(tmp_path):
    qrels = write(tmp_path / "qrels", "".join(f"q{k} 0 d{k} 1\n" for k in range(50)))
    assert problems("trec", qrels) == [
        f"{qrels}:1: line: expected 6 whitespace-separated columns "
        f"(query_id Q0 doc_id rank score run_tag), found 4"]


def test_object_where_an_array_of_records_is_expected(tmp_path):
    sub = write(tmp_path / "sub.json", json.dumps({"1": {"data_set_id": 2}}))
    assert problems("rcc-citations", sub) == [
        f"{sub}:1:1: json: expected a JSON array of records starting with '[', found an object"]


@pytest.mark.parametrize("task, record, what", [
    ("rcc-citations", {"publication_id": 1, "mention": "ALLBUS"},
     "expected data_set_citations records {publication_id, data_set_id, score, mention_list}, "
     "found a record without 'data_set_id'"),
    ("rcc-mentions", {"publication_id": 1, "data_set_id": 2, "score": 1, "mention_list": []},
     "expected data_set_mentions records {publication_id, mention, score}, found a record "
     "without 'mention'"),
    ("rcc-citations", [1, 2],
     "expected data_set_citations records {publication_id, data_set_id, score, mention_list}, "
     "found a JSON list"),
])
def test_records_of_another_kind(task, record, what, tmp_path):
    sub = write(tmp_path / "sub.json", json.dumps([record] * 30, indent=1))
    assert problems(task, sub) == [f"{sub}:2: [0]: {what}"]


def test_fields_file_without_a_field_or_method(tmp_path):
    sub = write(tmp_path / "sub.json", json.dumps([{"publication_id": 1, "mention": "x"}] * 30))
    assert problems("rcc-fields-methods", sub) == [
        f"{sub}:1: record: expected a 'research_field' or a 'method' field"]


def test_material_member_with_the_wrong_layout(tmp_path):
    pack = make_pack(tmp_path / "pack")
    two_columns = "".join(line.rsplit("\t", 1)[0] + "\n" for line in SYSTEM["query1"].splitlines())
    sub = folder(tmp_path, {"query1.tsv": two_columns, "query2.tsv": SYSTEM["query2"],
                            "query3.tsv": SYSTEM["query3"]})
    assert problems("material-clir", sub, pack) == [
        f"{sub / 'query1.tsv'}:1: line: expected 3 tab-separated fields "
        f"(DocID<TAB>Y|N<TAB>confidence), found 2"]


def test_unreadable_archive_is_one_problem(tmp_path):
    pack = make_pack(tmp_path / "pack")
    junk = write(tmp_path / "junk.tgz", "not gzip")
    got = problems("material-clir", junk, pack)
    assert len(got) == 1 and got[0].startswith(f"{junk}: archive: not a readable .tgz archive")


# ------------------------------------------- a bad value is not also a missing prediction

@pytest.mark.parametrize("suffix, body", [
    (".json", json.dumps({u: (2 if u == "u3" else 0) for u in UUIDS}, indent=1)),
    (".tsv", "".join(f"{u}\t{'yes' if u == 'u3' else 0}\n" for u in UUIDS)),
])
def test_bad_detection_value_is_its_only_problem(suffix, body, tmp_path, sv_ref):
    sub = write(tmp_path / f"sub{suffix}", body)
    got = problems("svident-detection", sub, sv_ref)
    assert got == ([f"{sub}:5: uuid u3: is_variable: expected 0 or 1, found 2"] if suffix == ".json" else
                   [f"{sub}:4: is_variable: expected 0 or 1, found 'yes'"])


def test_bad_ranking_value_is_its_only_problem(tmp_path, sv_ref):
    sub = write(tmp_path / "sub.json", json.dumps({"u1": {"v1": "high"}, "u3": ["v1"]}))
    assert problems("svident-disambiguation", sub, sv_ref) == [
        f"{sub}:1: uuid u1: variables: score of variable 'v1' is not a finite number: 'high'"]


@pytest.mark.parametrize("suffix, body", [
    (".json", json.dumps({f"i{k}": ([1] if k == 3 else "a") for k in range(8)}, indent=1)),
    (".tsv", "item\tlabel\n" + "".join(f"i{k}\t{'' if k == 3 else 'a'}\n" for k in range(8))),
])
def test_bad_label_is_its_only_problem(suffix, body, tmp_path, labels_ref):
    sub = write(tmp_path / f"sub{suffix}", body)
    got = problems("classification", sub, labels_ref)
    assert got == ([f"{sub}:5: item i3: label: must be a string or an integer"] if suffix == ".json"
                   else [f"{sub}:5: label: empty label"])


def test_bad_trec_score_is_its_only_problem(tmp_path):
    run = write(tmp_path / "run", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 high t\nq2 Q0 d1 1 0.5 t\n")
    assert problems("trec", run) == [f"{run}:2: score: not a finite number: 'high'"]


def test_bad_citation_score_is_its_only_problem(tmp_path):
    recs = [{"publication_id": k, "data_set_id": 1, "score": "high" if k == 2 else 1.0,
             "mention_list": []} for k in range(5)]
    sub = write(tmp_path / "sub.json", json.dumps(recs, indent=1))
    assert problems("rcc-citations", sub) == [
        f"{sub}:14: record 2 (publication 2): score: must be a finite number, found 'high'"]


# ------------------------------------------------ missing and unknown ids: one summary

def test_missing_sentences_are_one_summarized_problem(tmp_path, sv_ref):
    sub = write(tmp_path / "sub.json", json.dumps({"u0": 0, "u1": 1}))
    assert problems("svident-detection", sub, sv_ref) == [
        f"{sub}: uuid: 6 sentences have no prediction, first: 'u2', 'u3', 'u4'"]
    one = write(tmp_path / "one.json", json.dumps({u: 0 for u in UUIDS[:-1]}))
    assert problems("svident-detection", one, sv_ref) == [
        f"{one}: uuid: 1 sentence has no prediction: 'u7'"]


def test_unknown_uuids_are_one_summarized_problem_at_the_first(tmp_path, sv_ref):
    preds = {u: 0 for u in UUIDS}
    preds.update({f"x{k}": 1 for k in range(40)})
    sub = write(tmp_path / "sub.json", json.dumps(preds, indent=1))
    assert problems("svident-detection", sub, sv_ref) == [
        f"{sub}:10: uuid: 40 uuids are not in the reference, first: 'x0', 'x1', 'x2' "
        f"(lines 10, 11, 12)"]
    assert problems("svident-disambiguation",
                    write(tmp_path / "d.json", json.dumps({"u1": ["v1"], "zz": ["v1"]})),
                    sv_ref) == [f"{tmp_path / 'd.json'}:1: uuid: 1 uuid is not in the "
                                f"reference: 'zz'"]


def test_a_file_for_another_dataset_gives_two_summaries(tmp_path, sv_ref):
    sub = write(tmp_path / "sub.tsv", "".join(f"t{k}\t0\n" for k in range(500)))
    assert problems("svident-detection", sub, sv_ref) == [
        f"{sub}:1: uuid: 500 uuids are not in the reference, first: 't0', 't1', 't2' "
        f"(lines 1, 2, 3)",
        f"{sub}: uuid: 8 sentences have no prediction, first: 'u0', 'u1', 'u2'"]


def test_missing_items_are_one_summarized_problem(tmp_path, labels_ref):
    sub = write(tmp_path / "sub.tsv", "item\tlabel\ni0\ta\ni9\tb\n")
    assert problems("classification", sub, labels_ref) == [
        f"{sub}:3: item: 1 item is not in the reference: 'i9'",
        f"{sub}: item: 7 items have no prediction, first: 'i1', 'i2', 'i3'"]


def test_unknown_publications_are_one_summarized_problem(tmp_path):
    (tmp_path / "ref").mkdir()
    write(tmp_path / "ref" / "data_set_citations.json",
          json.dumps([{"publication_id": 1, "data_set_id": 1}]))
    write(tmp_path / "ref" / "publications.json", json.dumps([{"publication_id": 1}]))
    recs = [{"publication_id": k, "data_set_id": 1, "score": 1.0, "mention_list": []}
            for k in range(1, 300)]
    sub = write(tmp_path / "sub.json", json.dumps(recs, indent=1))
    assert problems("rcc-citations", sub, tmp_path / "ref") == [
        f"{sub}:8: publication_id: 298 records name publications not in the evaluated corpus, "
        f"first: '2', '3', '4' (lines 8, 14, 20)"]


def test_missing_material_files_are_one_summarized_problem(tmp_path):
    pack = make_pack(tmp_path / "pack")
    sub = folder(tmp_path, {"query2.tsv": SYSTEM["query2"]})
    assert problems("material-clir", sub, pack) == [
        f"{sub}: file: 2 files are missing: 'query1.tsv', 'query3.tsv'"]


def test_summary_lists_three_ids_and_the_count():
    from shareval.formats.errors import FIRST_IDS, Problems
    probs = Problems()
    probs.summarize("f", "uuid", [f"u{k}" for k in range(412)], "{n} sentence has no prediction",
                    "{n} sentences have no prediction")
    assert FIRST_IDS == 3
    assert [str(p) for p in probs.items] == [
        "f: uuid: 412 sentences have no prediction, first: 'u0', 'u1', 'u2'"]
    probs.summarize("f", "uuid", [], "{n} x", "{n} xs")
    assert probs.total == 1


# ------------------------------------------------------------ the issue's three inputs

def test_issue_19_inputs_on_the_real_training_data(shared_data, tmp_path, cli):
    """Before: 3,824, 2,549 and 2 problems. After: one each, exit code 2."""
    ref = shared_data / "sv-ident" / "train" / "train.tsv"
    import csv
    with open(ref, encoding="utf-8", newline="") as f:
        uuids = [r["uuid"] for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]
    text = json.dumps({u: 0 for u in uuids}, indent=1).split("\n")
    text[1276] = text[1276].rstrip(",")
    broken = write(tmp_path / "syntax.json", "\n".join(text))
    value = {u: 0 for u in uuids}
    value[uuids[5]] = 2
    two = write(tmp_path / "value2.json", json.dumps(value, indent=1))
    gone = tmp_path / "missing.json"
    for sub, expected in ((gone, f"{gone}: file: does not exist"),
                          (broken, f"{broken}:1278:2: json: expected ',' or '}}'"),
                          (two, f"{two}:7: uuid {uuids[5]}: is_variable: expected 0 or 1, found 2")):
        code, out, err = cli("validate", "svident-detection", "-r", ref, "-s", sub)
        assert code == 2
        assert err.splitlines() == [expected, "1 problem(s) found; nothing was scored."]


def test_e2e_summary_syntax_error_is_one_problem_with_line_and_column(tmp_path):
    from tests.tasks.test_material_e2e import submission_files, summary
    pack = make_pack(tmp_path / "pack")
    (pack / "e2e").mkdir()
    (pack / "e2e" / "judgments.tsv").write_text("query_id\tdoc_id\tjudge\trelevant\n")
    files = submission_files()
    base, _ = summary("query1", DOCS[0])
    files[f"query1/{base}.json"] = '{"team_id": "TEAMX",\n "sys_label" "Sys1"}'
    sub = folder(tmp_path, files)
    assert problems("material-e2e", sub, pack) == [
        f"{sub / 'query1' / base}.json:2:14: json: Expecting ':' delimiter"]
