"""The complete competition archive (format 2): the access features'
rows, RCC phase-2 studies and code submissions travel with the competition, so a
fresh server shows the same boards (JSON), pages, data (bytes), study results
and efficiency columns; hostile or corrupt archives are refused with nothing
stored; version-1 archives still import."""
from __future__ import annotations

import io
import json
import re
import shutil
import tarfile
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from shareval.formats.errors import InvalidInput
from shareval.platform.accounts.addresses import mark_verified
from shareval.platform.accounts.models import VerifiedAddress
from shareval.platform.access import eligibility
from shareval.platform.competitions.models.access import (Agreement, Announcement, Download,
                                                          Invitation, PhaseLimit, Registration)
from shareval.platform.bundles.archive import export_competition, import_competition
from shareval.platform.competitions.models import Competition, Membership, Team

from ..access.test_competition_access import _approved, secret  # noqa: F401 -- the fixture
from ..annotation.test_annotation import make_study, rcc  # noqa: F401 -- the fixture
from ..coderuns.test_coderuns_records import _scored_code_output, world  # noqa: F401 -- fixtures
from ..coderuns.test_coderuns import code_world  # noqa: F401 -- the fixture world needs

DIRS = ("UPLOAD_DIR", "PRIVATE_DIR", "PUBLIC_DIR", "RESULTS_DIR")


def fresh_server() -> None:
    """No competition, no users, no files: what a new server has."""
    Competition.objects.all().delete()
    get_user_model().objects.all().delete()
    for d in DIRS:
        shutil.rmtree(getattr(settings, d), ignore_errors=True)


def roundtrip(comp, tmp_path) -> Competition:
    archive = tmp_path / f"{comp.slug}.tgz"
    export_competition(comp, archive)
    fresh_server()
    new, _ = import_competition(archive)
    return new


def page(client, url, pks=None) -> tuple[int, str]:
    """Status and text with nonces and CSRF tokens (and ``pks``, a pattern of
    primary keys, which a new database gives anew) taken out."""
    r = client.get(url)
    body = b"".join(r.streaming_content) if r.streaming else r.content
    text = body.decode(errors="replace")
    text = re.sub(r'nonce="[^"]*"', 'nonce=""', text)
    text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", text)
    if pks:
        text = re.sub(pks, "", text)
    return r.status_code, text


def as_user(client, name):
    client.logout()
    if name:
        client.force_login(get_user_model().objects.get(username=name))


def test_access_rows_pages_and_data_bytes_survive_the_archive(secret, client,  # noqa: F811
                                                             tmp_path):
    comp, org, u = secret["comp"], secret["org"], secret["users"]
    _approved(comp, u["uma"])
    eligibility.register(u["ute"], comp, 1)                      # stays pending
    team = Team.objects.create(competition=comp, name="Uni", lead=u["uma"])
    Membership.objects.create(team=team, user=u["uma"], status=Membership.APPROVED)
    PhaseLimit.objects.create(phase=comp.phases.get(slug="eval")).teams.set([team])
    Announcement.objects.create(competition=comp, title="Data out", body="See *data*.",
                                author=org)
    Invitation.objects.create(competition=comp, kind=Invitation.EMAIL, value="x@y.example")
    client.force_login(u["uma"])
    data = page(client, f"/c/{comp.slug}/data/texts.txt")
    assert data[0] == 200 and "RESTRICTED-TEXT-MARKER" in data[1]
    urls = {"uma": [f"/c/{comp.slug}/", f"/c/{comp.slug}/data/", f"/c/{comp.slug}/pages/rules/",
                    f"/c/{comp.slug}/register/", f"/c/{comp.slug}/data/texts.txt",
                    f"/api/competitions/{comp.slug}/"],
            "ute": [f"/c/{comp.slug}/data/texts.txt", f"/c/{comp.slug}/register/"],
            "olga": [f"/c/{comp.slug}/"],
            "org": [f"/c/{comp.slug}/organize/downloads.csv"]}
    before = {}
    for who, paths in urls.items():
        as_user(client, who)
        before[who] = [page(client, p) for p in paths]

    def rows():
        return {"agreements": sorted((a.user.username, a.document, a.version,
                                      a.accepted.isoformat()) for a in Agreement.objects.all()),
                "registrations": sorted((r.user.username, r.status, r.created.isoformat(),
                                         r.decided and r.decided.isoformat())
                                        for r in Registration.objects.all()),
                "invitations": sorted(Invitation.objects.values_list("kind", "value")),
                "announcements": list(Announcement.objects.values_list(
                    "title", "body", "published", "author__username")),
                "limits": [(pl.phase.slug, [t.name for t in pl.teams.all()])
                           for pl in PhaseLimit.objects.all()],
                "downloads": list(Download.objects.order_by("at").values_list(
                    "user__username", "what", "at")),
                "catalogs_pages": list(Competition.objects.get().pages.values_list(
                    "slug", "version", "body"))}
    want = rows()
    assert want["downloads"] and want["agreements"] and len(want["registrations"]) == 2
    new = roundtrip(comp, tmp_path)
    assert rows() == want
    assert get_user_model().objects.get(username="uma").email == "uma@uni.example"
    assert not get_user_model().objects.filter(username="olga").exists()   # named nowhere
    olga = get_user_model().objects.create_user("olga", email="olga@elsewhere.example")
    mark_verified(olga, VerifiedAddress.LINK)               # as she was before
    for who in sorted(urls, key=lambda w: w != "org"):     # the log first: others add to it
        as_user(client, who)
        assert [page(client, p) for p in urls[who]] == before[who], who
    # and the rules go on working: the finalist list, the pending registration
    assert eligibility.phase_refusal(Team.objects.get(name="Uni"), new.phases.get(slug="eval")) \
        is None
    ute = get_user_model().objects.get(username="ute")
    assert "waiting" in eligibility.participation_refusal(ute, new)


