"""Gold, exports, imports and a dataset made from the gold."""
from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.conf import settings

from shareval.formats.errors import InvalidInput
from shareval.formats.standoff import annotation_key
from shareval.platform.competitions.models import CompetitionTask
from shareval.platform.workbench import exports, service, transfer
from shareval.platform.workbench.models import (IMPORTED, Annotation,
                                                Assignment, Entry, Unit)

TEXT = "We use NHANES 2003 and the NHANES survey.\n\nAlso the ALLBUS data."


@pytest.fixture
def world(people):
    w = people
    pr = service.create_project(w["comp"], "gold", "Gold", "rcc-pairs", w["org"])
    Entry.objects.bulk_create([Entry(project=pr, key="483", title="NHANES 2003", family="n"),
                               Entry(project=pr, key="484", title="NHANES 2005", family="n"),
                               Entry(project=pr, key="7", title="ALLBUS")])
    for i, ds in enumerate(("483", "7")):
        Unit.objects.create(project=pr, key=f"101|{ds}", title=ds, text=TEXT, position=i,
                            meta={"publication_id": "101", "data_set_id": ds})
    service.assign(pr, w["ann"], per_unit=2)
    w["pr"] = pr
    return w


def code(w, who, key, spans, done=True, answer=None):
    a = Assignment.objects.get(unit__key=key, user=w["ann"][who])
    ops = [{"op": "add", "kind": "span", "begin": b, "end": e} for b, e in spans]
    if answer:
        ops.append({"op": "answer", "key": "cited", "value": answer})
    if done:
        ops.append({"op": "status", "value": "done"})
    service.apply_ops(a, a.user, a.version, ops)
    return a


def test_gold_is_agreed_single_or_curated_and_disagreements_wait(world):
    code(world, 0, "101|483", [(7, 18), (27, 33)])
    code(world, 1, "101|483", [(7, 18)])
    code(world, 0, "101|7", [(52, 58)])
    code(world, 1, "101|7", [(52, 58)])
    docs, rep = transfer.gold_docs(world["pr"])
    assert [d.id for d in docs] == ["101|7"]
    assert rep.skipped == {"101|483": "needs curation (2 annotators disagree)"}
    assert transfer.unit_gold(world["pr"].units.get(key="101|7"))[1] == "agreed"
    cur = service.curate_as_organizer(world["pr"], world["pr"].units.get(key="101|483").pk,
                                      world["org"])
    service.apply_ops(cur, world["org"], 0, [{"op": "add", "kind": "span", "begin": 7,
                                              "end": 18}])
    assert transfer.unit_gold(cur.unit)[0] is None            # not done yet: still waiting
    service.apply_ops(cur, world["org"], 1, [{"op": "status", "value": "done"}])
    anns, why = transfer.unit_gold(cur.unit)
    assert why == "curated by org" and [(a.begin, a.end) for a in anns] == [(7, 18)]
    docs, rep = transfer.gold_docs(world["pr"])
    assert rep.skipped == {} and len(docs) == 2
    pair = next(d for d in docs if d.id == "101|483")
    assert [(s.begin, s.end, s.target) for s in pair.spans] == [(7, 18, "483")]


def test_a_pair_coded_not_used_cites_nothing(world):
    code(world, 0, "101|7", [(52, 58)], answer="no")
    a = Assignment.objects.get(unit__key="101|7", user=world["ann"][1])
    a.delete()
    (doc,), _ = transfer.gold_docs(world["pr"])
    assert doc.spans == [] and doc.answers == {"cited": "no"}


