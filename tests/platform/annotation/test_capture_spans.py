"""RCC phase-2 capture by selection: the study keeps each sampled publication's
whole text; the coder's selection (offsets) gives the reference's name and
passage, derived on the server; bad offsets are refused naming the field;
typing only where the study has no text; the trail, review and final pages and
the competition archive keep the offsets and the text."""
from __future__ import annotations

import json
import re

import pytest

from .test_annotation import make_study, post, rcc, url  # noqa: F401 -- the fixture

SENTENCE = "Our estimates use the Panel Study of Income Dynamics (PSID), waves 1990 to 2000."
NAME = "Panel Study of Income Dynamics"
# astral characters, CR LF and a NUL before the sentence: offsets count code points of
# the text as a browser holds it (CR LF -> LF, NUL dropped)
OPENING = "Bank lending 𝛽 and 𝑥 credit.\r\nWe study firms.\x00 "


def text_file(pid: str) -> dict:
    body = OPENING + "Filler words about loans. " * 40 + SENTENCE + " Results follow in Fig. 2 " \
        "below. The end."
    return {"abstract": f"Abstract of {pid}.", "reduced_content": body}


@pytest.fixture
def texts(tmp_path):
    d = tmp_path / "texts"
    d.mkdir()
    for k in range(3):
        for i in range(12):
            pid = str(100 * k + i)
            if pid != "1":                       # publication 1 has no text: typed
                (d / f"{pid}.json").write_text(json.dumps(text_file(pid)))
    return d


def studied(rcc, texts):  # noqa: F811
    from shareval.platform.annotation.models import FullText, Publication
    st = make_study(rcc, texts_dir=texts, strata={
        "0": ("Finance", "titled"), "1": ("Finance", "none"), "2": ("Finance", "titled")},
        mix={"titled": 2, "untitled": 0, "none": 1}, per_topic=3, qualitative=0)
    pubs = {p.publication_id: p for p in st.publications.filter(purpose=Publication.REFERENCES)}
    return st, pubs, {t.publication_id: t.text for t in FullText.objects.filter(
        publication__study=st)}


def test_the_study_stores_each_whole_text_once_as_the_browser_holds_it(rcc, texts):  # noqa: F811
    st, pubs, stored = studied(rcc, texts)
    assert set(pubs) == {"0", "1", "2"}
    assert set(stored) == {pubs["0"].pk, pubs["2"].pk}          # 1: no file, no text
    text = stored[pubs["0"].pk]
    assert text.startswith("Abstract of 0.\n\nBank lending 𝛽 and 𝑥 credit.\nWe study firms. ")
    assert "\r" not in text and "\x00" not in text and SENTENCE in text
    assert pubs["0"].payload["passages"]                          # the old snapshot stays


def test_offsets_give_the_name_and_the_passage_never_the_posted_text(rcc, texts,  # noqa: F811
                                                                     client):
    from shareval.platform.annotation.models import Decision, Reference
    st, pubs, stored = studied(rcc, texts)
    p, text = pubs["0"], stored[pubs["0"].pk]
    b = text.index(NAME)
    coder = rcc["users"]["coder"]
    # a double click takes the space after the word too: trimmed; the posted name and
    # context are ignored
    r = post(client, coder, url(st, "capture", p), {
        "action": "add", "kind": "titled", "begin": b, "end": b + len(NAME) + 1,
        "name": "FORGED NAME", "context": "FORGED CONTEXT"})
    assert r.status_code == 302
    ref = Reference.objects.get(publication=p)
    assert (ref.name, ref.begin, ref.end) == (NAME, b, b + len(NAME))
    assert ref.context == SENTENCE                    # the sentence around it, cut at its end
    assert text[ref.begin:ref.end] == NAME
    d = Decision.objects.get(reference=ref, action="add")
    assert (d.after["begin"], d.after["end"], d.after["name"]) == (b, b + len(NAME), NAME)
    page = client.get(url(st, "capture", p)).content.decode()
    assert "FORGED" not in page
    assert re.search(r'<mark class="sel"[^>]*>Panel Study of Income Dynamics</mark>', page)
    # in the text: the recorded reference underlined, its data word still marked
    assert ('<mark class="dw ref">Panel</mark><mark class="ref"> </mark><mark class="dw ref">'
            'Study</mark><mark class="ref"> of Income Dynamics</mark> (PSID)') in page
    assert 'id="typing-fallback"' not in page and 'name="context"' not in page
    assert 'src="/static/annotation/capture.js"' in page
    # the page's text is exactly the stored slice (the script counts on it)
    box = re.search(r'<div id="pub-text"[^>]*data-begin="(\d+)" data-end="(\d+)"[^>]*>(.*?)</div>',
                    page, re.S)
    shown = re.sub(r"</?mark[^>]*>", "", box.group(3))
    import html
    assert html.unescape(shown) == text[int(box.group(1)):int(box.group(2))]


