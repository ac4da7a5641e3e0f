"""Split boards for TREC and SV-Ident (issue 24): runs uploaded through the API are
scored on both parts; boards and pages show the public part during the phase, equal to
scoring the part's units (tasks/splits.py, checked against the CLI in
tests/tasks/test_splits.py); the private part reaches no participant before release
and ranks the board after it. Runs in both server modes (``make test`` and
``make test-postgres``)."""
from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import pytest
import yaml

from shareval.platform.submissions import queue
from shareval.tasks import get
from shareval.tasks.splits import private_test, score_parts, units
from tests.tasks.test_splits import svident_files, trec_files

from ..factories import shows_number
from ..access.test_visibility import seen

NOW = dt.datetime.now(dt.timezone.utc)
TREC_SPLIT = {"fraction": 0.5, "seed": 13}
LINK_SPLIT = {"fraction": 0.4, "seed": 7}
TASKS = {"trec": "trec", "detect": "svident-detection", "link": "svident-disambiguation"}


def write_bundle(root: Path) -> dict:
    """A competition with one split dataset per task; returns the runs to upload."""
    root.mkdir(parents=True)
    qrels, run_a = trec_files(root, 1)
    (root / "other").mkdir()
    _, run_b = trec_files(root / "other", 2)          # same layout, other random run
    ref, det, dis = svident_files(root, 5)
    rng = random.Random(3)
    det_b = root / "det-b.tsv"
    det_b.write_text("".join(f"{ln.split(chr(9))[0]}\t{rng.randint(0, 1)}\n"
                             for ln in det.read_text().splitlines()))
    dis_b = root / "dis-b.json"
    dis_b.write_text(json.dumps({u: {v: -s for v, s in r.items()}
                                 for u, r in json.loads(dis.read_text()).items()}))
    docs = units(get("svident-detection"), str(ref))
    (root / "private-docs.txt").write_text("\n".join(docs[::3]) + "\n")
    iso = lambda t: t.replace(microsecond=0).isoformat()        # noqa: E731
    b = {"slug": "splits", "title": "Split boards", "time_zone": "UTC",
         "tasks": [{"slug": s, "task": t} for s, t in TASKS.items()],
         "phases": [{"slug": "dev", "title": "Development",
                     "start": iso(NOW - dt.timedelta(days=1)),
                     "end": iso(NOW + dt.timedelta(days=30)), "leaderboard": "public",
                     "datasets": [
                         {"slug": "trec", "task": "trec", "reference": "qrels",
                          "split": TREC_SPLIT},
                         {"slug": "detect", "task": "detect", "reference": "ref.tsv",
                          "split": {"private": "private-docs.txt"}},
                         {"slug": "link", "task": "link", "reference": "ref.tsv",
                          "split": LINK_SPLIT}]}]}
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    return {"trec": (qrels, {"Team A": run_a, "Team B": run_b}),
            "detect": (ref, {"Team A": det, "Team B": det_b}),
            "link": (ref, {"Team A": dis, "Team B": dis_b})}


def split_of(slug: str, root: Path) -> dict:
    if slug == "detect":
        return {"units": (root / "private-docs.txt").read_text().split()}
    return TREC_SPLIT if slug == "trec" else LINK_SPLIT


@pytest.fixture
def world(db, tmp_path, client):
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    User = get_user_model()
    runs = write_bundle(tmp_path / "bundle")
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    comp, _ = load_bundle(tmp_path / "bundle", org)
    users = {}
    for name, lead in (("Team A", "alice"), ("Team B", "bob")):
        users[lead] = User.objects.create_user(lead, password=f"{lead}-pass-123")
        t = Team.objects.create(competition=comp, name=name, lead=users[lead])
        Membership.objects.create(team=t, user=users[lead], status=Membership.APPROVED)
    uploaded = {}
    for slug, (ref, files) in runs.items():
        for team, path in files.items():
            client.force_login(users["alice" if team == "Team A" else "bob"])
            with open(path, "rb") as f:
                r = client.post("/api/submissions/", {"competition": "splits", "phase": "dev",
                                                      "task": slug, "file": f})
            assert r.status_code == 201, r.content
            uploaded[(slug, team)] = r.json()["id"]
    client.logout()
    queue.drain()
    expected = {}
    for slug, (ref, files) in runs.items():
        task = get(TASKS[slug])
        for team, path in files.items():
            pub, priv = score_parts(task, str(ref), str(path), split_of(slug, tmp_path / "bundle"),
                                    {})
            m = task.primary_metric
            expected[(slug, team)] = (pub["metrics"][m], priv["metrics"][m])
    return {"comp": comp, "org": org, "users": users, "ids": uploaded, "expected": expected,
            "root": tmp_path / "bundle"}


def board(client, slug, **params):
    q = "?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else ""
    r = client.get(f"/api/competitions/splits/leaderboard/dev/{slug}/{q}")
    assert r.status_code == 200
    return r.json()


def values(rows, metric) -> dict[str, float]:
    return {r["team"]: r["metrics"][metric] for r in rows}


