"""The rules of ``access/eligibility.py`` (docs/organizers.md, "Access"):
visibility public / unlisted / private, invitations by user, e-mail and domain,
the secret link, registration and its approval, terms and licence versions,
downloads for participants, finalist-only phases. Each rule is checked from
both sides (who sees, who does not) on rows written straight to the database;
this is the file that owns ``eligibility.py`` in ``bench/mutate.py``.
"""
from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import Http404

from shareval.platform.accounts.addresses import mark_verified
from shareval.platform.accounts.models import VerifiedAddress
from shareval.platform.access import eligibility as el
from shareval.platform.competitions.models.access import (Agreement, Download, Invitation,
                                                          Page, PhaseLimit, Registration)
from shareval.platform.competitions.models import Competition, Membership

from ..rules_world import rw  # noqa: F401  (fixture)


@pytest.fixture
def w(rw):
    from django.contrib.auth import get_user_model
    User = get_user_model()
    rw["eve"] = User.objects.create_user("Eve", email=" Eve@Example.ORG ", password="e-pass-1")
    rw["frank"] = User.objects.create_user("frank", email="frank@lab.example.org",
                                           password="f-pass-1")
    rw["root"] = User.objects.create_user("root", password="r-pass-1", is_superuser=True)
    for u in (rw["eve"], rw["frank"]):          # as if they had opened the mailed link
        mark_verified(u, VerifiedAddress.LINK)
    return rw


def visibility(comp, v, **kw):
    comp.visibility = v
    for k, x in kw.items():
        setattr(comp, k, x)
    comp.save()


def request(rf, user, key=None, session=None):
    r = rf.get("/c/rules/", {"key": key} if key is not None else {})
    r.user, r.session = user, ({} if session is None else session)
    return r


def test_public_is_seen_and_listed_by_everyone(w):
    comp = w["comp"]
    for u in (AnonymousUser(), w["users"]["dave"], w["eve"]):
        assert el.can_see(u, comp)
        assert list(el.listed(u)) == [comp]


def test_private_is_seen_by_invited_involved_and_organizers_only(w):
    comp = w["comp"]
    visibility(comp, Competition.PRIVATE)
    other = Competition.objects.create(slug="other", title="Other",
                                       visibility=Competition.PRIVATE)
    Invitation.objects.create(competition=other, kind=Invitation.USER, value="dave")
    dave, eve, frank = w["users"]["dave"], w["eve"], w["frank"]
    assert not el.can_see(AnonymousUser(), comp) and not el.invited(AnonymousUser(), comp)
    assert not el.can_see(dave, comp) and not el.can_see(eve, comp)
    assert el.can_see(w["users"]["alice"], comp)                 # in a team
    assert el.can_see(w["org"], comp) and el.can_see(w["root"], comp)
    Invitation.objects.create(competition=comp, kind=Invitation.USER, value="dave")
    Invitation.objects.create(competition=comp, kind=Invitation.EMAIL, value="eve@example.org")
    Invitation.objects.create(competition=comp, kind=Invitation.DOMAIN, value="lab.example.org")
    assert el.can_see(dave, comp) and el.can_see(eve, comp) and el.can_see(frank, comp)
    assert el.invited(eve, comp) and el.invited(frank, comp)
    assert sorted(c.slug for c in el.listed(dave)) == ["other", "rules"]
    assert list(el.listed(AnonymousUser())) == []
    assert list(el.listed(eve)) == [comp] and list(el.listed(frank)) == [comp]
    assert sorted(c.slug for c in el.listed(w["root"])) == ["other", "rules"]
    assert list(el.listed(w["org"])) == [comp]
    assert list(el.listed(w["users"]["bob"])) == [comp]          # a team member


def test_an_email_invitation_is_not_a_domain_one(w):
    comp = w["comp"]
    visibility(comp, Competition.PRIVATE)
    Invitation.objects.create(competition=comp, kind=Invitation.DOMAIN, value="eve@example.org")
    Invitation.objects.create(competition=comp, kind=Invitation.EMAIL, value="example.org")
    Invitation.objects.create(competition=comp, kind=Invitation.EMAIL, value="")
    assert not el.can_see(w["eve"], comp) and list(el.listed(w["eve"])) == []
    nomail = w["users"]["dave"]                                      # no e-mail address
    assert not el.invited(nomail, comp) and list(el.listed(nomail)) == []
    Invitation.objects.create(competition=comp, kind=Invitation.USER, value="eve")
    assert el.invited(w["eve"], comp) and list(el.listed(w["eve"])) == [comp]


