"""An e-mail address counts for invitations (by address or ``@domain``, pages and
REST API) only once verified by a link mailed to it; a changed address is
unverified again. The link is single-purpose (not a password-reset token, nor a
reset token one), works once and expires. Mail is read from Django's locmem outbox."""
from __future__ import annotations

import datetime as dt
import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core import mail as outbox
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from shareval.platform.accounts import addresses
from shareval.platform.accounts.models import VerifiedAddress
from shareval.platform.competitions.models.access import Invitation, Registration
from shareval.platform.bundles.loader import load_bundle

from ..access.test_competition_access import restricted_bundle, secret  # noqa: F401 -- the fixture


@pytest.fixture
def partner(db, tmp_path):
    """The probe's scene: a private competition invited as ``@partner.example``, open
    registration, a data licence and a licensed file."""
    org = get_user_model().objects.create_user("org", password="org-pass-123", is_staff=True)
    comp, _ = load_bundle(restricted_bundle(tmp_path / "b", "partner-task", registration="open",
                                            invite=["@partner.example"]), org)
    return comp


def verification_link(to: str) -> str:
    mails = [m for m in outbox.outbox
             if [a.lower() for a in m.to] == [to.lower()] and "Verify" in m.subject]
    assert mails, [(m.to, m.subject) for m in outbox.outbox]
    return re.search(r"https?://[^/\s]+(/accounts/verify/\S+/)", mails[-1].body).group(1)


def sign_up(client, name: str, address: str):
    r = client.post("/accounts/register/", {"username": name, "email": address,
                                            "password1": "Long-pass-4711", "password2":
                                            "Long-pass-4711"}, follow=True)
    assert r.status_code == 200
    return get_user_model().objects.get(username=name), r.content.decode()


def doors(client, slug: str) -> dict[str, int]:
    """What an account gets from the competition's pages, files and REST API."""
    return {
        "listed": int(slug in client.get("/").content.decode()),
        "listed over the API": int(slug in str(client.get("/api/competitions/").json())),
        "page": client.get(f"/c/{slug}/").status_code,
        "api": client.get(f"/api/competitions/{slug}/").status_code,
        "api data": client.get(f"/api/competitions/{slug}/data/").status_code,
        "register": client.post(f"/c/{slug}/register/", {"version": 1, "accept": "1"}
                                ).status_code,
        "licence": client.post(f"/c/{slug}/data/", {"version": 1, "accept": "1"}).status_code,
        "data file": client.get(f"/c/{slug}/data/texts.txt").status_code}


def test_a_typed_address_of_the_invited_domain_opens_nothing_until_verified(partner, client):
    """The finding: ``intruder@partner.example`` registered, saw the competition,
    accepted the licence and downloaded the data, without owning the address."""
    slug = partner.slug
    user, welcome = sign_up(client, "intruder", "intruder@partner.example")
    assert "A link to verify intruder@partner.example is on its way" in welcome
    assert doors(client, slug) == {"listed": 0, "listed over the API": 0, "page": 404,
                                   "api": 404, "api data": 404, "register": 404,
                                   "licence": 404, "data file": 404}
    assert not Registration.objects.filter(user=user).exists()
    page = client.get(f"/c/{slug}/").content.decode()
    assert "intruder@partner.example</b> is not verified yet" in page      # the hint
    assert partner.title not in page
    # the owner of the address opens the link mailed to it: now the invitation counts
    link = verification_link("intruder@partner.example")
    assert b"Verify intruder@partner.example" in client.get(link).content   # a button, no change
    assert addresses.verified_email(user) == ""
    r = client.post(link, follow=True)
    assert b"intruder@partner.example is verified" in r.content
    assert VerifiedAddress.objects.get(user=user).how == VerifiedAddress.LINK
    assert doors(client, slug) == {"listed": 1, "listed over the API": 1, "page": 200,
                                   "api": 200, "api data": 200, "register": 302,
                                   "licence": 302, "data file": 200}


@pytest.mark.parametrize("kind", ["address", "domain"])
def test_a_changed_address_is_unverified_again_and_its_old_link_is_dead(partner, client, kind):
    if kind == "address":
        partner.invitations.all().delete()
        Invitation.objects.create(competition=partner, kind=Invitation.EMAIL,
                                  value="pat@partner.example")
    user, _ = sign_up(client, "pat", "Pat@Partner.example")
    first = verification_link("Pat@Partner.example")
    client.post(first)
    assert client.get(f"/c/{partner.slug}/").status_code == 200
    assert client.post(first).status_code == 404                 # used: works once
    r = client.post("/accounts/profile/", {"email": "pat@elsewhere.example"}, follow=True)
    assert b"A link to verify pat@elsewhere.example is on its way" in r.content
    assert b"not verified yet" in r.content
    assert client.get(f"/c/{partner.slug}/").status_code == 404
    second = verification_link("pat@elsewhere.example")
    client.post("/accounts/profile/", {"email": "pat@partner.example"})
    assert client.get(f"/c/{partner.slug}/").status_code == 200  # the one verified before
    r = client.post(second)                                     # mailed for another address
    assert r.status_code == 404 and b"address changed since" in r.content
    user.refresh_from_db()
    assert addresses.verified_email(user) == "pat@partner.example"


