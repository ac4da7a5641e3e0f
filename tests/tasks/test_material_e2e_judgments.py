"""MATERIAL E2E judgments keyed by system (query_id, doc_id, system, judge, relevant):
each system is scored from its own rows, a file without the scored system's rows or with a
retrieved document unjudged is a clear error; the system comes from --system, the summary
metadata names or the canonical archive name; open queries reported apart; the CLIR part
of the run equals material-clir's score of the same decisions (plan 8.1)."""
import json

import numpy as np
import pytest

from shareval.formats.errors import InvalidInput, Problems
from shareval.formats.summary import JUDGMENT_HEADER, read_judgments
from shareval.tasks import get
from shareval.tasks.material.e2e import system_of
from tests.tasks.test_material import DOCS, folder, tgz
from tests.tasks.test_material_e2e import submission_files
from tests.tasks.test_material_e2e_rules import E2E_BETA, _e2e_pack

A, B = "TEAMX.Sys1", "TEAMY.Sys2"
# the same pairs, opposite verdicts: A's judges keep query1/doc0 and query3/doc4 and
# reject query1/doc2; B's judges do the reverse
VOTES = {A: [("query1", 0, "YYY"), ("query1", 2, "NN"), ("query3", 4, "Y")],
         B: [("query1", 0, "N"), ("query1", 2, "Y"), ("query3", 4, "NN")]}