def test_registration_opens_a_competition_until_it_is_rejected(w):
    comp = w["comp"]
    dave = w["users"]["dave"]
    for v in (Competition.PRIVATE, Competition.UNLISTED):
        visibility(comp, v)
        reg = Registration.objects.create(competition=comp, user=dave)
        assert el.can_see(dave, comp) and list(el.listed(dave)) == [comp]
        reg.status = Registration.REJECTED
        reg.save()
        assert not el.can_see(dave, comp) and list(el.listed(dave)) == []
        reg.delete()
    # a pending membership counts as taking part too
    from shareval.platform.competitions.models import Team
    t = Team.objects.create(competition=comp, name="D", lead=dave)
    Membership.objects.create(team=t, user=dave, status=Membership.PENDING)
    assert el.can_see(dave, comp) and list(el.listed(dave)) == [comp]


def test_unlisted_opens_with_the_secret_link_for_the_session(w, rf):
    comp = w["comp"]
    visibility(comp, Competition.UNLISTED)
    secret = el.ensure_secret(comp)
    assert len(secret) >= 20 and el.ensure_secret(comp) == secret     # made once
    anon = AnonymousUser()
    assert list(el.listed(anon)) == [] and list(el.listed(w["users"]["dave"])) == []
    with pytest.raises(Http404):
        el.visible(request(rf, anon), "rules")
    with pytest.raises(Http404):
        el.visible(request(rf, anon, key=secret + "x"), "rules")
    with pytest.raises(Http404):
        el.visible(request(rf, anon), "nothing")
    session = {}
    assert el.visible(request(rf, anon, key=secret, session=session), "rules") == comp
    assert session == {el.SESSION_KEYS: [comp.pk]}
    assert el.visible(request(rf, anon, session=session), "rules") == comp     # remembered
    el.remember_key(request(rf, anon, key=secret, session=session), comp)
    assert session == {el.SESSION_KEYS: [comp.pk]}                              # once
    assert el.can_see(request(rf, w["org"]), comp)
    assert el.can_see(w["users"]["alice"], comp)                    # in a team
    # the key opens unlisted competitions only, and only a competition with a secret
    visibility(comp, Competition.PRIVATE)
    s2 = {}
    el.remember_key(request(rf, anon, key=secret, session=s2), comp)
    assert s2 == {}
    visibility(comp, Competition.UNLISTED, secret="")
    el.remember_key(request(rf, anon, key="", session=s2), comp)
    assert s2 == {}
    other = Competition.objects.create(slug="o", title="O", visibility=Competition.UNLISTED)
    s3 = {el.SESSION_KEYS: [other.pk]}
    assert not el.can_see(request(rf, anon, session=s3), comp)


def test_terms_and_licence_versions(w):
    comp, alice = w["comp"], w["users"]["alice"]
    assert el.accepted(alice, comp, "terms") and el.accepted(AnonymousUser(), comp, "terms")
    with pytest.raises(el.NotEligible, match="has no terms to accept"):
        el.accept(alice, comp, "terms", 1)
    p = Page.objects.create(competition=comp, slug="terms", title="Rules of Play", version=2)
    assert not el.accepted(alice, comp, "terms") and not el.accepted(AnonymousUser(), comp,
                                                                      "terms")
    assert el.participation_refusal(alice, comp) == \
        "accept the current Rules of Play (version 2) on the registration page"
    with pytest.raises(el.NotEligible, match=r"changed \(now version 2\)"):
        el.accept(alice, comp, "terms", 1)
    a = el.accept(alice, comp, "terms", "2")
    assert (a.version, a.document, a.user) == (2, "terms", alice)
    assert el.accepted(alice, comp, "terms") and el.participation_refusal(alice, comp) is None
    p.version = 3
    p.save()
    assert not el.accepted(alice, comp, "terms")                   # a new version: again
    assert el.page(comp, "terms") == p and el.page(comp, "licence") is None
    assert Agreement.objects.count() == 1


def test_register_approved_at_once_or_pending_and_decided(w):
    comp, dave, org = w["comp"], w["users"]["dave"], w["org"]
    reg = el.register(dave, comp)
    assert reg.status == Registration.APPROVED
    assert el.register(dave, comp) == reg and Registration.objects.count() == 1
    assert el.registration(dave, comp) == reg
    assert el.registration(AnonymousUser(), comp) is None
    visibility(comp, Competition.PUBLIC, registration_approval=True)
    eve = w["eve"]
    reg = el.register(eve, comp)
    assert reg.status == Registration.PENDING
    assert el.participation_refusal(eve, comp) == \
        "your registration is waiting for the organizers' approval"
    el.decide(reg, False, org)
    reg.refresh_from_db()
    assert (reg.status, reg.decided_by) == (Registration.REJECTED, org) and reg.decided
    assert el.participation_refusal(eve, comp) == \
        "the organizers did not approve your registration"
    el.decide(reg, True, org)
    assert Registration.objects.get(pk=reg.pk).status == Registration.APPROVED
    assert el.participation_refusal(eve, comp) is None
    assert el.participation_refusal(w["frank"], comp) == \
        "register for this competition first (the organizers approve registrations)"
    assert el.participation_refusal(AnonymousUser(), comp) == "log in to take part"
    assert el.participation_refusal(org, comp) is None