def test_a_long_selection_and_the_passage_are_bounded(rcc, texts):  # noqa: F811
    from shareval.platform.annotation import service, spans
    st, pubs, stored = studied(rcc, texts)
    text = stored[pubs["0"].pk]
    b = text.index("Filler")
    ref = service.capture_span(pubs["0"], rcc["users"]["coder"], "untitled", b + 100, b + 120)
    assert len(ref.context) <= 20 + 2 * spans.AROUND + 2
    assert ref.context.startswith("…") or ref.context.startswith("Filler")
    with pytest.raises(service.BadInput, match="at most 500") as e:
        service.capture_span(pubs["0"], rcc["users"]["coder"], "untitled", b, b + 510)
    assert e.value.field == "end"


@pytest.mark.parametrize("begin,end,field,message", [
    ("", "", "begin", "begin: select the reference in the text"),
    ("x", "5", "begin", "begin: a whole number"),
    ("-1", "5", "begin", "begin: an offset is 0 or more"),
    ("10", "10", "end", "end: 10 must be after begin (10)"),
    ("10", "999999", "end", "end: 999999 is past the end of the text"),
    ("999990", "999999", "begin", "begin: 999990 is outside the text"),
    ("0", "600", "end", "end: the selection is"),
])
def test_bad_offsets_are_refused_naming_the_field(rcc, texts, client, begin, end,  # noqa: F811
                                                   field, message):
    from shareval.platform.annotation.models import Reference
    st, pubs, _ = studied(rcc, texts)
    r = post(client, rcc["users"]["coder"], url(st, "capture", pubs["0"]),
             {"action": "add", "kind": "titled", "begin": begin, "end": end})
    assert r.status_code == 200
    assert message in r.context["form"].errors[field][0]
    assert message.split(":")[0] + ":" in r.content.decode()
    assert not Reference.objects.exists()


def test_white_space_only_selection_is_refused(rcc, texts, client):  # noqa: F811
    st, pubs, stored = studied(rcc, texts)
    text = stored[pubs["0"].pk]
    b = text.index("\n\n")
    r = post(client, rcc["users"]["coder"], url(st, "capture", pubs["0"]),
             {"action": "add", "kind": "titled", "begin": b, "end": b + 2})
    assert "only white space" in r.context["form"].errors["begin"][0]


def test_typing_only_without_a_stored_text(rcc, texts, client):  # noqa: F811
    from shareval.platform.annotation import service
    from shareval.platform.annotation.models import Reference
    st, pubs, _ = studied(rcc, texts)
    coder = rcc["users"]["coder"]
    client.force_login(coder)
    page = client.get(url(st, "capture", pubs["1"])).content.decode()
    assert 'id="typing-fallback"' in page and "no stored text" in page
    assert 'name="context"' in page and 'name="begin"' not in page
    post(client, coder, url(st, "capture", pubs["1"]),
         {"action": "add", "kind": "own", "name": "own survey", "context": "we ran a survey"})
    ref = Reference.objects.get(publication=pubs["1"])
    assert (ref.name, ref.begin, ref.end) == ("own survey", None, None)
    # where the text is stored, typing is refused (the form and the service)
    r = post(client, coder, url(st, "capture", pubs["0"]),
             {"action": "add", "kind": "own", "name": "typed", "context": "pasted"})
    assert "begin: select the reference" in r.context["form"].errors["begin"][0]
    with pytest.raises(service.BadInput, match="typing is only"):
        service.capture_add(pubs["0"], coder, "own", "typed", "pasted")
    with pytest.raises(service.BadInput, match="no text"):
        service.capture_span(pubs["1"], coder, "own", 0, 4)


def test_pages_of_a_long_text_and_a_selection_on_a_later_page(rcc, tmp_path,  # noqa: F811
                                                               client):
    from shareval.platform.annotation import service
    from shareval.platform.workbench.service import pages
    d = tmp_path / "long"
    d.mkdir()
    long = ("Filler words about loans and credit. " * 30 + "\n\n") * 40 + SENTENCE
    (d / "0.txt").write_text(long)
    st = make_study(rcc, texts_dir=d, strata={"0": ("Finance", "titled")},
                    mix={"titled": 1, "untitled": 0, "none": 0}, per_topic=1, qualitative=0)
    p = st.publications.get(publication_id="0")
    bounds = pages(long)
    assert len(bounds) > 2
    client.force_login(rcc["users"]["coder"])
    last = client.get(url(st, "capture", p) + f"?page={len(bounds) - 1}").content.decode()
    assert f'data-begin="{bounds[-1][0]}"' in last and "of Income Dynamics (PSID)" in last
    assert f"Page {len(bounds)} of {len(bounds)}" in last
    assert "(PSID)" not in client.get(url(st, "capture", p)).content.decode()
    b = long.index(NAME)
    r = client.post(url(st, "capture", p) + f"?page={len(bounds) - 1}",
                    {"action": "add", "kind": "titled", "begin": b, "end": b + len(NAME)})
    assert r.status_code == 302 and r["Location"].endswith(f"?page={len(bounds) - 1}")
    assert service.stored_text(p) == long


