"""The MATERIAL demo of `make demo` (platform/demo_material): a synthetic period whose
files follow the plan's formats, whose runs score as real systems do, and whose
competition loads with the run-group rules applied."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import tarfile
from collections import Counter

import pytest

from shareval import tasks as registry
from shareval.formats.images import image_info
from shareval.formats.material import CONFIDENCE, DOMAIN, QUERY_STRING, parse_query
from shareval.formats.summary import check_metadata
from shareval.platform.demo_material import corpus
from shareval.platform.demo_material.generate import generate


@pytest.fixture(scope="module")
def period(tmp_path_factory):
    out = tmp_path_factory.mktemp("material-demo")
    return out, generate(out)


def _digests(root):
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_generator_writes_the_same_files_every_time(period, tmp_path):
    out, _ = period
    generate(tmp_path)
    first, second = _digests(out), _digests(tmp_path)
    assert len(first) > 50 and first == second


def test_queries_follow_the_plan_syntax_and_packs(period):
    _, langs = period
    for lang in corpus.LANGUAGES:
        queries = langs[lang].queries
        assert len(queries) == 24 and len({q.query_id for q in queries}) == 24
        for q in queries:
            assert QUERY_STRING.match(q.query_string) and DOMAIN.match(q.domain)
            assert parse_query(f"{q.query_string}:{q.domain}") == (q.query_string, q.domain)
            assert q.status == ("open" if q.pack == 1 else "closed")
        assert Counter(q.status for q in queries) == {"open": 8, "closed": 16}
        assert {q.type for q in queries} == {"lexical", "conceptual"}


def test_packs_have_genres_modes_and_plan_docids(period):
    out, langs = period
    for lang in corpus.LANGUAGES:
        ids = {}
        for pack, root in langs[lang].packs.items():
            rows = [line.split("\t") for line in
                    (root / "documents.tsv").read_text().splitlines()[1:]]
            assert len(rows) == corpus.DOCS_PER_PACK
            assert all(re.match(rf"^MATERIAL_BASE-{lang}_[0-9]{{8}}$", r[0]) for r in rows)
            modes = {g: m for _, g, m in rows}
            assert modes == {"NW": "text", "TX": "text", "NB": "speech", "CS": "speech"}
            ids[pack] = {r[0] for r in rows}
            # the Eval pack's queries are the DevTest pack's (plan Table 6)
            assert (root / "queries.tsv").read_text() == \
                (out / "public" / f"{lang}-queries.tsv").read_text()
        assert not ids["devtest"] & ids["eval"]


def _score(task, ref, path, **opts):
    return registry.get(task).score(str(ref), str(path), **opts)


def test_every_run_validates_and_scores_between_chance_and_perfect(period):
    """Word matching beats retrieving nothing (AQWV 0) and is imperfect; each E2E run
    scores from its own rows of the simulated judgments."""
    _, langs = period
    for lang in corpus.LANGUAGES:
        for run, path in langs[lang].runs:
            ref = langs[lang].packs[run.pack]
            task = "material-e2e" if run.task == "E2E" else "material-clir"
            assert registry.get(task).validate(str(path), str(ref)) is not None
            if task == "material-clir":
                result = _score(task, ref, path)
                assert 0.2 < result.metrics["aqwv"] < 0.95, (run.name, result.metrics)
                assert set(result.breakdowns["per_mode"]) == {"text", "speech"}
                assert set(result.breakdowns["per_genre"]) == {"NW", "TX", "NB", "CS"}
                continue
            result = _score(task, ref, path, judgments=str(langs[lang].judgments))
            m = result.metrics
            # judges who see through a false alarm's summary take its cost away (plan 4)
            assert 0.2 < m["aqwv"] < 0.95 and m["aqwv"] >= m["clir_aqwv_at_e2e_beta"], \
                (run.name, m)
            assert (result.counts["open_queries"], result.counts["closed_queries"]) == (8, 16)


def test_e2e_summaries_follow_the_schema_and_images_are_1024_wide(period):
    _, langs = period
    run, path = next((r, p) for r, p in langs["1A"].runs if r.task == "E2E")
    with tarfile.open(path) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    metas = {n: json.loads(b) for n, b in members.items() if n.endswith(".json")}
    assert len(metas) > 20
    for name, meta in metas.items():
        qid, fname = name.split("/")
        base = fname[:-len(".json")]
        expected = {"query_id": qid, "document_id": meta["document_id"], "team_id": run.team,
                    "sys_label": run.system.label, "basename": base}
        assert check_metadata(meta, expected, None) == []
        assert sum(len(x.split()) for x in meta["content_list"]) <= 100
        kind, width, height = image_info(members[f"{qid}/{meta['image_filename']}"])
        assert (kind, width) == ("png", 1024) and height <= 768
    for name, data in members.items():
        if name.endswith(".tsv"):
            for line in data.decode().splitlines():
                assert CONFIDENCE.match(line.split("\t")[2])


def test_simulated_judges_mostly_follow_the_reference(period):
    _, langs = period
    rows = [line.split("\t") for line in
            langs["1A"].judgments.read_text().splitlines()]
    assert rows[0] == ["query_id", "doc_id", "system", "judge", "relevant"]
    pack = langs["1A"].packs["eval"]
    relevant = {(p.stem, line.split("\t")[0]) for p in (pack / "clir").glob("*.tsv")
                for line in p.read_text().splitlines() if line.endswith("\tY")}
    said = {True: Counter(), False: Counter()}
    for q, d, system, judge, yes in rows[1:]:
        said[(q, d) in relevant][yes] += 1
    assert {s for _, _, s, _, _ in rows[1:]} == {"Alpha.bm25", "Beta.overlap", "Gamma.bm25k2"}
    assert said[True]["Y"] > 3 * said[True]["N"] and said[False]["N"] > 3 * said[False]["Y"]


class _Console:
    def __init__(self):
        self.lines = []

    def print(self, text, **kw):
        self.lines.append(str(text))


def test_the_competition_loads_with_the_week_rules(db, tmp_path, client):
    """Alpha and Beta: per language one primary E2E run and two contrastive CLIR runs in
    the week, all scored; Gamma: two runs, no primary; the summary campaigns hold the
    primaries' summaries only."""
    from django.contrib.auth import get_user_model
    from shareval.platform.demo_material.server import build_competition, urls
    from shareval.platform.judging.models import Campaign
    from shareval.platform.submissions.models import Submission
    User = get_user_model()
    users = {n: User.objects.create_user(n, password="x", is_staff=n == "organizer")
             for n in ("organizer", "alice", "bob", "carol", "judge")}
    now = dt.datetime.now(dt.timezone.utc)
    built = build_competition(tmp_path, users, now, _Console())
    comp = built["competition"]
    week = comp.phases.get(slug="evaluation-week")
    assert week.end < now and week.blind
    runs = Submission.objects.filter(dataset__phase=week)
    assert not runs.exclude(state=Submission.SCORED).exists(), \
        [(s.original_name, s.state, [e.message for e in s.events.all()])
         for s in runs.exclude(state=Submission.SCORED)]
    for lang in ("1a", "1b"):
        for team in ("Team Alpha", "Team Beta"):
            mine = runs.filter(team__name=team, dataset__slug__endswith=f"-{lang}-eval")
            assert sorted((s.dataset.slug, s.kind) for s in mine) == [
                (f"clir-{lang}-eval", "contrastive"), (f"clir-{lang}-eval", "contrastive"),
                (f"e2e-{lang}-eval", "primary")]
            assert all(week.start < s.created < week.end for s in mine)
        gamma = runs.filter(team__name="Team Gamma", dataset__slug__endswith=f"-{lang}-eval")
        assert gamma.count() == 2 and not gamma.filter(kind="primary").exists()
    # the Eval pack out at the week's start; the open queries' relevance after the week,
    # to the phase's teams only (not to the judge, in no team)
    from shareval.platform.access.releases import Viewer
    files = {f.name: f for f in week.datasets.get(slug="e2e-1a-eval").public_files.all()}
    assert files["1A-eval.tgz"].release_at == week.start
    opened = files["1A-eval-open-relevance.tsv"]
    assert (opened.release_at, opened.audience) == (week.end, "phase")
    alice = Viewer(users["alice"], comp)
    assert all(alice.of(f).listed and not alice.of(f).available_from for f in files.values())
    assert not Viewer(users["judge"], comp).of(opened).listed
    from shareval.platform.submissions.deadline import missing_primaries
    assert sorted((g.slug, [t.name for t in teams]) for g, teams in missing_primaries(week)) == \
        [("lang-1a", ["Team Gamma"]), ("lang-1b", ["Team Gamma"])]
    campaigns = Campaign.objects.filter(dataset__phase=week).order_by("slug")
    assert [c.slug for c in campaigns] == ["summaries-1a", "summaries-1b"]
    for c in campaigns:
        assert c.judges_per_item == 3
        assert sorted(u.username for u in c.judges.all()) == ["crowd-judge-1", "crowd-judge-2",
                                                              "crowd-judge-3", "judge"]
        # the simulated crowd answered everything but LEFT_FOR_THE_JUDGE third answers,
        # which are exactly what the judge account has left: one more answer each completes it
        from shareval.platform.demo_material.crowd import LEFT_FOR_THE_JUDGE
        from shareval.platform.judging.service import items_left
        assert items_left(c, users["judge"]) == LEFT_FOR_THE_JUDGE
        n = c.items.count()
        assert c.items.filter(assignments__status="done").distinct().count() == n
        assert sum(1 for i in c.items.all()
                   if i.assignments.filter(status="done").count() == 2) == LEFT_FOR_THE_JUDGE
        teams = Counter(item.key.split("|")[0] for item in c.items.all())
        primaries = runs.filter(dataset=c.dataset, kind="primary")
        assert set(teams) == {str(s.team_id) for s in primaries} and len(teams) == 2
    for url in urls(""):                       # the pages the console lists
        assert client.get(url).status_code == 200, url
    dev = Submission.objects.filter(dataset__phase__slug="development")
    assert dev.count() == 8 and not dev.exclude(state=Submission.SCORED).exists()


def _docs_commands() -> list[list[str]]:
    """The commands of every ```sh block of docs/material.md."""
    import shlex
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / "material.md").read_text()
    commands = []
    for block in text.split("```sh\n")[1:]:
        lines = block.split("```", 1)[0].replace("\\\n", " ").splitlines()
        commands += [shlex.split(c) for c in lines if c.strip()]
    return commands


def test_the_docs_demo_commands_run_on_the_generated_files(period, capsys):
    """Every command docs/material.md shows runs (exit 0) on the generator's files, which
    `make demo` writes to out/demo-server/material-demo."""
    from shareval.cli import main
    out, _ = period
    commands = _docs_commands()
    assert len(commands) >= 5 and all(c[0] == "shareval" for c in commands)
    assert {c[1] for c in commands} == {"validate", "score"}
    for argv in commands:
        args = [a.replace("out/demo-server/material-demo", str(out)) for a in argv[1:]]
        assert main(args) == 0, (argv, capsys.readouterr())
    assert "nothing was scored" not in capsys.readouterr().err