@pytest.mark.parametrize("slug", list(TASKS))
def test_board_shows_the_public_part_until_release_then_the_private_part(world, client, slug):
    w = world
    metric = get(TASKS[slug]).primary_metric
    exp = {team: w["expected"][(slug, team)] for team in ("Team A", "Team B")}
    b = board(client, slug)
    assert b["part"] == "public"
    assert values(b["rows"], metric) == pytest.approx({t: v[0] for t, v in exp.items()})
    assert {t: v[0] for t, v in exp.items()} != {t: v[1] for t, v in exp.items()}
    page = client.get(f"/c/splits/leaderboard/dev/{slug}/").content.decode()
    for t, (pub, _) in exp.items():
        assert shows_number(page, f"{pub:.4f}"), (t, pub)
    client.force_login(w["org"])
    organizer = board(client, slug, part="private")
    assert organizer["part"] == "private"
    assert values(organizer["rows"], metric) == pytest.approx({t: v[1] for t, v in exp.items()})
    r = client.post("/api/competitions/splits/release/dev/", {"level": "top"})
    assert r.status_code == 200, r.content
    client.logout()
    b = board(client, slug)
    assert b["part"] == "private"
    assert values(b["rows"], metric) == pytest.approx({t: v[1] for t, v in exp.items()})
    ranked = sorted(exp, key=lambda t: -exp[t][1])
    assert [r["team"] for r in b["rows"]] == ranked
    client.force_login(w["users"]["alice"])
    detail = client.get(f"/api/submissions/{w['ids'][(slug, 'Team A')]}/").json()["score"]
    assert detail["private"]["metrics"][metric] == pytest.approx(exp["Team A"][1])


def test_a_participant_never_sees_the_private_part_before_release(world, client):
    """Boards and the competition's pages may not show any run's private score; a run's
    own pages may not show its private score (its public breakdowns hold many numbers,
    so another run's private value could appear there by chance)."""
    w = world
    secret = {}
    for key, (pub, priv) in w["expected"].items():
        if abs(priv - pub) > 1e-4 and priv not in (0.0, 1.0):
            secret[key] = {f"{priv:.4f}", repr(priv)}
    assert len(secret) == 6
    every = set().union(*secret.values())
    pages = ["/api/competitions/splits/", "/c/splits/"]
    for slug in TASKS:
        pages += [f"/api/competitions/splits/leaderboard/dev/{slug}/",
                  f"/c/splits/leaderboard/dev/{slug}/",
                  f"/api/competitions/splits/leaderboard/dev/{slug}/?part=private",
                  f"/c/splits/leaderboard/dev/{slug}/?part=private"]
    own = {"alice": "Team A", "bob": "Team B"}
    for who in (None, "alice", "bob"):
        urls = {u: every for u in pages}
        if who:
            urls["/c/splits/submissions/"] = urls["/api/submissions/?competition=splits"] = every
            for slug in TASKS:
                sid = w["ids"][(slug, own[who])]
                urls[f"/api/submissions/{sid}/"] = urls[f"/s/{sid}/"] = secret[(slug, own[who])]
        bodies = seen(client, {"users": w["users"]}, who, list(urls))
        for url, body in bodies.items():
            for v in urls[url]:
                assert not shows_number(body, v), (who, url, v)
            assert "private-docs.txt" not in body
    client.force_login(w["users"]["alice"])
    sid = w["ids"][("trec", "Team A")]
    assert client.get(f"/api/submissions/{sid}/").json()["score"]["private"] == {
        "hidden": "scored; shown once the organizers release the results"}
    # the public part's per-query breakdown names only public queries
    shown = client.get(f"/api/submissions/{sid}/").json()["score"]
    test = private_test(TREC_SPLIT)
    queries = list(shown["breakdowns"]["per_query"])
    assert queries and not any(test(q) for q in queries)
    assert shown["conventions"]["split"].startswith("public part of the evaluation set: ")
    assert shown["conventions"]["split"].endswith(f" {len(queries)} queries")


def test_bundle_checks_private_ids_against_the_task_units(tmp_path):
    """SV-Ident's units are documents: a sentence uuid or an unknown id is refused."""
    from shareval.formats.errors import InvalidInput
    from shareval.platform.bundles.loader import read_bundle
    root = tmp_path / "bundle"
    write_bundle(root)
    (root / "private-docs.txt").write_text("doc1\nu1-0\nnodoc\n")
    text = pytest.raises(InvalidInput, read_bundle, root).value.render()
    assert "2 ids are not units of the reference: nodoc, u1-0" in text
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    b["phases"][0]["datasets"][0]["split"] = {"fraction": 0.001, "seed": 1}
    (root / "private-docs.txt").write_text("doc1\n")
    (root / "bundle.yaml").write_text(yaml.safe_dump(b))
    text = pytest.raises(InvalidInput, read_bundle, root).value.render()
    assert "both parts need units: 0 of 37 are private" in text    # 3 queries are run-only