def test_review_and_final_pass_show_the_passage_with_the_selection_marked(rcc, texts,  # noqa: F811
                                                                          client):
    from shareval.platform.annotation import service
    from shareval.platform.annotation.models import Publication, Reference
    st, pubs, stored = studied(rcc, texts)
    u = rcc["users"]
    service.declare_topics(st, u["judge1"], ["Finance"])
    refs = {}
    for pid, p in pubs.items():
        p = Publication.objects.get(pk=p.pk)
        if p.pk in stored:
            b = stored[p.pk].index(NAME)
            refs[pid] = service.capture_span(p, u["coder"], "titled", b, b + len(NAME))
        else:
            refs[pid] = service.capture_add(p, u["coder"], "own", "own survey", "typed context")
        service.capture_finish(p, u["coder"])
        service.code_related(Publication.objects.get(pk=p.pk), u["judge1"], {})
    # revising the name keeps the marked passage; revising the context shows it plain
    fresh = {k: Reference.objects.get(pk=r.pk) for k, r in refs.items()}
    service.review_reference(fresh["0"], u["rev"], "unsure", "a family?")
    service.review_reference(fresh["2"], u["rev"], "revise", context="a rewritten passage")
    client.force_login(u["rev"])
    page = client.get(url(st, "review", pubs["0"])).content.decode()
    assert re.search(r'mark class="sel" title="[^"]*characters \d+–\d+">' + NAME, page)
    assert "Our estimates use the" in page
    page = client.get(url(st, "review", pubs["2"])).content.decode()
    assert "a rewritten passage" in page and 'mark class="sel"' not in page
    client.force_login(rcc["org"])
    page = client.get(url(st, "final")).content.decode()
    assert page.count('mark class="sel"') == 1 and "a rewritten passage" in page


def test_archive_round_trip_keeps_texts_and_offsets(rcc, texts, tmp_path):  # noqa: F811
    from shareval.formats.errors import InvalidInput
    from shareval.platform.annotation import service, spans
    from shareval.platform.annotation.models import Decision, FullText, Reference, Study
    from shareval.platform.bundles.archive import export_competition, import_competition

    from ..bundles.test_archive import fresh_server
    st, pubs, stored = studied(rcc, texts)
    b = stored[pubs["0"].pk].index(NAME)
    service.capture_span(pubs["0"], rcc["users"]["coder"], "titled", b, b + len(NAME))
    service.capture_add(pubs["1"], rcc["users"]["coder"], "own", "own survey", "typed")
    archive = tmp_path / "c.tgz"
    export_competition(rcc["comp"], archive)
    fresh_server()
    import_competition(archive)
    new = Study.objects.get()
    texts_now = {t.publication.publication_id: t.text
                 for t in FullText.objects.filter(publication__study=new)}
    assert texts_now == {"0": stored[pubs["0"].pk], "2": stored[pubs["2"].pk]}
    sel = Reference.objects.get(publication__study=new, kind="titled")
    assert (sel.begin, sel.end, sel.name, sel.context) == (b, b + len(NAME), NAME, SENTENCE)
    assert spans.marked(texts_now["0"], sel)[1] == NAME
    typed = Reference.objects.get(publication__study=new, kind="own")
    assert (typed.begin, typed.end) == (None, None)
    add = Decision.objects.get(study=new, action="add", reference=sel)
    assert (add.after["begin"], add.after["end"]) == (b, b + len(NAME))

    # an archive whose offsets do not lie in the text is refused, nothing stored
    import io
    import tarfile
    with tarfile.open(archive) as t:
        doc = json.loads(t.extractfile("competition.json").read())
    for p in doc["studies"][0]["publications"]:
        for r in p["references"]:
            if r["begin"] is not None:
                r["end"] = len(p["text"]) + 5
    bad = tmp_path / "bad.tgz"
    data = json.dumps(doc).encode()
    with tarfile.open(bad, "w:gz") as t:
        info = tarfile.TarInfo("competition.json")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    fresh_server()
    with pytest.raises(InvalidInput, match=r"references\[\d+\]\.begin/end: .* does not lie "
                                           r"inside the publication's text"):
        import_competition(bad)
    assert not Study.objects.exists()