def test_register_needs_the_competition_and_its_terms(w):
    comp, dave = w["comp"], w["users"]["dave"]
    visibility(comp, Competition.PRIVATE)
    with pytest.raises(el.NotEligible, match="no such competition"):
        el.register(dave, comp)
    visibility(comp, Competition.PUBLIC)
    Page.objects.create(competition=comp, slug="terms", title="Terms", version=4)
    with pytest.raises(el.NotEligible, match="accept the terms of participation first"):
        el.register(dave, comp)
    assert not Registration.objects.exists()
    reg = el.register(dave, comp, terms_version=4)
    assert reg.status == Registration.APPROVED and el.accepted(dave, comp, "terms")
    assert el.register(dave, comp) == reg                          # accepted already


def test_downloads_for_participants(w, rf):
    comp, alice = w["comp"], w["users"]["alice"]
    assert el.download_refusal(AnonymousUser(), comp) is None      # open downloads
    visibility(comp, Competition.PUBLIC, downloads=Competition.PARTICIPANTS)
    assert el.download_refusal(AnonymousUser(), comp) == "log in to download the data"
    assert el.download_refusal(w["org"], comp) is None
    assert el.download_refusal(alice, comp) is None
    Page.objects.create(competition=comp, slug="licence", title="Data Licence", version=3)
    assert el.download_refusal(alice, comp) == \
        "accept the Data Licence (version 3) before downloading"
    el.accept(alice, comp, "licence", 3)
    assert el.download_refusal(alice, comp) is None
    visibility(comp, Competition.PUBLIC, registration_approval=True)
    assert el.download_refusal(alice, comp).startswith("register for this competition first")
    r = request(rf, alice)
    r.META["REMOTE_ADDR"] = "10.1.2.3"
    d = el.log_download(r, comp, "data/" + "x" * 600)
    assert (d.user, d.address, len(d.what)) == (alice, "10.1.2.3", 500)
    r = request(rf, AnonymousUser())
    r.META.pop("REMOTE_ADDR", None)
    d = el.log_download(r, comp, "files/dev/dev/a.txt")
    assert (d.user, d.address, d.what) == (None, None, "files/dev/dev/a.txt")
    assert Download.objects.count() == 2


def test_finalist_phases(w):
    ev = w["ds"]["eval"].phase
    a, b, base = w["teams"]["Team A"], w["teams"]["Team B"], w["teams"]["Baseline"]
    assert el.phase_refusal(a, ev) is None
    limit = PhaseLimit.objects.create(phase=ev)
    assert el.phase_refusal(a, ev) == ("Evaluation is limited to the teams the organizers "
                                       "chose (none yet); team Team A is not one of them")
    assert el.phase_refusal(base, ev) is None
    limit.teams.set([b, base])
    assert el.phase_refusal(b, ev) is None
    assert el.phase_refusal(a, ev) == ("Evaluation is limited to the teams the organizers "
                                       "chose (Baseline, Team B); team Team A is not one of "
                                       "them")


# --- each rule holds per competition, per person, per kind (docs/organizers.md, "Access")

def test_taking_part_in_one_competition_opens_no_other(w):
    """Registering or being in a team opens that competition only; another person's
    registration opens nothing for anyone else."""
    comp, dave, eve = w["comp"], w["users"]["dave"], w["eve"]
    other = Competition.objects.create(slug="other", title="Other",
                                       visibility=Competition.PRIVATE)
    visibility(comp, Competition.PRIVATE, registration_approval=True)
    # alice is in a team of ``comp``, dave registered for ``comp``: ``other`` stays closed
    Registration.objects.create(competition=comp, user=dave, status=Registration.APPROVED)
    for u in (w["users"]["alice"], dave):
        assert el.can_see(u, comp) and not el.can_see(u, other)
    assert not el.can_see(eve, comp)                  # dave's registration is his own
    # a registration elsewhere is not one for ``comp``
    Registration.objects.create(competition=other, user=eve, status=Registration.APPROVED)
    assert el.registration(eve, comp) is None
    assert el.participation_refusal(eve, comp) == \
        "register for this competition first (the organizers approve registrations)"