def _study(rcc):                                                   # noqa: F811
    """A closed phase-2 study: every step of the trail through the service."""
    from shareval.platform.annotation import service
    from shareval.platform.annotation.models import Publication, Reference
    st = make_study(rcc)
    u = rcc["users"]
    service.declare_topics(st, u["judge1"], service.study_topics(st))
    pubs = list(st.publications.filter(purpose=Publication.REFERENCES).order_by("pk"))
    for p in pubs:
        if int(p.publication_id) % 100 < 6:
            service.capture_add(p, u["coder"], "titled",
                                f"catalog {1000 + int(p.publication_id) % 100}", "… data …")
        service.capture_add(p, u["coder"], "own", "own survey", "… own …")
        service.capture_finish(p, u["coder"])
    for p in pubs:
        p.refresh_from_db()
        raw = {}
        for ref in p.references.filter(kind="titled"):
            want = str(1000 + int(p.publication_id) % 100)
            for s in service.systems(p):
                if any(o["id"] == want for o in s["output"]):
                    raw.setdefault(s["team"], {})[str(ref.pk)] = [want]
        service.code_related(p, u["judge1"], raw)
    own = Reference.objects.select_related("publication").get(publication=pubs[0], kind="own")
    service.review_reference(own, u["rev"], "remove", "not data")
    for p in pubs:
        p.refresh_from_db()
        service.review_finish(p, u["rev"])
    st.refresh_from_db()
    service.close_study(st, rcc["org"])
    return st


def test_a_phase2_study_and_its_trail_survive_the_archive(rcc, client, tmp_path):  # noqa: F811
    from shareval.platform.annotation import results
    from shareval.platform.annotation.models import Decision, Reference, Study
    st = _study(rcc)
    scores = results.team_scores(st)
    assert scores["Team A"]["tp"] > 0
    board_url = f"/api/competitions/{st.competition.slug}/leaderboard/dev/rcc/"
    as_user(client, None)
    board = client.get(board_url).json()
    assert board["human"][-1]["measure"] == "related-to F1"

    def trail(study):
        refs = {r.pk: (r.publication.publication_id, r.name)
                for r in Reference.objects.filter(publication__study=study)}
        out = []
        for d in Decision.objects.filter(study=study).order_by("created", "pk"):
            def named(x):
                if d.action in ("code", "revise coding") and isinstance(x, dict):
                    return {t: {str(refs[int(k)]): v for k, v in per.items()}
                            for t, per in x.items()}
                return x
            out.append((d.created.isoformat(), d.actor.username, d.stage, d.action,
                        d.publication and d.publication.publication_id,
                        d.reference_id and refs[d.reference_id], d.note,
                        named(d.before), named(d.after)))
        return out
    steps = trail(st)
    assert len(steps) > 30 and steps[-1][3] == "close"
    roundtrip(rcc["comp"], tmp_path)
    new = Study.objects.get()
    assert trail(new) == steps
    times = list(Decision.objects.filter(study=new).order_by("pk")
                 .values_list("created", flat=True))
    assert times == sorted(times)                 # primary keys follow the trail's order
    assert results.team_scores(new) == scores
    assert client.get(board_url).json() == board
    with pytest.raises(PermissionError):
        Decision.objects.filter(study=new).update(note="x")      # still append-only
    with pytest.raises(PermissionError):                         # restore adds, never rewrites
        Decision.objects.restore([Decision.objects.filter(study=new).first()])


