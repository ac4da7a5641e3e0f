"""MATERIAL E2E: summaries validated against the plan's schema, E2E AQWV both ways."""
import io
import json

import numpy as np
import pytest
from PIL import Image

from shareval.formats.errors import InvalidInput
from shareval.formats.images import image_info
from shareval.tasks import get
from tests.tasks.test_material import DOCS, REL, folder, make_pack

TEAM, SYS = "TEAMX", "Sys1"


def image(width=1024, height=300, fmt="PNG"):
    buf = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buf, format=fmt)
    return buf.getvalue()


def summary(qid, doc, **override):
    base = f"{TEAM}.{SYS}.{qid}.{doc}"
    obj = {"team_id": TEAM, "sys_label": SYS, "uuid": "dc91049e-d934-40d7-a175-5af32cbabbca",
           "query_id": qid, "document_id": doc, "run_name": "run1",
           "run_date_time": "2018-03-27T13:51:00-05:00", "image_filename": f"{base}.png",
           "content_list": ["panel of judges", "bribery"]}
    obj.update(override)
    return base, obj


# Y decisions: query1 -> docs 0 (relevant) and 2 (not); query3 -> doc 4 (relevant)
Y = {"query1": [0, 2], "query2": [], "query3": [4]}


def submission_files(mutate=None):
    files = {}
    for qid in REL:
        lines = []
        for j, doc in enumerate(DOCS):
            if j in Y[qid]:
                base, obj = summary(qid, doc)
                if mutate:
                    obj = mutate(qid, j, obj) or obj
                files[f"{qid}/{base}.json"] = json.dumps(obj)
                files[f"{qid}/{base}.png"] = image()
                lines.append(f"{doc}\tY\t0.9\t{base}.json")
            else:
                lines.append(f"{doc}\tN\t0.1\t")
        files[f"{qid}/{qid}.tsv"] = "\n".join(lines) + "\n"
    return files


@pytest.fixture
def pack(tmp_path):
    root = make_pack(tmp_path / "pack")
    (root / "e2e").mkdir()
    # query1/doc0: 3 of 3 yes; query1/doc2: 1 of 3 yes; query3/doc4: 1 of 2 yes (a tie)
    votes = [("query1", 0, [1, 1, 1]), ("query1", 2, [1, 0, 0]), ("query3", 4, [1, 0])]
    rows = ["query_id\tdoc_id\tjudge\trelevant"]
    for qid, j, vs in votes:
        rows += [f"{qid}\t{DOCS[j]}\tj{n}\t{'Y' if v else 'N'}" for n, v in enumerate(vs)]
    (root / "e2e" / "judgments.tsv").write_text("\n".join(rows) + "\n")
    return root


def test_e2e_binary_and_raw(pack, tmp_path):
    r = get("material-e2e").score(pack, folder(tmp_path, submission_files()))
    beta = 59.9                                     # plan Table 1, 1A E2E
    assert r.counts["beta"] == beta
    # binary (strict majority): q1 doc0 stays X1, doc2 (1/3) -> X4; q3 doc4 (1/2, tie) -> X2
    pm = {"query1": 0.5, "query3": 1.0}            # q1: 2 relevant, 1 found; q3: 1 relevant, missed
    pf = {"query1": 0.0, "query2": 0.0, "query3": 0.0}
    assert r.metrics["aqwv"] == pytest.approx(
        1 - (np.mean(list(pm.values())) + beta * np.mean(list(pf.values()))))
    # raw: q1 doc0 credit 1, doc2 false-alarm credit 1/3 of 4 non-relevant; q3 doc4 credit 1/2
    pm_raw = {"query1": 0.5, "query3": 0.5}
    pf_raw = {"query1": (1 / 3) / 4, "query2": 0.0, "query3": 0.0}
    assert r.metrics["aqwv_raw"] == pytest.approx(
        1 - (np.mean(list(pm_raw.values())) + beta * np.mean(list(pf_raw.values()))))
    assert r.breakdowns["per_query"]["query1"]["x3_raw"] == pytest.approx(1 / 3)
    # document-weighted (plan footnotes 5, 25), pooled over the 3 relevant and 15
    # non-relevant pairs: binary finds 1 of 3, no false alarm; raw credits 1 + 1/2
    # hits and 1/3 of a false alarm
    assert r.metrics["adwv"] == pytest.approx(1 - 2 / 3)
    assert r.metrics["adwv_raw"] == pytest.approx(1 - (1.5 / 3 + beta * (1 / 3) / 15))
    assert "adwv" in r.conventions
    assert r.counts["summaries"] == 3
    lenient = get("material-e2e").score(pack, folder(tmp_path, submission_files(), "s2"),
                                        judge_threshold=0.4)
    assert lenient.breakdowns["per_query"]["query3"]["x1"] == 1.0    # the tie now counts
    # query1 keeps P_miss 1/2 (1/3 of the judges is below 0.4), query3 finds its document
    assert lenient.metrics["aqwv"] == pytest.approx(1 - (0.5 + 0.0) / 2)
    assert lenient.counts["judge_threshold"] == 0.4