def test_an_acceptance_counts_for_its_person_competition_and_document_only(w):
    comp, alice, bob = w["comp"], w["users"]["alice"], w["users"]["bob"]
    other = Competition.objects.create(slug="other", title="Other")
    for c in (comp, other):
        Page.objects.create(competition=c, slug="terms", title="Terms", version=1)
        Page.objects.create(competition=c, slug="licence", title="Licence", version=1)
    el.accept(alice, other, "terms", 1)               # another competition
    el.accept(bob, comp, "terms", 1)                  # another person
    el.accept(alice, comp, "licence", 1)              # another document
    assert not el.accepted(alice, comp, "terms")
    assert el.participation_refusal(alice, comp) == \
        "accept the current Terms (version 1) on the registration page"
    assert el.accepted(bob, comp, "terms") and el.accepted(alice, other, "terms")


def test_an_invitation_matches_by_its_own_kind_and_value(w):
    """A username invitation invites that username only; a value invites only as
    the kind it was written as (a domain named like a username is not that user)."""
    comp, dave, eve = w["comp"], w["users"]["dave"], w["eve"]
    visibility(comp, Competition.PRIVATE)
    Invitation.objects.create(competition=comp, kind=Invitation.DOMAIN, value="dave")
    Invitation.objects.create(competition=comp, kind=Invitation.EMAIL, value="dave")
    assert not el.invited(dave, comp) and list(el.listed(dave)) == []
    Invitation.objects.create(competition=comp, kind=Invitation.USER, value="dave")
    assert el.invited(dave, comp) and list(el.listed(dave)) == [comp]
    assert not el.invited(eve, comp) and list(el.listed(eve)) == []


def test_the_domain_is_what_follows_the_last_at_sign(w):
    """A quoted local part may hold '@' ('"a@b"@lab.example.org' is a valid
    address): its domain is lab.example.org."""
    from django.contrib.auth import get_user_model
    from django.core.validators import validate_email
    comp = w["comp"]
    visibility(comp, Competition.PRIVATE)
    address = '"gina@home"@lab.example.org'
    validate_email(address)
    gina = get_user_model().objects.create_user("gina", email=address, password="g-pass-1")
    mark_verified(gina, VerifiedAddress.LINK)
    Invitation.objects.create(competition=comp, kind=Invitation.DOMAIN, value="lab.example.org")
    assert el.invited(gina, comp) and list(el.listed(gina)) == [comp]


@pytest.mark.parametrize("kind, value", [(Invitation.EMAIL, "hal@lab.example.org"),
                                         (Invitation.DOMAIN, "lab.example.org")])
def test_an_address_counts_only_while_it_is_the_verified_one(w, kind, value):
    from django.contrib.auth import get_user_model
    comp = w["comp"]
    visibility(comp, Competition.PRIVATE)
    Invitation.objects.create(competition=comp, kind=kind, value=value)
    hal = get_user_model().objects.create_user("hal", email="Hal@Lab.example.org",
                                               password="h-pass-1")
    seen = lambda: (el.invited(hal, comp), el.can_see(hal, comp),  # noqa: E731
                    list(el.listed(hal)) == [comp])
    assert seen() == (False, False, False)                       # typed, never verified
    mark_verified(hal, VerifiedAddress.LINK)
    assert seen() == (True, True, True)
    hal.email = "hal@elsewhere.example"                          # changed: unverified again
    hal.save()
    assert seen() == (False, False, False)
    hal.email = "hal@lab.example.org"                            # back to the verified one
    hal.save()
    assert seen() == (True, True, True)


def test_secret_links_of_several_competitions_are_all_remembered(w, rf):
    comp = w["comp"]
    visibility(comp, Competition.UNLISTED)
    other = Competition.objects.create(slug="other", title="Other",
                                       visibility=Competition.UNLISTED)
    anon, session = AnonymousUser(), {}
    for c in (comp, other):
        assert el.visible(request(rf, anon, key=el.ensure_secret(c), session=session),
                          c.slug) == c
    assert session == {el.SESSION_KEYS: [comp.pk, other.pk]}
    assert el.can_see(request(rf, anon, session=session), comp)


def test_a_hidden_competition_answers_exactly_like_a_missing_one(w, rf):
    visibility(w["comp"], Competition.PRIVATE)
    answers = []
    for slug in ("rules", "no-such-slug"):
        with pytest.raises(Http404) as e:
            el.visible(request(rf, AnonymousUser()), slug)
        answers.append(str(e.value))
    assert answers == ["no such competition"] * 2


def test_refusals_are_shown_as_they_are(w):
    comp, dave = w["comp"], w["users"]["dave"]
    visibility(comp, Competition.PRIVATE)
    with pytest.raises(el.NotEligible) as e:
        el.register(dave, comp)
    assert str(e.value) == "no such competition"
    visibility(comp, Competition.PUBLIC)
    Page.objects.create(competition=comp, slug="terms", title="Terms", version=1)
    with pytest.raises(el.NotEligible) as e:
        el.register(dave, comp)
    assert str(e.value) == "accept the terms of participation first"