def test_code_datasets_bundles_and_runs_survive_the_archive(world, client,  # noqa: F811
                                                            tmp_path):
    from shareval.platform.coderuns.models import CodeDataset, CodeRun, CodeSubmission
    from shareval.platform.leaderboards.payloads import leaderboard_payload
    cs, sub = _scored_code_output(world, 15, 1.5, 64.0)
    CodeRun.objects.filter(code_submission=cs, stage=CodeRun.FINAL).update(log="ran fine\n")
    ds = world["ds"]
    board = leaderboard_payload(ds, world["org"])
    assert board["efficiency_columns"] and board["rows"][0]["efficiency"]["runtime_s"] == 1.5
    bundle_bytes = cs.path.read_bytes()
    cd = CodeDataset.objects.get(dataset=ds)
    hidden = sorted(p.relative_to(settings.PRIVATE_DIR) for p in
                    Path(settings.PRIVATE_DIR, cd.input_path).rglob("*")) \
        if Path(settings.PRIVATE_DIR, cd.input_path).is_dir() else [cd.input_path]
    as_user(client, "org")
    before = page(client, f"/code/{cs.pk}/", pks=r'id="run-\d+"')
    runs = list(CodeRun.objects.order_by("created", "pk").values(
        "stage", "attempt", "state", "log", "wall_seconds", "peak_mb", "limits",
        "output_submission"))
    roundtrip(world["comp"], tmp_path)
    new_ds = Competition.objects.get().phases.get(slug="dev").datasets.get(slug="dev-code")
    assert leaderboard_payload(new_ds, get_user_model().objects.get(username="org")) == board
    assert list(CodeRun.objects.order_by("created", "pk").values(
        "stage", "attempt", "state", "log", "wall_seconds", "peak_mb", "limits",
        "output_submission")) == runs
    new_cs = CodeSubmission.objects.get(pk=cs.pk)
    assert new_cs.path.read_bytes() == bundle_bytes
    new_cd = CodeDataset.objects.get(dataset=new_ds)
    assert (new_cd.mode, new_cd.limits, new_cd.input_digest) == (cd.mode, cd.limits,
                                                                 cd.input_digest)
    for rel in hidden:
        assert Path(settings.PRIVATE_DIR, rel).exists(), rel
    # an archive never makes anyone staff: the operator does (add-user --organizer)
    get_user_model().objects.filter(username="org").update(is_staff=True)
    as_user(client, "org")
    after = page(client, f"/code/{cs.pk}/", pks=r'id="run-\d+"')
    assert after == before, "\n".join(__import__("difflib").unified_diff(
        before[1].splitlines(), after[1].splitlines(), lineterm=""))


# ---------------------------------------------------------------------------
# Refusals

def _doc(archive: Path) -> tuple[dict, dict[str, bytes]]:
    with tarfile.open(archive) as t:
        files = {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}
    return json.loads(files.pop("competition.json")), files