def test_rcc_export_scores_one_against_itself_and_becomes_a_dataset(world, tmp_path, cli):
    for who in (0, 1):
        code(world, who, "101|483", [(7, 18), (27, 40)])
        code(world, who, "101|7", [(52, 63)])
    docs, _ = transfer.gold_docs(world["pr"])
    folder = exports.write_format(world["pr"], docs, "rcc", tmp_path / "gold")
    cites = json.loads((folder / "data_set_citations.json").read_text())
    assert {(c["data_set_id"], tuple(c["mention_list"])) for c in cites} == {
        (483, ("NHANES 2003", "NHANES survey")), (7, ("ALLBUS data",))}
    code_, out, err = cli("score", "rcc-mentions", "-r", folder,
                          folder / "data_set_mentions.json", "--format", "json")
    assert code_ == 0, err
    m = json.loads(out)["metrics"]
    assert m["exact_f1"] == 1.0 and m["partial_f1"] == 1.0
    CompetitionTask.objects.create(competition=world["comp"], slug="mentions",
                                   task_name="rcc-mentions")
    ds, rep = transfer.make_dataset(world["pr"], "dev", "gold-mentions", world["org"],
                                    task_slug="mentions")
    assert ds.task.task_name == "rcc-mentions" and rep.units == 2
    assert ds.reference_file.is_dir() and len(ds.reference_digest) == 64
    assert str(ds.reference_file).startswith(str(settings.PRIVATE_DIR))
    code_, out, err = cli("score", "rcc-mentions", "-r", ds.reference_file,
                          folder / "data_set_mentions.json", "--format", "json")
    assert json.loads(out)["metrics"]["partial_f1"] == 1.0
    with pytest.raises(ValueError, match="already has a dataset"):
        transfer.make_dataset(world["pr"], "dev", "gold-mentions", world["org"], "mentions")


@pytest.mark.parametrize("fmt", ["xmi", "webanno", "brat"])
def test_inception_formats_round_trip_identical_annotations(world, tmp_path, fmt):
    code(world, 0, "101|483", [(7, 18), (27, 40), (7, 13)])
    a = Assignment.objects.get(unit__key="101|483", user=world["ann"][0])
    service.apply_ops(a, a.user, a.version, [{"op": "link", "id": a.annotations.get(
        begin=7, end=13).pk, "target": "484"}])
    code(world, 0, "101|7", [(52, 58)])
    before = transfer.annotator_docs(world["pr"], world["ann"][0])
    path = exports.write_format(world["pr"], before, fmt, tmp_path / "out")
    docs = exports.read_format(world["pr"], path, fmt)
    org = world["org"]
    rep = transfer.import_docs(world["pr"], docs, org, str(path))
    assert rep.units == 2
    after = transfer.annotator_docs(world["pr"], org)
    key = lambda ds: sorted((d.id, annotation_key(d)) for d in ds)   # noqa: E731
    assert key(after) == key(before)
    assert set(Annotation.objects.filter(assignment__user=org).values_list("origin", flat=True)) \
        == {IMPORTED}


def test_import_refuses_what_does_not_fit_and_keeps_saved_work(world, tmp_path):
    code(world, 0, "101|483", [(7, 18)])
    docs = transfer.annotator_docs(world["pr"], world["ann"][0])
    bad_link = [d for d in docs if d.id == "101|483"]
    bad_link[0].spans[0].target = "999"
    with pytest.raises(transfer.ImportRefused, match="link '999': no such entry"):
        transfer.import_docs(world["pr"], bad_link, world["org"], "x.zip")
    docs = transfer.annotator_docs(world["pr"], world["ann"][0])
    docs[0].text = docs[0].text + " extra"
    with pytest.raises(transfer.ImportRefused, match="its text differs"):
        transfer.import_docs(world["pr"], docs, world["org"], "x.zip")
    docs = transfer.annotator_docs(world["pr"], world["ann"][0])
    docs[0].id = "nope"
    with pytest.raises(transfer.ImportRefused, match="'nope': no unit"):
        transfer.import_docs(world["pr"], docs, world["org"], "x.zip")
    assert not Annotation.objects.filter(assignment__user=world["org"]).exists()
    # ann1 imports over their own saved unit: kept, reported
    docs = transfer.annotator_docs(world["pr"], world["ann"][0])
    docs[0].spans = []
    rep = transfer.import_docs(world["pr"], docs, world["ann"][0], "x.zip")
    assert "already worked on this unit (1 annotations, done): kept" in rep.skipped["101|483"]
    assert Annotation.objects.filter(assignment__user=world["ann"][0]).count() == 1


