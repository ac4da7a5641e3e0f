"""What the pages say: labels, integers, Markdown, paged breakdowns, error pages,
login/logout, the submit guide, buttons, plots, the CLI progress bar."""
from __future__ import annotations

import io
import json
import re
from html import unescape
from types import SimpleNamespace

import pytest
from django.test import RequestFactory
from django.views.defaults import permission_denied

from shareval.formats.errors import Problems
from shareval.formats.rcc import read_citations
from shareval.formats.svident import read_detection
from shareval.platform.labels import label, number, state_label
from shareval.platform.submissions import queue, samples
from shareval.platform.submissions.breakdowns import PAGE_SIZE, breakdown_tables
from shareval.platform.submissions.models import Submission
from shareval.platform.submissions.scoring import unit_bars

from .factories import submit


def text_of(html: str) -> str:
    """The visible text of a page: no tags, no attribute values (titles keep raw keys)."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", html))


def test_labels_states_and_numbers():
    assert label("f1_macro") == "F1 (macro)" and label("map@10") == "MAP@10"
    assert label("tp") == "True positives" and label("precision_weighted") == "Precision (weighted)"
    assert label("queries_with_relevant") == "Queries with relevant"
    assert state_label("queued") == "Waiting for scoring"
    assert state_label("primary") == "Primary run"
    assert number(72) == "72" and number(0.5) == "0.5000" and number(True) == "yes"
    assert number(None) == "" and number(float("nan")) == "—"


def test_result_page_labels_metrics_and_shows_counts_as_integers(world, client):
    sub = submit(world)
    queue.drain()
    client.force_login(world["users"]["alice"])
    page = client.get(f"/s/{sub.pk}/").content.decode()
    text = text_of(page)
    assert "Accuracy" in text and "F1 (macro)" in text and "Precision (weighted)" in text
    tables = text_of(page.split('id="metrics"')[1].split("<details>")[0])   # not the prose
    raw = re.search(r".{40}\b(f1_macro|precision_weighted|accuracy)\b.{40}", tables, re.S)
    assert raw is None, raw.group(0)
    result = Submission.objects.get(pk=sub.pk).current_score.result
    supports = {r["support"] for r in result["breakdowns"]["per_class"].values()}
    for s in supports:                                   # counts: "7", never "7.0000"
        assert f">{s}<" in page and f"{s}.0000" not in text
    assert "Scored" in text and "Primary run" not in text and "Contrastive run" in text


def test_leaderboard_and_competition_use_labels(world, client):
    submit(world)
    queue.drain()
    page = client.get("/c/tiny/leaderboard/dev/dev/").content.decode()
    text = text_of(page)
    assert "F1 (macro)" in text and "Accuracy" in text and "f1_macro" not in text
    assert re.search(r"(Primary|Best) run\s+\(1 scored run\)", text)
    assert "its best run by F1 (macro)" in text
    comp = text_of(client.get("/c/tiny/").content.decode())
    assert "F1 (macro)" in comp and "f1_macro" not in comp and "False" not in comp


def test_description_is_markdown_without_raw_html(world, client):
    comp = world["comp"]
    comp.description = ("Built by `make demo`.\n\n<script>alert(1)</script> "
                        "[bad](javascript:alert(1)) **bold**")
    comp.save()
    for url in ("/", "/c/tiny/"):
        page = client.get(url).content.decode()
        assert "<code>make demo</code>" in page and "<strong>bold</strong>" in page
        assert "`" not in text_of(page)
        assert "<script>alert" not in page and 'href="javascript' not in page


def big_breakdown(n=120):
    units = {f"u{k:03d}": {"score": (k * 37) % n / n, "count": k} for k in range(n)}
    units["u007"]["score"] = None                 # undefined (a scorer's NaN) sorts last
    return {"big": units, "small": {"a": {"score": 0.5}}}


def test_breakdowns_page_and_sort_on_the_server():
    t = breakdown_tables(big_breakdown(), {})[0]
    assert len(t["rows"]) == PAGE_SIZE and t["pages"] == 3 and t["total"] == 120
    assert [r[0]["text"] for r in t["rows"][:2]] == ["u000", "u001"]     # scorer order
    assert t["next"] and not t["prev"]
    t = breakdown_tables(big_breakdown(), {"bd": "big", "sort": "score", "order": "desc",
                                           "page": "1"})[0]
    shown = [float(r[1]["text"]) for r in t["rows"]]
    assert shown == sorted(shown, reverse=True) and shown[0] == round(max(
        v["score"] for v in big_breakdown()["big"].values() if v["score"] is not None), 4)
    last = breakdown_tables(big_breakdown(), {"bd": "big", "sort": "score", "order": "desc",
                                              "page": "3"})[0]
    assert len(last["rows"]) == 20 and last["rows"][-1][0]["text"] == "u007"
    assert last["rows"][-1][1]["text"] == "—" and not last["next"]
    counts = breakdown_tables(big_breakdown(), {"bd": "big", "sort": "count",
                                                "order": "asc", "page": "99"})[0]
    assert counts["page"] == 3 and counts["rows"][0][2]["text"] == "100"   # page clamped
    junk = breakdown_tables(big_breakdown(), {"bd": "big", "sort": "x<y", "page": "two"})[0]
    assert junk["page"] == 1 and junk["rows"][0][0]["text"] == "u000"
    other = breakdown_tables(big_breakdown(), {"bd": "big", "page": "2"})[1]
    assert other["page"] == 1                                # other tables stay on page 1


def test_result_page_pages_a_large_breakdown(world, client):
    sub = submit(world)
    queue.drain()
    score = Submission.objects.get(pk=sub.pk).current_score
    score.result["breakdowns"] = big_breakdown()
    score.save()
    client.force_login(world["users"]["alice"])
    page = client.get(f"/s/{sub.pk}/?bd=big&sort=count&order=desc&page=2").content.decode()
    body = page.split('id="table-big"')[1].split("</table>")[0]
    cells = re.findall(r"<tr><td>(u\d+)</td>", body)
    assert len(cells) == PAGE_SIZE and cells[0] == "u069" and cells[-1] == "u020"
    assert "page 2 of 3" in page and "Rows 51–100 of 120" in page


def test_error_pages_are_styled(world, client):
    r = client.get("/no/such/page/")
    assert r.status_code == 404 and "Page not found (404)" in r.content.decode()
    assert "<header>" in r.content.decode() and "nonce=" in r.content.decode()
    client.force_login(world["users"]["alice"])
    r = client.get("/c/tiny/organize/")                    # not an organizer: looks missing
    assert r.status_code == 404 and "Page not found" in r.content.decode()
    req = RequestFactory().get("/x/")
    req.user = world["users"]["alice"]
    r = permission_denied(req, Exception())
    assert r.status_code == 403 and "Not allowed (403)" in r.content.decode()
    r = client.get(f"/s/{world['baselines'][0].pk}/cancel/")    # a POST-only address
    assert r.status_code == 405 and "takes a form" in r.content.decode()
    assert r["Allow"] == "POST"
    r = client.get("/api/competitions/tiny/release/dev/")       # the API keeps its JSON
    assert r.status_code == 405 and r["Content-Type"].startswith("application/json")


def test_a_form_without_its_csrf_token_gets_a_styled_page(world):
    from django.test import Client
    c = Client(enforce_csrf_checks=True)          # a stale page: its token no longer matches
    c.force_login(world["users"]["alice"])
    r = c.post("/c/tiny/submit/", {})
    page = r.content.decode()
    assert r.status_code == 403 and "This form has expired (403)" in page
    assert "<header>" in page and "nonce=" in page and "DEBUG" not in page


def test_pages_name_a_task_by_its_title_and_keep_its_slug_for_the_cli(world, client):
    task = world["ds"]["dev"].task
    untitled = task.slug
    task.title = "Toy classification"
    task.save()
    client.force_login(world["users"]["alice"])
    page = " ".join(text_of(client.get("/c/tiny/").content.decode()).split())
    assert f"Toy classification {task.slug}" in page
    client.force_login(world["org"])
    page = " ".join(text_of(client.get("/c/tiny/organize/").content.decode()).split())
    assert f"Toy classification {task.slug}" in page
    task.title = ""
    task.save()
    page = " ".join(text_of(client.get("/c/tiny/organize/").content.decode()).split())
    assert untitled in page and "Toy classification" not in page


def test_logout_by_get_shows_a_button_and_post_logs_out(world, client):
    client.force_login(world["users"]["alice"])
    r = client.get("/accounts/logout/")
    assert r.status_code == 200 and 'id="logout-confirm"' in r.content.decode()
    assert client.get("/accounts/tokens/").status_code == 200     # GET did not log out
    r = client.post("/accounts/logout/", follow=True)
    assert "You are logged out" in r.content.decode()
    assert client.get("/accounts/tokens/").status_code == 302


def test_login_lands_where_the_user_was_going(world, client):
    r = client.get("/c/tiny/submit/")
    assert r.status_code == 302 and r["Location"] == "/accounts/login/?next=/c/tiny/submit/"
    page = client.get(r["Location"]).content.decode()
    assert 'name="next" value="/c/tiny/submit/"' in page
    r = client.post("/accounts/login/", {"username": "alice", "password": "alice-pass-123",
                                         "next": "/c/tiny/submit/"})
    assert r.status_code == 302 and r["Location"] == "/c/tiny/submit/"
    client.logout()
    page = client.get("/c/tiny/leaderboard/dev/dev/").content.decode()
    assert 'href="/accounts/login/?next=/c/tiny/leaderboard/dev/dev/"' in page
    r = client.post("/accounts/login/", {"username": "alice", "password": "alice-pass-123",
                                         "next": "https://evil.example/"})
    assert r["Location"] == "/"                            # no redirect to another site


def test_submit_page_shows_format_sample_and_command(world, client):
    client.force_login(world["users"]["alice"])
    page = client.get("/c/tiny/submit/").content.decode()
    assert "Submitting as <b>Team A</b>" in page and "Team Team" not in page
    ds = world["ds"]["dev"]
    assert (f'id="command-{ds.pk}">shareval submit dev-run.tsv \\\n'
            f"    --competition tiny --phase dev --task labels \\\n"
            f"    --server http://testserver --wait</pre>") in page
    assert f'data-copy="command-{ds.pk}"' in page and f'data-copy="sample-{ds.pk}"' in page
    assert "item\tlabel\ni01\tpos" in page
    ev = world["ds"]["eval"]                               # a rejected upload keeps the choice
    bad = io.BytesIO(b"item\tlabel\nnope\tpos\n")
    bad.name = "bad.tsv"
    page = client.post("/c/tiny/submit/", {"dataset": ev.pk, "file": bad}).content.decode()
    assert "did not pass validation" in page and f'<option value="{ev.pk}" selected>' in page


def test_material_runs_are_guided_as_archives():
    """A MATERIAL run is a .tgz of per-query files: the guide says so and its command
    names an archive, not a .txt file."""
    class Datasets:
        def filter(self, **kw):
            return SimpleNamespace(count=lambda: 2)

    for task, words in (("material-clir", "one <QueryID>.tsv per query"),
                        ("material-e2e", "one folder per query")):
        ds = SimpleNamespace(slug="clir-1a-eval", task=SimpleNamespace(task_name=task,
                                                                       slug=task),
                             phase=SimpleNamespace(slug="week", datasets=Datasets(),
                                                   competition=SimpleNamespace(slug="m")))
        g = samples.guide(ds, "http://testserver")
        assert g["format"].startswith("A .tgz archive") and words in g["format"]
        assert "docs/material.md" in g["format"] and g["sample"] == ""
        assert g["command"].startswith("shareval submit clir-1a-eval-run.tgz \\\n")


def test_samples_are_valid_files_of_their_task(tmp_path, settings):
    settings.PUBLIC_DIR = str(tmp_path)
    (tmp_path / "s.tsv").write_text("uuid\tdoc_id\tlang\tsentence\n" + "".join(
        f"u{k}\td1\ten\tA sentence.\n" for k in range(5)))
    (tmp_path / "p.json").write_text(json.dumps([{"publication_id": 10 + k} for k in range(5)]))

    class Files(list):
        def all(self):
            return self

    out = {"release_at": None, "audience": "registered"}      # released to everyone
    ds = SimpleNamespace(public_files=Files([SimpleNamespace(name="s.tsv", path="s.tsv", **out),
                                             SimpleNamespace(name="p.json", path="p.json",
                                                             **out)]))
    sv = tmp_path / "sv.json"
    sv.write_text(samples._svident(ds))
    problems = Problems()
    pred = read_detection(sv, problems)
    assert not problems.items and sorted(pred.values) == ["u0", "u1", "u2"]
    rc = tmp_path / "rc.json"
    rc.write_text(samples._rcc(ds))
    problems = Problems()
    cits = read_citations(rc, problems, True)
    assert not problems.items and {c.publication_id for c in cits.records} == {"10", "11", "12"}


def test_buttons_say_what_they_do(world, client):
    primary = submit(world, primary=True)
    other = submit(world, correct=10)
    queue.drain()
    client.force_login(world["users"]["alice"])
    page = client.get(f"/s/{primary.pk}/").content.decode()
    assert 'id="make-primary"' not in page and 'id="is-primary"' in page
    page = client.get(f"/s/{other.pk}/").content.decode()
    assert "Make this our primary run" in page and 'id="is-primary"' not in page
    client.force_login(world["org"])
    page = client.get("/c/tiny/organize/").content.decode()
    assert 'id="release-eval-current">now: no results released' in page
    assert 'id="release-eval-hidden"' not in page and "Release top-level scores" in page
    assert re.search(r'<form class="inline confirm"[^>]*data-confirm="Re-score every', page)
    client.post("/c/tiny/organize/release/eval/", {"level": "top"})
    page = client.get("/c/tiny/organize/").content.decode()
    assert 'id="release-eval-current">now: top-level results released' in page
    assert 'id="release-eval-top"' not in page and 'id="release-eval-hidden"' in page


def test_unit_bars_for_scorers_without_their_own_plot(world, client):
    sub = submit(world)
    queue.drain()
    sub = Submission.objects.get(pk=sub.pk)
    result = {"breakdowns": {"per_document": {"d1": {"f1_macro": 0.4}, "d2": {"f1_macro": 0.9},
                                              "d3": {"f1_macro": None}}}}
    names = unit_bars(sub, result, "f1_macro")
    assert len(names) == 1 and names[0].startswith("per_document-")
    from django.conf import settings
    from pathlib import Path
    png = Path(settings.RESULTS_DIR) / str(sub.pk) / names[0]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert unit_bars(sub, {"breakdowns": {"per_document": {"d1": {"f1_macro": 0.4}}}},
                     "f1_macro") == []                     # one unit: no chart
    score = sub.current_score
    score.plots = names
    score.save()
    client.force_login(world["users"]["alice"])
    assert client.get(f"/s/{sub.pk}/plot/{names[0]}").status_code == 200
    client.force_login(world["users"]["bob"])              # not his team's run
    assert client.get(f"/s/{sub.pk}/plot/{names[0]}").status_code == 404


def test_simulate_progress_only_on_a_terminal(monkeypatch, capsys):
    import sys

    from shareval.assessment.simulate import make_world, run_simulations
    world = make_world(0, docs=40, systems=3)
    run_simulations(world, sims=3, n=10, docs=5)           # pytest's stderr: no terminal
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setenv("TERM", "xterm")
    run_simulations(world, sims=3, n=10, docs=5)
    err = capsys.readouterr().err
    assert "simulating" in err and "3/3" in err


def test_confusion_matrix_columns_are_class_names_and_cells_integers():
    t = breakdown_tables({"confusion_matrix": {"pos": {"pos": 3, "neg": 1},
                                               "neg": {"pos": 0, "neg": 5}}}, {})[0]
    assert [h["label"] for h in t["headers"]] == ["Reference \\ predicted", "pos", "neg"]
    assert t["rows"][0] == [{"text": "pos", "num": False}, {"text": "3", "num": True},
                            {"text": "1", "num": True}]


@pytest.mark.realdata
def test_demo_results_have_their_plots(db, tmp_path, shared_data, client, demo_detection_model):
    """SV-Ident: bars per (document, language) unit; RCC: a PR curve of 3 points."""
    import datetime as dt
    from pathlib import Path

    from django.conf import settings
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.demo import build_bundle
    org = get_user_model().objects.create_user("organizer", password="x", is_staff=True)
    root = build_bundle(shared_data, tmp_path / "demo", dt.datetime.now(dt.timezone.utc),
                        demo_detection_model)
    _, made = load_bundle(root, org)
    queue.drain()
    client.force_login(org)
    for s in made:
        score = Submission.objects.get(pk=s.pk).current_score
        assert len(score.plots) == 1, s.dataset.slug
        png = Path(settings.RESULTS_DIR) / str(s.pk) / score.plots[0]
        assert png.read_bytes()[:4] == b"\x89PNG"
        page = client.get(f"/s/{s.pk}/").content.decode()
        assert f'src="/s/{s.pk}/plot/{score.plots[0]}"' in page
        if s.dataset.task.task_name == "rcc-citations":
            assert len(score.result["breakdowns"]["pr_curve"]) == 3
            assert "Rows 1–50 of" in page and "page 1 of" in page     # 800+ publications
        elif s.dataset.task.task_name == "program":   # the organizers' pairs scorer
            assert score.plots[0].startswith("per_publication-")
            assert "(program)" not in page and "program/1" not in text_of(page)
            assert "the organizers' scoring program" in text_of(page)
        else:
            assert score.plots[0].startswith("per_document-")


def material_bundle(root, now=None):
    """A competition with one MATERIAL CLIR dataset (the sample pack of
    ``shareval examples``) and the sample CLIR run as a .tgz baseline."""
    import datetime as dt
    import tarfile

    import yaml

    from shareval import examples
    examples._material(root)
    with tarfile.open(root / "clir-run.tgz", "w:gz") as t:
        for f in sorted((root / "material-clir").iterdir()):
            t.add(f, arcname=f.name)
    now = now or dt.datetime.now(dt.timezone.utc)
    (root / "bundle.yaml").write_text(yaml.safe_dump({
        "slug": "mat", "title": "MATERIAL sample",
        "tasks": [{"slug": "clir", "task": "material-clir"}],
        "phases": [{"slug": "dev", "title": "Development",
                    "start": (now - dt.timedelta(days=1)).isoformat(),
                    "end": (now + dt.timedelta(days=9)).isoformat(),
                    "datasets": [{"slug": "clir-1a", "task": "clir",
                                  "reference": "material-pack"}]}],
        "baselines": [{"team": "Baseline", "phase": "dev", "dataset": "clir-1a",
                       "file": "clir-run.tgz"}]}))
    return root


def test_material_result_page_shows_the_det_plot(db, tmp_path, client):
    """MATERIAL CLIR: the scorer draws a DET curve (miss against false alarm over
    the threshold sweep); the result page shows it beside the per-query table."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    org = get_user_model().objects.create_user("organizer", password="x", is_staff=True)
    _, made = load_bundle(material_bundle(tmp_path / "bundle"), org)
    queue.drain()
    sub = Submission.objects.get(pk=made[0].pk)
    assert sub.state == Submission.SCORED, sub.events.last().log
    score = sub.current_score
    assert len(score.plots) == 1 and "det" in score.result["conventions"]
    png = settings.RESULTS_DIR / str(sub.pk) / score.plots[0]
    assert png.read_bytes()[:4] == b"\x89PNG"
    client.force_login(org)
    page = client.get(f"/s/{sub.pk}/").content.decode()
    assert f'<img src="/s/{sub.pk}/plot/{score.plots[0]}"' in page
    assert 'id="table-per_query"' in page and "query1" in page
    r = client.get(f"/s/{sub.pk}/plot/{score.plots[0]}")
    assert r.status_code == 200 and r["Content-Type"] == "image/png"


def test_a_result_page_leads_back_to_the_competition_and_its_board(world, client):
    sub = submit(world)
    queue.drain()
    client.force_login(world["users"]["alice"])
    page = client.get(f"/s/{sub.pk}/").content.decode()
    crumbs = page.split('id="crumbs"')[1].split("</p>")[0]
    assert 'href="/c/tiny/"' in crumbs and 'href="/c/tiny/leaderboard/dev/dev/"' in crumbs
    assert 'href="/c/tiny/submissions/"' in crumbs and "Organizer dashboard" not in crumbs
    client.force_login(world["org"])
    crumbs = client.get(f"/s/{sub.pk}/").content.decode().split('id="crumbs"')[1]
    assert 'href="/c/tiny/organize/"' in crumbs.split("</p>")[0]