def _write(path: Path, doc: dict, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as t:
        for name, data in [("competition.json", json.dumps(doc).encode()), *files.items()]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def _nothing_stored():
    assert not Competition.objects.exists()
    for d in DIRS:
        root = Path(getattr(settings, d))
        assert not root.exists() or not any(p.is_file() for p in root.rglob("*")), d


def test_hostile_or_corrupt_archives_are_refused_and_nothing_is_stored(secret,  # noqa: F811
                                                                      tmp_path):
    archive = tmp_path / "ok.tgz"
    export_competition(secret["comp"], archive)
    doc, files = _doc(archive)
    assert doc["format"] == "shareval-competition/2"
    fresh_server()
    cases = {
        "version": ({**doc, "format": "shareval-competition/9"}, files,
                    "unknown archive version 'shareval-competition/9'"),
        "data path": (json.loads(json.dumps(doc).replace('"path": "secret/data/',
                                                          '"path": "../../data/')),
                      files, "is outside this competition's own private folder secret/"),
        "digest": (doc, {k: (b"tampered" if "texts.txt" in k else v) for k, v in files.items()},
                   "do not match the recorded digest"),
        "missing file": (doc, {k: v for k, v in files.items() if "texts.txt" not in k},
                         "missing from the archive"),
        "malformed": ({k: v for k, v in doc.items() if k != "teams"}, files,
                      "malformed archive"),
        "bad date": ({**doc, "phases": [{**doc["phases"][0], "start": "not a date"},
                                        *doc["phases"][1:]]}, files, "malformed archive"),
        "twice": ({**doc, "tasks": doc["tasks"] * 2}, files, "malformed archive"),
    }
    assert '"path": "secret/data/' in json.dumps(doc)
    for name, (d, f, message) in cases.items():
        with pytest.raises(InvalidInput, match=re.escape(message)):
            import_competition(_write(tmp_path / f"{name.replace(' ', '-')}.tgz", d, f))
        _nothing_stored()
    # a failure after files were written removes them again: a clash with a file this
    # server already holds for something else, met after others were copied
    clash = Path(settings.PUBLIC_DIR, sorted(k for k in files if k.startswith("files/public/"))[0]
                 .removeprefix("files/public/"))
    clash.parent.mkdir(parents=True, exist_ok=True)
    clash.write_bytes(b"another competition's file")
    with pytest.raises(InvalidInput, match="already has a different file"):
        import_competition(archive)
    assert not Competition.objects.exists()
    assert not any(p.is_file() for p in Path(settings.PRIVATE_DIR).rglob("*"))
    assert clash.read_bytes() == b"another competition's file"
    clash.unlink()
    # sizes: a member over the limit stops the reading before anything is stored
    from shareval.formats.archive import Limits
    from shareval.platform.bundles import archive as archive_module
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(archive_module, "LIMITS", Limits(max_member_bytes=10, nested_ok=True))
        with pytest.raises(InvalidInput, match="larger than 10 bytes"):
            import_competition(archive)
    _nothing_stored()
    # a hostile tar member (parent-relative) is refused by the archive reader
    with tarfile.open(tmp_path / "evil.tgz", "w:gz") as t:
        info = tarfile.TarInfo("../evil.txt")
        info.size = 1
        t.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(InvalidInput, match="parent-relative"):
        import_competition(tmp_path / "evil.tgz")
    _nothing_stored()


def test_a_version_1_archive_still_imports(secret, tmp_path):  # noqa: F811
    archive = tmp_path / "ok.tgz"
    export_competition(secret["comp"], archive)
    doc, files = _doc(archive)
    v1 = {k: v for k, v in doc.items() if k not in ("access", "studies", "code", "users")}
    v1["format"] = "shareval-competition/1"
    files = {k: v for k, v in files.items() if "/data/" not in k}
    fresh_server()
    comp, created = import_competition(_write(tmp_path / "v1.tgz", v1, files))
    assert comp.slug == "secret" and "org" in created
    assert not comp.pages.exists()          # version 1 did not carry them


def test_mail_already_sent_is_not_sent_again_after_an_import(db, tmp_path):
    from django.core import mail as outbox

    from shareval.platform.competitions.reminders import send_due

    from ..factories import make_world
    w = make_world(tmp_path)
    for name, u in w["users"].items():
        u.email = f"{name}@lab.example"
        u.save()
    Phase = type(w["comp"].phases.first())
    w["comp"].phases.filter(slug="eval").update(released=Phase.TOP)
    assert send_due()["releases"] == 3                  # alice, carol, bob: the old server
    roundtrip(w["comp"], tmp_path)
    outbox.outbox.clear()
    assert send_due()["releases"] == 0 and outbox.outbox == []
    Competition.objects.get().phases.filter(slug="eval").update(released=Phase.DETAILED)
    assert send_due()["releases"] == 3                  # a new release is news again
