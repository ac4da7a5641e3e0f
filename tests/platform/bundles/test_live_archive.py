"""Access features end to end, in both server modes: a private competition with terms,
approval, a data licence, registrations, announcements and downloads is exported
with ``shareval server export-competition`` and loaded by ``import-competition``
into a fresh server (its own database and folders); the REST answers (boards,
announcements, data listing, registrations) and the data file's bytes agree."""
from __future__ import annotations

import subprocess
import sys
import urllib.request


from ..access.test_competition_access import restricted_bundle

SETUP = """
import django; django.setup()
from django.contrib.auth import get_user_model
from shareval.platform.access import eligibility
from shareval.platform.competitions.models.access import Announcement, Download, Registration
from shareval.platform.competitions.models import Competition, Membership, Team
comp = Competition.objects.get(slug="secret")
U = get_user_model()
org = U.objects.get(username="org")
uma = U.objects.get(username="uma")
eligibility.register(uma, comp, 1)
eligibility.decide(Registration.objects.get(user=uma), True, org)
eligibility.accept(uma, comp, "licence", 1)
eligibility.register(U.objects.get(username="ute"), comp, 1)
team = Team.objects.create(competition=comp, name="Uni", lead=uma)
Membership.objects.create(team=team, user=uma, status="approved")
Announcement.objects.create(competition=comp, title="Kick-off", body="Welcome", author=org)
"""


def django(stack, code: str) -> None:
    env = dict(stack.env, DJANGO_SETTINGS_MODULE="shareval.platform.settings")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr


def download(stack, path, token) -> tuple[int, bytes]:
    req = urllib.request.Request(stack.url + path, headers={"Authorization": f"Token {token}"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, b""


def answers(stack, tokens) -> dict:
    out = {}
    for who, path in (("org", "/api/competitions/secret/"),
                      ("uma", "/api/competitions/secret/"),
                      ("uma", "/api/competitions/secret/announcements/"),
                      ("uma", "/api/competitions/secret/data/"),
                      ("ute", "/api/competitions/secret/data/"),
                      ("org", "/api/competitions/secret/leaderboard/dev/dev/"),
                      ("uma", "/api/competitions/secret/team/")):
        out[(who, path)] = stack.api("GET", path, tokens[who])
    code, regs = stack.api("GET", "/api/competitions/secret/registrations/", tokens["org"])
    out["registrations"] = (code, sorted(({k: v for k, v in r.items()
                                           if k not in ("id", "email_verified")}
                                          for r in regs), key=lambda r: r["user"]))
    out["verified"] = sorted(r["user"] for r in regs if r["email_verified"])
    out["anonymous"] = stack.api("GET", "/api/competitions/secret/")[0]
    return out


def test_the_access_records_load_into_a_fresh_server(stacks, tmp_path):
    a = stacks("home-a")
    a.cli("server", "add-user", "org", "--password", "org-pass-123", "--organizer",
          "--email", "org@host.example")
    for name in ("uma", "ute"):
        a.cli("server", "add-user", name, "--password", f"{name}-pass-123",
              "--email", f"{name}@uni.example")
    a.cli("server", "load-bundle", restricted_bundle(tmp_path / "b", "secret"),
          "--organizer", "org")
    django(a, SETUP)
    a.start()
    tokens = {u: a.cli("server", "token", u).stdout.strip() for u in ("org", "uma", "ute")}
    code, data = download(a, "/c/secret/data/texts.txt", tokens["uma"])
    assert code == 200 and data == b"RESTRICTED-TEXT-MARKER\n"
    assert download(a, "/c/secret/data/texts.txt", tokens["ute"])[0] == 403   # pending
    before = answers(a, tokens)
    assert before["anonymous"] == 404 and before[("uma", "/api/competitions/secret/data/")][1][
        "allowed"] is True
    archive = tmp_path / "secret.tgz"
    r = a.cli("server", "export-competition", "secret", "--out", archive)
    assert "competition secret" in r.stdout, r.stdout
    b = stacks("home-b")
    r = b.cli("server", "import-competition", archive)
    assert "uma" in r.stdout and "ute" in r.stdout, r.stdout
    b.cli("server", "add-user", "org", "--password", "org-pass-123", "--organizer")
    b.start()
    tokens_b = {u: b.cli("server", "token", u).stdout.strip() for u in ("org", "uma", "ute")}
    after = answers(b, tokens_b)
    # an archive is a file, not a proof: imported addresses start unverified
    assert (before.pop("verified"), after.pop("verified")) == (["uma", "ute"], [])
    assert after == before
    assert download(b, "/c/secret/data/texts.txt", tokens_b["uma"]) == (200, data)
    assert download(b, "/c/secret/data/texts.txt", tokens_b["ute"])[0] == 403
    # the download log came along (and the new server goes on logging)
    django(b, "import django; django.setup()\n"
              "from shareval.platform.competitions.models.access import Download\n"
              "log = list(Download.objects.order_by('at').values_list('user__username', 'what'))\n"
              "assert log == [('uma', 'data/texts.txt')] * 2, log\n")
