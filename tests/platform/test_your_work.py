"""Everyone with work to do finds it from the site's header in one click: judges
(campaign items) and the members of RCC phase-2 studies (capture, related-to
coding, review, ranking, the designer's final pass). The link says how much is
left and is there only for people who have something left; /work/ lists it all;
the address ``rcc-study`` prints opens for the members too."""
from __future__ import annotations

import re
from pathlib import Path

from shareval.platform import work
from shareval.platform.judging import service as judging

from .annotation.test_annotation import capture_all, make_study, post, rcc, url  # noqa: F401
from .judging.test_judging import _run_all, _truthful, judged  # noqa: F401
from .test_webui import text_of as raw_text


def text_of(html: str) -> str:
    return " ".join(raw_text(html).split())


def header(client, path="/") -> str:
    html = client.get(path).content.decode()
    return text_of(html.split("<header>")[1].split("</header>")[0])


def left_in_header(client) -> int | None:
    m = re.search(r"Your work\s+(\d+) left", header(client))
    return int(m.group(1)) if m else None


def test_judges_see_their_items_left_in_the_header_and_nobody_else_does(judged, client):
    camp, judges, w = judged["camp"], judged["judges"], judged
    items = camp.items.count()
    client.force_login(judges[0])
    assert left_in_header(client) == items
    page = client.get("/work/").content.decode()
    row = text_of(page.split(f'id="row-campaign-{camp.pk}"')[1].split("</tr>")[0])
    assert "Judge items" in row and "Chains" in row and f"{items} items" in row
    assert client.get("/judging/").content.decode().count(f'id="campaign-{camp.pk}"') == 1
    for who in (w["users"]["alice"], w["org"]):          # a team member, the organizer
        client.force_login(who)
        assert left_in_header(client) is None and "Judging" not in header(client)
        assert "Nothing to do here" in text_of(client.get("/work/").content.decode())
    # one item taken: still counted (the judge holds it); all judged: the link goes
    a = judging.next_assignment(camp, judges[0])
    client.force_login(judges[0])
    assert left_in_header(client) == items
    judging.submit(a, _truthful(a.item))
    assert left_in_header(client) == items - 1
    _run_all(camp, judges)
    assert left_in_header(client) is None
    row = text_of(client.get("/work/").content.decode().split(
        f'id="row-campaign-{camp.pk}"')[1].split("</tr>")[0])
    assert "none" in row and "every item has its judges" in row


def test_study_members_find_their_work_from_the_header_and_the_printed_address(rcc, client):
    from shareval.platform.annotation import service
    st = make_study(rcc)
    u = rcc["users"]
    sampled = st.publications.filter(purpose="references").count()
    client.force_login(u["coder"])
    assert left_in_header(client) == sampled
    page = text_of(client.get("/work/").content.decode())
    assert "Capture data references" in page and "Phase 2" in page
    # the address rcc-study prints opens their work, not a 404
    r = client.get(url(st), follow=True)
    assert r.status_code == 200 and r.redirect_chain[-1][0] == url(st, "work")
    comp_page = text_of(client.get("/c/rccdemo/").content.decode())
    assert "Your work here" in comp_page and f"{sampled} publications left" in comp_page
    # a judge's first step is choosing topic areas; then nothing until capture is done
    client.force_login(u["judge1"])
    assert left_in_header(client) == 1
    assert "Choose your topic areas" in text_of(client.get("/work/").content.decode())
    service.declare_topics(st, u["judge1"], service.study_topics(st))
    assert left_in_header(client) == st.publications.filter(purpose="qualitative").count()
    client.force_login(u["rev"])
    assert left_in_header(client) is None                 # nothing coded yet
    page = text_of(client.get("/work/").content.decode())
    assert "Review coded publications" in page and "waiting for publications" in page
    capture_all(client, st, rcc, lambda p: [("titled", f"Survey {p.publication_id}")])
    client.force_login(u["coder"])
    assert left_in_header(client) is None
    client.force_login(u["judge1"])
    coded = st.publications.filter(purpose="references").count()
    assert left_in_header(client) == coded + st.publications.filter(
        purpose="qualitative").count()
    # joining a team ends the role, and the work with it
    from shareval.platform.competitions.models import Membership
    Membership.objects.create(team=rcc["teams"]["Team A"], user=u["judge1"],
                              status=Membership.PENDING)
    assert left_in_header(client) is None


def test_the_organizers_page_names_the_real_command(rcc, client):
    client.force_login(rcc["org"])
    page = text_of(client.get("/c/rccdemo/annotation/").content.decode())
    assert "shareval server rcc-study rccdemo" in page and "shareval-admin" not in page


def test_the_work_registry_knows_no_app():
    """judging, annotation, the workbench and competitions register into
    platform/work.py; it imports none of them."""
    source = Path(work.__file__).read_text()
    assert not re.search(r"^\s*(from|import) shareval\.platform\.\w+", source, re.M)
    assert not re.search(r"^\s*from \.(\w+)", source, re.M)
    names = {p.__module__ for p in work._providers}
    assert names == {"shareval.platform.judging.work", "shareval.platform.annotation.work",
                     "shareval.platform.workbench.work",
                     "shareval.platform.competitions.organizer_work"}


def test_organizers_find_waiting_registrations_and_teams_under_your_work(db, tmp_path, client):
    from shareval.platform.competitions.models import Team
    from shareval.platform.competitions.models.access import Registration

    from .factories import make_world
    w = make_world(tmp_path, baseline=False)
    comp, org = w["comp"], w["org"]
    comp.organizers.add(org)
    client.force_login(org)
    assert left_in_header(client) is None
    Registration.objects.create(competition=comp, user=w["users"]["dave"])
    Registration.objects.create(competition=comp, user=w["users"]["carol"],
                                status=Registration.APPROVED)
    Team.objects.filter(pk=w["teams"]["Team B"].pk).update(status=Team.PENDING)
    assert left_in_header(client) == 2
    page = text_of(client.get("/work/").content.decode())
    assert "Decide registrations" in page and "1 registration" in page
    assert "Approve teams" in page and "1 team" in page
    # the participants and another competition's organizer see none of it
    for who in (w["users"]["alice"], w["users"]["dave"]):
        client.force_login(who)
        assert left_in_header(client) is None
    # decided: gone
    Registration.objects.filter(status=Registration.PENDING).update(
        status=Registration.APPROVED)
    Team.objects.filter(pk=w["teams"]["Team B"].pk).update(status=Team.APPROVED)
    client.force_login(org)
    assert left_in_header(client) is None