def test_e2e_validation_lists_every_problem(pack, tmp_path):
    def mutate(qid, j, obj):
        if (qid, j) == ("query1", 0):
            obj.update(extra=1, uuid="nope", content_list=["w"] * 101, query_id="query9")
        if (qid, j) == ("query1", 2):
            obj["run_date_time"] = "yesterday"

    files = submission_files(mutate)
    base0 = f"{TEAM}.{SYS}.query1.{DOCS[0]}"
    base4 = f"{TEAM}.{SYS}.query3.{DOCS[4]}"
    files[f"query3/{base4}.png"] = image(width=800, height=900)
    files[f"query1/{TEAM}.{SYS}.query1.{DOCS[2]}.png"] = image(fmt="JPEG")
    files["query1/query1.tsv"] = files["query1/query1.tsv"].replace(
        f"{DOCS[1]}\tN\t0.1\t", f"{DOCS[1]}\tN\t0.1\tsomething.json")
    files["query2/stray.json"] = "{}"
    files["other/x.tsv"] = "x"
    sub = folder(tmp_path, files)
    with pytest.raises(InvalidInput) as e:
        get("material-e2e").validate(sub, reference=pack)
    msgs = [str(p) for p in e.value.problems]
    j0 = sub / "query1" / f"{base0}.json"
    base2 = f"{TEAM}.{SYS}.query1.{DOCS[2]}"
    png4 = sub / "query3" / (base4 + ".png")
    # every problem, whole: members first, then each query's .tsv and its summaries in order
    assert msgs == [
        f"{sub / 'other' / 'x.tsv'}: member: E2E submissions hold one folder per query of the "
        f"pack: <QueryID>/<file> (plan 8.2.2)",
        f"{j0}: extra: not allowed (the schema has additionalProperties: false)",
        f"{j0}: uuid: 'nope' is not a UUID",
        f"{j0}: query_id: 'query9' but the line is for 'query1'",
        f"{j0}: content_list: must hold 1 to 100 items, found 101",
        f"{sub / 'query1' / 'query1.tsv'}:2: Metadata File: must be empty on an N line",
        f"{sub / 'query1' / (base2 + '.json')}: run_date_time: 'yesterday' is not an "
        f"ISO-8601/RFC-3339 date-time (e.g. 2018-03-27T13:51:00-05:00)",
        f"{sub / 'query1' / (base2 + '.png')}: image: the content is JPEG but the name says "
        f"otherwise",
        f"{png4}: image: 800 px wide: must be exactly 1024 (plan 7.2.4.5)",
        f"{png4}: image: 900 px high: at most 768 (plan 7.2.4.5)",
        f"{sub / 'query2' / 'stray.json'}: member: not named by any Y line of the query's .tsv"]


def test_word_limit_and_team_list(pack, tmp_path):
    too_long = submission_files(lambda q, j, o: o.update(content_list=["one two"] * 51))
    with pytest.raises(InvalidInput) as e:
        get("material-e2e").validate(folder(tmp_path, too_long), reference=pack)
    sub = tmp_path / "sub"
    jsons = [sub / q / f"{TEAM}.{SYS}.{q}.{DOCS[j]}.json" for q, j in
             (("query1", 0), ("query1", 2), ("query3", 4))]
    # 51 items of two words: 102 words, in each of the three summaries
    assert [str(p) for p in e.value.problems] == [
        f"{j}: content_list: 102 words: a summary is limited to 100 words (plan section 3)"
        for j in jsons]
    (pack / "pack.yaml").write_text("language: 1A\nteams: [FLAIR, SARAL]\n")
    with pytest.raises(InvalidInput) as e:
        get("material-e2e").validate(folder(tmp_path, submission_files(), "s2"), reference=pack)
    assert [str(p) for p in e.value.problems] == [
        f"{str(j).replace(str(sub), str(tmp_path / 's2'))}: team_id: 'TEAMX' is not one of "
        f"FLAIR, SARAL" for j in jsons]


def test_image_info():
    assert image_info(image(1024, 768)) == ("png", 1024, 768)
    assert image_info(image(1024, 10, "JPEG")) == ("jpeg", 1024, 10)
    assert image_info(b"GIF89a....") is None and image_info(b"\xff\xd8\xff") is None