def test_the_link_is_no_reset_token_and_a_reset_token_no_link(partner, client):
    user, _ = sign_up(client, "rita", "rita@partner.example")
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    reset = default_token_generator.make_token(user)
    assert client.post(f"/accounts/verify/{uid}/{reset}/").status_code == 404
    verify = verification_link("rita@partner.example").rstrip("/").rsplit("/", 1)[1]
    assert not default_token_generator.check_token(user, verify)
    r = client.get(f"/accounts/reset/{uid}/{verify}/", follow=True)
    assert b"This link is invalid" in r.content
    assert addresses.verified_email(user) == ""


def test_the_link_expires_with_reset_links(partner, client, monkeypatch, settings):
    user, _ = sign_up(client, "sam", "sam@partner.example")
    link = verification_link("sam@partner.example")
    later = dt.datetime.now() + dt.timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT + 60)
    monkeypatch.setattr(addresses.tokens, "_now", lambda: later)
    r = client.post(link)
    assert r.status_code == 404 and b"expired" in r.content
    assert addresses.verified_email(user) == ""


def test_the_profile_says_whether_verified_and_mails_a_new_link_within_limits(partner, client,
                                                                             settings):
    user, _ = sign_up(client, "tia", "tia@partner.example")           # 1st link
    page = client.get("/accounts/profile/").content.decode()
    assert "not verified yet" in page and 'id="send-verification"' in page
    for _ in range(settings.MAIL_REQUESTS_PER_ADDRESS - 1):            # 2nd and 3rd
        r = client.post("/accounts/profile/verify/", follow=True)
        assert b"is on its way" in r.content
    sent = len(outbox.outbox)
    r = client.post("/accounts/profile/verify/", follow=True)          # 4th in the hour
    assert b"No verification mail sent: too many" in r.content and len(outbox.outbox) == sent
    client.post(verification_link("tia@partner.example"))             # the newest works
    page = client.get("/accounts/profile/").content.decode()
    assert 'id="address-verified"' in page and 'id="send-verification"' not in page


def test_the_invitation_link_verifies_the_invited_address_only(secret, client):  # noqa: F811
    comp, org = secret["comp"], secret["org"]
    client.force_login(org)
    client.post(f"/c/{comp.slug}/organize/invite/",
                {"invite": "vic@lab.example wes@lab.example"})
    client.logout()
    links = {m.to[0]: re.search(r"(/c/[\w-]+/join/[\w-]+/)", m.body).group(1)
             for m in outbox.outbox}
    for name, typed in (("vic", "vic@lab.example"), ("wes", "wes@home.example")):
        form = {"username": name, "email": typed, "password1": "Long-pass-4711",
                "password2": "Long-pass-4711", "version": 1, "accept": "1"}
        assert client.post(links[f"{name}@lab.example"], form).status_code == 302
        client.logout()
    users = get_user_model().objects
    assert addresses.verified_email(users.get(username="vic")) == "vic@lab.example"
    assert VerifiedAddress.objects.get(user__username="vic").how == VerifiedAddress.INVITATION
    assert addresses.verified_email(users.get(username="wes")) == ""     # typed another
    assert [m.to for m in outbox.outbox if "Verify" in m.subject] == [["wes@home.example"]]


def test_organizers_see_which_addresses_are_verified(secret, client):  # noqa: F811
    comp, users = secret["comp"], secret["users"]
    unverified = get_user_model().objects.create_user("yan", email="yan@uni.example")
    for u in (users["uma"], unverified):
        Registration.objects.create(competition=comp, user=u)
    client.force_login(secret["org"])
    rows = {r["user"]: r["email_verified"]
            for r in client.get(f"/api/competitions/{comp.slug}/registrations/").json()}
    assert rows == {"uma": True, "yan": False}
    page = client.get(f"/c/{comp.slug}/organize/access/").content.decode()
    row = lambda name: page.split(f'id="registration-{name}"')[1].split("</tr>")[0]  # noqa: E731
    assert "not verified" in row("yan") and "not verified" not in row("uma")


def test_an_address_set_on_the_command_line_is_verified(db, cli, monkeypatch):
    monkeypatch.setattr("shareval.platform.commands.migrate", lambda verbosity=0: None)
    assert cli("server", "add-user", "zoe", "--password", "Zoe-pass-4711", "--email",
               "Zoe@Lab.example")[0] == 0
    zoe = get_user_model().objects.get(username="zoe")
    assert addresses.verified_email(zoe) == "zoe@lab.example"
    assert VerifiedAddress.objects.get(user=zoe).how == VerifiedAddress.COMMAND_LINE