def judgments_file(path, votes=VOTES):
    rows = ["\t".join(JUDGMENT_HEADER)]
    for system, pairs in votes.items():
        rows += [f"{q}\t{DOCS[j]}\t{system}\tj{n}\t{v}" for q, j, vs in pairs
                 for n, v in enumerate(vs)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_each_system_is_scored_from_its_own_rows(tmp_path):
    pack = _e2e_pack(tmp_path)
    f = judgments_file(tmp_path / "j.tsv")
    run = folder(tmp_path, submission_files())          # TEAMX.Sys1's summaries
    b = E2E_BETA
    own = get("material-e2e").score(pack, run, judgments=str(f))
    # A: query1 keeps doc 0 (misses doc 1: P_miss 1/2), rejects doc 2; query3 finds doc 4
    assert own.metrics["aqwv"] == pytest.approx(1 - (0.5 + 0.0) / 2)
    assert own.metrics["aqwv_raw"] == pytest.approx(1 - (0.5 + 0.0) / 2)
    assert own.conventions["system"] == A and own.counts["judged_pairs"] == 3
    assert own.counts["judges_per_pair"] == pytest.approx((3 + 2 + 1) / 3)
    other = get("material-e2e").score(pack, run, judgments=str(f), system=B)
    # B: query1 loses doc 0 (P_miss 1) and keeps the false alarm on doc 2 (P_FA 1/4);
    # query3 loses doc 4 (P_miss 1)
    assert other.metrics["aqwv"] == pytest.approx(1 - (1.0 + b * (1 / 4) / 3))
    assert other.breakdowns["per_query"]["query1"] == {
        "qv": pytest.approx(1 - (1 + b / 4)), "qv_raw": pytest.approx(1 - (1 + b / 4)),
        "x1": 0.0, "x2": 2.0, "x3": 1.0, "x4": 3.0, "x1_raw": 0.0, "x3_raw": 1.0,
        "summaries": 2}
    assert other.conventions["system"] == B


def test_the_four_column_form_applies_to_every_system(tmp_path):
    pack = _e2e_pack(tmp_path)              # its e2e/judgments.tsv has no system column
    run = folder(tmp_path, submission_files())
    a = get("material-e2e").score(pack, run)
    b = get("material-e2e").score(pack, run, system=B)
    assert a.metrics == b.metrics
    # query1 keeps doc 0 (3 of 3), loses doc 2 (1 of 3); query3's doc 4 is a tie: a miss
    assert a.metrics["aqwv"] == pytest.approx(1 - (0.5 + 1.0) / 2)


def test_a_file_without_the_systems_rows_names_the_systems_it_has(tmp_path):
    pack = _e2e_pack(tmp_path)
    f = judgments_file(tmp_path / "j.tsv", {B: VOTES[B], "TEAMZ.Sys3": VOTES[A]})
    with pytest.raises(InvalidInput) as e:
        get("material-e2e").score(pack, folder(tmp_path, submission_files()),
                                  judgments=str(f))
    assert [str(p) for p in e.value.problems] == [
        f"{f}: system: no judgment for system {A}; the file has systems {B}, TEAMZ.Sys3"]


def test_other_systems_rows_do_not_judge_this_one(tmp_path):
    pack = _e2e_pack(tmp_path)
    # A's rows judge only query1's documents; B's rows judge query3/doc4 too
    f = judgments_file(tmp_path / "j.tsv", {A: VOTES[A][:2], B: VOTES[B]})
    with pytest.raises(InvalidInput) as e:
        get("material-e2e").score(pack, folder(tmp_path, submission_files()),
                                  judgments=str(f))
    assert [str(p) for p in e.value.problems] == [
        f"{f}: system {A}: 1 retrieved document has no judgment, e.g. query3/{DOCS[4]}"]


def test_judgment_rows_are_checked_with_their_line(tmp_path):
    f = tmp_path / "j.tsv"
    f.write_text("\t".join(JUDGMENT_HEADER) + f"\nquery1\t{DOCS[0]}\tTEAMX\tj0\tY\n"
                 f"query1\t{DOCS[0]}\t{A}\tj0\tmaybe\n"
                 f"query1\t{DOCS[0]}\t{A}\tj1\tY\n"
                 f"query1\t{DOCS[0]}\t{B}\tj1\tN\n"          # the same judge, another system
                 f"query1\t{DOCS[0]}\t{A}\tj1\tN\n")
    problems = Problems()
    read_judgments(f, problems, A)
    assert [str(p) for p in problems.items] == [
        f"{f}:2: system: 'TEAMX' is not <TeamID>.<SysLabel> (letters and digits, one point)",
        f"{f}:3: relevant: expected Y or N, found 'maybe'",
        f"{f}:6: judge: judge 'j1' judged this pair twice (first at line 4)"]
    with pytest.raises(InvalidInput) as e:       # the option is checked before any file
        get("material-e2e").score(tmp_path, tmp_path, system="TEAMX")
    assert [str(p) for p in e.value.problems] == [
        "<arguments>: system: 'TEAMX' is not <TeamID>.<SysLabel>"]


def test_system_of_from_the_metadata_names_else_the_canonical_name(tmp_path):
    pack = _e2e_pack(tmp_path)
    task = get("material-e2e")
    assert system_of(task.submission(folder(tmp_path, submission_files()), task.reference(pack))) == A
    # a run without a Y line names no summary: the canonical name's TeamID and SysLabel
    files = {f"{q}/{q}.tsv": "".join(f"{d}\tN\t0.1\t\n" for d in DOCS)
             for q in ("query1", "query2", "query3")}
    members = [(n, t.encode()) for n, t in files.items()]
    name = "NIST_E2E-primary-unconstrained-QUERY1-sys7_EVAL1-1A-DEV_20181113_225652.tgz"
    sub = task.submission(tgz(tmp_path, members, name), task.reference(pack))
    assert system_of(sub) == "NIST.sys7"
    assert system_of(task.submission(folder(tmp_path, files, "plain"),
                                     task.reference(pack))) is None
    # the metadata names win over the archive name
    named = tgz(tmp_path, [(n, d if isinstance(d, bytes) else d.encode())
                           for n, d in submission_files().items()], name.replace("sys7", "s8"))
    assert system_of(task.submission(named, task.reference(pack))) == A


def test_e2e_open_queries_apart_and_the_clir_part_equals_material_clir(tmp_path):
    pack = _e2e_pack(tmp_path)
    (pack / "queries.tsv").write_text(
        "query_id\tquery\tstatus\nquery1\tebola:Physical-And-Mental-Health\t\n"
        'query2\t"panel of judges":Government-And-Politics\tclosed\n'
        "query3\tmusic:Lifestyle\topen\n")
    files = submission_files()
    r = get("material-e2e").score(pack, folder(tmp_path, files))
    b = E2E_BETA
    # closed: query1 (doc 0 kept, doc 2 rejected; raw keeps 1/3 of it) and query2 (QV 1)
    assert r.metrics["aqwv"] == pytest.approx(1 - 0.5)
    assert r.metrics["aqwv_raw"] == pytest.approx(1 - (0.5 + b * (1 / 3 / 4) / 2))
    # open: query3's doc 4 is a tie: missed by the binary rule, half found raw
    assert r.metrics["open_aqwv"] == pytest.approx(0.0)
    assert r.metrics["open_aqwv_raw"] == pytest.approx(0.5)
    assert r.breakdowns["per_status"] == {
        "closed": {"aqwv": pytest.approx(0.5), "aqwv_raw": r.metrics["aqwv_raw"], "queries": 2},
        "open": {"aqwv": pytest.approx(0.0), "aqwv_raw": pytest.approx(0.5), "queries": 1}}
    assert (r.counts["open_queries"], r.counts["closed_queries"]) == (1, 2)
    assert list(r.breakdowns["per_query"]) == ["query1", "query2", "query3"]
    # the same decisions and confidences as a CLIR run, scored by material-clir
    clir_files = {f"{q}.tsv": "".join("\t".join(line.split("\t")[:3]) + "\n"
                                      for line in files[f"{q}/{q}.tsv"].splitlines())
                  for q in ("query1", "query2", "query3")}
    c = get("material-clir").score(pack, folder(tmp_path, clir_files, "clir"))
    for m in ("aqwv", "aqwv_all", "aqwv_with_relevant", "mqwv", "roc_auc", "adwv"):
        assert r.metrics[f"clir_{m}"] == c.metrics[m] or \
            (np.isnan(r.metrics[f"clir_{m}"]) and np.isnan(c.metrics[m])), m
    # closed query1 at the CLIR beta 20: P_miss 1/2, P_FA 1/4 over 2 closed queries
    assert c.metrics["aqwv"] == pytest.approx(1 - (0.5 + 20 * (1 / 4) / 2))
    assert r.counts["clir_beta"] == 20.0


def test_pack_beta_clir_sets_the_clir_part(tmp_path):
    pack = _e2e_pack(tmp_path)
    (pack / "pack.yaml").write_text("language: 1A\nbeta: {clir: 10, e2e: 50}\n")
    r = get("material-e2e").score(pack, folder(tmp_path, submission_files()))
    assert (r.counts["beta"], r.counts["clir_beta"]) == (50.0, 10.0)
    # query1: P_miss 1/2, P_FA 1/4; query3 finds its document; query2 nothing
    assert r.metrics["clir_aqwv"] == pytest.approx(1 - (0.5 / 2 + 10 * (1 / 4) / 3))
    assert json.loads(json.dumps(r.to_dict()))["conventions"]["clir"].startswith(
        "CLIR computed from the E2E run (plan 8.1)")


def test_before_any_judging_the_clir_part_is_scored_and_the_e2e_values_wait(tmp_path):
    """A run of the evaluation week, scored before judging: no zeros, no credit for
    unjudged summaries; E2E values undefined, the CLIR part exact, a warning says why."""
    pack = _e2e_pack(tmp_path)
    (pack / "e2e" / "judgments.tsv").unlink()
    run = folder(tmp_path, submission_files())
    waiting = get("material-e2e").score(pack, run)
    judged = get("material-e2e").score(pack, run, judgments=str(judgments_file(
        tmp_path / "j.tsv")))
    for m in ("aqwv", "aqwv_raw", "aqwv_all", "adwv"):
        assert np.isnan(waiting.metrics[m]), m
    for m in ("clir_aqwv", "clir_mqwv", "clir_roc_auc", "clir_aqwv_all",
              "clir_aqwv_at_e2e_beta"):
        assert waiting.metrics[m] == judged.metrics[m], m
    assert all(np.isnan(r["aqwv"]) for r in waiting.breakdowns["per_domain"].values())
    assert any("no judgments yet" in w for w in waiting.warnings)
    assert waiting.to_dict()["metrics"]["aqwv"] is None      # stored as null, unranked