def test_import_with_create_units_moves_a_project_in(world, tmp_path):
    pr = service.create_project(world["comp"], "moved", "Moved", "text", world["org"])
    docs = transfer.annotator_docs(world["pr"], world["ann"][0])
    rep = transfer.import_docs(pr, docs, world["org"], "in.zip", create_units=True)
    assert rep.units == 2 and pr.units.count() == 2


def test_bad_xmi_upload_names_the_file(world, tmp_path):
    path = tmp_path / "broken.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("101_7.xmi", "<xmi:XMI not closed")
    with pytest.raises(InvalidInput) as e:
        exports.read_format(world["pr"], path, "xmi")
    assert any("broken.zip" in str(p) for p in e.value.problems)


def test_views_export_import_and_dataset(world, client, tmp_path):
    for who in (0, 1):
        code(world, who, "101|7", [(52, 63)])
    base = f"/c/{world['comp'].slug}/workbench/gold/"
    client.force_login(world["ann"][0])
    assert client.get(base + "export/rcc/").status_code == 404          # organizers only
    client.force_login(world["org"])
    r = client.get(base + "export/rcc/")
    assert r.status_code == 200 and r["Content-Disposition"].endswith('gold-rcc.zip"')
    names = zipfile.ZipFile(io.BytesIO(r.content)).namelist()
    assert sorted(names) == ["data_set_citations.json", "data_set_mentions.json",
                             "publications.json"]
    xmi = client.get(base + "export/xmi/?who=ann1")
    assert xmi.status_code == 200
    assert client.get(base + "export/svident/").status_code == 404      # not this kind's
    up = io.BytesIO(xmi.content)
    up.name = "from-inception.zip"
    r = client.post(base, {"what": "import", "format": "xmi", "as": "org", "file": up},
                    follow=True)
    assert "imported 2 units as org" in r.content.decode()
    CompetitionTask.objects.create(competition=world["comp"], slug="mentions",
                                   task_name="rcc-mentions")
    r = client.post(base, {"what": "dataset", "phase": "dev", "slug": "made", "task": "mentions"},
                    follow=True)
    assert "dataset dev/made made from the gold of 2 units" in r.content.decode()


def test_svident_gold_becomes_a_detection_dataset(world):
    from shareval.formats.svident import read_reference
    pr = service.create_project(world["comp"], "sv", "SV", "svident", world["org"])
    Entry.objects.create(project=pr, key="v1", title="Life satisfaction")
    for i, text in enumerate(("How satisfied are you with life?", "The weather was fine.")):
        Unit.objects.create(project=pr, key=f"uuid-{i}", title=f"s{i}", text=text, position=i,
                            meta={"uuid": f"uuid-{i}", "doc_id": "d1", "lang": "en"})
    service.assign(pr, [world["ann"][0]])
    for a, (value, links) in zip(Assignment.objects.filter(unit__project=pr).order_by("unit__position"),
                                 (("yes", ["v1"]), ("no", []))):
        service.apply_ops(a, a.user, 0, [{"op": "answer", "key": "is_variable", "value": value}]
                          + [{"op": "add", "kind": "answer", "label": "variable", "target": t}
                             for t in links] + [{"op": "status", "value": "done"}])
    CompetitionTask.objects.create(competition=world["comp"], slug="det",
                                   task_name="svident-detection")
    ds, rep = transfer.make_dataset(pr, "dev", "sv-gold", world["org"])
    assert ds.task.slug == "det" and rep.units == 2
    from shareval.formats.errors import Problems
    ref = read_reference(ds.reference_file, Problems())
    assert {k: (s.is_variable, s.variables) for k, s in ref.sentences.items()} == {
        "uuid-0": (1, ["v1"]), "uuid-1": (0, [])}
